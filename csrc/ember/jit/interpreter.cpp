// The graph interpreter and the boxed-op registry.
#include "ember/jit/interpreter.h"

#include <atomic>
#include <mutex>
#include <sstream>
#include <string>
#include <unordered_map>

#include "ember/autograd/grad_mode.h"
#include "ember/core/scalar_overloads.h"
#include "ember/generated/ops.h"
#include "ember/jit/boxing.h"
#include "ember/jit/fuser/fuser.h"
#include "ember/jit/tracer.h"
#include "ember/profiler/profiler.h"

namespace ember::jit {

// ---------------------------------------------------------------- boxed ops
namespace {
std::string variant_suffix(Variant v) { return v == Variant::Inplace ? "/inplace" : v == Variant::Out ? "/out" : ""; }

const std::unordered_map<std::string, const BoxedEntry*>& boxed_table() {
  static const auto* table = [] {
    auto* m = new std::unordered_map<std::string, const BoxedEntry*>();
    size_t n = 0;
    const BoxedEntry* e = boxed_ops(&n);
    for (size_t k = 0; k < n; k++) m->emplace(std::string(e[k].schema) + variant_suffix(e[k].variant), &e[k]);
    return m;
  }();
  return *table;
}

const char* kind_name(Arg::Kind k) {
  switch (k) {
    case Arg::Kind::None: return "None";
    case Arg::Kind::Value: return "a tensor";
    case Arg::Kind::Values: return "a tensor list";
    case Arg::Kind::Int: return "an int";
    case Arg::Kind::Ints: return "an int list";
    case Arg::Kind::Float: return "a float";
    case Arg::Kind::Bool: return "a bool";
    case Arg::Kind::Str: return "a string";
    case Arg::Kind::Dtype: return "a dtype";
    case Arg::Kind::Options: return "tensor options";
    case Arg::Kind::MemoryFormat: return "a memory format";
  }
  return "?";
}
}  // namespace

const BoxedEntry* find_boxed(const std::string& schema, Variant variant) {
  const auto& t = boxed_table();
  auto it = t.find(schema + variant_suffix(variant));
  return it == t.end() ? nullptr : it->second;
}

void bad_arg(const char* expected, const Arg& a) {
  EMBER_FAIL(Runtime, "ember.jit: graph argument has the wrong kind: expected ", expected, ", got ", kind_name(a.kind));
}

void need_args(const Node& n, size_t count) {
  EMBER_CHECK(n.args.size() == count, "ember.jit: node '", n.op, "' has ", n.args.size(), " arguments; its schema takes ",
              count);
}

TensorOptions options(const Arg& a) {
  if (a.kind != Arg::Kind::Options) bad_arg("tensor options", a);
  TensorOptions o;
  if (a.i >= 0) o = o.dtype(ScalarType(a.i));
  if (!a.s.empty()) o = o.device(Device(a.s));
  return o.requires_grad(a.b);
}

void put_results(Env& e, const Node& n, const Tensor* outs, size_t count) {
  if (count != n.outputs.size()) {
    EMBER_FAIL(Runtime, "ember.jit: '", n.op, "' returned ", count, " tensors where the trace saw ", n.outputs.size(),
               " (the trace baked the number of results in: trace again for this input)");
  }
  for (size_t k = 0; k < count; k++)
    if (n.outputs[k] >= 0) e[size_t(n.outputs[k])] = outs[k];
}

// ---------------------------------------------------------------- prim ops
namespace {
void prim_guard_values(Env& e, const Node& n) {
  const Tensor& v = ten(e, n.args.at(0));
  const Tensor& expected = ten(e, n.args.at(1));
  bool same = v.sizes() == expected.sizes() && v.dtype() == expected.dtype();
  if (same) {  // the same values, a NaN matching a NaN (allclose with no tolerance)
    autograd::NoGradGuard no_grad;
    same = is_floating(v.dtype()) ? ember::allclose(v, expected, 0.0, 0.0, /*equal_nan=*/true) : ember::equal(v, expected);
  }
  if (!same) {
    std::string what = n.args.size() > 2 && n.args[2].kind == Arg::Kind::Str ? n.args[2].s : "its values";
    EMBER_FAIL(Runtime, kGuardFailedPrefix, "the traced code read a tensor's values (", what,
               ") and branched or computed on them in Python; this call's values differ from the traced ones, "
               "so the recorded graph does not apply (trace again with this input, or use ember.compile, which "
               "records one graph per branch)");
  }
}

void prim_detach(Env& e, const Node& n) {
  need_args(n, 1);
  Tensor r = ten(e, n.args[0]).detach();
  put(e, n, r);
}

void prim_fusion_group(Env& e, const Node& n) {
  EMBER_RECORD_OP("prim::FusionGroup");  // one profiler range for the fused loop (its ops never run)
  std::vector<Tensor> ins;
  ins.reserve(n.args.size());
  for (const Arg& a : n.args) ins.push_back(ten(e, a));
  std::vector<Tensor> outs = fuser::run_group(n, ins);
  put_results(e, n, outs.data(), outs.size());
}

BoxedOp find_prim(const std::string& op) {
  if (op == "prim::guard_values") return &prim_guard_values;
  if (op == "prim::detach") return &prim_detach;
  if (op == "prim::FusionGroup") return &prim_fusion_group;
  return nullptr;
}

// Per graph, computed by prepare(): which values die after each node.
struct Plan {
  std::vector<std::vector<int64_t>> release_after;
};
std::recursive_mutex g_prepare_mu;
}  // namespace

void output_leaves(const OutputSpec& spec, std::vector<int64_t>& ids) {
  if (spec.kind == OutputSpec::Kind::Value) {
    ids.push_back(spec.value);
    return;
  }
  for (const OutputSpec& s : spec.items) output_leaves(s, ids);
}

void prepare(Graph& g) {
  std::lock_guard<std::recursive_mutex> lock(g_prepare_mu);
  if (g.plan) return;
  const int64_t nv = g.num_values;
  std::vector<char> defined(size_t(nv), 0);
  auto define = [&](int64_t id, const char* what) {
    EMBER_CHECK(id >= 0 && id < nv, "ember.jit: ", what, " refers to value ", id, " outside the graph's ", nv, " values");
    defined[size_t(id)] = 1;
  };
  for (const auto& in : g.inputs) define(in.value, "an input");
  for (const auto& p : g.params) define(p.value, "a parameter");
  for (const auto& c : g.constants) define(c.value, "a constant");
  std::vector<int64_t> last_use(size_t(nv), -1);
  auto use = [&](int64_t id, size_t node, const std::string& op) {
    EMBER_CHECK(id >= 0 && id < nv && defined[size_t(id)], "ember.jit: node '", op, "' reads value ", id,
                " before it is defined");
    last_use[size_t(id)] = int64_t(node);
  };
  for (size_t k = 0; k < g.nodes.size(); k++) {
    Node& n = g.nodes[k];
    BoxedOp fn = nullptr;
    if (n.op.rfind("prim::", 0) == 0) {
      fn = find_prim(n.op);
    } else if (const BoxedEntry* e = find_boxed(n.op, n.variant)) {
      need_args(n, e->num_args);
      fn = e->fn;
    }
    EMBER_CHECK(fn != nullptr, "ember.jit: unknown op '", n.op, "'", variant_suffix(n.variant),
                " in the graph (made by a newer Ember, or not an Ember graph)");
    if (n.op == "prim::FusionGroup") {
      EMBER_CHECK(n.subgraph != nullptr, "ember.jit: a fusion group without its subgraph");
      prepare(*n.subgraph);
    }
    n.fn = reinterpret_cast<const void*>(fn);
    for (const Arg& a : n.args) {
      if (a.kind == Arg::Kind::Value) use(a.i, k, n.op);
      if (a.kind == Arg::Kind::Values)
        for (int64_t id : a.ints) use(id, k, n.op);
    }
    for (int64_t id : n.outputs)
      if (id >= 0) define(id, "a node output");
  }
  std::vector<int64_t> outs;
  output_leaves(g.output, outs);
  for (int64_t id : outs) {
    EMBER_CHECK(id >= 0 && id < nv && defined[size_t(id)], "ember.jit: the graph's output refers to an undefined value ", id);
    last_use[size_t(id)] = int64_t(g.nodes.size());  // outputs live to the end
  }
  auto plan = std::make_shared<Plan>();
  plan->release_after.resize(g.nodes.size());
  for (int64_t id = 0; id < nv; id++)
    if (last_use[size_t(id)] >= 0 && last_use[size_t(id)] < int64_t(g.nodes.size()))
      plan->release_after[size_t(last_use[size_t(id)])].push_back(id);
  g.plan = plan;
}

void check_inputs(const Graph& g, const std::vector<Tensor>& inputs) {
  EMBER_CHECK_KIND(inputs.size() == g.inputs.size(), Type, "ember.jit: the traced function takes ", g.inputs.size(),
                   " tensor inputs but got ", inputs.size());
  for (size_t k = 0; k < inputs.size(); k++) {
    const InputSpec& s = g.inputs[k];
    const Tensor& t = inputs[k];
    EMBER_CHECK(t.defined(), "ember.jit: input '", s.name, "' is undefined");
    if (t.dtype() != s.dtype) {
      EMBER_FAIL(Runtime, "ember.jit: input '", s.name, "' has dtype ", dtype_name(t.dtype()), " but was traced with ",
                 dtype_name(s.dtype), " (a trace is specialised to its input dtypes: trace again)");
    }
    if (t.dim() != int64_t(s.shape.size())) {
      EMBER_FAIL(Runtime, "ember.jit: input '", s.name, "' has ", t.dim(), " dimensions but was traced with ",
                 s.shape.size(), " (", IntArrayRef(s.shape), ")");
    }
    if (g.static_shapes && t.sizes() != IntArrayRef(s.shape)) {
      EMBER_FAIL(Runtime, "ember.jit: input '", s.name, "' has shape ", t.sizes(), " but the trace only accepts ",
                 IntArrayRef(s.shape), ": the traced code read a shape into Python (", g.static_shapes_reason,
                 "), which may have baked it into the graph; trace again with this shape");
    }
  }
}

std::vector<Tensor> run(const Graph& g, const std::vector<Tensor>& inputs) {
  EMBER_CHECK(g.plan != nullptr, "ember.jit: run() on a graph that was not prepared");
  check_inputs(g, inputs);
  const auto& plan = *static_cast<const Plan*>(g.plan.get());
  Env env(size_t(g.num_values));
  for (const auto& p : g.params) env[size_t(p.value)] = p.tensor;
  for (const auto& c : g.constants) env[size_t(c.value)] = c.tensor;
  for (size_t k = 0; k < inputs.size(); k++) env[size_t(g.inputs[k].value)] = inputs[k];
  for (size_t k = 0; k < g.nodes.size(); k++) {
    const Node& n = g.nodes[k];
    reinterpret_cast<BoxedOp>(n.fn)(env, n);
    for (int64_t id : plan.release_after[k]) env[size_t(id)] = Tensor();
  }
  std::vector<int64_t> ids;
  output_leaves(g.output, ids);
  std::vector<Tensor> outs;
  outs.reserve(ids.size());
  for (int64_t id : ids) outs.push_back(env[size_t(id)]);
  return outs;
}

}  // namespace ember::jit
