#pragma once
// Process groups: a set of processes and the collectives among them (torch.distributed's
// ProcessGroup). Collectives of one group run in call order on the group's own thread, so a
// caller can queue several (async_op) and keep computing; Work::wait() joins one of them.
// Point-to-point send/recv post their buffers at once (either order on the two sides works).
#include <condition_variable>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "ember/core/tensor.h"
#include "ember/distributed/store.h"

namespace ember::distributed {

enum class ReduceOp { SUM, AVG, PRODUCT, MIN, MAX, BAND, BOR, BXOR };
EMBER_API const char* reduce_op_name(ReduceOp op);

// The handle of one queued collective or point-to-point operation.
class EMBER_API Work {
 public:
  virtual ~Work() = default;
  // Blocks until done; rethrows the operation's error. timeout 0: the group's own timeout.
  virtual void wait(Milliseconds timeout = Milliseconds(0));
  virtual bool is_completed();
  bool is_success();
  std::exception_ptr exception();
  // The tensors the operation wrote (torch's Work.result()).
  std::vector<Tensor> result();

  // Runs fn once the operation has finished (at once when it has): on the thread that finishes
  // it, which is the group's thread for collectives and the waiting thread for operations that
  // complete in wait() (point-to-point, NCCL). torch's Work.get_future() builds on this.
  void add_callback(std::function<void()> fn);

  // For backends: finish with the outputs or with an error.
  void finish(std::exception_ptr error = nullptr);
  std::vector<Tensor> outputs;
  int source_rank = -1;  // the sender, once a recv from any rank completed
  int64_t run_ns = 0;    // how long the operation ran on the group's thread
  // The thread that will run the operation (a backend's worker; null: the waiting one). Waiting for
  // the work on that very thread (a then() callback that blocks on its own group) raises instead of
  // hanging. Backends mark their worker with WorkerThreadMark.
  const void* runner = nullptr;

 protected:
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  std::exception_ptr error_;
  std::vector<std::function<void()>> callbacks_;
};
using WorkPtr = std::shared_ptr<Work>;

// While alive, the current thread is `owner`'s worker (Work::runner == owner: waiting here would deadlock).
class EMBER_API WorkerThreadMark {
 public:
  explicit WorkerThreadMark(const void* owner);
  ~WorkerThreadMark();
  WorkerThreadMark(const WorkerThreadMark&) = delete;
  WorkerThreadMark& operator=(const WorkerThreadMark&) = delete;

 private:
  const void* prev_;
};

struct AllToAllSplits {
  std::vector<int64_t> output;  // rows (along dim 0) received from each rank; empty: equal
  std::vector<int64_t> input;   // rows sent to each rank; empty: equal
};

class EMBER_API ProcessGroup {
 public:
  ProcessGroup(int rank, int size) : rank_(rank), size_(size) {}
  virtual ~ProcessGroup() = default;
  int rank() const { return rank_; }
  int size() const { return size_; }
  virtual std::string backend_name() const = 0;

  // Every collective works on tensors of any layout (non-contiguous ones through a contiguous
  // staging copy) and checks what the ranks send agrees before moving bytes.
  // verify=false skips the agreement check (one round trip): for callers whose ranks agree by
  // construction, like DDP's buckets (the model was checked to be the same on every rank).
  virtual WorkPtr allreduce(const Tensor& tensor, ReduceOp op, bool verify = true) = 0;
  // Several tensors of one dtype in one exchange (DDP's buckets, coalesced broadcasts).
  virtual WorkPtr allreduce_coalesced(const std::vector<Tensor>& tensors, ReduceOp op) = 0;
  virtual WorkPtr broadcast(const Tensor& tensor, int root) = 0;
  virtual WorkPtr reduce(const Tensor& tensor, int root, ReduceOp op) = 0;
  virtual WorkPtr allgather(const std::vector<Tensor>& outputs, const Tensor& input) = 0;
  // output holds size() inputs back to back (concatenated or stacked along dim 0)
  virtual WorkPtr allgather_into_tensor(const Tensor& output, const Tensor& input) = 0;
  virtual WorkPtr reduce_scatter_tensor(const Tensor& output, const Tensor& input, ReduceOp op) = 0;
  virtual WorkPtr gather(const std::vector<Tensor>& outputs, const Tensor& input, int root) = 0;
  virtual WorkPtr scatter(const Tensor& output, const std::vector<Tensor>& inputs, int root) = 0;
  virtual WorkPtr alltoall_single(const Tensor& output, const Tensor& input, const AllToAllSplits& splits) = 0;
  virtual WorkPtr barrier() = 0;
  virtual WorkPtr send(const Tensor& tensor, int dst, int tag) = 0;
  // src -1: from any rank (Work::result()'s sender is then in source_rank())
  virtual WorkPtr recv(const Tensor& tensor, int src, int tag) = 0;

 protected:
  int rank_, size_;
};
using ProcessGroupPtr = std::shared_ptr<ProcessGroup>;

struct GlooOptions {
  Milliseconds timeout{30 * 60 * 1000};  // torch's default collective timeout
  // The address other ranks reach this one at: a host name or IP. Empty: GLOO_SOCKET_IFNAME's
  // interface when set, else this machine's host name.
  std::string hostname;
  std::string iface;
};

struct NcclOptions {
  Milliseconds timeout{10 * 60 * 1000};  // torch's default for NCCL groups
};
// Whether this build has the NCCL backend (CUDA and NCCL's headers; libnccl loads at the group's creation).
EMBER_API bool nccl_available();
// An NCCL group of `size` processes, one GPU each, meeting through `store` (a PrefixStore per group).
EMBER_API ProcessGroupPtr make_nccl_process_group(std::shared_ptr<Store> store, int rank, int size,
                                                  const NcclOptions& opts);

// Whether this build has the Gloo backend.
EMBER_API bool gloo_available();
// A Gloo group of `size` processes meeting through `store` (use a PrefixStore per group).
EMBER_API ProcessGroupPtr make_gloo_process_group(std::shared_ptr<Store> store, int rank, int size,
                                                  const GlooOptions& opts);

}  // namespace ember::distributed
