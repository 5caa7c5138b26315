// Fused groups (both backends) against the same expressions as eager ops, on the elementwise-heavy
// blocks issue #17 names: bias + GELU of an MLP ([256, 1024]), a layer-norm tail, an Adam step.
// Prints medians and the first call's time (the codegen backend compiles then, or loads from the
// disk cache). benchmarks/bench_fuser.sh builds it and runs it cold and warm.
//
//   cmake --build build --target bench_fuser && build/bench_fuser
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "ember/autograd/engine.h"
#include "ember/core/operators.h"
#include "ember/jit/fuser/fuser.h"
#include "ember/jit/fuser/kernel.h"
#include "ember/parallel/parallel.h"

using namespace ember;
using namespace ember::jit;
namespace fz = ember::jit::fuser;
using Shape = std::vector<int64_t>;

namespace {

double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

double median_us(const std::function<void()>& f, int reps) {
  f();
  std::vector<double> t;
  for (int i = 0; i < reps; i++) {
    double t0 = now();
    f();
    t.push_back((now() - t0) * 1e6);
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

struct Builder {
  Graph g;
  int64_t input(Shape s) {
    int64_t v = g.new_value();
    g.values[v] = {kFloat, s};
    InputSpec in;
    in.value = v;
    in.shape = s;
    g.inputs.push_back(in);
    return v;
  }
  int64_t op(const std::string& name, std::vector<Arg> args, Shape s) {
    Node n;
    n.op = name;
    n.args = std::move(args);
    int64_t v = g.new_value();
    g.values[v] = {kFloat, s};
    n.outputs = {v};
    g.nodes.push_back(std::move(n));
    return v;
  }
};
Arg V(int64_t v) { return Arg::value(v); }
Arg F(double x) { return Arg::real(x); }
Arg I(int64_t x) { return Arg::integer(x); }

// The one fusion group fuse() makes of a graph.
Node fused_group(Graph g, const std::vector<int64_t>& outs) {
  g.output.kind = OutputSpec::Kind::Tuple;
  for (int64_t v : outs) {
    OutputSpec o;
    o.value = v;
    g.output.items.push_back(o);
  }
  fz::fuse(g);
  if (g.nodes.size() != 1 || g.nodes[0].op != "prim::FusionGroup") {
    std::fprintf(stderr, "expected one fusion group\n");
    std::exit(1);
  }
  return g.nodes[0];
}

struct Workload {
  std::string name;
  Node group;
  std::vector<Tensor> inputs;
  std::function<void()> eager;
};

void run(Workload& w, int reps) {
  double t_eager = median_us(w.eager, reps);
  std::printf("%-28s eager %9.1f us", w.name.c_str(), t_eager);
  for (fz::Backend b : {fz::Backend::Interp, fz::Backend::Codegen}) {
    if (b == fz::Backend::Codegen && !fz::codegen_available()) continue;
    fz::set_backend(b);
    Node fresh = w.group;  // a new subgraph: the first call lowers (and compiles or loads)
    fresh.subgraph = std::make_shared<Graph>(*w.group.subgraph);
    double t0 = now();
    fz::run_group(fresh, w.inputs);
    double first = (now() - t0) * 1e3;
    double t = median_us([&] { fz::run_group(fresh, w.inputs); }, reps);
    std::printf(" | %s %9.1f us (%.2fx, first call %.1f ms)", b == fz::Backend::Interp ? "interp" : "codegen", t,
                t_eager / t, first);
  }
  fz::set_backend(std::nullopt);
  std::printf("\n");
}

}  // namespace

int main() {
  std::printf("threads: %d\n", get_num_threads());
  const int reps = 51;
  std::vector<Workload> ws;
  {
    Builder b;  // bias + GELU: the MLP's hidden layer after its matmul
    int64_t x = b.input({256, 1024}), bias = b.input({1024});
    int64_t h = b.op("add", {V(x), V(bias), I(1)}, {256, 1024});
    Arg approx;
    approx.kind = Arg::Kind::Str;
    approx.s = "none";
    int64_t y = b.op("gelu", {V(h), approx}, {256, 1024});
    Tensor xv = ember::randn({256, 1024}), bv = ember::randn({1024});
    ws.push_back({"bias+gelu [256,1024]", fused_group(b.g, {y}), {xv, bv}, [=] { ember::gelu(xv + bv); }});
  }
  {
    Builder b;  // layer-norm tail: normalized rows, scaled and shifted per column
    int64_t x = b.input({256, 1024}), mean = b.input({256, 1}), rstd = b.input({256, 1});
    int64_t w = b.input({1024}), bias = b.input({1024});
    int64_t c = b.op("sub", {V(x), V(mean), I(1)}, {256, 1024});
    int64_t n = b.op("mul", {V(c), V(rstd)}, {256, 1024});
    int64_t s = b.op("mul", {V(n), V(w)}, {256, 1024});
    int64_t y = b.op("add", {V(s), V(bias), I(1)}, {256, 1024});
    Tensor xv = ember::randn({256, 1024}), mv = xv.mean(-1, true), rv = ember::rsqrt(xv.var(-1, false, true) + 1e-5);
    Tensor wv = ember::randn({1024}), bv = ember::randn({1024});
    ws.push_back({"layernorm tail [256,1024]", fused_group(b.g, {y}), {xv, mv, rv, wv, bv},
                  [=] { (xv - mv) * rv * wv + bv; }});
  }
  {
    Builder b;  // one Adam step over 1M parameters: new p, m, v from one loop
    Shape s{1 << 20};
    int64_t p = b.input(s), g = b.input(s), m = b.input(s), v = b.input(s);
    int64_t m2 = b.op("add", {V(b.op("mul", {V(m), F(0.9)}, s)), V(g), F(0.1)}, s);
    int64_t v2 = b.op("add", {V(b.op("mul", {V(v), F(0.999)}, s)), V(b.op("mul", {V(g), V(g)}, s)), F(0.001)}, s);
    int64_t den = b.op("add", {V(b.op("sqrt", {V(v2)}, s)), F(1e-8), I(1)}, s);
    int64_t p2 = b.op("sub", {V(p), V(b.op("div", {V(m2), V(den), Arg::none()}, s)), F(1e-3)}, s);
    Tensor pv = ember::randn(s), gv = ember::randn(s), mv = ember::randn(s), vv = ember::abs(ember::randn(s));
    ws.push_back({"adam step [1M]", fused_group(b.g, {p2, m2, v2}), {pv, gv, mv, vv}, [=] {
                    Tensor m2e = mv * 0.9 + gv * 0.1, v2e = vv * 0.999 + gv * gv * 0.001;
                    Tensor p2e = pv - m2e / (ember::sqrt(v2e) + 1e-8) * 1e-3;
                  }});
  }
  {
    // per-call overhead: the same bias + GELU group on a tiny input
    Tensor xv = ember::randn({4, 8}), bv = ember::randn({8});
    ws.push_back({"bias+gelu [4,8] (overhead)", ws[0].group, {xv, bv}, [=] { ember::gelu(xv + bv); }});
  }
  for (Workload& w : ws) run(w, w.inputs[0].numel() < 1000 ? 2001 : reps);

  // forward + backward of bias + GELU: the backward is the fused derivative
  {
    Tensor xv = ember::randn({256, 1024}).requires_grad_(), bv = ember::randn({1024}).requires_grad_();
    Tensor seed = ember::randn({256, 1024});
    double t_eager = median_us([&] { autograd::grad({ember::gelu(xv + bv)}, {xv, bv}, {seed}); }, reps);
    std::printf("%-28s eager %9.1f us", "bias+gelu fwd+bwd", t_eager);
    for (fz::Backend be : {fz::Backend::Interp, fz::Backend::Codegen}) {
      if (be == fz::Backend::Codegen && !fz::codegen_available()) continue;
      fz::set_backend(be);
      const Node& grp = ws[0].group;
      double t0 = now();
      autograd::grad({fz::run_group(grp, {xv, bv})[0]}, {xv, bv}, {seed});
      double first = (now() - t0) * 1e3;
      double t = median_us([&] { autograd::grad({fz::run_group(grp, {xv, bv})[0]}, {xv, bv}, {seed}); }, reps);
      std::printf(" | %s %9.1f us (%.2fx, first call %.1f ms)", be == fz::Backend::Interp ? "interp" : "codegen", t,
                  t_eager / t, first);
    }
    fz::set_backend(std::nullopt);
    std::printf("\n");
  }
  return 0;
}
