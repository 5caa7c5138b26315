#pragma once
// ember::cuda: the CUDA backend's C++ API (what ember.cuda wraps). The backend registers itself for
// DeviceType::CUDA on first use (lazy_init): an allocator (the caching allocator of
// alloc/caching_allocator.h over cudaMalloc), a stream backend (core/stream.h) and the kernels of
// kernels/cuda/. In a build without CUDA every query answers "no GPU" and everything else raises
// PyTorch's AssertionError "Torch not compiled with CUDA enabled" (here "Ember ...").
// This header includes no CUDA header: C++ users need no CUDA toolkit to build against it.
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "ember/alloc/caching_allocator.h"
#include "ember/core/array_ref.h"
#include "ember/core/device.h"
#include "ember/core/dtype.h"
#include "ember/core/macros.h"
#include "ember/core/stream.h"

namespace ember {
class Tensor;
}

namespace ember::cuda {

EMBER_API bool is_compiled();  // built with the CUDA backend
EMBER_API std::string compiled_version();  // the CUDA toolkit built with ("13.0"); "" without CUDA
// torch.cuda.set_sync_debug_mode: 0 quiet, 1 warn, 2 raise when an op makes the host wait for the
// GPU implicitly (a copy to the host, .item(), a copy between GPUs); explicit synchronize() calls
// are never flagged. Any build may set it; only a CUDA build has such waits.
EMBER_API void set_sync_debug_mode(int mode);
EMBER_API int sync_debug_mode();
// Called by the implicit synchronizations before they wait: warns or raises per the mode.
EMBER_API void note_synchronizing_op();
// NVTX annotations for Nsight Systems (torch.cuda.nvtx); header-only NVTX3, a no-op unless a tool
// is attached. range_push/pop return the nesting depth (negative when no tool listens).
EMBER_API int nvtx_range_push(const char* msg);
EMBER_API int nvtx_range_pop();
EMBER_API uint64_t nvtx_range_start(const char* msg);
EMBER_API void nvtx_range_end(uint64_t id);
EMBER_API void nvtx_mark(const char* msg);
// Whether `device` can read and write `peer`'s memory directly (cudaDeviceCanAccessPeer).
EMBER_API bool can_device_access_peer(int device, int peer);
EMBER_API bool is_available();  // compiled, and a driver with at least one GPU
EMBER_API int device_count();   // 0 without a driver or GPU (never raises)
EMBER_API bool is_initialized();
// The architectures the kernels were compiled for, as CMake names them ("90", "80,90"; empty without CUDA).
EMBER_API std::string arch_list();
// Makes the backend usable: raises RuntimeError when there is no GPU (PyTorch's messages), and
// when `device` (>= 0) is not below device_count().
EMBER_API void lazy_init(int device = -1);

EMBER_API int current_device();
EMBER_API void set_device(int device);
// The device an index of -1 means (the current one), after checking the index exists.
EMBER_API int resolve_index(int device);

struct DeviceProperties {
  std::string name;
  int major = 0, minor = 0;
  int64_t total_memory = 0;
  int multi_processor_count = 0;
  int warp_size = 32;
  int64_t l2_cache_size = 0;
  std::string uuid;
};
EMBER_API DeviceProperties get_device_properties(int device = -1);
EMBER_API std::pair<size_t, size_t> mem_get_info(int device = -1);  // (free, total) bytes on the device
EMBER_API void synchronize(int device = -1);

// ---- the caching allocator (PyTorch's torch.cuda memory API)
EMBER_API DeviceStats memory_stats(int device = -1);
EMBER_API void reset_peak_memory_stats(int device = -1);
EMBER_API void reset_accumulated_memory_stats(int device = -1);
EMBER_API std::vector<SegmentInfo> memory_snapshot(int device = -1);
EMBER_API void empty_cache();
// Caps the caching allocator's reserve on `device` at `fraction` of its memory (ValueError outside [0, 1]).
EMBER_API void set_per_process_memory_fraction(double fraction, int device = -1);
EMBER_API double get_per_process_memory_fraction(int device = -1);
// The tensor's memory is used on `stream` too: it is not reused before that stream's work queued up
// to the tensor's release has finished (Tensor.record_stream).
EMBER_API void record_stream(const Tensor& t, const Stream& stream);
// Device memory outside the allocator, for scratch buffers and tests: freed through free_raw().
EMBER_API void* allocate_raw(size_t nbytes, int device = -1);
EMBER_API void free_raw(void* ptr, int device = -1);

// ---- pinned (page-locked) host memory, from a caching host allocator: copies to and from it can run
// asynchronously (non_blocking=True)
EMBER_API bool is_pinned(const Tensor& t);  // false without CUDA, or before CUDA has started
EMBER_API Tensor pin_memory(const Tensor& t);  // t itself when pinned already
EMBER_API Tensor empty_pinned(IntArrayRef sizes, ScalarType dtype);
EMBER_API void host_empty_cache();  // frees the idle pinned blocks whose copies have finished
// The pinned allocator's statistics (torch.cuda.host_memory_stats): blocks it owns (in use and cached),
// blocks handed out, and the time spent in cudaHostAlloc / cudaFreeHost (microseconds).
struct DurationStat {
  int64_t total = 0, max = 0, min = 0, count = 0;
};
struct HostStats {
  AllocatorStat allocations, allocated_bytes;  // blocks owned: grows at cudaHostAlloc, shrinks at cudaFreeHost
  AllocatorStat active_requests, active_bytes;  // blocks handed out and not yet given back
  int64_t num_host_alloc = 0, num_host_free = 0;
  DurationStat host_alloc_time, host_free_time;
};
EMBER_API HostStats host_memory_stats();  // all zero before CUDA has started
EMBER_API void reset_peak_host_memory_stats();
EMBER_API void reset_accumulated_host_memory_stats();

// ---- the CUDA runtime calls torch.cuda.cudart() exposes; each returns the cudaError_t code (0: success)
EMBER_API std::string error_string(int code);  // cudaGetErrorString
EMBER_API int profiler_start();                // cudaProfilerStart: collection on, for Nsight / nvprof
EMBER_API int profiler_stop();
EMBER_API int host_register(void* ptr, size_t nbytes, unsigned flags);  // page-lock memory allocated elsewhere
EMBER_API int host_unregister(void* ptr);

// ---- streams: the backend's handles (a cudaStream_t as an integer; 0 the legacy default stream)
EMBER_API Stream current_stream(int device = -1);
EMBER_API Stream default_stream(int device = -1);
// A new stream (priority: 0 normal, -1 high, as torch.cuda.Stream); owned by the backend until exit.
EMBER_API Stream new_stream(int device = -1, int priority = 0);
EMBER_API void set_stream(const Stream& s);
EMBER_API std::pair<int, int> stream_priority_range();  // (least, greatest), e.g. (0, -5)

// ---- matrix products on cuBLAS (kernels/cuda/blas.cpp). The switches of torch.backends.cuda.matmul, with
// PyTorch's defaults: float32 (and complex64) products in full precision unless TF32 is allowed; float16 and
// bfloat16 products may reduce in their own precision inside cuBLAS unless that is disallowed. Readable and
// settable in every build (the CPU ignores them).
struct MatmulFlags {
  bool allow_tf32 = false;
  bool allow_fp16_reduced_precision_reduction = true;
  bool allow_bf16_reduced_precision_reduction = true;
};
EMBER_API MatmulFlags matmul_flags();
EMBER_API void set_matmul_flags(const MatmulFlags& flags);
// ember.backends.cudnn's switches (PyTorch's defaults): cuDNN for convolutions when it loads, its
// heuristics' algorithm (benchmark: the fastest measured, cached per shape), TF32 for float32 math.
struct CudnnFlags {
  bool enabled = true;
  bool benchmark = false;
  bool deterministic = false;
  bool allow_tf32 = true;
};
EMBER_API CudnnFlags cudnn_flags();
EMBER_API void set_cudnn_flags(const CudnnFlags& flags);
// cuDNN's version (e.g. 92801) once loaded, 0 when this build or machine has none; loads it on first call.
EMBER_API int cudnn_version();
// Built with cuBLAS's headers; the library itself (libcublas.so.<major>) is loaded on the first product.
EMBER_API bool has_cublas();

}  // namespace ember::cuda
