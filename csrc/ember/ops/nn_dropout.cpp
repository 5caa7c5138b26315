// Dropout family (ember.nn.functional.dropout*, alpha_dropout, feature_alpha_dropout).
// The mask is drawn with ember's generator (bernoulli_), so ember.manual_seed makes it
// reproducible; the output is input * mask (+ b for alpha dropout), differentiable through mul.
#include <cmath>

#include "ember/generated/native.h"
#include "ember/generated/ops.h"
#include "ember/ops/nn_common.h"

namespace ember::native {

namespace {

// Dropout's noise: one value per element, or per (sample, channel) for feature dropout.
Tensor make_noise(const Tensor& input, bool feature) {
  if (!feature) return ember::empty_like(input, TensorOptions(input.dtype()));
  EMBER_CHECK(input.dim() >= 2, "Feature dropout requires at least 2 dimensions in the input");
  DimVector shape(size_t(input.dim()), 1);
  shape[0] = input.size(0);
  shape[1] = input.size(1);
  return ember::empty(shape, TensorOptions(input.dtype()).device(input.device()));
}

Tensor dropout_impl(const Tensor& input, double p, bool train, bool feature, bool alpha, bool inplace) {
  EMBER_CHECK(p >= 0 && p <= 1, "dropout probability has to be between 0 and 1, but got ", p);
  if (p == 0 || !train || input.numel() == 0) return input;
  if (p == 1) {
    Tensor zero = ember::zeros({}, TensorOptions(input.dtype()));
    return inplace ? ember::mul_(input, zero) : ember::mul(input, zero);
  }
  Tensor noise = make_noise(input, feature);
  ember::bernoulli_(noise, scalar_to_tensor(1 - p));
  if (!alpha) {
    ember::div_(noise, scalar_to_tensor(1 - p));
    return inplace ? ember::mul_(input, noise) : ember::mul(input, noise);
  }
  // alpha dropout keeps SELU's self-normalizing mean and variance: dropped units take the
  // saturation value -alpha', and an affine map a * x + b restores zero mean and unit variance
  const double alpha_p = 1.7580993408473766;
  const double a = 1.0 / std::sqrt((alpha_p * alpha_p * p + 1) * (1 - p));
  Tensor b = (noise - 1) * (alpha_p * a) + alpha_p * a * p;
  ember::mul_(noise, scalar_to_tensor(a));
  if (inplace) return ember::add_(ember::mul_(input, noise), b);
  return ember::mul(input, noise) + b;
}

}  // namespace

Tensor dropout(const Tensor& self, double p, bool train) { return dropout_impl(self, p, train, false, false, false); }
const Tensor& dropout_(const Tensor& self, double p, bool train) {
  dropout_impl(self, p, train, false, false, true);
  return self;
}
Tensor feature_dropout(const Tensor& self, double p, bool train) {
  return dropout_impl(self, p, train, true, false, false);
}
const Tensor& feature_dropout_(const Tensor& self, double p, bool train) {
  dropout_impl(self, p, train, true, false, true);
  return self;
}
Tensor alpha_dropout(const Tensor& self, double p, bool train) {
  return dropout_impl(self, p, train, false, true, false);
}
const Tensor& alpha_dropout_(const Tensor& self, double p, bool train) {
  dropout_impl(self, p, train, false, true, true);
  return self;
}
Tensor feature_alpha_dropout(const Tensor& self, double p, bool train) {
  return dropout_impl(self, p, train, true, true, false);
}
const Tensor& feature_alpha_dropout_(const Tensor& self, double p, bool train) {
  dropout_impl(self, p, train, true, true, true);
  return self;
}

}  // namespace ember::native
