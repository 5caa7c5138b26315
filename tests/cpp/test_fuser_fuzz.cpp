// Random elementwise chains (random broadcasting, a non-contiguous input, scalar operands, an
// optional reduction at the end) fused and run with both backends against the unfused graph run
// as eager ops: values and gradients, float64.
#include <gtest/gtest.h>

#include <random>

#include "ember/autograd/engine.h"
#include "fuser_test_util.h"

using namespace fuser_test;

namespace {

struct RandomGraph {
  Graph g;
  std::vector<Tensor> inputs;
};

RandomGraph make_random_graph(uint32_t seed) {
  std::mt19937 rng(seed);
  auto pick = [&](int n) { return int(rng() % uint32_t(n)); };
  const ScalarType dt = kDouble;
  const int64_t sizes[] = {1, 2, 3, 5, 17, 40};
  Shape base;
  int rank = 1 + pick(3);
  for (int d = 0; d < rank; d++) base.push_back(sizes[pick(6)]);
  if (seed % 7 == 0) base = {70, 600};  // past the thread grain
  RandomGraph r;
  Builder b;
  std::vector<int64_t> vals;
  std::vector<Shape> shapes;
  int nin = 1 + pick(3);
  for (int k = 0; k < nin; k++) {
    Shape s = base;
    for (auto& d : s)
      if (k > 0 && pick(3) == 0) d = 1;  // broadcast along this dim
    if (k > 0 && s.size() > 1 && pick(3) == 0) s.erase(s.begin());  // fewer leading dims
    vals.push_back(b.input(dt, s));
    shapes.push_back(s);
    Tensor t;
    if (s.size() >= 2 && pick(2) == 0) {  // a transposed (non-contiguous) input
      Shape rev = s;
      std::swap(rev.front(), rev.back());
      t = randn(rev, dt).transpose(0, int64_t(s.size()) - 1);
    } else {
      t = randn(s, dt);
    }
    r.inputs.push_back(t);
  }
  auto bshape = [](Shape a, const Shape& c) {
    if (c.size() > a.size()) a.insert(a.begin(), c.size() - a.size(), 1);
    size_t off = a.size() - c.size();
    for (size_t d = 0; d < c.size(); d++) a[off + d] = std::max(a[off + d], c[d]);
    return a;
  };
  auto add = [&](const std::string& op, std::vector<Arg> args, Shape s) {
    vals.push_back(b.op(op, std::move(args), dt, s));
    shapes.push_back(s);
    return vals.back();
  };
  int nops = 3 + pick(6);
  for (int i = 0; i < nops; i++) {
    size_t a = vals.size() - 1 - pick(std::min<int>(3, int(vals.size())));  // mostly recent values
    size_t c = pick(int(vals.size()));
    Shape sa = shapes[a], sc = bshape(shapes[a], shapes[c]);
    switch (pick(20)) {
      case 0: add("tanh", {V(vals[a])}, sa); break;
      case 1: add("sigmoid", {V(vals[a])}, sa); break;
      case 2: add("mul", {V(vals[a]), V(vals[c])}, sc); break;
      case 3: add("add", {V(vals[a]), V(vals[c]), F(0.5)}, sc); break;
      case 4: add("sub", {V(vals[a]), V(vals[c]), I(1)}, sc); break;
      case 5: add("maximum", {V(vals[a]), V(vals[c])}, sc); break;
      case 6: {
        int64_t m = b.op("gt", {V(vals[a]), V(vals[c])}, kBool, sc);
        add("where", {V(m), V(vals[a]), F(-0.25)}, sc);
        break;
      }
      case 7: add("gelu", {V(vals[a]), Str(pick(2) ? "tanh" : "none")}, sa); break;
      case 8: {  // sqrt(|x| + 1), log1p(|x|): keep to their domains
        int64_t ab = add("abs", {V(vals[a])}, sa);
        add(pick(2) ? "log1p" : "sqrt", {V(ab)}, sa);
        break;
      }
      case 9: add("mul", {V(vals[a]), F(-1.5)}, sa); break;
      case 10: add("sin", {V(vals[a])}, sa); break;
      case 11: add("relu", {V(vals[a])}, sa); break;
      case 12: add("leaky_relu", {V(vals[a]), F(0.1)}, sa); break;
      case 13: add("silu", {V(vals[a])}, sa); break;
      case 14: add("minimum", {V(vals[a]), V(vals[c])}, sc); break;
      case 15: {  // a / (|c| + 1)
        int64_t d = add("add", {V(add("abs", {V(vals[c])}, shapes[c])), F(1.0), I(1)}, shapes[c]);
        add("div", {V(vals[a]), V(d), None()}, sc);
        break;
      }
      case 16: {  // (|a| + 1) ^ 1.5, exp(tanh(a))
        if (pick(2)) {
          int64_t p1 = add("add", {V(add("abs", {V(vals[a])}, sa)), F(1.0), I(1)}, sa);
          add("pow", {V(p1), F(1.5)}, sa);
        } else {
          add("exp", {V(add("tanh", {V(vals[a])}, sa))}, sa);
        }
        break;
      }
      case 17: {  // a tensor weight: eager's backward for a number weight rounds (1 - w) to float32
        int64_t w = add("sigmoid", {V(vals[c])}, shapes[c]);
        add("lerp", {V(vals[a]), V(vals[c]), V(w)}, sc);
        break;
      }
      case 18: add("rsqrt", {V(add("add", {V(add("abs", {V(vals[a])}, sa)), F(0.5), I(1)}, sa))}, sa); break;
      default: add("clamp", {V(vals[a]), F(-0.8), F(0.9)}, sa); break;
    }
  }
  Shape s = shapes.back();
  int64_t last = vals.back();
  std::vector<int64_t> outs;
  switch (pick(3)) {
    case 0: outs.push_back(b.op("sum", {V(last), None()}, dt, {})); break;
    case 1: {
      if (s.empty()) break;
      Shape rs = s;
      rs.back() = 1;
      outs.push_back(b.op("mean", {V(last), Dims({-1}), B(true), None()}, dt, rs));
      break;
    }
    default: break;
  }
  if (outs.empty()) outs.push_back(last);
  if (vals.size() > size_t(nin) + 1 && pick(2) == 0) outs.push_back(vals[nin + pick(int(vals.size()) - nin - 1)]);
  b.outputs(outs);
  r.g = b.g;
  return r;
}

std::vector<Tensor> values_and_grads(const Graph& g, const std::vector<Tensor>& inputs) {
  std::vector<Tensor> leaves;
  for (const Tensor& t : inputs) leaves.push_back(t.detach().requires_grad_(true));
  std::vector<Tensor> outs = run_graph(g, leaves), seeds;
  for (const Tensor& o : outs) seeds.push_back(ember::ones(o.sizes(), TensorOptions(o.dtype())) * 0.5);
  std::vector<Tensor> grads = autograd::grad(outs, leaves, seeds, true, false, true);
  std::vector<Tensor> all = outs;
  for (size_t k = 0; k < grads.size(); k++)
    all.push_back(grads[k].defined() ? grads[k] : ember::zeros_like(inputs[k]));
  return all;
}

}  // namespace

TEST(FuserFuzz, RandomChainsMatchEager) {
  uint64_t fused_before = fz::stats().fused, eager_before = fz::stats().eager;
  g_check_path = false;  // random broadcasting may leave a group to run op by op: both are checked
  int groups = 0;
  for (uint32_t seed = 0; seed < 200; seed++) {
    RandomGraph r = make_random_graph(seed);
    std::vector<Tensor> want = values_and_grads(r.g, r.inputs);
    Graph fused = r.g;
    fz::fuse(fused);
    for (const Node& n : fused.nodes) groups += n.op == "prim::FusionGroup";
    for (fz::Backend be : {fz::Backend::Interp, fz::Backend::Codegen}) {
      // codegen compiles a kernel per new program: a quarter of the seeds keep a cold run short
      if (be == fz::Backend::Codegen && (!fz::codegen_available() || seed % 4 != 0)) continue;
      fz::set_backend(be);
      std::vector<Tensor> got = values_and_grads(fused, r.inputs);
      ASSERT_EQ(got.size(), want.size());
      for (size_t k = 0; k < got.size(); k++)
        expect_close(got[k], want[k], 1e-9, 1e-9,
                     "seed " + std::to_string(seed) + (be == fz::Backend::Interp ? " interp" : " codegen") +
                         (k < got.size() - r.inputs.size() ? " output " : " grad ") + std::to_string(k));
    }
    fz::set_backend(std::nullopt);
  }
  g_check_path = true;
  uint64_t fused = fz::stats().fused - fused_before, eager = fz::stats().eager - eager_before;
  EXPECT_GT(groups, 120);
  EXPECT_GT(fused, 3 * eager) << "most groups must run as one loop (fused " << fused << ", op by op " << eager << ")";
}
