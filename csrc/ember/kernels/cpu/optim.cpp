// CPU entries of the fused optimizer updates (kernels/optim.h): per tensor, a plain loop over
// contiguous float/double data that the compiler vectorizes, split across threads for large
// tensors. The formulas follow PyTorch's single-tensor reference implementations step by step
// (same rounding points: the tensor math runs in the tensor's dtype, the per-step scalars in
// double), so trajectories match torch.optim's to float precision. Built with -fno-math-errno
// (CMakeLists.txt) so the loops that call sqrt vectorize.
#include <cmath>
#include <type_traits>

#include "ember/kernels/optim.h"
#include "ember/parallel/parallel.h"

namespace ember {

namespace {

// Parallel loop over [0, n) for elementwise updates.
template <class F>
void loop(int64_t n, F&& f) {
  parallel_for(0, n, kGrainSize, [&](int64_t b, int64_t e) { f(b, e); });
}

// torch.lerp's formula (exact at both ends): a + w (b - a) for w < 1/2, else b - (b - a)(1 - w).
// LO: whether w < 1/2 (known per call, so the loops carry no branch).
template <bool LO, class T>
inline T lerp(T a, T b, T w) {
  if constexpr (LO) return a + w * (b - a);
  else return b - (b - a) * (T(1) - w);
}

// Calls f(std::bool_constant<b1>{}, std::bool_constant<b2>{}, ...): the update loops are
// instantiated per combination of options, so their bodies are branch-free and vectorize.
template <class F>
void with_flags(F&& f) { f(); }
template <class F, class... Rest>
void with_flags(F&& f, bool b, Rest... rest) {
  if (b) with_flags([&](auto... t) { f(std::true_type{}, t...); }, rest...);
  else with_flags([&](auto... t) { f(std::false_type{}, t...); }, rest...);
}

// ---- the per-element update loops. Everything is passed by value and the arrays are
// __restrict, so the compiler keeps the scalars in registers and vectorizes.
#define R __restrict

// The gradient term every update starts from: negated when maximizing, plus L2 weight decay.
template <bool MAX, bool WD, class T>
inline T grad_term(T g, T p, T wd) {
  T d = MAX ? -g : g;
  if constexpr (WD) d = d + wd * p;
  return d;
}

// Adam, NAdam and RAdam's shared first part of an element's update: the parameter after decoupled
// decay, the gradient term (L2 on the decayed parameter), and both moments, stored back.
template <bool MAX, bool L2, bool DEC, bool LO, class T>
inline void adam_moments(T gj, T& pj, T& d, T* mj_io, T* vj_io, T& mj, T& vj, T w1, T b2, T w2, T wd, T decay) {
  if constexpr (DEC) pj = pj * decay;
  d = grad_term<MAX, L2>(gj, pj, wd);
  mj = lerp<LO>(*mj_io, d, w1);
  vj = *vj_io * b2 + w2 * d * d;
  *mj_io = mj;
  *vj_io = vj;
}

template <bool MAX, bool WD, bool BUF, bool FIRST, bool NEST, class T>
void sgd_kernel(int64_t b, int64_t e, T* R p, const T* R g, T* R buf, T wd, T mom, T damp1, T nlr) {
  for (int64_t j = b; j < e; j++) {
    T d = grad_term<MAX, WD>(g[j], p[j], wd);
    if constexpr (BUF) {
      T m;
      if constexpr (FIRST) m = d;
      else m = buf[j] * mom + damp1 * d;
      buf[j] = m;
      if constexpr (NEST) d = d + mom * m;
      else d = m;
    }
    p[j] = p[j] + nlr * d;
  }
}

// Adam, and NAdam / RAdam's shared first part, run by adam_kernel's callers
template <bool MAX, bool L2, bool DEC, bool AMS, bool LO, class T>
void adam_kernel(int64_t b, int64_t e, T* R p, const T* R g, T* R m, T* R v, T* R vmax, T step_size, T bc2_sqrt,
                 T w1, T b2, T w2, T eps, T wd, T decay) {
  for (int64_t j = b; j < e; j++) {
    T pj = p[j], d, mj, vj;
    adam_moments<MAX, L2, DEC, LO>(g[j], pj, d, m + j, v + j, mj, vj, w1, b2, w2, wd, decay);
    T den;
    if constexpr (AMS) {
      T mx = vmax[j] > vj ? vmax[j] : vj;
      vmax[j] = mx;
      den = std::sqrt(mx) / bc2_sqrt + eps;
    } else {
      den = std::sqrt(vj) / bc2_sqrt + eps;
    }
    p[j] = pj - step_size * (mj / den);
  }
}

template <bool MAX, bool WD, bool CENTERED, bool MOM, bool LO, class T>
void rmsprop_kernel(int64_t b, int64_t e, T* R p, const T* R g, T* R sq, T* R gavg, T* R buf, T a, T w, T eps, T wd,
                    T mom, T nlr) {
  for (int64_t j = b; j < e; j++) {
    T d = grad_term<MAX, WD>(g[j], p[j], wd);
    T sj = sq[j] * a + w * d * d;
    sq[j] = sj;
    T avg;
    if constexpr (CENTERED) {
      T gj = lerp<LO>(gavg[j], d, w);
      gavg[j] = gj;
      avg = std::sqrt(sj + T(-1) * gj * gj);
    } else {
      avg = std::sqrt(sj);
    }
    avg = avg + eps;
    if constexpr (MOM) {
      T bj = buf[j] * mom + d / avg;
      buf[j] = bj;
      p[j] = p[j] + nlr * bj;
    } else {
      p[j] = p[j] + nlr * (d / avg);
    }
  }
}

template <bool MAX, bool WD, class T>
void adagrad_kernel(int64_t b, int64_t e, T* R p, const T* R g, T* R sum, T nclr, T eps, T wd) {
  for (int64_t j = b; j < e; j++) {
    T d = grad_term<MAX, WD>(g[j], p[j], wd);
    T sj = sum[j] + d * d;
    sum[j] = sj;
    p[j] = p[j] + nclr * (d / (std::sqrt(sj) + eps));
  }
}

template <bool MAX, bool WD, class T>
void adadelta_kernel(int64_t b, int64_t e, T* R p, const T* R g, T* R sq, T* R acc, T r, T w, T eps, T wd, T nlr) {
  for (int64_t j = b; j < e; j++) {
    T d = grad_term<MAX, WD>(g[j], p[j], wd);
    T sj = sq[j] * r + w * d * d;
    sq[j] = sj;
    T std_ = std::sqrt(sj + eps);
    T delta = std::sqrt(acc[j] + eps);
    delta = delta / std_ * d;
    acc[j] = acc[j] * r + w * delta * delta;
    p[j] = p[j] + nlr * delta;
  }
}

template <bool MAX, bool WD, bool LO, class T>
void adamax_kernel(int64_t b, int64_t e, T* R p, const T* R g, T* R m, T* R u, T nclr, T w1, T b2, T eps, T wd) {
  for (int64_t j = b; j < e; j++) {
    T d = grad_term<MAX, WD>(g[j], p[j], wd);
    T mj = lerp<LO>(m[j], d, w1);
    m[j] = mj;
    T a = u[j] * b2, c = std::abs(d) + eps;
    // torch.maximum: a NaN on either side propagates
    T uj = (a > c) ? a : c;
    uj = (a != a) ? a : uj;
    uj = (c != c) ? c : uj;
    u[j] = uj;
    p[j] = p[j] + nclr * (mj / uj);
  }
}

template <bool MAX, bool L2, bool DEC, bool LO, class T>
void nadam_kernel(int64_t b, int64_t e, T* R p, const T* R g, T* R m, T* R v, T c_grad, T c_avg, T bc2, T w1, T b2,
                  T w2, T eps, T wd, T decay) {
  for (int64_t j = b; j < e; j++) {
    T pj = p[j], d, mj, vj;
    adam_moments<MAX, L2, DEC, LO>(g[j], pj, d, m + j, v + j, mj, vj, w1, b2, w2, wd, decay);
    T den = std::sqrt(vj / bc2) + eps;
    pj = pj + c_grad * (d / den);
    p[j] = pj + c_avg * (mj / den);
  }
}

template <bool MAX, bool L2, bool DEC, bool RECT, bool LO, class T>
void radam_kernel(int64_t b, int64_t e, T* R p, const T* R g, T* R m, T* R v, T bc1, T lr, T bc2_sqrt, T rect, T w1,
                  T b2, T w2, T eps, T wd, T decay) {
  for (int64_t j = b; j < e; j++) {
    T pj = p[j], d, mj, vj;
    adam_moments<MAX, L2, DEC, LO>(g[j], pj, d, m + j, v + j, mj, vj, w1, b2, w2, wd, decay);
    T upd = mj / bc1 * lr;
    if constexpr (RECT) upd = upd * (bc2_sqrt / (std::sqrt(vj) + eps)) * rect;
    p[j] = pj - upd;
  }
}
#undef R

// f(T()) with T the compute dtype of the op's prepared tensors (float32 unless float64).
template <class F>
void with_dtype(const Tensor& param, F&& f) {
  if (param.dtype() == kDouble) f(double());
  else f(float());
}

template <class T>
T* ptr(const Tensor& t) { return t.defined() ? static_cast<T*>(t.data_ptr()) : nullptr; }

void sgd_cpu(const Tensor& param, const Tensor& grad, const Tensor& momentum_buffer, const FusedSgdArgs& a) {
  const bool use_buf = momentum_buffer.defined();
  with_dtype(param, [&](auto tag) {
    using T = decltype(tag);
    T* p = ptr<T>(param);
    const T* g = ptr<T>(grad);
    T* buf = ptr<T>(momentum_buffer);
    const T wd = T(a.weight_decay), mom = T(a.momentum), damp1 = T(1 - a.dampening), nlr = T(-a.lr);
    with_flags([&](auto MAX, auto WD, auto BUF, auto FIRST, auto NEST) {
      loop(param.numel(), [&](int64_t b, int64_t e) {
        sgd_kernel<MAX, WD, BUF, FIRST, NEST>(b, e, p, g, buf, wd, mom, damp1, nlr);
      });
    }, a.maximize, a.weight_decay != 0, use_buf, a.first_step, a.nesterov);
  });
}

void adam_cpu(const Tensor& param, const Tensor& grad, const Tensor& exp_avg, const Tensor& exp_avg_sq,
              const Tensor& max_exp_avg_sq, const FusedAdamArgs& a) {
  with_dtype(param, [&](auto tag) {
    using T = decltype(tag);
    T* p = ptr<T>(param);
    const T* g = ptr<T>(grad);
    T* m = ptr<T>(exp_avg);
    T* v = ptr<T>(exp_avg_sq);
    T* vmax = a.amsgrad ? ptr<T>(max_exp_avg_sq) : nullptr;
    const double bc1 = 1 - std::pow(a.beta1, a.step), bc2 = 1 - std::pow(a.beta2, a.step);
    const T step_size = T(a.lr / bc1), bc2_sqrt = T(std::sqrt(bc2));
    const T w1 = T(1 - a.beta1), b2 = T(a.beta2), w2 = T(1 - a.beta2), e = T(a.eps), wd = T(a.weight_decay);
    const T decay = T(1 - a.lr * a.weight_decay);
    with_flags([&](auto MAX, auto L2, auto DEC, auto AMS, auto LO) {
      loop(param.numel(), [&](int64_t b, int64_t end) {
        adam_kernel<MAX, L2, DEC, AMS, LO>(b, end, p, g, m, v, vmax, step_size, bc2_sqrt, w1, b2, w2, e, wd, decay);
      });
    }, a.maximize, a.weight_decay != 0 && !a.decoupled_weight_decay, a.weight_decay != 0 && a.decoupled_weight_decay,
       a.amsgrad, w1 < T(0.5));
  });
}

void rmsprop_cpu(const Tensor& param, const Tensor& grad, const Tensor& square_avg, const Tensor& grad_avg,
                 const Tensor& momentum_buffer, const FusedRmspropArgs& a) {
  with_dtype(param, [&](auto tag) {
    using T = decltype(tag);
    T* p = ptr<T>(param);
    const T* g = ptr<T>(grad);
    T* sq = ptr<T>(square_avg);
    T* gavg = a.centered ? ptr<T>(grad_avg) : nullptr;
    T* buf = a.momentum > 0 ? ptr<T>(momentum_buffer) : nullptr;
    const T al = T(a.alpha), w = T(1 - a.alpha), e = T(a.eps), wd = T(a.weight_decay), mom = T(a.momentum),
            nlr = T(-a.lr);
    with_flags([&](auto MAX, auto WD, auto CENTERED, auto MOM, auto LO) {
      loop(param.numel(), [&](int64_t b, int64_t end) {
        rmsprop_kernel<MAX, WD, CENTERED, MOM, LO>(b, end, p, g, sq, gavg, buf, al, w, e, wd, mom, nlr);
      });
    }, a.maximize, a.weight_decay != 0, a.centered, a.momentum > 0, w < T(0.5));
  });
}

void adagrad_cpu(const Tensor& param, const Tensor& grad, const Tensor& state_sum, const FusedAdagradArgs& a) {
  with_dtype(param, [&](auto tag) {
    using T = decltype(tag);
    T* p = ptr<T>(param);
    const T* g = ptr<T>(grad);
    T* sum = ptr<T>(state_sum);
    const T nclr = T(-(a.lr / (1 + (a.step - 1) * a.lr_decay))), e = T(a.eps), wd = T(a.weight_decay);
    with_flags([&](auto MAX, auto WD) {
      loop(param.numel(), [&](int64_t b, int64_t end) { adagrad_kernel<MAX, WD>(b, end, p, g, sum, nclr, e, wd); });
    }, a.maximize, a.weight_decay != 0);
  });
}

void adadelta_cpu(const Tensor& param, const Tensor& grad, const Tensor& square_avg, const Tensor& acc_delta,
                  const FusedAdadeltaArgs& a) {
  with_dtype(param, [&](auto tag) {
    using T = decltype(tag);
    T* p = ptr<T>(param);
    const T* g = ptr<T>(grad);
    T* sq = ptr<T>(square_avg);
    T* acc = ptr<T>(acc_delta);
    const T r = T(a.rho), w = T(1 - a.rho), e = T(a.eps), wd = T(a.weight_decay), nlr = T(-a.lr);
    with_flags([&](auto MAX, auto WD) {
      loop(param.numel(), [&](int64_t b, int64_t end) { adadelta_kernel<MAX, WD>(b, end, p, g, sq, acc, r, w, e, wd, nlr); });
    }, a.maximize, a.weight_decay != 0);
  });
}

void adamax_cpu(const Tensor& param, const Tensor& grad, const Tensor& exp_avg, const Tensor& exp_inf,
                const FusedAdamaxArgs& a) {
  with_dtype(param, [&](auto tag) {
    using T = decltype(tag);
    T* p = ptr<T>(param);
    const T* g = ptr<T>(grad);
    T* m = ptr<T>(exp_avg);
    T* u = ptr<T>(exp_inf);
    const T nclr = T(-(a.lr / (1 - std::pow(a.beta1, a.step))));
    const T w1 = T(1 - a.beta1), b2 = T(a.beta2), e = T(a.eps), wd = T(a.weight_decay);
    with_flags([&](auto MAX, auto WD, auto LO) {
      loop(param.numel(), [&](int64_t b, int64_t end) { adamax_kernel<MAX, WD, LO>(b, end, p, g, m, u, nclr, w1, b2, e, wd); });
    }, a.maximize, a.weight_decay != 0, w1 < T(0.5));
  });
}

void nadam_cpu(const Tensor& param, const Tensor& grad, const Tensor& exp_avg, const Tensor& exp_avg_sq,
               const FusedNadamArgs& a) {
  with_dtype(param, [&](auto tag) {
    using T = decltype(tag);
    const double bc2 = 1 - std::pow(a.beta2, a.step);
    const double mu_prod_next = a.mu_product * a.mu_next;
    T* p = ptr<T>(param);
    const T* g = ptr<T>(grad);
    T* m = ptr<T>(exp_avg);
    T* v = ptr<T>(exp_avg_sq);
    const T c_grad = T(-a.lr * (1.0 - a.mu) / (1.0 - a.mu_product)), c_avg = T((-a.lr * a.mu_next) / (1.0 - mu_prod_next));
    const T w1 = T(1 - a.beta1), b2 = T(a.beta2), w2 = T(1 - a.beta2), e = T(a.eps), wd = T(a.weight_decay);
    const T decay = T(1 - a.lr * a.weight_decay), bc2_t = T(bc2);
    with_flags([&](auto MAX, auto L2, auto DEC, auto LO) {
      loop(param.numel(), [&](int64_t b, int64_t end) {
        nadam_kernel<MAX, L2, DEC, LO>(b, end, p, g, m, v, c_grad, c_avg, bc2_t, w1, b2, w2, e, wd, decay);
      });
    }, a.maximize, a.weight_decay != 0 && !a.decoupled_weight_decay, a.weight_decay != 0 && a.decoupled_weight_decay,
       w1 < T(0.5));
  });
}

void radam_cpu(const Tensor& param, const Tensor& grad, const Tensor& exp_avg, const Tensor& exp_avg_sq,
               const FusedRadamArgs& a) {
  with_dtype(param, [&](auto tag) {
    using T = decltype(tag);
    const double step = a.step, beta2 = a.beta2;
    double bc1 = 1 - std::pow(a.beta1, step), bc2 = 1 - std::pow(beta2, step);
    double rho_inf = 2 / (1 - beta2) - 1;
    double rho_t = rho_inf - 2 * step * std::pow(beta2, step) / bc2;
    const bool rect = rho_t > 5.0;
    double r = rect ? std::sqrt((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) : 0;
    T* p = ptr<T>(param);
    const T* g = ptr<T>(grad);
    T* m = ptr<T>(exp_avg);
    T* v = ptr<T>(exp_avg_sq);
    const T w1 = T(1 - a.beta1), b2 = T(beta2), w2 = T(1 - beta2), e = T(a.eps), wd = T(a.weight_decay);
    const T decay = T(1 - a.lr * a.weight_decay), bc1_t = T(bc1), lr_t = T(a.lr), bc2_sqrt = T(std::sqrt(bc2)),
            r_t = T(r);
    with_flags([&](auto MAX, auto L2, auto DEC, auto RECT, auto LO) {
      loop(param.numel(), [&](int64_t b, int64_t end) {
        radam_kernel<MAX, L2, DEC, RECT, LO>(b, end, p, g, m, v, bc1_t, lr_t, bc2_sqrt, r_t, w1, b2, w2, e, wd, decay);
      });
    }, a.maximize, a.weight_decay != 0 && !a.decoupled_weight_decay, a.weight_decay != 0 && a.decoupled_weight_decay,
       rect, w1 < T(0.5));
  });
}

}  // namespace

}  // namespace ember

EMBER_REGISTER_KERNEL(fused_sgd_stub, CPU, &ember::sgd_cpu);
EMBER_REGISTER_KERNEL(fused_adam_stub, CPU, &ember::adam_cpu);
EMBER_REGISTER_KERNEL(fused_rmsprop_stub, CPU, &ember::rmsprop_cpu);
EMBER_REGISTER_KERNEL(fused_adagrad_stub, CPU, &ember::adagrad_cpu);
EMBER_REGISTER_KERNEL(fused_adadelta_stub, CPU, &ember::adadelta_cpu);
EMBER_REGISTER_KERNEL(fused_adamax_stub, CPU, &ember::adamax_cpu);
EMBER_REGISTER_KERNEL(fused_nadam_stub, CPU, &ember::nadam_cpu);
EMBER_REGISTER_KERNEL(fused_radam_stub, CPU, &ember::radam_cpu);
