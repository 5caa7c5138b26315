// Walks along rows: the cumulative ops without a parallel scan (kernels/cumulative.h), cummax/cummin
// and logcumsumexp over contiguous [rows, n] blocks, one thread per row walking it in order, so that
// ties, NaN and the rounding of every step are the CPU kernels' (kernels/cpu/cumulative.cpp); many
// short rows fill the GPU, a few very long ones run serially (a row-parallel scan is the optimisation
// left); cumsum/cumprod (kernels.h's scan_kernel) the same way, float32 accumulating in double as on
// the CPU. And searchsorted's binary search (kernels/search.h), one thread per value, the range
// factories' sequences (kernels/creation.h), and interpolation's resampling along one dim by a sparse
// matrix (kernels/interp.h), one thread per output element summing its row's taps in the CPU's order;
// and cdist's direct form (kernels/distance.h), one thread per pair of rows; all rounded step by step
// as the CPU's (no fused multiply-add).
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
      // std::min/max's rules (a NaN v comes through), not fmin/fmax's (which drop it)
      const double lo = isnan(acc) ? acc : (acc < v ? acc : v);
      const double hi = isnan(acc) ? acc : (v < acc ? acc : v);
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

// the type a scan step computes in: double for float32 (as the CPU), unsigned for integers (wrapping)
template <class T, bool = std::is_integral_v<T>>
struct ScanStep {
  using type = std::conditional_t<std::is_same_v<T, float>, double, T>;
};
template <class T>
struct ScanStep<T, true> {
  using type = std::make_unsigned_t<T>;
};

template <class T>
__global__ void scan_kernel(const T* x, T* y, int64_t rows, int64_t n, bool prod) {
  using Op = typename ScanStep<T>::type;
  for (int64_t r = int64_t(blockIdx.x) * kThreads + threadIdx.x; r < rows; r += int64_t(gridDim.x) * kThreads) {
    Op acc = prod ? Op(1) : Op(0);
    for (int64_t i = 0; i < n; i++) {
      const Op v = Op(x[r * n + i]);
      acc = prod ? Op(acc * v) : Op(acc + v);
      y[r * n + i] = T(acc);
    }
  }
}

__global__ void arange_kernel(void* out, bool is_long, bool exact, int64_t istart, int64_t istep, double start,
                              double step, int64_t n) {
  for (int64_t i = int64_t(blockIdx.x) * kThreads + threadIdx.x; i < n; i += int64_t(gridDim.x) * kThreads) {
    const double v = __dadd_rn(start, __dmul_rn(double(i), step));
    if (!is_long) static_cast<double*>(out)[i] = v;
    else if (exact)  // the result is in range: wrapping arithmetic gives it exactly
      static_cast<int64_t*>(out)[i] = int64_t(uint64_t(istart) + uint64_t(i) * uint64_t(istep));
    else static_cast<int64_t*>(out)[i] = int64_t(v);
  }
}

__global__ void linspace_kernel(double* out, double start, double end, double step, int64_t steps) {
  const int64_t half = steps / 2;
  for (int64_t i = int64_t(blockIdx.x) * kThreads + threadIdx.x; i < steps; i += int64_t(gridDim.x) * kThreads) {
    out[i] = steps == 1 ? start
             : i < half ? __dadd_rn(start, __dmul_rn(step, double(i)))
                        : __dsub_rn(end, __dmul_rn(step, double(steps - i - 1)));
  }
}

__device__ inline float mul_rn(float a, float b) { return __fmul_rn(a, b); }
__device__ inline double mul_rn(double a, double b) { return __dmul_rn(a, b); }
__device__ inline float add_rn(float a, float b) { return __fadd_rn(a, b); }
__device__ inline double add_rn(double a, double b) { return __dadd_rn(a, b); }

template <class T>
__global__ void resample_kernel(T* y, const T* x, const int64_t* start, const int64_t* idx, const T* w,
                                int64_t outer, int64_t rows, int64_t in, int64_t inner, bool from_zero) {
  const int64_t total = outer * rows * inner;
  for (int64_t e = int64_t(blockIdx.x) * kThreads + threadIdx.x; e < total; e += int64_t(gridDim.x) * kThreads) {
    const int64_t i = e % inner, j = (e / inner) % rows, o = e / (inner * rows);
    const T* xo = x + o * in * inner + i;
    const int64_t b = start[j], end = start[j + 1];
    T acc = T(0);
    for (int64_t t = b; t < end; t++) {
      const T term = mul_rn(xo[idx[t] * inner], w[t]);
      acc = t == b && !from_zero ? term : add_rn(acc, term);  // the CPU's adjoint adds into zeros
    }
    y[e] = acc;
  }
}

__device__ inline float sqrt_rn(float a) { return __fsqrt_rn(a); }
__device__ inline double sqrt_rn(double a) { return __dsqrt_rn(a); }

// out[b, i, j] = the p-norm of a[b, i] - b[b, j], with the CPU kernel's loops and NaN rules (its
// std::max keeps the running value when a NaN comes)
template <class T>
__global__ void cdist_kernel(T* out, const T* a, const T* b, int64_t nb, int64_t r1, int64_t r2, int64_t c, double p) {
  const int64_t total = nb * r1 * r2;
  const T tp = T(p);
  for (int64_t e = int64_t(blockIdx.x) * kThreads + threadIdx.x; e < total; e += int64_t(gridDim.x) * kThreads) {
    const int64_t j = e % r2, row = e / r2;  // row = batch * r1 + i
    const T* x = a + row * c;
    const T* y = b + ((row / r1) * r2 + j) * c;
    T acc = T(0);
    if (p == 0) {
      for (int64_t k = 0; k < c; k++) acc = add_rn(acc, T(x[k] != y[k]));
    } else if (p == 1) {
      for (int64_t k = 0; k < c; k++) acc = add_rn(acc, fabs(x[k] - y[k]));
    } else if (p == 2) {
      for (int64_t k = 0; k < c; k++) {
        const T d = x[k] - y[k];
        acc = add_rn(acc, mul_rn(d, d));
      }
      acc = sqrt_rn(acc);
    } else if (isinf(p)) {
      for (int64_t k = 0; k < c; k++) {
        const T d = fabs(x[k] - y[k]);
        acc = acc < d ? d : acc;
      }
    } else {
      for (int64_t k = 0; k < c; k++) acc = add_rn(acc, pow(fabs(x[k] - y[k]), tp));
      acc = pow(acc, T(1) / tp);
    }
    out[e] = acc;
  }
}

}  // namespace

Status cdist(int dtype, void* out, const void* a, const void* b, int64_t nb, int64_t r1, int64_t r2, int64_t c,
             double p, void* stream) {
  if (nb * r1 * r2 == 0) return kOk;
  return dispatch<kFloats>(dtype, [&](auto tag) {
    using T = decltype(tag);
    cdist_kernel<T><<<grid_stride_blocks(nb * r1 * r2), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(
        static_cast<T*>(out), static_cast<const T*>(a), static_cast<const T*>(b), nb, r1, r2, c, p);
    return launch_ok() ? kOk : kCudaError;
  });
}

Status resample(int dtype, void* y, const void* x, const int64_t* start, const int64_t* idx, const void* w,
                int64_t outer, int64_t rows, int64_t in, int64_t inner, bool from_zero, void* stream) {
  if (outer * rows * inner == 0) return kOk;
  return dispatch<kFloats>(dtype, [&](auto tag) {
    using T = decltype(tag);
    resample_kernel<T><<<grid_stride_blocks(outer * rows * inner), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(
        static_cast<T*>(y), static_cast<const T*>(x), start, idx, static_cast<const T*>(w), outer, rows, in, inner, from_zero);
    return launch_ok() ? kOk : kCudaError;
  });
}

Status scan(bool prod, int dtype, const void* in, void* out, int64_t rows, int64_t n, void* stream) {
  if (rows == 0 || n == 0) return kOk;
  return dispatch<kFloats | bit(Long)>(dtype, [&](auto tag) {
    using T = decltype(tag);
    scan_kernel<T><<<grid_stride_blocks(rows), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(
        static_cast<const T*>(in), static_cast<T*>(out), rows, n, prod);
    return launch_ok() ? kOk : kCudaError;
  });
}

Status arange(void* out, bool is_long, bool exact, int64_t istart, int64_t istep, double start, double step,
              int64_t n, void* stream) {
  if (n == 0) return kOk;
  arange_kernel<<<grid_stride_blocks(n), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(out, is_long, exact, istart,
                                                                                          istep, start, step, n);
  return launch_ok() ? kOk : kCudaError;
}

Status linspace(double* out, double start, double end, int64_t steps, void* stream) {
  if (steps == 0) return kOk;
  const double step = steps > 1 ? (end - start) / double(steps - 1) : 0.0;
  linspace_kernel<<<grid_stride_blocks(steps), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(out, start, end, step,
                                                                                                 steps);
  return launch_ok() ? kOk : kCudaError;
}

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
