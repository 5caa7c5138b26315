// The Gloo backend: Ember's glue (a worker thread per group, staging of non-contiguous tensors,
// the agreement check, reduction functions per dtype); Gloo's algorithms move the bytes.
#include "ember/distributed/process_group.h"

#ifdef EMBER_HAVE_GLOO

#include <gloo/allgather.h>
#include <gloo/allreduce.h>
#include <gloo/alltoall.h>
#include <gloo/alltoallv.h>
#include <gloo/barrier.h>
#include <gloo/broadcast.h>
#include <gloo/gather.h>
#include <gloo/reduce.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/store.h>
#include <gloo/scatter.h>
#include <gloo/transport/tcp/device.h>
#include <unistd.h>

#include <cstring>
#include <deque>
#include <sstream>
#include <thread>

#include "ember/autograd/grad_mode.h"
#include "ember/core/blocking.h"
#include "ember/distributed/errors.h"
#include "ember/generated/ops.h"
#include "ember/kernels/kernels.h"
#include "ember/ops/conj.h"

namespace ember::distributed {

namespace {

// ---------------------------------------------------------------- reductions
template <class T, class F> void combine_reduced(void* out, const void* a, const void* b, size_t n, F f);
template <class T, class F> void combine(void* out, const void* a, const void* b, size_t n, F f) {
  if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
    combine_reduced<T>(out, a, b, n, f);
  } else {
    auto* o = static_cast<T*>(out);
    auto* x = static_cast<const T*>(a);
    auto* y = static_cast<const T*>(b);
    for (size_t i = 0; i < n; i++) o[i] = T(f(x[i], y[i]));
  }
}

using ReduceFn = std::function<void(void*, const void*, const void*, size_t)>;

// Half/BFloat16 operands widened and the result narrowed in blocks by the CPU's vector conversions
// (one scalar conversion per value and operand made fp16 gradient compression slower than float32)
template <class T, class F> void combine_reduced(void* out, const void* a, const void* b, size_t n, F f) {
  constexpr ScalarType dt = std::is_same_v<T, Half> ? kHalf : kBFloat16;
  static const auto convert = reduced_float_convert_kernel_stub(Device(DeviceType::CPU), "all_reduce");
  constexpr size_t kBlock = 1024;
  float x[kBlock], y[kBlock];
  for (size_t i = 0; i < n; i += kBlock) {
    const int64_t m = int64_t(std::min(kBlock, n - i));
    convert(dt, true, static_cast<const T*>(a) + i, x, m);
    convert(dt, true, static_cast<const T*>(b) + i, y, m);
    for (int64_t j = 0; j < m; j++) x[j] = f(x[j], y[j]);
    convert(dt, false, x, static_cast<T*>(out) + i, m);
  }
}

template <class T> ReduceFn reduce_fn_for(ReduceOp op) {
  // Half/BFloat16 combine in float and round once per step, as torch's Gloo backend does
  using A = std::conditional_t<std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>, float, T>;
  if constexpr (std::is_same_v<T, bool>) {
    switch (op) {
      case ReduceOp::SUM: case ReduceOp::MAX: case ReduceOp::BOR:
        return [](void* o, const void* a, const void* b, size_t n) { combine<bool>(o, a, b, n, [](bool x, bool y) { return x || y; }); };
      case ReduceOp::PRODUCT: case ReduceOp::MIN: case ReduceOp::BAND:
        return [](void* o, const void* a, const void* b, size_t n) { combine<bool>(o, a, b, n, [](bool x, bool y) { return x && y; }); };
      case ReduceOp::BXOR:
        return [](void* o, const void* a, const void* b, size_t n) { combine<bool>(o, a, b, n, [](bool x, bool y) { return x != y; }); };
      case ReduceOp::AVG: break;
    }
  } else {
    switch (op) {
      case ReduceOp::SUM: case ReduceOp::AVG:
        return [](void* o, const void* a, const void* b, size_t n) { combine<T>(o, a, b, n, [](A x, A y) { return x + y; }); };
      case ReduceOp::PRODUCT:
        return [](void* o, const void* a, const void* b, size_t n) { combine<T>(o, a, b, n, [](A x, A y) { return x * y; }); };
      // NaN wins, as in torch.minimum / maximum
      case ReduceOp::MIN:
        return [](void* o, const void* a, const void* b, size_t n) {
          combine<T>(o, a, b, n, [](A x, A y) { return (x != x || x < y) ? x : y; });
        };
      case ReduceOp::MAX:
        return [](void* o, const void* a, const void* b, size_t n) {
          combine<T>(o, a, b, n, [](A x, A y) { return (x != x || x > y) ? x : y; });
        };
      case ReduceOp::BAND: case ReduceOp::BOR: case ReduceOp::BXOR:
        if constexpr (std::is_integral_v<T>) {
          if (op == ReduceOp::BAND) return [](void* o, const void* a, const void* b, size_t n) { combine<T>(o, a, b, n, [](T x, T y) { return x & y; }); };
          if (op == ReduceOp::BOR) return [](void* o, const void* a, const void* b, size_t n) { combine<T>(o, a, b, n, [](T x, T y) { return x | y; }); };
          return [](void* o, const void* a, const void* b, size_t n) { combine<T>(o, a, b, n, [](T x, T y) { return x ^ y; }); };
        }
        break;
    }
  }
  return nullptr;
}

ReduceFn reduce_fn(ScalarType dtype, ReduceOp op) {
  switch (dtype) {
#define EMBER_CASE(T, N, P, S) \
  case ScalarType::N:          \
    return reduce_fn_for<T>(op);
    EMBER_FORALL_DTYPES(EMBER_CASE)
#undef EMBER_CASE
    case ScalarType::ComplexFloat: case ScalarType::ComplexDouble:  // not reduced here (yet): callers raise
    case ScalarType::Undefined: break;
  }
  return nullptr;
}

// Gloo's typed setters only use sizeof(T): one opaque element type per width.
template <size_t N> struct Bytes { char b[N]; };

template <class F> void with_width(int64_t width, F&& f) {
  switch (width) {
    case 1: return f(Bytes<1>{});
    case 2: return f(Bytes<2>{});
    case 4: return f(Bytes<4>{});
    case 8: return f(Bytes<8>{});
    default: throw DistBackendError("unsupported element width " + std::to_string(width));
  }
}

// ---------------------------------------------------------------- the agreement check
// Before moving any bytes every rank shares what it is about to do; a mismatch (another
// collective, dtype, element count, root or op) raises on every rank instead of hanging or
// mixing bytes of different meaning.
struct Fingerprint {
  int32_t kind = 0;
  int32_t dtype = -1;
  int32_t root = -1;
  int32_t op = -1;
  int64_t numel = -1;  // -1: ranks may differ (all_to_all with splits)
  bool operator==(const Fingerprint& o) const {
    return kind == o.kind && dtype == o.dtype && root == o.root && op == o.op && numel == o.numel;
  }
};

const char* kind_name(int32_t k) {
  static const char* names[] = {"?", "all_reduce", "broadcast", "reduce", "all_gather", "all_gather_into_tensor",
                                "reduce_scatter_tensor", "gather", "scatter", "all_to_all_single", "barrier",
                                "all_reduce_coalesced"};
  return k >= 0 && k < int32_t(sizeof(names) / sizeof(names[0])) ? names[k] : "?";
}
enum Kind : int32_t { kAllreduce = 1, kBroadcast, kReduce, kAllgather, kAllgatherInto, kReduceScatter, kGather, kScatter,
                      kAlltoall, kBarrier, kAllreduceCoalesced };

std::string describe(const Fingerprint& f) {
  std::ostringstream os;
  os << kind_name(f.kind) << "(";
  if (f.dtype >= 0) os << "dtype=" << dtype_cname(ScalarType(f.dtype));
  if (f.numel >= 0) os << ", numel=" << f.numel;
  if (f.root >= 0) os << ", root=" << f.root;
  if (f.op >= 0) os << ", op=" << reduce_op_name(ReduceOp(f.op));
  os << ")";
  return os.str();
}

// ---------------------------------------------------------------- the store, as Gloo sees it
class GlooStore : public gloo::rendezvous::Store {
 public:
  explicit GlooStore(std::shared_ptr<distributed::Store> s) : s_(std::move(s)) {}
  void set(const std::string& key, const std::vector<char>& data) override { s_->set(key, std::string(data.begin(), data.end())); }
  std::vector<char> get(const std::string& key) override {
    std::string v = s_->get(key);
    return std::vector<char>(v.begin(), v.end());
  }
  void wait(const std::vector<std::string>& keys) override { s_->wait(keys); }
  void wait(const std::vector<std::string>& keys, const std::chrono::milliseconds& timeout) override {
    s_->wait(keys, timeout);
  }

 private:
  std::shared_ptr<distributed::Store> s_;
};

// The elements a collective reads, contiguous in memory (ops/conj.h: a conjugate or negative view's are
// materialized).
Tensor dense_values(const Tensor& t) { return resolve_bits(t).contiguous(); }

// A tensor as the collective sees it: contiguous values (a staging copy when the caller's is not, or
// is a conjugate view, whose storage holds the conjugates), copied back when the collective wrote it.
struct Staged {
  Tensor user, buf;
  explicit Staged(const Tensor& t) : user(t), buf(t.is_contiguous() && !t.has_math_bits() ? t : dense_values(t)) {}
  void write_back() const {
    if (!buf.is_same(user)) user.copy_(buf);
  }
};

// A point-to-point operation: posted at once, completed by wait().
class P2PWork : public Work {
 public:
  P2PWork(std::unique_ptr<gloo::transport::UnboundBuffer> ub, Staged staged, bool is_send, Milliseconds timeout,
          std::string what)
      : ub_(std::move(ub)), staged_(std::move(staged)), is_send_(is_send), timeout_(timeout), what_(std::move(what)) {}

  void wait(Milliseconds timeout) override {
    std::lock_guard<std::mutex> once(wait_mu_);
    if (!is_completed()) {
      std::exception_ptr err;
      try {
        int peer = -1;
        Milliseconds t = timeout.count() > 0 ? timeout : timeout_;
        bool ok = is_send_ ? ub_->waitSend(&peer, t) : ub_->waitRecv(&peer, t);
        if (!ok) throw DistBackendError(what_ + " was aborted");
        if (!is_send_) {
          autograd::NoGradGuard ng;
          staged_.write_back();
          source_rank = peer;
          outputs = {staged_.user};
        }
      } catch (const DistError&) {
        err = std::current_exception();
      } catch (const std::exception& e) {
        err = std::make_exception_ptr(DistBackendError(what_ + " failed: " + e.what()));
      }
      finish(err);
    }
    Work::wait(Milliseconds(0));
  }

 private:
  std::mutex wait_mu_;
  std::unique_ptr<gloo::transport::UnboundBuffer> ub_;
  Staged staged_;
  bool is_send_;
  Milliseconds timeout_;
  std::string what_;
};

// ---------------------------------------------------------------- the group
class ProcessGroupGloo : public ProcessGroup {
 public:
  ProcessGroupGloo(std::shared_ptr<Store> store, int rank, int size, const GlooOptions& opts)
      : ProcessGroup(rank, size), store_(store), timeout_(opts.timeout) {
    if (size < 1 || rank < 0 || rank >= size)
      throw DistError("ProcessGroupGloo: invalid rank " + std::to_string(rank) + " for a group of " +
                      std::to_string(size));
    device_ = make_device(opts);
    auto ctx = std::make_shared<gloo::rendezvous::Context>(rank, size);
    ctx->setTimeout(timeout_);
    GlooStore gs(store);
    try {
      ctx->connectFullMesh(gs, device_);
    } catch (const DistError&) {
      throw;
    } catch (const std::exception& e) {
      throw DistBackendError(std::string("ProcessGroupGloo: connecting the ranks failed: ") + e.what());
    }
    ctx_ = ctx;
    worker_ = std::thread([this] { loop(); });
  }

  ~ProcessGroupGloo() override {
    {
      std::lock_guard<std::mutex> g(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    blocking_region([this] { worker_.join(); });  // the worker may be finishing a Python callback
  }

  std::string backend_name() const override { return "gloo"; }

  WorkPtr allreduce(const Tensor& tensor, ReduceOp op, bool verify) override {
    host_only("all_reduce", {tensor});
    return allreduce_impl({tensor}, op, kAllreduce, verify);
  }

  WorkPtr allreduce_coalesced(const std::vector<Tensor>& tensors, ReduceOp op) override {
    host_only("all_reduce_coalesced", tensors);
    for (auto& t : tensors)
      if (t.dtype() != tensors.at(0).dtype())
        throw DistError("all_reduce_coalesced: tensors must all have the same dtype, got " +
                        std::string(dtype_cname(tensors[0].dtype())) + " and " + dtype_cname(t.dtype()));
    return allreduce_impl(tensors, op, kAllreduceCoalesced);
  }

  WorkPtr broadcast(const Tensor& tensor, int root) override {
    host_only("broadcast", {tensor});
    check_rank(root, "broadcast", "src");
    auto s = stage(tensor);
    return enqueue("broadcast", {kBroadcast, int32_t(tensor.dtype()), root, -1, tensor.numel()},
                   [=](uint32_t tag) {
                     if (s.buf.numel() == 0) return;
                     with_width(s.buf.element_size(), [&](auto w) {
                       using W = decltype(w);
                       gloo::BroadcastOptions o(ctx_);
                       o.setOutput(static_cast<W*>(s.buf.data_ptr()), size_t(s.buf.numel()));
                       o.setRoot(root);
                       o.setTag(tag);
                       o.setTimeout(timeout_);
                       gloo::broadcast(o);
                     });
                     s.write_back();
                   }, {tensor});
  }

  WorkPtr reduce(const Tensor& tensor, int root, ReduceOp op) override {
    host_only("reduce", {tensor});
    check_rank(root, "reduce", "dst");
    ReduceFn fn = checked_fn("reduce", tensor.dtype(), op);
    // non-root ranks reduce in a scratch copy: their tensor is left as it was
    Staged s = stage(tensor);
    if (rank_ != root && s.buf.is_same(tensor)) s.buf = tensor.clone();  // contiguous already: a private copy
    return enqueue("reduce", {kReduce, int32_t(tensor.dtype()), root, int32_t(op), tensor.numel()},
                   [=](uint32_t tag) {
                     if (s.buf.numel() == 0) return;
                     with_width(s.buf.element_size(), [&](auto w) {
                       using W = decltype(w);
                       gloo::ReduceOptions o(ctx_);
                       o.setOutput(static_cast<W*>(s.buf.data_ptr()), size_t(s.buf.numel()));
                       o.setRoot(root);
                       o.setReduceFunction(fn);
                       o.setTag(tag);
                       o.setTimeout(timeout_);
                       gloo::reduce(o);
                     });
                     if (rank_ == root) {
                       if (op == ReduceOp::AVG) divide(s.buf);
                       s.write_back();
                     }
                   }, {tensor});
  }

  WorkPtr allgather(const std::vector<Tensor>& outputs, const Tensor& input) override {
    host_only("all_gather", outputs, {input});
    check_list(outputs, input, "all_gather", "tensor_list");
    Tensor in = dense_values(input);
    Tensor flat = ember::empty({int64_t(size_) * input.numel()}, TensorOptions(input.dtype()));
    return enqueue("all_gather", {kAllgather, int32_t(input.dtype()), -1, -1, input.numel()},
                   [=](uint32_t tag) {
                     gather_flat(in, flat, tag);
                     scatter_rows(flat, outputs);
                   }, outputs);
  }

  WorkPtr allgather_into_tensor(const Tensor& output, const Tensor& input) override {
    host_only("all_gather_into_tensor", {output, input});
    check_same_dtype(output, input, "all_gather_into_tensor");
    if (output.numel() != int64_t(size_) * input.numel())
      throw DistError("all_gather_into_tensor: output tensor size must be equal to world_size times input tensor "
                      "size (output numel " + std::to_string(output.numel()) + ", input numel " +
                      std::to_string(input.numel()) + ", world_size " + std::to_string(size_) + ")");
    Tensor in = dense_values(input);
    auto s = stage(output);
    return enqueue("all_gather_into_tensor", {kAllgatherInto, int32_t(input.dtype()), -1, -1, input.numel()},
                   [=](uint32_t tag) {
                     gather_flat(in, s.buf, tag);
                     s.write_back();
                   }, {output});
  }

  WorkPtr reduce_scatter_tensor(const Tensor& output, const Tensor& input, ReduceOp op) override {
    host_only("reduce_scatter_tensor", {output, input});
    check_same_dtype(output, input, "reduce_scatter_tensor");
    ReduceFn fn = checked_fn("reduce_scatter_tensor", input.dtype(), op);
    if (input.numel() != int64_t(size_) * output.numel())
      throw DistError("reduce_scatter_tensor: input tensor size must be equal to world_size times output tensor "
                      "size (input numel " + std::to_string(input.numel()) + ", output numel " +
                      std::to_string(output.numel()) + ", world_size " + std::to_string(size_) + ")");
    // Gloo has no reduce-scatter over arbitrary types: all-reduce a copy, keep this rank's chunk
    Tensor work = input.flatten().clone();
    return enqueue("reduce_scatter_tensor", {kReduceScatter, int32_t(input.dtype()), -1, int32_t(op), input.numel()},
                   [=](uint32_t tag) {
                     run_allreduce(work, fn, tag);
                     Tensor mine = work.narrow(0, int64_t(rank_) * output.numel(), output.numel());
                     if (op == ReduceOp::AVG) divide(mine);
                     output.copy_(mine.view(output.sizes()));
                   }, {output});
  }

  WorkPtr gather(const std::vector<Tensor>& outputs, const Tensor& input, int root) override {
    host_only("gather", outputs, {input});
    check_rank(root, "gather", "dst");
    if (rank_ == root) check_list(outputs, input, "gather", "gather_list");
    else if (!outputs.empty())
      throw DistError("gather: Argument ``gather_list`` must NOT be specified on non-destination ranks.");
    Tensor in = dense_values(input);
    Tensor flat = rank_ == root ? ember::empty({int64_t(size_) * input.numel()}, TensorOptions(input.dtype())) : Tensor();
    return enqueue("gather", {kGather, int32_t(input.dtype()), root, -1, input.numel()},
                   [=](uint32_t tag) {
                     if (in.numel() == 0) return scatter_rows(flat, outputs);
                     with_width(in.element_size(), [&](auto w) {
                       using W = decltype(w);
                       gloo::GatherOptions o(ctx_);
                       o.setInput(static_cast<W*>(in.data_ptr()), size_t(in.numel()));
                       if (rank_ == root) o.setOutput(static_cast<W*>(flat.data_ptr()), size_t(flat.numel()));
                       o.setRoot(root);
                       o.setTag(tag);
                       o.setTimeout(timeout_);
                       gloo::gather(o);
                     });
                     if (rank_ == root) scatter_rows(flat, outputs);
                   }, outputs);
  }

  WorkPtr scatter(const Tensor& output, const std::vector<Tensor>& inputs, int root) override {
    host_only("scatter", inputs, {output});
    check_rank(root, "scatter", "src");
    std::vector<Tensor> ins;
    if (rank_ == root) {
      check_list(inputs, output, "scatter", "scatter_list");
      for (auto& t : inputs) ins.push_back(dense_values(t));
    } else if (!inputs.empty()) {
      throw DistError("scatter: Argument ``scatter_list`` must NOT be specified on non-source ranks.");
    }
    auto s = stage(output);
    return enqueue("scatter", {kScatter, int32_t(output.dtype()), root, -1, output.numel()},
                   [=](uint32_t tag) {
                     if (s.buf.numel() == 0) return;
                     with_width(s.buf.element_size(), [&](auto w) {
                       using W = decltype(w);
                       gloo::ScatterOptions o(ctx_);
                       if (rank_ == root) {
                         std::vector<W*> ptrs;
                         for (auto& t : ins) ptrs.push_back(static_cast<W*>(t.data_ptr()));
                         o.setInputs(ptrs, size_t(s.buf.numel()));
                       }
                       o.setOutput(static_cast<W*>(s.buf.data_ptr()), size_t(s.buf.numel()));
                       o.setRoot(root);
                       o.setTag(tag);
                       o.setTimeout(timeout_);
                       gloo::scatter(o);
                     });
                     s.write_back();
                   }, {output});
  }

  WorkPtr alltoall_single(const Tensor& output, const Tensor& input, const AllToAllSplits& splits) override {
    host_only("all_to_all_single", {output, input});
    check_same_dtype(output, input, "all_to_all_single");
    bool even = splits.input.empty() && splits.output.empty();
    auto rows_of = [&](const Tensor& t, const std::vector<int64_t>& sp, const char* which) {
      std::vector<int64_t> counts;
      int64_t row = t.dim() == 0 ? 1 : (t.size(0) == 0 ? 0 : t.numel() / t.size(0));
      int64_t rows = t.dim() == 0 ? 1 : t.size(0);
      if (sp.empty()) {
        if (rows % size_ != 0)
          throw DistError(std::string("all_to_all_single: the ") + which + " tensor's first dimension (" +
                          std::to_string(rows) + ") is not divisible by the world size " + std::to_string(size_));
        counts.assign(size_t(size_), rows / size_ * row);
      } else {
        if (int64_t(sp.size()) != size_)
          throw DistError(std::string("all_to_all_single: ") + which + "_split_sizes has " + std::to_string(sp.size()) +
                          " entries for a group of " + std::to_string(size_));
        int64_t total = 0;
        for (int64_t v : sp) {
          if (v < 0) throw DistError(std::string("all_to_all_single: negative ") + which + " split size");
          total += v;
          counts.push_back(v * row);
        }
        if (total != rows)
          throw DistError(std::string("all_to_all_single: ") + which + "_split_sizes sum to " + std::to_string(total) +
                          " but the " + which + " tensor has " + std::to_string(rows) + " rows");
      }
      return counts;
    };
    std::vector<int64_t> in_counts = rows_of(input, splits.input, "input");
    std::vector<int64_t> out_counts = rows_of(output, splits.output, "output");
    Tensor in = dense_values(input);
    auto s = stage(output);
    return enqueue("all_to_all_single", {kAlltoall, int32_t(input.dtype()), -1, -1, even ? input.numel() : -1},
                   [=](uint32_t tag) {
                     with_width(in.element_size(), [&](auto w) {
                       using W = decltype(w);
                       if (even) {
                         if (in.numel() == 0) return;
                         gloo::AlltoallOptions o(ctx_);
                         o.setInput(static_cast<W*>(in.data_ptr()), size_t(in.numel()));
                         o.setOutput(static_cast<W*>(s.buf.data_ptr()), size_t(s.buf.numel()));
                         o.setTag(tag);
                         o.setTimeout(timeout_);
                         gloo::alltoall(o);
                       } else {
                         gloo::AlltoallvOptions o(ctx_);
                         o.setInput(static_cast<W*>(in.data_ptr()), in_counts);
                         o.setOutput(static_cast<W*>(s.buf.data_ptr()), out_counts);
                         o.setTag(tag);
                         o.setTimeout(timeout_);
                         gloo::alltoallv(o);
                       }
                     });
                     s.write_back();
                   }, {output});
  }

  WorkPtr barrier() override {
    return enqueue("barrier", {kBarrier, -1, -1, -1, -1}, [=](uint32_t tag) {
      gloo::BarrierOptions o(ctx_);
      o.setTag(tag);
      o.setTimeout(timeout_);
      gloo::barrier(o);
    }, {});
  }

  WorkPtr send(const Tensor& tensor, int dst, int tag) override {
    host_only("send", {tensor});
    check_rank(dst, "send", "dst");
    if (dst == rank_) throw DistError("send: invalid destination rank: should not be the same as the rank of the current process.");
    Staged s(dense_values(tensor));
    auto ub = ctx_->createUnboundBuffer(s.buf.data_ptr(), size_t(s.buf.nbytes()));
    ub->send(dst, p2p_slot(tag));
    return std::make_shared<P2PWork>(std::move(ub), s, true, timeout_, "send to rank " + std::to_string(dst));
  }

  WorkPtr recv(const Tensor& tensor, int src, int tag) override {
    host_only("recv", {tensor});
    if (src >= 0) check_rank(src, "recv", "src");
    if (src == rank_) throw DistError("recv: invalid source rank: should not be the same as the rank of the current process.");
    auto s = stage(tensor);
    auto ub = ctx_->createUnboundBuffer(s.buf.data_ptr(), size_t(s.buf.nbytes()));
    if (src >= 0) {
      ub->recv(src, p2p_slot(tag));
    } else {
      std::vector<int> peers;
      for (int r = 0; r < size_; r++)
        if (r != rank_) peers.push_back(r);
      ub->recv(peers, p2p_slot(tag));
    }
    return std::make_shared<P2PWork>(std::move(ub), s, false, timeout_,
                                     src >= 0 ? "recv from rank " + std::to_string(src) : "recv from any rank");
  }

 private:
  static std::shared_ptr<gloo::transport::Device> make_device(const GlooOptions& opts) {
    gloo::transport::tcp::attr attr;
    std::string iface = opts.iface;
    if (iface.empty() && opts.hostname.empty())
      if (const char* e = std::getenv("GLOO_SOCKET_IFNAME")) iface = e;
    if (!iface.empty()) {
      attr.iface = iface;
    } else if (!opts.hostname.empty()) {
      attr.hostname = opts.hostname;
    } else {
      char host[256] = {0};
      gethostname(host, sizeof host - 1);
      attr.hostname = host;
    }
    try {
      return gloo::transport::tcp::CreateDevice(attr);
    } catch (const std::exception& e) {
      if (!iface.empty() || !opts.hostname.empty())
        throw DistNetworkError("ProcessGroupGloo: cannot use " + (iface.empty() ? "host " + opts.hostname : "interface " + iface) +
                               ": " + e.what());
      // this machine's name does not resolve to an address we can bind: loopback (one machine)
      gloo::transport::tcp::attr lo;
      lo.hostname = "127.0.0.1";
      return gloo::transport::tcp::CreateDevice(lo);
    }
  }

  static uint64_t p2p_slot(int tag) { return (uint64_t(0x10) << 56) | uint32_t(tag); }

  void check_rank(int r, const char* op, const char* what) const {
    if (r < 0 || r >= size_)
      throw DistError(std::string(op) + ": invalid " + what + " rank " + std::to_string(r) + " for a group of size " +
                      std::to_string(size_));
  }
  static void check_same_dtype(const Tensor& a, const Tensor& b, const char* op) {
    if (a.dtype() != b.dtype())
      throw DistError(std::string(op) + ": output and input must have the same dtype, got " + dtype_cname(a.dtype()) +
                      " and " + dtype_cname(b.dtype()));
  }
  void check_list(const std::vector<Tensor>& list, const Tensor& like, const char* op, const char* name) const {
    if (int64_t(list.size()) != size_)
      throw DistError(std::string(op) + ": ``" + name + "`` must hold world_size (" + std::to_string(size_) +
                      ") tensors, got " + std::to_string(list.size()));
    for (size_t i = 0; i < list.size(); i++) {
      if (list[i].dtype() != like.dtype() || list[i].numel() != like.numel())
        throw DistError(std::string(op) + ": tensor " + std::to_string(i) + " of ``" + name + "`` (" +
                        dtype_cname(list[i].dtype()) + ", " + std::to_string(list[i].numel()) +
                        " elements) does not match the input (" + dtype_cname(like.dtype()) + ", " +
                        std::to_string(like.numel()) + " elements)");
    }
  }
  static ReduceFn checked_fn(const char* opname, ScalarType dt, ReduceOp op) {
    if (op == ReduceOp::AVG && !is_floating(dt))
      throw DistError(std::string(opname) + ": ReduceOp.AVG needs a floating-point tensor, got " + dtype_cname(dt));
    ReduceFn fn = reduce_fn(dt, op);
    if (!fn)
      throw DistError(std::string(opname) + ": ReduceOp." + reduce_op_name(op) + " is not supported for " +
                      dtype_cname(dt) + " tensors");
    return fn;
  }
  // Gloo moves host memory: a GPU tensor gets a clear error, never a host read of device memory
  static void host_only(const char* op, const std::vector<Tensor>& list, std::initializer_list<Tensor> more = {}) {
    auto check = [&](const Tensor& t) {
      if (t.defined() && !t.device().is_cpu())
        throw DistBackendError(std::string("ProcessGroupGloo: ") + op + " expects CPU tensors, got one on " +
                               t.device().str() + " (use the nccl backend for CUDA tensors)");
    };
    for (const Tensor& t : list) check(t);
    for (const Tensor& t : more) check(t);
  }
  static void host_only(const char* op, std::initializer_list<Tensor> list) { host_only(op, std::vector<Tensor>(list)); }
  static Staged stage(const Tensor& t) {
    autograd::NoGradGuard ng;
    return Staged(t);
  }
  void divide(const Tensor& t) const { t.div_(scalar_to_tensor(Scalar(double(size_)))); }

  WorkPtr allreduce_impl(const std::vector<Tensor>& tensors, ReduceOp op, Kind kind, bool verify = true) {
    const char* name = kind == kAllreduce ? "all_reduce" : "all_reduce_coalesced";
    if (tensors.empty()) throw DistError(std::string(name) + ": no tensors");
    ReduceFn fn = checked_fn(name, tensors[0].dtype(), op);
    int64_t numel = 0;
    for (auto& t : tensors) numel += t.numel();
    std::vector<Staged> staged;
    Tensor flat;
    if (tensors.size() == 1) {
      staged.push_back(stage(tensors[0]));
      flat = staged[0].buf;
    } else {
      autograd::NoGradGuard ng;
      std::vector<Tensor> parts;
      for (auto& t : tensors) parts.push_back(t.reshape({-1}));
      flat = ember::cat(parts, 0);
    }
    return enqueue(name, {kind, int32_t(tensors[0].dtype()), -1, int32_t(op), numel},
                   [=](uint32_t tag) {
                     run_allreduce(flat, fn, tag);
                     if (op == ReduceOp::AVG) divide(flat);
                     if (!staged.empty()) return staged[0].write_back();
                     int64_t at = 0;
                     for (auto& t : tensors) {
                       t.copy_(flat.narrow(0, at, t.numel()).view(t.sizes()));
                       at += t.numel();
                     }
                   }, tensors, verify);
  }

  void run_allreduce(const Tensor& buf, const ReduceFn& fn, uint32_t tag) {
    if (buf.numel() == 0) return;
    with_width(buf.element_size(), [&](auto w) {
      using W = decltype(w);
      gloo::AllreduceOptions o(ctx_);
      o.setOutput(static_cast<W*>(buf.data_ptr()), size_t(buf.numel()));
      o.setReduceFunction(fn);
      o.setTag(tag);
      o.setTimeout(timeout_);
      gloo::allreduce(o);
    });
  }

  void gather_flat(const Tensor& in, const Tensor& out, uint32_t tag) {
    if (in.numel() == 0) return;
    with_width(in.element_size(), [&](auto w) {
      using W = decltype(w);
      gloo::AllgatherOptions o(ctx_);
      o.setInput(static_cast<W*>(in.data_ptr()), size_t(in.numel()));
      o.setOutput(static_cast<W*>(out.data_ptr()), size_t(out.numel()));
      o.setTag(tag);
      o.setTimeout(timeout_);
      gloo::allgather(o);
    });
  }

  static void scatter_rows(const Tensor& flat, const std::vector<Tensor>& outs) {
    int64_t at = 0;
    for (auto& t : outs) {
      t.copy_(flat.narrow(0, at, t.numel()).view(t.sizes()));
      at += t.numel();
    }
  }

  // ---- the worker
  struct Job {
    std::string name;
    Fingerprint fp;
    bool verify;
    std::function<void(uint32_t)> run;
    uint32_t tag;
    std::shared_ptr<Work> work;
  };

  WorkPtr enqueue(const char* name, Fingerprint fp, std::function<void(uint32_t)> run, std::vector<Tensor> outputs,
                  bool verify = true) {
    auto work = std::make_shared<Work>();
    work->outputs = std::move(outputs);
    work->runner = this;
    {
      std::lock_guard<std::mutex> g(mu_);
      // two tags per collective: the fingerprint exchange and the payload
      jobs_.push_back({name, fp, verify, std::move(run), next_tag_, work});
      next_tag_ += 2;
    }
    cv_.notify_one();
    return work;
  }

  void check_agreement(const Job& job) {
    std::vector<Fingerprint> all(static_cast<size_t>(size_));
    gloo::AllgatherOptions o(ctx_);
    o.setInput(reinterpret_cast<Bytes<sizeof(Fingerprint)>*>(const_cast<Fingerprint*>(&job.fp)), 1);
    o.setOutput(reinterpret_cast<Bytes<sizeof(Fingerprint)>*>(all.data()), all.size());
    o.setTag(job.tag);
    o.setTimeout(timeout_);
    gloo::allgather(o);
    for (int r = 0; r < size_; r++) {
      if (all[size_t(r)] == job.fp) continue;
      throw DistBackendError("Detected mismatch between collectives on ranks. Rank " + std::to_string(rank_) +
                             " is running collective: " + describe(job.fp) + ", but Rank " + std::to_string(r) +
                             " is running collective: " + describe(all[size_t(r)]) + ".");
    }
  }

  void loop() {
    autograd::NoGradGuard ng;  // collectives write tensors' data, never their history
    WorkerThreadMark mark(this);
    for (;;) {
      Job job;
      {
        std::unique_lock<std::mutex> g(mu_);
        cv_.wait(g, [&] { return stop_ || !jobs_.empty(); });
        if (jobs_.empty()) return;
        job = std::move(jobs_.front());
        jobs_.pop_front();
      }
      std::exception_ptr err;
      auto t0 = std::chrono::steady_clock::now();
      try {
        if (size_ > 1 && job.verify) check_agreement(job);
        job.run(job.tag + 1);
      } catch (const DistError&) {
        err = std::current_exception();
      } catch (const std::exception& e) {
        err = std::make_exception_ptr(DistBackendError(
            "[ember.distributed] " + job.name + " on rank " + std::to_string(rank_) + " of " + std::to_string(size_) +
            " (gloo) failed: " + e.what()));
      }
      job.work->run_ns =
          std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count();
      job.work->finish(err);
    }
  }

  // kept alive with the group: rank 0's TCPStore server must outlast every rank's rendezvous
  std::shared_ptr<Store> store_;
  Milliseconds timeout_;
  std::shared_ptr<gloo::transport::Device> device_;
  std::shared_ptr<gloo::Context> ctx_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Job> jobs_;
  uint32_t next_tag_ = 0;
  bool stop_ = false;
  std::thread worker_;
};

}  // namespace

bool gloo_available() { return true; }

ProcessGroupPtr make_gloo_process_group(std::shared_ptr<Store> store, int rank, int size, const GlooOptions& opts) {
  return std::make_shared<ProcessGroupGloo>(std::move(store), rank, size, opts);
}

}  // namespace ember::distributed

#else  // built without Gloo

#include "ember/distributed/errors.h"

namespace ember::distributed {
bool gloo_available() { return false; }
ProcessGroupPtr make_gloo_process_group(std::shared_ptr<Store>, int, int, const GlooOptions&) {
  throw DistError("this Ember was built without Gloo (apt-get install libgloo-dev, then rebuild)");
}
}  // namespace ember::distributed

#endif
