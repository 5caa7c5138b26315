// Window kernels on the GPU (kernels/conv.h, kernels/pooling.h), one thread per output element, in
// the CPU loops' order (kernels/cpu/conv.cpp, pooling.cpp): im2col (which the convolution's
// im2col + cuBLAS path and avg_pool are built on), col2im (its adjoint: each input element sums its
// columns in the CPU's row order, so the result is the CPU's to the bit, without atomics), and max
// pooling with its backward (atomics: overlapping windows may pick one input twice).
#include "ember/kernels/cuda/loops.cuh"

namespace ember::cuda_kernels {
namespace {

// (a, b, c) of a flat index over sizes [*, n1, n2]
struct Idx3 {
  int64_t a, b, c;
};
__device__ inline Idx3 split3(int64_t i, int64_t n1, int64_t n2) { return {i / (n1 * n2), (i / n2) % n1, i % n2}; }

template <class T>
__global__ void __launch_bounds__(kThreads) im2col_kernel(const T* x, T* cols, int64_t total, Window g) {
  const int64_t L = g.out[0] * g.out[1] * g.out[2], K = g.k[0] * g.k[1] * g.k[2];
  const int64_t plane = g.in[0] * g.in[1] * g.in[2];
  for (int64_t i = int64_t(blockIdx.x) * kThreads + threadIdx.x; i < total; i += int64_t(gridDim.x) * kThreads) {
    const int64_t l = i % L, row = (i / L) % K, pl = i / (L * K);
    const Idx3 o = split3(l, g.out[1], g.out[2]), k = split3(row, g.k[1], g.k[2]);
    const int64_t id = o.a * g.s[0] - g.p[0] + k.a * g.d[0];
    const int64_t ih = o.b * g.s[1] - g.p[1] + k.b * g.d[1];
    const int64_t iw = o.c * g.s[2] - g.p[2] + k.c * g.d[2];
    const bool inside = id >= 0 && id < g.in[0] && ih >= 0 && ih < g.in[1] && iw >= 0 && iw < g.in[2];
    cols[i] = inside ? x[pl * plane + (id * g.in[1] + ih) * g.in[2] + iw] : T{};
  }
}

// The output positions o with o * s - p + k * d == i for kernel offset k: o = (i + p - k * d) / s when
// that divides evenly and lands in [0, out).
__device__ inline int64_t source(int64_t i, int64_t k, int64_t s, int64_t p, int64_t d, int64_t out) {
  const int64_t num = i + p - k * d;
  if (num < 0 || num % s != 0) return -1;
  const int64_t o = num / s;
  return o < out ? o : -1;
}

template <class T>
__global__ void __launch_bounds__(kThreads) col2im_kernel(const T* cols, T* x, int64_t total, Window g) {
  const int64_t L = g.out[0] * g.out[1] * g.out[2], K = g.k[0] * g.k[1] * g.k[2];
  const int64_t plane = g.in[0] * g.in[1] * g.in[2];
  for (int64_t i = int64_t(blockIdx.x) * kThreads + threadIdx.x; i < total; i += int64_t(gridDim.x) * kThreads) {
    const int64_t pl = i / plane;
    const Idx3 at = split3(i % plane, g.in[1], g.in[2]);
    const T* block = cols + pl * K * L;
    T acc = x[i];
    int64_t row = 0;
    for (int64_t kd = 0; kd < g.k[0]; kd++) {
      const int64_t od = source(at.a, kd, g.s[0], g.p[0], g.d[0], g.out[0]);
      for (int64_t kh = 0; kh < g.k[1]; kh++) {
        const int64_t oh = od < 0 ? -1 : source(at.b, kh, g.s[1], g.p[1], g.d[1], g.out[1]);
        for (int64_t kw = 0; kw < g.k[2]; kw++, row++) {
          if (oh < 0) continue;
          const int64_t ow = source(at.c, kw, g.s[2], g.p[2], g.d[2], g.out[2]);
          if (ow >= 0) acc = acc + block[row * L + (od * g.out[1] + oh) * g.out[2] + ow];
        }
      }
    }
    x[i] = acc;
  }
}

// the first maximum in a window's scan order wins; a NaN, once taken, stays (the CPU pooling loops' rule)
template <class T>
__device__ inline void keep_max(T v, int64_t pos, T& best, int64_t& bi) {
  if (bi < 0 || (best == best && (v > best || v != v))) {
    best = v;
    bi = pos;
  }
}

template <class T>
__global__ void __launch_bounds__(kThreads) max_pool_kernel(const T* x, T* vals, int64_t* idx, int64_t total,
                                                            Window g) {
  const int64_t L = g.out[0] * g.out[1] * g.out[2], plane = g.in[0] * g.in[1] * g.in[2];
  for (int64_t i = int64_t(blockIdx.x) * kThreads + threadIdx.x; i < total; i += int64_t(gridDim.x) * kThreads) {
    const int64_t pl = i / L;
    const Idx3 o = split3(i % L, g.out[1], g.out[2]);
    const T* src = x + pl * plane;
    T best = T(0);
    int64_t bi = -1;
    for (int64_t kd = 0; kd < g.k[0]; kd++) {
      const int64_t id = o.a * g.s[0] - g.p[0] + kd * g.d[0];
      if (id < 0 || id >= g.in[0]) continue;
      for (int64_t kh = 0; kh < g.k[1]; kh++) {
        const int64_t ih = o.b * g.s[1] - g.p[1] + kh * g.d[1];
        if (ih < 0 || ih >= g.in[1]) continue;
        for (int64_t kw = 0; kw < g.k[2]; kw++) {
          const int64_t iw = o.c * g.s[2] - g.p[2] + kw * g.d[2];
          if (iw < 0 || iw >= g.in[2]) continue;
          const int64_t pos = (id * g.in[1] + ih) * g.in[2] + iw;
          keep_max(src[pos], pos, best, bi);
        }
      }
    }
    vals[i] = best;
    idx[i] = bi;
  }
}

// adaptive windows: dim window r of `out` over `in` is [floor(r * in / out), ceil((r + 1) * in / out)); the first
// maximum in scan order wins, a NaN once taken stays (the CPU's rule)
template <class T>
__global__ void __launch_bounds__(kThreads) adaptive_max_pool_kernel(const T* x, T* vals, int64_t* idx, int64_t total,
                                                                     AdaptiveWindow w) {
  const int64_t L = w.out[0] * w.out[1] * w.out[2], plane = w.in[0] * w.in[1] * w.in[2];
  for (int64_t i = int64_t(blockIdx.x) * kThreads + threadIdx.x; i < total; i += int64_t(gridDim.x) * kThreads) {
    const int64_t pl = i / L;
    const Idx3 o = split3(i % L, w.out[1], w.out[2]);
    const T* src = x + pl * plane;
    const int64_t oa[3] = {o.a, o.b, o.c};
    int64_t lo[3], hi[3];
    for (int k = 0; k < 3; k++) {
      lo[k] = (oa[k] * w.in[k]) / w.out[k];
      hi[k] = ((oa[k] + 1) * w.in[k] + w.out[k] - 1) / w.out[k];
    }
    T best = T(0);
    int64_t bi = -1;
    for (int64_t i0 = lo[0]; i0 < hi[0]; i0++)
      for (int64_t i1 = lo[1]; i1 < hi[1]; i1++)
        for (int64_t i2 = lo[2]; i2 < hi[2]; i2++) {
          const int64_t pos = (i0 * w.in[1] + i1) * w.in[2] + i2;
          keep_max(src[pos], pos, best, bi);
        }
    vals[i] = best;
    idx[i] = bi;
  }
}

template <class T>
__global__ void __launch_bounds__(kThreads) max_pool_backward_kernel(T* gi, const T* g, const int64_t* idx,
                                                                     int64_t total, int64_t in_plane,
                                                                     int64_t out_plane, int64_t* bad) {
  for (int64_t i = int64_t(blockIdx.x) * kThreads + threadIdx.x; i < total; i += int64_t(gridDim.x) * kThreads) {
    const int64_t k = idx[i];
    if (k < 0 || k >= in_plane) {
      atomicMin(reinterpret_cast<unsigned long long*>(bad), static_cast<unsigned long long>(i));
      continue;
    }
    atomicAdd(gi + (i / out_plane) * in_plane + k, g[i]);
  }
}

}  // namespace

Status im2col(int dtype, const void* x, void* cols, int64_t planes, const Window& g, void* stream) {
  const int64_t total = planes * g.k[0] * g.k[1] * g.k[2] * g.out[0] * g.out[1] * g.out[2];
  if (total == 0) return kOk;
  return dispatch_storage(dtype, [&](auto tag) {
    using T = decltype(tag);
    im2col_kernel<T><<<grid_stride_blocks(total), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(
        static_cast<const T*>(x), static_cast<T*>(cols), total, g);
    return launch_ok() ? kOk : kCudaError;
  });
}

Status col2im(int dtype, const void* cols, void* x, int64_t planes, const Window& g, void* stream) {
  const int64_t total = planes * g.in[0] * g.in[1] * g.in[2];
  if (total == 0) return kOk;
  return dispatch<kNumeric>(dtype, [&](auto tag) {
    using T = decltype(tag);
    col2im_kernel<T><<<grid_stride_blocks(total), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(
        static_cast<const T*>(cols), static_cast<T*>(x), total, g);
    return launch_ok() ? kOk : kCudaError;
  });
}

Status max_pool(int dtype, const void* x, void* vals, int64_t* idx, int64_t planes, const Window& g, void* stream) {
  const int64_t total = planes * g.out[0] * g.out[1] * g.out[2];
  if (total == 0) return kOk;
  return dispatch<kNumeric>(dtype, [&](auto tag) {
    using T = decltype(tag);
    max_pool_kernel<T><<<grid_stride_blocks(total), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(
        static_cast<const T*>(x), static_cast<T*>(vals), idx, total, g);
    return launch_ok() ? kOk : kCudaError;
  });
}

Status adaptive_max_pool(int dtype, const void* x, void* vals, int64_t* idx, int64_t planes, const AdaptiveWindow& w,
                         void* stream) {
  const int64_t total = planes * w.out[0] * w.out[1] * w.out[2];
  if (total == 0) return kOk;
  return dispatch<kFloats>(dtype, [&](auto tag) {
    using T = decltype(tag);
    adaptive_max_pool_kernel<T><<<grid_stride_blocks(total), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(
        static_cast<const T*>(x), static_cast<T*>(vals), idx, total, w);
    return launch_ok() ? kOk : kCudaError;
  });
}

Status max_pool_backward(int dtype, void* gi, const void* g, const int64_t* idx, int64_t total, int64_t in_plane,
                         int64_t out_plane, int64_t* bad, void* stream) {
  if (total == 0) return kOk;
  return dispatch<kFloats>(dtype, [&](auto tag) {
    using T = decltype(tag);
    max_pool_backward_kernel<T><<<grid_stride_blocks(total), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(
        static_cast<T*>(gi), static_cast<const T*>(g), idx, total, in_plane, out_plane, bad);
    return launch_ok() ? kOk : kCudaError;
  });
}

}  // namespace ember::cuda_kernels
