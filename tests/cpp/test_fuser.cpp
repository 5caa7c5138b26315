// ember::jit::fuser: hand-built traced graphs fused and run with both backends, compared with the
// same expressions as eager ops (values and gradients), plus the pass's grouping rules.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <thread>
#include <unordered_map>

#include <unistd.h>

#include "ember/autograd/engine.h"
#include "ember/jit/fuser/program.h"
#include "fuser_test_util.h"

using namespace fuser_test;

namespace {
// x / sqrt(2) -> erf -> + 1 -> * (x * 0.5): the GELU written out, as a trace of eager code records it.
Graph gelu_graph(ScalarType dt, Shape s) {
  Builder b;
  int64_t x = b.input(dt, s);
  int64_t t1 = b.op("div", {V(x), F(M_SQRT2), None()}, dt, s);
  int64_t t2 = b.op("erf", {V(t1)}, dt, s);
  int64_t t3 = b.op("add", {V(t2), F(1.0), I(1)}, dt, s);
  int64_t t4 = b.op("mul", {V(x), F(0.5)}, dt, s);
  int64_t t5 = b.op("mul", {V(t4), V(t3)}, dt, s);
  b.outputs({t5});
  return b.g;
}
Tensor gelu_eager(const Tensor& x) { return x * 0.5 * (ember::erf(x / M_SQRT2) + 1); }

}  // namespace

TEST_P(Backends, GeluShapesAndDtypes) {
  for (ScalarType dt : {kFloat, kDouble}) {
    Graph g = gelu_graph(dt, {4, 8});
    fz::fuse(g);
    ASSERT_EQ(g.nodes.size(), 1u);
    ASSERT_EQ(g.nodes[0].op, "prim::FusionGroup");
    // replay shapes differ from the trace's: 0-d, empty, odd, larger than a thread's grain
    for (Shape s : {Shape{4, 8}, Shape{}, Shape{0, 5}, Shape{7, 13}, Shape{300, 257}, Shape{3}}) {
      Tensor x = randn(s, dt);
      expect_close(run_graph(g, {x})[0], gelu_eager(x), rtol_for(dt), rtol_for(dt), "gelu");
    }
    Tensor xt = randn({13, 7}, dt).t();  // non-contiguous
    expect_close(run_graph(g, {xt})[0], gelu_eager(xt), rtol_for(dt), rtol_for(dt), "gelu transposed");
    Tensor xs = randn({6, 20}, dt).as_strided({6, 10}, {20, 2});  // strided inner dim
    expect_close(run_graph(g, {xs})[0], gelu_eager(xs), rtol_for(dt), rtol_for(dt), "gelu strided");
  }
}

TEST_P(Backends, BiasGeluBroadcast) {
  for (ScalarType dt : {kFloat, kDouble}) {
    for (const char* approx : {"none", "tanh"}) {
      Builder b;
      int64_t x = b.input(dt, {8, 16}), bias = b.input(dt, {16});
      int64_t h = b.op("add", {V(x), V(bias), I(1)}, dt, {8, 16});
      int64_t y = b.op("gelu", {V(h), Str(approx)}, dt, {8, 16});
      b.outputs({y});
      fz::fuse(b.g);
      ASSERT_EQ(count_groups(b.g), 1u);
      for (Shape s : {Shape{8, 16}, Shape{256, 1024}, Shape{1, 16}}) {
        Tensor xv = randn(s, dt), bv = randn({s.back()}, dt);
        expect_close(run_graph(b.g, {xv, bv})[0], ember::gelu(xv + bv, approx), rtol_for(dt), rtol_for(dt),
                     std::string("bias gelu ") + approx);
      }
    }
  }
}

namespace {
// (x - mean) * rstd * w + b, mean/rstd per row [B, 1], w/b per column [N]
Graph layer_norm_tail(ScalarType dt) {
  Builder b;
  int64_t x = b.input(dt, {4, 32}), mean = b.input(dt, {4, 1}), rstd = b.input(dt, {4, 1});
  int64_t w = b.input(dt, {32}), bias = b.input(dt, {32});
  int64_t c = b.op("sub", {V(x), V(mean), I(1)}, dt, {4, 32});
  int64_t n = b.op("mul", {V(c), V(rstd)}, dt, {4, 32});
  int64_t s = b.op("mul", {V(n), V(w)}, dt, {4, 32});
  int64_t y = b.op("add", {V(s), V(bias), I(1)}, dt, {4, 32});
  b.outputs({y});
  return b.g;
}
}  // namespace

TEST_P(Backends, LayerNormTail) {
  for (ScalarType dt : {kFloat, kDouble}) {
    Graph g = layer_norm_tail(dt);
    fz::fuse(g);
    ASSERT_EQ(g.nodes.size(), 1u);
    for (int64_t rows : {4, 1000}) {
      Tensor x = randn({rows, 32}, dt), w = randn({32}, dt), bias = randn({32}, dt);
      Tensor mean = x.mean(-1, true), rstd = ember::rsqrt(x.var(-1, false, true) + 1e-5);
      Tensor want = (x - mean) * rstd * w + bias;
      // arithmetic only, in eager's order, no FMA contraction: bit for bit what eager computes
      expect_close(run_graph(g, {x, mean, rstd, w, bias})[0], want, 0, 0, "layer norm tail");
    }
  }
}

namespace {
// One Adam step over a parameter: three outputs (m, v, p) from one loop.
Graph adam_graph(ScalarType dt, Shape s) {
  Builder b;
  int64_t p = b.input(dt, s), grad = b.input(dt, s), m = b.input(dt, s), v = b.input(dt, s);
  int64_t m1 = b.op("mul", {V(m), F(0.9)}, dt, s);
  int64_t m2 = b.op("add", {V(m1), V(grad), F(0.1)}, dt, s);  // alpha = 1 - beta1
  int64_t g2 = b.op("mul", {V(grad), V(grad)}, dt, s);
  int64_t v1 = b.op("mul", {V(v), F(0.999)}, dt, s);
  int64_t v2 = b.op("add", {V(v1), V(g2), F(0.001)}, dt, s);
  int64_t den0 = b.op("sqrt", {V(v2)}, dt, s);
  int64_t den = b.op("add", {V(den0), F(1e-8), I(1)}, dt, s);
  int64_t step = b.op("div", {V(m2), V(den), None()}, dt, s);
  int64_t p2 = b.op("sub", {V(p), V(step), F(1e-3)}, dt, s);
  b.outputs({p2, m2, v2});
  return b.g;
}
}  // namespace

TEST_P(Backends, AdamStep) {
  for (ScalarType dt : {kFloat, kDouble}) {
    Graph g = adam_graph(dt, {64});
    fz::fuse(g);
    ASSERT_EQ(g.nodes.size(), 1u);
    ASSERT_EQ(g.nodes[0].outputs.size(), 3u);
    for (Shape s : {Shape{64}, Shape{100003}}) {
      Tensor p = randn(s, dt), gr = randn(s, dt), m = randn(s, dt), v = ember::abs(randn(s, dt));
      auto outs = run_graph(g, {p, gr, m, v});
      Tensor m2 = m * 0.9 + gr * 0.1, v2 = v * 0.999 + gr * gr * 0.001;
      Tensor p2 = p - m2 / (ember::sqrt(v2) + 1e-8) * 1e-3;
      expect_close(outs[0], p2, rtol_for(dt), 1e-6, "adam p");
      expect_close(outs[1], m2, rtol_for(dt), 1e-7, "adam m");
      expect_close(outs[2], v2, rtol_for(dt), 1e-7, "adam v");
    }
  }
}

TEST_P(Backends, MseAndRowSums) {
  for (ScalarType dt : {kFloat, kDouble}) {
    Builder b;
    int64_t a = b.input(dt, {8, 16}), t = b.input(dt, {8, 16});
    int64_t d = b.op("sub", {V(a), V(t), I(1)}, dt, {8, 16});
    int64_t sq = b.op("pow", {V(d), I(2)}, dt, {8, 16});
    int64_t loss = b.op("mean", {V(sq), None(), B(false), None()}, dt, {});
    b.outputs({loss});
    fz::fuse(b.g);
    ASSERT_EQ(count_groups(b.g), 1u);
    for (Shape s : {Shape{8, 16}, Shape{500, 301}, Shape{0, 4}}) {
      Tensor av = randn(s, dt), tv = randn(s, dt);
      expect_close(run_graph(b.g, {av, tv})[0], ember::pow(av - tv, 2).mean(), rtol_for(dt) * 10, 1e-6, "mse");
    }
    // sum and mean over the last dim, with and without keepdim, beside an elementwise output
    Builder r;
    int64_t x = r.input(dt, {5, 7});
    int64_t e = r.op("exp", {V(x)}, dt, {5, 7});
    int64_t sx = r.op("sum.dim_IntList", {V(e), Dims({-1}), B(true), None()}, dt, {5, 1});
    int64_t mx = r.op("mean", {V(e), Dims({1}), B(false), None()}, dt, {5});
    int64_t y = r.op("neg", {V(x)}, dt, {5, 7});
    r.outputs({sx, mx, y});
    fz::fuse(r.g);
    ASSERT_EQ(count_groups(r.g), 1u);
    Tensor xv = randn({5, 7}, dt);
    auto outs = run_graph(r.g, {xv});
    expect_close(outs[0], ember::exp(xv).sum(-1, true), rtol_for(dt), 1e-6, "row sum");
    expect_close(outs[1], ember::exp(xv).mean(1), rtol_for(dt), 1e-6, "row mean");
    expect_close(outs[2], -xv, 0, 0, "neg beside reductions");
  }
}

namespace {
// where(x > 0, x, 0.1 x) + clamp(y, -0.5, 0.5) + maximum(x, y) - leaky_relu(y) * sigmoid(x)
Graph where_chain(ScalarType dt, Shape s) {
  Builder b;
  int64_t x = b.input(dt, s), y = b.input(dt, s);
  int64_t pos = b.op("gt", {V(x), I(0)}, kBool, s);
  int64_t sx = b.op("mul", {V(x), F(0.1)}, dt, s);
  int64_t w = b.op("where", {V(pos), V(x), V(sx)}, dt, s);
  int64_t c = b.op("clamp", {V(y), F(-0.5), F(0.5)}, dt, s);
  int64_t m = b.op("maximum", {V(x), V(y)}, dt, s);
  int64_t l = b.op("leaky_relu", {V(y), F(0.2)}, dt, s);
  int64_t sg = b.op("sigmoid", {V(x)}, dt, s);
  int64_t ls = b.op("mul", {V(l), V(sg)}, dt, s);
  int64_t s1 = b.op("add", {V(w), V(c), I(1)}, dt, s);
  int64_t s2 = b.op("add", {V(s1), V(m), I(1)}, dt, s);
  int64_t out = b.op("sub", {V(s2), V(ls), I(1)}, dt, s);
  b.outputs({out, pos});
  return b.g;
}
Tensor where_chain_eager(const Tensor& x, const Tensor& y) {
  return ember::where(ember::gt(x, scalar_to_tensor(Scalar(int64_t(0)))), x, x * 0.1) +
         ember::clamp(y, scalar_to_tensor(Scalar(-0.5)), scalar_to_tensor(Scalar(0.5))) + ember::maximum(x, y) -
         ember::leaky_relu(y, 0.2) * ember::sigmoid(x);
}
}  // namespace

TEST_P(Backends, WhereComparisonChain) {
  for (ScalarType dt : {kFloat, kDouble}) {
    Graph g = where_chain(dt, {6, 9});
    fz::fuse(g);
    ASSERT_EQ(g.nodes.size(), 1u);
    Tensor x = randn({6, 9}, dt), y = randn({6, 9}, dt);
    auto outs = run_graph(g, {x, y});
    expect_close(outs[0], where_chain_eager(x, y), rtol_for(dt), 1e-6, "where chain");
    ASSERT_EQ(outs[1].dtype(), kBool);  // the comparison read outside stays bool
    expect_close(outs[1], ember::gt(x, scalar_to_tensor(Scalar(int64_t(0)))), 0, 0, "mask");
  }
}

TEST_P(Backends, Transcendentals) {
  const char* unary[] = {"exp", "log", "tanh", "sigmoid", "relu", "erf", "sqrt", "rsqrt", "abs", "reciprocal",
                         "square", "sin", "cos", "log1p", "expm1", "silu", "neg"};
  for (ScalarType dt : {kFloat, kDouble}) {
    for (const char* name : unary) {
      Builder b;
      int64_t x = b.input(dt, {1000});
      int64_t a = b.op("abs", {V(x)}, dt, {1000});
      int64_t y = b.op(name, {V(a)}, dt, {1000});
      b.outputs({y});
      Graph ref = b.g;
      fz::fuse(b.g);
      ASSERT_EQ(count_groups(b.g), 1u) << name;
      Tensor xv = randn({1000}, dt) * 3;
      Tensor want = run_graph(ref, {xv})[0];
      expect_close(run_graph(b.g, {xv})[0], want, dt == kFloat ? 4e-6 : 1e-14, dt == kFloat ? 1e-6 : 1e-14, name);
    }
  }
}

namespace {
// Gradients of the fused graph against eager autograd on the unfused one, float64.
void check_grads(const Graph& unfused, std::vector<Tensor> inputs, const std::string& what) {
  Graph fused = unfused;
  fz::fuse(fused);
  ASSERT_GE(count_groups(fused), 1u) << what;
  auto run = [&](const Graph& g) {
    std::vector<Tensor> leaves;
    for (const Tensor& t : inputs) leaves.push_back(t.detach().requires_grad_(is_floating(t.dtype())));
    auto outs = run_graph(g, leaves);
    std::vector<Tensor> roots, seeds;
    for (size_t j = 0; j < outs.size(); j++) {
      if (!is_floating(outs[j].dtype())) continue;
      roots.push_back(outs[j]);
      seeds.push_back(ember::full(outs[j].sizes(), double(j + 1), TensorOptions(kDouble)));
    }
    std::vector<Tensor> want;
    for (const Tensor& l : leaves)
      if (l.requires_grad()) want.push_back(l);
    return autograd::grad(roots, want, seeds, std::nullopt, false, true);
  };
  auto got = run(fused), want = run(unfused);
  ASSERT_EQ(got.size(), want.size());
  for (size_t k = 0; k < got.size(); k++) {
    ASSERT_TRUE(got[k].defined()) << what << " grad " << k;
    expect_close(got[k], want[k], 1e-10, 1e-10, what + " grad " + std::to_string(k));
  }
}
}  // namespace

TEST_P(Backends, GradientsMatchEagerAutograd) {
  check_grads(gelu_graph(kDouble, {5, 6}), {randn({5, 6}, kDouble)}, "gelu");
  check_grads(layer_norm_tail(kDouble),
              {randn({4, 32}, kDouble), randn({4, 1}, kDouble), ember::abs(randn({4, 1}, kDouble)) + 0.5,
               randn({32}, kDouble), randn({32}, kDouble)},
              "layer norm tail (broadcast inputs reduced to their shapes)");
  check_grads(adam_graph(kDouble, {40}),
              {randn({40}, kDouble), randn({40}, kDouble), randn({40}, kDouble), ember::abs(randn({40}, kDouble))},
              "adam");
  check_grads(where_chain(kDouble, {7, 3}), {randn({7, 3}, kDouble), randn({7, 3}, kDouble)}, "where chain");
  {
    Builder b;  // mean of squares over the last dim, then all dims: reductions' backward
    int64_t a = b.input(kDouble, {6, 5}), t = b.input(kDouble, {5});
    int64_t d = b.op("sub", {V(a), V(t), I(1)}, kDouble, {6, 5});
    int64_t sq = b.op("mul", {V(d), V(d)}, kDouble, {6, 5});
    int64_t rm = b.op("mean", {V(sq), Dims({-1}), B(false), None()}, kDouble, {6});
    b.outputs({rm});
    check_grads(b.g, {randn({6, 5}, kDouble), randn({5}, kDouble)}, "row mean");
    Builder c;
    int64_t x = c.input(kDouble, {6, 5});
    int64_t e = c.op("tanh", {V(x)}, kDouble, {6, 5});
    int64_t f = c.op("pow", {V(e), F(3.0)}, kDouble, {6, 5});
    int64_t s = c.op("sum", {V(f), None()}, kDouble, {});
    c.outputs({s, e});
    check_grads(c.g, {randn({6, 5}, kDouble)}, "sum and an elementwise output");
  }
}

TEST_P(Backends, GradcheckFiniteDifferences) {
  // d/dx of sum(f(x)) from the fused backward against central differences of the fused forward
  Graph g = where_chain(kDouble, {4, 5});
  fz::fuse(g);
  Tensor x = randn({4, 5}, kDouble), y = randn({4, 5}, kDouble);
  Tensor xl = x.detach().requires_grad_(true);
  Tensor out = run_graph(g, {xl, y})[0];
  Tensor gx = autograd::grad({out.sum()}, {xl})[0];
  const double h = 1e-6;
  Tensor xc = x.contiguous();
  for (int64_t i = 0; i < xc.numel(); i++) {
    Tensor xp = xc.clone(), xm = xc.clone();
    xp.data_ptr<double>()[i] += h;
    xm.data_ptr<double>()[i] -= h;
    double fd = (run_graph(g, {xp, y})[0].sum().item<double>() - run_graph(g, {xm, y})[0].sum().item<double>()) / (2 * h);
    EXPECT_NEAR(gx.contiguous().data_ptr<double>()[i], fd, 1e-6) << "element " << i;
  }
}

TEST_P(Backends, OutputSmallerThanLoopFallsBackToEager) {
  // c = b * 2 is read outside the group and is narrower than the loop: the pass leaves it out
  Builder bl;
  int64_t x = bl.input(kFloat, {4, 8}), b = bl.input(kFloat, {8});
  int64_t c = bl.op("mul", {V(b), F(2.0)}, kFloat, {8});
  int64_t y = bl.op("add", {V(x), V(c), I(1)}, kFloat, {4, 8});
  int64_t z = bl.op("exp", {V(y)}, kFloat, {4, 8});
  bl.outputs({z, c});
  fz::fuse(bl.g);
  ASSERT_EQ(count_groups(bl.g), 1u);
  ASSERT_EQ(bl.g.nodes.size(), 2u);  // mul stays eager
  Tensor xv = randn({4, 8}, kFloat), bv = randn({8}, kFloat);
  auto outs = run_graph(bl.g, {xv, bv});
  expect_close(outs[0], ember::exp(xv + bv * 2.0), 2e-6, 1e-6, "exp");
  expect_close(outs[1], bv * 2.0, 0, 0, "narrow output");
  // at replay the group's output would be narrower than another input: run op by op, same answer
  Builder two;
  int64_t p = two.input(kFloat, {4}), q = two.input(kFloat, {4});
  int64_t s = two.op("add", {V(p), V(q), I(1)}, kFloat, {4});
  int64_t e = two.op("mul", {V(q), F(3.0)}, kFloat, {4});
  two.outputs({s, e});
  fz::fuse(two.g);
  ASSERT_EQ(count_groups(two.g), 1u);
  Tensor pv = randn({3, 4}, kFloat), qv = randn({4}, kFloat);  // e is [4], the loop [3, 4]
  g_expect_fused = false;
  auto o2 = run_graph(two.g, {pv, qv});
  g_expect_fused = true;
  expect_close(o2[0], pv + qv, 0, 0, "wide output");
  expect_close(o2[1], qv * 3.0, 0, 0, "narrow output computed eagerly");
}

INSTANTIATE_TEST_SUITE_P(Fuser, Backends, ::testing::Values(fz::Backend::Interp, fz::Backend::Codegen),
                         [](const auto& info) { return info.param == fz::Backend::Interp ? "Interp" : "Codegen"; });

TEST(Fuser, MutationIsABarrier) {
  // t2 = exp(x) * 2; x.add_(1); out = -(t2 + x): without the barrier one group would read x
  // after the in-place add for both chains
  Builder b;
  int64_t x = b.input(kFloat, {10});
  int64_t t1 = b.op("exp", {V(x)}, kFloat, {10});
  int64_t t2 = b.op("mul", {V(t1), F(2.0)}, kFloat, {10});
  int64_t xm = b.op("add", {V(x), F(1.0), I(1)}, kFloat, {10}, Variant::Inplace);
  int64_t t3 = b.op("add", {V(t2), V(xm), I(1)}, kFloat, {10});
  int64_t t4 = b.op("neg", {V(t3)}, kFloat, {10});
  b.outputs({t4});
  Graph ref = b.g;
  fz::fuse(b.g);
  ASSERT_EQ(b.g.nodes.size(), 3u);
  EXPECT_EQ(b.g.nodes[0].op, "prim::FusionGroup");
  EXPECT_EQ(b.g.nodes[1].op, "add");
  EXPECT_EQ(b.g.nodes[1].variant, Variant::Inplace);
  EXPECT_EQ(b.g.nodes[2].op, "prim::FusionGroup");
  Tensor xv = randn({10}, kFloat);
  Tensor got = run_graph(b.g, {xv.clone()})[0], want = run_graph(ref, {xv.clone()})[0];
  expect_close(got, want, 2e-6, 1e-6, "mutation");
  expect_close(got, -(ember::exp(xv) * 2.0 + (xv + 1.0)), 2e-6, 1e-6, "mutation vs eager");
}

TEST(Fuser, GroupingRules) {
  Builder b;
  int64_t x = b.input(kFloat, {4, 4}), w = b.input(kFloat, {4, 4});
  int64_t single = b.op("exp", {V(x)}, kFloat, {4, 4});
  int64_t mm = b.op("mm", {V(single), V(w)}, kFloat, {4, 4});  // reads exp: exp alone is no group
  int64_t d = b.op("mul", {V(mm), V(mm)}, kFloat, {4, 4});
  int64_t i64 = b.op("add", {V(mm), V(mm), I(1)}, kLong, {4, 4});  // integer, reads no group value
  int64_t e = b.op("neg", {V(d)}, kFloat, {4, 4});                 // joins mul across it
  int64_t mm2 = b.op("mm", {V(d), V(w)}, kFloat, {4, 4});          // reads d: the group runs before
  int64_t f = b.op("exp", {V(mm2)}, kFloat, {4, 4});
  int64_t h = b.op("tanh", {V(f)}, kFloat, {4, 4});
  b.outputs({e, i64, h});
  fz::fuse(b.g);
  ASSERT_EQ(b.g.nodes.size(), 6u);
  EXPECT_EQ(b.g.nodes[0].op, "exp");
  EXPECT_EQ(b.g.nodes[1].op, "mm");
  EXPECT_EQ(b.g.nodes[2].op, "add");
  ASSERT_EQ(b.g.nodes[3].op, "prim::FusionGroup");
  EXPECT_EQ(b.g.nodes[3].subgraph->nodes.size(), 2u);
  EXPECT_EQ(b.g.nodes[3].outputs, (std::vector<int64_t>{d, e}));  // d is read by mm2, e is a graph output
  EXPECT_EQ(b.g.nodes[4].op, "mm");
  ASSERT_EQ(b.g.nodes[5].op, "prim::FusionGroup");
  EXPECT_EQ(b.g.nodes[5].outputs, (std::vector<int64_t>{h}));  // f is used only inside
  // a lone gelu is a group: eager runs it as five kernels
  Builder one;
  int64_t x1 = one.input(kFloat, {8});
  int64_t y1 = one.op("gelu", {V(x1), Str("tanh")}, kFloat, {8});
  one.outputs({y1});
  fz::fuse(one.g);
  EXPECT_EQ(count_groups(one.g), 1u);
}

TEST(Fuser, CodegenCacheOnDisk) {
  if (!fz::codegen_available()) GTEST_SKIP() << "no C++ compiler";
  auto dir = std::filesystem::temp_directory_path() / ("ember_fuser_cache_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  const char* prev = std::getenv("EMBER_CACHE_DIR");
  std::string saved = prev ? prev : "";
  setenv("EMBER_CACHE_DIR", dir.c_str(), 1);
  fz::Program p;
  p.num_inputs = 1;
  fz::Instr in;
  in.op = fz::Op::Input;
  in.input = 0;
  p.emit(in);
  fz::Instr k;
  k.op = fz::Op::Const;
  k.k = 0.123456789;  // a program no other test compiles
  p.emit(k);
  fz::Instr m;
  m.op = fz::Op::Mul;
  m.a = 0;
  m.b = 1;
  p.outputs.push_back({p.emit(m)});
  auto kern = fz::make_codegen_kernel(p, 0);
  size_t files = 0;
  for (auto& e : std::filesystem::directory_iterator(dir)) files += e.path().extension() == ".so";
  EXPECT_EQ(files, 1u);  // one shared object, no temporaries left behind
  float xs[5] = {1, 2, 3, 4, 5}, ys[5];
  const void* ins[1] = {xs};
  void* outs[1] = {ys};
  double acc[1] = {0};
  kern->run(5, ins, outs, acc);
  for (int i = 0; i < 5; i++) EXPECT_FLOAT_EQ(ys[i], xs[i] * float(0.123456789));
  auto again = fz::make_codegen_kernel(p, 0);  // warm: loaded from disk
  EXPECT_NE(again, nullptr);
  if (prev) setenv("EMBER_CACHE_DIR", saved.c_str(), 1);
  else unsetenv("EMBER_CACHE_DIR");
  std::filesystem::remove_all(dir);
}

TEST(Fuser, BadGroupsRaise) {
  Node n;
  n.op = "add";
  EXPECT_THROW(fz::run_group(n, {}), ember::Error);
  Builder b;
  int64_t x = b.input(kFloat, {3});
  int64_t y = b.op("exp", {V(x)}, kFloat, {3});
  int64_t z = b.op("neg", {V(y)}, kFloat, {3});
  b.outputs({z});
  fz::fuse(b.g);
  ASSERT_EQ(count_groups(b.g), 1u);
  EXPECT_THROW(fz::run_group(b.g.nodes[0], {}), ember::Error);  // wrong input count
}

TEST_P(Backends, MixedScalarsAndBoolConditions) {
  // a float64 0-d tensor in a float32 chain does not promote (eager's rule for 0-d operands), and a
  // bool condition from outside the group selects
  Builder b;
  int64_t x = b.input(kFloat, {5, 6}), c = b.input(kDouble, {}), cond = b.input(kBool, {5, 6});
  int64_t y = b.op("mul", {V(x), V(c)}, kFloat, {5, 6});
  int64_t z = b.op("where", {V(cond), V(y), F(-1.0)}, kFloat, {5, 6});
  int64_t e = b.op("exp", {V(z)}, kFloat, {5, 6});
  b.outputs({e});
  fz::fuse(b.g);
  ASSERT_EQ(count_groups(b.g), 1u);
  Tensor xv = randn({5, 6}, kFloat), cv = scalar_to_tensor(Scalar(0.7)).to(kDouble).clone();
  Tensor condv = ember::gt(randn({5, 6}, kFloat), scalar_to_tensor(Scalar(0.0)));
  Tensor got = run_graph(b.g, {xv, cv, condv})[0];
  Tensor want = ember::exp(ember::where(condv, xv * cv, scalar_to_tensor(Scalar(-1.0))));
  expect_close(got, want, 2e-6, 1e-6, "mixed");
}

TEST_P(Backends, DoubleBackwardRaises) {
  Graph g = gelu_graph(kDouble, {3});
  fz::fuse(g);
  Tensor x = randn({3}, kDouble).requires_grad_(true);
  Tensor y = run_graph(g, {x})[0];
  EXPECT_THROW(autograd::grad({y.sum()}, {x}, {}, std::nullopt, /*create_graph=*/true), ember::Error);
}

TEST_P(Backends, CapturedScalarsBecomeLiterals) {
  // x * 2 + 0.5 > 1 ? ... as a trace records it: the numbers are 0-d constants (int64 and float64)
  for (ScalarType dt : {kFloat, kDouble}) {
    Builder b;
    int64_t x = b.input(dt, {4, 5});
    int64_t two = b.constant(scalar_to_tensor(Scalar(int64_t(2))));
    int64_t half = b.constant(scalar_to_tensor(Scalar(0.5)));
    int64_t y = b.op("mul", {V(x), V(two)}, dt, {4, 5});
    int64_t z = b.op("add", {V(y), V(half), I(1)}, dt, {4, 5});
    int64_t w = b.op("pow", {V(z), V(two)}, dt, {4, 5});
    b.outputs({w});
    Graph ref = b.g;
    fz::fuse(b.g);
    ASSERT_EQ(count_groups(b.g), 1u);
    EXPECT_EQ(b.g.nodes[0].args.size(), 1u);  // only x is an input: the scalars are literals
    Tensor xv = randn({4, 5}, dt);
    expect_close(run_graph(b.g, {xv})[0], run_graph(ref, {xv})[0], rtol_for(dt), 1e-6, "literals");
    expect_close(run_graph(b.g, {xv})[0], ember::pow(xv * 2 + 0.5, 2), rtol_for(dt), 1e-6, "literals vs eager");
  }
  // a constant written in place is read as a tensor, never baked in
  Builder m;
  int64_t x = m.input(kFloat, {3});
  int64_t k = m.constant(scalar_to_tensor(Scalar(3.0)).clone());
  int64_t a = m.op("mul", {V(x), V(k)}, kFloat, {3});
  int64_t e = m.op("exp", {V(a)}, kFloat, {3});
  m.op("add", {V(k), F(1.0), I(1)}, kDouble, {}, Variant::Inplace);
  m.outputs({e});
  fz::fuse(m.g);
  ASSERT_EQ(count_groups(m.g), 1u);
  EXPECT_EQ(m.g.nodes[0].args.size(), 2u);
}

TEST(Fuser, CodegenCompileErrorIsClear) {
  if (!fz::codegen_available()) GTEST_SKIP() << "no C++ compiler";
  fz::Program p;
  p.num_inputs = 1;
  fz::Instr in;
  in.op = fz::Op::Input;
  in.input = 0;
  p.emit(in);
  fz::Instr bad;
  bad.op = static_cast<fz::Op>(200);  // no C++ form: the generated source does not compile
  bad.a = 0;
  p.outputs.push_back({p.emit(bad)});
  try {
    fz::make_codegen_kernel(p, 0);
    FAIL() << "expected a compile error";
  } catch (const ember::Error& e) {
    EXPECT_EQ(e.kind(), ember::ErrorKind::Runtime);
    EXPECT_NE(std::string(e.what()).find("compiling a fused kernel failed"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("error"), std::string::npos) << "the compiler's message: " << e.what();
  }
}

TEST_P(Backends, ConcurrentFirstCalls) {
  // threads racing on a group's first call (lowering, compiling) all get the right answer
  Graph g = where_chain(kFloat, {64});
  fz::fuse(g);
  Tensor x = randn({64}, kFloat), y = randn({64}, kFloat);
  Tensor want = where_chain_eager(x, y);
  std::vector<Tensor> got(4);
  std::vector<std::thread> ts;
  for (int t = 0; t < 4; t++)
    ts.emplace_back([&, t] {
      for (const Tensor& o : fz::run_group(g.nodes[0], {x, y}))
        if (o.dtype() == kFloat) got[t] = o;  // the chain's result (the mask is the other output)
    });
  for (auto& t : ts) t.join();
  for (const Tensor& r : got) expect_close(r, want, 2e-6, 1e-6, "concurrent");
}

TEST_P(Backends, NarrowPrefixIsItsOwnGroup) {
  // layer norm as traced: mean (ends its chain), rsqrt(var + eps) on [B, 1], then the [B, N] tail.
  // The [B, 1] ops run as their own small group: inside the tail's loop they would be recomputed
  // N times (rsqrt per element instead of per row).
  Builder b;
  int64_t x = b.input(kFloat, {8, 32}), var = b.input(kFloat, {8, 1});
  int64_t w = b.input(kFloat, {32}), bias = b.input(kFloat, {32});
  int64_t mu = b.op("mean", {V(x), Dims({-1}), B(true), None()}, kFloat, {8, 1});
  int64_t a = b.op("add", {V(var), F(1e-5), I(1)}, kFloat, {8, 1});
  int64_t r = b.op("rsqrt", {V(a)}, kFloat, {8, 1});
  int64_t c = b.op("sub", {V(x), V(mu), I(1)}, kFloat, {8, 32});
  int64_t n = b.op("mul", {V(c), V(r)}, kFloat, {8, 32});
  int64_t s = b.op("mul", {V(n), V(w)}, kFloat, {8, 32});
  int64_t y = b.op("add", {V(s), V(bias), I(1)}, kFloat, {8, 32});
  b.outputs({y});
  fz::fuse(b.g);
  ASSERT_EQ(b.g.nodes.size(), 3u);
  EXPECT_EQ(b.g.nodes[0].op, "mean");
  ASSERT_EQ(b.g.nodes[1].op, "prim::FusionGroup");
  EXPECT_EQ(b.g.nodes[1].subgraph->nodes.size(), 2u);  // add, rsqrt on [8, 1]
  ASSERT_EQ(b.g.nodes[2].op, "prim::FusionGroup");
  EXPECT_EQ(b.g.nodes[2].subgraph->nodes.size(), 4u);  // sub, mul, mul, add on [8, 32]
  Tensor xv = randn({8, 32}, kFloat), vv = xv.var(-1, false, true), wv = randn({32}, kFloat), bv = randn({32}, kFloat);
  Tensor want = (xv - xv.mean(-1, true)) * ember::rsqrt(vv + 1e-5) * wv + bv;
  expect_close(run_graph(b.g, {xv, vv, wv, bv})[0], want, 0, 0, "layer norm");
}
