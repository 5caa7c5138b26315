#pragma once
// ember::nn::utils: gradient clipping over a module's parameters (torch.nn.utils.clip_grad_*).
#include <cmath>
#include <limits>
#include <vector>

#include "ember/autograd/grad_mode.h"
#include "ember/generated/ops.h"

namespace ember::nn::utils {

// Scales the gradients so that their joint norm (of order norm_type, inf for the largest entry) is at
// most max_norm; returns the norm before clipping. Parameters without a gradient are skipped.
inline double clip_grad_norm_(const std::vector<Tensor>& parameters, double max_norm, double norm_type = 2.0,
                              bool error_if_nonfinite = false) {
  std::vector<Tensor> grads;
  for (const Tensor& p : parameters)
    if (p.grad().defined()) grads.push_back(p.grad());
  if (grads.empty()) return 0.0;
  autograd::NoGradGuard no_grad;
  double total;
  if (std::isinf(norm_type)) {
    total = 0;
    for (const Tensor& g : grads) total = std::max(total, g.abs().max().item<double>());
  } else {
    std::vector<Tensor> norms;
    for (const Tensor& g : grads) norms.push_back(g.norm(norm_type).to(kDouble));
    total = ember::stack(norms).norm(norm_type).item<double>();
  }
  EMBER_CHECK(!error_if_nonfinite || std::isfinite(total), "The total norm of order ", norm_type,
              " for gradients from `parameters` is non-finite, so it cannot be clipped");
  double coef = max_norm / (total + 1e-6);
  if (coef < 1)
    for (const Tensor& g : grads) g.mul_(coef);
  return total;
}
inline double clip_grad_norm_(const Tensor& parameter, double max_norm, double norm_type = 2.0) {
  return clip_grad_norm_(std::vector<Tensor>{parameter}, max_norm, norm_type);
}

// Clamps every gradient entry into [-clip_value, clip_value].
inline void clip_grad_value_(const std::vector<Tensor>& parameters, double clip_value) {
  autograd::NoGradGuard no_grad;
  for (const Tensor& p : parameters)
    if (p.grad().defined()) p.grad().clamp_(scalar_to_tensor(-clip_value), scalar_to_tensor(clip_value));
}

}  // namespace ember::nn::utils
