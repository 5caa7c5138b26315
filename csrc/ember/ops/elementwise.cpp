// Elementwise ops: the shared unary/binary bodies behind ops.yaml's generated kernels, and the
// hand-written ones with extra rules (div's rounding modes, pow, clamp, lerp, where, ...).
#include <cmath>
#include <limits>

#include "ember/autograd/formulas.h"
#include "ember/core/operators.h"
#include "ember/generated/native.h"
#include "ember/generated/ops.h"
#include "ember/iter/elementwise.h"
#include "ember/kernels/kernels.h"
#include "ember/ops/opmath.h"

namespace ember {

// PyTorch's message names its CPU kernel: "erfcx_cpu" for special_erfcx
static void check_no_reduced_float(ScalarType dt, std::string_view name) {
  if (dt != kHalf && dt != kBFloat16) return;
  if (name.substr(0, 8) == "special_") name.remove_prefix(8);
  EMBER_FAIL(NotImplemented, "\"", name, "_cpu\" not implemented for '", dt, "'");
}

Tensor unary_op(UnaryKernel k, int flags, const Tensor& self, const Tensor& out, OutMode mode, const char* name,
                const Scalar& arg0) {
  EMBER_CHECK(k != UnaryKernel::Neg || self.dtype() != kBool,
              "Negation, the `-` operator, on a bool tensor is not supported. If you are trying to invert a mask, "
              "use the `~` or `logical_not()` operator instead.");
  EMBER_CHECK(k != UnaryKernel::Relu || self.dtype() != kBool, "Boolean inputs not supported for relu");
  if (EMBER_UNLIKELY(is_complex(self.dtype()))) {
    EMBER_CHECK(k != UnaryKernel::Sign, "Unlike NumPy, torch.sign is not intended to support complex numbers. Please "
                "use torch.sgn instead.");
    if (k == UnaryKernel::Floor || k == UnaryKernel::Ceil || k == UnaryKernel::Trunc || k == UnaryKernel::Round ||
        k == UnaryKernel::Frac)
      EMBER_FAIL(NotImplemented, name, " is not supported for complex inputs");
  }
  if (mode == OutMode::Out && (k == UnaryKernel::IsPosInf || k == UnaryKernel::IsNegInf || k == UnaryKernel::Signbit))
    EMBER_CHECK(out.dtype() == kBool, name, " does not support non-boolean outputs.");
  TensorIterConfig cfg;
  cfg.name = name;
  cfg.out = out;
  cfg.mode = mode;
  cfg.add_input(self);
  cfg.promote_int_to_float = flags & kPromoteToFloat;
  cfg.cpu_widens_reduced_float = true;
  cfg.result_bool = flags & kResultBool;
  cfg.result_real = k == UnaryKernel::Abs || k == UnaryKernel::Angle;  // |z| and arg z are real
  // PyTorch's plain unary ops (not the float-promoting ones) write out= only in their own dtype
  switch (k) {
    case UnaryKernel::Abs: case UnaryKernel::Neg: case UnaryKernel::Floor: case UnaryKernel::Ceil:
    case UnaryKernel::Trunc: case UnaryKernel::Frac: case UnaryKernel::Sign: case UnaryKernel::BitwiseNot:
    case UnaryKernel::Round: case UnaryKernel::RoundDecimals: case UnaryKernel::Sgn: case UnaryKernel::Conj:
      cfg.out_dtype_must_match = true;
      break;
    default:
      break;
  }
  TensorIter it(cfg);
  if (flags & kNoReducedFloat) check_no_reduced_float(it.common_dtype(), name);
  KernelArgs args;
  args.s0 = arg0;
  args.name = name;
  unary_kernel_stub(it.device(), name)(k, it, args);
  return it.finish();
}

// PyTorch's alpha_check: a bool alpha needs a bool result; a float alpha needs a float result.
// (An integer alpha is fine for every dtype, bool included.)
static void check_alpha(ScalarType dt, const Scalar& alpha) {
  EMBER_CHECK(!alpha.is_bool() || dt == kBool, "Boolean alpha only supported for Boolean results.");
  EMBER_CHECK(is_complex(dt) || !alpha.is_complex(), "For non-complex input tensors, argument alpha must not be a "
              "complex number.");
  EMBER_CHECK(is_floating(dt) || is_complex(dt) || alpha.is_integral(true),
              "For integral input tensors, argument alpha must not be a floating point number.");
  check_scalar_fits(alpha, dt);
}

Tensor binary_op(BinaryKernel k, int flags, const Tensor& self, const Tensor& other, const Scalar& alpha,
                 const Tensor& out, OutMode mode, const char* name) {
  if (k == BinaryKernel::Sub) {
    EMBER_CHECK(self.dtype() != kBool || other.dtype() != kBool,
                "Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` or "
                "`logical_xor()` operator instead.");
    EMBER_CHECK(self.dtype() != kBool && other.dtype() != kBool,
                "Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying to invert a "
                "mask, use the `~` or `logical_not()` operator instead.");
  }
  TensorIterConfig cfg;
  cfg.name = name;
  cfg.out = out;
  cfg.mode = mode;
  cfg.add_input(self).add_input(other);
  cfg.promote_int_to_float = flags & kPromoteToFloat;
  cfg.cpu_widens_reduced_float = true;
  cfg.result_bool = flags & kResultBool;
  // PyTorch's half/bfloat16 multiply and divide kernels read a single-value second operand in
  // float, without rounding it to the result dtype first (add, sub, remainder, ... do round it)
  if ((k == BinaryKernel::Mul || k == BinaryKernel::TrueDiv || k == BinaryKernel::TruncDiv ||
       k == BinaryKernel::FloorDiv) && other.numel() == 1)
    cfg.unrounded_input = 1;
  TensorIter it(cfg);
  if (flags & kNoReducedFloat) check_no_reduced_float(it.common_dtype(), name);
  if (k == BinaryKernel::Add || k == BinaryKernel::Sub) check_alpha(it.common_dtype(), alpha);
  KernelArgs args;
  args.s0 = alpha;
  args.name = name;
  binary_kernel_stub(it.device(), name)(k, it, args);
  return it.finish();
}

namespace native {

// ---- division
static BinaryKernel div_kernel(std::optional<std::string_view> mode, int* flags) {
  *flags = 0;
  if (!mode) { *flags = kPromoteToFloat; return BinaryKernel::TrueDiv; }
  if (*mode == "trunc") return BinaryKernel::TruncDiv;
  if (*mode == "floor") return BinaryKernel::FloorDiv;
  EMBER_FAIL(Runtime, "div expected rounding_mode to be one of None, 'trunc', or 'floor' but found '", *mode, "'");
}
Tensor div(const Tensor& self, const Tensor& other, std::optional<std::string_view> mode) {
  int f;
  BinaryKernel k = div_kernel(mode, &f);
  return binary_op(k, f, self, other, 1, Tensor(), OutMode::Functional, "div");
}
const Tensor& div_(const Tensor& self, const Tensor& other, std::optional<std::string_view> mode) {
  int f;
  BinaryKernel k = div_kernel(mode, &f);
  binary_op(k, f, self, other, 1, self, OutMode::Inplace, "div_");
  return self;
}
const Tensor& div_out(const Tensor& out, const Tensor& self, const Tensor& other, std::optional<std::string_view> mode) {
  int f;
  BinaryKernel k = div_kernel(mode, &f);
  binary_op(k, f, self, other, 1, out, OutMode::Out, "div");
  return out;
}

// ---- pow: integer tensors to negative integer scalars raise, as in PyTorch
static void check_pow(const Tensor& self, const Tensor& exponent) {
  if (exponent.impl()->is_wrapped_number() && exponent.dtype() == kLong && is_integral(self.dtype(), true)) {
    EMBER_CHECK(exponent.item().to_long() >= 0, "Integers to negative integer powers are not allowed.");
  }
}
// pow(x, 0) is ones and pow(x, 1) a copy for a number exponent, without the kernel (so whatever
// dtypes the kernel supports: bool_tensor ** True is allowed), as PyTorch short-cuts them.
static bool pow_shortcut(const Tensor& self, const Tensor& exponent, const Tensor& out, OutMode mode) {
  if (!exponent.impl()->is_wrapped_number()) return false;
  double e = exponent.item().to_double();
  if (e != 0.0 && e != 1.0) return false;
  Tensor ts[2] = {self, exponent};
  ScalarType dt = result_type(ts, 2);
  Tensor r = out;
  if (mode != OutMode::Functional)
    EMBER_CHECK(can_cast(dt, out.dtype()), "result type ", dt, " can't be cast to the desired output type ", out.dtype());
  if (mode == OutMode::Out) resize_output(out, self.sizes());
  if (e == 0.0) r.fill_(1);
  else if (r.is_same(self)) r.impl()->bump_version();
  else r.copy_(self);
  return true;
}
// A floating tensor to the power 2, 0.5, -0.5 or -1 (a number) is one vectorized unary kernel, as
// in PyTorch, which also defines the results that way (sqrt(-inf) is nan where std::pow(-inf, 0.5)
// is inf); 3 and -2 are two passes in the functional form. Out of these, std::pow per element.
static bool pow_fast(const Tensor& self, const Tensor& exponent, const Tensor& out, OutMode mode, const char* name,
                     Tensor* result) {
  if (!exponent.impl()->is_wrapped_number() || !is_floating(self.dtype()) || is_complex(exponent.dtype())) return false;
  const double e = exponent.item().to_double();
  UnaryKernel k;
  if (e == 2.0) k = UnaryKernel::Square;
  else if (e == 0.5 && self.dtype() != kHalf) k = UnaryKernel::Sqrt;  // float16: pow, as PyTorch
  else if (e == -0.5 && self.dtype() != kHalf) k = UnaryKernel::Rsqrt;
  else if (e == -1.0) k = UnaryKernel::Reciprocal;
  else if ((e == 3.0 || e == -2.0) && self.dtype() != kHalf) {
    // (x * x) * x and 1 / (x * x) as PyTorch, in every form (bfloat16 too, each step rounded; float16:
    // pow in float, rounded once)
    Tensor sq = unary_op(UnaryKernel::Square, 0, self, Tensor(), OutMode::Functional, name);
    if (e == 3.0) binary_op(BinaryKernel::Mul, 0, sq, self, 1, sq, OutMode::Inplace, name);
    else unary_op(UnaryKernel::Reciprocal, 0, sq, sq, OutMode::Inplace, name);
    if (mode == OutMode::Out) {
      EMBER_CHECK(can_cast(sq.dtype(), out.dtype()), "result type ", sq.dtype(), " can't be cast to the desired "
                  "output type ", out.dtype());
      resize_output(out, sq.sizes());
    }
    if (mode != OutMode::Functional) out.copy_(sq);
    *result = mode == OutMode::Functional ? sq : out;
    return true;
  } else {
    return false;
  }
  *result = unary_op(k, 0, self, out, mode, name);
  return true;
}
Tensor pow(const Tensor& self, const Tensor& exponent) {
  check_pow(self, exponent);
  if (exponent.impl()->is_wrapped_number()) {
    Tensor ts[2] = {self, exponent};
    Tensor r = empty_like_preserve(self, result_type(ts, 2));
    if (pow_shortcut(self, exponent, r, OutMode::Out)) return r;
    if (pow_fast(self, exponent, Tensor(), OutMode::Functional, "pow", &r)) return r;
  }
  return binary_op(BinaryKernel::Pow, 0, self, exponent, 1, Tensor(), OutMode::Functional, "pow");
}
const Tensor& pow_(const Tensor& self, const Tensor& exponent) {
  check_pow(self, exponent);
  if (pow_shortcut(self, exponent, self, OutMode::Inplace)) return self;
  Tensor r;
  if (pow_fast(self, exponent, self, OutMode::Inplace, "pow_", &r)) return self;
  binary_op(BinaryKernel::Pow, 0, self, exponent, 1, self, OutMode::Inplace, "pow_");
  return self;
}
const Tensor& pow_out(const Tensor& out, const Tensor& self, const Tensor& exponent) {
  check_pow(self, exponent);
  if (pow_shortcut(self, exponent, out, OutMode::Out)) return out;
  Tensor r;
  if (pow_fast(self, exponent, out, OutMode::Out, "pow", &r)) return out;
  binary_op(BinaryKernel::Pow, 0, self, exponent, 1, out, OutMode::Out, "pow");
  return out;
}
// double precision: float64, or complex128 when either side is complex
static ScalarType float_power_dtype(const Tensor& self, const Tensor& exponent) {
  return is_complex(self.dtype()) || is_complex(exponent.dtype()) ? kComplexDouble : kDouble;
}
Tensor float_power(const Tensor& self, const Tensor& exponent) {
  const ScalarType dt = float_power_dtype(self, exponent);
  return ember::pow(self.to(dt), exponent.impl()->is_wrapped_number() && !is_complex(exponent.dtype())
                                     ? exponent : exponent.to(dt));
}
const Tensor& float_power_(const Tensor& self, const Tensor& exponent) {
  const ScalarType dt = float_power_dtype(self, exponent);
  EMBER_CHECK(self.dtype() == dt, "the base given to float_power_ has dtype ", self.dtype(),
              " but the operation's result requires dtype ", dt);
  return ember::pow_(self, exponent.impl()->is_wrapped_number() && !is_complex(exponent.dtype()) ? exponent
                                                                                                 : exponent.to(dt));
}
const Tensor& float_power_out(const Tensor& out, const Tensor& self, const Tensor& exponent) {
  const ScalarType dt = float_power_dtype(self, exponent);
  EMBER_CHECK(out.dtype() == dt, "the output given to float_power has dtype ", out.dtype(),
              " but the operation's result requires dtype ", dt);
  return ember::pow_out(out, self.to(dt), exponent.to(dt));
}

// ---- square, round, nan_to_num
Tensor square(const Tensor& self) {
  if (self.dtype() == kBool) return ember::pow(self, scalar_to_tensor(Scalar(int64_t(2))));
  return unary_op(UnaryKernel::Square, 0, self, Tensor(), OutMode::Functional, "square");
}
const Tensor& square_(const Tensor& self) {
  if (self.dtype() == kBool) return ember::pow_(self, scalar_to_tensor(Scalar(int64_t(2))));
  unary_op(UnaryKernel::Square, 0, self, self, OutMode::Inplace, "square_");
  return self;
}
const Tensor& square_out(const Tensor& out, const Tensor& self) {
  if (self.dtype() == kBool) return ember::pow_out(out, self, scalar_to_tensor(Scalar(int64_t(2))));
  unary_op(UnaryKernel::Square, 0, self, out, OutMode::Out, "square");
  return out;
}

// round.decimals is float-only in PyTorch, decimals=0 included
static Tensor round_impl(const Tensor& self, std::optional<int64_t> decimals, const Tensor& out, OutMode mode) {
  if (!decimals) return unary_op(UnaryKernel::Round, 0, self, out, mode, "round");
  EMBER_CHECK_KIND(is_floating(self.dtype()), NotImplemented, "\"round_cpu\" not implemented for '", self.dtype(), "'");
  if (*decimals == 0) return unary_op(UnaryKernel::Round, 0, self, out, mode, "round");
  return unary_op(UnaryKernel::RoundDecimals, 0, self, out, mode, "round", Scalar(*decimals));
}
Tensor round(const Tensor& self) { return round_impl(self, std::nullopt, Tensor(), OutMode::Functional); }
const Tensor& round_(const Tensor& self) { round_impl(self, std::nullopt, self, OutMode::Inplace); return self; }
const Tensor& round_out(const Tensor& out, const Tensor& self) { round_impl(self, std::nullopt, out, OutMode::Out); return out; }
Tensor round(const Tensor& self, int64_t d) { return round_impl(self, d, Tensor(), OutMode::Functional); }
const Tensor& round_(const Tensor& self, int64_t d) { round_impl(self, d, self, OutMode::Inplace); return self; }
const Tensor& round_out(const Tensor& out, const Tensor& self, int64_t d) { round_impl(self, d, out, OutMode::Out); return out; }

static Tensor nan_to_num_impl(const Tensor& self, std::optional<double> nan, std::optional<double> posinf,
                              std::optional<double> neginf, const Tensor& out, OutMode mode) {
  if (is_integral(self.dtype(), true)) {  // nothing to replace: a copy, and in place a no-op (no overlap checks)
    if (mode == OutMode::Functional) return self.clone();
    if (mode == OutMode::Inplace) return self;
    EMBER_CHECK(out.dtype() == self.dtype(), "nan_to_num: dtype of out: ", out.dtype(), " should be same as input: ",
                self.dtype());
    resize_output(out, self.sizes());
    return ember::copy_(out, self);
  }
  double hi = 0, lo = 0;
  switch (self.dtype()) {
    case kHalf: hi = 65504.0; break;
    case kBFloat16: hi = 3.3895313892515355e+38; break;
    case kFloat: hi = std::numeric_limits<float>::max(); break;
    default: hi = std::numeric_limits<double>::max(); break;
  }
  lo = -hi;
  if (mode == OutMode::Out)
    EMBER_CHECK(out.dtype() == self.dtype(), "nan_to_num: dtype of out: ", out.dtype(), " should be same as input: ",
                self.dtype());
  TensorIterConfig cfg;
  cfg.name = "nan_to_num";
  cfg.out = out;
  cfg.mode = mode;
  cfg.cpu_widens_reduced_float = true;
  cfg.add_input(self);
  TensorIter it(cfg);
  KernelArgs a;
  a.s0 = nan.value_or(0.0);
  a.s1 = posinf.value_or(hi);
  a.s2 = neginf.value_or(lo);
  a.name = "nan_to_num";
  unary_kernel_stub(it.device(), "nan_to_num")(UnaryKernel::NanToNum, it, a);
  return it.finish();
}
Tensor nan_to_num(const Tensor& s, std::optional<double> n, std::optional<double> p, std::optional<double> m) {
  return nan_to_num_impl(s, n, p, m, Tensor(), OutMode::Functional);
}
const Tensor& nan_to_num_(const Tensor& s, std::optional<double> n, std::optional<double> p, std::optional<double> m) {
  nan_to_num_impl(s, n, p, m, s, OutMode::Inplace);
  return s;
}
const Tensor& nan_to_num_out(const Tensor& out, const Tensor& s, std::optional<double> n, std::optional<double> p,
                             std::optional<double> m) {
  nan_to_num_impl(s, n, p, m, out, OutMode::Out);
  return out;
}

// ---- clamp: bounds may be tensors or wrapped numbers; a missing bound is passed as self
static Tensor clamp_impl(const Tensor& self, const Tensor& min, const Tensor& max, const Tensor& out, OutMode mode) {
  EMBER_CHECK(min.defined() || max.defined(), "torch.clamp: At least one of 'min' or 'max' must not be None");
  auto number_or_none = [](const Tensor& t) { return !t.defined() || t.impl()->is_wrapped_number(); };
  Tensor ts[3] = {self, min, max};
  const ScalarType dt = result_type(ts, 3);
  // PyTorch's kernels: clamp.Tensor (both bounds tensors) and the number-bound ones have no bool
  // version; clamp_min/clamp_max with a tensor bound do
  bool number_bound = false;
  for (const Tensor* b : {&min, &max})
    if (b->defined() && b->impl()->is_wrapped_number()) {
      check_scalar_fits(b->item(), dt);  // number bounds must fit the result dtype
      number_bound = true;
    }
  if (dt == kBool) {
    EMBER_CHECK_KIND(!(min.defined() && max.defined() && !number_bound), NotImplemented,
                     "\"clamp_cpu\" not implemented for 'Bool'");
    const char* kname = !max.defined() ? "clamp_min_scalar_cpu" : !min.defined() ? "clamp_max_scalar_cpu"
                                                                                   : "clamp_scalar_cpu";
    EMBER_CHECK_KIND(!number_bound, NotImplemented, "\"", kname, "\" not implemented for 'Bool'");
  }
  TensorIterConfig cfg;
  cfg.name = "clamp";
  cfg.out = out;
  cfg.mode = mode;
  // clamp(x, number bounds, out=) writes only the result dtype; with tensor bounds out= may be wider
  cfg.out_dtype_must_match = number_or_none(min) && number_or_none(max);
  cfg.cpu_widens_reduced_float = true;
  cfg.add_input(self).add_input(min.defined() ? min : self).add_input(max.defined() ? max : self);
  TensorIter it(cfg);
  KernelArgs a;
  a.s0 = min.defined();
  a.s1 = max.defined();
  a.name = "clamp";
  ternary_kernel_stub(it.device(), "clamp")(TernaryKernel::Clamp, it, a);
  return it.finish();
}
Tensor clamp(const Tensor& s, const Tensor& lo, const Tensor& hi) { return clamp_impl(s, lo, hi, Tensor(), OutMode::Functional); }
const Tensor& clamp_(const Tensor& s, const Tensor& lo, const Tensor& hi) { clamp_impl(s, lo, hi, s, OutMode::Inplace); return s; }
const Tensor& clamp_out(const Tensor& out, const Tensor& s, const Tensor& lo, const Tensor& hi) { clamp_impl(s, lo, hi, out, OutMode::Out); return out; }
Tensor clamp_min(const Tensor& s, const Tensor& lo) { return clamp_impl(s, lo, Tensor(), Tensor(), OutMode::Functional); }
const Tensor& clamp_min_(const Tensor& s, const Tensor& lo) { clamp_impl(s, lo, Tensor(), s, OutMode::Inplace); return s; }
const Tensor& clamp_min_out(const Tensor& out, const Tensor& s, const Tensor& lo) { clamp_impl(s, lo, Tensor(), out, OutMode::Out); return out; }
Tensor clamp_max(const Tensor& s, const Tensor& hi) { return clamp_impl(s, Tensor(), hi, Tensor(), OutMode::Functional); }
const Tensor& clamp_max_(const Tensor& s, const Tensor& hi) { clamp_impl(s, Tensor(), hi, s, OutMode::Inplace); return s; }
const Tensor& clamp_max_out(const Tensor& out, const Tensor& s, const Tensor& hi) { clamp_impl(s, Tensor(), hi, out, OutMode::Out); return out; }

// ---- lerp
static Tensor lerp_impl(const Tensor& self, const Tensor& end, const Tensor& weight, const Tensor& out, OutMode mode) {
  EMBER_CHECK(self.dtype() == end.dtype(), "expected dtype ", self.dtype(), " for `end` but got dtype ", end.dtype());
  EMBER_CHECK(weight.impl()->is_wrapped_number() || weight.dtype() == self.dtype(), "expected dtype ", self.dtype(),
              " for `weight` but got dtype ", weight.dtype());
  TensorIterConfig cfg;
  cfg.name = "lerp";
  cfg.out = out;
  cfg.mode = mode;
  cfg.add_input(self).add_input(end).add_input(weight);
  cfg.force_dtype = self.dtype();
  cfg.out_dtype_must_match = !weight.impl()->is_wrapped_number();  // lerp.Tensor's out= is its own dtype
  cfg.round_inputs_to_common = !weight.impl()->is_wrapped_number();  // a number weight stays float
  cfg.cpu_widens_reduced_float = true;
  TensorIter it(cfg);  // shape errors come before the dtype's
  EMBER_CHECK_KIND(is_floating(self.dtype()) || is_complex(self.dtype()), NotImplemented,
                   "\"lerp_kernel_scalar\" not implemented for '", self.dtype(), "'");
  KernelArgs a;
  a.name = "lerp";
  ternary_kernel_stub(it.device(), "lerp")(TernaryKernel::Lerp, it, a);
  return it.finish();
}
Tensor lerp(const Tensor& s, const Tensor& e, const Tensor& w) { return lerp_impl(s, e, w, Tensor(), OutMode::Functional); }
const Tensor& lerp_(const Tensor& s, const Tensor& e, const Tensor& w) { lerp_impl(s, e, w, s, OutMode::Inplace); return s; }
const Tensor& lerp_out(const Tensor& out, const Tensor& s, const Tensor& e, const Tensor& w) { lerp_impl(s, e, w, out, OutMode::Out); return out; }

// ---- where
static Tensor where_impl(const Tensor& cond, const Tensor& self, const Tensor& other, const Tensor& out, OutMode mode,
                         bool allow_internal_overlap = false) {
  EMBER_CHECK(cond.dtype() == kBool || cond.dtype() == kByte,
              "where expected condition to be a boolean tensor, but got a tensor with dtype ", cond.dtype());
  Tensor ts[2] = {self, other};
  ScalarType dt = result_type(ts, 2);
  for (const Tensor* v : {&self, &other})
    if (v->impl()->is_wrapped_number()) check_scalar_fits(v->item(), dt);
  if (mode == OutMode::Out) EMBER_CHECK(out.dtype() == dt, "Expected out type to be ", dt, " but got ", out.dtype());
  TensorIterConfig cfg;
  cfg.name = "where";
  cfg.out = out;
  cfg.mode = mode;
  cfg.promote_inputs = false;
  cfg.add_input(cond.dtype() == kBool ? cond : cond.to(kBool));
  cfg.add_input(self.dtype() == dt ? self : self.to(dt)).add_input(other.dtype() == dt ? other : other.to(dt));
  cfg.force_dtype = dt;
  cfg.check_internal_overlap = !allow_internal_overlap;
  // the CPU kernel selects half/bfloat16 values as 16-bit patterns; the GPU's computes them in float
  cfg.allow_reduced_float = cond.device().is_cpu() && self.device().is_cpu() && other.device().is_cpu() &&
                            (!out.defined() || out.device().is_cpu());
  if (is_reduced_float(dt) && !cfg.allow_reduced_float) {
    Tensor r = where_impl(cond, self.to(kFloat), other.to(kFloat), Tensor(), OutMode::Functional).to(dt);
    if (mode == OutMode::Functional) return r;
    if (mode == OutMode::Out) resize_output(out, r.sizes());
    TensorIterConfig copy;  // out.copy_(r), but keeping this call's overlap rule
    copy.name = "where";
    copy.out = out;
    copy.mode = OutMode::Inplace;
    copy.promote_inputs = false;
    copy.force_dtype = out.dtype();
    copy.allow_reduced_float = true;
    copy.check_internal_overlap = !allow_internal_overlap;
    copy.add_input(r);
    TensorIter cit(copy);
    EMBER_CHECK(out.sizes() == r.sizes(), "output with shape ", out.sizes(), " doesn't match the broadcast shape ",
                r.sizes());
    copy_kernel_stub(cit.device(), "where")(cit);
    return out;
  }
  TensorIter it(cfg);
  KernelArgs a;
  a.name = "where";
  ternary_kernel_stub(it.device(), "where")(TernaryKernel::Where, it, a);
  return it.finish();
}
Tensor where(const Tensor& c, const Tensor& s, const Tensor& o) { return where_impl(c, s, o, Tensor(), OutMode::Functional); }
const Tensor& where_out(const Tensor& out, const Tensor& c, const Tensor& s, const Tensor& o) { where_impl(c, s, o, out, OutMode::Out); return out; }

// ---- masked_fill
namespace {
// The out-of-place forms' starting point: self broadcast against the mask (the in-place forms cannot grow
// self), row-major whatever self's layout, as PyTorch's.
Tensor masked_fill_base(const Tensor& self, const Tensor& mask) {
  DimVector shape = broadcast_shapes(self.sizes(), mask.sizes());
  Tensor r = empty_tensor(shape, self.dtype(), self.device());
  if (r.numel()) ember::copy_(r, self.expand(shape));
  return r;
}
}  // namespace
Tensor masked_fill(const Tensor& self, const Tensor& mask, const Scalar& value) {
  Tensor r = masked_fill_base(self, mask);
  native::masked_fill_(r, mask, value);
  return r;
}
const Tensor& masked_fill_(const Tensor& self, const Tensor& mask, const Scalar& value) {
  EMBER_CHECK(mask.dtype() == kBool, "masked_fill_ only supports boolean masks, but got mask with dtype ", mask.dtype());
  check_scalar_fits(value, self.dtype());
  Tensor v = scalar_to_tensor(value).to(self.dtype());
  // PyTorch still accepts (with a deprecation warning) masked_fill_ on an expanded tensor
  where_impl(mask, v, self, self, OutMode::Inplace, /*allow_internal_overlap=*/true);
  return self;
}

// a 0-d tensor value: selected on the device by where (no .item() sync), and differentiable
const Tensor& masked_fill_(const Tensor& self, const Tensor& mask, const Tensor& value) {
  EMBER_CHECK(value.dim() == 0, "masked_fill_ only supports a 0-dimensional value tensor, but got tensor with ",
              value.dim(), " dimension(s).");
  EMBER_CHECK(mask.dtype() == kBool, "masked_fill_ only supports boolean masks, but got mask with dtype ", mask.dtype());
  check_same_device("masked_fill_", self.device(), {&mask});
  if (value.device().is_cpu()) check_scalar_fits(value.item(), self.dtype());  // as the Scalar form (no GPU sync)
  where_impl(mask, value.to(self.device()).to(self.dtype()), self, self, OutMode::Inplace, /*allow_internal_overlap=*/true);
  return self;
}
Tensor masked_fill(const Tensor& self, const Tensor& mask, const Tensor& value) {
  Tensor r = masked_fill_base(self, mask);
  native::masked_fill_(r, mask, value);
  return r;
}

// ---- logaddexp, logaddexp2: composites of differentiable ops (their gradients follow:
// maximum splits ties evenly and |x| has slope 0 at 0, which gives sigmoid(0) = 1/2, torch's value)
namespace {
ScalarType floating_result(const Tensor& a, const Tensor& b, const char* name) {
  ScalarType dt = promote_types(a.dtype(), b.dtype());
  EMBER_CHECK_KIND(is_floating(dt), NotImplemented, "\"", name, "_cpu\" not implemented for '", dt, "'");
  return dt;
}
// log(base^a + base^b) from max + log1p(base^-|a-b|); equal infinities give themselves (not inf - inf)
Tensor logaddexp_base(const Tensor& a, const Tensor& b, bool base2) {
  Tensor m = ember::maximum(a, b);
  Tensor negdiff = ember::neg(ember::abs(ember::sub(a, b)));
  Tensor r = base2 ? ember::add(m, ember::mul(ember::log1p(ember::exp2(negdiff)), Scalar(1.4426950408889634)))
                   : ember::add(m, ember::log1p(ember::exp(negdiff)));
  return ember::where(ember::logical_and(ember::isinf(a), ember::eq(a, b)), m, r);
}
}  // namespace

// (half/bfloat16 compute in float and round once, as PyTorch's kernel: the composite in the dtype itself
// would round every step, an ulp or more off where max and log1p(...) nearly cancel)
Tensor logaddexp(const Tensor& self, const Tensor& other) {
  // complex: the larger real part plays the maximum's part (as torch's)
  if (is_complex(promote_types(self.dtype(), other.dtype()))) {
    Tensor first = ember::ge(autograd::real_part(self), autograd::real_part(other));
    Tensor hi = ember::where(first, self, other), lo = ember::where(first, other, self);
    return ember::add(hi, ember::log1p(ember::exp(ember::sub(lo, hi))));
  }
  return in_opmath_as(floating_result(self, other, "logaddexp"),
                      [](const Tensor& a, const Tensor& b) { return logaddexp_base(a, b, false); }, self, other);
}

Tensor logaddexp2(const Tensor& self, const Tensor& other) {
  return in_opmath_as(floating_result(self, other, "logaddexp2"),
                      [](const Tensor& a, const Tensor& b) { return logaddexp_base(a, b, true); }, self, other);
}

}  // namespace native
}  // namespace ember
