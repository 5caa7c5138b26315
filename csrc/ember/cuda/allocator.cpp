// The CUDA allocator: one CachingAllocator (alloc/caching_allocator.h, PyTorch's policy, unit-tested
// without a GPU) per device over cudaMalloc / cudaFree and CUDA events, each block bound to the
// stream current when it was allocated. Copies between host and device are queued on the device's
// current stream; a copy to the host waits for it, since the CPU reads the result next.
#ifdef EMBER_HAVE_CUDA
#include <cstdio>
#include <exception>
#include <memory>
#include <mutex>
#include <vector>

#include "ember/core/tensor.h"
#include "ember/cuda/backend.h"
#include "ember/cuda/cuda.h"

namespace ember::cuda {
namespace {

class CudaRawMemory final : public RawMemory {
 public:
  explicit CudaRawMemory(int device) : device_(device) {}
  void* malloc(size_t nbytes) override {
    DeviceGuard g(device_);
    void* p = nullptr;
    cudaError_t err = cudaMalloc(&p, nbytes);
    if (err == cudaErrorMemoryAllocation) {
      cudaGetLastError();  // not sticky: the allocator frees its cache and retries
      return nullptr;
    }
    check(err, "cudaMalloc");
    return p;
  }
  void free(void* ptr, size_t) override {
    DeviceGuard g(device_);
    check(cudaFree(ptr), "cudaFree");
  }
  void mem_info(size_t* free_bytes, size_t* total_bytes) override {
    DeviceGuard g(device_);
    check(cudaMemGetInfo(free_bytes, total_bytes), "cudaMemGetInfo");
  }
  void* event_record(StreamId stream) override {
    DeviceGuard g(device_);
    cudaEvent_t ev;
    check(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming), "cudaEventCreate");
    check(cudaEventRecord(ev, reinterpret_cast<cudaStream_t>(stream)), "cudaEventRecord");
    return ev;
  }
  bool event_query(void* event) override {
    cudaError_t err = cudaEventQuery(static_cast<cudaEvent_t>(event));
    if (err == cudaErrorNotReady) {
      cudaGetLastError();
      return false;
    }
    check(err, "cudaEventQuery");
    return true;
  }
  void event_synchronize(void* event) override { check(cudaEventSynchronize(static_cast<cudaEvent_t>(event)), "cudaEventSynchronize"); }
  void event_destroy(void* event) override {
    if (cudaEventDestroy(static_cast<cudaEvent_t>(event)) != cudaSuccess) (void)cudaGetLastError();
  }
  int device_index() const override { return device_; }
  const char* backend_name() const override { return "CUDA"; }

 private:
  int device_;
};

struct PerDevice {
  std::unique_ptr<CudaRawMemory> raw;
  std::unique_ptr<CachingAllocator> cache;
};

// Never destroyed: storages may outlive static destruction at exit, and the driver reclaims the
// memory with the process anyway.
std::vector<PerDevice>& devices() {
  static auto* d = [] {
    auto* v = new std::vector<PerDevice>(size_t(device_count()));
    for (int i = 0; i < int(v->size()); i++) {
      (*v)[size_t(i)].raw = std::make_unique<CudaRawMemory>(i);
      (*v)[size_t(i)].cache = std::make_unique<CachingAllocator>(*(*v)[size_t(i)].raw);
    }
    return v;
  }();
  return *d;
}

CachingAllocator& cache_for(int device) { return *devices()[size_t(resolve_index(device))].cache; }

// A storage's deleter runs in destructors: a CUDA failure there (a sticky error from an earlier fault)
// is reported, never thrown (std::terminate).
void free_block(void* ctx, void* data, size_t) {
  if (!data) return;
  try {
    static_cast<CachingAllocator*>(ctx)->free(data);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ember: freeing CUDA memory failed: %s\n", e.what());
  }
}

class CudaAllocator final : public Allocator {
 public:
  DataPtr allocate(size_t nbytes) override { return allocate_on(nbytes, Device(DeviceType::CUDA, -1)); }
  DataPtr allocate_on(size_t nbytes, Device device) override {
    const int index = resolve_index(device.index);
    CachingAllocator& c = *devices()[size_t(index)].cache;
    void* p = c.allocate(nbytes, stream_id(current_cuda_stream(index)));
    return {p, &c, &free_block, Device(DeviceType::CUDA, int8_t(index))};
  }
  void copy_data(void* dst, Device dst_device, const void* src, Device src_device, size_t nbytes,
                 bool non_blocking) override {
    if (nbytes == 0) return;
    const Device gpu = dst_device.is_cpu() ? src_device : dst_device;
    const int index = resolve_index(gpu.index);
    DeviceGuard g(index);
    cudaStream_t s = current_cuda_stream(index);
    if (dst_device.is_cpu()) {
      note_synchronizing_op();
      // a copy to the host always waits, non_blocking or not: PyTorch returns early into pinned memory
      // and leaves the caller to synchronize before reading it, which is a silent wrong answer when
      // forgotten; here the values are there when the call returns
      check(cudaMemcpyAsync(dst, src, nbytes, cudaMemcpyDeviceToHost, s), "copy to the host");
      check(cudaStreamSynchronize(s), "copy to the host");
    } else if (src_device.is_cpu()) {
      // a pageable source is staged before the call returns, so the caller may free it at once; a
      // pinned one is read by the copy engine later: its block is not reused before that (or, unless
      // non_blocking, the call waits, as PyTorch's)
      check(cudaMemcpyAsync(dst, src, nbytes, cudaMemcpyHostToDevice, s), "copy to the device");
      if (is_pinned_ptr(src)) {
        if (non_blocking) {
          record_host_use(src, s);
        } else {
          note_synchronizing_op();
          check(cudaStreamSynchronize(s), "copy to the device");
        }
      }
    } else if (src_device.index == dst_device.index || src_device.index < 0 || dst_device.index < 0) {
      check(cudaMemcpyAsync(dst, src, nbytes, cudaMemcpyDeviceToDevice, s), "copy on the device");
    } else {
      // between two GPUs: after the work queued on the source's current stream (which may still be
      // writing src), and waited for, since the source block may be reused on its own stream once the
      // caller lets it go
      note_synchronizing_op();
      cudaEvent_t ready;
      {
        DeviceGuard on_src(src_device.index);
        check(cudaEventCreateWithFlags(&ready, cudaEventDisableTiming), "copy between devices");
        check(cudaEventRecord(ready, current_cuda_stream(src_device.index)), "copy between devices");
      }
      check(cudaStreamWaitEvent(s, ready, 0), "copy between devices");
      check(cudaMemcpyPeerAsync(dst, dst_device.index, src, src_device.index, nbytes, s), "copy between devices");
      check(cudaStreamSynchronize(s), "copy between devices");
      if (cudaEventDestroy(ready) != cudaSuccess) (void)cudaGetLastError();
    }
  }
};

}  // namespace

Allocator* make_allocator() {
  static CudaAllocator* a = new CudaAllocator();
  return a;
}

DeviceStats memory_stats(int device) { return cache_for(device).stats(); }
void set_per_process_memory_fraction(double fraction, int device) { cache_for(device).set_memory_fraction(fraction); }
double get_per_process_memory_fraction(int device) { return cache_for(device).memory_fraction(); }
void reset_peak_memory_stats(int device) { cache_for(device).reset_peak_stats(); }
void reset_accumulated_memory_stats(int device) { cache_for(device).reset_accumulated_stats(); }
std::vector<SegmentInfo> memory_snapshot(int device) { return cache_for(device).snapshot(); }

void empty_cache() {
  if (!is_initialized()) return;  // nothing cached yet (PyTorch: a no-op before first use)
  for (auto& d : devices()) d.cache->empty_cache();
}

void record_stream(const Tensor& t, const Stream& stream) {
  EMBER_CHECK(t.device().type == DeviceType::CUDA, "record_stream: expected a CUDA tensor, got one on ", t.device());
  EMBER_CHECK(stream.device.type == DeviceType::CUDA, "record_stream: expected a CUDA stream, got one on ", stream.device);
  const void* base = t.impl()->storage()->data();
  if (!base) return;
  cache_for(t.device().index).record_stream(const_cast<void*>(base), stream.id);
}

void* allocate_raw(size_t nbytes, int device) {
  const int index = resolve_index(device);
  return devices()[size_t(index)].cache->allocate(nbytes, stream_id(current_cuda_stream(index)));
}

void free_raw(void* ptr, int device) { cache_for(device).free(ptr); }

}  // namespace ember::cuda
#endif  // EMBER_HAVE_CUDA
