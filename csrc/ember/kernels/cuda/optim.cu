// The fused SGD and Adam/AdamW updates on the GPU (kernels/optim.h), one thread per element, with
// the CPU loops' formulas (kernels/cpu/optim.cpp): the tensor math in the parameter's dtype, the
// per-step scalars computed in double on the host and rounded once. nvcc fuses a * b + c into one
// multiply-add, so a step agrees with the CPU's to an ulp, not always to the bit. The
// options are runtime flags here (uniform across a launch, so no divergence), where the CPU
// instantiates a loop per combination to vectorize.
#include <cmath>

#include "ember/kernels/cuda/loops.cuh"

namespace ember::cuda_kernels {
namespace {

template <class T>
__device__ inline T lerp_exact(T a, T b, T w, bool lo) { return lo ? a + w * (b - a) : b - (b - a) * (T(1) - w); }

template <class T>
__device__ inline T grad_term(T g, T p, T wd, bool maximize, bool use_wd) {
  T d = maximize ? -g : g;
  if (use_wd) d = d + wd * p;
  return d;
}

template <class T>
__global__ void __launch_bounds__(kThreads) sgd_kernel(T* p, const T* g, T* buf, int64_t n, T wd, T mom, T damp1,
                                                       T nlr, bool maximize, bool use_wd, bool first, bool nesterov) {
  for (int64_t j = int64_t(blockIdx.x) * kThreads + threadIdx.x; j < n; j += int64_t(gridDim.x) * kThreads) {
    T d = grad_term(g[j], p[j], wd, maximize, use_wd);
    if (buf) {
      const T m = first ? d : buf[j] * mom + damp1 * d;
      buf[j] = m;
      d = nesterov ? d + mom * m : m;
    }
    p[j] = p[j] + nlr * d;
  }
}

template <class T>
__global__ void __launch_bounds__(kThreads) adam_kernel(T* p, const T* g, T* m, T* v, T* vmax, int64_t n, T step_size,
                                                        T bc2_sqrt, T w1, T b2, T w2, T eps, T wd, T decay,
                                                        bool maximize, bool l2, bool decoupled, bool lo) {
  for (int64_t j = int64_t(blockIdx.x) * kThreads + threadIdx.x; j < n; j += int64_t(gridDim.x) * kThreads) {
    T pj = p[j];
    if (decoupled) pj = pj * decay;
    const T d = grad_term(g[j], pj, wd, maximize, l2);
    const T mj = lerp_exact(m[j], d, w1, lo);
    const T vj = v[j] * b2 + w2 * d * d;
    m[j] = mj;
    v[j] = vj;
    T den;
    if (vmax) {
      const T mx = vmax[j] > vj ? vmax[j] : vj;
      vmax[j] = mx;
      den = sqrt(mx) / bc2_sqrt + eps;
    } else {
      den = sqrt(vj) / bc2_sqrt + eps;
    }
    p[j] = pj - step_size * (mj / den);
  }
}

unsigned grid_for(int64_t n) {
  const int64_t blocks = (n + kThreads - 1) / kThreads;
  return unsigned(blocks < 65535 * 32 ? blocks : 65535 * 32);  // grid-stride beyond
}

}  // namespace

Status fused_sgd(int dtype, void* p, const void* g, void* buf, int64_t n, const ::ember::FusedSgdArgs& a, void* stream) {
  if (n == 0) return kOk;
  auto run = [&](auto tag) {
    using T = decltype(tag);
    sgd_kernel<T><<<grid_for(n), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(
        static_cast<T*>(p), static_cast<const T*>(g), static_cast<T*>(buf), n, T(a.weight_decay), T(a.momentum),
        T(1 - a.dampening), T(-a.lr), a.maximize, a.weight_decay != 0, a.first_step, a.nesterov);
    return launch_ok() ? kOk : kCudaError;
  };
  if (dtype == Float) return run(float{});
  if (dtype == Double) return run(double{});
  return kBadDtype;
}

Status fused_adam(int dtype, void* p, const void* g, void* m, void* v, void* vmax, int64_t n, const ::ember::FusedAdamArgs& a,
                  void* stream) {
  if (n == 0) return kOk;
  auto run = [&](auto tag) {
    using T = decltype(tag);
    const double bc1 = 1 - std::pow(a.beta1, a.step), bc2 = 1 - std::pow(a.beta2, a.step);
    const T w1 = T(1 - a.beta1);
    const bool decoupled = a.weight_decay != 0 && a.decoupled_weight_decay;
    adam_kernel<T><<<grid_for(n), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(
        static_cast<T*>(p), static_cast<const T*>(g), static_cast<T*>(m), static_cast<T*>(v), static_cast<T*>(vmax),
        n, T(a.lr / bc1), T(std::sqrt(bc2)), w1, T(a.beta2), T(1 - a.beta2), T(a.eps), T(a.weight_decay),
        T(1 - a.lr * a.weight_decay), a.maximize, a.weight_decay != 0 && !a.decoupled_weight_decay, decoupled,
        w1 < T(0.5));
    return launch_ok() ? kOk : kCudaError;
  };
  if (dtype == Float) return run(float{});
  if (dtype == Double) return run(double{});
  return kBadDtype;
}

}  // namespace ember::cuda_kernels
