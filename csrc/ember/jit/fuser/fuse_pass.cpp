// fuse(): groups fusible nodes of a traced graph into prim::FusionGroup nodes.
//
// One scan in program order keeps an open group. A fusible node joins it when the dtypes agree and
// the iteration shapes stay compatible; a node that reads a group value without being fusible
// closes the group (the group must run before it), as does any mutation (in-place / out= nodes
// are barriers: no read moves across a write). A group runs at its last node's position, which
// is safe because nothing between its nodes reads its values and nothing there writes. A value
// used after the group must have the group's full shape (one loop writes it); when one does not,
// its node is kept out of that group (it may start another) and the scan runs again. A group must replace at least two eager kernels.
#include <algorithm>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "ember/core/error.h"
#include "ember/jit/fuser/fuser.h"
#include "ember/jit/fuser/program.h"

namespace ember::jit::fuser {
namespace {

using Shape = std::vector<int64_t>;

bool is_float(ScalarType t) { return t == kFloat || t == kDouble; }

std::vector<int64_t> value_args(const Node& n) {
  std::vector<int64_t> v;
  for (const Arg& a : n.args) {
    if (a.kind == Arg::Kind::Value) v.push_back(a.i);
    if (a.kind == Arg::Kind::Values) v.insert(v.end(), a.ints.begin(), a.ints.end());
  }
  return v;
}

// 0-d constants the trace captured (the numbers in x * 2, x + 0.5) that nothing in the graph
// writes: a group reads them as literals instead of as inputs. In a float group they never
// promote (0-d operands do not), so the literal rounded to the group's dtype is what eager uses.
std::unordered_map<int64_t, Arg> scalar_constants(const Graph& g) {
  std::unordered_set<int64_t> written;
  for (const Node& n : g.nodes)
    if (n.variant != Variant::Functional)
      for (int64_t v : value_args(n)) written.insert(v);
  std::unordered_map<int64_t, Arg> out;
  for (const NamedTensor& c : g.constants) {
    const Tensor& t = c.tensor;
    if (!t.defined() || t.dim() != 0 || !t.device().is_cpu() || written.count(c.value)) continue;
    ScalarType dt = t.dtype();
    if (dt == kFloat || dt == kDouble) out[c.value] = Arg::real(t.to(kDouble).item<double>());
    else if (dt == kLong || dt == kInt || dt == kShort || dt == kChar || dt == kByte)
      out[c.value] = Arg::integer(t.to(kLong).item<int64_t>());
    else if (dt == kBool) out[c.value] = Arg::boolean(t.item<bool>());
  }
  return out;
}

struct Analysis {
  const Graph& g;
  std::unordered_map<int64_t, Arg> literals;  // scalar_constants(g)
  bool known(int64_t v) const { return v >= 0 && v < int64_t(g.values.size()); }

  // The dtype the node computes in, or nullopt when it cannot be fused.
  std::optional<ScalarType> compute_dtype(const Node& n) const {
    if (!is_fusible_op(n) || !known(n.outputs[0])) return std::nullopt;
    std::optional<ScalarType> dt;
    ScalarType out = g.values[n.outputs[0]].dtype;
    if (is_float(out)) dt = out;
    else if (out != kBool) return std::nullopt;
    // operands: the compute dtype, bool, or a 0-d float (it does not promote, as eager's rules)
    for (int64_t v : value_args(n)) {
      if (literals.count(v)) continue;
      if (!known(v)) return std::nullopt;
      const ValueInfo& vi = g.values[v];
      if (vi.dtype == kBool) continue;
      if (!is_float(vi.dtype)) return std::nullopt;
      if (vi.shape.empty() && dt) continue;
      if (!dt) dt = vi.dtype;
      else if (*dt != vi.dtype && !vi.shape.empty()) return std::nullopt;
    }
    if (!dt) return std::nullopt;  // a comparison of two bools
    if (is_reduction_op(n.op)) {
      const Shape& s = g.values[n.args[0].i].shape;
      if (n.op != "sum") {
        if (n.args.size() < 3 || n.args[2].kind != Arg::Kind::Bool) return std::nullopt;
        if (n.args[1].kind == Arg::Kind::Ints && n.args[1].ints.size() == 1) {
          int64_t d = n.args[1].ints[0];
          if (s.empty() || !(d == -1 || d == int64_t(s.size()) - 1)) return std::nullopt;
        } else if (!(n.args[1].kind == Arg::Kind::None ||
                     (n.args[1].kind == Arg::Kind::Ints && n.args[1].ints.empty()))) {
          return std::nullopt;
        }
      }
    }
    return dt;
  }
};

struct Group {
  std::vector<size_t> nodes;
  std::unordered_set<int64_t> produced, reduced_values, inputs;
  ScalarType dtype = kFloat;
  Shape full;
  Reduce reduce = Reduce::None;
  int64_t reduce_dim = -1;
};

// The node's reduction; *dim = -1 (the last dim: compute_dtype admitted only that one).
Reduce reduce_mode(const Node& n, int64_t* dim) {
  *dim = -1;
  if (n.op == "sum" || n.args[1].kind != Arg::Kind::Ints || n.args[1].ints.empty()) return Reduce::All;
  return Reduce::LastDim;
}

// Tries to add node i to the group; false when it cannot join.
bool try_join(Group& G, const Graph& g, const std::unordered_map<int64_t, Arg>& literals, size_t i, ScalarType dt) {
  const Node& n = g.nodes[i];
  std::vector<int64_t> reads;
  for (int64_t v : value_args(n))
    if (!literals.count(v)) reads.push_back(v);
  for (int64_t v : reads)
    if (G.reduced_values.count(v)) return false;  // a reduction ends its chain
  bool red = is_reduction_op(n.op);
  Shape full = G.full;
  const Shape& s = red ? g.values[n.args[0].i].shape : g.values[n.outputs[0]].shape;
  if (!broadcast_into(full, s)) return false;
  if (!G.nodes.empty()) {
    if (G.dtype != dt) return false;
    if (G.reduce != Reduce::None && full != G.full) return false;  // reduced operands must stay full
    // Every member computes at the loop's shape: a narrower node (rsqrt(var + eps) on [N, 1] beside
    // [N, D] work) would be recomputed D times, so it stays out; one that widens the loop would make
    // the narrower members so, so it starts a group of its own.
    if (full != G.full || (!red && s != full)) return false;
  }
  int64_t dim = -1;
  if (red) {
    Reduce mode = reduce_mode(n, &dim);
    if (s != full) return false;
    if (G.reduce != Reduce::None && (G.reduce != mode || G.reduce_dim != dim)) return false;
  }
  size_t new_inputs = G.inputs.size();
  for (int64_t v : reads)
    if (!G.produced.count(v) && !G.inputs.count(v)) new_inputs++;
  if (new_inputs > 60) return false;
  for (int64_t v : reads)
    if (!G.produced.count(v)) G.inputs.insert(v);
  if (red) G.reduce = reduce_mode(n, &G.reduce_dim);
  G.nodes.push_back(i);
  G.produced.insert(n.outputs[0]);
  if (red) G.reduced_values.insert(n.outputs[0]);
  G.dtype = dt;
  G.full = full;
  return true;
}

// Kernels eager runs for the node: a group must save at least one pass over memory, so a lone
// node is worth a group only where eager composes it of several ops.
int eager_kernels(const Node& n) {
  if (n.op == "gelu") return 5;
  if (n.op == "leaky_relu") return 3;
  if (n.op == "silu") return 2;
  return 1;
}

void output_values(const OutputSpec& o, std::unordered_set<int64_t>& out) {
  if (o.kind == OutputSpec::Kind::Value) out.insert(o.value);
  for (const OutputSpec& it : o.items) output_values(it, out);
}

}  // namespace

void fuse(Graph& g) {
  Analysis an{g, scalar_constants(g)};
  std::unordered_set<int64_t> graph_outputs;
  output_values(g.output, graph_outputs);
  // readers of each value, by node index
  std::unordered_map<int64_t, std::vector<size_t>> readers;
  for (size_t i = 0; i < g.nodes.size(); i++)
    for (int64_t v : value_args(g.nodes[i])) readers[v].push_back(i);

  // (node, first node of a group): the node's value is read after that group and is narrower
  // than its loop, so the node may not join a group starting there (it may start its own)
  std::set<std::pair<size_t, size_t>> banned;
  std::vector<Group> groups;
  for (;;) {
    groups.clear();
    Group G;
    auto close = [&] {
      int kernels = 0;
      for (size_t i : G.nodes) kernels += eager_kernels(g.nodes[i]);
      if (kernels >= 2) groups.push_back(std::move(G));
      G = Group();
    };
    for (size_t i = 0; i < g.nodes.size(); i++) {
      const Node& n = g.nodes[i];
      if (n.variant != Variant::Functional) {  // a mutation: nothing moves across it
        close();
        continue;
      }
      std::optional<ScalarType> dt = an.compute_dtype(n);
      if (!dt) {
        for (int64_t v : value_args(n))
          if (G.produced.count(v)) {
            close();
            break;
          }
        continue;
      }
      bool may_join = G.nodes.empty() || !banned.count({i, G.nodes[0]});
      if (!may_join || !try_join(G, g, an.literals, i, *dt)) {
        close();
        if (!try_join(G, g, an.literals, i, *dt)) G = Group();
      }
      if (G.nodes.size() == 1 && G.nodes[0] == i && banned.count({i, i})) close();  // it must stay alone
    }
    close();
    // values read after their group must be written whole by its loop
    bool retry = false;
    for (const Group& grp : groups) {
      std::unordered_set<size_t> members(grp.nodes.begin(), grp.nodes.end());
      for (size_t i : grp.nodes) {
        int64_t v = g.nodes[i].outputs[0];
        bool escapes = graph_outputs.count(v) > 0;
        for (size_t r : readers[v]) escapes |= !members.count(r);
        if (escapes && !grp.reduced_values.count(v) && g.values[v].shape != grp.full) {
          banned.insert({i, grp.nodes[0]});
          retry = true;
        }
      }
    }
    if (!retry) break;
  }
  if (groups.empty()) return;

  // Build each group's node and the new node list.
  std::unordered_map<size_t, size_t> group_of_node;  // node index -> group index
  for (size_t k = 0; k < groups.size(); k++)
    for (size_t i : groups[k].nodes) group_of_node[i] = k;
  std::vector<Node> fused_nodes(groups.size());
  std::vector<char> lowered(groups.size(), 1);
  for (size_t k = 0; k < groups.size(); k++) {
    const Group& grp = groups[k];
    std::unordered_set<size_t> members(grp.nodes.begin(), grp.nodes.end());
    auto sub = std::make_shared<Graph>();
    std::unordered_map<int64_t, int64_t> id;  // parent value -> subgraph value
    auto sub_value = [&](int64_t v) {
      auto it = id.find(v);
      if (it != id.end()) return it->second;
      int64_t s = sub->new_value();
      sub->values[s] = g.values[v];
      return id[v] = s;
    };
    Node fn;
    fn.op = "prim::FusionGroup";
    // inputs in first-read order
    for (size_t i : grp.nodes)
      for (int64_t v : value_args(g.nodes[i]))
        if (!grp.produced.count(v) && !id.count(v) && !an.literals.count(v)) {
          int64_t s = sub_value(v);
          InputSpec spec;
          spec.value = s;
          spec.name = "in" + std::to_string(sub->inputs.size());
          spec.dtype = g.values[v].dtype;
          spec.shape = g.values[v].shape;
          sub->inputs.push_back(spec);
          fn.args.push_back(Arg::value(v));
        }
    sub->output.kind = OutputSpec::Kind::Tuple;
    for (size_t i : grp.nodes) {
      Node copy = g.nodes[i];
      copy.fn = nullptr;
      for (Arg& a : copy.args) {
        if (a.kind == Arg::Kind::Value && an.literals.count(a.i)) a = an.literals.at(a.i);
        else if (a.kind == Arg::Kind::Value) a.i = sub_value(a.i);
        if (a.kind == Arg::Kind::Values)
          for (int64_t& v : a.ints) v = sub_value(v);
      }
      int64_t v = g.nodes[i].outputs[0];
      copy.outputs = {sub_value(v)};
      sub->nodes.push_back(std::move(copy));
      bool escapes = graph_outputs.count(v) > 0 || grp.reduced_values.count(v) > 0;
      for (size_t r : readers[v]) escapes |= !members.count(r);
      if (escapes) {
        OutputSpec o;
        o.value = id[v];
        sub->output.items.push_back(o);
        fn.outputs.push_back(v);
      }
    }
    fn.subgraph = sub;
    // the backward reads inputs + output gradients through one pointer table of 64
    if (fn.args.size() + fn.outputs.size() > 64) lowered[k] = 0;
    // a node whose arguments do not match its schema (a hand-made graph) stays unfused: it then
    // fails as an eager op, with that op's own message
    try {
      if (lowered[k]) lower(*sub);
    } catch (const Error&) {
      lowered[k] = 0;
    }
    fused_nodes[k] = std::move(fn);
  }
  std::vector<Node> nodes;
  nodes.reserve(g.nodes.size());
  for (size_t i = 0; i < g.nodes.size(); i++) {
    auto it = group_of_node.find(i);
    if (it == group_of_node.end() || !lowered[it->second]) {
      nodes.push_back(std::move(g.nodes[i]));
    } else if (groups[it->second].nodes.back() == i) {
      nodes.push_back(std::move(fused_nodes[it->second]));
    }
  }
  g.nodes = std::move(nodes);
}

}  // namespace ember::jit::fuser
