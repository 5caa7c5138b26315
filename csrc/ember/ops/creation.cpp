// Factory functions. Default dtypes follow PyTorch: the default float dtype for floats and for
// rand/linspace; full/arange infer from their Python numbers.
#include <cmath>

#include "ember/core/fresh.h"
#include "ember/generated/native.h"
#include "ember/generated/ops.h"
#include "ember/iter/layout.h"
#include "ember/iter/tensor_iter.h"
#include "ember/kernels/creation.h"

EMBER_DEFINE_STUB(arange_stub)
EMBER_DEFINE_STUB(linspace_stub)

namespace ember::native {

static ScalarType infer_dtype(const Scalar& s) {
  return s.is_complex() ? to_complex_dtype(default_dtype()) : s.is_floating() ? default_dtype() : s.is_bool() ? kBool : kLong;
}

// A factory's out= variant with an explicit dtype that disagrees with out's.
static void check_out_options(const Tensor& out, const TensorOptions& o) {
  EMBER_CHECK(!o.dtype_ || *o.dtype_ == out.dtype(), "dtype ", *o.dtype_, " does not match dtype of out parameter (",
              out.dtype(), ")");
}

// memory_format=preserve_format has nothing to preserve in a factory
static void check_factory_format(std::optional<MemoryFormat> mf) {
  EMBER_CHECK(mf != MemoryFormat::Preserve, "unsupported memory format Preserve");
}

Tensor empty(IntArrayRef size, const TensorOptions& o, std::optional<MemoryFormat> mf) {
  check_factory_format(mf);
  return empty_in_format(size, o.dtype_or(default_dtype()), o.device_or_cpu(), mf.value_or(MemoryFormat::Contiguous));
}
Tensor zeros(IntArrayRef size, const TensorOptions& o) { return fresh(native::empty(size, o, std::nullopt).zero_()); }
Tensor ones(IntArrayRef size, const TensorOptions& o) { return fresh(native::empty(size, o, std::nullopt).fill_(1)); }
Tensor full(IntArrayRef size, const Scalar& v, const TensorOptions& o) {
  return fresh(native::empty(size, o.dtype(o.dtype_or(infer_dtype(v))), std::nullopt).fill_(v));
}
const Tensor& empty_out(const Tensor& out, IntArrayRef size, const TensorOptions& o, std::optional<MemoryFormat> mf) {
  check_factory_format(mf);
  check_out_options(out, o);
  resize_output(out, size);
  return out;
}
const Tensor& zeros_out(const Tensor& out, IntArrayRef size, const TensorOptions& o) {
  check_out_options(out, o);
  resize_output(out, size);
  return out.zero_();
}
const Tensor& ones_out(const Tensor& out, IntArrayRef size, const TensorOptions& o) {
  check_out_options(out, o);
  resize_output(out, size);
  return out.fill_(1);
}
const Tensor& full_out(const Tensor& out, IntArrayRef size, const Scalar& v, const TensorOptions& o) {
  check_out_options(out, o);
  resize_output(out, size);
  return out.fill_(v);
}

// *_like keep a dense input's layout (preserve_format, the default) unless asked for contiguous_format
Tensor empty_like(const Tensor& self, const TensorOptions& o, std::optional<MemoryFormat> mf) {
  ScalarType dt = o.dtype_or(self.dtype());
  const Device dev = o.device_ ? *o.device_ : self.device();
  if (mf && *mf != MemoryFormat::Preserve) return empty_in_format(self.sizes(), dt, dev, *mf);
  return empty_like_preserve(self, dt, dev);
}
Tensor zeros_like(const Tensor& self, const TensorOptions& o, std::optional<MemoryFormat> mf) {
  return fresh(native::empty_like(self, o, mf).zero_());
}
Tensor ones_like(const Tensor& self, const TensorOptions& o, std::optional<MemoryFormat> mf) {
  return fresh(native::empty_like(self, o, mf).fill_(1));
}
Tensor full_like(const Tensor& self, const Scalar& v, const TensorOptions& o, std::optional<MemoryFormat> mf) {
  return fresh(native::empty_like(self, o, mf).fill_(v));
}

Tensor new_empty(const Tensor& self, IntArrayRef size, const TensorOptions& o) {
  return empty_tensor(size, o.dtype_or(self.dtype()), o.device_ ? *o.device_ : self.device());
}
Tensor new_zeros(const Tensor& self, IntArrayRef size, const TensorOptions& o) { return fresh(native::new_empty(self, size, o).zero_()); }
Tensor new_ones(const Tensor& self, IntArrayRef size, const TensorOptions& o) { return fresh(native::new_empty(self, size, o).fill_(1)); }
Tensor new_full(const Tensor& self, IntArrayRef size, const Scalar& v, const TensorOptions& o) {
  return fresh(native::new_empty(self, size, o).fill_(v));
}

// arange(end) / arange(start, end, step): values start + i * step, computed in double.
static Tensor arange_impl(const Scalar& start_in, const std::optional<Scalar>& end_in, const Scalar& step_s,
                          std::optional<ScalarType> dtype, Device device, const Tensor* out) {
  Scalar start = end_in ? start_in : Scalar(int64_t(0));
  Scalar end = end_in ? *end_in : start_in;
  bool any_float = start.is_floating() || end.is_floating() || step_s.is_floating();
  ScalarType dt = dtype ? *dtype : out ? out->dtype() : (any_float ? default_dtype() : kLong);
  EMBER_CHECK_KIND(dt != kBool, NotImplemented, "\"arange_cpu\" not implemented for 'Bool'");
  double s = start.to_double(), e = end.to_double(), st = step_s.to_double();
  EMBER_CHECK(st != 0, "step must be nonzero");
  EMBER_CHECK(std::isfinite(s) && std::isfinite(e), "unsupported range: ", s, " -> ", e);
  EMBER_CHECK((st > 0 && e >= s) || (st < 0 && e <= s), "upper bound and lower bound inconsistent with step sign");
  const bool integral = is_integral(dt, true);
  Scalar start_v = start, step_v = step_s;
  int64_t n = -1;
  if (integral) {
    // PyTorch converts the bounds and step to int64 first (truncating), so arange(0.5, 3.7, 1.2, dtype=int64)
    // is 0, 1, 2. int64 counts on the converted values (and refuses a step that truncates to 0); the other
    // integer dtypes count on the original doubles, below.
    if (any_float)  // exact integers are in range already
      for (double v : {s, e, st})
        EMBER_CHECK(std::fabs(v) < 9.2e18, "arange: value cannot be converted to type int64_t without overflow");
    __int128 is = start.to_long(), ie = end.to_long(), ist = step_s.to_long();
    if (dt == kLong || !any_float) {
      EMBER_CHECK_KIND(ist != 0, Value, "step must be nonzero");
      // exact in 128 bits: end - start can exceed int64 (arange(-2**63, 2**63 - 1, 2**63 - 1) has 3 values)
      __int128 len = ist > 0 ? (ie - is + ist - 1) / ist : (is - ie - ist - 1) / -ist;
      EMBER_CHECK(len <= INT64_MAX, "arange: invalid size, possible overflow?");
      n = int64_t(std::max<__int128>(len, 0));
    }
    start_v = Scalar(int64_t(is));
    step_v = Scalar(int64_t(ist));
  }
  if (n < 0) {  // floating dtypes, and integer ones other than int64 with float bounds
    double len = std::ceil((e - s) / st);
    EMBER_CHECK(len < 9.2e18, "arange: invalid size, possible overflow? (", len, " elements)");
    n = int64_t(len);
  }
  EMBER_CHECK(n >= 0, "invalid size, possible overflow?");
  auto kernel = arange_stub(device, "arange");
  Tensor r = out ? *out : empty_tensor({n}, dt, device);
  if (out) resize_output(r, {n});
  Tensor d = empty_tensor({n}, integral ? kLong : kDouble, device);
  if (n) {
    kernel(d, start_v, step_v, integral);
    ember::copy_(r, d);
  }
  return out ? r : fresh(r);
}
Tensor arange(const Scalar& start, std::optional<Scalar> end, const Scalar& step, const TensorOptions& o) {
  return arange_impl(start, end, step, o.dtype_, o.device_or_cpu(), nullptr);
}
const Tensor& arange_out(const Tensor& out, const Scalar& start, std::optional<Scalar> end, const Scalar& step,
                         const TensorOptions& o) {
  check_out_options(out, o);
  arange_impl(start, end, step, o.dtype_, out.device(), &out);
  return out;
}

// Values start + i * step (linspace_stub), the upper half computed back from `end` so the last value
// is exact. PyTorch first converts start and end to the result dtype (linspace(-3, 3, dtype=uint8)
// starts at 253); we do the same for integer dtypes and compute in double.
static Tensor linspace_double(const Scalar& start_s, const Scalar& end_s, int64_t steps, ScalarType dtype, Device device) {
  EMBER_CHECK(steps >= 0, "number of steps must be non-negative");
  double start = start_s.to_double(), end = end_s.to_double();
  if (is_integral(dtype, true)) {
    EMBER_DISPATCH_ALL(dtype, "linspace", [&](auto tag) {
      using T = decltype(tag);
      if constexpr (std::is_integral_v<T>) {
        start = double(start_s.to<T>());
        end = double(end_s.to<T>());
      }
    });
  }
  auto kernel = linspace_stub(device, "linspace");
  Tensor d = empty_tensor({steps}, kDouble, device);
  if (steps) kernel(d, start, end);
  return d;
}
static void check_range_dtype(const char* name, ScalarType dt, int64_t steps) {
  // PyTorch's kernel (which rejects bool) only runs for more than one step
  EMBER_CHECK_KIND(dt != kBool || steps <= 1, NotImplemented, "\"", name, "_cpu\" not implemented for 'Bool'");
}
Tensor linspace(const Scalar& start, const Scalar& end, int64_t steps, const TensorOptions& o) {
  const bool complex_ends = start.is_complex() || end.is_complex();
  ScalarType dt = o.dtype_or(complex_ends ? to_complex_dtype(default_dtype()) : default_dtype());
  if (is_complex(dt)) {  // the real and imaginary parts are two real linspaces
    Device dev = o.device_or_cpu();
    Tensor re = linspace_double(start.to_double(), end.to_double(), steps, kDouble, dev);
    Tensor im = linspace_double(start.imag(), end.imag(), steps, kDouble, dev);
    return fresh(ember::complex(re, im).to(dt));
  }
  check_range_dtype("linspace", dt, steps);
  return fresh(linspace_double(start, end, steps, dt, o.device_or_cpu()).to(dt));
}
const Tensor& linspace_out(const Tensor& out, const Scalar& start, const Scalar& end, int64_t steps,
                           const TensorOptions& o) {
  check_out_options(out, o);
  check_range_dtype("linspace", out.dtype(), steps);
  Tensor r = linspace_double(start, end, steps, out.dtype(), out.device());
  resize_output(out, {steps});
  return ember::copy_(out, r);
}
Tensor logspace(const Scalar& start, const Scalar& end, int64_t steps, double base, const TensorOptions& o) {
  ScalarType dt = o.dtype_or(default_dtype());
  check_range_dtype("logspace", dt, steps);
  Tensor e = linspace_double(start, end, steps, dt, o.device_or_cpu());
  return fresh(ember::pow(scalar_to_tensor(base), e).to(dt));
}
const Tensor& logspace_out(const Tensor& out, const Scalar& start, const Scalar& end, int64_t steps, double base,
                           const TensorOptions& o) {
  check_out_options(out, o);
  Tensor r = native::logspace(start, end, steps, base, o.dtype(out.dtype()).device(out.device()));
  resize_output(out, {steps});
  return ember::copy_(out, r);
}

Tensor eye(int64_t n, std::optional<int64_t> m_opt, const TensorOptions& o) {
  int64_t m = m_opt.value_or(n);
  EMBER_CHECK(n >= 0, "n must be greater or equal to 0, got ", n);
  EMBER_CHECK(m >= 0, "m must be greater or equal to 0, got ", m);
  Tensor r = native::zeros({n, m}, o);
  if (n && m) r.diagonal(0, 0, 1).fill_(1);
  return fresh(r);
}
const Tensor& eye_out(const Tensor& out, int64_t n, std::optional<int64_t> m, const TensorOptions& o) {
  check_out_options(out, o);
  Tensor r = native::eye(n, m, o.dtype(out.dtype()).device(out.device()));
  resize_output(out, r.sizes());
  return ember::copy_(out, r);
}

}  // namespace ember::native
