// Walks along rows: the cumulative ops without a parallel scan (kernels/cumulative.h), cummax/cummin
// and logcumsumexp over contiguous [rows, n] blocks, one thread per row walking it in order, so that
// ties, NaN and the rounding of every step are the CPU kernels' (kernels/cpu/cumulative.cpp); many
// short rows fill the GPU, a few very long ones run serially (a row-parallel scan is the optimisation
// left). And searchsorted's binary search (kernels/search.h), one thread per value.
#include <cmath>
#include <type_traits>

#include "ember/kernels/cuda/launch.h"
#include "ember/kernels/cuda/loops.cuh"

namespace ember::cuda_kernels {
namespace {

template <class T>
__device__ bool is_nan(T v) {
  if constexpr (std::is_floating_point_v<T>) return v != v;
  else return false;
}

template <class T>
__global__ void cum_extreme_kernel(T* vals, int64_t* inds, const T* x, int64_t rows, int64_t n, bool is_max) {
  for (int64_t r = int64_t(blockIdx.x) * kThreads + threadIdx.x; r < rows; r += int64_t(gridDim.x) * kThreads) {
    const T* row = x + r * n;
    T best = row[0];
    int64_t bi = 0;
    for (int64_t i = 0; i < n; i++) {
      const T v = row[i];
      // NaN wins and stays; ties move the index forward
      const bool take = is_max ? (is_nan(v) || (!is_nan(best) && v >= best))
                               : (is_nan(v) || (!is_nan(best) && v <= best));
      if (take) {
        best = v;
        bi = i;
      }
      vals[r * n + i] = best;
      inds[r * n + i] = bi;
    }
  }
}

__global__ void logcumsumexp_kernel(double* out, const double* x, int64_t rows, int64_t n) {
  for (int64_t r = int64_t(blockIdx.x) * kThreads + threadIdx.x; r < rows; r += int64_t(gridDim.x) * kThreads) {
    double acc = -INFINITY;
    for (int64_t i = 0; i < n; i++) {
      const double v = x[r * n + i];
      const double lo = isnan(acc) ? acc : fmin(v, acc);
      const double hi = isnan(acc) ? acc : fmax(v, acc);
      acc = (lo != hi || isfinite(lo)) ? log1p(exp(lo - hi)) + hi : v;
      out[r * n + i] = acc;
    }
  }
}

template <class T>
__global__ void searchsorted_kernel(int64_t* out, const T* b, const T* v, const int64_t* sorter, int64_t nv,
                                    int64_t m, int64_t per_row, bool one_row, bool right) {
  for (int64_t i = int64_t(blockIdx.x) * kThreads + threadIdx.x; i < nv; i += int64_t(gridDim.x) * kThreads) {
    const int64_t row = one_row ? 0 : i / per_row;
    const T* bd = b + row * m;
    const int64_t* sr = sorter ? sorter + row * m : nullptr;
    const T val = v[i];
    int64_t start = 0, end = m;
    while (start < end) {  // the CPU kernel's comparisons, so NaN lands where it does there
      const int64_t mid = start + ((end - start) >> 1);
      const T mv = sr ? bd[sr[mid]] : bd[mid];
      if (right ? !(mv > val) : !(mv >= val)) start = mid + 1;
      else end = mid;
    }
    out[i] = start;
  }
}

}  // namespace

Status searchsorted(int dtype, int64_t* out, const void* b, const void* v, const int64_t* sorter, int64_t nv,
                    int64_t m, int64_t per_row, bool one_row, bool right, void* stream) {
  if (nv == 0) return kOk;
  return dispatch<kNumeric>(dtype, [&](auto tag) {
    using T = decltype(tag);
    searchsorted_kernel<T><<<grid_stride_blocks(nv), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(
        out, static_cast<const T*>(b), static_cast<const T*>(v), sorter, nv, m, per_row, one_row, right);
    return launch_ok() ? kOk : kCudaError;
  });
}

Status cum_extreme(int dtype, void* vals, int64_t* inds, const void* x, int64_t rows, int64_t n, bool is_max,
                   void* stream) {
  if (rows == 0 || n == 0) return kOk;
  return dispatch<kAll>(dtype, [&](auto tag) {
    using T = decltype(tag);
    cum_extreme_kernel<T><<<grid_stride_blocks(rows), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(
        static_cast<T*>(vals), inds, static_cast<const T*>(x), rows, n, is_max);
    return launch_ok() ? kOk : kCudaError;
  });
}

Status logcumsumexp(double* out, const double* x, int64_t rows, int64_t n, void* stream) {
  if (rows == 0 || n == 0) return kOk;
  logcumsumexp_kernel<<<grid_stride_blocks(rows), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(out, x, rows, n);
  return launch_ok() ? kOk : kCudaError;
}

}  // namespace ember::cuda_kernels
