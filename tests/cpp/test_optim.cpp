// ember::optim (C++ frontend): the first steps of SGD, Adam, AdamW and RMSprop against their
// formulas, state and param groups, convergence on a quadratic, schedulers against torch's
// closed forms, and argument errors. (tests/python/test_cpp_frontend.py checks whole trajectories
// against the Python optimizers.)
#include <gtest/gtest.h>

#include <cmath>

#include "ember/ember.h"
#include "error_kind.h"

using namespace ember;

namespace {

double max_diff(const Tensor& a, const Tensor& b) { return (a.detach() - b.detach()).abs().max().item<double>(); }

// A leaf parameter with a fixed gradient g.
struct Param {
  Tensor p, g;
  Param() {
    p = ember::randn({5}).requires_grad_();
    g = ember::randn({5});
  }
  void backward() const { (p * g).sum().backward(); }
};

using ember::test_util::error_kind;

}  // namespace

TEST(Optim, SGDMomentumNesterovWeightDecay) {
  Param w;
  Tensor p0 = w.p.detach().clone();
  optim::SGD opt({w.p}, optim::SGDOptions(0.1).momentum(0.9).weight_decay(0.01).nesterov(true));
  w.backward();
  opt.step();
  Tensor d = w.g + p0 * 0.01, buf = d;  // first step: buffer = gradient
  Tensor p1 = p0 - (d + buf * 0.9) * 0.1;
  EXPECT_LT(max_diff(w.p, p1), 1e-6);
  opt.zero_grad();
  EXPECT_FALSE(w.p.grad().defined());
  w.backward();
  opt.step();
  d = w.g + p1 * 0.01;
  buf = buf * 0.9 + d;
  EXPECT_LT(max_diff(w.p, p1 - (d + buf * 0.9) * 0.1), 1e-6);
  EXPECT_EQ(opt.state(w.p).count("momentum_buffer"), 1u);
  EXPECT_LT(max_diff(opt.state(w.p)["momentum_buffer"], buf), 1e-6);
}

TEST(Optim, AdamFirstStepsAndState) {
  Param w;
  Tensor p0 = w.p.detach().clone();
  optim::Adam opt({w.p}, optim::AdamOptions(0.01).betas({0.8, 0.9}));
  w.backward();
  opt.step();
  // after one step the bias-corrected moments are g and g^2: p -= lr g / (|g| + eps)
  EXPECT_LT(max_diff(w.p, p0 - w.g * 0.01 / (w.g.abs() + 1e-8)), 1e-6);
  opt.step();  // the same gradient again: the moments stay g and g^2 after correction
  EXPECT_LT(max_diff(w.p, p0 - w.g * 0.02 / (w.g.abs() + 1e-8)), 1e-5);
  auto& st = opt.state(w.p);
  EXPECT_EQ(st.at("step").item<double>(), 2.0);
  EXPECT_EQ(st.at("step").dtype(), kFloat);
  EXPECT_LT(max_diff(st.at("exp_avg"), w.g * (1 - 0.8 * 0.8)), 1e-6);
  EXPECT_EQ(st.count("max_exp_avg_sq"), 0u);
}

TEST(Optim, AdamWDecouplesWeightDecay) {
  Param w;
  Tensor p0 = w.p.detach().clone();
  optim::AdamW opt({w.p}, optim::AdamWOptions(0.01).weight_decay(0.5).amsgrad(true));
  w.backward();
  opt.step();
  EXPECT_LT(max_diff(w.p, p0 * (1 - 0.01 * 0.5) - w.g * 0.01 / (w.g.abs() + 1e-8)), 1e-6);
  EXPECT_EQ(opt.state(w.p).count("max_exp_avg_sq"), 1u);
  // Adam's weight decay is L2 instead: it goes through the moments
  Param u;
  Tensor u0 = u.p.detach().clone();
  optim::Adam adam({u.p}, optim::AdamOptions(0.01).weight_decay(0.5));
  u.backward();
  adam.step();
  Tensor d = u.g + u0 * 0.5;
  EXPECT_LT(max_diff(u.p, u0 - d * 0.01 / (d.abs() + 1e-8)), 1e-6);
}

TEST(Optim, RMSpropFirstStep) {
  Param w;
  Tensor p0 = w.p.detach().clone();
  optim::RMSprop opt({w.p}, optim::RMSpropOptions(0.01).alpha(0.9));
  w.backward();
  opt.step();
  Tensor v = w.g * w.g * 0.1;
  EXPECT_LT(max_diff(w.p, p0 - w.g * 0.01 / (v.sqrt() + 1e-8)), 1e-6);
  optim::RMSprop centered({w.p}, optim::RMSpropOptions(0.01).centered(true).momentum(0.9));
  centered.step();
  EXPECT_EQ(centered.state(w.p).count("grad_avg"), 1u);
  EXPECT_EQ(centered.state(w.p).count("momentum_buffer"), 1u);
}

TEST(Optim, AllConvergeOnAQuadratic) {
  for (int which = 0; which < 4; which++) {
    Tensor target = ember::linspace(-2.0, 2.0, 10);
    Tensor x = ember::zeros({10}).requires_grad_();
    std::unique_ptr<optim::Optimizer> opt;
    if (which == 0) opt = std::make_unique<optim::SGD>(std::vector<Tensor>{x}, optim::SGDOptions(0.1).momentum(0.5));
    if (which == 1) opt = std::make_unique<optim::Adam>(std::vector<Tensor>{x}, optim::AdamOptions(0.05));
    if (which == 2) opt = std::make_unique<optim::AdamW>(std::vector<Tensor>{x}, optim::AdamWOptions(0.05).weight_decay(0));
    if (which == 3) opt = std::make_unique<optim::RMSprop>(std::vector<Tensor>{x}, optim::RMSpropOptions(0.03));
    auto closure = [&] {
      opt->zero_grad();
      Tensor r = x - target;
      Tensor loss = (r * r).sum();
      loss.backward();
      return loss;
    };
    Tensor first = opt->step(closure);
    for (int i = 0; i < 500; i++) opt->step(closure);
    EXPECT_LT(max_diff(x, target), 0.05) << "optimizer " << which << " first loss " << first.item<double>();
  }
}

TEST(Optim, ParamGroupsAndErrors) {
  Tensor a = ember::ones({2}).requires_grad_(), b = ember::ones({2}).requires_grad_();
  std::vector<optim::OptimizerParamGroup> groups;
  groups.emplace_back(std::vector<Tensor>{a});
  groups.emplace_back(std::vector<Tensor>{b}, std::make_unique<optim::SGDOptions>(1.0));
  optim::SGD opt(groups, optim::SGDOptions(0.1));
  EXPECT_EQ(opt.param_groups().size(), 2u);
  EXPECT_EQ(opt.size(), 2u);
  (a.sum() + b.sum()).backward();
  opt.step();
  EXPECT_LT(max_diff(a, ember::full({2}, 0.9)), 1e-7);
  EXPECT_LT(max_diff(b, ember::zeros({2})), 1e-7);
  // parameters without a gradient are skipped
  Tensor c = ember::ones({2}).requires_grad_();
  opt.add_param_group(optim::OptimizerParamGroup({c}));
  opt.step();
  EXPECT_EQ(c.sum().item<double>(), 2.0);

  EXPECT_EQ(error_kind([&] { optim::SGD({a}, optim::SGDOptions(-1)); }), ErrorKind::Value);
  EXPECT_EQ(error_kind([&] { optim::Adam({a}, optim::AdamOptions().betas({1.0, 0.9})); }), ErrorKind::Value);
  EXPECT_EQ(error_kind([&] { optim::SGD({a}, optim::SGDOptions(0.1).nesterov(true)); }), ErrorKind::Value);
  EXPECT_EQ(error_kind([&] { optim::SGD(std::vector<Tensor>{}, optim::SGDOptions(0.1)); }), ErrorKind::Value);
  EXPECT_EQ(error_kind([&] { opt.add_param_group(optim::OptimizerParamGroup({a})); }), ErrorKind::Value);
  Tensor nonleaf = a * 2.0;
  EXPECT_EQ(error_kind([&] { optim::SGD({nonleaf}, optim::SGDOptions(0.1)); }), ErrorKind::Value);
}

TEST(Optim, StepLR) {
  Tensor a = ember::ones({1}).requires_grad_();
  optim::SGD opt({a}, optim::SGDOptions(1.0));
  optim::StepLR sched(opt, 2, 0.5);
  std::vector<double> got;
  for (int i = 0; i < 6; i++) {
    got.push_back(sched.get_last_lr()[0]);
    sched.step();
  }
  EXPECT_EQ(got, (std::vector<double>{1.0, 1.0, 0.5, 0.5, 0.25, 0.25}));
  EXPECT_EQ(opt.param_groups()[0].options().get_lr(), 0.125);
  EXPECT_EQ(sched.last_epoch(), 6);
}

TEST(Optim, CosineAnnealingMatchesClosedForm) {
  Tensor a = ember::ones({1}).requires_grad_();
  optim::Adam opt({a}, optim::AdamOptions(0.1));
  const int T = 5;
  const double eta_min = 0.01;
  optim::CosineAnnealingLR sched(opt, T, eta_min);
  // the recursive form follows the closed form over the first period and back up after it
  for (int e = 1; e <= 2 * T; e++) {
    sched.step();
    double closed = eta_min + (0.1 - eta_min) * (1 + std::cos(M_PI * e / T)) / 2;
    EXPECT_NEAR(sched.get_last_lr()[0], closed, 1e-12) << "epoch " << e;
  }
  EXPECT_EQ(error_kind([&] { optim::CosineAnnealingLR(opt, 0); }), ErrorKind::Value);
}
