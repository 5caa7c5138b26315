// More of torch.*'s math: elementwise extras (copysign's Scalar form, heaviside, ldexp, frexp,
// deg2rad, addcmul/addcdiv, ...), small statistics (aminmax, dist, renorm, nanmedian, quantile, cov,
// corrcoef), integration (trapezoid) and the scatter-into-a-view family. Most are composites of
// differentiable ops: their gradients are those of the ops they call.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "ember/autograd/formulas.h"
#include "ember/core/operators.h"
#include "ember/generated/native.h"
#include "ember/generated/ops.h"
#include "ember/iter/elementwise.h"
#include "ember/iter/tensor_iter.h"
#include "ember/kernels/kernels.h"
#include "ember/ops/opmath.h"

namespace ember {
namespace native {

namespace {
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// op_ as op computed into self. The graph of op may save its input: when autograd records, it reads a
// copy, so writing self afterwards doesn't invalidate what backward needs.
template <class F>
const Tensor& compute_into_self(const Tensor& self, F op) {
  Tensor src = self.requires_grad() ? self.clone() : self;
  return ember::copy_(self, op(src));
}

// a view's result written into a fresh out= / self
const Tensor& write_out(const Tensor& out, const Tensor& r) { return copy_to_out(out, r, false); }

Tensor heaviside_impl(const Tensor& self, const Tensor& values, const Tensor& out, OutMode mode) {
  EMBER_CHECK(self.dtype() == values.dtype(), "heaviside is not yet implemented for tensors with different dtypes.");
  return binary_op(BinaryKernel::Heaviside, 0, self, values, Scalar(1), out, mode, "heaviside");
}

Tensor two_pow(const Tensor& e) { return ember::pow(scalar_to_tensor(Scalar(2.0)), e); }  // 2^e in e's dtype

// integer and bool tensors compute in the default float dtype; floating and complex ones as they are
Tensor with_float_dtype(const Tensor& t) { return is_differentiable_dtype(t.dtype()) ? t : t.to(default_dtype()); }

// the angle factor
Tensor scale_angle(const Tensor& self, double factor, const char* name) {
  EMBER_CHECK(!is_complex(self.dtype()), name, " is not supported for complex tensors.");
  return ember::mul(with_float_dtype(self), Scalar(factor));
}
}  // namespace

Tensor copysign(const Tensor& self, const Scalar& other) { return ember::copysign(self, scalar_to_tensor(other)); }
const Tensor& copysign_(const Tensor& self, const Scalar& other) { return ember::copysign_(self, scalar_to_tensor(other)); }
const Tensor& copysign_out(const Tensor& out, const Tensor& self, const Scalar& other) {
  return ember::copysign_out(out, self, scalar_to_tensor(other));
}

Tensor heaviside(const Tensor& self, const Tensor& values) { return heaviside_impl(self, values, Tensor(), OutMode::Functional); }
const Tensor& heaviside_(const Tensor& self, const Tensor& values) {
  heaviside_impl(self, values, self, OutMode::Inplace);
  return self;
}
const Tensor& heaviside_out(const Tensor& out, const Tensor& self, const Tensor& values) {
  EMBER_CHECK(out.dtype() == self.dtype(), "heaviside is not yet implemented for tensors with different dtypes.");
  heaviside_impl(self, values, out, OutMode::Out);
  return out;
}

// self * 2^other, in the promoted floating dtype of both (integer inputs: the default float dtype)
namespace {
Tensor exp2_like(const Tensor& self, const Tensor& other) {
  ScalarType dt = promote_types(self.dtype(), other.dtype());
  return two_pow(other.to(is_floating(dt) || is_complex(dt) ? dt : default_dtype()));
}
}  // namespace
Tensor ldexp(const Tensor& self, const Tensor& other) { return ember::mul(self, exp2_like(self, other)); }
const Tensor& ldexp_(const Tensor& self, const Tensor& other) { return self.mul_(exp2_like(self, other)); }
const Tensor& ldexp_out(const Tensor& out, const Tensor& self, const Tensor& other) {
  return write_out(out, native::ldexp(self, other));
}

// x = mantissa * 2^exponent with |mantissa| in [0.5, 1); 0, inf and NaN keep themselves and exponent 0
std::tuple<Tensor, Tensor> frexp(const Tensor& self) {
  EMBER_CHECK(is_floating(self.dtype()), "torch.frexp() only supports floating-point dtypes");
  Tensor x = self.contiguous();
  Tensor mant = ember::empty(x.sizes(), TensorOptions(x.dtype()));
  Tensor expo = ember::empty(x.sizes(), TensorOptions(kInt));
  int32_t* e = expo.data_ptr<int32_t>();
  int64_t n = x.numel();
  auto run = [&](auto tag) {
    using T = decltype(tag);
    const T* in = x.data_ptr<T>();
    T* m = mant.data_ptr<T>();
    for (int64_t i = 0; i < n; i++) {
      int ex = 0;
      double v = double(in[i]);
      double mv = std::isfinite(v) ? std::frexp(v, &ex) : v;  // frexp's exponent is unspecified for inf/NaN
      m[i] = T(mv);
      e[i] = std::isfinite(v) ? ex : 0;
    }
  };
  switch (x.dtype()) {
    case kFloat: run(float()); break;
    case kDouble: run(double()); break;
    case kHalf: run(Half()); break;
    default: run(BFloat16()); break;
  }
  return {mant, expo};
}
std::tuple<Tensor, Tensor> frexp_out(const Tensor& mantissa, const Tensor& exponent, const Tensor& self) {
  auto [m, e] = native::frexp(self);
  EMBER_CHECK(mantissa.dtype() == self.dtype(), "torch.frexp() expects mantissa to have dtype ", self.dtype(),
              " but got ", mantissa.dtype());
  EMBER_CHECK(exponent.dtype() == kInt, "torch.frexp() expects exponent to have int dtype but got ", exponent.dtype());
  copy_to_out(mantissa, m, true);
  copy_to_out(exponent, e, true);
  return {mantissa, exponent};
}

Tensor deg2rad(const Tensor& self) {
  return scale_angle(self, M_PI / 180.0, "deg2rad");
}
const Tensor& deg2rad_(const Tensor& self) {
  return compute_into_self(self, [](const Tensor& x) { return native::deg2rad(x); });
}
const Tensor& deg2rad_out(const Tensor& out, const Tensor& self) { return write_out(out, native::deg2rad(self)); }
Tensor rad2deg(const Tensor& self) {
  return scale_angle(self, 180.0 / M_PI, "rad2deg");
}
const Tensor& rad2deg_(const Tensor& self) {
  return compute_into_self(self, [](const Tensor& x) { return native::rad2deg(x); });
}
const Tensor& rad2deg_out(const Tensor& out, const Tensor& self) { return write_out(out, native::rad2deg(self)); }

// self + value * t1 * t2 and self + value * t1 / t2; value is cast to an integer result's dtype (0.5 -> 0)
namespace {
Tensor add_scaled(const Tensor& self, const Tensor& term, const Scalar& value) {
  const Tensor both[2] = {self, term};
  ScalarType dt = result_type(both, 2);
  check_scalar_fits(value, dt);
  Scalar v = is_floating(dt) || is_complex(dt) || value.is_integral(true) ? value : Scalar(int64_t(value.to<double>()));
  return ember::add(self, term, v);
}
void check_addcdiv(const Tensor& t1, const Tensor& t2) {
  EMBER_CHECK(!is_integral(t1.dtype(), true) || !is_integral(t2.dtype(), true),
              "Integer division with addcdiv is no longer supported, and in a future release addcdiv will perform "
              "a true division of tensor1 and tensor2. The historic addcdiv behavior can be implemented as "
              "(input + value * torch.trunc(tensor1 / tensor2)).to(input.dtype) for integer inputs and as "
              "(input + value * tensor1 / tensor2) for float inputs. The future addcdiv behavior is just the latter "
              "implementation: (input + value * tensor1 / tensor2), for all dtypes.");
}
}  // namespace
// Half/bfloat16 operands of one dtype compute in float and round once, as PyTorch's kernels (in the dtype
// itself value * t1 * t2 would round twice before the sum: tens of ulps off)
static bool one_reduced_dtype(const Tensor& a, const Tensor& b, const Tensor& c) {
  return is_reduced_float(a.dtype()) && b.dtype() == a.dtype() && c.dtype() == a.dtype();
}
// value=True/False scales by 1/0 (torch takes a bool value here, unlike add's alpha)
static Scalar numeric(const Scalar& v) { return v.is_bool() ? Scalar(int64_t(v.to_bool())) : v; }

Tensor addcmul(const Tensor& self, const Tensor& t1, const Tensor& t2, const Scalar& value_in) {
  const Scalar value = numeric(value_in);
  if (one_reduced_dtype(self, t1, t2))
    return in_opmath_as(self.dtype(), [&](const Tensor& a, const Tensor& b, const Tensor& c) {
      return native::addcmul(a, b, c, value);
    }, self, t1, t2);
  return add_scaled(self, ember::mul(t1, t2), value);
}
const Tensor& addcmul_(const Tensor& self, const Tensor& t1, const Tensor& t2, const Scalar& value_in) {
  const Scalar value = numeric(value_in);
  if (one_reduced_dtype(self, t1, t2)) return ember::copy_(self, native::addcmul(self, t1, t2, value));
  return self.add_(ember::mul(t1, t2), value);
}
const Tensor& addcmul_out(const Tensor& out, const Tensor& self, const Tensor& t1, const Tensor& t2, const Scalar& value) {
  return write_out(out, native::addcmul(self, t1, t2, value));
}
Tensor addcdiv(const Tensor& self, const Tensor& t1, const Tensor& t2, const Scalar& value_in) {
  const Scalar value = numeric(value_in);
  check_addcdiv(t1, t2);
  if (one_reduced_dtype(self, t1, t2))  // self + (value * t1) / t2 in float, PyTorch's order
    return in_opmath_as(self.dtype(), [&](const Tensor& a, const Tensor& b, const Tensor& c) {
      return ember::add(a, ember::div(ember::mul(b, value), c));
    }, self, t1, t2);
  return add_scaled(self, ember::div(t1, t2), value);
}
const Tensor& addcdiv_(const Tensor& self, const Tensor& t1, const Tensor& t2, const Scalar& value_in) {
  const Scalar value = numeric(value_in);
  check_addcdiv(t1, t2);
  if (one_reduced_dtype(self, t1, t2)) return ember::copy_(self, native::addcdiv(self, t1, t2, value));
  return self.add_(ember::div(t1, t2), value);
}
const Tensor& addcdiv_out(const Tensor& out, const Tensor& self, const Tensor& t1, const Tensor& t2, const Scalar& value) {
  return write_out(out, native::addcdiv(self, t1, t2, value));
}

Tensor positive(const Tensor& self) {
  EMBER_CHECK(self.dtype() != kBool, "The `+` operator, on a bool tensor is not supported.");
  return self;
}

Tensor rsub(const Tensor& self, const Tensor& other, const Scalar& alpha) { return ember::sub(other, self, alpha); }
Tensor rsub(const Tensor& self, const Scalar& other, const Scalar& alpha) {
  return ember::sub(scalar_to_tensor(other), self, alpha);
}

// a complex element is real when its imaginary part is zero; every element of a real tensor is
Tensor isreal(const Tensor& self) {
  if (is_complex(self.dtype())) return ember::eq(autograd::imag_part(self.detach()), Scalar(0.0));
  return ember::ones_like(self, TensorOptions(kBool));
}

// membership by binary search in the sorted test elements
Tensor isin(const Tensor& elements, const Tensor& test, bool assume_unique, bool invert) {
  (void)assume_unique;  // an optimisation hint: the answer is the same
  ScalarType dt = promote_types(elements.dtype(), test.dtype());
  Tensor e = elements.to(dt), t = std::get<0>(ember::sort(test.reshape({-1}).to(dt)));
  Tensor r;
  if (t.numel() == 0) {
    r = ember::zeros(elements.sizes(), TensorOptions(kBool).device(elements.device()));
  } else {
    Tensor pos = ember::clamp_max(ember::searchsorted(t, e.contiguous()), scalar_to_tensor(Scalar(t.numel() - 1)));
    r = ember::eq(ember::take(t, pos), e);
  }
  return invert ? ember::logical_not(r) : r;
}
const Tensor& isin_out(const Tensor& out, const Tensor& elements, const Tensor& test, bool assume_unique, bool invert) {
  return copy_to_out(out, native::isin(elements, test, assume_unique, invert), true);
}
Tensor isin(const Tensor& elements, const Scalar& test, bool assume_unique, bool invert) {
  return native::isin(elements, scalar_to_tensor(test), assume_unique, invert);
}
const Tensor& isin_out(const Tensor& out, const Tensor& elements, const Scalar& test, bool assume_unique, bool invert) {
  return copy_to_out(out, native::isin(elements, test, assume_unique, invert), true);
}
Tensor isin(const Scalar& element, const Tensor& test, bool assume_unique, bool invert) {
  return native::isin(scalar_to_tensor(element), test, assume_unique, invert);
}
const Tensor& isin_out(const Tensor& out, const Scalar& element, const Tensor& test, bool assume_unique, bool invert) {
  return copy_to_out(out, native::isin(element, test, assume_unique, invert), true);
}

std::tuple<Tensor, Tensor> aminmax(const Tensor& self, std::optional<int64_t> dim, bool keepdim) {
  if (dim) {
    int64_t d = wrap_dim(*dim, std::max<int64_t>(self.dim(), 1));
    if (self.dim() > 0)
      EMBER_CHECK_KIND(self.sizes()[d] > 0, Index, "aminmax(): Expected reduction dim ", d, " to have non-zero size.");
    return {ember::amin(self, IntArrayRef{*dim}, keepdim), ember::amax(self, IntArrayRef{*dim}, keepdim)};
  }
  EMBER_CHECK(self.numel() > 0, "aminmax(): cannot compute aminmax over an empty dimension as the operation has no "
              "identity.");
  Tensor flat = self.reshape({-1});
  Tensor mn = ember::amin(flat, IntArrayRef{0}, false), mx = ember::amax(flat, IntArrayRef{0}, false);
  if (keepdim) {
    std::vector<int64_t> ones(self.dim(), 1);
    return {mn.reshape(ones), mx.reshape(ones)};
  }
  return {mn, mx};
}
std::tuple<Tensor, Tensor> aminmax_out(const Tensor& mn, const Tensor& mx, const Tensor& self,
                                       std::optional<int64_t> dim, bool keepdim) {
  auto [a, b] = native::aminmax(self, dim, keepdim);
  copy_to_out(mn, a, true);
  copy_to_out(mx, b, true);
  return {mn, mx};
}

Tensor dist(const Tensor& self, const Tensor& other, const Scalar& p) { return ember::norm(ember::sub(self, other), p); }

// each slice along `dim` whose p-norm exceeds maxnorm is scaled down to maxnorm
Tensor renorm(const Tensor& self, const Scalar& p, int64_t dim, const Scalar& maxnorm) {
  EMBER_CHECK(p.to<double>() > 0, "renorm: non-positive-norm not supported");
  EMBER_CHECK(maxnorm.to<double>() >= 0, "renorm: expected maxnorm to be >= 0 but got ", maxnorm.to<double>());
  int64_t nd = self.dim();
  EMBER_CHECK(nd > 1, "renorm: input needs at least 2 dimensions, got ", nd, " dimensions");
  int64_t d = wrap_dim(dim, nd);
  std::vector<int64_t> others;
  for (int64_t i = 0; i < nd; i++)
    if (i != d) others.push_back(i);
  Tensor norms = ember::norm(self, p, IntArrayRef(others), true);
  // torch's factor: maxnorm / (norm + 1e-7) where the norm exceeds maxnorm, else 1
  Tensor factor = ember::where(ember::gt(norms, maxnorm), ember::div(scalar_to_tensor(maxnorm), norms + 1e-7),
                               Scalar(1.0));
  return ember::mul(self, factor);
}
const Tensor& renorm_(const Tensor& self, const Scalar& p, int64_t dim, const Scalar& maxnorm) {
  return compute_into_self(self, [&](const Tensor& x) { return native::renorm(x, p, dim, maxnorm); });
}
const Tensor& renorm_out(const Tensor& out, const Tensor& self, const Scalar& p, int64_t dim, const Scalar& maxnorm) {
  return copy_to_out(out, native::renorm(self, p, dim, maxnorm), true);
}

Tensor msort(const Tensor& self) { return std::get<0>(ember::sort(self, 0, false)); }
const Tensor& msort_out(const Tensor& out, const Tensor& self) { return copy_to_out(out, native::msort(self), true); }

// ---- nanmedian and quantiles: sort (NaN last), then pick by the count of non-NaN values
std::tuple<Tensor, Tensor> nanmedian(const Tensor& self, int64_t dim, bool keepdim) {
  EMBER_CHECK_KIND(!is_complex(self.dtype()), NotImplemented, "\"median_out\" not implemented for '", self.dtype(), "'");
  int64_t nd = self.dim();
  int64_t d = wrap_dim(dim, std::max<int64_t>(nd, 1));
  if (nd == 0) return {self.clone(), ember::zeros({}, TensorOptions(kLong).device(self.device()))};
  EMBER_CHECK_KIND(self.sizes()[d] > 0, Index, "nanmedian(): Expected reduction dim ", d, " to have non-zero size.");
  auto [sorted, order] = ember::sort(self, std::optional<bool>(true), d, false);
  Tensor valid = ember::sum(ember::logical_not(ember::isnan(self)), IntArrayRef{d}, true);
  // the lower median of the valid values; an all-NaN slice picks its first (NaN) element
  Tensor pos = ember::clamp_min(ember::floor_divide(ember::sub(valid, Scalar(int64_t(1))), Scalar(int64_t(2))),
                                scalar_to_tensor(Scalar(int64_t(0))));
  Tensor v = ember::gather(sorted, d, pos), i = ember::gather(order, d, pos);
  if (!keepdim) return {v.squeeze(d), i.squeeze(d)};
  return {v, i};
}
std::tuple<Tensor, Tensor> nanmedian_out(const Tensor& values, const Tensor& indices, const Tensor& self,
                                         int64_t dim, bool keepdim) {
  auto [v, i] = native::nanmedian(self, dim, keepdim);
  copy_to_out(values, v, true);
  copy_to_out(indices, i, true);
  return {values, indices};
}
Tensor nanmedian(const Tensor& self) {
  EMBER_CHECK_KIND(!is_complex(self.dtype()), NotImplemented, "\"nanmedian_cpu\" not implemented for '", self.dtype(),
                   "'");
  if (self.numel() == 0) return ember::full({}, kNaN, TensorOptions(self.dtype()).device(self.device()));
  return std::get<0>(native::nanmedian(self.reshape({-1}), 0, false));
}

namespace {
Tensor quantile_impl(const Tensor& self, const Tensor& q_in, bool q_scalar, std::optional<int64_t> dim, bool keepdim,
                     std::string_view interpolation, bool ignore_nan, const char* name) {
  EMBER_CHECK(self.numel() > 0, name, "() input tensor must be non-empty");
  EMBER_CHECK(q_in.dim() <= 1, name, "() q must be a scalar or 1D tensor");
  EMBER_CHECK(self.dtype() == kFloat || self.dtype() == kDouble, name,
              "() input tensor must be either float or double dtype");
  EMBER_CHECK(q_in.dtype() == self.dtype(), name, "() q tensor must be same dtype as the input tensor");
  EMBER_CHECK(q_in.device() == self.device(), name, "() q tensor must be on the same device as the input tensor");
  int mode = interpolation == "linear" ? 0 : interpolation == "lower" ? 1 : interpolation == "higher" ? 2
           : interpolation == "midpoint" ? 3 : interpolation == "nearest" ? 4 : -1;
  EMBER_CHECK(mode >= 0, name, "() interpolation must be one of linear, lower, higher, midpoint or nearest. Got ",
              interpolation);
  Tensor q = q_in.reshape({-1});
  if (q.numel() > 0 && !q.is_meta()) {  // (meta: no values to check)
    bool in_range = ember::logical_and(ember::ge(q, Scalar(0.0)), ember::le(q, Scalar(1.0))).all().item().to<bool>();
    EMBER_CHECK(in_range, name, "() q values must be in the range [0, 1]");
  }
  // move the reduced values to the last dimension
  Tensor x;
  std::vector<int64_t> out_shape;
  if (dim) {
    int64_t nd = std::max<int64_t>(self.dim(), 1);
    int64_t d = wrap_dim(*dim, nd);
    x = self.dim() == 0 ? self.reshape({1}) : self.movedim(IntArrayRef{d}, IntArrayRef{-1});
    for (int64_t i = 0; i < self.dim(); i++)
      if (i != d) out_shape.push_back(self.sizes()[i]);
      else if (keepdim) out_shape.push_back(1);
  } else {
    x = self.reshape({-1});
    if (keepdim) out_shape.assign(self.dim(), 1);
  }
  Tensor sorted = std::get<0>(ember::sort(x, std::optional<bool>(true), -1, false));  // NaN last
  int64_t n = sorted.sizes().back();
  Tensor nan_mask = ember::isnan(sorted);
  Tensor count = ignore_nan ? ember::sum(ember::logical_not(nan_mask), IntArrayRef{-1}, true)
                            : ember::full({1}, Scalar(n), TensorOptions(kLong).device(self.device()));
  // rank = q * (count - 1), per slice and q: shape (..., nq)
  Tensor last = ember::clamp_min(ember::sub(count, Scalar(int64_t(1))), scalar_to_tensor(Scalar(int64_t(0))))
                    .to(self.dtype());
  Tensor rank = ember::mul(last, q);
  if (mode == 4) rank = ember::round(rank);  // half to even
  Tensor lo = ember::floor(rank), hi = ember::ceil(rank);
  Tensor lo_i = lo.to(kLong), hi_i = hi.to(kLong);
  std::vector<int64_t> bshape(sorted.sizes().begin(), sorted.sizes().end());
  bshape.back() = q.numel();
  lo_i = lo_i.expand(bshape).contiguous();
  hi_i = hi_i.expand(bshape).contiguous();
  Tensor v_lo = ember::gather(sorted, -1, lo_i), v_hi = ember::gather(sorted, -1, hi_i);
  Tensor r;
  switch (mode) {
    case 1: r = v_lo; break;
    case 2: r = v_hi; break;
    case 3: r = ember::mul(ember::add(v_lo, v_hi), Scalar(0.5)); break;
    case 4: r = v_lo; break;  // the rank was rounded
    default: r = ember::lerp(v_lo, v_hi, ember::sub(rank, lo).expand(bshape)); break;
  }
  // NaN where the slice holds a NaN (quantile) or nothing but NaN (nanquantile)
  Tensor has_nan = ignore_nan ? ember::eq(count, Scalar(int64_t(0))) : ember::any(nan_mask, IntArrayRef{-1}, true);
  r = ember::where(has_nan, Scalar(kNaN), r);
  // (..., nq) -> (nq, out_shape...) or out_shape for a scalar q
  r = r.movedim(IntArrayRef{-1}, IntArrayRef{0});
  std::vector<int64_t> final_shape;
  if (!q_scalar) final_shape.push_back(q.numel());
  final_shape.insert(final_shape.end(), out_shape.begin(), out_shape.end());
  return r.reshape(final_shape);
}
}  // namespace

#define EMBER_QUANTILE(op, ignore_nan)                                                                                   \
  Tensor op(const Tensor& self, const Tensor& q, std::optional<int64_t> dim, bool keepdim, std::string_view interp) {  \
    return quantile_impl(self, q, q.dim() == 0, dim, keepdim, interp, ignore_nan, #op);                                 \
  }                                                                                                                     \
  const Tensor& op##_out(const Tensor& out, const Tensor& self, const Tensor& q, std::optional<int64_t> dim,            \
                         bool keepdim, std::string_view interp) {                                                      \
    return copy_to_out(out, native::op(self, q, dim, keepdim, interp), true);                                           \
  }                                                                                                                     \
  Tensor op(const Tensor& self, double q, std::optional<int64_t> dim, bool keepdim, std::string_view interp) {         \
    return quantile_impl(self, ember::full({}, Scalar(q), TensorOptions(self.dtype()).device(self.device())), true, dim, \
                         keepdim, interp,                                                                               \
                         ignore_nan, #op);                                                                              \
  }                                                                                                                     \
  const Tensor& op##_out(const Tensor& out, const Tensor& self, double q, std::optional<int64_t> dim, bool keepdim,    \
                         std::string_view interp) {                                                                     \
    return copy_to_out(out, native::op(self, q, dim, keepdim, interp), true);                                           \
  }
EMBER_QUANTILE(quantile, false)
EMBER_QUANTILE(nanquantile, true)
#undef EMBER_QUANTILE

// ---- covariance of the rows (variables) over the columns (observations)
Tensor cov(const Tensor& self, int64_t correction, const Tensor& fweights, const Tensor& aweights) {
  EMBER_CHECK(self.dim() <= 2, "cov(): expected input to have two or fewer dimensions but got an input with ",
              self.dim(), " dimensions");
  Tensor x = self.dim() < 2 ? self.reshape({1, -1}) : self;
  x = with_float_dtype(x);
  int64_t n_obs = x.sizes()[1];
  Tensor w;
  if (fweights.defined()) {
    EMBER_CHECK(fweights.dim() <= 1, "cov(): expected fweights to have one or fewer dimensions but got fweights with ",
                fweights.dim(), " dimensions");
    EMBER_CHECK(is_integral(fweights.dtype(), false), "cov(): expected fweights to have integral dtype but got "
                "fweights with ", fweights.dtype(), " dtype");
    EMBER_CHECK(fweights.numel() == n_obs, "cov(): expected fweights to have the same numel as there are "
                "observations in the input but got ", fweights.numel(), " != ", n_obs);
    EMBER_CHECK(ember::ge(fweights, Scalar(int64_t(0))).all().item().to<bool>(),
                "cov(): fweights cannot be negative");
    w = fweights;
  }
  if (aweights.defined()) {
    EMBER_CHECK(aweights.dim() <= 1, "cov(): expected aweights to have one or fewer dimensions but got aweights with ",
                aweights.dim(), " dimensions");
    EMBER_CHECK(is_floating(aweights.dtype()), "cov(): expected aweights to have floating point dtype but got "
                "aweights with ", aweights.dtype(), " dtype");
    EMBER_CHECK(aweights.numel() == n_obs, "cov(): expected aweights to have the same numel as there are "
                "observations in the input but got ", aweights.numel(), " != ", n_obs);
    EMBER_CHECK(ember::ge(aweights, Scalar(0.0)).all().item().to<bool>(), "cov(): aweights cannot be negative");
    w = w.defined() ? ember::mul(w, aweights) : aweights;
  }
  Tensor w_sum = w.defined() ? ember::sum(w) : ember::full({}, Scalar(n_obs), TensorOptions(kLong));
  Tensor avg = w.defined() ? ember::div(ember::sum(ember::mul(x, w), IntArrayRef{1}, false), w_sum)
                           : ember::mean(x, IntArrayRef{1}, false);
  // normalisation: w_sum - correction (* sum(w * a) / w_sum with aweights)
  Tensor norm_factor;
  if (w.defined() && correction != 0) {
    norm_factor = aweights.defined()
        ? ember::sub(w_sum, ember::div(ember::mul(ember::sum(ember::mul(w, aweights)), Scalar(correction)), w_sum))
        : ember::sub(w_sum, Scalar(correction));
  } else {
    norm_factor = ember::sub(w_sum, Scalar(correction));
  }
  norm_factor = ember::clamp_min(norm_factor.to(to_real_dtype(x.dtype())), scalar_to_tensor(Scalar(0.0)));
  Tensor xm = ember::sub(x, avg.unsqueeze(1));
  Tensor xw = w.defined() ? ember::mul(xm, w) : xm;
  // complex variables: E[(x - mean) conj(y - mean)]
  Tensor c = ember::div(ember::matmul(xw, is_complex(xm.dtype()) ? ember::conj_physical(xm).t() : xm.t()), norm_factor);
  return c.squeeze();  // one variable: a 0-d variance, as PyTorch's
}

Tensor corrcoef(const Tensor& self) {
  EMBER_CHECK(self.dim() <= 2, "corrcoef(): expected input to have two or fewer dimensions but got an input with ",
              self.dim(), " dimensions");
  Tensor c = native::cov(self, 1, Tensor(), Tensor());
  if (c.dim() == 0) return ember::div(c, c);  // one variable: 1 (NaN when its variance is 0)
  Tensor d = ember::diagonal(c);
  Tensor s = ember::sqrt(d);
  c = ember::div(ember::div(c, s.unsqueeze(1)), s.unsqueeze(0));
  auto unit = [](const Tensor& t) { return ember::clamp(t, scalar_to_tensor(Scalar(-1.0)), scalar_to_tensor(Scalar(1.0))); };
  if (is_complex(c.dtype()))  // each part clipped to [-1, 1], as torch's
    return ember::complex(unit(autograd::real_part(c)), unit(autograd::imag_part(c)));
  return unit(c);
}

// ---- trapezoidal rule along dim: sum((y[i] + y[i+1]) / 2 * dx_i)
namespace {
Tensor trap_sum(const Tensor& y, const Tensor& dx, int64_t dim, bool cumulative) {
  if (cumulative) EMBER_CHECK_KIND(y.dim() > 0, Index, "slice() cannot be applied to a 0-dim tensor.");
  EMBER_CHECK_KIND(y.dim() > 0, Index, "Dimension specified as ", dim, " but tensor has no dimensions");
  int64_t d = wrap_dim(dim, y.dim());
  int64_t n = y.sizes()[d];
  Tensor yf = with_float_dtype(y);
  if (n == 0) {  // nothing to integrate: zeros (trapezoid keeps y's dtype there, as PyTorch)
    if (cumulative) return ember::narrow(yf, d, 0, 0).clone();
    return ember::sum(ember::zeros_like(y), IntArrayRef{d}, false).to(y.dtype());
  }
  Tensor mids = ember::mul(ember::add(ember::narrow(yf, d, 1, n - 1), ember::narrow(yf, d, 0, n - 1)), Scalar(0.5));
  Tensor terms = ember::mul(mids, dx);
  return cumulative ? ember::cumsum(terms, d) : ember::sum(terms, IntArrayRef{d}, false);
}
Tensor trap_x(const Tensor& y, const Tensor& x, int64_t dim, bool cumulative, const char* name) {
  EMBER_CHECK(y.dim() > 0, name, "() received a 0-dimensional input (y)");
  int64_t d = wrap_dim(dim, y.dim());
  Tensor dx;
  if (x.dim() == 1) {
    EMBER_CHECK(x.sizes()[0] == y.sizes()[d], name, ": There must be one `x` value for each sample point");
    int64_t n = x.sizes()[0];
    dx = n > 0 ? ember::diff(x) : x;
    std::vector<int64_t> shape(y.dim(), 1);
    shape[d] = std::max<int64_t>(n - 1, 0);
    dx = dx.reshape(shape);
  } else {
    int64_t n = x.dim() ? x.sizes()[wrap_dim(dim, x.dim())] : 0;
    dx = n > 0 ? ember::diff(x, 1, dim) : x;
  }
  return trap_sum(y, dx, dim, cumulative);
}
}  // namespace
Tensor trapezoid(const Tensor& y, const Tensor& x, int64_t dim) { return trap_x(y, x, dim, false, "trapezoid"); }
Tensor trapezoid(const Tensor& y, const Scalar& dx, int64_t dim) {
  return trap_sum(y, scalar_to_tensor(dx), dim, false);
}
Tensor trapz(const Tensor& y, const Tensor& x, int64_t dim) { return native::trapezoid(y, x, dim); }
Tensor trapz(const Tensor& y, double dx, int64_t dim) { return native::trapezoid(y, Scalar(dx), dim); }
Tensor cumulative_trapezoid(const Tensor& y, const Tensor& x, int64_t dim) {
  return trap_x(y, x, dim, true, "cumulative_trapezoid");
}
Tensor cumulative_trapezoid(const Tensor& y, const Scalar& dx, int64_t dim) {
  return trap_sum(y, scalar_to_tensor(dx), dim, true);
}

// ---- out-of-place writes into a view: a copy of self with the view's elements replaced by src
namespace {
Tensor scatter_into_view(const Tensor& self, const Tensor& src, const std::function<Tensor(const Tensor&)>& view,
                         const char* name) {
  Tensor r = self.clone(MemoryFormat::Contiguous);
  Tensor v = view(r);
  EMBER_CHECK(v.sizes() == src.sizes(), name, ": expected src to have a size equal to the slice of self. src size = ",
              src.sizes(), ", slice size = ", v.sizes());
  v.copy_(src);
  return r;
}
}  // namespace
Tensor diagonal_scatter(const Tensor& self, const Tensor& src, int64_t offset, int64_t dim1, int64_t dim2) {
  return scatter_into_view(self, src, [&](const Tensor& t) { return ember::diagonal(t, offset, dim1, dim2); },
                           "diagonal_scatter");
}
Tensor select_scatter(const Tensor& self, const Tensor& src, int64_t dim, int64_t index) {
  return scatter_into_view(self, src, [&](const Tensor& t) { return ember::select(t, dim, index); }, "select_scatter");
}
Tensor slice_scatter(const Tensor& self, const Tensor& src, int64_t dim, std::optional<int64_t> start,
                     std::optional<int64_t> end, int64_t step) {
  return scatter_into_view(self, src, [&](const Tensor& t) { return ember::slice(t, dim, start, end, step); },
                           "slice_scatter");
}
const Tensor& slice_scatter_out(const Tensor& out, const Tensor& self, const Tensor& src, int64_t dim,
                                std::optional<int64_t> start, std::optional<int64_t> end, int64_t step) {
  return copy_to_out(out, native::slice_scatter(self, src, dim, start, end, step), true);
}

// fill the main diagonal (all indices equal); a tall matrix with wrap=True restarts it every cols+1 rows
const Tensor& fill_diagonal_(const Tensor& self, const Scalar& fill_value, bool wrap) {
  int64_t nd = self.dim();
  EMBER_CHECK(nd >= 2, "dimensions must larger than 1");
  int64_t h = self.sizes()[0];
  if (nd > 2)
    for (int64_t i = 1; i < nd; i++)
      EMBER_CHECK(self.sizes()[i] == h, "all dimensions of input must be of equal length");
  int64_t step = 0;
  for (int64_t i = 0; i < nd; i++) step += self.strides()[i];
  int64_t n = h;
  for (int64_t i = 1; i < nd; i++) n = std::min(n, self.sizes()[i]);
  if (n == 0) return self;
  self.as_strided({n}, {step}, self.storage_offset()).fill_(fill_value);
  if (wrap && nd == 2 && h > self.sizes()[1] + 1) {
    // the next block of the diagonal starts cols + 1 rows further down
    int64_t w = self.sizes()[1];
    for (int64_t row = w + 1; row < h; row += w + 1) {
      Tensor block = ember::narrow(self, 0, row, std::min(h - row, w));
      native::fill_diagonal_(block, fill_value, false);
    }
  }
  return self;
}

// ---- functional index_put, flat put, index_reduce
Tensor index_put(const Tensor& self, TensorList indices, const Tensor& values, bool accumulate) {
  return ember::index_put_(self.clone(), indices, values, accumulate);
}

// self.flatten()[index] = source (+= with accumulate), on self's row-major element order
const Tensor& put_(const Tensor& self, const Tensor& index, const Tensor& source, bool accumulate) {
  EMBER_CHECK_KIND(index.dtype() == kLong, Index, "put_(): Expected a long tensor for index, but got ", index.dtype());
  EMBER_CHECK(source.dtype() == self.dtype(), "put_(): self and source expected to have the same dtype, but got "
              "self.dtype = ", self.dtype(), " and source.dtype = ", source.dtype());
  EMBER_CHECK_KIND(index.numel() == source.numel(), Index, "put_(): Expected source and index to have the same number of "
                   "elements, but got source.numel() = ", source.numel(), ", index.numel() = ", index.numel());
  int64_t n = self.numel();
  if (index.numel() > 0) {
    EMBER_CHECK_KIND(n > 0, Index, "put_(): Tried to put elements into an empty tensor");
    Tensor flat_index = index.reshape({-1});
    int64_t lo = ember::amin(flat_index).item().to<int64_t>(), hi = ember::amax(flat_index).item().to<int64_t>();
    EMBER_CHECK_KIND(lo >= -n && hi < n, Index, "out of range: tried to access index ", hi >= n ? hi : lo,
                     " on a tensor of ", n, " elements.");
  }
  std::vector<Tensor> idx{index.reshape({-1})};
  if (self.is_contiguous()) {
    ember::index_put_(self.reshape({-1}), idx, source.reshape({-1}), accumulate);
  } else {
    Tensor flat = self.contiguous().reshape({-1});
    ember::index_put_(flat, idx, source.reshape({-1}), accumulate);
    ember::copy_(self, flat.reshape(self.sizes()));
  }
  return self;
}
Tensor put(const Tensor& self, const Tensor& index, const Tensor& source, bool accumulate) {
  return ember::put_(self.clone(), index, source, accumulate);
}

// index_reduce along dim: scatter_reduce with the index repeated over source's other dimensions
namespace {
Tensor index_reduce_impl(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source,
                         std::string_view reduce, bool include_self, bool inplace) {
  EMBER_CHECK(reduce == "prod" || reduce == "mean" || reduce == "amax" || reduce == "amin",
              "index_reduce(): Expected reduce to be one of prod, mean, amax or amin but got ", reduce, ".");
  EMBER_CHECK(index.dtype() == kLong || index.dtype() == kInt,
              "index_reduce_(): Expected dtype int32/int64 for index but got: ", index.dtype());
  EMBER_CHECK(self.dtype() == source.dtype(), "index_reduce_(): self (", self.dtype(), ") and source (",
              source.dtype(), ") must have the same scalar type");
  int64_t d = wrap_dim(dim, std::max<int64_t>(source.dim(), 1));
  int64_t src_len = source.dim() ? source.sizes()[d] : 1;
  EMBER_CHECK(index.dim() <= 1 && index.numel() == src_len, "index_reduce_(): Number of indices (", index.numel(),
              ") should be equal to source.size(dim): (", src_len, "), for dim: ", dim);
  bool same_shape = source.dim() == self.dim();
  for (int64_t i = 0; same_shape && i < self.dim(); i++)
    if (i != d && self.sizes()[i] != source.sizes()[i]) same_shape = false;
  EMBER_CHECK(same_shape, "source tensor shape must match self tensor shape, excluding the specified dimension. Got "
              "self.shape = ", self.sizes(), " source.shape = ", source.sizes());
  if (index.numel() > 0) {
    int64_t hi = ember::amax(index).item().to<int64_t>(), lo = ember::amin(index).item().to<int64_t>();
    EMBER_CHECK_KIND(lo >= 0 && hi < (self.dim() ? self.sizes()[d] : 1), Index, "index out of range in self");
  }
  std::vector<int64_t> shape(std::max<int64_t>(source.dim(), 1), 1);
  shape[d] = index.numel();
  Tensor idx = index.to(kLong).reshape(shape).expand(source.dim() ? source.sizes() : IntArrayRef{1});
  if (self.dim() == 0) {  // 0-d operands as one-element vectors, so the backward's shapes line up with idx's
    Tensor s1 = self.reshape({1}), src1 = source.reshape({1});
    if (inplace) {
      ember::scatter_reduce_(s1, 0, idx, src1, reduce, include_self);
      return self;
    }
    return ember::scatter_reduce(s1, 0, idx, src1, reduce, include_self).reshape({});
  }
  if (inplace) return ember::scatter_reduce_(self, d, idx, source, reduce, include_self);
  return ember::scatter_reduce(self, d, idx, source, reduce, include_self);
}
}  // namespace
Tensor index_reduce(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source, std::string_view reduce,
                    bool include_self) {
  return index_reduce_impl(self, dim, index, source, reduce, include_self, false);
}
const Tensor& index_reduce_(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source,
                            std::string_view reduce, bool include_self) {
  index_reduce_impl(self, dim, index, source, reduce, include_self, true);
  return self;
}
const Tensor& index_reduce_out(const Tensor& out, const Tensor& self, int64_t dim, const Tensor& index,
                               const Tensor& source, std::string_view reduce, bool include_self) {
  return copy_to_out(out, native::index_reduce(self, dim, index, source, reduce, include_self), true);
}

// ---- resizing in place: contiguous strides, storage grown (its bytes kept) when too small
const Tensor& resize_(const Tensor& self, IntArrayRef size, std::optional<MemoryFormat> memory_format) {
  EMBER_CHECK(!self.requires_grad(), "cannot resize variables that require grad");
  (void)memory_format;  // Ember's memory formats (contiguous, preserve) both give contiguous strides here
  resize_output(self, size);
  return self;
}
const Tensor& resize_as_(const Tensor& self, const Tensor& the_template, std::optional<MemoryFormat> memory_format) {
  return native::resize_(self, the_template.sizes(), memory_format);
}

}  // namespace native
}  // namespace ember
