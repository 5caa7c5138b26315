#include "ember/autograd/node.h"

#include <algorithm>
#include <atomic>

#include "ember/generated/ops.h"
#include "ember/iter/tensor_iter.h"
#include "ember/profiler/profiler.h"

namespace ember::autograd {

namespace {
std::atomic<uint64_t> g_sequence{0};

std::string type_string(const Tensor& t) {
  static const char* names[] = {"ByteTensor", "CharTensor", "ShortTensor", "IntTensor", "LongTensor",
                                "HalfTensor", "FloatTensor", "DoubleTensor", "BoolTensor", "BFloat16Tensor"};
  std::ostringstream os;
  os << "[ember." << names[int(t.dtype())] << " " << t.sizes() << "]";
  return os.str();
}

Tensor empty_strided(IntArrayRef sizes, IntArrayRef strides, ScalarType dt, Device device) {
  int64_t extent = 1;
  for (size_t i = 0; i < sizes.size(); i++) {
    if (sizes[i] == 0) { extent = 0; break; }
    extent += (sizes[i] - 1) * strides[i];
  }
  Tensor flat = empty_tensor({extent}, dt, device);
  return ember::as_strided(flat, sizes, strides, 0);
}
}  // namespace

Node::Node() : sequence_nr_(g_sequence.fetch_add(1, std::memory_order_relaxed)) {
  // the profiler links the forward op that makes this node to the node's backward run
  if (EMBER_UNLIKELY(profiler::enabled())) profiler::on_node_created(int64_t(sequence_nr_));
}

// Note [Iterative graph deletion]
// Dropping the last reference to a long chain of nodes would destroy it recursively (each node
// owns the next through its edges) and overflow the stack for deep graphs. The outermost
// destructor instead collects the edges of every node being destroyed and releases them in a loop.
namespace {
thread_local std::vector<NodePtr>* t_pending_deletes = nullptr;
// The drain vector of the outermost destructor, kept per thread with its capacity (no allocation per
// destroyed graph) and freed when the thread ends. A node freed after that, during process exit,
// makes a new one (reachable from the thread's storage, so no leak is reported).
struct PendingStorage {
  std::vector<NodePtr>* v = nullptr;
  ~PendingStorage() {
    delete v;
    v = nullptr;
  }
};
thread_local PendingStorage t_pending_storage;
}  // namespace

Node::~Node() {
  if (t_pending_deletes) {
    for (auto& e : next_edges)
      if (e.fn) t_pending_deletes->push_back(std::move(e.fn));
    return;
  }
  if (!t_pending_storage.v) t_pending_storage.v = new std::vector<NodePtr>();
  std::vector<NodePtr>& pending = *t_pending_storage.v;
  t_pending_deletes = &pending;
  for (auto& e : next_edges)
    if (e.fn) pending.push_back(std::move(e.fn));
  while (!pending.empty()) {
    NodePtr n = std::move(pending.back());
    pending.pop_back();
    n.reset();  // may push that node's edges
  }
  t_pending_deletes = nullptr;
}

Tensor Node::zeros_for_output(size_t i) const {
  const TensorMeta& m = output_meta[i];
  return ember::zeros(m.sizes, TensorOptions(m.dtype).device(m.device));
}

// ---------------------------------------------------------------- per-tensor state
AutogradMeta* meta(const Tensor& t) { return static_cast<AutogradMeta*>(t.impl()->autograd_meta()); }

AutogradMeta& materialize_meta(const Tensor& t) {
  auto* m = meta(t);
  if (!m) {
    auto owned = std::make_unique<AutogradMeta>();
    m = owned.get();
    t.impl()->set_autograd_meta(std::move(owned));
  }
  return *m;
}

void set_requires_grad(const Tensor& t, bool r) {
  if (r) {
    EMBER_CHECK(is_differentiable_dtype(t.dtype()), "only Tensors of floating point and complex dtype can require gradients");
    EMBER_CHECK_KIND(!t.is_sparse(), NotImplemented, "requires_grad_: autograd through sparse COO tensors is not "
                     "supported by Ember (sparse gradients of dense tensors are: embedding(sparse=True))");
  }
  auto* m = meta(t);
  if (m && grad_fn(t)) {
    EMBER_CHECK(r, "you can only change requires_grad flags of leaf variables. If you want to use a computed "
                "variable in a subgraph that doesn't require differentiation use var_no_grad = var.detach().");
    return;
  }
  if (!r && !m) return;
  materialize_meta(t).requires_grad = r;
}

bool is_leaf(const Tensor& t) { return grad_fn(t) == nullptr; }

std::optional<ScalarType> leaf_grad_dtype(const Tensor& t) {
  auto* m = meta(t);
  return m && m->grad_dtype_set ? m->grad_dtype : std::optional<ScalarType>(t.dtype());
}

NodePtr grad_accumulator(const Tensor& t) {
  auto& m = materialize_meta(t);
  if (auto acc = m.grad_accumulator.lock()) return acc;
  // The accumulator must not keep the leaf's AutogradMeta alive through a cycle: it holds the
  // leaf tensor, the leaf holds only a weak pointer back.
  auto acc = std::make_shared<AccumulateGrad>(t);
  m.grad_accumulator = acc;
  return acc;
}

namespace {
// Where a view lies in its base: geometry in the view's elements (a real view of a complex base, as
// view_as_real/real/imag make, counts real elements), and the bits it reads the base's values through.
struct ViewGeometry {
  DimVector base_strides, sizes, strides;
  int64_t offset = 0;  // relative to the base's storage offset, in the view's elements
  ScalarType dtype = ScalarType::Undefined;
  bool conj = false, neg = false;  // the view reads the base's values conjugated, negated (Note [Conjugate views])

  ViewGeometry(const Tensor& view, const Tensor& base)
      : base_strides(base.strides()), sizes(view.sizes()), strides(view.strides()), dtype(view.dtype()),
        conj(view.is_conj() != base.is_conj()), neg(view.is_neg() != base.is_neg()) {
    const int64_t vsz = itemsize(view.dtype()), bsz = itemsize(base.dtype());
    offset = view.storage_offset() - base.storage_offset() * bsz / vsz;
  }
  // The view's part of `result`, a fresh tensor laid out as the base (base_strides, offset 0).
  Tensor slice_of(const Tensor& result) const {
    Tensor src = result;
    if (itemsize(dtype) != itemsize(result.dtype())) {
      if (is_complex(result.dtype()) && !is_complex(dtype)) {
        src = ember::view_as_real(result);  // (differentiable, for double backward)
      } else {  // the same bytes read as the view's dtype (view(dtype): not differentiable)
        src = make_view(result, {0}, {1}, 0);
        src.impl()->set_dtype(dtype);
      }
    }
    Tensor slice = ember::as_strided(src, sizes, strides, offset);
    if (conj) slice = ember::conj(slice);
    if (neg) slice = ember::_neg_view(slice);
    return slice;
  }
};

// Backward of a view regenerated from its (modified) base: scatter the view's gradient into
// zeros shaped like the base.
class AsStridedBackward : public Node {
 public:
  TensorMeta base;
  ViewGeometry geo;
  AsStridedBackward(const Tensor& view, const Tensor& b)
      : base{DimVector(b.sizes()), b.dtype(), b.device()}, geo(view, b) {}
  variable_list apply(variable_list&& grads) override {
    variable_list out(1);
    if (!grads[0].defined()) return out;
    // (a real view's gradient goes into a gradient of the complex base's dtype)
    const ScalarType rt = itemsize(geo.dtype) != itemsize(base.dtype) ? base.dtype : grads[0].dtype();
    Tensor result = empty_strided(base.sizes, geo.base_strides, rt, base.device).zero_();
    geo.slice_of(result).copy_(grads[0]);
    out[0] = result;
    return out;
  }
  std::string name() const override { return "AsStridedBackward0"; }
};

// In-place op on a view: the base's new history. Runs the op's backward on the view's slice of
// the base's gradient and passes the rest of the base's gradient through.
class CopySlices : public Node {
 public:
  TensorMeta base;
  ViewGeometry geo;
  NodePtr fn;
  CopySlices(const Tensor& view, const Tensor& b) : base{DimVector(b.sizes()), b.dtype(), b.device()}, geo(view, b) {}
  variable_list apply(variable_list&& grads) override {
    variable_list out(next_edges.size());
    Tensor g = grads[0].defined() ? grads[0] : ember::zeros(base.sizes, TensorOptions(base.dtype).device(base.device));
    Tensor result = empty_strided(base.sizes, geo.base_strides, g.dtype(), base.device);
    result.copy_(g);
    Tensor slice = geo.slice_of(result);
    variable_list res = fn->apply({slice.clone()});
    if (res.size() > 0 && res[0].defined()) slice.copy_(res[0]);
    else slice.zero_();
    out[0] = result;
    for (size_t i = 1; i < res.size() && i < out.size(); i++) out[i] = res[i];
    return out;
  }
  void release_variables() override { fn->release_variables(); }
  std::string name() const override { return "ember::autograd::CopySlices"; }
};
}  // namespace

// retain_grad() follows the tensor to its new history (an in-place op, a regenerated view).
void move_retained_grad(AutogradMeta& m, const NodePtr& node, uint32_t output_nr) {
  if (!m.retained_grad || !m.grad_fn || (m.grad_fn == node && m.output_nr == output_nr)) return;
  auto& old = m.grad_fn->extras().retained_grads;
  old.erase(std::remove_if(old.begin(), old.end(), [&](auto& e) { return e.second == m.retained_grad; }), old.end());
  node->extras().retained_grads.push_back({output_nr, m.retained_grad});
}

NodePtr grad_fn(const Tensor& t) {
  auto* m = meta(t);
  if (!m) return nullptr;
  if (m->is_view && m->view_base.defined() && t._version() != m->attr_version &&
      m->creation != AutogradMeta::ViewCreation::NoGradMode) {
    // Note [Regenerating the grad_fn of views]: the base (the view's storage) was changed in
    // place since this view's history was recorded. Its value is now a slice of the base's new
    // value, so its gradient flows into the base's history at the view's position.
    const Tensor& base = m->view_base;
    if (requires_grad(base)) {
      auto vb = std::make_shared<AsStridedBackward>(t, base);
      vb->next_edges.push_back(gradient_edge(base));
      vb->input_meta.push_back({DimVector(base.sizes()), base.dtype(), base.device()});
      vb->output_meta.push_back({DimVector(t.sizes()), t.dtype(), t.device()});
      move_retained_grad(*m, vb, 0);
      m->grad_fn = vb;
      m->output_nr = 0;
    }
    m->attr_version = t._version();
  }
  return m->grad_fn;
}

Edge gradient_edge(const Tensor& t) {
  auto* m = meta(t);
  if (!m) return {};
  if (NodePtr fn = grad_fn(t)) return {fn, m->output_nr};
  // a leaf; or, as in PyTorch, a view made in no_grad mode of a tensor that requires grad
  if (requires_grad(t)) return {grad_accumulator(t), 0};
  return {};
}

bool any_requires_grad_list(const std::vector<Tensor>& ts) {
  if (!grad_enabled()) return false;
  for (const Tensor& t : ts)
    if (t.defined() && requires_grad(t)) return true;
  return false;
}

static void add_edge(Node& node, const Tensor* t) {
  if (t && t->defined()) {
    node.next_edges.push_back(requires_grad(*t) ? gradient_edge(*t) : Edge{});
    node.input_meta.push_back({DimVector(t->sizes()), t->dtype(), t->device()});
  } else {
    node.next_edges.push_back(Edge{});
    node.input_meta.push_back({});
  }
}

void collect_next_edges(Node& node, std::initializer_list<const Tensor*> inputs) {
  node.next_edges.reserve(node.next_edges.size() + inputs.size());
  node.input_meta.reserve(node.input_meta.size() + inputs.size());
  for (const Tensor* t : inputs) add_edge(node, t);
}

void collect_next_edges_list(Node& node, const std::vector<Tensor>& inputs) {
  for (const Tensor& t : inputs) add_edge(node, &t);
}

AnomalyHooks& anomaly_hooks() {
  static AnomalyHooks h;
  return h;
}

void set_history(const Tensor& output, const NodePtr& node, uint32_t output_nr) {
  if (!output.defined()) return;
  if (anomaly_enabled() && anomaly_hooks().stack && node->extras().anomaly_trace.empty())
    node->extras().anomaly_trace = anomaly_hooks().stack();
  if (node->output_meta.size() <= output_nr) node->output_meta.resize(output_nr + 1);
  node->output_meta[output_nr] = {DimVector(output.sizes()), output.dtype(), output.device()};
  if (!is_differentiable_dtype(output.dtype())) return;  // integer outputs (indices) are not differentiable
  auto& m = materialize_meta(output);
  move_retained_grad(m, node, output_nr);
  m.grad_fn = node;
  m.output_nr = output_nr;
  m.requires_grad = false;
  m.attr_version = output._version();
}

void set_history(const std::vector<Tensor>& outputs, const NodePtr& node) {
  for (size_t i = 0; i < outputs.size(); i++) set_history(outputs[i], node, uint32_t(i));
}

void set_view_of(const Tensor& view, const Tensor& base, bool multi) {
  if (inference_mode_enabled()) return;
  using VC = AutogradMeta::ViewCreation;
  auto* bm = meta(base);
  Tensor root = (bm && bm->is_view) ? bm->view_base : base;
  if (root.is_same(view)) return;  // never a view of itself (a cycle)
  auto& m = materialize_meta(view);
  m.is_view = true;
  m.view_base = root;
  m.attr_version = view._version();
  m.creation = !grad_enabled() ? VC::NoGradMode : multi ? VC::MultiOutput : VC::Default;
  if (bm && bm->is_view && bm->creation != VC::Default && m.creation == VC::Default) m.creation = bm->creation;
}

void check_inplace(const Tensor& self, bool recording) {
  if (!grad_enabled()) return;
  auto* m = meta(self);
  if (!m) return;
  using VC = AutogradMeta::ViewCreation;
  if (recording && m->is_view && m->creation != VC::Default) {
    const char* multi = "This view is the output of a function that returns multiple views. Such functions do not "
                        "allow the output views to be modified inplace. You should replace the inplace operation by an "
                        "out-of-place one.";
    if (m->creation == VC::MultiOutput && m->grad_fn) {
      std::string fn = m->grad_fn->name();
      size_t b = fn.rfind("Backward");
      if (b != std::string::npos && b > 0) fn = fn.substr(0, b);
      EMBER_FAIL(Runtime, "Output ", m->output_nr, " of ", fn, " is a view and is being modified inplace. ", multi);
    }
    EMBER_FAIL(Runtime, "A view was created in no_grad mode and is being modified inplace with grad mode enabled. ",
               m->creation == VC::MultiOutput ? multi
                   : "Given that this use case is ambiguous and error-prone, it is forbidden. You can clarify your "
                     "code by moving both the view and the inplace either both inside the no_grad block (if you "
                     "don't want the inplace to be tracked) or both outside (if you want the inplace to be tracked).");
  }
  if (m->requires_grad && !m->grad_fn && !m->is_view) {
    EMBER_FAIL(Runtime, "a leaf Variable that requires grad is being used in an in-place operation.");
  }
  if (m->is_view) {
    auto* bm = meta(m->view_base);
    if (bm && bm->requires_grad && !bm->grad_fn)
      EMBER_FAIL(Runtime, "a view of a leaf Variable that requires grad is being used in an in-place operation.");
  }
  (void)recording;
}

void rebase_history(const Tensor& self, const NodePtr& node) {
  auto* m = meta(self);
  if (m && m->is_view) {
    const Tensor& base = m->view_base;
    auto cs = std::make_shared<CopySlices>(self, base);
    cs->fn = node;
    cs->next_edges.push_back(requires_grad(base) ? gradient_edge(base) : Edge{});
    cs->input_meta.push_back({DimVector(base.sizes()), base.dtype(), base.device()});
    for (size_t i = 1; i < node->next_edges.size(); i++) {
      cs->next_edges.push_back(node->next_edges[i]);
      cs->input_meta.push_back(node->input_meta[i]);
    }
    set_history(base, cs, 0);
    // the view now reads its gradient through the base
    auto vb = std::make_shared<AsStridedBackward>(self, base);
    vb->next_edges.push_back({cs, 0});
    vb->input_meta.push_back({DimVector(base.sizes()), base.dtype(), base.device()});
    set_history(self, vb, 0);
    return;
  }
  set_history(self, node, 0);
}

void check_out_no_grad(std::initializer_list<const Tensor*> inputs, const char* name) {
  if (!grad_enabled()) return;
  for (const Tensor* t : inputs)
    if (t->defined() && requires_grad(*t))
      EMBER_FAIL(Runtime, name, "(): functions with out=... arguments don't support automatic differentiation, but "
                 "one of the arguments requires grad.");
}

// ---------------------------------------------------------------- forward-mode AD
namespace {
std::atomic<uint64_t> g_level_counter{0};
std::atomic<uint64_t> g_active_level{0};
}  // namespace

thread_local bool t_fw_paused = false;

bool fw_grad_active() { return !t_fw_paused && g_active_level.load(std::memory_order_relaxed) != 0; }

FwGradPause::FwGradPause() : prev_(t_fw_paused) { t_fw_paused = true; }
FwGradPause::~FwGradPause() { t_fw_paused = prev_; }

uint64_t enter_dual_level() {
  EMBER_CHECK(!fw_grad_active(), "Nested forward mode AD is not supported at the moment");
  uint64_t l = g_level_counter.fetch_add(1) + 1;
  g_active_level.store(l);
  return l;
}

void exit_dual_level(uint64_t level) {
  EMBER_CHECK(g_active_level.load() == level, "Trying to exit a forward AD level that was not the last one that was "
              "created. This is not supported.");
  g_active_level.store(0);
}

Tensor fw_grad(const Tensor& t) {
  if (t_fw_paused) return Tensor();
  auto* m = meta(t);
  uint64_t level = g_active_level.load(std::memory_order_relaxed);
  if (!m || level == 0 || m->fw_level != level) return Tensor();
  return m->fw_grad;
}

void set_fw_grad(const Tensor& t, const Tensor& tangent) {
  uint64_t level = g_active_level.load();
  EMBER_CHECK(level != 0, "forward AD: no active dual level (use ember.autograd.forward_ad.dual_level())");
  auto& m = materialize_meta(t);
  Tensor tan = tangent;
  if (tan.defined()) {
    if (tan.sizes() != t.sizes()) tan = tan.expand(t.sizes());
    if (tan.dtype() != t.dtype()) tan = tan.to(t.dtype());
  }
  m.fw_grad = tan;
  m.fw_level = level;
}

void check_no_tangents(std::initializer_list<const Tensor*> inputs, const char* name) {
  for (const Tensor* t : inputs)
    if (t->defined() && fw_grad(*t).defined())
      EMBER_FAIL(NotImplemented, "Trying to use forward AD with ", name, " that does not support it because it has "
                 "not been implemented yet.");
}

Tensor fw_add(const Tensor& acc, const Tensor& term) { return acc.defined() ? ember::add(acc, term) : term; }

// ---------------------------------------------------------------- AccumulateGrad
AccumulateGrad::AccumulateGrad(Tensor v) : variable(std::move(v)) {
  input_meta.push_back({DimVector(variable.sizes()), variable.dtype(), variable.device()});
  output_meta.push_back({DimVector(variable.sizes()), variable.dtype(), variable.device()});
}

void AccumulateGrad::run_leaf_hooks(variable_list& grads) {
  auto* m = meta(variable);
  if (!m || grads.empty() || !grads[0].defined()) return;
  auto hooks = m->leaf_hooks;  // a hook may remove hooks
  for (auto& h : hooks) {
    Tensor r = (*h)(grads[0]);
    if (r.defined()) grads[0] = r;
  }
}

variable_list AccumulateGrad::apply(variable_list&& grads) {
  Tensor g = std::move(grads[0]);
  if (!g.defined()) return {};
  auto& m = materialize_meta(variable);
  if (!m.grad.defined()) {
    if (!grad_enabled()) {
      // steal the buffer when nothing else refers to it, else copy (two leaves must never
      // share one .grad storage)
      bool unique = g.use_count() == 1 && g.impl()->storage().use_count() == 1 && is_leaf(g) && !requires_grad(g);
      m.grad = unique && (g.is_contiguous() || g.is_sparse()) ? g : g.clone();
    } else {
      m.grad = g;
    }
  } else if (EMBER_UNLIKELY(m.grad.is_sparse() && !g.is_sparse())) {
    m.grad = ember::add(g, m.grad);  // a dense gradient joining a sparse one makes it dense
  } else if (!grad_enabled() && !requires_grad(m.grad)) {
    m.grad.add_(g);
  } else {
    m.grad = ember::add(m.grad, g);
  }
  auto post = m.post_accumulate_hooks;  // a hook may remove hooks
  for (auto& h : post) (*h)(variable);
  return {};
}

// ---------------------------------------------------------------- SavedVariable
SavedVariable::SavedVariable(const Tensor& t, bool is_output) {
  if (!t.defined()) return;
  was_defined_ = true;
  is_output_ = is_output;
  saved_version_ = t._version();
  requires_grad_ = requires_grad(t);
  if (auto* m = meta(t)) {
    output_nr_ = m->output_nr;
    if (NodePtr fn = grad_fn(t)) grad_fn_name_ = fn->name();
  }
  // an output would hold its own grad_fn: keep a plain alias instead (same storage and version)
  data_ = is_output ? make_view(t, t.sizes(), t.strides(), t.storage_offset()) : t;
}

void fail_released() {
  EMBER_FAIL(Runtime, "Trying to backward through the graph a second time (or directly access saved tensors after "
             "they have already been freed). Saved intermediate values of the graph are freed when you call "
             ".backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the graph a "
             "second time or if you need to access saved tensors after calling backward.");
}

Tensor SavedVariable::unpack(const std::shared_ptr<Node>& owner) const {
  if (!was_defined_) return Tensor();
  if (released_) fail_released();
  if (data_._version() != saved_version_) {
    // PyTorch's message: the node that made the tensor (its current one for a saved input),
    // named without the "Backward<N>" suffix of generated nodes (hand-written ones keep their
    // C++ name, "ember::autograd::CopySlices")
    std::string fn;
    uint32_t nr = output_nr_;
    if (is_output_) {
      fn = owner ? owner->name() : grad_fn_name_;
    } else if (NodePtr cur = grad_fn(data_)) {
      fn = cur->name();
      nr = meta(data_)->output_nr;
    }
    size_t b = fn.rfind("Backward");
    if (b != std::string::npos && b > 0 && b + 8 < fn.size() &&
        fn.find_first_not_of("0123456789", b + 8) == std::string::npos)
      fn = fn.substr(0, b);
    std::ostringstream os;
    os << "one of the variables needed for gradient computation has been modified by an inplace operation: "
       << type_string(data_);
    if (!fn.empty()) os << ", which is output " << nr << " of " << fn << ",";
    os << " is at version " << data_._version() << "; expected version " << saved_version_
       << " instead. Hint: enable anomaly detection to find the operation that failed to compute its gradient, "
          "with ember.autograd.set_detect_anomaly(True, check_nan=False).";
    EMBER_FAIL(Runtime, os.str());
  }
  if (is_output_ && requires_grad_ && owner && grad_enabled()) {
    // restore the link to the node that made it, for higher-order gradients
    Tensor t = make_view(data_, data_.sizes(), data_.strides(), data_.storage_offset());
    auto& m = materialize_meta(t);
    m.grad_fn = owner;
    m.output_nr = output_nr_;
    return t;
  }
  return data_;
}

void SavedVariable::reset() {
  if (was_defined_) released_ = true;
  data_ = Tensor();
}

}  // namespace ember::autograd
