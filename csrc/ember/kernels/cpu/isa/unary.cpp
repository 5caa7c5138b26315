// Unary elementwise kernels: one functor per op, a few lines each. The dtype mask says which
// compute dtypes exist; integer inputs of float-only ops were already promoted by the caller.
#include <cmath>
#include <limits>

#include "ember/core/checked_math.h"
#include "ember/kernels/cpu/isa/loops.h"
#include "ember/kernels/cpu/isa/reduced_float.h"
#include "ember/kernels/cpu/isa/vec_math.h"
#include "ember/kernels/cpu/special_math.h"

namespace ember::EMBER_CPU_NS {

template <class T> constexpr bool is_fp = std::is_floating_point_v<T>;

#define FLOAT_FN(Name, expr) \
  template <class T> struct Name { static constexpr int mask = kFloats; T operator()(T x) const { return expr; } };
// the same expression also serves complex inputs (std::complex overloads)
#define CFLOAT_FN(Name, expr) \
  template <class T> struct Name { static constexpr int mask = kFloats | kComplex; T operator()(T x) const { return expr; } };
CFLOAT_FN(Exp, std::exp(x))
template <class T> struct Exp2 {
  static constexpr int mask = kFloats | kComplex;
  T operator()(T x) const {
    if constexpr (is_cplx<T>) return std::exp(x * typename T::value_type(0.6931471805599453));
    else return std::exp2(x);
  }
};
// complex expm1(a + ib) = expm1(a) cos b - 2 sin^2(b / 2) + i e^a sin b: no cancellation near zero
template <class T> struct Expm1 {
  static constexpr int mask = kFloats | kComplex;
  T operator()(T x) const {
    if constexpr (is_cplx<T>) {
      using R = typename T::value_type;
      R a = x.real(), b = x.imag(), h = std::sin(b / 2);
      return T(std::expm1(a) * std::cos(b) - 2 * h * h, std::exp(a) * std::sin(b));
    } else {
      return std::expm1(x);
    }
  }
};
CFLOAT_FN(Log, std::log(x))
template <class T> struct Log2 {
  static constexpr int mask = kFloats | kComplex;
  T operator()(T x) const {
    if constexpr (is_cplx<T>) return std::log(x) / typename T::value_type(0.6931471805599453);
    else return std::log2(x);
  }
};
CFLOAT_FN(Log10, std::log10(x))
// complex log1p(z) = log|1 + z| + i arg(1 + z), the modulus as log1p(2a + a^2 + b^2) / 2 near zero
template <class T> struct Log1p {
  static constexpr int mask = kFloats | kComplex;
  T operator()(T x) const {
    if constexpr (is_cplx<T>) {
      using R = typename T::value_type;
      R a = x.real(), b = x.imag();
      if (std::abs(a) > R(0.5) || std::abs(b) > R(0.5)) return std::log(T(1) + x);
      return T(std::log1p(a * (2 + a) + b * b) / 2, std::atan2(b, 1 + a));
    } else {
      return std::log1p(x);
    }
  }
};
CFLOAT_FN(Sqrt, std::sqrt(x))
CFLOAT_FN(Rsqrt, T(1) / std::sqrt(x))
CFLOAT_FN(Sin, std::sin(x))
CFLOAT_FN(Cos, std::cos(x))
CFLOAT_FN(Tan, std::tan(x))
CFLOAT_FN(Asin, std::asin(x))
CFLOAT_FN(Acos, std::acos(x))
CFLOAT_FN(Atan, std::atan(x))
CFLOAT_FN(Sinh, std::sinh(x))
CFLOAT_FN(Cosh, std::cosh(x))
CFLOAT_FN(Tanh, std::tanh(x))
CFLOAT_FN(Asinh, std::asinh(x))
CFLOAT_FN(Acosh, std::acosh(x))
CFLOAT_FN(Atanh, std::atanh(x))
CFLOAT_FN(Sigmoid, T(1) / (T(1) + std::exp(-x)))
#undef CFLOAT_FN
FLOAT_FN(Erf, std::erf(x))
FLOAT_FN(Erfc, std::erfc(x))
FLOAT_FN(Erfinv, T(erfinv_double(double(x))))
template <class T> struct Reciprocal {
  static constexpr int mask = kFloats | kComplex;
  T operator()(T x) const { return T(1) / x; }
};
FLOAT_FN(Frac, x - std::trunc(x))
#undef FLOAT_FN

// Special functions: scalar double code, out of line (kernels/cpu/special_math.cpp)
#define SPECIAL_FN(Name, fn) \
  template <class T> struct Name { \
    static constexpr int mask = kFloats; \
    T operator()(T x) const { return T(special_math::fn(double(x))); } \
  };
SPECIAL_FN(Lgamma, lgamma)
SPECIAL_FN(Digamma, digamma)
SPECIAL_FN(I0, i0)
SPECIAL_FN(I0e, i0e)
SPECIAL_FN(I1, i1)
SPECIAL_FN(I1e, i1e)
SPECIAL_FN(BesselK0, k0)
SPECIAL_FN(BesselK1, k1)
SPECIAL_FN(BesselK0e, k0e)
SPECIAL_FN(BesselK1e, k1e)
SPECIAL_FN(BesselJ0, j0)
SPECIAL_FN(BesselJ1, j1)
SPECIAL_FN(BesselY0, y0)
SPECIAL_FN(BesselY1, y1)
SPECIAL_FN(SphericalJ0, spherical_j0)
SPECIAL_FN(AiryAi, airy_ai)
SPECIAL_FN(Erfcx, erfcx)
SPECIAL_FN(Ndtri, ndtri)
SPECIAL_FN(LogNdtr, log_ndtr)
SPECIAL_FN(Entr, entr)
template <class T> struct Sinc {
  static constexpr int mask = kFloats | kComplex;
  T operator()(T x) const {
    if constexpr (is_cplx<T>) {
      using R = typename T::value_type;
      if (x == T(0)) return T(1);
      T px = x * R(3.14159265358979323846);
      return std::sin(px) / px;
    } else {
      return T(special_math::sinc(double(x)));
    }
  }
};
#undef SPECIAL_FN

template <class T> struct Polygamma {
  static constexpr int mask = kFloats;
  int64_t n;
  explicit Polygamma(const KernelArgs& a) : n(a.s0.to_long()) {}
  T operator()(T x) const { return T(special_math::polygamma(n, double(x))); }
};
// logit(x) = log(x / (1 - x)), x first clamped to [eps, 1 - eps] when eps >= 0 (s0 = eps, -1 for none)
template <class T> struct Logit {
  static constexpr int mask = kFloats;
  T lo, hi;
  bool clamp;
  explicit Logit(const KernelArgs& a) {
    double eps = a.s0.to<double>();
    clamp = eps >= 0;
    lo = T(eps);
    hi = T(1 - eps);
  }
  T operator()(T x) const {
    if (clamp) x = x < lo ? lo : (x > hi ? hi : x);  // NaN stays NaN
    return std::log(x / (T(1) - x));
  }
};

// Rounding ops are the identity on integers.
#define ROUND_FN(Name, fexpr) \
  template <class T> struct Name { \
    static constexpr int mask = kNumeric; \
    T operator()(T x) const { if constexpr (is_fp<T>) return fexpr; else return x; } \
  };
ROUND_FN(Floor, std::floor(x))
ROUND_FN(Ceil, std::ceil(x))
ROUND_FN(Trunc, std::trunc(x))
ROUND_FN(Round, std::nearbyint(x))
#undef ROUND_FN

template <class T> struct RoundDecimals {
  static constexpr int mask = kFloats;
  int64_t decimals;
  T ten_pow;
  explicit RoundDecimals(const KernelArgs& a) : decimals(a.s0.to_long()) {
    ten_pow = T(std::pow(10.0, std::fabs(double(decimals))));  // -decimals would overflow for -2**63
  }
  T operator()(T x) const {
    return decimals < 0 ? std::nearbyint(x / ten_pow) * ten_pow : std::nearbyint(x * ten_pow) / ten_pow;
  }
};

template <class T> struct Abs {
  static constexpr int mask = kNumeric | kComplex;  // abs of a bool tensor is not implemented in PyTorch
  auto operator()(T x) const {  // a complex's modulus is real (the op allocates a real output)
    if constexpr (is_cplx<T>) return std::abs(x);
    else if constexpr (std::is_same_v<T, bool> || std::is_unsigned_v<T>) return x;
    else if constexpr (is_fp<T>) return std::abs(x);
    else return x < 0 ? wrapping_neg(x) : x;  // abs(INT_MIN) wraps to INT_MIN, as in PyTorch
  }
};
template <class T> struct Neg {
  static constexpr int mask = kNumeric | kComplex;
  T operator()(T x) const { if constexpr (std::is_integral_v<T>) return wrapping_neg(x); else return T(-x); }
};
template <class T> struct Square {
  static constexpr int mask = kNumeric | kComplex;
  T operator()(T x) const {
    if constexpr (std::is_integral_v<T>) return wrapping_mul(x, x);
    else if constexpr (is_cplx<T>) return T(x.real() * x.real() - x.imag() * x.imag(), 2 * x.real() * x.imag());
    else return T(x * x);
  }
};
template <class T> struct Sign {
  static constexpr int mask = kAll;
  T operator()(T x) const {
    if constexpr (std::is_same_v<T, bool>) return x;
    else return T((T(0) < x) - (x < T(0)));  // sign(NaN) is 0, as in PyTorch
  }
};
// sgn: z / |z| for complex (0 at 0), sign for real
template <class T> struct Sgn {
  static constexpr int mask = kAll | kComplex;
  T operator()(T x) const {
    if constexpr (is_cplx<T>) {
      auto r = std::abs(x);
      return r == 0 ? T(0) : x / r;
    } else if constexpr (std::is_same_v<T, bool>) return x;
    else return T((T(0) < x) - (x < T(0)));
  }
};
// conj_physical: identity on real numbers
template <class T> struct Conj {
  static constexpr int mask = kAll | kComplex;
  T operator()(T x) const { if constexpr (is_cplx<T>) return std::conj(x); else return x; }
};
// angle: arg(z) for complex; for reals pi below zero, 0 otherwise, NaN kept (PyTorch's)
template <class T> struct Angle {
  static constexpr int mask = kFloats | kComplex;
  auto operator()(T x) const {
    if constexpr (is_cplx<T>) return std::arg(x);
    else return x != x ? x : (x < T(0) ? T(3.14159265358979323846) : T(0));
  }
};
// clamp_min(x, 0) as PyTorch's CPU kernel: NaN and -0. pass through (relu(-0.) is -0.)
template <class T> struct Relu {
  static constexpr int mask = kNumeric;
  T operator()(T x) const { return x < T(0) ? T(0) : x; }
};
template <class T> struct IsNan {
  static constexpr int mask = kAll | kComplex;
  bool operator()(T x) const {
    if constexpr (is_cplx<T>) return x.real() != x.real() || x.imag() != x.imag();
    else if constexpr (is_fp<T>) return x != x;
    else return false;
  }
};
template <class T> struct IsInf {
  static constexpr int mask = kAll | kComplex;
  bool operator()(T x) const {
    if constexpr (is_cplx<T>) return std::isinf(x.real()) || std::isinf(x.imag());
    else if constexpr (is_fp<T>) return std::isinf(x);
    else return false;
  }
};
template <class T> struct IsFinite {
  static constexpr int mask = kAll | kComplex;
  bool operator()(T x) const {
    if constexpr (is_cplx<T>) return std::isfinite(x.real()) && std::isfinite(x.imag());
    else if constexpr (is_fp<T>) return std::isfinite(x);
    else return true;
  }
};
template <class T> struct IsPosInf {
  static constexpr int mask = kAll;
  bool operator()(T x) const { if constexpr (is_fp<T>) return x == std::numeric_limits<T>::infinity(); else return false; }
};
template <class T> struct IsNegInf {
  static constexpr int mask = kAll;
  bool operator()(T x) const { if constexpr (is_fp<T>) return x == -std::numeric_limits<T>::infinity(); else return false; }
};
template <class T> struct Signbit {
  static constexpr int mask = kAll;
  bool operator()(T x) const {
    if constexpr (is_fp<T>) return std::signbit(x);
    else if constexpr (std::is_signed_v<T>) return x < 0;
    else return false;
  }
};
template <class T> struct LogicalNot {
  static constexpr int mask = kAll | kComplex;
  bool operator()(T x) const { return !truth(x); }
};
template <class T> struct BitwiseNot {
  static constexpr int mask = kIntegral;
  T operator()(T x) const { if constexpr (std::is_same_v<T, bool>) return !x; else return T(~x); }
};
template <class T> struct NanToNum {
  static constexpr int mask = kAll;
  T nan, posinf, neginf;
  explicit NanToNum(const KernelArgs& a) : nan(a.s0.to<T>()), posinf(a.s1.to<T>()), neginf(a.s2.to<T>()) {}
  T operator()(T x) const {
    if constexpr (is_fp<T>) return x != x ? nan : (x == std::numeric_limits<T>::infinity() ? posinf
                                                 : x == -std::numeric_limits<T>::infinity() ? neginf : x);
    else return x;
  }
};

// half/bfloat16 operands: the float functor over widened blocks (SLEEF's vector form where it has one)
template <template <class> class F>
void run_reduced(TensorIter& it, const KernelArgs& a) {
  if constexpr ((F<float>::mask & bit(kFloat)) == 0) {
    EMBER_FAIL(NotImplemented, "\"", a.name, "\" not implemented for '", it.compute_dtype(), "'");
  } else {
    auto f = make_functor<F<float>>(a);
#ifdef EMBER_HAVE_VEC_MATH
    if constexpr (VecFn<F>::ok) {
      reduced_float_loop<1, float>(it, [&](const float* const* x, float* out, int64_t m) {
        int64_t j = 0;
        for (; j + kVF <= m; j += kVF) vstoref(out + j, VecFn<F>::f(vloadf(x[0] + j)));
        for (; j < m; j++) out[j] = f(x[0][j]);
      });
      return;
    }
#endif
    reduced_float_map<1>(it, f);
  }
}

template <template <class> class F>
void run(TensorIter& it, const KernelArgs& a) {
  if (is_reduced_float(it.compute_dtype())) return run_reduced<F>(it, a);
  dispatch_compute<F<float>::mask>(it.dtype(1), a.name, [&](auto tag) {
    using T = decltype(tag);
    auto f = make_functor<F<T>>(a);
    using R = decltype(f(T()));
    if (!try_vec_unary<F, T>(it)) unary_loop<R, T>(it, f);
  });
}

void unary_kernel(UnaryKernel k, TensorIter& it, const KernelArgs& a) {
  switch (k) {
#define EMBER_CASE(F)    \
  case UnaryKernel::F:   \
    run<F>(it, a);       \
    return;
    EMBER_UNARY_KERNELS(EMBER_CASE)
#undef EMBER_CASE
  }
}

}  // namespace ember::EMBER_CPU_NS
