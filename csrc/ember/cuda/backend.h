#pragma once
// Private to the CUDA backend (cuda/*.cpp, kernels/cuda/*.cpp): CUDA runtime error checks, a device
// guard, and the handles of the backend's registered parts. Only compiled with EMBER_HAVE_CUDA.
#include <cuda_runtime_api.h>

#include "ember/alloc/allocator.h"
#include "ember/core/dtype.h"
#include "ember/core/error.h"
#include "ember/core/stream.h"

namespace ember::cuda {

// RuntimeError "CUDA error: <the runtime's text>" (PyTorch's form), naming what failed.
[[noreturn]] void fail(cudaError_t err, const char* what);
inline void check(cudaError_t err, const char* what) {
  if (EMBER_UNLIKELY(err != cudaSuccess)) fail(err, what);
}

// Makes `index` the calling thread's current device for a scope (no call when it already is).
class DeviceGuard {
 public:
  explicit DeviceGuard(int index);
  ~DeviceGuard();
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int prev_ = -1;
  int index_ = -1;
};

inline cudaStream_t to_cuda(const Stream& s) { return reinterpret_cast<cudaStream_t>(s.id); }
inline int64_t stream_id(cudaStream_t s) { return reinterpret_cast<int64_t>(s); }

// Registered by lazy_init (cuda/allocator.cpp, cuda/streams.cpp).
Allocator* make_allocator();
StreamBackend* make_stream_backend();
// The calling thread's current stream on device `index`, as a cudaStream_t.
cudaStream_t current_cuda_stream(int index);
// Pinned host memory (cuda/pinned.cpp): whether `ptr` is in a block of the pinned allocator, and that
// an asynchronous copy on `stream` uses its block (not reused before the copy has finished).
bool is_pinned_ptr(const void* ptr);
void record_host_use(const void* ptr, cudaStream_t stream);

// c [M, N] (row-major, leading dimension ldc) = alpha * a [M, K] (lda) @ b [K, N] (ldb) + beta * c, float or
// double, on the current device's current stream: the raw-pointer GEMM of the fused RNN steps
// (kernels/cuda/blas.cpp; NotImplementedError in a build without cuBLAS's headers).
void gemm_rows(ScalarType dt, int64_t M, int64_t N, int64_t K, double alpha, const void* a, int64_t lda,
               const void* b, int64_t ldb, double beta, void* c, int64_t ldc);

}  // namespace ember::cuda
