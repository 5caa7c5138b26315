// Pinned (page-locked) host memory, PyTorch's caching host allocator: blocks from cudaHostAlloc,
// sizes rounded up to a power of two and kept for reuse, because cudaHostAlloc/cudaFreeHost are slow
// and synchronize the device. A copy that reads or writes a pinned block asynchronously records an
// event on its stream (record_host_use); a freed block is handed out again only once all its events
// have completed, so freeing a pinned tensor right after a non_blocking copy is safe.
#ifdef EMBER_HAVE_CUDA
#include <algorithm>
#include <chrono>
#include <cstring>
#include <map>
#include <mutex>
#include <vector>

#include "ember/autograd/grad_mode.h"
#include "ember/core/tensor.h"
#include "ember/core/tensor_impl.h"
#include "ember/generated/ops.h"
#include "ember/cuda/backend.h"
#include "ember/cuda/cuda.h"

namespace ember::cuda {
namespace {

struct HostBlock {
  size_t size = 0;
  bool in_use = false;
  std::vector<cudaEvent_t> events;  // copies queued on streams that touch the block
};

void add(AllocatorStat& s, int64_t delta) {
  s.current += delta;
  if (delta > 0) s.allocated += delta;
  else s.freed -= delta;
  if (s.current > s.peak) s.peak = s.current;
}

// Times a call to cudaHostAlloc / cudaFreeHost into `d`.
template <class F>
cudaError_t timed(DurationStat& d, F&& call) {
  const auto t0 = std::chrono::steady_clock::now();
  const cudaError_t err = call();
  const int64_t us =
      std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - t0).count();
  d.total += us;
  d.max = std::max(d.max, us);
  d.min = d.count ? std::min(d.min, us) : us;
  d.count++;
  return err;
}

size_t round_size(size_t n) {
  size_t s = 512;
  while (s < n) s <<= 1;
  return s;
}

class PinnedAllocator final : public Allocator {
 public:
  DataPtr allocate(size_t nbytes) override {
    if (nbytes == 0) return {nullptr, this, &free_fn, Device()};
    lazy_init();  // needs the driver: PyTorch's errors without one
    const size_t size = round_size(nbytes);
    std::lock_guard<std::mutex> lock(mu_);
    auto& list = free_[size];
    for (auto it = list.begin(); it != list.end(); ++it) {
      HostBlock& b = blocks_[*it];
      if (!events_done(b)) continue;
      void* p = *it;
      list.erase(it);
      b.in_use = true;
      hand_out(b.size);
      return {p, this, &free_fn, Device()};
    }
    void* p = nullptr;
    auto host_alloc = [&] { return timed(stats_.host_alloc_time, [&] { return cudaHostAlloc(&p, size, cudaHostAllocDefault); }); };
    cudaError_t err = host_alloc();
    if (err != cudaSuccess) {
      (void)cudaGetLastError();
      release_cached();  // give back what the cache holds, then try once more
      err = host_alloc();
    }
    if (err != cudaSuccess) {
      (void)cudaGetLastError();
      EMBER_FAIL(Runtime, "pin_memory: cannot allocate ", nbytes, " bytes of pinned host memory (",
                 cudaGetErrorString(err), ")");
    }
    blocks_[p] = HostBlock{size, true, {}};
    add(stats_.allocations, 1);
    add(stats_.allocated_bytes, int64_t(size));
    stats_.num_host_alloc++;
    hand_out(size);
    return {p, this, &free_fn, Device()};
  }

  DataPtr allocate_on(size_t nbytes, Device) override { return allocate(nbytes); }

  // host to host (a pinned storage's resize_)
  void copy_data(void* dst, Device, const void* src, Device, size_t nbytes, bool) override {
    if (nbytes) std::memcpy(dst, src, nbytes);
  }

  // Whether `ptr` lies in a pinned block of this allocator.
  bool contains(const void* ptr) {
    std::lock_guard<std::mutex> lock(mu_);
    return find(ptr) != nullptr;
  }

  // A copy queued on `stream` uses the block holding `ptr` (no-op for memory not from here).
  void record(const void* ptr, cudaStream_t stream) {
    std::lock_guard<std::mutex> lock(mu_);
    HostBlock* b = find(ptr);
    if (!b) return;
    events_done(*b);  // drop the finished ones: a buffer reused every step keeps a short list
    cudaEvent_t ev;
    check(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming), "pinned memory event");
    check(cudaEventRecord(ev, stream), "pinned memory event");
    b->events.push_back(ev);
  }

  void release_cached() {  // (holding mu_) frees the idle blocks whose copies have finished
    for (auto& [size, list] : free_) {
      for (auto it = list.begin(); it != list.end();) {
        auto bi = blocks_.find(*it);
        if (!events_done(bi->second)) {
          ++it;
          continue;
        }
        if (timed(stats_.host_free_time, [&] { return cudaFreeHost(*it); }) != cudaSuccess) (void)cudaGetLastError();
        add(stats_.allocations, -1);
        add(stats_.allocated_bytes, -int64_t(bi->second.size));
        stats_.num_host_free++;
        blocks_.erase(bi);
        it = list.erase(it);
      }
    }
  }

  void empty_cache() {
    std::lock_guard<std::mutex> lock(mu_);
    release_cached();
  }

  HostStats stats() {
    std::lock_guard<std::mutex> lock(mu_);
    return stats_;
  }
  void reset_peak() {
    std::lock_guard<std::mutex> lock(mu_);
    for (AllocatorStat* s : {&stats_.allocations, &stats_.allocated_bytes, &stats_.active_requests, &stats_.active_bytes})
      s->peak = s->current;
    stats_.host_alloc_time.max = stats_.host_free_time.max = 0;
  }
  void reset_accumulated() {
    std::lock_guard<std::mutex> lock(mu_);
    for (AllocatorStat* s : {&stats_.allocations, &stats_.allocated_bytes, &stats_.active_requests, &stats_.active_bytes})
      s->allocated = s->freed = 0;
    stats_.num_host_alloc = stats_.num_host_free = 0;
    stats_.host_alloc_time = stats_.host_free_time = DurationStat{};
  }

 private:
  static void free_fn(void* ctx, void* data, size_t) {
    if (data) static_cast<PinnedAllocator*>(ctx)->release(data);
  }
  void release(void* p) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = blocks_.find(p);
    if (it == blocks_.end()) return;
    it->second.in_use = false;
    free_[it->second.size].push_back(p);
    add(stats_.active_requests, -1);
    add(stats_.active_bytes, -int64_t(it->second.size));
  }
  void hand_out(size_t size) {  // (holding mu_)
    add(stats_.active_requests, 1);
    add(stats_.active_bytes, int64_t(size));
  }
  HostBlock* find(const void* ptr) {
    auto it = blocks_.upper_bound(const_cast<void*>(ptr));
    if (it == blocks_.begin()) return nullptr;
    --it;
    const char* base = static_cast<const char*>(it->first);
    return static_cast<const char*>(ptr) < base + it->second.size ? &it->second : nullptr;
  }
  // Drops the events that have completed; true when none is left.
  static bool events_done(HostBlock& b) {
    for (auto it = b.events.begin(); it != b.events.end();) {
      const cudaError_t q = cudaEventQuery(*it);
      if (q != cudaSuccess) (void)cudaGetLastError();  // (not ready is recorded as the last error too)
      if (q == cudaErrorNotReady) return false;
      if (cudaEventDestroy(*it) != cudaSuccess) (void)cudaGetLastError();
      it = b.events.erase(it);
    }
    return true;
  }

  std::mutex mu_;
  std::map<void*, HostBlock> blocks_;            // every pinned block, by address
  std::map<size_t, std::vector<void*>> free_;  // idle blocks by size
  HostStats stats_;
};

// Never destroyed: pinned storages may outlive static destruction at exit.
PinnedAllocator& pinned() {
  static auto* a = new PinnedAllocator();
  return *a;
}

}  // namespace

bool is_pinned_ptr(const void* ptr) { return ptr && is_initialized() && pinned().contains(ptr); }
void record_host_use(const void* ptr, cudaStream_t stream) { pinned().record(ptr, stream); }

bool is_pinned(const Tensor& t) {
  return t.device().is_cpu() && is_pinned_ptr(t.impl()->storage()->data());
}

// A pinned copy of t's values (no autograd history: Tensor.pin_memory in Python adds its own node).
Tensor pin_memory(const Tensor& t) {
  EMBER_CHECK(t.device().is_cpu() && !t.is_sparse(), "cannot pin '", t.device(), "' ", t.is_sparse() ? "sparse " : "",
              "memory: only dense CPU tensors can be pinned");
  if (is_pinned(t)) return t;
  autograd::AutoGradMode no_grad(false);
  Tensor r = empty_pinned(t.sizes(), t.dtype());
  if (t.numel()) ember::copy_(r, t);
  return r;
}

Tensor empty_pinned(IntArrayRef sizes, ScalarType dtype) { return empty_tensor_from(&pinned(), sizes, dtype, Device()); }

void host_empty_cache() {
  if (is_initialized()) pinned().empty_cache();
}

HostStats host_memory_stats() { return is_initialized() ? pinned().stats() : HostStats{}; }
void reset_peak_host_memory_stats() {
  if (is_initialized()) pinned().reset_peak();
}
void reset_accumulated_host_memory_stats() {
  if (is_initialized()) pinned().reset_accumulated();
}

}  // namespace ember::cuda
#endif  // EMBER_HAVE_CUDA
