// NN kernels on the GPU with the CPU kernels' semantics (kernels/cpu/isa/softmax.cpp, norm.cpp,
// kernels/cpu/nn_loss.cpp): softmax and log_softmax over the middle dim of [outer, dim, inner] and
// their backward, layer norm over rows and its backward (statistics accumulated in double, as the
// CPU), and nll_loss's pick of the target's entry per row. Float and double only: the ops compute
// float16 / bfloat16 in float32.
#include <cmath>
#include <limits>

#include "ember/kernels/cuda/loops.cuh"

namespace ember::cuda_kernels {
namespace {

// ---- block-wide reductions (kThreads threads, all of which call them)

template <class T>
__device__ T warp_sum(T v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}
// NaN wins, as the CPU's max skips nothing that would hide it from the sum afterwards
template <class T>
__device__ T max_nan(T a, T b) { return (b > a || b != b) ? b : a; }
template <class T>
__device__ T warp_max(T v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v = max_nan(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

// The sum (or max) of every thread's v, returned to all threads; `shared` holds kThreads / 32 values.
template <bool Max, class T>
__device__ T block_reduce(T v, T* shared) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  v = Max ? warp_max(v) : warp_sum(v);
  __syncthreads();  // a previous call's readers are done with `shared`
  if (lane == 0) shared[warp] = v;
  __syncthreads();
  T r = shared[0];
  for (int w = 1; w < kThreads / 32; w++) r = Max ? max_nan(r, shared[w]) : r + shared[w];
  return r;
}

template <class T>
__device__ T exp_of(T x) { return std::exp(x); }
template <class T>
__device__ T log_of(T x) { return std::log(x); }

// ---- softmax: one block per row when the reduced dim is contiguous (inner == 1), else one thread
// per (outer, inner) column walking the dim (coalesced across inner)

template <class T>
__global__ void __launch_bounds__(kThreads) softmax_rows(bool log, const T* in, T* out, int64_t d) {
  __shared__ T shared[kThreads / 32];
  const T* x = in + int64_t(blockIdx.x) * d;
  T* y = out + int64_t(blockIdx.x) * d;
  T m = -std::numeric_limits<T>::infinity();
  for (int64_t i = threadIdx.x; i < d; i += kThreads) m = max_nan(m, x[i]);
  m = block_reduce<true>(m, shared);
  if (isinf(m) && m < 0) m = 0;  // an all -inf row gives NaN, as the CPU and PyTorch
  T s = 0;
  for (int64_t i = threadIdx.x; i < d; i += kThreads) s += exp_of(x[i] - m);
  s = block_reduce<false>(s, shared);
  if (log) {
    const T lse = m + log_of(s);
    for (int64_t i = threadIdx.x; i < d; i += kThreads) y[i] = x[i] - lse;
  } else {
    const T inv = T(1) / s;
    for (int64_t i = threadIdx.x; i < d; i += kThreads) y[i] = exp_of(x[i] - m) * inv;
  }
}

template <class T>
__global__ void __launch_bounds__(kThreads) softmax_columns(bool log, const T* in, T* out, int64_t outer, int64_t d,
                                                            int64_t inner) {
  const int64_t c = int64_t(blockIdx.x) * kThreads + threadIdx.x;
  if (c >= outer * inner) return;
  const int64_t o = c / inner, i = c % inner;
  const T* x = in + o * d * inner + i;
  T* y = out + o * d * inner + i;
  T m = -std::numeric_limits<T>::infinity();
  for (int64_t k = 0; k < d; k++) m = max_nan(m, x[k * inner]);
  if (isinf(m) && m < 0) m = 0;
  T s = 0;
  for (int64_t k = 0; k < d; k++) s += exp_of(x[k * inner] - m);
  if (log) {
    const T ls = log_of(s);  // (x - m) - log(s), as the CPU's column loop rounds it
    for (int64_t k = 0; k < d; k++) y[k * inner] = x[k * inner] - m - ls;
  } else {
    for (int64_t k = 0; k < d; k++) y[k * inner] = exp_of(x[k * inner] - m) / s;
  }
}

// grad_in = y * (g - sum(g * y)) for softmax, g - exp(y) * sum(g) for log_softmax (y its output)
template <class T>
__global__ void __launch_bounds__(kThreads) softmax_backward_rows(bool log, const T* g, const T* y, T* gi, int64_t d) {
  __shared__ T shared[kThreads / 32];
  const int64_t base = int64_t(blockIdx.x) * d;
  T s = 0;
  for (int64_t i = threadIdx.x; i < d; i += kThreads) s += log ? g[base + i] : g[base + i] * y[base + i];
  s = block_reduce<false>(s, shared);
  for (int64_t i = threadIdx.x; i < d; i += kThreads)
    gi[base + i] = log ? g[base + i] - exp_of(y[base + i]) * s : y[base + i] * (g[base + i] - s);
}

template <class T>
__global__ void __launch_bounds__(kThreads) softmax_backward_columns(bool log, const T* g, const T* y, T* gi,
                                                                     int64_t outer, int64_t d, int64_t inner) {
  const int64_t c = int64_t(blockIdx.x) * kThreads + threadIdx.x;
  if (c >= outer * inner) return;
  const int64_t base = (c / inner) * d * inner + c % inner;
  T s = 0;
  for (int64_t k = 0; k < d; k++) {
    const int64_t p = base + k * inner;
    s += log ? g[p] : g[p] * y[p];
  }
  for (int64_t k = 0; k < d; k++) {
    const int64_t p = base + k * inner;
    gi[p] = log ? g[p] - exp_of(y[p]) * s : y[p] * (g[p] - s);
  }
}

// grids: one block per row up to the hardware's limit, looping beyond it
constexpr int64_t kMaxGrid = 2147483647;

template <class T>
Status softmax_typed(bool log, const void* in, void* out, int64_t outer, int64_t d, int64_t inner, cudaStream_t s) {
  const T* x = static_cast<const T*>(in);
  T* y = static_cast<T*>(out);
  if (inner == 1) {
    for (int64_t r0 = 0; r0 < outer; r0 += kMaxGrid) {
      const int64_t n = outer - r0 < kMaxGrid ? outer - r0 : kMaxGrid;
      softmax_rows<T><<<unsigned(n), kThreads, 0, s>>>(log, x + r0 * d, y + r0 * d, d);
    }
  } else {
    const int64_t cols = outer * inner;
    softmax_columns<T><<<blocks_for(cols), kThreads, 0, s>>>(log, x, y, outer, d, inner);
  }
  return launch_ok() ? kOk : kCudaError;
}

template <class T>
Status softmax_backward_typed(bool log, const void* gv, const void* yv, void* giv, int64_t outer, int64_t d,
                              int64_t inner, cudaStream_t s) {
  const T* g = static_cast<const T*>(gv);
  const T* y = static_cast<const T*>(yv);
  T* gi = static_cast<T*>(giv);
  if (inner == 1) {
    for (int64_t r0 = 0; r0 < outer; r0 += kMaxGrid) {
      const int64_t n = outer - r0 < kMaxGrid ? outer - r0 : kMaxGrid;
      softmax_backward_rows<T><<<unsigned(n), kThreads, 0, s>>>(log, g + r0 * d, y + r0 * d, gi + r0 * d, d);
    }
  } else {
    const int64_t cols = outer * inner;
    softmax_backward_columns<T><<<blocks_for(cols), kThreads, 0, s>>>(log, g, y, gi, outer,
                                                                                                 d, inner);
  }
  return launch_ok() ? kOk : kCudaError;
}

// ---- layer norm: one block per row; statistics in double (two passes over the row)

template <class T>
__global__ void __launch_bounds__(kThreads) layer_norm_rows(const T* x, const T* w, const T* b, T* y, T* mean,
                                                            T* rstd, int64_t cols, double eps) {
  __shared__ double shared[kThreads / 32];
  const int64_t r = blockIdx.x;
  const T* xr = x + r * cols;
  T* yr = y + r * cols;
  double s = 0;
  for (int64_t i = threadIdx.x; i < cols; i += kThreads) s += double(xr[i]);
  const double m = block_reduce<false>(s, shared) / double(cols);
  double v = 0;
  for (int64_t i = threadIdx.x; i < cols; i += kThreads) {
    const double c = double(xr[i]) - m;
    v += c * c;
  }
  v = block_reduce<false>(v, shared) / double(cols);
  const double rs = 1.0 / sqrt(v + eps);
  if (threadIdx.x == 0) {
    mean[r] = T(m);
    rstd[r] = T(rs);
  }
  const T tm = T(m), trs = T(rs);
  for (int64_t i = threadIdx.x; i < cols; i += kThreads) {
    T o = (xr[i] - tm) * trs;
    if (w) o = o * w[i];
    if (b) o = o + b[i];
    yr[i] = o;
  }
}

// dx = rstd * (dy * w - mean(dy * w) - xhat * mean(dy * w * xhat))
template <class T>
__global__ void __launch_bounds__(kThreads) layer_norm_backward_rows(const T* dy, const T* x, const T* mean,
                                                                     const T* rstd, const T* w, T* dx, int64_t cols) {
  __shared__ double shared[kThreads / 32];
  const int64_t r = blockIdx.x;
  const T* dyr = dy + r * cols;
  const T* xr = x + r * cols;
  T* dxr = dx + r * cols;
  const double m = double(mean[r]), rs = double(rstd[r]);
  double s1 = 0, s2 = 0;
  for (int64_t i = threadIdx.x; i < cols; i += kThreads) {
    const double g = double(dyr[i]) * (w ? double(w[i]) : 1.0);
    s1 += g;
    s2 += g * (double(xr[i]) - m);
  }
  s1 = block_reduce<false>(s1, shared);
  s2 = block_reduce<false>(s2, shared) * rs;
  const double inv_n = 1.0 / double(cols);
  const T a = T(rs), c1 = T(s1 * inv_n), c2 = T(s2 * inv_n), tm = T(m);
  for (int64_t i = threadIdx.x; i < cols; i += kThreads) {
    const T g = w ? dyr[i] * w[i] : dyr[i];
    dxr[i] = a * (g - c1 - (xr[i] - tm) * a * c2);
  }
}

// dw[c] = sum_r dy * xhat, db[c] = sum_r dy, in double: one thread per column, walking the rows
// (coalesced across columns)
template <class T>
__global__ void __launch_bounds__(kThreads) layer_norm_param_grads(const T* dy, const T* x, const T* mean,
                                                                   const T* rstd, T* dw, T* db, int64_t rows,
                                                                   int64_t cols) {
  const int64_t c = int64_t(blockIdx.x) * kThreads + threadIdx.x;
  if (c >= cols) return;
  double sw = 0, sb = 0;
  for (int64_t r = 0; r < rows; r++) {
    const double g = double(dy[r * cols + c]);
    sb += g;
    if (dw) sw += g * (double(x[r * cols + c]) - double(mean[r])) * double(rstd[r]);
  }
  if (dw) dw[c] = T(sw);
  if (db) db[c] = T(sb);
}

// ---- batch norm over contiguous [n, c, s]: per-channel statistics and sums in double (one block per
// channel, two passes as the CPU), the elementwise passes in the data's dtype, and the per-channel folds
// with the CPU's formulas (kernels/cpu/nn_norm.cpp) in double. nvcc contracts a * b + c into one fused
// multiply-add where the CPU build may round twice: results agree to an ulp, not always to the bit.

template <class T>
__global__ void __launch_bounds__(kThreads) bn_stats(const T* x, double* mean, double* var, int64_t n, int64_t c,
                                                     int64_t s) {
  __shared__ double shared[kThreads / 32];
  const int64_t ch = blockIdx.x, count = n * s;
  double sum = 0;
  for (int64_t j = threadIdx.x; j < count; j += kThreads) sum += double(x[((j / s) * c + ch) * s + j % s]);
  const double m = count ? block_reduce<false>(sum, shared) / double(count) : 0.0;
  double v = 0;
  for (int64_t j = threadIdx.x; j < count; j += kThreads) {
    const double d = double(x[((j / s) * c + ch) * s + j % s]) - m;
    v += d * d;
  }
  v = block_reduce<false>(v, shared);
  if (threadIdx.x == 0) {
    mean[ch] = m;
    var[ch] = count ? v / double(count) : 0.0;
  }
}

template <class T>
__global__ void __launch_bounds__(kThreads) bn_apply(const T* x, const double* a, const double* b, T* y, int64_t total,
                                                     int64_t c, int64_t s) {
  for (int64_t i = int64_t(blockIdx.x) * kThreads + threadIdx.x; i < total; i += int64_t(gridDim.x) * kThreads) {
    const int64_t ch = (i / s) % c;
    y[i] = x[i] * T(a[ch]) + T(b[ch]);
  }
}

template <class T>
__global__ void __launch_bounds__(kThreads) bn_backward_reduce(const T* dy, const T* x, const double* mean,
                                                               double* sum_dy, double* sum_dy_xmu, int64_t n,
                                                               int64_t c, int64_t s) {
  __shared__ double shared[kThreads / 32];
  const int64_t ch = blockIdx.x, count = n * s;
  const double m = mean[ch];
  double s1 = 0, s2 = 0;
  for (int64_t j = threadIdx.x; j < count; j += kThreads) {
    const int64_t at = ((j / s) * c + ch) * s + j % s;
    const double g = double(dy[at]);
    s1 += g;
    s2 += g * (double(x[at]) - m);
  }
  s1 = block_reduce<false>(s1, shared);
  s2 = block_reduce<false>(s2, shared);
  if (threadIdx.x == 0) {
    sum_dy[ch] = s1;
    sum_dy_xmu[ch] = s2;
  }
}

template <class T>
__global__ void __launch_bounds__(kThreads) bn_backward_apply(const T* dy, const T* x, const double* mean,
                                                              const double* k1, const double* k2, const double* k3,
                                                              T* dx, int64_t total, int64_t c, int64_t s) {
  for (int64_t i = int64_t(blockIdx.x) * kThreads + threadIdx.x; i < total; i += int64_t(gridDim.x) * kThreads) {
    const int64_t ch = (i / s) % c;
    dx[i] = dy[i] * T(k1[ch]) + (x[i] - T(mean[ch])) * T(k2[ch]) + T(k3[ch]);
  }
}

__global__ void bn_fold(const double* mean, const double* var, const double* w, const double* b, double eps,
                        double* invstd, double* scale, double* shift, int64_t c) {
  const int64_t ch = int64_t(blockIdx.x) * kThreads + threadIdx.x;
  if (ch >= c) return;
  const double is = 1.0 / sqrt(var[ch] + eps);
  invstd[ch] = is;
  const double a = (w ? w[ch] : 1.0) * is;
  scale[ch] = a;
  shift[ch] = (b ? b[ch] : 0.0) - mean[ch] * a;
}

__global__ void bn_backward_fold(const double* invstd, const double* w, const double* s1, const double* s2, double M,
                                 bool training, double* k1, double* k2, double* k3, int64_t c) {
  const int64_t ch = int64_t(blockIdx.x) * kThreads + threadIdx.x;
  if (ch >= c) return;
  const double wv = w ? w[ch] : 1.0, is = invstd[ch];
  k1[ch] = wv * is;
  k2[ch] = training ? -wv * is * is * is * s2[ch] / M : 0.0;
  k3[ch] = training ? -wv * is * s1[ch] / M : 0.0;
}

// ---- nll_loss: out[i] = -w[t_i] * self[i, t_i]; a target outside [0, C) lowers *bad to its row

__device__ inline bool target_ok(int64_t t, int64_t C, int64_t ignore, int64_t row, int64_t* bad) {
  if (t == ignore) return false;
  if (t < 0 || t >= C) {
    atomicMin(reinterpret_cast<unsigned long long*>(bad), static_cast<unsigned long long>(row));
    return false;
  }
  return true;
}

template <class T>
__global__ void __launch_bounds__(kThreads) nll_pick_kernel(T* out, const T* self, int64_t rs, int64_t cs,
                                                            const int64_t* target, const double* weight, int64_t R,
                                                            int64_t C, int64_t ignore, int64_t* bad) {
  const int64_t i = int64_t(blockIdx.x) * kThreads + threadIdx.x;
  if (i >= R) return;
  const int64_t t = target[i];
  if (!target_ok(t, C, ignore, i, bad)) return;
  const double w = weight ? weight[t] : 1.0;
  out[i] = cast_to<T>(-w * cast_to<double>(self[i * rs + t * cs]));
}

template <class T>
__global__ void __launch_bounds__(kThreads) nll_pick_backward_kernel(T* gi, const double* g, const int64_t* target,
                                                                     const double* weight, int64_t R, int64_t C,
                                                                     int64_t ignore, int64_t* bad) {
  const int64_t i = int64_t(blockIdx.x) * kThreads + threadIdx.x;
  if (i >= R) return;
  const int64_t t = target[i];
  if (!target_ok(t, C, ignore, i, bad)) return;
  const double w = weight ? weight[t] : 1.0;
  gi[i * C + t] = cast_to<T>(-w * g[i]);
}

// fn(T{}) for the floating dtypes the loss takes (the 16-bit ones as their bit patterns)
template <class Fn>
Status dispatch_loss(int dt, Fn&& fn) {
  switch (dt) {
    case Float: return fn(float{});
    case Double: return fn(double{});
    case Half: return fn(HalfBits{});
    case BFloat16: return fn(BFloat16Bits{});
    default: return kBadDtype;
  }
}

// one block per channel (gridDim.x may reach 2**31 - 1)
bool channels_fit(int64_t c) { return c < 2147483647; }  // else kTooLarge

}  // namespace

Status softmax(bool log, int dtype, const void* in, void* out, int64_t outer, int64_t dim, int64_t inner,
               void* stream) {
  cudaStream_t s = static_cast<cudaStream_t>(stream);
  return dispatch<kFloats>(dtype, [&](auto tag) { return softmax_typed<decltype(tag)>(log, in, out, outer, dim, inner, s); });
}

Status softmax_backward(bool log, int dtype, const void* grad, const void* out, void* grad_in, int64_t outer,
                        int64_t dim, int64_t inner, void* stream) {
  cudaStream_t s = static_cast<cudaStream_t>(stream);
  return dispatch<kFloats>(dtype, [&](auto tag) { return softmax_backward_typed<decltype(tag)>(log, grad, out, grad_in, outer, dim, inner, s); });
}

template <class T>
Status layer_norm_typed(const void* x, const void* w, const void* b, void* y, void* mean, void* rstd, int64_t rows,
                        int64_t cols, double eps, cudaStream_t s) {
  for (int64_t r0 = 0; r0 < rows; r0 += kMaxGrid) {
    const int64_t n = rows - r0 < kMaxGrid ? rows - r0 : kMaxGrid;
    layer_norm_rows<T><<<unsigned(n), kThreads, 0, s>>>(static_cast<const T*>(x) + r0 * cols, static_cast<const T*>(w),
                                                        static_cast<const T*>(b), static_cast<T*>(y) + r0 * cols,
                                                        static_cast<T*>(mean) + r0, static_cast<T*>(rstd) + r0, cols,
                                                        eps);
  }
  return launch_ok() ? kOk : kCudaError;
}

Status layer_norm(int dtype, const void* x, const void* w, const void* b, void* y, void* mean, void* rstd,
                  int64_t rows, int64_t cols, double eps, void* stream) {
  cudaStream_t s = static_cast<cudaStream_t>(stream);
  return dispatch<kFloats>(dtype, [&](auto tag) { return layer_norm_typed<decltype(tag)>(x, w, b, y, mean, rstd, rows, cols, eps, s); });
}

template <class T>
Status layer_norm_backward_typed(const void* dyv, const void* xv, const void* meanv, const void* rstdv, const void* wv,
                                 void* dxv, void* dwv, void* dbv, int64_t rows, int64_t cols, cudaStream_t s) {
  const T *dy = static_cast<const T*>(dyv), *x = static_cast<const T*>(xv);
  const T *mean = static_cast<const T*>(meanv), *rstd = static_cast<const T*>(rstdv), *w = static_cast<const T*>(wv);
  if (dxv) {
    for (int64_t r0 = 0; r0 < rows; r0 += kMaxGrid) {
      const int64_t n = rows - r0 < kMaxGrid ? rows - r0 : kMaxGrid;
      layer_norm_backward_rows<T><<<unsigned(n), kThreads, 0, s>>>(dy + r0 * cols, x + r0 * cols, mean + r0,
                                                                   rstd + r0, w, static_cast<T*>(dxv) + r0 * cols,
                                                                   cols);
    }
  }
  if (dwv || dbv)
    layer_norm_param_grads<T><<<blocks_for(cols), kThreads, 0, s>>>(dy, x, mean, rstd, static_cast<T*>(dwv),
                                                                    static_cast<T*>(dbv), rows, cols);
  return launch_ok() ? kOk : kCudaError;
}

Status layer_norm_backward(int dtype, const void* dy, const void* x, const void* mean, const void* rstd,
                           const void* w, void* dx, void* dw, void* db, int64_t rows, int64_t cols, void* stream) {
  cudaStream_t s = static_cast<cudaStream_t>(stream);
  return dispatch<kFloats>(dtype, [&](auto tag) { return layer_norm_backward_typed<decltype(tag)>(dy, x, mean, rstd, w, dx, dw, db, rows, cols, s); });
}

Status nll_pick(int dtype, void* out, const void* self, int64_t rs, int64_t cs, const int64_t* target,
                const double* weight, int64_t R, int64_t C, int64_t ignore, int64_t* bad, void* stream) {
  if (R == 0) return kOk;
  return dispatch_loss(dtype, [&](auto tag) {
    using T = decltype(tag);
    nll_pick_kernel<T><<<blocks_for(R), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(
        static_cast<T*>(out), static_cast<const T*>(self), rs, cs, target, weight, R, C, ignore, bad);
    return launch_ok() ? kOk : kCudaError;
  });
}

Status nll_pick_backward(int dtype, void* grad_input, const double* g, const int64_t* target, const double* weight,
                         int64_t R, int64_t C, int64_t ignore, int64_t* bad, void* stream) {
  if (R == 0) return kOk;
  return dispatch_loss(dtype, [&](auto tag) {
    using T = decltype(tag);
    nll_pick_backward_kernel<T><<<blocks_for(R), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(
        static_cast<T*>(grad_input), g, target, weight, R, C, ignore, bad);
    return launch_ok() ? kOk : kCudaError;
  });
}

Status batch_norm_stats(int dtype, const void* x, double* mean, double* var, int64_t n, int64_t c, int64_t s,
                        void* stream) {
  if (c == 0) return kOk;
  if (!channels_fit(c)) return kTooLarge;
  return dispatch<kFloats>(dtype, [&](auto tag) {
    using T = decltype(tag);
    bn_stats<T><<<unsigned(c), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(static_cast<const T*>(x), mean, var,
                                                                                n, c, s);
    return launch_ok() ? kOk : kCudaError;
  });
}

Status batch_norm_apply(int dtype, const void* x, const double* a, const double* b, void* y, int64_t n, int64_t c,
                        int64_t s, void* stream) {
  const int64_t total = n * c * s;
  if (total == 0) return kOk;
  return dispatch<kFloats>(dtype, [&](auto tag) {
    using T = decltype(tag);
    bn_apply<T><<<grid_stride_blocks(total), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(
        static_cast<const T*>(x), a, b, static_cast<T*>(y), total, c, s);
    return launch_ok() ? kOk : kCudaError;
  });
}

Status batch_norm_backward_reduce(int dtype, const void* dy, const void* x, const double* mean, double* sum_dy,
                                  double* sum_dy_xmu, int64_t n, int64_t c, int64_t s, void* stream) {
  if (c == 0) return kOk;
  if (!channels_fit(c)) return kTooLarge;
  return dispatch<kFloats>(dtype, [&](auto tag) {
    using T = decltype(tag);
    bn_backward_reduce<T><<<unsigned(c), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(
        static_cast<const T*>(dy), static_cast<const T*>(x), mean, sum_dy, sum_dy_xmu, n, c, s);
    return launch_ok() ? kOk : kCudaError;
  });
}

Status batch_norm_backward_apply(int dtype, const void* dy, const void* x, const double* mean, const double* k1,
                                 const double* k2, const double* k3, void* dx, int64_t n, int64_t c, int64_t s,
                                 void* stream) {
  const int64_t total = n * c * s;
  if (total == 0) return kOk;
  return dispatch<kFloats>(dtype, [&](auto tag) {
    using T = decltype(tag);
    bn_backward_apply<T><<<grid_stride_blocks(total), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(
        static_cast<const T*>(dy), static_cast<const T*>(x), mean, k1, k2, k3, static_cast<T*>(dx), total, c, s);
    return launch_ok() ? kOk : kCudaError;
  });
}

Status batch_norm_fold(const double* mean, const double* var, const double* w, const double* b, double eps,
                       double* invstd, double* scale, double* shift, int64_t c, void* stream) {
  if (c == 0) return kOk;
  bn_fold<<<blocks_for(c), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(mean, var, w, b, eps, invstd, scale, shift, c);
  return launch_ok() ? kOk : kCudaError;
}

Status batch_norm_backward_fold(const double* invstd, const double* w, const double* sum_dy, const double* sum_dy_xmu,
                                double count, bool training, double* k1, double* k2, double* k3, int64_t c,
                                void* stream) {
  if (c == 0) return kOk;
  bn_backward_fold<<<blocks_for(c), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(invstd, w, sum_dy, sum_dy_xmu,
                                                                                      count, training, k1, k2, k3, c);
  return launch_ok() ? kOk : kCudaError;
}

}  // namespace ember::cuda_kernels
