// Fused multi-tensor optimizer updates (ember.optim). Each op updates every parameter of one
// param group, and its state, in place in one call: per tensor, a plain loop over contiguous
// float/double data that the compiler vectorizes, split across threads for large tensors. The
// formulas follow PyTorch's single-tensor reference implementations step by step (same rounding
// points: the tensor math runs in the tensor's dtype, the per-step scalars in double), so
// trajectories match torch.optim's to float precision.
//
// Tensors that are not contiguous float32/float64 (a half parameter, a strided view) are
// processed through a contiguous float32 working copy that is written back afterwards.
#include <cmath>
#include <type_traits>
#include <vector>

#include "ember/autograd/grad_mode.h"
#include "ember/generated/native.h"
#include "ember/generated/ops.h"
#include "ember/parallel/parallel.h"

namespace ember::native {

namespace {

// One tensor as seen by an update loop: contiguous data in the compute dtype. If the original
// tensor could not be used directly, `work` is a copy that finish() writes back.
struct Slot {
  Tensor orig, work;
  bool copied = false;
  void* data() const { return work.data_ptr(); }
  void finish(bool written) {
    if (!written) return;
    if (copied) {
      orig.copy_(work);  // bumps orig's version
    } else {
      orig.impl()->bump_version();
    }
  }
};

Slot make_slot(const Tensor& t, ScalarType ct, const char* op, const char* what) {
  EMBER_CHECK(t.defined(), op, ": expected a defined tensor in ", what);
  Slot s;
  s.orig = t;
  if (t.dtype() == ct && t.is_contiguous()) {
    s.work = t;
  } else {
    s.work = t.to(ct, /*copy=*/true).contiguous();
    s.copied = true;
  }
  return s;
}

ScalarType compute_dtype(const Tensor& p) { return p.dtype() == kDouble ? kDouble : kFloat; }

void check_lists(const char* op, size_t n, std::initializer_list<std::pair<const char*, size_t>> lists) {
  for (auto& [name, m] : lists)
    EMBER_CHECK(m == n, op, ": expected ", n, " tensors in ", name, " (one per parameter), got ", m);
}

// Runs body<T>(i, slots...) for each parameter i, where the slots of parameter i are contiguous
// arrays of the compute dtype T. `written[k]` tells whether list k is updated in place.
template <class F>
void for_each_param(const char* op, const std::vector<const std::vector<Tensor>*>& lists,
                    const std::vector<bool>& written, F&& body) {
  autograd::NoGradGuard no_grad;
  const std::vector<Tensor>& params = *lists[0];
  for (size_t i = 0; i < params.size(); i++) {
    const Tensor& p = params[i];
    ScalarType ct = compute_dtype(p);
    std::vector<Slot> slots;
    slots.reserve(lists.size());
    for (size_t k = 0; k < lists.size(); k++) {
      const Tensor& t = (*lists[k])[i];
      EMBER_CHECK(t.defined() && t.numel() == p.numel(), op, ": tensor ", k, " of parameter ", i,
                  " has ", t.defined() ? t.numel() : 0, " elements, expected ", p.numel());
      slots.push_back(make_slot(t, ct, op, "the tensor lists"));
    }
    if (ct == kDouble) body(double(), p.numel(), slots);
    else body(float(), p.numel(), slots);
    for (size_t k = 0; k < slots.size(); k++) slots[k].finish(written[k]);
  }
}

// Parallel loop over [0, n) for elementwise updates.
template <class F>
void loop(int64_t n, F&& f) {
  parallel_for(0, n, kGrainSize, [&](int64_t b, int64_t e) { f(b, e); });
}

// The 0-d step counters: incremented in their own dtype (float32 by default, like torch's).
double bump_step(const Tensor& step) {
  EMBER_CHECK(step.defined() && step.numel() == 1, "optimizer step counters must be one-element tensors");
  double v = step.item().to_double() + 1;
  step.fill_(v);
  return step.item().to_double();
}

template <class T>
T* ptr(const Slot& s) { return static_cast<T*>(s.data()); }

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

}  // namespace

// ---------------------------------------------------------------- SGD
void _fused_sgd_(TensorList params, TensorList grads, TensorList momentum_buffers, double lr, double momentum,
                 double dampening, double weight_decay, bool nesterov, bool maximize, bool first_step) {
  const char* op = "_fused_sgd_";
  const bool use_buf = momentum != 0;
  check_lists(op, params.size(), {{"grads", grads.size()}});
  if (use_buf) check_lists(op, params.size(), {{"momentum_buffers", momentum_buffers.size()}});
  std::vector<const std::vector<Tensor>*> lists{&params, &grads};
  std::vector<bool> written{true, false};
  if (use_buf) { lists.push_back(&momentum_buffers); written.push_back(true); }
  for_each_param(op, lists, written, [&](auto tag, int64_t n, std::vector<Slot>& s) {
    using T = decltype(tag);
    T* p = ptr<T>(s[0]);
    const T* g = ptr<T>(s[1]);
    T* buf = use_buf ? ptr<T>(s[2]) : nullptr;
    const T wd = T(weight_decay), mom = T(momentum), damp1 = T(1 - dampening), nlr = T(-lr);
    with_flags([&](auto MAX, auto WD, auto BUF, auto FIRST, auto NEST) {
      loop(n, [&](int64_t b, int64_t e) {
        sgd_kernel<MAX, WD, BUF, FIRST, NEST>(b, e, p, g, buf, wd, mom, damp1, nlr);
      });
    }, maximize, weight_decay != 0, use_buf, first_step, nesterov);
  });
}

// ---------------------------------------------------------------- Adam / AdamW
void _fused_adam_(TensorList params, TensorList grads, TensorList exp_avgs, TensorList exp_avg_sqs,
                  TensorList max_exp_avg_sqs, TensorList state_steps, double lr, double beta1, double beta2,
                  double weight_decay, double eps, bool amsgrad, bool maximize, bool decoupled_weight_decay) {
  const char* op = "_fused_adam_";
  size_t n = params.size();
  check_lists(op, n, {{"grads", grads.size()}, {"exp_avgs", exp_avgs.size()}, {"exp_avg_sqs", exp_avg_sqs.size()},
                      {"state_steps", state_steps.size()}});
  if (amsgrad) check_lists(op, n, {{"max_exp_avg_sqs", max_exp_avg_sqs.size()}});
  std::vector<const std::vector<Tensor>*> lists{&params, &grads, &exp_avgs, &exp_avg_sqs};
  std::vector<bool> written{true, false, true, true};
  if (amsgrad) { lists.push_back(&max_exp_avg_sqs); written.push_back(true); }
  size_t i = 0;
  for_each_param(op, lists, written, [&](auto tag, int64_t numel, std::vector<Slot>& s) {
    using T = decltype(tag);
    double step = bump_step(state_steps[i++]);
    T* p = ptr<T>(s[0]);
    const T* g = ptr<T>(s[1]);
    T* m = ptr<T>(s[2]);
    T* v = ptr<T>(s[3]);
    T* vmax = amsgrad ? ptr<T>(s[4]) : nullptr;
    const double bc1 = 1 - std::pow(beta1, step), bc2 = 1 - std::pow(beta2, step);
    const T step_size = T(lr / bc1), bc2_sqrt = T(std::sqrt(bc2));
    const T w1 = T(1 - beta1), b2 = T(beta2), w2 = T(1 - beta2), e = T(eps), wd = T(weight_decay);
    const T decay = T(1 - lr * weight_decay);
    with_flags([&](auto MAX, auto L2, auto DEC, auto AMS, auto LO) {
      loop(numel, [&](int64_t b, int64_t end) {
        adam_kernel<MAX, L2, DEC, AMS, LO>(b, end, p, g, m, v, vmax, step_size, bc2_sqrt, w1, b2, w2, e, wd, decay);
      });
    }, maximize, weight_decay != 0 && !decoupled_weight_decay, weight_decay != 0 && decoupled_weight_decay, amsgrad,
       w1 < T(0.5));
  });
}

// ---------------------------------------------------------------- RMSprop
void _fused_rmsprop_(TensorList params, TensorList grads, TensorList square_avgs, TensorList grad_avgs,
                     TensorList momentum_buffers, TensorList state_steps, double lr, double alpha, double eps,
                     double weight_decay, double momentum, bool centered, bool maximize) {
  const char* op = "_fused_rmsprop_";
  size_t n = params.size();
  check_lists(op, n, {{"grads", grads.size()}, {"square_avgs", square_avgs.size()}, {"state_steps", state_steps.size()}});
  if (centered) check_lists(op, n, {{"grad_avgs", grad_avgs.size()}});
  if (momentum > 0) check_lists(op, n, {{"momentum_buffers", momentum_buffers.size()}});
  std::vector<const std::vector<Tensor>*> lists{&params, &grads, &square_avgs};
  std::vector<bool> written{true, false, true};
  int ga = -1, mb = -1;
  if (centered) { ga = int(lists.size()); lists.push_back(&grad_avgs); written.push_back(true); }
  if (momentum > 0) { mb = int(lists.size()); lists.push_back(&momentum_buffers); written.push_back(true); }
  size_t i = 0;
  for_each_param(op, lists, written, [&](auto tag, int64_t numel, std::vector<Slot>& s) {
    using T = decltype(tag);
    bump_step(state_steps[i++]);
    T* p = ptr<T>(s[0]);
    const T* g = ptr<T>(s[1]);
    T* sq = ptr<T>(s[2]);
    T* gavg = ga >= 0 ? ptr<T>(s[size_t(ga)]) : nullptr;
    T* buf = mb >= 0 ? ptr<T>(s[size_t(mb)]) : nullptr;
    const T a = T(alpha), w = T(1 - alpha), e = T(eps), wd = T(weight_decay), mom = T(momentum), nlr = T(-lr);
    with_flags([&](auto MAX, auto WD, auto CENTERED, auto MOM, auto LO) {
      loop(numel, [&](int64_t b, int64_t end) {
        rmsprop_kernel<MAX, WD, CENTERED, MOM, LO>(b, end, p, g, sq, gavg, buf, a, w, e, wd, mom, nlr);
      });
    }, maximize, weight_decay != 0, centered, momentum > 0, w < T(0.5));
  });
}

// ---------------------------------------------------------------- Adagrad
void _fused_adagrad_(TensorList params, TensorList grads, TensorList state_sums, TensorList state_steps, double lr,
                     double weight_decay, double lr_decay, double eps, bool maximize) {
  const char* op = "_fused_adagrad_";
  check_lists(op, params.size(), {{"grads", grads.size()}, {"state_sums", state_sums.size()},
                                  {"state_steps", state_steps.size()}});
  size_t i = 0;
  for_each_param(op, {&params, &grads, &state_sums}, {true, false, true},
                 [&](auto tag, int64_t numel, std::vector<Slot>& s) {
    using T = decltype(tag);
    double step = bump_step(state_steps[i++]);
    T* p = ptr<T>(s[0]);
    const T* g = ptr<T>(s[1]);
    T* sum = ptr<T>(s[2]);
    const T nclr = T(-(lr / (1 + (step - 1) * lr_decay))), e = T(eps), wd = T(weight_decay);
    with_flags([&](auto MAX, auto WD) {
      loop(numel, [&](int64_t b, int64_t end) { adagrad_kernel<MAX, WD>(b, end, p, g, sum, nclr, e, wd); });
    }, maximize, weight_decay != 0);
  });
}

// ---------------------------------------------------------------- Adadelta
void _fused_adadelta_(TensorList params, TensorList grads, TensorList square_avgs, TensorList acc_deltas,
                      TensorList state_steps, double lr, double rho, double eps, double weight_decay, bool maximize) {
  const char* op = "_fused_adadelta_";
  check_lists(op, params.size(), {{"grads", grads.size()}, {"square_avgs", square_avgs.size()},
                                  {"acc_deltas", acc_deltas.size()}, {"state_steps", state_steps.size()}});
  size_t i = 0;
  for_each_param(op, {&params, &grads, &square_avgs, &acc_deltas}, {true, false, true, true},
                 [&](auto tag, int64_t numel, std::vector<Slot>& s) {
    using T = decltype(tag);
    bump_step(state_steps[i++]);
    T* p = ptr<T>(s[0]);
    const T* g = ptr<T>(s[1]);
    T* sq = ptr<T>(s[2]);
    T* acc = ptr<T>(s[3]);
    const T r = T(rho), w = T(1 - rho), e = T(eps), wd = T(weight_decay), nlr = T(-lr);
    with_flags([&](auto MAX, auto WD) {
      loop(numel, [&](int64_t b, int64_t end) { adadelta_kernel<MAX, WD>(b, end, p, g, sq, acc, r, w, e, wd, nlr); });
    }, maximize, weight_decay != 0);
  });
}

// ---------------------------------------------------------------- Adamax
void _fused_adamax_(TensorList params, TensorList grads, TensorList exp_avgs, TensorList exp_infs,
                    TensorList state_steps, double lr, double beta1, double beta2, double eps, double weight_decay,
                    bool maximize) {
  const char* op = "_fused_adamax_";
  check_lists(op, params.size(), {{"grads", grads.size()}, {"exp_avgs", exp_avgs.size()},
                                  {"exp_infs", exp_infs.size()}, {"state_steps", state_steps.size()}});
  size_t i = 0;
  for_each_param(op, {&params, &grads, &exp_avgs, &exp_infs}, {true, false, true, true},
                 [&](auto tag, int64_t numel, std::vector<Slot>& s) {
    using T = decltype(tag);
    double step = bump_step(state_steps[i++]);
    T* p = ptr<T>(s[0]);
    const T* g = ptr<T>(s[1]);
    T* m = ptr<T>(s[2]);
    T* u = ptr<T>(s[3]);
    const T nclr = T(-(lr / (1 - std::pow(beta1, step))));
    const T w1 = T(1 - beta1), b2 = T(beta2), e = T(eps), wd = T(weight_decay);
    with_flags([&](auto MAX, auto WD, auto LO) {
      loop(numel, [&](int64_t b, int64_t end) { adamax_kernel<MAX, WD, LO>(b, end, p, g, m, u, nclr, w1, b2, e, wd); });
    }, maximize, weight_decay != 0, w1 < T(0.5));
  });
}

// ---------------------------------------------------------------- NAdam
void _fused_nadam_(TensorList params, TensorList grads, TensorList exp_avgs, TensorList exp_avg_sqs,
                   TensorList mu_products, TensorList state_steps, double lr, double beta1, double beta2,
                   double weight_decay, double eps, double momentum_decay, bool decoupled_weight_decay, bool maximize) {
  const char* op = "_fused_nadam_";
  check_lists(op, params.size(), {{"grads", grads.size()}, {"exp_avgs", exp_avgs.size()},
                                  {"exp_avg_sqs", exp_avg_sqs.size()}, {"mu_products", mu_products.size()},
                                  {"state_steps", state_steps.size()}});
  size_t i = 0;
  for_each_param(op, {&params, &grads, &exp_avgs, &exp_avg_sqs}, {true, false, true, true},
                 [&](auto tag, int64_t numel, std::vector<Slot>& s) {
    using T = decltype(tag);
    const Tensor& mu_t = mu_products[i];
    double step = bump_step(state_steps[i++]);
    double bc2 = 1 - std::pow(beta2, step);
    double mu = beta1 * (1.0 - 0.5 * std::pow(0.96, step * momentum_decay));
    double mu_next = beta1 * (1.0 - 0.5 * std::pow(0.96, (step + 1) * momentum_decay));
    // mu_product lives in a 0-d tensor (float32 by default): round the product as torch does
    EMBER_CHECK(mu_t.defined() && mu_t.numel() == 1, op, ": mu_products must be one-element tensors");
    mu_t.fill_(mu_t.item().to_double() * mu);
    double mu_prod = mu_t.item().to_double();
    double mu_prod_next = mu_prod * mu_next;
    T* p = ptr<T>(s[0]);
    const T* g = ptr<T>(s[1]);
    T* m = ptr<T>(s[2]);
    T* v = ptr<T>(s[3]);
    const T c_grad = T(-lr * (1.0 - mu) / (1.0 - mu_prod)), c_avg = T((-lr * mu_next) / (1.0 - mu_prod_next));
    const T w1 = T(1 - beta1), b2 = T(beta2), w2 = T(1 - beta2), e = T(eps), wd = T(weight_decay);
    const T decay = T(1 - lr * weight_decay), bc2_t = T(bc2);
    with_flags([&](auto MAX, auto L2, auto DEC, auto LO) {
      loop(numel, [&](int64_t b, int64_t end) {
        nadam_kernel<MAX, L2, DEC, LO>(b, end, p, g, m, v, c_grad, c_avg, bc2_t, w1, b2, w2, e, wd, decay);
      });
    }, maximize, weight_decay != 0 && !decoupled_weight_decay, weight_decay != 0 && decoupled_weight_decay,
       w1 < T(0.5));
  });
}

// ---------------------------------------------------------------- RAdam
void _fused_radam_(TensorList params, TensorList grads, TensorList exp_avgs, TensorList exp_avg_sqs,
                   TensorList state_steps, double lr, double beta1, double beta2, double weight_decay, double eps,
                   bool decoupled_weight_decay, bool maximize) {
  const char* op = "_fused_radam_";
  check_lists(op, params.size(), {{"grads", grads.size()}, {"exp_avgs", exp_avgs.size()},
                                  {"exp_avg_sqs", exp_avg_sqs.size()}, {"state_steps", state_steps.size()}});
  size_t i = 0;
  for_each_param(op, {&params, &grads, &exp_avgs, &exp_avg_sqs}, {true, false, true, true},
                 [&](auto tag, int64_t numel, std::vector<Slot>& s) {
    using T = decltype(tag);
    double step = bump_step(state_steps[i++]);
    double bc1 = 1 - std::pow(beta1, step), bc2 = 1 - std::pow(beta2, step);
    double rho_inf = 2 / (1 - beta2) - 1;
    double rho_t = rho_inf - 2 * step * std::pow(beta2, step) / bc2;
    const bool rect = rho_t > 5.0;
    double r = rect ? std::sqrt((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) : 0;
    T* p = ptr<T>(s[0]);
    const T* g = ptr<T>(s[1]);
    T* m = ptr<T>(s[2]);
    T* v = ptr<T>(s[3]);
    const T w1 = T(1 - beta1), b2 = T(beta2), w2 = T(1 - beta2), e = T(eps), wd = T(weight_decay);
    const T decay = T(1 - lr * weight_decay), bc1_t = T(bc1), lr_t = T(lr), bc2_sqrt = T(std::sqrt(bc2)), r_t = T(r);
    with_flags([&](auto MAX, auto L2, auto DEC, auto RECT, auto LO) {
      loop(numel, [&](int64_t b, int64_t end) {
        radam_kernel<MAX, L2, DEC, RECT, LO>(b, end, p, g, m, v, bc1_t, lr_t, bc2_sqrt, r_t, w1, b2, w2, e, wd, decay);
      });
    }, maximize, weight_decay != 0 && !decoupled_weight_decay, weight_decay != 0 && decoupled_weight_decay, rect,
       w1 < T(0.5));
  });
}

}  // namespace ember::native
