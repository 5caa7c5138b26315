// Derivatives of the special functions (ops.yaml's grad: formulas for xlogy, logit, sinc, i1, ...),
// written with differentiable ops so their second derivatives work too.
#include <cmath>
#include <limits>

#include "ember/autograd/formulas.h"
#include "ember/generated/ops.h"

namespace ember::autograd {

Tensor not_implemented(const char* what) {
  EMBER_FAIL(NotImplemented, "the derivative for '", what, "' is not implemented.");
}

// d/dx x log(y) = log(y), also at x = 0 (the forward's 0 there is a limit, not a constant), except where
// y <= 0 (y <= -1 for log1p) makes the log undefined: PyTorch returns 0 there.
Tensor xlogy_self_grad(const Tensor& grad, const Tensor& self, const Tensor& other, bool log1p) {
  Tensor g = log1p ? ember::special_xlog1py(grad, other) : ember::xlogy(grad, other);
  Tensor undefined = ember::logical_and(ember::eq(self, Scalar(0.0)), ember::le(other, Scalar(log1p ? -1.0 : 0.0)));
  return ember::where(undefined, Scalar(0.0), g);
}

// 1 / (x (1 - x)); outside [0, 1] NaN, or with eps outside [eps, 1 - eps] 0 (the clamp is flat there)
Tensor logit_backward(const Tensor& grad, const Tensor& self, std::optional<double> eps) {
  Tensor d = grad / (self * (-self + 1));
  if (!eps || *eps < 0) {
    Tensor outside = ember::logical_or(ember::lt(self, Scalar(0.0)), ember::gt(self, Scalar(1.0)));
    return ember::where(outside, Scalar(std::numeric_limits<double>::quiet_NaN()), d);
  }
  Tensor clamped = ember::logical_or(ember::lt(self, Scalar(*eps)), ember::gt(self, Scalar(1.0 - *eps)));
  return ember::where(clamped, Scalar(0.0), d);
}

// sinc'(x) = (cos(pi x) - sinc(x)) / x, 0 at x = 0
Tensor sinc_backward(const Tensor& grad, const Tensor& self) {
  Tensor d = (ember::cos(self * M_PI) - ember::sinc(self)) / self;
  return ember::where(ember::eq(self, Scalar(0.0)), Scalar(0.0), grad * d);
}

// I1'(x) = I0(x) - I1(x)/x; for e^-|x| I1(x) also - sgn(x) i1e(x); 1/2 at x = 0 either way
Tensor i1_backward(const Tensor& grad, const Tensor& self, const Tensor& result, bool scaled) {
  Tensor d = scaled ? ember::special_i0e(self) - result * (self.sgn() + self.reciprocal())
                    : ember::i0(self) - result / self;
  return grad * ember::where(ember::eq(self, Scalar(0.0)), Scalar(0.5), d);
}

// copysign(x, y) = +-x: the slope is result / x (+-1), and 0 at x = 0 as PyTorch's
Tensor copysign_self_grad(const Tensor& grad, const Tensor& self, const Tensor& result) {
  return grad * ember::where(ember::eq(self, Scalar(0.0)), Scalar(0.0), result / self);
}

}  // namespace ember::autograd
