// Cumulative ops along one dim that the per-ISA scan kernel (cumsum, cumprod) does not cover:
// cummax, cummin, logcumsumexp (a running log-add-exp; exp/cumsum/log overflows), and diff, the
// inverse of a cumulative sum, a composite. The kernels live in kernels/cpu/cumulative.cpp.
#include <algorithm>
#include <cmath>
#include <complex>

#include "ember/generated/native.h"
#include "ember/generated/ops.h"
#include "ember/iter/tensor_iter.h"
#include "ember/kernels/cumulative.h"

EMBER_DEFINE_STUB(cum_extreme_stub)
EMBER_DEFINE_STUB(logcumsumexp_stub)

namespace ember::native {

// ---------------------------------------------------------------- cummax, cummin, logcumsumexp
namespace {

// self with `dim` moved last, contiguous; rows of length n.
struct Lanes {
  Tensor x;
  int64_t dim = 0;
};

Lanes make_lanes(const Tensor& self, int64_t dim, ScalarType cd) {
  Lanes l;
  l.dim = wrap_dim(dim, self.dim());
  Tensor x = self.to(cd);
  l.x = self.dim() ? x.movedim({l.dim}, {-1}).contiguous() : x.reshape({1}).contiguous();
  return l;
}

Tensor unlane(const Tensor& t, const Tensor& self, int64_t dim) {
  if (self.dim() == 0) return t.reshape({});
  return t.movedim({-1}, {dim}).contiguous();
}

std::tuple<Tensor, Tensor> cum_extreme(const Tensor& self, int64_t dim, bool is_max) {
  auto kernel = cum_extreme_stub(self.device(), is_max ? "cummax" : "cummin");
  ScalarType cd = is_reduced_float(self.dtype()) ? kFloat : self.dtype();
  Lanes l = make_lanes(self, dim, cd);
  Tensor vals = empty_tensor(l.x.sizes(), cd, self.device()), inds = empty_tensor(l.x.sizes(), kLong, self.device());
  kernel(vals, inds, l.x, is_max);
  return {unlane(vals, self, l.dim).to(self.dtype()), unlane(inds, self, l.dim)};
}

}  // namespace

std::tuple<Tensor, Tensor> cummax(const Tensor& self, int64_t dim) { return cum_extreme(self, dim, true); }
std::tuple<Tensor, Tensor> cummin(const Tensor& self, int64_t dim) { return cum_extreme(self, dim, false); }

namespace {
// log(e^a + e^b) for complex numbers: the one with the larger real part factored out, -inf absorbed
std::complex<double> log_add_exp(std::complex<double> a, std::complex<double> b) {
  if (std::isinf(a.real()) && a.real() < 0) return b;
  if (std::isinf(b.real()) && b.real() < 0) return a;
  const auto& hi = a.real() >= b.real() ? a : b;
  const auto& lo = a.real() >= b.real() ? b : a;
  return hi + std::log(1.0 + std::exp(lo - hi));
}

// complex lanes on the host, accumulated in complex128
Tensor logcumsumexp_complex(const Tensor& self, int64_t dim) {
  EMBER_CHECK_KIND(self.device().is_cpu(), NotImplemented, "logcumsumexp of complex tensors on ", self.device());
  Lanes l = make_lanes(self, dim, kComplexDouble);
  Tensor out = empty_tensor(l.x.sizes(), kComplexDouble, self.device());
  const int64_t n = l.x.dim() ? l.x.sizes().back() : 1, rows = n ? l.x.numel() / n : 0;
  const auto* x = static_cast<const std::complex<double>*>(l.x.data_ptr());
  auto* o = static_cast<std::complex<double>*>(out.data_ptr());
  for (int64_t r = 0; r < rows; r++)
    for (int64_t i = 0; i < n; i++)
      o[r * n + i] = i ? log_add_exp(o[r * n + i - 1], x[r * n + i]) : x[r * n];
  return unlane(out, self, l.dim).to(self.dtype());
}
}  // namespace

Tensor logcumsumexp(const Tensor& self, int64_t dim) {
  if (is_complex(self.dtype())) return logcumsumexp_complex(self, dim);
  EMBER_CHECK_KIND(is_floating(self.dtype()), NotImplemented, "\"logcumsumexp_out_cpu\" not implemented for '",
                   self.dtype(), "'");
  auto kernel = logcumsumexp_stub(self.device(), "logcumsumexp");
  Lanes l = make_lanes(self, dim, kDouble);  // PyTorch accumulates float in double on the CPU
  Tensor out = empty_tensor(l.x.sizes(), kDouble, self.device());
  kernel(out, l.x);
  return unlane(out, self, l.dim).to(self.dtype());
}
const Tensor& logcumsumexp_out(const Tensor& out, const Tensor& self, int64_t dim) {
  check_out_dtype(out, self.dtype());
  return copy_to_out(out, native::logcumsumexp(self, dim), true);
}

// ---------------------------------------------------------------- diff
namespace {
void diff_check_other(const Tensor& self, const Tensor& other, int64_t dim) {
  if (!other.defined()) return;
  EMBER_CHECK(other.dim() == self.dim(), "diff expects prepend or append to be the same dimension as input");
  int64_t d = wrap_dim(dim, self.dim());
  for (int64_t i = 0; i < other.dim(); i++) {
    if (i == d) continue;
    EMBER_CHECK(other.sizes()[i] == self.sizes()[i], "diff expects the shape of tensor to prepend or append to match "
                "that of input except along the differencing dimension; input.size(", i, ") = ", self.sizes()[i],
                ", but got tensor.size(", i, ") = ", other.sizes()[i]);
  }
}
}  // namespace

Tensor diff(const Tensor& self, int64_t n, int64_t dim, const Tensor& prepend, const Tensor& append) {
  EMBER_CHECK(self.dim() >= 1, "diff expects input to be at least one-dimensional");
  EMBER_CHECK(n >= 0, "order must be non-negative but got ", n);
  diff_check_other(self, prepend, dim);
  diff_check_other(self, append, dim);
  int64_t d = wrap_dim(dim, self.dim());
  if (n == 0) return self.clone();  // PyTorch ignores prepend/append for n == 0
  Tensor x = self;
  if (prepend.defined() || append.defined()) {
    std::vector<Tensor> parts;
    if (prepend.defined()) parts.push_back(prepend);
    parts.push_back(self);
    if (append.defined()) parts.push_back(append);
    x = ember::cat(parts, d);
  }
  int64_t len = x.sizes()[d] - 1;
  n = std::min(n, x.sizes()[d]);
  for (int64_t i = 0; i < n; i++, len--) {
    Tensor hi = x.narrow(d, 1, len), lo = x.narrow(d, 0, len);
    x = x.dtype() == kBool ? ember::logical_xor(hi, lo) : ember::sub(hi, lo);
  }
  return x;
}
const Tensor& diff_out(const Tensor& out, const Tensor& self, int64_t n, int64_t dim, const Tensor& prepend,
                       const Tensor& append) {
  Tensor r = native::diff(self, n, dim, prepend, append);
  // n == 0 copies self into out, which must then have self's dtype
  EMBER_CHECK(n != 0 || out.dtype() == self.dtype(), "expected scalar_type ", self.dtype(), " but found ", out.dtype());
  return copy_to_out(out, r, false);
}

}  // namespace ember::native
