#include "ember/optim/optimizer.h"

#include "ember/autograd/grad_mode.h"
#include "ember/autograd/node.h"
#include "ember/core/dtype.h"
#include "ember/generated/ops.h"

namespace ember::optim {

OptimizerOptions::~OptimizerOptions() = default;

namespace {
// A group's options as the optimizer's own type (a group added with another optimizer's options is an error)
template <class O>
O& options_as(const OptimizerParamGroup& group, const char* optimizer) {
  auto* o = dynamic_cast<O*>(&group.options());
  EMBER_CHECK_KIND(o, Type, optimizer, ": a param group has the options of another optimizer");
  return *o;
}
}  // namespace

OptimizerParamGroup::OptimizerParamGroup(std::vector<Tensor> params) : params_(std::move(params)) {}
OptimizerParamGroup::OptimizerParamGroup(std::vector<Tensor> params, std::unique_ptr<OptimizerOptions> options)
    : params_(std::move(params)), options_(std::move(options)) {}
OptimizerParamGroup::OptimizerParamGroup(const OptimizerParamGroup& o)
    : params_(o.params_), options_(o.options_ ? o.options_->clone() : nullptr) {}
OptimizerParamGroup& OptimizerParamGroup::operator=(const OptimizerParamGroup& o) {
  params_ = o.params_;
  options_ = o.options_ ? o.options_->clone() : nullptr;
  return *this;
}
OptimizerOptions& OptimizerParamGroup::options() const {
  EMBER_CHECK(options_, "this param group has no options (it was not added to an optimizer)");
  return *options_;
}

Optimizer::Optimizer(std::vector<OptimizerParamGroup> groups, std::unique_ptr<OptimizerOptions> defaults)
    : defaults_(std::move(defaults)) {
  EMBER_CHECK_KIND(defaults_->get_lr() >= 0, Value, "Invalid learning rate: ", defaults_->get_lr());
  EMBER_CHECK_KIND(!groups.empty(), Value, "optimizer got an empty parameter list");
  for (auto& g : groups) add_param_group(g);
}

Optimizer::~Optimizer() = default;

void Optimizer::add_param_group(const OptimizerParamGroup& group) {
  OptimizerParamGroup g(group.params(), group.has_options() ? group.options().clone() : defaults_->clone());
  EMBER_CHECK_KIND(!g.params().empty(), Value, "optimizer got an empty parameter list");
  for (auto& p : g.params()) {
    EMBER_CHECK_KIND(p.defined(), Type, "optimizer can only optimize Tensors, but one of the params is undefined");
    EMBER_CHECK_KIND(p.is_leaf(), Value, "can't optimize a non-leaf Tensor");
    for (auto& other : groups_)
      for (auto& q : other.params())
        EMBER_CHECK_KIND(!q.is_same(p), Value, "some parameters appear in more than one parameter group");
  }
  groups_.push_back(std::move(g));
}

std::vector<Tensor> Optimizer::parameters() const {
  std::vector<Tensor> out;
  for (auto& g : groups_) out.insert(out.end(), g.params().begin(), g.params().end());
  return out;
}

size_t Optimizer::size() const { return parameters().size(); }

void Optimizer::zero_grad(bool set_to_none) {
  for (auto& g : groups_) {
    for (auto& p : g.params()) {
      auto* m = autograd::meta(p);
      if (!m || !m->grad.defined()) continue;
      if (set_to_none) m->grad = Tensor();
      else m->grad = m->grad.detach().zero_();
    }
  }
}

void Optimizer::params_with_grad(const OptimizerParamGroup& group, std::vector<Tensor>& params,
                                 std::vector<Tensor>& grads) {
  for (auto& p : group.params()) {
    Tensor g = p.grad();
    if (!g.defined()) continue;
    params.push_back(p);
    grads.push_back(g);
  }
}

std::vector<Tensor> Optimizer::state_list(const std::vector<Tensor>& params, const char* name) {
  std::vector<Tensor> out;
  out.reserve(params.size());
  for (auto& p : params) {
    Tensor& t = state_[p.impl()][name];
    if (!t.defined()) t = ember::zeros_like(p);
    out.push_back(t);
  }
  return out;
}

std::vector<Tensor> Optimizer::step_list(const std::vector<Tensor>& params) {
  std::vector<Tensor> out;
  out.reserve(params.size());
  for (auto& p : params) {
    Tensor& t = state_[p.impl()]["step"];
    if (!t.defined()) t = ember::zeros({}, TensorOptions(default_dtype() == kDouble ? kDouble : kFloat));
    out.push_back(t);
  }
  return out;
}

Tensor Optimizer::run_closure(const std::function<Tensor()>& closure) {
  if (!closure) return Tensor();
  autograd::AutoGradMode enable(true);
  return closure();
}

// ---- SGD

SGD::SGD(std::vector<OptimizerParamGroup> groups, const SGDOptions& o)
    : Optimizer(std::move(groups), o.clone()) {
  EMBER_CHECK_KIND(o.momentum() >= 0, Value, "Invalid momentum value: ", o.momentum());
  EMBER_CHECK_KIND(o.weight_decay() >= 0, Value, "Invalid weight_decay value: ", o.weight_decay());
  EMBER_CHECK_KIND(!o.nesterov() || (o.momentum() > 0 && o.dampening() == 0), Value,
                   "Nesterov momentum requires a momentum and zero dampening");
}

Tensor SGD::step(const std::function<Tensor()>& closure) {
  Tensor loss = run_closure(closure);
  autograd::NoGradGuard no_grad;
  for (auto& group : groups_) {
    auto& o = options_as<SGDOptions>(group, "SGD");
    std::vector<Tensor> params, grads;
    params_with_grad(group, params, grads);
    if (params.empty()) continue;
    auto run = [&](const std::vector<Tensor>& ps, const std::vector<Tensor>& gs, const std::vector<Tensor>& bufs,
                   bool first) {
      ember::_fused_sgd_(ps, gs, bufs, o.lr(), o.momentum(), o.dampening(), o.weight_decay(), o.nesterov(),
                         o.maximize(), first);
    };
    if (o.momentum() == 0) {
      run(params, grads, {}, false);
      continue;
    }
    // parameters seeing their first step start their buffer as a copy of the gradient
    std::vector<Tensor> old_p, old_g, new_p, new_g;
    for (size_t i = 0; i < params.size(); i++) {
      bool has = state_[params[i].impl()].count("momentum_buffer") > 0;
      (has ? old_p : new_p).push_back(params[i]);
      (has ? old_g : new_g).push_back(grads[i]);
    }
    if (!old_p.empty()) run(old_p, old_g, state_list(old_p, "momentum_buffer"), false);
    if (!new_p.empty()) run(new_p, new_g, state_list(new_p, "momentum_buffer"), true);
  }
  return loss;
}

// ---- Adam / AdamW

namespace {
template <class O>
void check_adam(const O& o) {
  EMBER_CHECK_KIND(o.eps() >= 0, Value, "Invalid epsilon value: ", o.eps());
  auto [b1, b2] = o.betas();
  EMBER_CHECK_KIND(b1 >= 0 && b1 < 1, Value, "Invalid beta parameter at index 0: ", b1);
  EMBER_CHECK_KIND(b2 >= 0 && b2 < 1, Value, "Invalid beta parameter at index 1: ", b2);
  EMBER_CHECK_KIND(o.weight_decay() >= 0, Value, "Invalid weight_decay value: ", o.weight_decay());
}

// Adam's hyper-parameters, from AdamOptions or AdamWOptions
struct AdamArgs {
  double lr, b1, b2, eps, wd;
  bool amsgrad, maximize, decoupled;
};
template <class O>
AdamArgs adam_args(const O& o, bool decoupled) {
  return {o.lr(), std::get<0>(o.betas()), std::get<1>(o.betas()), o.eps(), o.weight_decay(), o.amsgrad(),
          o.maximize(), decoupled};
}
}  // namespace

Adam::Adam(std::vector<OptimizerParamGroup> groups, const AdamOptions& o) : Optimizer(std::move(groups), o.clone()) {
  check_adam(o);
}
Adam::Adam(std::vector<OptimizerParamGroup> groups, std::unique_ptr<OptimizerOptions> defaults)
    : Optimizer(std::move(groups), std::move(defaults)) {}

AdamW::AdamW(std::vector<OptimizerParamGroup> groups, const AdamWOptions& o) : Adam(std::move(groups), o.clone()) {
  check_adam(o);
}

Tensor Adam::step(const std::function<Tensor()>& closure) {
  Tensor loss = run_closure(closure);
  autograd::NoGradGuard no_grad;
  for (auto& group : groups_) {
    AdamArgs a;
    if (auto* w = dynamic_cast<AdamWOptions*>(&group.options())) {
      a = adam_args(*w, true);
    } else {
      a = adam_args(options_as<AdamOptions>(group, "Adam"), false);
    }
    std::vector<Tensor> params, grads;
    params_with_grad(group, params, grads);
    if (params.empty()) continue;
    std::vector<Tensor> steps = step_list(params), m = state_list(params, "exp_avg"),
                        v = state_list(params, "exp_avg_sq");
    std::vector<Tensor> vmax = a.amsgrad ? state_list(params, "max_exp_avg_sq") : std::vector<Tensor>{};
    ember::_fused_adam_(params, grads, m, v, vmax, steps, a.lr, a.b1, a.b2, a.wd, a.eps, a.amsgrad, a.maximize,
                        a.decoupled);
  }
  return loss;
}

// ---- RMSprop

RMSprop::RMSprop(std::vector<OptimizerParamGroup> groups, const RMSpropOptions& o)
    : Optimizer(std::move(groups), o.clone()) {
  EMBER_CHECK_KIND(o.eps() >= 0, Value, "Invalid epsilon value: ", o.eps());
  EMBER_CHECK_KIND(o.momentum() >= 0, Value, "Invalid momentum value: ", o.momentum());
  EMBER_CHECK_KIND(o.weight_decay() >= 0, Value, "Invalid weight_decay value: ", o.weight_decay());
  EMBER_CHECK_KIND(o.alpha() >= 0, Value, "Invalid alpha value: ", o.alpha());
}

Tensor RMSprop::step(const std::function<Tensor()>& closure) {
  Tensor loss = run_closure(closure);
  autograd::NoGradGuard no_grad;
  for (auto& group : groups_) {
    auto& o = options_as<RMSpropOptions>(group, "RMSprop");
    std::vector<Tensor> params, grads;
    params_with_grad(group, params, grads);
    if (params.empty()) continue;
    std::vector<Tensor> steps = step_list(params), sq = state_list(params, "square_avg");
    std::vector<Tensor> buf = o.momentum() > 0 ? state_list(params, "momentum_buffer") : std::vector<Tensor>{};
    std::vector<Tensor> gavg = o.centered() ? state_list(params, "grad_avg") : std::vector<Tensor>{};
    ember::_fused_rmsprop_(params, grads, sq, gavg, buf, steps, o.lr(), o.alpha(), o.eps(), o.weight_decay(),
                           o.momentum(), o.centered(), o.maximize());
  }
  return loss;
}

}  // namespace ember::optim
