// The tracer: a thread-local recording state that generated op entries append to.
#include "ember/jit/tracer.h"

#include <unordered_map>
#include <unordered_set>

#include "ember/autograd/grad_mode.h"
#include "ember/core/error.h"
#include "ember/core/scalar.h"
#include "ember/generated/ops.h"

namespace ember::jit {

std::atomic<int> g_active_tracers{0};

struct TracingState {
  std::shared_ptr<Graph> graph = std::make_shared<Graph>();
  std::unordered_map<const TensorImpl*, int64_t> ids;
  // Every tensor the graph refers to stays alive until the trace ends, so an address in `ids`
  // never names a different, later tensor.
  std::vector<Tensor> keep;
  std::vector<char> dynamic;  // per value: depends on an input
  // Storages of input-derived values: an unknown tensor on one of them came from an input by a
  // path the tracer did not see (.data, a raw-pointer view), and capturing it as a constant would
  // bake input data into the graph.
  std::unordered_set<const StorageImpl*> dynamic_storages;
  int depth = 0;
  std::string poison;

  int64_t add_value(const Tensor& t, bool dyn) {
    int64_t id = graph->new_value();
    graph->values[size_t(id)].dtype = t.dtype();
    graph->values[size_t(id)].shape.assign(t.sizes().begin(), t.sizes().end());
    dynamic.push_back(dyn);
    ids[t.impl()] = id;
    keep.push_back(t);
    if (dyn) dynamic_storages.insert(t.impl()->storage().get());
    return id;
  }

  int64_t lookup(const Tensor& t) {
    auto it = ids.find(t.impl());
    if (it != ids.end()) return it->second;
    if (dynamic_storages.count(t.impl()->storage().get()) != 0) {
      poison = "a tensor that shares memory with a traced input or intermediate reached an op without "
               "passing through a recorded op (e.g. via .data or a raw pointer); the graph would bake "
               "its values in";
    }
    int64_t id = add_value(t, false);
    graph->constants.push_back({id, "__constant_" + std::to_string(graph->constants.size()), t});
    return id;
  }
};

namespace {
thread_local TracingState* tls_state = nullptr;

// The recording state for a call on this thread, if it should record.
TracingState* recorder() {
  TracingState* st = tls_state;
  return (st != nullptr && st->depth == 0) ? st : nullptr;
}
}  // namespace

// ---------------------------------------------------------------- TracedCall
TracedCall::TracedCall(const char* op, Variant variant) {
  TracingState* st = tls_state;
  if (st == nullptr) return;
  if (st->depth == 0) {
    state_ = st;
    node_.op = op;
    node_.variant = variant;
  }
  st->depth++;
  entered_ = true;
}

TracedCall::~TracedCall() {
  if (entered_ && tls_state != nullptr) tls_state->depth--;
}

void TracedCall::arg(const Tensor& t) {
  if (!state_) return;
  node_.args.push_back(t.defined() ? Arg::value(state_->lookup(t)) : Arg::none());
}
void TracedCall::arg(const std::vector<Tensor>& ts) {
  if (!state_) return;
  Arg a;
  a.kind = Arg::Kind::Values;
  for (const Tensor& t : ts) {
    if (!t.defined()) {
      state_->poison = "an undefined tensor inside a tensor list";
      a.ints.push_back(-1);
      continue;
    }
    a.ints.push_back(state_->lookup(t));
  }
  node_.args.push_back(std::move(a));
}
void TracedCall::arg(const Scalar& s) {
  if (!state_) return;
  if (s.is_floating()) node_.args.push_back(Arg::real(s.to_double()));
  else if (s.is_bool()) node_.args.push_back(Arg::boolean(s.to_bool()));
  else node_.args.push_back(Arg::integer(s.to_long()));
}
void TracedCall::arg(const std::optional<Scalar>& s) {
  if (!state_) return;
  if (s) arg(*s);
  else node_.args.push_back(Arg::none());
}
void TracedCall::arg(int64_t v) {
  if (state_) node_.args.push_back(Arg::integer(v));
}
void TracedCall::arg(const std::optional<int64_t>& v) {
  if (state_) node_.args.push_back(v ? Arg::integer(*v) : Arg::none());
}
void TracedCall::arg(IntArrayRef v) {
  if (!state_) return;
  Arg a;
  a.kind = Arg::Kind::Ints;
  a.ints.assign(v.begin(), v.end());
  node_.args.push_back(std::move(a));
}
void TracedCall::arg(const OptionalIntArrayRef& v) {
  if (!state_) return;
  if (v) arg(IntArrayRef(*v));
  else node_.args.push_back(Arg::none());
}
void TracedCall::arg(double v) {
  if (state_) node_.args.push_back(Arg::real(v));
}
void TracedCall::arg(const std::optional<double>& v) {
  if (state_) node_.args.push_back(v ? Arg::real(*v) : Arg::none());
}
void TracedCall::arg(bool v) {
  if (state_) node_.args.push_back(Arg::boolean(v));
}
void TracedCall::arg(const std::optional<bool>& v) {
  if (state_) node_.args.push_back(v ? Arg::boolean(*v) : Arg::none());
}
void TracedCall::arg(std::string_view v) {
  if (!state_) return;
  Arg a;
  a.kind = Arg::Kind::Str;
  a.s = std::string(v);
  node_.args.push_back(std::move(a));
}
void TracedCall::arg(const std::optional<std::string_view>& v) {
  if (!state_) return;
  if (v) arg(*v);
  else node_.args.push_back(Arg::none());
}
void TracedCall::arg(ScalarType v) {
  if (!state_) return;
  Arg a;
  a.kind = Arg::Kind::Dtype;
  a.i = int64_t(v);
  node_.args.push_back(std::move(a));
}
void TracedCall::arg(const std::optional<ScalarType>& v) {
  if (!state_) return;
  if (v) arg(*v);
  else node_.args.push_back(Arg::none());
}
void TracedCall::arg(Generator* g) {
  if (!state_) return;
  // A replay draws from the default generator; an explicit one would silently change the stream.
  if (g != nullptr) state_->poison = "'" + node_.op + "' was called with an explicit Generator, which a graph cannot hold";
  node_.args.push_back(Arg::none());
}
void TracedCall::arg(const TensorOptions& o) {
  if (!state_) return;
  Arg a;
  a.kind = Arg::Kind::Options;
  a.i = o.dtype_ ? int64_t(*o.dtype_) : -1;
  a.s = o.device_ ? o.device_->str() : "";
  a.b = o.requires_grad_;
  node_.args.push_back(std::move(a));
}
void TracedCall::arg(const std::optional<MemoryFormat>& m) {
  if (!state_) return;
  if (!m) {
    node_.args.push_back(Arg::none());
    return;
  }
  Arg a;
  a.kind = Arg::Kind::MemoryFormat;
  a.i = int64_t(*m);
  node_.args.push_back(std::move(a));
}

void TracedCall::finish(const Tensor* outs, size_t n) {
  if (!state_) return;
  TracingState* st = state_;
  bool dyn = false;
  for (const Arg& a : node_.args) {
    if (a.kind == Arg::Kind::Value) dyn |= st->dynamic[size_t(a.i)] != 0;
    if (a.kind == Arg::Kind::Values)
      for (int64_t id : a.ints) dyn |= id >= 0 && st->dynamic[size_t(id)] != 0;
  }
  for (size_t k = 0; k < n; k++) {
    // A mutated or returned-as-is argument gets a new SSA id: later reads see the new version.
    node_.outputs.push_back(outs[k].defined() ? st->add_value(outs[k], dyn) : -1);
  }
  st->graph->nodes.push_back(std::move(node_));
}

TracePause::TracePause() : state_(tls_state) {
  if (state_ != nullptr) state_->depth++;
}

TracePause::~TracePause() {
  if (state_ != nullptr && tls_state == state_) state_->depth--;
}

// ---------------------------------------------------------------- Tracer
Tracer::Tracer() {
  EMBER_CHECK(tls_state == nullptr, "ember.jit.trace: a trace is already running on this thread (traces do not nest)");
  state_ = new TracingState();
  tls_state = state_;
  g_active_tracers.fetch_add(1, std::memory_order_relaxed);
}

Tracer::~Tracer() { abort(); }

void Tracer::abort() {
  if (state_ == nullptr) return;
  if (tls_state == state_) tls_state = nullptr;
  g_active_tracers.fetch_sub(1, std::memory_order_relaxed);
  delete state_;
  state_ = nullptr;
}

void Tracer::add_input(const Tensor& t, std::string name) {
  EMBER_CHECK(state_ != nullptr, "ember.jit.trace: the trace has ended");
  EMBER_CHECK(t.defined(), "ember.jit.trace: input '", name, "' is an undefined tensor");
  int64_t id = state_->add_value(t, true);
  InputSpec in;
  in.value = id;
  in.name = std::move(name);
  in.dtype = t.dtype();
  in.shape.assign(t.sizes().begin(), t.sizes().end());
  in.requires_grad = t.requires_grad();
  state_->graph->inputs.push_back(std::move(in));
}

void Tracer::add_param(std::string name, const Tensor& t) {
  EMBER_CHECK(state_ != nullptr, "ember.jit.trace: the trace has ended");
  if (!t.defined() || state_->ids.count(t.impl()) != 0) return;  // tied weights: the first name wins
  int64_t id = state_->add_value(t, false);
  state_->graph->params.push_back({id, std::move(name), t});
}

int64_t Tracer::value_of(const Tensor& t) {
  EMBER_CHECK(state_ != nullptr, "ember.jit.trace: the trace has ended");
  return state_->lookup(t);
}

const std::string& Tracer::poisoned() const {
  static const std::string none;
  return state_ != nullptr ? state_->poison : none;
}

std::shared_ptr<Graph> Tracer::finish(OutputSpec output) {
  EMBER_CHECK(state_ != nullptr, "ember.jit.trace: the trace was already finished");
  if (!state_->poison.empty()) EMBER_FAIL(Runtime, "ember.jit.trace: cannot trace this function: ", state_->poison);
  std::shared_ptr<Graph> g = std::move(state_->graph);
  g->output = std::move(output);
  abort();
  return g;
}

// ---------------------------------------------------------------- hooks
void on_values_read(const Tensor& t, const char* what) {
  TracingState* st = recorder();
  if (st == nullptr || !t.defined()) return;
  int64_t id = st->lookup(t);
  // The expected values are a private copy: the tensor itself may change before the next call.
  Tensor expected;
  {
    TracePause pause;
    autograd::NoGradGuard no_grad;
    expected = t.detach().clone();
  }
  int64_t eid = st->add_value(expected, false);
  st->graph->constants.push_back({eid, "__guard_" + std::to_string(st->graph->constants.size()), expected});
  Node n;
  n.op = "prim::guard_values";
  n.args = {Arg::value(id), Arg::value(eid)};
  Arg w;
  w.kind = Arg::Kind::Str;
  w.s = what;
  n.args.push_back(std::move(w));
  st->graph->nodes.push_back(std::move(n));
}

void on_shape_read(const Tensor& t, const char* what) {
  TracingState* st = recorder();
  if (st == nullptr || !t.defined()) return;
  auto it = st->ids.find(t.impl());
  bool dyn = it != st->ids.end() ? st->dynamic[size_t(it->second)] != 0
                                 : st->dynamic_storages.count(t.impl()->storage().get()) != 0;
  if (!dyn || st->graph->static_shapes) return;
  st->graph->static_shapes = true;
  st->graph->static_shapes_reason = what;
}

void on_untraceable(const std::string& why) {
  TracingState* st = tls_state;
  if (st != nullptr && st->poison.empty()) st->poison = why;
}

void on_detach(const Tensor& self, const Tensor& result) {
  TracingState* st = recorder();
  if (st == nullptr) return;
  Node n;
  n.op = "prim::detach";
  int64_t in = st->lookup(self);
  n.args = {Arg::value(in)};
  n.outputs = {st->add_value(result, st->dynamic[size_t(in)] != 0)};
  st->graph->nodes.push_back(std::move(n));
}

}  // namespace ember::jit
