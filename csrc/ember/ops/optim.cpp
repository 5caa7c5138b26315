// Fused multi-tensor optimizer updates (ember.optim). Each op updates every parameter of one
// param group, and its state, in place in one call: it checks the lists, bumps the step counters
// and calls the update kernel (kernels/optim.h; the CPU loops are in kernels/cpu/optim.cpp) once
// per parameter.
//
// Tensors that are not contiguous float32/float64 (a half parameter, a strided view) are
// processed through a contiguous float32 working copy that is written back afterwards.
#include <cmath>
#include <vector>

#include "ember/autograd/grad_mode.h"
#include "ember/generated/native.h"
#include "ember/generated/ops.h"
#include "ember/iter/tensor_iter.h"
#include "ember/kernels/optim.h"

EMBER_DEFINE_STUB(fused_sgd_stub)
EMBER_DEFINE_STUB(fused_adam_stub)
EMBER_DEFINE_STUB(fused_rmsprop_stub)
EMBER_DEFINE_STUB(fused_adagrad_stub)
EMBER_DEFINE_STUB(fused_adadelta_stub)
EMBER_DEFINE_STUB(fused_adamax_stub)
EMBER_DEFINE_STUB(fused_nadam_stub)
EMBER_DEFINE_STUB(fused_radam_stub)

namespace ember::native {

namespace {

// One tensor as the kernels see it: contiguous data in the compute dtype. If the original tensor
// could not be used directly, `work` is a copy that finish() writes back.
struct Slot {
  Tensor orig, work;
  bool copied = false;
  Slot(const Tensor& t, ScalarType ct) : orig(t) {
    if (t.dtype() == ct && t.is_contiguous()) {
      work = t;
    } else {
      work = t.to(ct, /*copy=*/true).contiguous();
      copied = true;
    }
  }
  void finish(bool written) {
    if (!written) return;
    if (copied) {
      orig.copy_(work);  // bumps orig's version
    } else {
      orig.impl()->bump_version();
    }
  }
};

ScalarType compute_dtype(const Tensor& p) { return p.dtype() == kDouble ? kDouble : kFloat; }

void check_lists(const char* op, size_t n, std::initializer_list<std::pair<const char*, size_t>> lists) {
  for (auto& [name, m] : lists)
    EMBER_CHECK(m == n, op, ": expected ", n, " tensors in ", name, " (one per parameter), got ", m);
}

// Runs body(i, slots) for each parameter i, where slots[k] holds list k's tensor of parameter i,
// checked (defined, as many elements as the parameter, on its device) and prepared for the
// kernels. `written[k]` tells whether list k is updated in place.
template <class F>
void for_each_param(const char* op, const std::vector<const std::vector<Tensor>*>& lists,
                    const std::vector<bool>& written, F&& body) {
  autograd::NoGradGuard no_grad;
  const std::vector<Tensor>& params = *lists[0];
  // a complex parameter (and its gradient and state) is updated as its real view, as PyTorch's
  // optimizers do: each part gets the real algorithm
  auto real_view = [](const Tensor& t) { return t.defined() && is_complex(t.dtype()) ? ember::view_as_real(t) : t; };
  for (size_t i = 0; i < params.size(); i++) {
    EMBER_CHECK(params[i].defined(), op, ": expected a defined tensor in the tensor lists");
    const Tensor p = real_view(params[i]);
    ScalarType ct = compute_dtype(p);
    std::vector<Slot> slots;
    slots.reserve(lists.size());
    for (size_t k = 0; k < lists.size(); k++) {
      const Tensor t = real_view((*lists[k])[i]);
      EMBER_CHECK(t.defined() && t.numel() == p.numel(), op, ": tensor ", k, " of parameter ", i,
                  " has ", t.defined() ? t.numel() : 0, " elements, expected ", p.numel());
      if (t.device() != p.device()) fail_device_mismatch(op, p.device(), t.device());
      slots.emplace_back(t, ct);
    }
    body(i, slots);
    for (size_t k = 0; k < slots.size(); k++) slots[k].finish(written[k]);
  }
}

// The work tensor of slot k, or an undefined tensor when the list is not in use.
const Tensor& work(const std::vector<Slot>& s, int k) {
  static const Tensor none;
  return k >= 0 ? s[size_t(k)].work : none;
}

// The 0-d step counters: incremented in their own dtype (float32 by default, like torch's).
double bump_step(const Tensor& step) {
  EMBER_CHECK(step.defined() && step.numel() == 1, "optimizer step counters must be one-element tensors");
  double v = step.item().to_double() + 1;
  step.fill_(v);
  return step.item().to_double();
}

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
  const FusedSgdArgs args{lr, momentum, dampening, weight_decay, nesterov, maximize, first_step};
  for_each_param(op, lists, written, [&](size_t i, std::vector<Slot>& s) {
    fused_sgd_stub(params[i].device(), op)(s[0].work, s[1].work, work(s, use_buf ? 2 : -1), args);
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
  for_each_param(op, lists, written, [&](size_t i, std::vector<Slot>& s) {
    auto kernel = fused_adam_stub(params[i].device(), op);
    const FusedAdamArgs args{lr, beta1, beta2, weight_decay, eps, bump_step(state_steps[i]),
                             amsgrad, maximize, decoupled_weight_decay};
    kernel(s[0].work, s[1].work, s[2].work, s[3].work, work(s, amsgrad ? 4 : -1), args);
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
  const FusedRmspropArgs args{lr, alpha, eps, weight_decay, momentum, centered, maximize};
  for_each_param(op, lists, written, [&](size_t i, std::vector<Slot>& s) {
    auto kernel = fused_rmsprop_stub(params[i].device(), op);
    bump_step(state_steps[i]);
    kernel(s[0].work, s[1].work, s[2].work, work(s, ga), work(s, mb), args);
  });
}

// ---------------------------------------------------------------- Adagrad
void _fused_adagrad_(TensorList params, TensorList grads, TensorList state_sums, TensorList state_steps, double lr,
                     double weight_decay, double lr_decay, double eps, bool maximize) {
  const char* op = "_fused_adagrad_";
  check_lists(op, params.size(), {{"grads", grads.size()}, {"state_sums", state_sums.size()},
                                  {"state_steps", state_steps.size()}});
  for_each_param(op, {&params, &grads, &state_sums}, {true, false, true}, [&](size_t i, std::vector<Slot>& s) {
    auto kernel = fused_adagrad_stub(params[i].device(), op);
    const FusedAdagradArgs args{lr, weight_decay, lr_decay, eps, bump_step(state_steps[i]), maximize};
    kernel(s[0].work, s[1].work, s[2].work, args);
  });
}

// ---------------------------------------------------------------- Adadelta
void _fused_adadelta_(TensorList params, TensorList grads, TensorList square_avgs, TensorList acc_deltas,
                      TensorList state_steps, double lr, double rho, double eps, double weight_decay, bool maximize) {
  const char* op = "_fused_adadelta_";
  check_lists(op, params.size(), {{"grads", grads.size()}, {"square_avgs", square_avgs.size()},
                                  {"acc_deltas", acc_deltas.size()}, {"state_steps", state_steps.size()}});
  const FusedAdadeltaArgs args{lr, rho, eps, weight_decay, maximize};
  for_each_param(op, {&params, &grads, &square_avgs, &acc_deltas}, {true, false, true, true},
                 [&](size_t i, std::vector<Slot>& s) {
    auto kernel = fused_adadelta_stub(params[i].device(), op);
    bump_step(state_steps[i]);
    kernel(s[0].work, s[1].work, s[2].work, s[3].work, args);
  });
}

// ---------------------------------------------------------------- Adamax
void _fused_adamax_(TensorList params, TensorList grads, TensorList exp_avgs, TensorList exp_infs,
                    TensorList state_steps, double lr, double beta1, double beta2, double eps, double weight_decay,
                    bool maximize) {
  const char* op = "_fused_adamax_";
  check_lists(op, params.size(), {{"grads", grads.size()}, {"exp_avgs", exp_avgs.size()},
                                  {"exp_infs", exp_infs.size()}, {"state_steps", state_steps.size()}});
  for_each_param(op, {&params, &grads, &exp_avgs, &exp_infs}, {true, false, true, true},
                 [&](size_t i, std::vector<Slot>& s) {
    auto kernel = fused_adamax_stub(params[i].device(), op);
    const FusedAdamaxArgs args{lr, beta1, beta2, eps, weight_decay, bump_step(state_steps[i]), maximize};
    kernel(s[0].work, s[1].work, s[2].work, s[3].work, args);
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
  for_each_param(op, {&params, &grads, &exp_avgs, &exp_avg_sqs}, {true, false, true, true},
                 [&](size_t i, std::vector<Slot>& s) {
    auto kernel = fused_nadam_stub(params[i].device(), op);
    const Tensor& mu_t = mu_products[i];
    double step = bump_step(state_steps[i]);
    double mu = beta1 * (1.0 - 0.5 * std::pow(0.96, step * momentum_decay));
    double mu_next = beta1 * (1.0 - 0.5 * std::pow(0.96, (step + 1) * momentum_decay));
    // mu_product lives in a 0-d tensor (float32 by default): round the product as torch does
    EMBER_CHECK(mu_t.defined() && mu_t.numel() == 1, op, ": mu_products must be one-element tensors");
    mu_t.fill_(mu_t.item().to_double() * mu);
    const FusedNadamArgs args{lr, beta1, beta2, weight_decay, eps, step, mu, mu_next, mu_t.item().to_double(),
                              decoupled_weight_decay, maximize};
    kernel(s[0].work, s[1].work, s[2].work, s[3].work, args);
  });
}

// ---------------------------------------------------------------- RAdam
void _fused_radam_(TensorList params, TensorList grads, TensorList exp_avgs, TensorList exp_avg_sqs,
                   TensorList state_steps, double lr, double beta1, double beta2, double weight_decay, double eps,
                   bool decoupled_weight_decay, bool maximize) {
  const char* op = "_fused_radam_";
  check_lists(op, params.size(), {{"grads", grads.size()}, {"exp_avgs", exp_avgs.size()},
                                  {"exp_avg_sqs", exp_avg_sqs.size()}, {"state_steps", state_steps.size()}});
  for_each_param(op, {&params, &grads, &exp_avgs, &exp_avg_sqs}, {true, false, true, true},
                 [&](size_t i, std::vector<Slot>& s) {
    auto kernel = fused_radam_stub(params[i].device(), op);
    const FusedRadamArgs args{lr, beta1, beta2, weight_decay, eps, bump_step(state_steps[i]), decoupled_weight_decay,
                              maximize};
    kernel(s[0].work, s[1].work, s[2].work, s[3].work, args);
  });
}

}  // namespace ember::native
