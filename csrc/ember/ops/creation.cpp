// Factory functions. Default dtypes follow PyTorch: the default float dtype for floats and for
// rand/linspace; full/arange infer from their Python numbers.
#include <cmath>

#include "ember/generated/native.h"
#include "ember/generated/ops.h"
#include "ember/iter/tensor_iter.h"

namespace ember::native {

static ScalarType infer_dtype(const Scalar& s) {
  return s.is_floating() ? default_dtype() : s.is_bool() ? kBool : kLong;
}

Tensor empty(IntArrayRef size, const TensorOptions& o) { return empty_tensor(size, o.dtype_or(default_dtype()), o.device_or_cpu()); }
Tensor zeros(IntArrayRef size, const TensorOptions& o) { return native::empty(size, o).zero_(); }
Tensor ones(IntArrayRef size, const TensorOptions& o) { return native::empty(size, o).fill_(1); }
Tensor full(IntArrayRef size, const Scalar& v, const TensorOptions& o) {
  return native::empty(size, o.dtype(o.dtype_or(infer_dtype(v)))).fill_(v);
}
const Tensor& empty_out(const Tensor& out, IntArrayRef size, const TensorOptions&) { resize_output(out, size); return out; }
const Tensor& zeros_out(const Tensor& out, IntArrayRef size, const TensorOptions&) { resize_output(out, size); return out.zero_(); }
const Tensor& ones_out(const Tensor& out, IntArrayRef size, const TensorOptions&) { resize_output(out, size); return out.fill_(1); }
const Tensor& full_out(const Tensor& out, IntArrayRef size, const Scalar& v, const TensorOptions&) {
  resize_output(out, size);
  return out.fill_(v);
}

Tensor empty_like(const Tensor& self, const TensorOptions& o) { return empty_like_preserve(self, o.dtype_or(self.dtype())); }
Tensor zeros_like(const Tensor& self, const TensorOptions& o) { return native::empty_like(self, o).zero_(); }
Tensor ones_like(const Tensor& self, const TensorOptions& o) { return native::empty_like(self, o).fill_(1); }
Tensor full_like(const Tensor& self, const Scalar& v, const TensorOptions& o) { return native::empty_like(self, o).fill_(v); }

Tensor new_empty(const Tensor& self, IntArrayRef size, const TensorOptions& o) { return empty_tensor(size, o.dtype_or(self.dtype())); }
Tensor new_zeros(const Tensor& self, IntArrayRef size, const TensorOptions& o) { return native::new_empty(self, size, o).zero_(); }
Tensor new_ones(const Tensor& self, IntArrayRef size, const TensorOptions& o) { return native::new_empty(self, size, o).fill_(1); }
Tensor new_full(const Tensor& self, IntArrayRef size, const Scalar& v, const TensorOptions& o) {
  return native::new_empty(self, size, o).fill_(v);
}

// arange(end) / arange(start, end, step): values start + i * step, computed in double.
static Tensor arange_impl(const Scalar& start_in, const std::optional<Scalar>& end_in, const Scalar& step_s,
                          std::optional<ScalarType> dtype, const Tensor* out) {
  Scalar start = end_in ? start_in : Scalar(int64_t(0));
  Scalar end = end_in ? *end_in : start_in;
  bool any_float = start.is_floating() || end.is_floating() || step_s.is_floating();
  ScalarType dt = dtype ? *dtype : out ? out->dtype() : (any_float ? default_dtype() : kLong);
  double s = start.to_double(), e = end.to_double(), st = step_s.to_double();
  EMBER_CHECK(st != 0, "step must be nonzero");
  EMBER_CHECK(std::isfinite(s) && std::isfinite(e), "unsupported range: ", s, " -> ", e);
  EMBER_CHECK((st > 0 && e >= s) || (st < 0 && e <= s), "upper bound and larger bound inconsistent with step sign");
  int64_t n;
  if (is_integral(dt, true) && !any_float) {
    int64_t is = start.to_long(), ie = end.to_long(), ist = step_s.to_long();
    n = (ie - is + ist - (ist > 0 ? 1 : -1)) / ist;
  } else {
    n = int64_t(std::ceil((e - s) / st));
  }
  EMBER_CHECK(n >= 0, "invalid size, possible overflow?");
  Tensor r = out ? *out : empty_tensor({n}, dt);
  if (out) resize_output(r, {n});
  Tensor d = empty_tensor({n}, is_integral(dt, true) ? kLong : kDouble);
  if (d.dtype() == kLong) {
    int64_t* p = static_cast<int64_t*>(d.data_ptr());
    int64_t is = start.to_long(), ist = step_s.to_long();
    if (any_float) for (int64_t i = 0; i < n; i++) p[i] = int64_t(s + double(i) * st);
    else for (int64_t i = 0; i < n; i++) p[i] = is + i * ist;
  } else {
    double* p = static_cast<double*>(d.data_ptr());
    for (int64_t i = 0; i < n; i++) p[i] = s + double(i) * st;
  }
  if (n) ember::copy_(r, d);
  return r;
}
Tensor arange(const Scalar& start, std::optional<Scalar> end, const Scalar& step, const TensorOptions& o) {
  return arange_impl(start, end, step, o.dtype_, nullptr);
}
const Tensor& arange_out(const Tensor& out, const Scalar& start, std::optional<Scalar> end, const Scalar& step,
                         const TensorOptions& o) {
  arange_impl(start, end, step, o.dtype_, &out);
  return out;
}

static Tensor linspace_double(double start, double end, int64_t steps) {
  EMBER_CHECK(steps >= 0, "number of steps must be non-negative");
  Tensor d = empty_tensor({steps}, kDouble);
  double* p = static_cast<double*>(d.data_ptr());
  if (steps == 1) p[0] = start;
  if (steps > 1) {
    double step = (end - start) / double(steps - 1);
    int64_t half = steps / 2;  // fill from both ends so the last value is exactly `end`
    for (int64_t i = 0; i < steps; i++) p[i] = i < half ? start + step * double(i) : end - step * double(steps - i - 1);
  }
  return d;
}
Tensor linspace(const Scalar& start, const Scalar& end, int64_t steps, const TensorOptions& o) {
  return linspace_double(start.to_double(), end.to_double(), steps).to(o.dtype_or(default_dtype()));
}
const Tensor& linspace_out(const Tensor& out, const Scalar& start, const Scalar& end, int64_t steps, const TensorOptions&) {
  resize_output(out, {steps});
  return ember::copy_(out, linspace_double(start.to_double(), end.to_double(), steps));
}
Tensor logspace(const Scalar& start, const Scalar& end, int64_t steps, double base, const TensorOptions& o) {
  Tensor e = linspace_double(start.to_double(), end.to_double(), steps);
  return ember::pow(scalar_to_tensor(base), e).to(o.dtype_or(default_dtype()));
}
const Tensor& logspace_out(const Tensor& out, const Scalar& start, const Scalar& end, int64_t steps, double base,
                           const TensorOptions& o) {
  resize_output(out, {steps});
  return ember::copy_(out, native::logspace(start, end, steps, base, o.dtype(out.dtype())));
}

Tensor eye(int64_t n, std::optional<int64_t> m_opt, const TensorOptions& o) {
  int64_t m = m_opt.value_or(n);
  EMBER_CHECK(n >= 0, "n must be greater or equal to 0, got ", n);
  EMBER_CHECK(m >= 0, "m must be greater or equal to 0, got ", m);
  Tensor r = native::zeros({n, m}, o);
  if (n && m) r.diagonal(0, 0, 1).fill_(1);
  return r;
}
const Tensor& eye_out(const Tensor& out, int64_t n, std::optional<int64_t> m, const TensorOptions& o) {
  Tensor r = native::eye(n, m, o.dtype(out.dtype()));
  resize_output(out, r.sizes());
  return ember::copy_(out, r);
}

}  // namespace ember::native
