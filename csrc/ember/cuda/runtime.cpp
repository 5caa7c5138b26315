// Devices: discovery, lazy initialisation (registering the allocator and the stream backend for
// DeviceType::CUDA), the current device, properties. A build without CUDA answers "no GPU".
#include <cstdio>
#include <string>

#include "ember/core/deterministic.h"
#include "ember/core/error.h"
#include "ember/core/tensor.h"
#include "ember/cuda/cuda.h"

#include <atomic>

namespace ember::cuda {
namespace {
// bit 0: allow_tf32, bit 1: fp16 reduced-precision reduction, bit 2: bf16's (PyTorch's defaults: 0, 1, 1)
std::atomic<unsigned> g_matmul_flags{6u};
}  // namespace
MatmulFlags matmul_flags() {
  const unsigned v = g_matmul_flags.load(std::memory_order_relaxed);
  return MatmulFlags{(v & 1u) != 0, (v & 2u) != 0, (v & 4u) != 0};
}
namespace {
std::atomic<unsigned> g_cudnn_flags{1u | 8u};  // enabled, allow_tf32 (bits: enabled, benchmark, deterministic, tf32)
}  // namespace
CudnnFlags cudnn_flags() {
  const unsigned v = g_cudnn_flags.load(std::memory_order_relaxed);
  return CudnnFlags{(v & 1u) != 0, (v & 2u) != 0, (v & 4u) != 0, (v & 8u) != 0};
}
void set_cudnn_flags(const CudnnFlags& f) {
  g_cudnn_flags.store((f.enabled ? 1u : 0u) | (f.benchmark ? 2u : 0u) | (f.deterministic ? 4u : 0u) |
                      (f.allow_tf32 ? 8u : 0u), std::memory_order_relaxed);
}
namespace {
std::atomic<int> g_sync_debug_mode{0};
}  // namespace
void set_sync_debug_mode(int mode) {
  EMBER_CHECK_KIND(mode >= 0 && mode <= 2, Runtime,
                   "invalid value of debug_mode, expected one of `default`, `warn`, `error` (0, 1, 2), got ", mode);
  g_sync_debug_mode.store(mode, std::memory_order_relaxed);
}
int sync_debug_mode() { return g_sync_debug_mode.load(std::memory_order_relaxed); }
void note_synchronizing_op() {
  const int mode = sync_debug_mode();
  if (mode == 0) return;
  if (mode == 2) EMBER_FAIL(Runtime, "called a synchronizing CUDA operation");
  emit_warning("called a synchronizing CUDA operation");
}
void set_matmul_flags(const MatmulFlags& f) {
  g_matmul_flags.store((f.allow_tf32 ? 1u : 0u) | (f.allow_fp16_reduced_precision_reduction ? 2u : 0u) |
                       (f.allow_bf16_reduced_precision_reduction ? 4u : 0u), std::memory_order_relaxed);
}
}  // namespace ember::cuda

#ifdef EMBER_HAVE_CUDA
#include <mutex>

#include <cuda_profiler_api.h>
#include <nvtx3/nvToolsExt.h>

#include "ember/cuda/backend.h"

namespace ember::cuda {

int nvtx_range_push(const char* msg) { return nvtxRangePushA(msg); }
int nvtx_range_pop() { return nvtxRangePop(); }
uint64_t nvtx_range_start(const char* msg) { return nvtxRangeStartA(msg); }
void nvtx_range_end(uint64_t id) { nvtxRangeEnd(id); }
void nvtx_mark(const char* msg) { nvtxMarkA(msg); }

std::string error_string(int code) { return cudaGetErrorString(cudaError_t(code)); }
// These start the runtime first (PyTorch's cudart() does), so no GPU gives its RuntimeError, not a code.
int profiler_start() {
  lazy_init();
  return int(cudaProfilerStart());
}
int profiler_stop() {
  lazy_init();
  return int(cudaProfilerStop());
}
int host_register(void* ptr, size_t nbytes, unsigned flags) {
  lazy_init();
  const cudaError_t err = cudaHostRegister(ptr, nbytes, flags);
  if (err != cudaSuccess) (void)cudaGetLastError();  // returned, not left sticky for the next call
  return int(err);
}
int host_unregister(void* ptr) {
  lazy_init();
  const cudaError_t err = cudaHostUnregister(ptr);
  if (err != cudaSuccess) (void)cudaGetLastError();
  return int(err);
}

void fail(cudaError_t err, const char* what) {
  cudaGetLastError();  // clear a sticky launch error so the next call starts clean
  if (err == cudaErrorMemoryAllocation)
    throw OutOfMemoryError(std::string("CUDA out of memory (") + what + ")");
  EMBER_FAIL(Runtime, "CUDA error: ", cudaGetErrorString(err), " (", what, ")");
}

namespace {
std::once_flag g_count_once;
int g_count = 0;
cudaError_t g_count_err = cudaSuccess;
std::atomic<bool> g_initialized{false};
std::mutex g_init_mutex;

int count_devices() {
  std::call_once(g_count_once, [] {
    g_count_err = cudaGetDeviceCount(&g_count);
    if (g_count_err != cudaSuccess) {
      g_count = 0;
      cudaGetLastError();
    }
  });
  return g_count;
}

thread_local int t_device = -1;  // -1: not asked yet (the runtime's own current device, 0 at start)
}  // namespace

bool is_compiled() { return true; }
std::string compiled_version() {
  return std::to_string(CUDART_VERSION / 1000) + "." + std::to_string(CUDART_VERSION % 1000 / 10);
}
std::string arch_list() { return EMBER_CUDA_ARCH_LIST; }
int device_count() { return count_devices(); }
bool is_available() { return device_count() > 0; }
bool is_initialized() { return g_initialized.load(std::memory_order_acquire); }

void lazy_init(int device) {
  if (EMBER_UNLIKELY(!g_initialized.load(std::memory_order_acquire))) {
    std::lock_guard<std::mutex> lock(g_init_mutex);
    if (!g_initialized.load(std::memory_order_relaxed)) {
      const int n = count_devices();
      if (n == 0) {  // PyTorch's messages for the two usual causes
        if (g_count_err == cudaErrorInsufficientDriver)
          EMBER_FAIL(Runtime, "Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU "
                              "and installed a driver from http://www.nvidia.com/Download/index.aspx");
        const bool other = g_count_err != cudaSuccess && g_count_err != cudaErrorNoDevice;
        EMBER_FAIL(Runtime, "No CUDA GPUs are available",
                   other ? std::string(" (") + cudaGetErrorString(g_count_err) + ")" : std::string());
      }
      register_allocator(DeviceType::CUDA, make_allocator());
      register_stream_backend(DeviceType::CUDA, make_stream_backend());
      g_initialized.store(true, std::memory_order_release);
    }
  }
  if (device >= 0) EMBER_CHECK(device < g_count, "CUDA error: invalid device ordinal (device ", device, ", ", g_count, " available)");
}

int resolve_index(int device) {
  lazy_init(device);
  return device >= 0 ? device : current_device();
}

int current_device() {
  lazy_init();
  if (t_device < 0) check(cudaGetDevice(&t_device), "cudaGetDevice");
  return t_device;
}

bool can_device_access_peer(int device, int peer) {
  lazy_init(device);
  lazy_init(peer);  // both indices checked against the devices there are
  int ok = 0;
  check(cudaDeviceCanAccessPeer(&ok, device, peer), "cudaDeviceCanAccessPeer");
  return ok != 0;
}

void set_device(int device) {
  lazy_init(device);
  if (device < 0) return;  // PyTorch: a negative index is a no-op
  check(cudaSetDevice(device), "cudaSetDevice");
  t_device = device;
}

DeviceGuard::DeviceGuard(int index) : index_(index) {
  if (index < 0) return;
  const int cur = current_device();
  if (cur != index) {
    check(cudaSetDevice(index), "cudaSetDevice");
    t_device = index;
    prev_ = cur;
  }
}

DeviceGuard::~DeviceGuard() {
  if (prev_ >= 0) {
    if (cudaSetDevice(prev_) != cudaSuccess) (void)cudaGetLastError();  // a destructor: no throw, no stale error
    t_device = prev_;
  }
}

DeviceProperties get_device_properties(int device) {
  device = resolve_index(device);
  cudaDeviceProp p{};
  check(cudaGetDeviceProperties(&p, device), "cudaGetDeviceProperties");
  DeviceProperties r;
  r.name = p.name;
  r.major = p.major;
  r.minor = p.minor;
  r.total_memory = int64_t(p.totalGlobalMem);
  r.multi_processor_count = p.multiProcessorCount;
  r.warp_size = p.warpSize;
  r.l2_cache_size = p.l2CacheSize;
  char uuid[64];
  const unsigned char* u = reinterpret_cast<const unsigned char*>(p.uuid.bytes);
  std::snprintf(uuid, sizeof uuid, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0], u[1],
                u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
  r.uuid = uuid;
  return r;
}

std::pair<size_t, size_t> mem_get_info(int device) {
  DeviceGuard g(resolve_index(device));
  size_t free_b = 0, total_b = 0;
  check(cudaMemGetInfo(&free_b, &total_b), "cudaMemGetInfo");
  return {free_b, total_b};
}

void synchronize(int device) {
  DeviceGuard g(resolve_index(device));
  check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
}

}  // namespace ember::cuda

#else  // a build without CUDA: PyTorch's CPU-only build's answers

namespace ember::cuda {
namespace {
[[noreturn]] void not_compiled() { EMBER_FAIL(Assertion, "Ember not compiled with CUDA enabled"); }
}  // namespace

bool is_compiled() { return false; }
std::string compiled_version() { return ""; }
// PyTorch's CPU build: "NVTX functions not installed"
[[noreturn]] void no_nvtx() { EMBER_FAIL(Runtime, "NVTX functions not installed. Are you sure you have a CUDA build?"); }
int nvtx_range_push(const char*) { no_nvtx(); }
int nvtx_range_pop() { no_nvtx(); }
uint64_t nvtx_range_start(const char*) { no_nvtx(); }
void nvtx_range_end(uint64_t) { no_nvtx(); }
void nvtx_mark(const char*) { no_nvtx(); }
bool can_device_access_peer(int, int) { not_compiled(); }
std::string arch_list() { return ""; }
bool is_available() { return false; }
int device_count() { return 0; }
bool is_initialized() { return false; }
void lazy_init(int) { not_compiled(); }
int current_device() { not_compiled(); }
void set_device(int) { not_compiled(); }
int resolve_index(int) { not_compiled(); }
DeviceProperties get_device_properties(int) { not_compiled(); }
std::pair<size_t, size_t> mem_get_info(int) { not_compiled(); }
void synchronize(int) { not_compiled(); }
DeviceStats memory_stats(int) { not_compiled(); }
void reset_peak_memory_stats(int) { not_compiled(); }
void reset_accumulated_memory_stats(int) { not_compiled(); }
std::vector<SegmentInfo> memory_snapshot(int) { not_compiled(); }
void empty_cache() {}  // PyTorch's CPU build: a no-op
void set_per_process_memory_fraction(double, int) { not_compiled(); }
double get_per_process_memory_fraction(int) { not_compiled(); }
void record_stream(const Tensor&, const Stream&) { not_compiled(); }
void* allocate_raw(size_t, int) { not_compiled(); }
bool is_pinned(const Tensor&) { return false; }
// PyTorch's CPU build: no accelerator to pin for
Tensor pin_memory(const Tensor&) { EMBER_FAIL(Runtime, "Cannot access accelerator device when none is available."); }
Tensor empty_pinned(IntArrayRef, ScalarType) {
  EMBER_FAIL(Runtime, "Cannot access accelerator device when none is available.");
}
void host_empty_cache() {}
HostStats host_memory_stats() { not_compiled(); }
void reset_peak_host_memory_stats() { not_compiled(); }
void reset_accumulated_host_memory_stats() { not_compiled(); }
std::string error_string(int) { not_compiled(); }
int profiler_start() { not_compiled(); }
int profiler_stop() { not_compiled(); }
int host_register(void*, size_t, unsigned) { not_compiled(); }
int host_unregister(void*) { not_compiled(); }
bool has_cublas() { return false; }
int cudnn_version() { return 0; }
void free_raw(void*, int) { not_compiled(); }
Stream current_stream(int) { not_compiled(); }
Stream default_stream(int) { not_compiled(); }
Stream new_stream(int, int) { not_compiled(); }
void set_stream(const Stream&) { not_compiled(); }
std::pair<int, int> stream_priority_range() { not_compiled(); }

}  // namespace ember::cuda

#endif
