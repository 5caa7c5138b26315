#pragma once
// Free-function forms libtorch code calls that the op schemas do not spell: pow with a number on
// either side, and the whole-tensor comparisons equal / allclose.
#include "ember/core/operators.h"

namespace ember {

// pow(t, 2): the number as a wrapped scalar, so the result keeps t's dtype (as t.pow(2))
inline Tensor pow(const Tensor& self, const Scalar& exponent) { return ember::pow(self, scalar_to_tensor(exponent)); }
inline Tensor pow(const Scalar& base, const Tensor& exponent) { return ember::pow(scalar_to_tensor(base), exponent); }

// Same shape and the same values (torch.equal).
inline bool equal(const Tensor& a, const Tensor& b) {
  return a.sizes() == b.sizes() && ember::eq(a, b).all().item<bool>();
}

// |a - b| <= atol + rtol * |b| everywhere, NaN equal to NaN when equal_nan (torch.allclose).
inline bool allclose(const Tensor& a, const Tensor& b, double rtol = 1e-05, double atol = 1e-08, bool equal_nan = false) {
  Tensor close = ember::le(ember::abs(a - b), scalar_to_tensor(atol) + scalar_to_tensor(rtol) * ember::abs(b));
  close = ember::logical_or(close, ember::eq(a, b));  // equal infinities
  if (equal_nan) close = ember::logical_or(close, ember::logical_and(ember::isnan(a), ember::isnan(b)));
  return close.all().item<bool>();
}

}  // namespace ember
