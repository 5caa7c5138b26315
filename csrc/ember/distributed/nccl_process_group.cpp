// The NCCL process group: collectives of CUDA tensors, moved by NVIDIA's NCCL (loaded with dlopen
// on the first collective, like cuBLAS: libnccl is ~300 MB and CPU-only users never need it).
//
// As PyTorch's ProcessGroupNCCL: each device gets a communicator (made on its first collective, the
// unique id travelling through the store) and an NCCL stream. A collective waits on the caller's
// current stream for its inputs, runs on the NCCL stream (so DDP's bucket all-reduces overlap the
// rest of backward), and the tensors are marked used there for the caching allocator.
// Work::wait() makes the caller's current stream wait for the collective, without blocking the host;
// barrier() blocks. A watchdog thread aborts a group whose collective has not finished within the
// timeout (a dead or diverged peer): the stuck kernels end, and every later call on the group raises
// DistBackendError naming the collective, instead of hanging.
#include "ember/distributed/process_group.h"

#if defined(EMBER_HAVE_CUDA) && defined(EMBER_HAVE_NCCL)

#include <nccl.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "ember/autograd/grad_mode.h"
#include "ember/core/blocking.h"
#include "ember/core/dynamic_library.h"
#include "ember/cuda/backend.h"
#include "ember/cuda/cuda.h"
#include "ember/distributed/errors.h"
#include "ember/generated/ops.h"
#include "ember/ops/conj.h"

namespace ember::distributed {
namespace {

struct Nccl {
  decltype(&ncclGetUniqueId) get_unique_id = nullptr;
  decltype(&ncclCommInitRank) comm_init_rank = nullptr;
  decltype(&ncclCommAbort) comm_abort = nullptr;
  decltype(&ncclGetErrorString) error_string = nullptr;
  decltype(&ncclGetLastError) last_error = nullptr;
  decltype(&ncclAllReduce) all_reduce = nullptr;
  decltype(&ncclBroadcast) broadcast = nullptr;
  decltype(&ncclReduce) reduce = nullptr;
  decltype(&ncclAllGather) all_gather = nullptr;
  decltype(&ncclReduceScatter) reduce_scatter = nullptr;
  decltype(&ncclSend) send = nullptr;
  decltype(&ncclRecv) recv = nullptr;
  decltype(&ncclGroupStart) group_start = nullptr;
  decltype(&ncclGroupEnd) group_end = nullptr;
  std::string error;
};

Nccl load_nccl() {
  Nccl n;
  DynamicLibrary lib(library_candidates("libnccl.so." EMBER_STRINGIFY(NCCL_MAJOR), EMBER_NCCL_LIBRARY_DIR));
  lib.resolve(n.get_unique_id, "ncclGetUniqueId");
  lib.resolve(n.comm_init_rank, "ncclCommInitRank");
  lib.resolve(n.comm_abort, "ncclCommAbort");
  lib.resolve(n.error_string, "ncclGetErrorString");
  lib.resolve(n.last_error, "ncclGetLastError");
  lib.resolve(n.all_reduce, "ncclAllReduce");
  lib.resolve(n.broadcast, "ncclBroadcast");
  lib.resolve(n.reduce, "ncclReduce");
  lib.resolve(n.all_gather, "ncclAllGather");
  lib.resolve(n.reduce_scatter, "ncclReduceScatter");
  lib.resolve(n.send, "ncclSend");
  lib.resolve(n.recv, "ncclRecv");
  lib.resolve(n.group_start, "ncclGroupStart");
  lib.resolve(n.group_end, "ncclGroupEnd");
  n.error = lib.error();
  return n;
}

const Nccl& nccl() {
  static const Nccl n = load_nccl();
  if (!n.error.empty())
    throw DistBackendError("ProcessGroupNCCL: NCCL could not be loaded (" + n.error +
                           "); install NVIDIA's wheel: pip install nvidia-nccl-cu13");
  return n;
}

void check(ncclResult_t r, const char* what) {
  if (r == ncclSuccess) return;
  const Nccl& n = nccl();
  const char* last = n.last_error(nullptr);
  throw DistBackendError(std::string("NCCL error in: ") + what + ", " + n.error_string(r) + ", NCCL version " +
                         EMBER_STRINGIFY(NCCL_MAJOR) "." EMBER_STRINGIFY(NCCL_MINOR) "." EMBER_STRINGIFY(NCCL_PATCH) +
                         (last && *last ? std::string("\n") + last : std::string()));
}

// NCCL's element type for a dtype (complex tensors travel as their real views, bool as bytes).
ncclDataType_t nccl_type(ScalarType t) {
  switch (t) {
    case kByte: case kBool: return ncclUint8;
    case kChar: return ncclInt8;
    case kInt: return ncclInt32;
    case kLong: return ncclInt64;
    case kHalf: return ncclFloat16;
    case kFloat: return ncclFloat32;
    case kDouble: return ncclFloat64;
    case kBFloat16: return ncclBfloat16;
    default: throw DistBackendError(std::string("ProcessGroupNCCL: unsupported data type ") + dtype_name(t));
  }
}

ncclRedOp_t nccl_op(ReduceOp op, ScalarType t) {
  if (t == kBool) {  // logical or / and, as PyTorch maps them
    if (op == ReduceOp::SUM) return ncclMax;
    if (op == ReduceOp::PRODUCT) return ncclMin;
  }
  switch (op) {
    case ReduceOp::SUM: return ncclSum;
    case ReduceOp::PRODUCT: return ncclProd;
    case ReduceOp::MIN: return ncclMin;
    case ReduceOp::MAX: return ncclMax;
    case ReduceOp::AVG:
      if (!is_floating(t) && !is_complex(t))
        throw DistBackendError("Cannot use ReduceOp.AVG with NCCL on a non-floating point tensor");
      return ncclAvg;
    default:
      throw DistBackendError(std::string("Cannot use ReduceOp.") + reduce_op_name(op) + " with NCCL");
  }
}

// A tensor as NCCL sees it: contiguous (a staging copy otherwise), complex as real pairs.
struct Buf {
  Tensor user, buf, flat;  // flat: buf as the element type NCCL moves
  // (a conjugate view's values are materialized: its storage holds their conjugates)
  explicit Buf(const Tensor& t) : user(t), buf(t.is_contiguous() && !t.has_math_bits() ? t : resolve_bits(t).contiguous()) {
    flat = is_complex(buf.dtype()) ? ember::view_as_real(buf) : buf;
  }
  void* ptr() const { return flat.data_ptr(); }
  size_t count() const { return size_t(flat.numel()); }
  ncclDataType_t type() const { return nccl_type(flat.dtype()); }
  bool staged() const { return !buf.is_same(user); }
};

Stream as_stream(int device, cudaStream_t s) { return Stream{Device(DeviceType::CUDA, int8_t(device)), cuda::stream_id(s)}; }

class NcclWork : public Work {
 public:
  NcclWork(int device, cudaEvent_t done, std::function<void()> after, std::vector<Tensor> outs)
      : device_(device), done_event_(done), after_(std::move(after)) {
    outputs = std::move(outs);
  }
  ~NcclWork() override {
    if (done_event_) (void)cudaEventDestroy(done_event_);
  }
  // The caller's current stream waits for the collective (the host does not), then any copy back
  // into the caller's tensors is queued after it.
  void wait(Milliseconds timeout) override {
    std::lock_guard<std::mutex> once(wait_mu_);
    if (!waited_) {
      waited_ = true;
      std::exception_ptr err = aborted_ ? std::make_exception_ptr(DistBackendError(*aborted_)) : nullptr;
      if (!err) {
        try {
          cuda::DeviceGuard g(device_);
          cuda::check(cudaStreamWaitEvent(cuda::current_cuda_stream(device_), done_event_, 0), "cudaStreamWaitEvent");
          if (after_) {
            autograd::NoGradGuard ng;
            after_();
          }
        } catch (...) {
          err = std::current_exception();
        }
      }
      finish(err);
    }
    (void)timeout;
    Work::wait(Milliseconds(0));
  }
  bool device_done() const { return cudaEventQuery(done_event_) == cudaSuccess; }
  // torch's NCCL work: completed once the device has run it (queried, not waited for)
  bool is_completed() override {
    if (device_done()) return true;
    (void)cudaGetLastError();  // cudaErrorNotReady is not an error for the next launch to report
    return false;
  }
  void abort(const std::string& why) {
    aborted_ = std::make_shared<std::string>(why);
  }
  int device() const { return device_; }

 private:
  int device_;
  cudaEvent_t done_event_;
  std::function<void()> after_;
  std::mutex wait_mu_;
  bool waited_ = false;
  std::shared_ptr<std::string> aborted_;
};

class ProcessGroupNCCL : public ProcessGroup {
 public:
  ProcessGroupNCCL(std::shared_ptr<Store> store, int rank, int size, const NcclOptions& opts)
      : ProcessGroup(rank, size), store_(std::move(store)), timeout_(opts.timeout) {
    if (size < 1 || rank < 0 || rank >= size)
      throw DistError("ProcessGroupNCCL: invalid rank " + std::to_string(rank) + " for a group of " +
                      std::to_string(size));
    watchdog_ = std::thread([this] { watch(); });
  }
  ~ProcessGroupNCCL() override {
    {
      std::lock_guard<std::mutex> g(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    blocking_region([this] { watchdog_.join(); });  // it may be finishing a Python callback
    // communicators and streams are left to process exit: destroying them here could wait on peers
  }

  std::string backend_name() const override { return "nccl"; }

  WorkPtr allreduce(const Tensor& tensor, ReduceOp op, bool) override { return allreduce_coalesced({tensor}, op); }

  WorkPtr allreduce_coalesced(const std::vector<Tensor>& tensors, ReduceOp op) override {
    std::vector<Buf> bufs(tensors.begin(), tensors.end());
    return collective("all_reduce", tensors, [&](ncclComm_t c, cudaStream_t s) {
      const Nccl& n = nccl();
      check(n.group_start(), "ncclGroupStart");
      for (const Buf& b : bufs)
        check(n.all_reduce(b.ptr(), b.ptr(), b.count(), b.type(), nccl_op(op, b.user.dtype()), c, s), "ncclAllReduce");
      check(n.group_end(), "ncclGroupEnd");
    }, write_back(bufs), tensors);
  }

  WorkPtr broadcast(const Tensor& tensor, int root) override {
    check_root(root, "broadcast");
    std::vector<Buf> bufs{Buf(tensor)};
    return collective("broadcast", {tensor}, [&](ncclComm_t c, cudaStream_t s) {
      check(nccl().broadcast(bufs[0].ptr(), bufs[0].ptr(), bufs[0].count(), bufs[0].type(), root, c, s), "ncclBroadcast");
    }, write_back(bufs), {tensor});
  }

  WorkPtr reduce(const Tensor& tensor, int root, ReduceOp op) override {
    check_root(root, "reduce");
    std::vector<Buf> bufs{Buf(tensor)};
    return collective("reduce", {tensor}, [&](ncclComm_t c, cudaStream_t s) {
      check(nccl().reduce(bufs[0].ptr(), bufs[0].ptr(), bufs[0].count(), bufs[0].type(), nccl_op(op, tensor.dtype()),
                          root, c, s), "ncclReduce");
    }, rank_ == root ? write_back(bufs) : std::function<void()>(), {tensor});
  }

  WorkPtr allgather(const std::vector<Tensor>& outputs, const Tensor& input) override {
    check_list(outputs, input, "all_gather");
    DimVector shape{int64_t(size_)};
    for (int64_t s : input.sizes()) shape.push_back(s);
    Tensor flat = ember::empty(shape, TensorOptions(input.dtype()).device(input.device()));
    Buf in(input), out(flat);
    return collective("all_gather", {input, flat}, [&](ncclComm_t c, cudaStream_t s) {
      check(nccl().all_gather(in.ptr(), out.ptr(), in.count(), in.type(), c, s), "ncclAllGather");
    }, [outputs, flat] {
      for (size_t r = 0; r < outputs.size(); r++) outputs[r].copy_(flat.select(0, int64_t(r)));
    }, outputs);
  }

  WorkPtr allgather_into_tensor(const Tensor& output, const Tensor& input) override {
    EMBER_CHECK(output.numel() == input.numel() * size_, "all_gather_into_tensor: output of ", output.numel(),
                " elements for ", size_, " inputs of ", input.numel());
    std::vector<Buf> bufs{Buf(output)};
    Buf in(input);
    return collective("all_gather_into_tensor", {input, output}, [&](ncclComm_t c, cudaStream_t s) {
      check(nccl().all_gather(in.ptr(), bufs[0].ptr(), in.count(), in.type(), c, s), "ncclAllGather");
    }, write_back(bufs), {output});
  }

  WorkPtr reduce_scatter_tensor(const Tensor& output, const Tensor& input, ReduceOp op) override {
    EMBER_CHECK(input.numel() == output.numel() * size_, "reduce_scatter_tensor: input of ", input.numel(),
                " elements for ", size_, " outputs of ", output.numel());
    std::vector<Buf> bufs{Buf(output)};
    Buf in(input);
    return collective("reduce_scatter_tensor", {input, output}, [&](ncclComm_t c, cudaStream_t s) {
      check(nccl().reduce_scatter(in.ptr(), bufs[0].ptr(), bufs[0].count(), bufs[0].type(),
                                  nccl_op(op, output.dtype()), c, s), "ncclReduceScatter");
    }, write_back(bufs), {output});
  }

  WorkPtr gather(const std::vector<Tensor>& outputs, const Tensor& input, int root) override {
    check_root(root, "gather");
    if (rank_ == root) check_list(outputs, input, "gather");
    std::vector<Buf> bufs(outputs.begin(), outputs.end());
    Buf in(input);
    std::vector<Tensor> used = outputs;
    used.push_back(input);
    return collective("gather", used, [&](ncclComm_t c, cudaStream_t s) {
      const Nccl& n = nccl();
      check(n.group_start(), "ncclGroupStart");
      if (rank_ == root) {
        for (int r = 0; r < size_; r++)
          check(n.recv(bufs[size_t(r)].ptr(), bufs[size_t(r)].count(), bufs[size_t(r)].type(), r, c, s), "ncclRecv");
      }
      check(n.send(in.ptr(), in.count(), in.type(), root, c, s), "ncclSend");
      check(n.group_end(), "ncclGroupEnd");
    }, write_back(bufs), outputs);
  }

  WorkPtr scatter(const Tensor& output, const std::vector<Tensor>& inputs, int root) override {
    check_root(root, "scatter");
    if (rank_ == root) check_list(inputs, output, "scatter");
    std::vector<Buf> bufs{Buf(output)};
    std::vector<Buf> ins(inputs.begin(), inputs.end());
    std::vector<Tensor> used = inputs;
    used.push_back(output);
    return collective("scatter", used, [&](ncclComm_t c, cudaStream_t s) {
      const Nccl& n = nccl();
      check(n.group_start(), "ncclGroupStart");
      if (rank_ == root) {
        for (int r = 0; r < size_; r++)
          check(n.send(ins[size_t(r)].ptr(), ins[size_t(r)].count(), ins[size_t(r)].type(), r, c, s), "ncclSend");
      }
      check(n.recv(bufs[0].ptr(), bufs[0].count(), bufs[0].type(), root, c, s), "ncclRecv");
      check(n.group_end(), "ncclGroupEnd");
    }, write_back(bufs), {output});
  }

  WorkPtr alltoall_single(const Tensor& output, const Tensor& input, const AllToAllSplits& splits) override {
    const int64_t rows_in = input.dim() ? input.size(0) : 1, rows_out = output.dim() ? output.size(0) : 1;
    const int64_t row = rows_in ? input.numel() / rows_in : 0;
    auto split = [&](const std::vector<int64_t>& given, int64_t rows, const char* what) {
      std::vector<int64_t> r(size_t(size_), rows / size_);
      if (!given.empty()) {
        EMBER_CHECK(int64_t(given.size()) == size_, "all_to_all_single: ", what, " splits must have ", size_,
                    " entries");
        r = given;
      } else {
        EMBER_CHECK(rows % size_ == 0, "all_to_all_single: ", rows, " rows do not split evenly among ", size_,
                    " ranks");
      }
      int64_t total = 0;
      for (int64_t v : r) total += v;
      EMBER_CHECK(total == rows, "all_to_all_single: ", what, " splits add up to ", total, ", expected ", rows);
      return r;
    };
    const std::vector<int64_t> sin = split(splits.input, rows_in, "input"), sout = split(splits.output, rows_out, "output");
    std::vector<Buf> bufs{Buf(output)};
    Buf in(input);
    const int64_t flat_row = row * (is_complex(input.dtype()) ? 2 : 1);  // elements NCCL moves per row
    return collective("all_to_all", {input, output}, [&](ncclComm_t c, cudaStream_t s) {
      const Nccl& n = nccl();
      char* send_base = static_cast<char*>(in.ptr());
      char* recv_base = static_cast<char*>(bufs[0].ptr());
      const int64_t isz = in.flat.element_size();
      int64_t so = 0, ro = 0;
      check(n.group_start(), "ncclGroupStart");
      for (int r = 0; r < size_; r++) {
        const int64_t ns = sin[size_t(r)] * flat_row, nr = sout[size_t(r)] * flat_row;
        if (ns) check(n.send(send_base + so * isz, size_t(ns), in.type(), r, c, s), "ncclSend");
        if (nr) check(n.recv(recv_base + ro * isz, size_t(nr), in.type(), r, c, s), "ncclRecv");
        so += ns;
        ro += nr;
      }
      check(n.group_end(), "ncclGroupEnd");
    }, write_back(bufs), {output});
  }

  // An all-reduce of one element on this rank's device, then the host waits for it (torch's barrier).
  WorkPtr barrier() override {
    const int device = last_device_ >= 0 ? last_device_ : cuda::current_device();
    Tensor one = ember::zeros({1}, TensorOptions(kFloat).device(Device(DeviceType::CUDA, int8_t(device))));
    WorkPtr w = allreduce(one, ReduceOp::SUM, false);
    w->wait();
    cuda::synchronize(device);
    raise_if_aborted();
    return w;
  }

  WorkPtr send(const Tensor& tensor, int dst, int) override {
    check_root(dst, "send");
    Buf b(tensor);
    return collective("send", {tensor}, [&](ncclComm_t c, cudaStream_t s) {
      check(nccl().send(b.ptr(), b.count(), b.type(), dst, c, s), "ncclSend");
    }, {}, {});
  }

  WorkPtr recv(const Tensor& tensor, int src, int) override {
    if (src < 0) throw DistBackendError("ProcessGroupNCCL does not support recv from any source (recvAnysource)");
    check_root(src, "recv");
    std::vector<Buf> bufs{Buf(tensor)};
    WorkPtr w = collective("recv", {tensor}, [&](ncclComm_t c, cudaStream_t s) {
      check(nccl().recv(bufs[0].ptr(), bufs[0].count(), bufs[0].type(), src, c, s), "ncclRecv");
    }, write_back(bufs), {tensor});
    w->source_rank = src;
    return w;
  }

 private:
  struct Comm {
    ncclComm_t comm = nullptr;
    cudaStream_t stream = nullptr;
  };
  struct Pending {
    std::shared_ptr<NcclWork> work;
    std::string what;
    std::chrono::steady_clock::time_point deadline;
  };

  void check_root(int r, const char* op) const {
    if (r < 0 || r >= size_)
      throw DistError(std::string(op) + ": invalid rank " + std::to_string(r) + " for a group of " +
                      std::to_string(size_));
  }
  void check_list(const std::vector<Tensor>& list, const Tensor& like, const char* op) const {
    EMBER_CHECK(int64_t(list.size()) == size_, op, ": expected ", size_, " tensors in the list, got ", list.size());
    for (const Tensor& t : list)
      EMBER_CHECK(t.sizes() == like.sizes() && t.dtype() == like.dtype(), op, ": every tensor of the list must have ",
                  "the shape ", like.sizes(), " and dtype ", like.dtype(), ", got ", t.sizes(), " and ", t.dtype());
  }
  static std::function<void()> write_back(const std::vector<Buf>& bufs) {
    bool any = false;
    for (const Buf& b : bufs) any = any || b.staged();
    if (!any) return {};
    return [bufs] {
      for (const Buf& b : bufs)
        if (b.staged()) b.user.copy_(b.buf);
    };
  }
  void raise_if_aborted() {
    std::lock_guard<std::mutex> g(mu_);
    if (!aborted_.empty()) throw DistBackendError(aborted_);
  }

  // The communicator of `device`, made on its first collective: rank 0's unique id through the store.
  Comm& comm_for(int device) {
    auto it = comms_.find(device);
    if (it != comms_.end()) return it->second;
    const Nccl& n = nccl();
    const std::string key = "ncclUniqueId_" + std::to_string(comm_counter_++);
    ncclUniqueId id;
    if (rank_ == 0) {
      check(n.get_unique_id(&id), "ncclGetUniqueId");
      store_->set(key, std::string(reinterpret_cast<const char*>(&id), sizeof(id)));
    } else {
      const std::string bytes = store_->get(key);
      if (bytes.size() != sizeof(id)) throw DistBackendError("ProcessGroupNCCL: a malformed NCCL unique id in the store");
      std::memcpy(&id, bytes.data(), sizeof(id));
    }
    cuda::DeviceGuard g(device);
    Comm c;
    cuda::check(cudaStreamCreateWithFlags(&c.stream, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
    check(n.comm_init_rank(&c.comm, size_, id, rank_), "ncclCommInitRank");
    {
      std::lock_guard<std::mutex> lk(mu_);
      abortable_.push_back(c.comm);
    }
    return comms_.emplace(device, c).first->second;
  }

  // Runs launch(comm, nccl_stream) after the caller's queued work, records the tensors' use on the
  // NCCL stream, and returns the work whose wait() orders the caller's stream after it.
  template <class Launch>
  WorkPtr collective(const char* what, const std::vector<Tensor>& tensors, Launch&& launch,
                     std::function<void()> after, std::vector<Tensor> outputs) {
    raise_if_aborted();
    int device = -1;
    for (const Tensor& t : tensors) {
      if (!t.defined()) continue;
      if (!t.is_cuda())
        throw DistBackendError(std::string("ProcessGroupNCCL: ") + what + " expects CUDA tensors, got one on " +
                               t.device().str() + " (No backend type associated with device type cpu)");
      if (device < 0) device = t.device().index;
      else if (t.device().index != device)
        throw DistBackendError(std::string("ProcessGroupNCCL: ") + what + ": tensors on two devices, cuda:" +
                               std::to_string(device) + " and " + t.device().str());
    }
    if (device < 0) device = cuda::current_device();
    cuda::DeviceGuard g(device);
    std::lock_guard<std::mutex> one_at_a_time(launch_mu_);  // every rank must issue them in one order
    Comm& c = comm_for(device);
    last_device_ = device;
    cudaStream_t caller = cuda::current_cuda_stream(device);
    cudaEvent_t ready = nullptr, done = nullptr;
    cuda::check(cudaEventCreateWithFlags(&ready, cudaEventDisableTiming), "cudaEventCreate");
    cuda::check(cudaEventRecord(ready, caller), "cudaEventRecord");
    cuda::check(cudaStreamWaitEvent(c.stream, ready, 0), "cudaStreamWaitEvent");
    (void)cudaEventDestroy(ready);  // released once the wait has been queued
    launch(c.comm, c.stream);
    const Stream nccl_stream = as_stream(device, c.stream);
    for (const Tensor& t : tensors)
      if (t.defined() && t.numel()) cuda::record_stream(t, nccl_stream);
    cuda::check(cudaEventCreateWithFlags(&done, cudaEventDisableTiming), "cudaEventCreate");
    cuda::check(cudaEventRecord(done, c.stream), "cudaEventRecord");
    auto work = std::make_shared<NcclWork>(device, done, std::move(after), std::move(outputs));
    {
      std::lock_guard<std::mutex> lk(mu_);
      pending_.push_back({work, what, std::chrono::steady_clock::now() + timeout_});
    }
    cv_.notify_all();
    return work;
  }

  // The watchdog: a collective still running past its deadline aborts the group's communicators.
  void watch() {
    std::unique_lock<std::mutex> lk(mu_);
    while (!stop_) {
      cv_.wait_for(lk, std::chrono::milliseconds(100));
      const auto now = std::chrono::steady_clock::now();
      for (auto it = pending_.begin(); it != pending_.end();) {
        if (it->work->device_done()) {
          it = pending_.erase(it);
          continue;
        }
        if (now > it->deadline && aborted_.empty()) {
          aborted_ = "ProcessGroupNCCL: rank " + std::to_string(rank_) + ": the collective " + it->what +
                     " did not finish within " + std::to_string(timeout_.count()) +
                     " ms (a peer died, or the ranks issued different collectives); the group was aborted";
          std::fprintf(stderr, "[ember.distributed] %s\n", aborted_.c_str());
          for (ncclComm_t c : abortable_) (void)nccl().comm_abort(c);
          for (auto& p : pending_) p.work->abort(aborted_);
        }
        ++it;
      }
      if (!aborted_.empty()) pending_.clear();
    }
  }

  std::shared_ptr<Store> store_;
  Milliseconds timeout_;
  std::map<int, Comm> comms_;  // under launch_mu_
  int comm_counter_ = 0;
  int last_device_ = -1;
  std::mutex launch_mu_;
  std::mutex mu_;  // pending_, aborted_, abortable_, stop_
  std::vector<ncclComm_t> abortable_;
  std::condition_variable cv_;
  std::vector<Pending> pending_;
  std::string aborted_;
  bool stop_ = false;
  std::thread watchdog_;
};

}  // namespace

bool nccl_available() { return true; }

ProcessGroupPtr make_nccl_process_group(std::shared_ptr<Store> store, int rank, int size, const NcclOptions& opts) {
  if (!cuda::is_available()) throw DistBackendError("ProcessGroupNCCL is only supported with GPUs, no GPUs found!");
  nccl();  // a missing library raises here, at init_process_group, not at the first collective
  return std::make_shared<ProcessGroupNCCL>(std::move(store), rank, size, opts);
}

}  // namespace ember::distributed

#else  // a build without CUDA or without NCCL's headers

namespace ember::distributed {
bool nccl_available() { return false; }
ProcessGroupPtr make_nccl_process_group(std::shared_ptr<Store>, int, int, const NcclOptions&) {
  throw Error(ErrorKind::Runtime, "Distributed package doesn't have NCCL built in");
}
}  // namespace ember::distributed

#endif
