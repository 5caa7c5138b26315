#pragma once
// Helpers of the fuser's tests: graphs built node by node as a trace records them, run with fusion
// groups through run_group and other nodes as eager ops, compared element by element.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <unordered_map>
#include <vector>

#include "ember/core/operators.h"
#include "ember/core/scalar_overloads.h"
#include "ember/jit/fuser/fuser.h"
#include "ember/jit/fuser/kernel.h"

namespace fuser_test {
using namespace ember;
using namespace ember::jit;
namespace fz = ember::jit::fuser;
using Shape = std::vector<int64_t>;


// Builds a traced graph node by node.
struct Builder {
  Graph g;
  int64_t input(ScalarType dt, Shape s) {
    int64_t v = g.new_value();
    g.values[v] = {dt, s};
    InputSpec in;
    in.value = v;
    in.name = "x" + std::to_string(g.inputs.size());
    in.dtype = dt;
    in.shape = s;
    g.inputs.push_back(in);
    return v;
  }
  int64_t constant(const Tensor& t) {  // a tensor the trace captured (as scalars in x * 2 are)
    int64_t v = g.new_value();
    g.values[v] = {t.dtype(), Shape(t.sizes().begin(), t.sizes().end())};
    g.constants.push_back({v, "__constant_" + std::to_string(g.constants.size()), t});
    return v;
  }
  int64_t op(const std::string& name, std::vector<Arg> args, ScalarType dt, Shape s,
             Variant var = Variant::Functional) {
    Node n;
    n.op = name;
    n.variant = var;
    n.args = std::move(args);
    int64_t v = g.new_value();
    g.values[v] = {dt, s};
    n.outputs = {v};
    g.nodes.push_back(std::move(n));
    return v;
  }
  void outputs(const std::vector<int64_t>& vs) {
    g.output.kind = OutputSpec::Kind::Tuple;
    for (int64_t v : vs) {
      OutputSpec o;
      o.value = v;
      g.output.items.push_back(o);
    }
  }
};

inline Arg V(int64_t v) { return Arg::value(v); }
inline Arg F(double x) { return Arg::real(x); }
inline Arg I(int64_t x) { return Arg::integer(x); }
inline Arg B(bool b) { return Arg::boolean(b); }
inline Arg None() { return Arg::none(); }
inline Arg Dims(std::vector<int64_t> d) {
  Arg a;
  a.kind = Arg::Kind::Ints;
  a.ints = std::move(d);
  return a;
}
inline Arg Str(const std::string& s) {
  Arg a;
  a.kind = Arg::Kind::Str;
  a.s = s;
  return a;
}

inline bool g_check_path = true;    // false: either path is fine (the caller counts)
inline bool g_expect_fused = true;  // run_graph checks each group ran fused (or, when false, op by op)

// Runs a graph: fusion groups through run_group, other nodes as eager ops (in-place add_/mul_
// for the mutation tests).
inline std::vector<Tensor> run_graph(const Graph& g, const std::vector<Tensor>& inputs) {
  std::unordered_map<int64_t, Tensor> env;
  for (size_t k = 0; k < inputs.size(); k++) env[g.inputs[k].value] = inputs[k];
  for (const NamedTensor& c : g.constants) env[c.value] = c.tensor;
  for (const Node& n : g.nodes) {
    std::vector<Tensor> args;
    for (const Arg& a : n.args)
      if (a.kind == Arg::Kind::Value) args.push_back(env.at(a.i));
    if (n.op == "prim::FusionGroup") {
      uint64_t before = fz::stats().fused;
      auto outs = fz::run_group(n, args);
      if (g_check_path) {
        EXPECT_EQ(fz::stats().fused, before + (g_expect_fused ? 1 : 0)) << "the group did not run as one loop";
      }
      for (size_t j = 0; j < outs.size(); j++) env[n.outputs[j]] = outs[j];
    } else if (n.variant == Variant::Inplace) {
      Tensor other = n.args[1].kind == Arg::Kind::Value ? env.at(n.args[1].i) : scalar_to_tensor(Scalar(n.args[1].f));
      env[n.outputs[0]] = n.op == "add" ? args[0].add_(other) : args[0].mul_(other);
    } else {
      // one node as a one-node subgraph of the eager reference
      Graph sub;
      std::unordered_map<int64_t, int64_t> id;
      Node c = n;
      std::vector<Tensor> sub_in;
      for (Arg& a : c.args)
        if (a.kind == Arg::Kind::Value) {
          if (!id.count(a.i)) {
            int64_t s = sub.new_value();
            sub.values[s] = g.values[a.i];
            InputSpec spec;
            spec.value = s;
            sub.inputs.push_back(spec);
            sub_in.push_back(env.at(a.i));
            id[a.i] = s;
          }
          a.i = id[a.i];
        }
      int64_t o = sub.new_value();
      sub.values[o] = g.values[n.outputs[0]];
      c.outputs = {o};
      sub.nodes.push_back(c);
      sub.output.value = o;
      env[n.outputs[0]] = fz::run_subgraph_eager(sub, sub_in)[0];
    }
  }
  std::vector<Tensor> outs;
  for (const OutputSpec& o : g.output.items) outs.push_back(env.at(o.value));
  return outs;
}

inline size_t count_groups(const Graph& g) {
  size_t k = 0;
  for (const Node& n : g.nodes) k += n.op == "prim::FusionGroup";
  return k;
}

inline void expect_close(const Tensor& got, const Tensor& want, double rtol, double atol, const std::string& what) {
  ASSERT_EQ(got.sizes(), want.sizes()) << what;
  ASSERT_EQ(got.dtype(), want.dtype()) << what;
  if (got.numel() == 0) return;
  Tensor a = got.to(kDouble).contiguous(), b = want.to(kDouble).contiguous();
  const double* pa = a.data_ptr<double>();
  const double* pb = b.data_ptr<double>();
  for (int64_t i = 0; i < a.numel(); i++) {
    if (std::isnan(pb[i])) {
      EXPECT_TRUE(std::isnan(pa[i])) << what << " at " << i;
      continue;
    }
    ASSERT_NEAR(pa[i], pb[i], atol + rtol * std::fabs(pb[i])) << what << " at " << i << " of " << a.numel();
  }
}

inline double rtol_for(ScalarType dt) { return dt == kFloat ? 2e-5 : 1e-12; }

struct Backends : ::testing::TestWithParam<fz::Backend> {
  void SetUp() override {
    if (GetParam() == fz::Backend::Codegen && !fz::codegen_available()) GTEST_SKIP() << "no C++ compiler";
    fz::set_backend(GetParam());
  }
  void TearDown() override { fz::set_backend(std::nullopt); }
};

inline Tensor randn(Shape s, ScalarType dt) { return ember::randn(s, nullptr, TensorOptions(dt)); }

}  // namespace fuser_test
