#include "ember/distributed/reducer.h"

#include <algorithm>
#include <chrono>
#include <mutex>
#include <unordered_map>
#include <unordered_set>

#include "ember/autograd/engine.h"
#include "ember/autograd/grad_mode.h"
#include "ember/autograd/node.h"
#include "ember/distributed/errors.h"
#include "ember/generated/ops.h"
#include "ember/sparse/sparse_tensor.h"

namespace ember::distributed {

namespace {
using Clock = std::chrono::steady_clock;
int64_t ns_since(Clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t).count();
}
// A bucket's average, started: divided before summing, as torch's reducer does (the same rounding);
// every rank launches the same buckets in the same order, so the agreement check is skipped.
WorkPtr start_average(ProcessGroup& pg, const Tensor& t, int64_t divisor = 0) {
  t.div_(scalar_to_tensor(Scalar(double(divisor > 0 ? divisor : pg.size()))));
  return pg.allreduce(t, ReduceOp::SUM, /*verify=*/false);
}
}  // namespace

struct Reducer::State {
  struct Bucket {
    std::vector<int64_t> params;   // indices into State::params
    std::vector<int64_t> offsets;  // element offset of each in `flat`
    Tensor flat;                   // the gradients of the bucket, back to back
    int64_t pending = 0;           // gradients not yet copied in this iteration
    WorkPtr work;
    std::function<Tensor()> hook_result;  // with a comm hook: waits for it, gives the reduced buffer
  };

  std::vector<Tensor> params;
  ProcessGroupPtr pg;
  ReducerOptions opts;
  std::vector<Bucket> buckets;
  std::unordered_map<const TensorImpl*, int64_t> index_of;  // a parameter's impl -> its index (graph search)
  std::vector<int64_t> bucket_of;  // param -> bucket
  std::vector<int64_t> slot_of;    // param -> position in its bucket
  std::vector<std::shared_ptr<std::function<void(const Tensor&)>>> hooks;
  CommHook comm_hook;

  std::mutex mu;
  bool armed = false;           // prepare_for_backward ran; the next backward reduces
  bool callback_queued = false;
  bool incomplete = false;      // the last armed backward missed gradients
  std::vector<int64_t> missing;
  size_t next_launch = 0;
  std::vector<int32_t> used;  // per param: its gradient arrived this iteration
  Tensor used_map;            // all-reduced `used` (find_unused_parameters)
  WorkPtr used_work;
  ReducerStats stats;
  int64_t divisor = 0;        // what the next backward's buckets are divided by (0: the group's size)

  void build_buckets() {
    // reverse registration order, one dtype per bucket
    std::unordered_map<int, int64_t> open;  // dtype -> bucket index being filled
    std::unordered_map<int, int64_t> bytes;
    for (int64_t i = int64_t(params.size()) - 1; i >= 0; i--) {
      const Tensor& p = params[size_t(i)];
      if (!autograd::requires_grad(p)) continue;
      int dt = int(p.dtype());
      auto it = open.find(dt);
      if (it == open.end()) {
        open[dt] = int64_t(buckets.size());
        bytes[dt] = 0;
        buckets.emplace_back();
        it = open.find(dt);
      }
      Bucket& b = buckets[size_t(it->second)];
      b.params.push_back(i);
      bytes[dt] += p.nbytes();
      int64_t cap = it->second == 0 ? opts.first_bucket_bytes : opts.bucket_cap_bytes;
      if (bytes[dt] >= cap) open.erase(dt);
    }
    for (size_t i = 0; i < params.size(); i++) index_of[params[i].impl()] = int64_t(i);
    bucket_of.assign(params.size(), -1);
    slot_of.assign(params.size(), -1);
    for (size_t bi = 0; bi < buckets.size(); bi++) {
      Bucket& b = buckets[bi];
      int64_t n = 0;
      for (size_t j = 0; j < b.params.size(); j++) {
        bucket_of[size_t(b.params[j])] = int64_t(bi);
        slot_of[size_t(b.params[j])] = int64_t(j);
        b.offsets.push_back(n);
        n += params[size_t(b.params[j])].numel();
      }
      const Tensor& first = params[size_t(b.params[0])];
      b.flat = ember::zeros({n}, TensorOptions(first.dtype()).device(first.device()));  // beside its gradients
    }
  }

  Tensor slot(int64_t param) {
    Bucket& b = buckets[size_t(bucket_of[size_t(param)])];
    const Tensor& p = params[size_t(param)];
    return b.flat.narrow(0, b.offsets[size_t(slot_of[size_t(param)])], p.numel());
  }

  // A parameter's gradient is final: copy it into its bucket; launch every bucket that is
  // complete, in bucket order (every rank must issue the all-reduces in the same order).
  void mark_ready(int64_t param, bool has_grad) {
    autograd::NoGradGuard ng;
    Tensor s = slot(param);
    const Tensor& g = has_grad ? autograd::meta(params[size_t(param)])->grad : Tensor();
    if (g.defined()) {
      // a sparse gradient (embedding(sparse=True)) travels dense in its bucket, and is sparse again
      // after the reduction (finalize)
      s.copy_(g.is_sparse() ? ember::_to_dense(g).reshape({-1}) : g.reshape({-1}));
      used[size_t(param)] = 1;
    } else {
      s.zero_();
    }
    Bucket& b = buckets[size_t(bucket_of[size_t(param)])];
    if (--b.pending > 0) return;
    while (next_launch < buckets.size() && buckets[next_launch].pending == 0) {
      int64_t index = int64_t(next_launch);
      Bucket& ready = buckets[next_launch++];
      if (comm_hook) {
        GradBucket gb = grad_bucket(size_t(index), ready.flat);
        ready.hook_result = comm_hook(gb);
        if (!ready.hook_result) throw DistError("DistributedDataParallel: the communication hook returned no result");
        continue;
      }
      ready.work = start_average(*pg, ready.flat, divisor);
    }
    if (next_launch == buckets.size() && opts.find_unused_parameters) {
      used_map = ember::empty({int64_t(used.size())}, TensorOptions(kInt));
      std::copy(used.begin(), used.end(), used_map.data_ptr<int32_t>());
      used_map = used_map.to(params[0].device());  // where the group's collectives run (NCCL: the GPU)
      used_work = pg->allreduce(used_map, ReduceOp::MAX);
    }
  }

  // What a comm hook gets for bucket bi, with `buffer` holding its gradients.
  GradBucket grad_bucket(size_t bi, const Tensor& buffer) const {
    GradBucket gb;
    gb.index = int64_t(bi);
    gb.is_last = bi + 1 == buckets.size();
    gb.buffer = buffer;
    gb.offsets = buckets[bi].offsets;
    for (int64_t p : buckets[bi].params) gb.parameters.push_back(params[size_t(p)]);
    return gb;
  }

  void on_grad(int64_t param) {
    std::lock_guard<std::mutex> g(mu);
    if (!armed) return;  // no_sync(), or a backward the last forward did not arm
    if (!waiting[size_t(param)])
      throw DistError("DistributedDataParallel: the gradient of parameter " + std::to_string(param) +
                      " arrived twice in one iteration (backward run twice after one forward, or the parameter "
                      "marked unused by find_unused_parameters received a gradient)");
    waiting[size_t(param)] = 0;
    if (!callback_queued) {
      callback_queued = true;
      std::weak_ptr<State> weak = self;
      autograd::queue_callback([weak] {
        if (auto s = weak.lock()) s->finalize();
      });
    }
    mark_ready(param, true);
  }

  void finalize() {
    std::lock_guard<std::mutex> g(mu);
    autograd::NoGradGuard ng;
    armed = false;
    callback_queued = false;
    missing.clear();
    for (size_t i = 0; i < waiting.size(); i++)
      if (waiting[i]) missing.push_back(int64_t(i));
    incomplete = !missing.empty();
    auto t0 = Clock::now();
    std::exception_ptr err;
    try {
      for (size_t bi = 0; bi < buckets.size(); bi++) {
        Bucket& b = buckets[bi];
        if (b.work) b.work->wait();
        if (!b.hook_result) continue;
        auto wait_hook = std::move(b.hook_result);
        b.hook_result = nullptr;
        Tensor r = wait_hook();
        if (!r.defined() || r.numel() != b.flat.numel())
          throw DistError("DistributedDataParallel: the communication hook of bucket " + std::to_string(bi) +
                          " gave a tensor of " + (r.defined() ? std::to_string(r.numel()) : std::string("no")) +
                          " elements; the bucket holds " + std::to_string(b.flat.numel()));
        if (!r.is_same(b.flat)) b.flat.copy_(r.reshape({-1}));
      }
      if (used_work) {
        used_work->wait();
        used_map = used_map.to(Device());  // read on the host below
      }
    } catch (...) {
      err = std::current_exception();
    }
    stats.exposed_ns += ns_since(t0);
    stats.iterations++;
    if (err) {
      for (auto& b : buckets) {
        b.work.reset();
        b.hook_result = nullptr;
      }
      used_work.reset();
      next_launch = 0;
      std::rethrow_exception(err);
    }
    const size_t launched = next_launch;  // buckets launch in order: the first `launched` ones ran
    next_launch = 0;
    for (size_t bi = 0; bi < launched; bi++) {
      Bucket& b = buckets[bi];
      stats.buckets_reduced++;
      if (b.work) stats.comm_ns += b.work->run_ns;
      b.work.reset();
      if (incomplete) continue;  // the next forward raises; gradients stay local
      write_grads(b, b.flat);
    }
    used_work.reset();
  }

  // The reduced values of bucket b (`reduced`: its flat layout) into its parameters' .grad.
  void write_grads(const Bucket& b, const Tensor& reduced) {
    for (size_t j = 0; j < b.params.size(); j++) {
      int64_t p = b.params[j];
      if (opts.find_unused_parameters && used_map.data_ptr<int32_t>()[p] == 0) continue;  // unused everywhere
      const Tensor& param = params[size_t(p)];
      auto& m = autograd::materialize_meta(param);
      Tensor s = reduced.narrow(0, b.offsets[j], param.numel()).view(param.sizes());
      if (m.grad.defined() && m.grad.is_sparse()) m.grad = ember::_to_sparse_coo(s, sparse::impl_of(m.grad).sparse_dim());
      else if (m.grad.defined()) m.grad.copy_(s);
      else m.grad = s.clone();
    }
  }

  // A rank whose inputs ran out, inside Join: the collectives of one backward of the others, with
  // zeros for its own share (buckets in order, through the comm hook if there is one, then the
  // used-parameter map); the results (the others' average) become its gradients.
  void join_shadow() {
    std::lock_guard<std::mutex> g(mu);
    autograd::NoGradGuard ng;
    std::vector<Tensor> reduced(buckets.size());
    std::vector<std::function<Tensor()>> pending(buckets.size());
    std::vector<WorkPtr> works(buckets.size());
    for (size_t bi = 0; bi < buckets.size(); bi++) {
      Bucket& b = buckets[bi];
      Tensor zeros = ember::zeros_like(b.flat);
      if (comm_hook) {
        GradBucket gb = grad_bucket(bi, zeros);
        pending[bi] = comm_hook(gb);
      } else {
        works[bi] = start_average(*pg, zeros, divisor);
        reduced[bi] = zeros;
      }
    }
    if (opts.find_unused_parameters) {
      used_map = ember::zeros({int64_t(params.size())}, TensorOptions(kInt)).to(params[0].device());
      pg->allreduce(used_map, ReduceOp::MAX)->wait();
      used_map = used_map.to(Device());
    }
    for (size_t bi = 0; bi < buckets.size(); bi++) {
      if (works[bi]) works[bi]->wait();
      if (pending[bi]) reduced[bi] = pending[bi]().reshape({-1}).to(buckets[bi].flat.dtype());
      write_grads(buckets[bi], reduced[bi]);
    }
  }

  std::vector<char> waiting;  // per param: armed and its gradient not arrived yet
  std::weak_ptr<State> self;
};

Reducer::Reducer(std::vector<Tensor> params, ProcessGroupPtr pg, const ReducerOptions& opts)
    : s_(std::make_shared<State>()) {
  s_->self = s_;
  s_->params = std::move(params);
  s_->pg = std::move(pg);
  s_->opts = opts;
  s_->build_buckets();
  std::weak_ptr<State> weak = s_;
  for (size_t i = 0; i < s_->params.size(); i++) {
    if (s_->bucket_of[i] < 0) continue;
    auto hook = std::make_shared<std::function<void(const Tensor&)>>([weak, i](const Tensor&) {
      if (auto s = weak.lock()) s->on_grad(int64_t(i));
    });
    autograd::materialize_meta(s_->params[i]).post_accumulate_hooks.push_back(hook);
    s_->hooks.push_back(hook);
  }
}

Reducer::~Reducer() {
  for (auto& p : s_->params) {
    auto* m = autograd::meta(p);
    if (!m) continue;
    auto& hs = m->post_accumulate_hooks;
    hs.erase(std::remove_if(hs.begin(), hs.end(),
                            [&](const auto& h) { return std::find(s_->hooks.begin(), s_->hooks.end(), h) != s_->hooks.end(); }),
             hs.end());
  }
}

void Reducer::prepare_for_backward(const std::vector<Tensor>& outputs) {
  State& s = *s_;
  std::lock_guard<std::mutex> g(s.mu);
  if (s.incomplete) {
    std::string idx;
    for (size_t i = 0; i < s.missing.size() && i < 20; i++) idx += (i ? ", " : "") + std::to_string(s.missing[i]);
    throw DistError(
        "Expected to have finished reduction in the prior iteration before starting a new one. This error indicates "
        "that your module has parameters that were not used in producing loss. You can enable unused parameter "
        "detection by passing the keyword argument `find_unused_parameters=True` to "
        "`ember.nn.parallel.DistributedDataParallel`, and by making sure all `forward` function outputs participate "
        "in calculating loss. Parameter indices which did not receive grad for rank " +
        std::to_string(s.pg->rank()) + ": " + idx);
  }
  // a forward whose backward never ran (evaluation with grad on): its reduces, if any, are dropped
  for (auto& b : s.buckets) {
    if (b.work) b.work->wait();
    if (b.hook_result) b.hook_result();
    b.hook_result = nullptr;
  }
  if (s.used_work) s.used_work->wait();
  s.used_work.reset();
  // one rank: its gradients are the average already (a comm hook still runs, as in torch)
  s.armed = s.pg->size() > 1 || bool(s.comm_hook);
  s.callback_queued = false;
  s.next_launch = 0;
  s.used.assign(s.params.size(), 0);
  s.waiting.assign(s.params.size(), 0);
  for (auto& b : s.buckets) {
    b.pending = int64_t(b.params.size());
    b.work.reset();
    for (int64_t p : b.params) s.waiting[size_t(p)] = 1;
  }
  if (!s.opts.find_unused_parameters) return;
  // parameters the graph behind the outputs does not reach get no gradient: ready now
  std::unordered_set<autograd::Node*> seen;
  std::vector<autograd::Node*> stack;
  std::vector<bool> reached(s.params.size(), false);
  for (auto& o : outputs) {
    if (!o.defined()) continue;
    autograd::Edge e = autograd::gradient_edge(o);
    if (e.valid() && seen.insert(e.fn.get()).second) stack.push_back(e.fn.get());
  }
  while (!stack.empty()) {
    autograd::Node* n = stack.back();
    stack.pop_back();
    if (n->is_accumulate_grad()) {
      auto it = s.index_of.find(static_cast<autograd::AccumulateGrad*>(n)->variable.impl());
      if (it != s.index_of.end()) reached[size_t(it->second)] = true;
    }
    for (auto& e : n->next_edges)
      if (e.valid() && seen.insert(e.fn.get()).second) stack.push_back(e.fn.get());
  }
  for (size_t i = 0; i < s.params.size(); i++) {
    if (reached[i] || s.bucket_of[i] < 0) continue;
    s.waiting[i] = 0;
    s.mark_ready(int64_t(i), false);
  }
}

void Reducer::set_divisor(int64_t divisor) {
  std::lock_guard<std::mutex> g(s_->mu);
  if (divisor < 0) throw DistError("Reducer.set_divisor: expected a positive count of ranks (or 0), got " +
                                   std::to_string(divisor));
  s_->divisor = divisor;
}

void Reducer::join_shadow() { s_->join_shadow(); }

void Reducer::register_comm_hook(CommHook hook) {
  std::lock_guard<std::mutex> g(s_->mu);
  if (!hook) throw DistError("register_comm_hook: the hook is empty");
  if (s_->comm_hook)
    throw DistError("register_comm_hook or register_builtin_comm_hook can only be called once.");
  s_->comm_hook = std::move(hook);
}

void Reducer::register_builtin_comm_hook(BuiltinHook kind) {
  ProcessGroupPtr pg = s_->pg;
  register_comm_hook([kind, pg](GradBucket& bucket) -> std::function<Tensor()> {
    autograd::NoGradGuard ng;
    Tensor buffer = bucket.buffer;
    // as default_hooks: cast (fp16), divide by the world size, sum; the result back in the bucket's dtype
    Tensor t = kind == BuiltinHook::Fp16Compress ? buffer.to(kHalf) : buffer;
    WorkPtr work = start_average(*pg, t);
    return [work, t, buffer, kind]() -> Tensor {
      work->wait();
      if (kind == BuiltinHook::AllReduce) return t;
      autograd::NoGradGuard ng;
      buffer.copy_(t);
      return buffer;
    };
  });
}

std::vector<Tensor> GradBucket::gradients() const {
  std::vector<Tensor> out;
  for (size_t i = 0; i < parameters.size(); i++)
    out.push_back(buffer.narrow(0, offsets[i], parameters[i].numel()).view(parameters[i].sizes()));
  return out;
}

std::vector<std::vector<int64_t>> Reducer::bucket_indices() const {
  std::vector<std::vector<int64_t>> r;
  for (auto& b : s_->buckets) r.push_back(b.params);
  return r;
}

ReducerStats Reducer::stats() const {
  std::lock_guard<std::mutex> g(s_->mu);
  return s_->stats;
}

}  // namespace ember::distributed
