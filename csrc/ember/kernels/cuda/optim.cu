// The fused optimizer updates on the GPU (kernels/optim.h: SGD, Adam/AdamW, RMSprop, Adagrad, Adadelta,
// Adamax, NAdam, RAdam), one thread per element, with
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

// Adam's first part, shared with NAdam and RAdam: decoupled decay, the gradient term, both moments stored
template <class T>
__device__ inline void adam_moments(T gj, T& pj, T& d, T* m, T* v, T& mj, T& vj, T w1, T b2, T w2, T wd, T decay,
                                    bool maximize, bool l2, bool decoupled, bool lo) {
  if (decoupled) pj = pj * decay;
  d = grad_term(gj, pj, wd, maximize, l2);
  mj = lerp_exact(*m, d, w1, lo);
  vj = *v * b2 + w2 * d * d;
  *m = mj;
  *v = vj;
}

template <class T>
__global__ void __launch_bounds__(kThreads) adam_kernel(T* p, const T* g, T* m, T* v, T* vmax, int64_t n, T step_size,
                                                        T bc2_sqrt, T w1, T b2, T w2, T eps, T wd, T decay,
                                                        bool maximize, bool l2, bool decoupled, bool lo) {
  for (int64_t j = int64_t(blockIdx.x) * kThreads + threadIdx.x; j < n; j += int64_t(gridDim.x) * kThreads) {
    T pj = p[j], d, mj, vj;
    adam_moments(g[j], pj, d, m + j, v + j, mj, vj, w1, b2, w2, wd, decay, maximize, l2, decoupled, lo);
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

template <class T>
__global__ void __launch_bounds__(kThreads) rmsprop_kernel(T* p, const T* g, T* sq, T* gavg, T* buf, int64_t n, T a,
                                                           T w, T eps, T wd, T mom, T nlr, bool maximize, bool use_wd,
                                                           bool lo) {
  for (int64_t j = int64_t(blockIdx.x) * kThreads + threadIdx.x; j < n; j += int64_t(gridDim.x) * kThreads) {
    const T d = grad_term(g[j], p[j], wd, maximize, use_wd);
    const T sj = sq[j] * a + w * d * d;
    sq[j] = sj;
    T avg;
    if (gavg) {
      const T gj = lerp_exact(gavg[j], d, w, lo);
      gavg[j] = gj;
      avg = sqrt(sj + T(-1) * gj * gj);
    } else {
      avg = sqrt(sj);
    }
    avg = avg + eps;
    if (buf) {
      const T bj = buf[j] * mom + d / avg;
      buf[j] = bj;
      p[j] = p[j] + nlr * bj;
    } else {
      p[j] = p[j] + nlr * (d / avg);
    }
  }
}

template <class T>
__global__ void __launch_bounds__(kThreads) adagrad_kernel(T* p, const T* g, T* sum, int64_t n, T nclr, T eps, T wd,
                                                           bool maximize, bool use_wd) {
  for (int64_t j = int64_t(blockIdx.x) * kThreads + threadIdx.x; j < n; j += int64_t(gridDim.x) * kThreads) {
    const T d = grad_term(g[j], p[j], wd, maximize, use_wd);
    const T sj = sum[j] + d * d;
    sum[j] = sj;
    p[j] = p[j] + nclr * (d / (sqrt(sj) + eps));
  }
}

template <class T>
__global__ void __launch_bounds__(kThreads) adadelta_kernel(T* p, const T* g, T* sq, T* acc, int64_t n, T r, T w,
                                                            T eps, T wd, T nlr, bool maximize, bool use_wd) {
  for (int64_t j = int64_t(blockIdx.x) * kThreads + threadIdx.x; j < n; j += int64_t(gridDim.x) * kThreads) {
    const T d = grad_term(g[j], p[j], wd, maximize, use_wd);
    const T sj = sq[j] * r + w * d * d;
    sq[j] = sj;
    const T std_ = sqrt(sj + eps);
    T delta = sqrt(acc[j] + eps);
    delta = delta / std_ * d;
    acc[j] = acc[j] * r + w * delta * delta;
    p[j] = p[j] + nlr * delta;
  }
}

template <class T>
__global__ void __launch_bounds__(kThreads) adamax_kernel(T* p, const T* g, T* m, T* u, int64_t n, T nclr, T w1, T b2,
                                                          T eps, T wd, bool maximize, bool use_wd, bool lo) {
  for (int64_t j = int64_t(blockIdx.x) * kThreads + threadIdx.x; j < n; j += int64_t(gridDim.x) * kThreads) {
    const T d = grad_term(g[j], p[j], wd, maximize, use_wd);
    const T mj = lerp_exact(m[j], d, w1, lo);
    m[j] = mj;
    const T a = u[j] * b2, c = abs(d) + eps;
    T uj = (a > c) ? a : c;  // torch.maximum: a NaN on either side propagates
    uj = (a != a) ? a : uj;
    uj = (c != c) ? c : uj;
    u[j] = uj;
    p[j] = p[j] + nclr * (mj / uj);
  }
}

template <class T>
__global__ void __launch_bounds__(kThreads) nadam_kernel(T* p, const T* g, T* m, T* v, int64_t n, T c_grad, T c_avg,
                                                         T bc2, T w1, T b2, T w2, T eps, T wd, T decay, bool maximize,
                                                         bool l2, bool decoupled, bool lo) {
  for (int64_t j = int64_t(blockIdx.x) * kThreads + threadIdx.x; j < n; j += int64_t(gridDim.x) * kThreads) {
    T pj = p[j], d, mj, vj;
    adam_moments(g[j], pj, d, m + j, v + j, mj, vj, w1, b2, w2, wd, decay, maximize, l2, decoupled, lo);
    const T den = sqrt(vj / bc2) + eps;
    pj = pj + c_grad * (d / den);
    p[j] = pj + c_avg * (mj / den);
  }
}

template <class T>
__global__ void __launch_bounds__(kThreads) radam_kernel(T* p, const T* g, T* m, T* v, int64_t n, T bc1, T lr,
                                                         T bc2_sqrt, T rect_f, T w1, T b2, T w2, T eps, T wd, T decay,
                                                         bool maximize, bool l2, bool decoupled, bool rect, bool lo) {
  for (int64_t j = int64_t(blockIdx.x) * kThreads + threadIdx.x; j < n; j += int64_t(gridDim.x) * kThreads) {
    T pj = p[j], d, mj, vj;
    adam_moments(g[j], pj, d, m + j, v + j, mj, vj, w1, b2, w2, wd, decay, maximize, l2, decoupled, lo);
    T upd = mj / bc1 * lr;
    if (rect) upd = upd * (bc2_sqrt / (sqrt(vj) + eps)) * rect_f;
    p[j] = pj - upd;
  }
}

}  // namespace

Status fused_sgd(int dtype, void* p, const void* g, void* buf, int64_t n, const ::ember::FusedSgdArgs& a, void* stream) {
  if (n == 0) return kOk;
  auto run = [&](auto tag) {
    using T = decltype(tag);
    sgd_kernel<T><<<grid_stride_blocks(n), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(
        static_cast<T*>(p), static_cast<const T*>(g), static_cast<T*>(buf), n, T(a.weight_decay), T(a.momentum),
        T(1 - a.dampening), T(-a.lr), a.maximize, a.weight_decay != 0, a.first_step, a.nesterov);
    return launch_ok() ? kOk : kCudaError;
  };
  return dispatch<kFloats>(dtype, run);
}

Status fused_adam(int dtype, void* p, const void* g, void* m, void* v, void* vmax, int64_t n, const ::ember::FusedAdamArgs& a,
                  void* stream) {
  if (n == 0) return kOk;
  auto run = [&](auto tag) {
    using T = decltype(tag);
    const double bc1 = 1 - std::pow(a.beta1, a.step), bc2 = 1 - std::pow(a.beta2, a.step);
    const T w1 = T(1 - a.beta1);
    const bool decoupled = a.weight_decay != 0 && a.decoupled_weight_decay;
    adam_kernel<T><<<grid_stride_blocks(n), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(
        static_cast<T*>(p), static_cast<const T*>(g), static_cast<T*>(m), static_cast<T*>(v), static_cast<T*>(vmax),
        n, T(a.lr / bc1), T(std::sqrt(bc2)), w1, T(a.beta2), T(1 - a.beta2), T(a.eps), T(a.weight_decay),
        T(1 - a.lr * a.weight_decay), a.maximize, a.weight_decay != 0 && !a.decoupled_weight_decay, decoupled,
        w1 < T(0.5));
    return launch_ok() ? kOk : kCudaError;
  };
  return dispatch<kFloats>(dtype, run);
}

// the launchers below compute the per-step scalars in double as the CPU's entries do, and round them once
#define EMBER_OPTIM_RUN(body)                                      \
  if (n == 0) return kOk;                                          \
  auto run = [&](auto tag) {                                       \
    using T = decltype(tag);                                       \
    body;                                                          \
    return launch_ok() ? kOk : kCudaError;                         \
  };                                                               \
  return dispatch<kFloats>(dtype, run)

#define EMBER_OPTIM_GRID grid_stride_blocks(n), kThreads, 0, static_cast<cudaStream_t>(stream)

Status fused_rmsprop(int dtype, void* p, const void* g, void* sq, void* gavg, void* buf, int64_t n,
                     const ::ember::FusedRmspropArgs& a, void* stream) {
  EMBER_OPTIM_RUN((rmsprop_kernel<T><<<EMBER_OPTIM_GRID>>>(
      static_cast<T*>(p), static_cast<const T*>(g), static_cast<T*>(sq), static_cast<T*>(gavg), static_cast<T*>(buf),
      n, T(a.alpha), T(1 - a.alpha), T(a.eps), T(a.weight_decay), T(a.momentum), T(-a.lr), a.maximize,
      a.weight_decay != 0, T(1 - a.alpha) < T(0.5))));
}

Status fused_adagrad(int dtype, void* p, const void* g, void* sum, int64_t n, const ::ember::FusedAdagradArgs& a,
                     void* stream) {
  EMBER_OPTIM_RUN((adagrad_kernel<T><<<EMBER_OPTIM_GRID>>>(
      static_cast<T*>(p), static_cast<const T*>(g), static_cast<T*>(sum), n,
      T(-(a.lr / (1 + (a.step - 1) * a.lr_decay))), T(a.eps), T(a.weight_decay), a.maximize, a.weight_decay != 0)));
}

Status fused_adadelta(int dtype, void* p, const void* g, void* sq, void* acc, int64_t n,
                      const ::ember::FusedAdadeltaArgs& a, void* stream) {
  EMBER_OPTIM_RUN((adadelta_kernel<T><<<EMBER_OPTIM_GRID>>>(
      static_cast<T*>(p), static_cast<const T*>(g), static_cast<T*>(sq), static_cast<T*>(acc), n, T(a.rho),
      T(1 - a.rho), T(a.eps), T(a.weight_decay), T(-a.lr), a.maximize, a.weight_decay != 0)));
}

Status fused_adamax(int dtype, void* p, const void* g, void* m, void* u, int64_t n, const ::ember::FusedAdamaxArgs& a,
                    void* stream) {
  EMBER_OPTIM_RUN((adamax_kernel<T><<<EMBER_OPTIM_GRID>>>(
      static_cast<T*>(p), static_cast<const T*>(g), static_cast<T*>(m), static_cast<T*>(u), n,
      T(-(a.lr / (1 - std::pow(a.beta1, a.step)))), T(1 - a.beta1), T(a.beta2), T(a.eps), T(a.weight_decay),
      a.maximize, a.weight_decay != 0, T(1 - a.beta1) < T(0.5))));
}

Status fused_nadam(int dtype, void* p, const void* g, void* m, void* v, int64_t n, const ::ember::FusedNadamArgs& a,
                   void* stream) {
  const double bc2 = 1 - std::pow(a.beta2, a.step), mu_prod_next = a.mu_product * a.mu_next;
  EMBER_OPTIM_RUN((nadam_kernel<T><<<EMBER_OPTIM_GRID>>>(
      static_cast<T*>(p), static_cast<const T*>(g), static_cast<T*>(m), static_cast<T*>(v), n,
      T(-a.lr * (1.0 - a.mu) / (1.0 - a.mu_product)), T((-a.lr * a.mu_next) / (1.0 - mu_prod_next)), T(bc2),
      T(1 - a.beta1), T(a.beta2), T(1 - a.beta2), T(a.eps), T(a.weight_decay), T(1 - a.lr * a.weight_decay),
      a.maximize, a.weight_decay != 0 && !a.decoupled_weight_decay, a.weight_decay != 0 && a.decoupled_weight_decay,
      T(1 - a.beta1) < T(0.5))));
}

Status fused_radam(int dtype, void* p, const void* g, void* m, void* v, int64_t n, const ::ember::FusedRadamArgs& a,
                   void* stream) {
  const double step = a.step, beta2 = a.beta2;
  const double bc1 = 1 - std::pow(a.beta1, step), bc2 = 1 - std::pow(beta2, step);
  const double rho_inf = 2 / (1 - beta2) - 1;
  const double rho_t = rho_inf - 2 * step * std::pow(beta2, step) / bc2;
  const bool rect = rho_t > 5.0;
  const double r = rect ? std::sqrt((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) : 0;
  EMBER_OPTIM_RUN((radam_kernel<T><<<EMBER_OPTIM_GRID>>>(
      static_cast<T*>(p), static_cast<const T*>(g), static_cast<T*>(m), static_cast<T*>(v), n, T(bc1), T(a.lr),
      T(std::sqrt(bc2)), T(r), T(1 - a.beta1), T(beta2), T(1 - beta2), T(a.eps), T(a.weight_decay),
      T(1 - a.lr * a.weight_decay), a.maximize, a.weight_decay != 0 && !a.decoupled_weight_decay,
      a.weight_decay != 0 && a.decoupled_weight_decay, rect, T(1 - a.beta1) < T(0.5))));
}

#undef EMBER_OPTIM_GRID
#undef EMBER_OPTIM_RUN

}  // namespace ember::cuda_kernels
