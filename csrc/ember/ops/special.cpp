// Special functions: the bodies ops.yaml's generated kernels don't cover (polygamma's order, logit's
// eps, mvlgamma and ndtr as composites) and the Scalar overloads that wrap a number into a tensor.
#include <cmath>

#include "ember/core/operators.h"
#include "ember/generated/native.h"
#include "ember/generated/ops.h"
#include "ember/iter/elementwise.h"
#include "ember/iter/tensor_iter.h"
#include "ember/kernels/kernels.h"

namespace ember {
namespace native {

namespace {
Tensor polygamma_impl(int64_t n, const Tensor& self, const Tensor& out, OutMode mode) {
  EMBER_CHECK(n >= 0, "polygamma(n, x) does not support negative n.");
  return unary_op(UnaryKernel::Polygamma, kPromoteToFloat, self, out, mode, "polygamma", Scalar(n));
}
Tensor logit_impl(const Tensor& self, std::optional<double> eps, const Tensor& out, OutMode mode) {
  // a negative eps means no clamping, as PyTorch's
  return unary_op(UnaryKernel::Logit, kPromoteToFloat, self, out, mode, "logit", Scalar(eps.value_or(-1.0)));
}
}  // namespace

Tensor polygamma(int64_t n, const Tensor& self) { return polygamma_impl(n, self, Tensor(), OutMode::Functional); }
const Tensor& polygamma_out(const Tensor& out, int64_t n, const Tensor& self) {
  polygamma_impl(n, self, out, OutMode::Out);
  return out;
}

Tensor logit(const Tensor& self, std::optional<double> eps) { return logit_impl(self, eps, Tensor(), OutMode::Functional); }
const Tensor& logit_(const Tensor& self, std::optional<double> eps) {
  logit_impl(self, eps, self, OutMode::Inplace);
  return self;
}
const Tensor& logit_out(const Tensor& out, const Tensor& self, std::optional<double> eps) {
  logit_impl(self, eps, out, OutMode::Out);
  return out;
}

// log of the multivariate gamma: sum_{j<p} lgamma(x - j/2) + p(p-1)/4 log(pi), a composite (so
// differentiable) over a trailing dimension of the p shifted copies
Tensor mvlgamma(const Tensor& self, int64_t p) {
  EMBER_CHECK(self.dtype() != kBool, "The input tensor may not be a boolean tensor.");
  EMBER_CHECK(p >= 1, "p has to be greater than or equal to 1");
  ScalarType dt = is_floating(self.dtype()) ? self.dtype() : default_dtype();
  Tensor shifts = ember::mul(ember::arange(Scalar(int64_t(0)), Scalar(p), Scalar(int64_t(1)), TensorOptions().dtype(dt).device(self.device())),
                             Scalar(-0.5));
  Tensor terms = ember::lgamma(ember::add(self.unsqueeze(-1), shifts));
  return ember::add(ember::sum(terms, IntArrayRef{-1}, false), Scalar(double(p) * double(p - 1) / 4 * std::log(M_PI)));
}
const Tensor& mvlgamma_(const Tensor& self, int64_t p) {
  Tensor r = native::mvlgamma(self, p);
  EMBER_CHECK(is_floating(self.dtype()), "result type ", r.dtype(), " can't be cast to the desired output type ",
              self.dtype());
  return ember::copy_(self, r);
}
const Tensor& mvlgamma_out(const Tensor& out, const Tensor& self, int64_t p) {
  return copy_to_out(out, native::mvlgamma(self, p), false);
}

// Phi(x) = erfc(-x / sqrt 2) / 2: the complement keeps the lower tail's digits
Tensor special_ndtr(const Tensor& self) {
  if (self.dtype() == kHalf || self.dtype() == kBFloat16)  // in float, rounded once (as PyTorch's kernel)
    return native::special_ndtr(self.to(kFloat)).to(self.dtype());
  return ember::mul(ember::erfc(ember::mul(self, Scalar(-0.70710678118654752440))), Scalar(0.5));
}
const Tensor& special_ndtr_out(const Tensor& out, const Tensor& self) {
  return copy_to_out(out, native::special_ndtr(self), false);
}

// ---- overloads taking a Python number on one side: the number becomes a wrapped 0-d tensor, so
// type promotion treats it as a scalar
Tensor xlogy(const Scalar& self, const Tensor& other) { return ember::xlogy(scalar_to_tensor(self), other); }
const Tensor& xlogy_out(const Tensor& out, const Scalar& self, const Tensor& other) {
  return ember::xlogy_out(out, scalar_to_tensor(self), other);
}
Tensor xlogy(const Tensor& self, const Scalar& other) { return ember::xlogy(self, scalar_to_tensor(other)); }
const Tensor& xlogy_(const Tensor& self, const Scalar& other) { return ember::xlogy_(self, scalar_to_tensor(other)); }
const Tensor& xlogy_out(const Tensor& out, const Tensor& self, const Scalar& other) {
  return ember::xlogy_out(out, self, scalar_to_tensor(other));
}

#define EMBER_SCALAR_OVERLOADS(op)                                                                  \
  Tensor op(const Scalar& a, const Tensor& b) { return ember::op(scalar_to_tensor(a), b); }         \
  const Tensor& op##_out(const Tensor& out, const Scalar& a, const Tensor& b) {                      \
    return ember::op##_out(out, scalar_to_tensor(a), b);                                             \
  }                                                                                                  \
  Tensor op(const Tensor& a, const Scalar& b) { return ember::op(a, scalar_to_tensor(b)); }         \
  const Tensor& op##_out(const Tensor& out, const Tensor& a, const Scalar& b) {                      \
    return ember::op##_out(out, a, scalar_to_tensor(b));                                             \
  }
EMBER_SCALAR_OVERLOADS(special_xlog1py)
EMBER_SCALAR_OVERLOADS(special_zeta)
EMBER_SCALAR_OVERLOADS(special_chebyshev_polynomial_t)
EMBER_SCALAR_OVERLOADS(special_chebyshev_polynomial_u)
EMBER_SCALAR_OVERLOADS(special_chebyshev_polynomial_v)
EMBER_SCALAR_OVERLOADS(special_chebyshev_polynomial_w)
EMBER_SCALAR_OVERLOADS(special_shifted_chebyshev_polynomial_t)
EMBER_SCALAR_OVERLOADS(special_shifted_chebyshev_polynomial_u)
EMBER_SCALAR_OVERLOADS(special_shifted_chebyshev_polynomial_v)
EMBER_SCALAR_OVERLOADS(special_shifted_chebyshev_polynomial_w)
EMBER_SCALAR_OVERLOADS(special_hermite_polynomial_h)
EMBER_SCALAR_OVERLOADS(special_hermite_polynomial_he)
EMBER_SCALAR_OVERLOADS(special_laguerre_polynomial_l)
EMBER_SCALAR_OVERLOADS(special_legendre_polynomial_p)
#undef EMBER_SCALAR_OVERLOADS

}  // namespace native
}  // namespace ember
