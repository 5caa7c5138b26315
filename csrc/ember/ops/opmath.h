#pragma once
// PyTorch computes most half/bfloat16 activations, and their gradients, in float and rounds the
// result once (its "opmath" type). An Ember op written as a composite of public ops would instead
// round to 16 bits after every step, which can cost more than the result's precision: gelu's
// 1 + erf(x) cancels to nothing below x = -2, silu's x * sigmoid(x) rounds twice. These helpers run
// such a composite in float for 16-bit inputs. The casts are ops of their own, so autograd records
// them when the composite is differentiated twice.
#include "ember/core/tensor.h"

namespace ember {

// f(xs...) for a result of dtype dt: when dt is half/bfloat16, on float copies of the inputs (each first
// rounded to dt, as PyTorch promotes a float64 0-d operand), the result rounded to dt once.
template <class F, class... Ts>
Tensor in_opmath_as(ScalarType dt, F f, const Ts&... xs) {
  if (!is_reduced_float(dt)) return f(xs...);
  return f(xs.to(dt).to(kFloat)...).to(dt);
}

template <class F>
Tensor in_opmath(const Tensor& x, F f) {
  return in_opmath_as(x.dtype(), f, x);
}

// A gradient formula of (grad, input): computed in float when the input is half/bfloat16, the
// result in the gradient's dtype.
template <class F>
Tensor in_opmath(const Tensor& grad, const Tensor& x, F f) {
  if (!is_reduced_float(x.dtype()) && !is_reduced_float(grad.dtype())) return f(grad, x);
  const Tensor g = is_reduced_float(grad.dtype()) ? grad.to(kFloat) : grad;
  const Tensor xf = is_reduced_float(x.dtype()) ? x.to(kFloat) : x;
  return f(g, xf).to(grad.dtype());
}

}  // namespace ember
