#pragma once
// The autograd graph. A Node is the backward of one forward op: apply() takes the gradients of
// the op's outputs and returns the gradients of its inputs, which flow along next_edges to the
// nodes that produced those inputs (or to AccumulateGrad for leaves). Tensors that require
// grad carry an AutogradMeta: the node that made them (grad_fn) or, for leaves, .grad.
// The derivative formulas live beside each op in ops.yaml; codegen writes one Node per op.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "ember/autograd/grad_mode.h"
#include "ember/core/tensor.h"

namespace ember::autograd {

class Node;
using NodePtr = std::shared_ptr<Node>;
using variable_list = std::vector<Tensor>;

struct Edge {
  NodePtr fn;
  uint32_t input_nr = 0;
  bool valid() const { return fn != nullptr; }
};

// Shape and dtype of a tensor crossing an edge, to reduce broadcast gradients and to make zeros.
struct TensorMeta {
  DimVector sizes;
  ScalarType dtype = kFloat;
  Device device;  // where a gradient for it must be (zeros for a missing one are made there)
};

using TensorHook = std::function<Tensor(const Tensor&)>;  // may return an undefined tensor: keep grad

class EMBER_API Node : public std::enable_shared_from_this<Node> {
 public:
  Node();
  virtual ~Node();
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;

  // grads[i] is the gradient of forward output i (undefined: zero). Returns one gradient per
  // next edge (undefined: no gradient flows).
  virtual variable_list apply(variable_list&& grads) = 0;
  virtual std::string name() const = 0;
  // Frees saved tensors once the node has run (unless retain_graph).
  virtual void release_variables() {}
  virtual bool is_accumulate_grad() const { return false; }

  uint64_t sequence_nr() const { return sequence_nr_; }
  size_t num_outputs() const { return output_meta.size(); }
  bool should_compute(size_t i) const { return i < next_edges.size() && next_edges[i].valid(); }
  // Zeros for an undefined gradient of output i.
  Tensor zeros_for_output(size_t i) const;

  std::vector<Edge> next_edges;
  std::vector<TensorMeta> input_meta;   // per next edge: the forward input
  std::vector<TensorMeta> output_meta;  // per forward output

  // Hooks, retained grads and the anomaly trace: rare, so kept out of line (a node is built and
  // destroyed on every recorded op). extras() creates them; readers use extras_or_empty().
  struct Extras {
    // Tensor.register_hook on a non-leaf output: (output_nr, hook), run on the incoming gradient.
    std::vector<std::pair<uint32_t, std::shared_ptr<TensorHook>>> tensor_pre_hooks;
    // retain_grad() of output nr: the slot accumulating its gradient (runs after tensor_pre_hooks)
    std::vector<std::pair<uint32_t, std::shared_ptr<Tensor>>> retained_grads;
    // Node.register_hook / register_prehook (from Python)
    std::vector<std::function<variable_list(const variable_list&, const variable_list&)>> post_hooks;
    std::vector<std::function<variable_list(const variable_list&)>> pre_hooks;
    std::string anomaly_trace;  // the forward stack, kept when anomaly mode is on
  };
  Extras& extras() {
    if (!extras_) extras_ = std::make_unique<Extras>();
    return *extras_;
  }
  const Extras& extras_or_empty() const {
    static const Extras empty;
    return extras_ ? *extras_ : empty;
  }

 protected:
  uint64_t sequence_nr_;

 private:
  std::unique_ptr<Extras> extras_;
};

// Accumulates into a leaf's .grad (the end of every backward path).
class EMBER_API AccumulateGrad : public Node {
 public:
  explicit AccumulateGrad(Tensor variable);
  variable_list apply(variable_list&& grads) override;
  std::string name() const override { return "ember::autograd::AccumulateGrad"; }
  bool is_accumulate_grad() const override { return true; }
  // The leaf's Tensor.register_hook hooks, run on the incoming gradient before it is accumulated
  // (or captured by autograd.grad).
  void run_leaf_hooks(variable_list& grads);
  Tensor variable;
};

// Per-tensor autograd state. See Note [Version counter sharing] for how views share versions.
struct EMBER_API AutogradMeta : AutogradMetaBase {
  bool requires_grad = false;        // leaves only; non-leaves require grad through grad_fn
  Tensor grad;
  NodePtr grad_fn;
  std::weak_ptr<Node> grad_accumulator;
  uint32_t output_nr = 0;
  // retain_grad() on a non-leaf: the hook writes here, .grad reads here
  std::shared_ptr<Tensor> retained_grad;
  // hooks of a leaf, run by its AccumulateGrad
  std::vector<std::shared_ptr<TensorHook>> leaf_hooks;
  std::vector<std::shared_ptr<std::function<void(const Tensor&)>>> post_accumulate_hooks;
  // a differentiable view: its root base, so in-place ops on the view update the base's history
  Tensor view_base;
  bool is_view = false;
  // version of the tensor when grad_fn was set: a view whose version moved on since (an in-place
  // op on its base or on another view of it) gets its grad_fn regenerated from the base
  uint32_t attr_version = 0;
  // how the view was made: in-place ops on views made in no_grad mode or by an op returning
  // several views (unbind, split, chunk) raise, as in PyTorch (the gradient would be ambiguous)
  enum class ViewCreation : uint8_t { Default, NoGradMode, MultiOutput } creation = ViewCreation::Default;
  bool inference = false;
  Tensor fw_grad;          // forward-mode tangent, valid while fw_level is the active dual level
  uint64_t fw_level = 0;
  // Tensor.grad_dtype of a leaf: the dtype its gradient is cast to (unset: the tensor's own dtype;
  // set to nullopt: any dtype is kept)
  bool grad_dtype_set = false;
  std::optional<ScalarType> grad_dtype;
};

// The dtype a leaf's accumulated gradient must have; nullopt when any dtype is kept.
EMBER_API std::optional<ScalarType> leaf_grad_dtype(const Tensor& t);

// Anomaly mode: the Python layer provides the forward stack recorded on each new node, and
// reports (as a warning) the stack of a node whose backward failed.
struct AnomalyHooks {
  std::string (*stack)() = nullptr;
  void (*report)(const std::string& node_name, const std::string& stack) = nullptr;
};
EMBER_API AnomalyHooks& anomaly_hooks();

// ---- per-tensor queries and updates
EMBER_API AutogradMeta* meta(const Tensor& t);            // nullptr if none
EMBER_API AutogradMeta& materialize_meta(const Tensor& t);
inline bool requires_grad(const Tensor& t) {
  auto* m = static_cast<AutogradMeta*>(t.impl()->autograd_meta());
  if (!m) return false;
  if (m->requires_grad || m->grad_fn) return true;
  // a view of a base that acquired history (an in-place op on the base) requires grad too
  return m->is_view && m->view_base.defined() && requires_grad(m->view_base);
}
// The node that made `t` (nullptr for leaves). For a view modified through its base (or through
// another view), the stale grad_fn is replaced by one reading the view's part of the base's gradient.
EMBER_API NodePtr grad_fn(const Tensor& t);
// retain_grad() bookkeeping when `m`'s tensor gets `node` as its new grad_fn.
EMBER_API void move_retained_grad(AutogradMeta& m, const NodePtr& node, uint32_t output_nr);
EMBER_API void set_requires_grad(const Tensor& t, bool r);
EMBER_API NodePtr grad_accumulator(const Tensor& t);
EMBER_API Edge gradient_edge(const Tensor& t);
EMBER_API bool is_leaf(const Tensor& t);

// True when an op on these inputs must be recorded.
inline bool any_requires_grad(std::initializer_list<const Tensor*> ts) {
  if (!grad_enabled()) return false;
  for (const Tensor* t : ts)
    if (t->defined() && requires_grad(*t)) return true;
  return false;
}
EMBER_API bool any_requires_grad_list(const std::vector<Tensor>& ts);

// Connect `node` to its inputs (edges + input metadata).
EMBER_API void collect_next_edges(Node& node, std::initializer_list<const Tensor*> inputs);
EMBER_API void collect_next_edges_list(Node& node, const std::vector<Tensor>& inputs);
// Make `node` the grad_fn of the op's outputs (records their metadata).
EMBER_API void set_history(const Tensor& output, const NodePtr& node, uint32_t output_nr = 0);
EMBER_API void set_history(const std::vector<Tensor>& outputs, const NodePtr& node);
// After an in-place op recorded as `node` on `self`: self (or, for a view, its base) gets the new history.
EMBER_API void rebase_history(const Tensor& self, const NodePtr& node);
// Raise PyTorch's errors for in-place ops that autograd cannot allow.
EMBER_API void check_inplace(const Tensor& self, bool recording);
// Mark `view` as a view of `base` (called by the view ops; multi: one of several views returned
// by one op). Views made in no_grad mode are recorded too, as non-differentiable views.
EMBER_API void set_view_of(const Tensor& view, const Tensor& base, bool multi = false);
// Raise if an out= op would need a gradient.
EMBER_API void check_out_no_grad(std::initializer_list<const Tensor*> inputs, const char* name);

// ---- forward-mode AD (ember.autograd.forward_ad). One dual level is active at a time; leaving
// it invalidates every tangent made inside it.
EMBER_API bool fw_grad_active();
EMBER_API uint64_t enter_dual_level();
EMBER_API void exit_dual_level(uint64_t level);
EMBER_API Tensor fw_grad(const Tensor& t);  // undefined if t has no tangent at the active level
// Set t's tangent (broadcast to t's shape and cast to its dtype).
EMBER_API void set_fw_grad(const Tensor& t, const Tensor& tangent);
EMBER_API Tensor fw_add(const Tensor& acc, const Tensor& term);
// Raise for an op without a forward formula applied to dual tensors.
EMBER_API void check_no_tangents(std::initializer_list<const Tensor*> inputs, const char* name);
// Tangent formulas run on primal values only: no tangent propagation inside them.
struct EMBER_API FwGradPause {
  FwGradPause();
  ~FwGradPause();

 private:
  bool prev_;
};  // acc + term (acc may be undefined)

// A tensor saved for backward. Checks the version counter on unpack; an op's own outputs are
// saved without their grad_fn (no reference cycle) and get it back on unpack.
class EMBER_API SavedVariable {
 public:
  SavedVariable() = default;
  SavedVariable(const Tensor& t, bool is_output);
  Tensor unpack(const std::shared_ptr<Node>& owner = nullptr) const;
  void reset();
  bool defined() const { return was_defined_; }

 private:
  Tensor data_;
  uint32_t saved_version_ = 0;
  uint32_t output_nr_ = 0;
  bool is_output_ = false;
  bool was_defined_ = false;
  bool requires_grad_ = false;
  bool released_ = false;
  std::string grad_fn_name_;  // for the error message
};

// Thrown by SavedVariable::unpack after release.
[[noreturn]] EMBER_API void fail_released();

}  // namespace ember::autograd
