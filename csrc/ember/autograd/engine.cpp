// The engine in brief:
//   1. walk the graph from the roots, counting each node's incoming edges (its dependencies);
//   2. with `inputs`, mark the nodes on a path to them (only those run);
//   3. run ready nodes (all dependencies in) in decreasing sequence number, summing the
//      gradients that reach each node's input buffer, freeing saved tensors as each node is done.
#include "ember/autograd/engine.h"

#include <condition_variable>
#include <deque>
#include <exception>
#include <map>
#include <mutex>
#include <queue>
#include <sstream>
#include <thread>
#include <unordered_map>
#include <unordered_set>

#include <unistd.h>

#include <atomic>
#include <memory>

#include "ember/core/stream.h"
#include "ember/cuda/cuda.h"

#include "ember/generated/ops.h"
#include "ember/profiler/profiler.h"
#include "ember/jit/tracer.h"

namespace ember::autograd {

namespace {
// The sequence number the profiler links to the forward op (none for AccumulateGrad, as in PyTorch).
int64_t profiled_seq_nr(const Node& node) { return node.is_accumulate_grad() ? -1 : int64_t(node.sequence_nr()); }

// node.apply inside a profiler range named after the node, its inputs being the incoming gradients.
variable_list apply_node(Node& node, variable_list&& grads) {
  profiler::RecordScope scope;
  if (EMBER_UNLIKELY(profiler::enabled())) {
    profiler::detail::InputMeta meta;
    if (profiler::detail::want_shapes())
      for (const Tensor& g : grads) profiler::detail::add_input(meta, g);
    scope.begin(node.name(), profiler::EventKind::Backward, profiled_seq_nr(node), std::move(meta));
  }
  return node.apply(std::move(grads));
}
}  // namespace

Tensor sum_to(const Tensor& grad, IntArrayRef sizes) {
  if (grad.sizes() == sizes) return grad;
  int64_t lead = grad.dim() - int64_t(sizes.size());
  EMBER_CHECK(lead >= 0, "sum_to: gradient of shape ", grad.sizes(), " cannot be reduced to ", sizes);
  std::vector<int64_t> dims;
  for (int64_t i = 0; i < lead; i++) dims.push_back(i);
  for (int64_t i = 0; i < int64_t(sizes.size()); i++) {
    int64_t g = grad.sizes()[lead + i];
    if (sizes[i] == 1 && g != 1) dims.push_back(lead + i);
    else EMBER_CHECK(sizes[i] == g, "sum_to: gradient of shape ", grad.sizes(), " cannot be reduced to ", sizes);
  }
  Tensor r = dims.empty() ? grad : ember::sum(grad, IntArrayRef(dims), true);
  return r.reshape(sizes);
}

namespace {

struct NodeOrder {
  bool operator()(const NodePtr& a, const NodePtr& b) const { return a->sequence_nr() < b->sequence_nr(); }
};

Tensor accumulate(const Tensor& a, const Tensor& b) {
  if (!a.defined()) return b;
  if (!b.defined()) return a;
  // sparse + sparse stays sparse; with a dense one the sum is dense (add(dense, sparse))
  if (EMBER_UNLIKELY(a.is_sparse() && !b.is_sparse())) return ember::add(b, a);
  return ember::add(a, b);
}

void check_nan(const Node& node, const variable_list& outs) {
  for (size_t i = 0; i < outs.size(); i++) {
    const Tensor& t = outs[i];
    if (!t.defined() || !is_floating(t.dtype())) continue;
    if (ember::isnan(t).any().item().to_bool()) {
      EMBER_FAIL(Runtime, "Function '" + node.name() + "' returned nan values in its " + std::to_string(i) + "th output.");
    }
  }
}

// Reduce/cast each gradient to the shape and dtype of the input it belongs to.
void validate_outputs(const Node& node, variable_list& outs) {
  EMBER_CHECK(outs.size() == node.next_edges.size(), "Function ", node.name(), " returned an incorrect number of ",
              "gradients (expected ", node.next_edges.size(), ", got ", outs.size(), ")");
  for (size_t i = 0; i < outs.size(); i++) {
    Tensor& g = outs[i];
    if (!g.defined() || !node.next_edges[i].valid()) continue;
    const TensorMeta& m = node.input_meta[i];
    if (g.sizes() != m.sizes.ref()) {
      bool ok = g.numel() == prod(m.sizes) && g.dim() != int64_t(m.sizes.size()) ? false : true;
      (void)ok;
      try {
        g = sum_to(g, m.sizes);
      } catch (const Error&) {
        std::ostringstream os;
        os << "Function " << node.name() << " returned an invalid gradient at index " << i << " - got " << g.sizes()
           << " but expected shape compatible with " << m.sizes.ref();
        EMBER_FAIL(Runtime, os.str());
      }
    }
    if (EMBER_UNLIKELY(g.device() != m.device)) {
      // a 0-d CPU tensor used beside device tensors (x_gpu * cpu_scalar) takes its gradient back on the
      // CPU, as in PyTorch; any other device change is a bad formula or hook
      if (m.device.is_cpu() && m.sizes.empty()) {
        g = g.to(m.device);
      } else {
        std::ostringstream os;
        os << "Function " << node.name() << " returned an invalid gradient at index " << i << " - expected device "
           << m.device << " but got " << g.device();
        EMBER_FAIL(Runtime, os.str());
      }
    }
    // a leaf's gradient takes its grad_dtype (by default the leaf's dtype; None keeps any)
    ScalarType target = m.dtype;
    const bool leaf = node.next_edges[i].fn->is_accumulate_grad();
    if (leaf) {
      auto want = leaf_grad_dtype(static_cast<const AccumulateGrad&>(*node.next_edges[i].fn).variable);
      if (!want) {  // any dtype kept, but a real leaf still takes the real part of a complex gradient
        if (is_complex(g.dtype()) && !is_complex(m.dtype)) g = ember::view_as_real(g).select(-1, 0);
        continue;
      }
      target = *want;
    }
    // a real input's gradient is the real part of a complex one (x * c with c complex)
    if (g.dtype() != target && (leaf || is_floating(target) || is_complex(target))) g = g.to(target);
  }
}

}  // namespace

namespace {
// Callbacks queued (queue_callback) during the innermost backward run of this thread.
thread_local std::vector<std::function<void()>>* t_final_callbacks = nullptr;

// ---- device threads. As PyTorch's engine: a backward run whose roots live on a device other than the
// CPU runs on that device's own worker thread while the calling thread waits (the Python layer has
// released the GIL; hooks take it back there). A run started on a worker (a hook calling backward) runs
// inline. CPU graphs run on the calling thread, as before. Workers are made on first use and live
// until exit.
thread_local bool t_on_device_thread = false;
thread_local bool t_multithreading = true;
std::atomic<void (*)()> g_thread_init{nullptr};

class DeviceWorker {
 public:
  DeviceWorker() { std::thread([this] { loop(); }).detach(); }

  // Runs `task` on the worker; rethrows what it threw.
  void run(const std::function<void()>& task) {
    Job job{&task};
    std::unique_lock<std::mutex> lock(mu_);
    queue_.push_back(&job);
    work_cv_.notify_one();
    done_cv_.wait(lock, [&] { return job.done; });
    if (job.error) std::rethrow_exception(job.error);
  }

 private:
  struct Job {
    const std::function<void()>* task;
    bool done = false;
    std::exception_ptr error;
  };
  void loop() {
    t_on_device_thread = true;
    if (auto init = g_thread_init.load()) init();
    for (;;) {
      Job* job;
      {
        std::unique_lock<std::mutex> lock(mu_);
        work_cv_.wait(lock, [&] { return !queue_.empty(); });
        job = queue_.front();
        queue_.pop_front();
      }
      try {
        (*job->task)();
      } catch (...) {
        job->error = std::current_exception();
      }
      std::lock_guard<std::mutex> lock(mu_);
      job->done = true;
      done_cv_.notify_all();
    }
  }
  std::mutex mu_;
  std::condition_variable work_cv_, done_cv_;
  std::deque<Job*> queue_;
};

DeviceWorker& device_worker(Device d) {
  static std::mutex mu;
  static auto* workers = new std::map<std::pair<int, int>, DeviceWorker*>();  // never destroyed (detached threads)
  static pid_t owner = ::getpid();
  std::lock_guard<std::mutex> lock(mu);
  if (::getpid() != owner) {  // a forked child: the parent's workers' threads are not here (leaked, not joined)
    workers = new std::map<std::pair<int, int>, DeviceWorker*>();
    owner = ::getpid();
  }
  DeviceWorker*& w = (*workers)[{int(d.type), int(d.index)}];
  if (!w) w = new DeviceWorker();
  return *w;
}

// The device whose worker runs a backward from these roots: the first root not on the CPU.
std::optional<Device> worker_device(const variable_list& roots) {
  for (const Tensor& r : roots)
    if (r.defined() && !r.device().is_cpu()) return r.device();
  return std::nullopt;
}
}  // namespace

void set_multithreading_enabled(bool enabled) { t_multithreading = enabled; }
bool multithreading_enabled() { return t_multithreading; }
void set_device_thread_init(void (*fn)()) { g_thread_init.store(fn); }

void queue_callback(std::function<void()> fn) {
  EMBER_CHECK(t_final_callbacks, "Final callbacks can only be installed during backward pass.");
  t_final_callbacks->push_back(std::move(fn));
}

variable_list run_backward(const variable_list& roots, const variable_list& grad_roots, const variable_list& inputs,
                           const BackwardOptions& opts) {
  // A graph records forward ops only: gradients computed inside a traced function would be baked in.
  // (checked on the calling thread: the tracer's state is the caller's)
  if (EMBER_UNLIKELY(jit::tracing())) jit::on_untraceable("the traced code runs backward() / autograd.grad");
  if (auto device = worker_device(roots); device && !t_on_device_thread && t_multithreading) {
    // the worker runs with the caller's current device and current streams (ember.cuda.stream(s) around
    // backward), as PyTorch's device threads do
    std::vector<Stream> streams;
    int current = -1;
    if (device->type == DeviceType::CUDA) {
      current = cuda::current_device();
      for (int i = 0; i < cuda::device_count(); i++) streams.push_back(cuda::current_stream(i));
    }
    variable_list result;
    device_worker(*device).run([&] {  // (grad mode: run_backward sets it from opts.create_graph)
      std::vector<std::unique_ptr<StreamGuard>> guards;
      for (const Stream& s : streams) guards.push_back(std::make_unique<StreamGuard>(s));
      if (current >= 0) cuda::set_device(current);
      result = run_backward(roots, grad_roots, inputs, opts);
    });
    return result;
  }
  std::vector<std::function<void()>> final_callbacks;
  struct Frame {  // nested runs (a hook calling backward) keep their own callbacks
    std::vector<std::function<void()>>* saved;
    explicit Frame(std::vector<std::function<void()>>* mine) : saved(t_final_callbacks) { t_final_callbacks = mine; }
    ~Frame() { t_final_callbacks = saved; }
  } frame(&final_callbacks);
  AutoGradMode mode(opts.create_graph);
  // ---- roots
  std::vector<Edge> root_edges;
  for (size_t i = 0; i < roots.size(); i++) {
    Edge e = gradient_edge(roots[i]);
    EMBER_CHECK(e.valid(), "element ", i, " of tensors does not require grad and does not have a grad_fn");
    root_edges.push_back(e);
  }
  // ---- dependencies
  std::unordered_map<Node*, int> deps;
  std::unordered_set<Node*> seen;
  std::vector<Node*> stack;
  std::vector<Node*> order;  // discovery order, for the `needed` pass
  for (auto& e : root_edges)
    if (seen.insert(e.fn.get()).second) stack.push_back(e.fn.get());
  while (!stack.empty()) {
    Node* n = stack.back();
    stack.pop_back();
    order.push_back(n);
    for (auto& e : n->next_edges) {
      if (!e.valid()) continue;
      deps[e.fn.get()]++;
      if (seen.insert(e.fn.get()).second) stack.push_back(e.fn.get());
    }
  }
  // ---- capture targets: (node, slot) -> input index
  const bool filter = !inputs.empty();
  std::unordered_map<Node*, std::vector<std::pair<uint32_t, size_t>>> captures;
  std::vector<NodePtr> input_nodes(inputs.size());
  for (size_t i = 0; i < inputs.size(); i++) {
    const Tensor& in = inputs[i];
    EMBER_CHECK(requires_grad(in), "One of the differentiated Tensors does not require grad");
    Edge e = gradient_edge(in);
    input_nodes[i] = e.fn;
    captures[e.fn.get()].push_back({e.input_nr, i});
  }
  std::unordered_set<Node*> needed;
  if (filter) {
    // a node is needed if a capture node is reachable from it; children are discovered after
    // their first parent, so a reverse sweep over `order` with repeated passes converges fast
    for (auto& kv : captures) needed.insert(kv.first);
    bool changed = true;
    while (changed) {
      changed = false;
      for (auto it = order.rbegin(); it != order.rend(); ++it) {
        Node* n = *it;
        if (needed.count(n)) continue;
        for (auto& e : n->next_edges)
          if (e.valid() && needed.count(e.fn.get())) { needed.insert(n); changed = true; break; }
      }
    }
  }
  // ---- run
  std::unordered_map<Node*, variable_list> buffers;
  std::priority_queue<NodePtr, std::vector<NodePtr>, NodeOrder> ready;
  std::unordered_set<Node*> queued;
  for (size_t i = 0; i < root_edges.size(); i++) {
    Node* fn = root_edges[i].fn.get();
    auto& buf = buffers[fn];
    if (buf.size() < std::max<size_t>(fn->num_outputs(), 1)) buf.resize(std::max<size_t>(fn->num_outputs(), 1));
    buf[root_edges[i].input_nr] = accumulate(buf[root_edges[i].input_nr], grad_roots[i]);
  }
  for (auto& e : root_edges)
    if (deps[e.fn.get()] == 0 && queued.insert(e.fn.get()).second) ready.push(e.fn);

  variable_list captured(inputs.size());
  while (!ready.empty()) {
    NodePtr node = ready.top();
    ready.pop();
    profiler::RecordScope evaluate_scope;
    if (EMBER_UNLIKELY(profiler::enabled()))
      evaluate_scope.begin("autograd::engine::evaluate_function: " + node->name(), profiler::EventKind::Backward,
                           profiled_seq_nr(*node));
    variable_list grads = std::move(buffers[node.get()]);
    buffers.erase(node.get());
    if (grads.size() < node->num_outputs()) grads.resize(node->num_outputs());
    if (grads.empty()) grads.resize(1);
    for (auto& [nr, hook] : node->extras_or_empty().tensor_pre_hooks) {
      if (nr < grads.size() && grads[nr].defined()) {
        Tensor r = (*hook)(grads[nr]);
        if (r.defined()) grads[nr] = r;
      }
    }
    if (node->is_accumulate_grad()) static_cast<AccumulateGrad&>(*node).run_leaf_hooks(grads);
    // retain_grad() runs after every hook of the tensor, so .grad sees what the hooks returned
    for (auto& [nr, slot] : node->extras_or_empty().retained_grads) {
      if (nr < grads.size() && grads[nr].defined())
        *slot = slot->defined() ? accumulate(*slot, grads[nr]) : (grad_enabled() ? grads[nr] : grads[nr].clone());
    }
    for (auto& h : node->extras_or_empty().pre_hooks) {
      variable_list r = h(grads);
      if (!r.empty()) grads = std::move(r);
    }
    auto cap = captures.find(node.get());
    if (cap != captures.end()) {
      for (auto& [slot, idx] : cap->second)
        if (slot < grads.size()) captured[idx] = accumulate(captured[idx], grads[slot]);
    }
    if (filter && !needed.count(node.get())) continue;
    if (node->is_accumulate_grad() && (!opts.accumulate_grad || (filter && !captures.count(node.get())))) continue;
    // backward(inputs=[non_leaf]): its .grad receives the captured gradient; nothing runs past it
    if (filter && opts.accumulate_grad && !node->is_accumulate_grad() && cap != captures.end()) {
      bool more = false;
      for (auto& e : node->next_edges)
        if (e.valid() && needed.count(e.fn.get())) more = true;
      if (!more) continue;
    }
    // A sparse gradient (embedding(sparse=True) of a computed weight) reaches only AccumulateGrad
    // as it is: the formulas of other nodes are written for dense tensors.
    if (!node->is_accumulate_grad())
      for (auto& g : grads)
        if (EMBER_UNLIKELY(g.is_sparse())) g = ember::_to_dense(g);
    variable_list outs;
    if (anomaly_enabled()) {
      try {
        outs = apply_node(*node, std::move(grads));
        if (anomaly_check_nan()) check_nan(*node, outs);
      } catch (...) {
        // PyTorch warns with the forward stack of the failing node, then raises
        if (anomaly_hooks().report) anomaly_hooks().report(node->name(), node->extras_or_empty().anomaly_trace);
        throw;
      }
    } else {
      outs = apply_node(*node, std::move(grads));
    }
    if (!opts.keep_graph) node->release_variables();
    if (node->is_accumulate_grad()) continue;
    validate_outputs(*node, outs);
    for (auto& h : node->extras_or_empty().post_hooks) {
      variable_list r = h(outs, {});
      if (!r.empty()) outs = std::move(r);
    }
    for (size_t i = 0; i < node->next_edges.size(); i++) {
      const Edge& e = node->next_edges[i];
      if (!e.valid()) continue;
      if (filter && !needed.count(e.fn.get())) continue;
      auto& buf = buffers[e.fn.get()];
      size_t n = std::max<size_t>(e.fn->num_outputs(), e.input_nr + 1);
      if (buf.size() < n) buf.resize(n);
      if (i < outs.size() && outs[i].defined()) buf[e.input_nr] = accumulate(buf[e.input_nr], outs[i]);
      if (--deps[e.fn.get()] == 0 && queued.insert(e.fn.get()).second) ready.push(e.fn);
    }
  }
  // a callback may queue further callbacks: index, not iterators
  for (size_t i = 0; i < final_callbacks.size(); i++) final_callbacks[i]();
  return captured;
}

namespace {
// "ember.Size([2, 3])", as PyTorch prints sizes in its messages
std::string size_string(IntArrayRef sizes) {
  std::ostringstream os;
  os << "ember.Size([";
  for (size_t i = 0; i < sizes.size(); i++) os << (i ? ", " : "") << sizes[i];
  os << "])";
  return os.str();
}

variable_list make_grad_roots(const variable_list& outputs, const variable_list& grads) {
  variable_list r(outputs.size());
  EMBER_CHECK(grads.empty() || grads.size() == outputs.size(), "grad_tensors should have the same length as tensors (",
              grads.size(), " vs ", outputs.size(), ")");
  for (size_t i = 0; i < outputs.size(); i++) {
    const Tensor& out = outputs[i];
    if (!grads.empty() && grads[i].defined()) {
      if (grads[i].sizes() != out.sizes()) {
        std::ostringstream os;
        os << "Mismatch in shape: grad_output[" << i << "] has a shape of " << size_string(grads[i].sizes())
           << " and output[" << i << "] has a shape of " << size_string(out.sizes()) << ".";
        EMBER_FAIL(Runtime, os.str());
      }
      r[i] = grads[i];
    } else {
      EMBER_CHECK(out.numel() == 1, "grad can be implicitly created only for scalar outputs");
      EMBER_CHECK(is_floating(out.dtype()), "grad can be implicitly created only for real scalar outputs but got ",
                  out.dtype());
      r[i] = ember::ones_like(out);
    }
  }
  return r;
}
}  // namespace

void backward(const variable_list& tensors, const variable_list& grad_tensors, std::optional<bool> retain_graph,
              bool create_graph, const variable_list& inputs) {
  BackwardOptions o;
  o.keep_graph = retain_graph.value_or(create_graph);
  o.create_graph = create_graph;
  o.accumulate_grad = true;
  variable_list roots = make_grad_roots(tensors, grad_tensors);
  variable_list captured = run_backward(tensors, roots, inputs, o);
  // non-leaf inputs of backward(inputs=...) accumulate what reached them
  for (size_t i = 0; i < inputs.size(); i++) {
    if (is_leaf(inputs[i]) || !captured[i].defined()) continue;
    auto& m = materialize_meta(inputs[i]);
    m.grad = m.grad.defined() ? accumulate(m.grad, captured[i]) : (create_graph ? captured[i] : captured[i].clone());
  }
}

variable_list grad(const variable_list& outputs, const variable_list& inputs, const variable_list& grad_outputs,
                   std::optional<bool> retain_graph, bool create_graph, bool allow_unused) {
  EMBER_CHECK(!inputs.empty(), "grad requires non-empty inputs.");
  BackwardOptions o;
  o.keep_graph = retain_graph.value_or(create_graph);
  o.create_graph = create_graph;
  o.accumulate_grad = false;
  variable_list roots = make_grad_roots(outputs, grad_outputs);
  variable_list r = run_backward(outputs, roots, inputs, o);
  for (size_t i = 0; i < r.size(); i++) {
    EMBER_CHECK(r[i].defined() || allow_unused, "The differentiated Tensor at index ", i, " appears to not have been "
                "used in the graph. Set allow_unused=True if this is the desired behavior.");
    if (r[i].defined() && !create_graph && requires_grad(r[i])) r[i] = make_view(r[i], r[i].sizes(), r[i].strides(), r[i].storage_offset());
  }
  return r;
}

}  // namespace ember::autograd
