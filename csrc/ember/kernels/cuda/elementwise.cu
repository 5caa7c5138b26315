// Unary, binary and ternary elementwise kernels on the GPU: the same functors as the CPU's
// (kernels/cpu/isa/{unary,binary}.cpp), semantics included (NaN propagation, wrapping integer
// arithmetic, round half to even, PyTorch's floor division and remainder), on CUDA's math library.
// Float16/bfloat16 never reach these: TensorIter computes them in float32. Complex dtypes and the
// special functions without a CUDA math routine have no entry: the host side raises
// NotImplementedError naming the op and the device.
#include <cmath>
#include <limits>

#include "ember/kernels/cuda/loops.cuh"
#include "ember/kernels/elementwise_math.h"
#include "ember/kernels/special_functions.h"

namespace ember::cuda_kernels {
namespace {

namespace em = ::ember::elementwise_math;

template <class T> constexpr bool is_fp = std::is_floating_point_v<T>;
template <class T> constexpr bool is_b = std::is_same_v<T, bool>;
template <class T> constexpr bool is_int = std::is_integral_v<T> && !std::is_same_v<T, bool>;

// ---- unary
#define FLOAT_FN(Name, expr)                                   \
  template <class T> struct Name {                             \
    static constexpr int mask = kFloats;                       \
    __device__ T operator()(T x) const { return expr; }        \
  };
FLOAT_FN(Exp, ::exp(x))
FLOAT_FN(Exp2, ::exp2(x))
FLOAT_FN(Expm1, ::expm1(x))
FLOAT_FN(Log, ::log(x))
FLOAT_FN(Log2, ::log2(x))
FLOAT_FN(Log10, ::log10(x))
FLOAT_FN(Log1p, ::log1p(x))
FLOAT_FN(Sqrt, ::sqrt(x))
FLOAT_FN(Rsqrt, T(1) / ::sqrt(x))
FLOAT_FN(Sin, ::sin(x))
FLOAT_FN(Cos, ::cos(x))
FLOAT_FN(Tan, ::tan(x))
FLOAT_FN(Asin, ::asin(x))
FLOAT_FN(Acos, ::acos(x))
FLOAT_FN(Atan, ::atan(x))
FLOAT_FN(Sinh, ::sinh(x))
FLOAT_FN(Cosh, ::cosh(x))
FLOAT_FN(Tanh, ::tanh(x))
FLOAT_FN(Asinh, ::asinh(x))
FLOAT_FN(Acosh, ::acosh(x))
FLOAT_FN(Atanh, ::atanh(x))
FLOAT_FN(Sigmoid, T(1) / (T(1) + ::exp(-x)))
FLOAT_FN(Erf, ::erf(x))
FLOAT_FN(Erfc, ::erfc(x))
FLOAT_FN(Erfinv, ::erfinv(x))
FLOAT_FN(Erfcx, ::erfcx(x))
FLOAT_FN(Lgamma, ::lgamma(x))
FLOAT_FN(Ndtri, ::normcdfinv(x))
FLOAT_FN(BesselJ0, ::j0(x))
FLOAT_FN(BesselJ1, ::j1(x))
FLOAT_FN(BesselY0, ::y0(x))
FLOAT_FN(BesselY1, ::y1(x))
FLOAT_FN(Reciprocal, T(1) / x)
FLOAT_FN(Frac, x - ::trunc(x))
#undef FLOAT_FN

// The special functions of kernels/special_functions.h, shared with the CPU: in double, as the CPU's.
#define SPECIAL_FN(Name, fn)                                                       \
  template <class T> struct Name {                                                 \
    static constexpr int mask = kFloats;                                           \
    __device__ T operator()(T x) const { return T(special_fn::fn(double(x))); }    \
  };
SPECIAL_FN(Sinc, sinc)
SPECIAL_FN(Entr, entr)
SPECIAL_FN(Digamma, digamma)
SPECIAL_FN(SphericalJ0, spherical_j0)
SPECIAL_FN(LogNdtr, log_ndtr)
#undef SPECIAL_FN
// The modified Bessel I0/I1 and their scaled forms, in double as the CPU's: NaN at +-inf (PyTorch's
// CPU values), e^-|x| I(|x|) through the asymptotic series where I(|x|) overflows
template <class T> struct I0 {
  static constexpr int mask = kFloats;
  __device__ T operator()(T x) const {
    const double d = double(x);
    return T(::isfinite(d) ? ::cyl_bessel_i0(d) : special_fn::nan_value());
  }
};
template <class T> struct I1 {
  static constexpr int mask = kFloats;
  __device__ T operator()(T x) const {
    const double d = double(x);
    return T(::isfinite(d) ? ::cyl_bessel_i1(d) : special_fn::nan_value());
  }
};
__device__ inline double scaled_i(int nu, double ax) {  // e^-ax I_nu(ax), ax >= 0
  if (special_fn::is_inf(ax)) return 0.0;
  if (ax < special_fn::kBesselAsymptotic) return ::exp(-ax) * (nu == 0 ? ::cyl_bessel_i0(ax) : ::cyl_bessel_i1(ax));
  return special_fn::bessel_asymptotic_sum(nu, ax, true) / ::sqrt(2 * special_fn::kPi * ax);
}
template <class T> struct I0e {
  static constexpr int mask = kFloats;
  __device__ T operator()(T x) const { return x != x ? x : T(scaled_i(0, ::fabs(double(x)))); }
};
template <class T> struct I1e {
  static constexpr int mask = kFloats;
  __device__ T operator()(T x) const {
    if (x != x) return x;
    const double v = scaled_i(1, ::fabs(double(x)));
    return T(::signbit(double(x)) ? -v : v);
  }
};
template <class T> struct Polygamma {
  static constexpr int mask = kFloats;
  int64_t n;
  explicit Polygamma(const Args& a) : n(a.i[0]) {}
  __device__ T operator()(T x) const { return T(special_fn::polygamma(n, double(x))); }
};

template <class T> struct Logit {
  static constexpr int mask = kFloats;
  T lo, hi;
  bool clamp;
  explicit Logit(const Args& a) : lo(T(a.d[0])), hi(T(1 - a.d[0])), clamp(a.d[0] >= 0) {}
  __device__ T operator()(T x) const {
    if (clamp) x = x < lo ? lo : (x > hi ? hi : x);  // NaN stays NaN
    return ::log(x / (T(1) - x));
  }
};
// Rounding is the identity on integers; round() is half to even (rint), as PyTorch's.
#define ROUND_FN(Name, fexpr)                                                              \
  template <class T> struct Name {                                                         \
    static constexpr int mask = kNumeric;                                                  \
    __device__ T operator()(T x) const { if constexpr (is_fp<T>) return fexpr; else return x; } \
  };
ROUND_FN(Floor, ::floor(x))
ROUND_FN(Ceil, ::ceil(x))
ROUND_FN(Trunc, ::trunc(x))
ROUND_FN(Round, ::rint(x))
#undef ROUND_FN
template <class T> struct RoundDecimals {
  static constexpr int mask = kFloats;
  bool negative;
  T ten_pow;
  explicit RoundDecimals(const Args& a) : negative(a.i[0] < 0), ten_pow(T(std::pow(10.0, std::fabs(double(a.i[0]))))) {}
  __device__ T operator()(T x) const { return negative ? ::rint(x / ten_pow) * ten_pow : ::rint(x * ten_pow) / ten_pow; }
};
template <class T> struct Abs {
  static constexpr int mask = kNumeric;
  __device__ T operator()(T x) const {
    if constexpr (std::is_unsigned_v<T>) return x;
    else if constexpr (is_fp<T>) return ::fabs(x);
    else return x < 0 ? wrapping_sub(T(0), x) : x;  // abs(INT_MIN) wraps to INT_MIN, as in PyTorch
  }
};
template <class T> struct Neg {
  static constexpr int mask = kNumeric;
  __device__ T operator()(T x) const { if constexpr (is_int<T>) return wrapping_sub(T(0), x); else return -x; }
};
template <class T> struct Square {
  static constexpr int mask = kNumeric;
  __device__ T operator()(T x) const { return wrapping_mul(x, x); }
};
template <class T> struct Sign {
  static constexpr int mask = kAll;
  __device__ T operator()(T x) const {
    if constexpr (is_b<T>) return x;
    else return T((T(0) < x) - (x < T(0)));  // sign(NaN) is 0, as in PyTorch
  }
};
template <class T> struct Sgn : Sign<T> {};
template <class T> struct Conj {
  static constexpr int mask = kAll;
  __device__ T operator()(T x) const { return x; }
};
template <class T> struct Angle {
  static constexpr int mask = kFloats;
  __device__ T operator()(T x) const { return x != x ? x : (x < T(0) ? T(3.14159265358979323846) : T(0)); }
};
template <class T> struct Relu {
  static constexpr int mask = kNumeric;
  __device__ T operator()(T x) const { return x != x ? x : (x > T(0) ? x : T(0)); }
};
template <class T> struct IsNan {
  static constexpr int mask = kAll;
  __device__ bool operator()(T x) const { if constexpr (is_fp<T>) return x != x; else return false; }
};
template <class T> struct IsInf {
  static constexpr int mask = kAll;
  __device__ bool operator()(T x) const { if constexpr (is_fp<T>) return ::isinf(x); else return false; }
};
template <class T> struct IsFinite {
  static constexpr int mask = kAll;
  __device__ bool operator()(T x) const { if constexpr (is_fp<T>) return ::isfinite(x); else return true; }
};
template <class T> struct IsPosInf {
  static constexpr int mask = kAll;
  __device__ bool operator()(T x) const {
    if constexpr (is_fp<T>) return x == std::numeric_limits<T>::infinity(); else return false;
  }
};
template <class T> struct IsNegInf {
  static constexpr int mask = kAll;
  __device__ bool operator()(T x) const {
    if constexpr (is_fp<T>) return x == -std::numeric_limits<T>::infinity(); else return false;
  }
};
template <class T> struct Signbit {
  static constexpr int mask = kAll;
  __device__ bool operator()(T x) const {
    if constexpr (is_fp<T>) return ::signbit(x);
    else if constexpr (std::is_signed_v<T>) return x < 0;
    else return false;
  }
};
template <class T> struct LogicalNot {
  static constexpr int mask = kAll;
  __device__ bool operator()(T x) const { return !x; }
};
template <class T> struct BitwiseNot {
  static constexpr int mask = kIntegral;
  __device__ T operator()(T x) const { if constexpr (is_b<T>) return !x; else return T(~x); }
};
template <class T> struct NanToNum {
  static constexpr int mask = kAll;
  T nan, posinf, neginf;
  explicit NanToNum(const Args& a) : nan(T(a.d[0])), posinf(T(a.d[1])), neginf(T(a.d[2])) {}
  __device__ T operator()(T x) const {
    if constexpr (is_fp<T>)
      return x != x ? nan : (x == std::numeric_limits<T>::infinity() ? posinf
                             : x == -std::numeric_limits<T>::infinity() ? neginf : x);
    else return x;
  }
};

template <class F>
F make_functor(const Args& a) {
  if constexpr (std::is_constructible_v<F, const Args&>) return F(a);
  else return F{};
}

template <template <class> class F>
Status run_unary(const Iter& it, const Args& a, void* stream) {
  return dispatch<F<float>::mask>(it.dtype[1], [&](auto tag) {
    using T = decltype(tag);
    auto f = make_functor<F<T>>(a);
    using R = decltype(f(T()));
    return unary_loop<R, T>(it, stream, f);
  });
}

// ---- binary
template <class T> struct Add {
  static constexpr int mask = kAll;
  T alpha;
  explicit Add(const Args& a) : alpha(is_fp<T> ? T(a.d[0]) : is_b<T> ? T(a.b[0]) : T(a.i[0])) {}
  __device__ T operator()(T x, T y) const {
    if constexpr (is_b<T>) return x || (alpha && y);
    else return wrapping_add(x, wrapping_mul(alpha, y));
  }
};
template <class T> struct Sub {
  static constexpr int mask = kNumeric;
  T alpha;
  explicit Sub(const Args& a) : alpha(is_fp<T> ? T(a.d[0]) : T(a.i[0])) {}
  __device__ T operator()(T x, T y) const { return wrapping_sub(x, wrapping_mul(alpha, y)); }
};
template <class T> struct Mul {
  static constexpr int mask = kAll;
  __device__ T operator()(T x, T y) const { if constexpr (is_b<T>) return x && y; else return wrapping_mul(x, y); }
};
template <class T> struct ReluGrad {
  static constexpr int mask = kFloats;
  __device__ T operator()(T g, T r) const { return r > T(0) ? g : T(0); }
};
template <class T> struct TrueDiv {
  static constexpr int mask = kFloats;
  __device__ T operator()(T x, T y) const { return x / y; }
};
// The arithmetic with PyTorch's own semantics is kernels/elementwise_math.h's, shared with the CPU
// (integer division by zero gives 0 here, where the CPU raises ZeroDivisionError).
#define SHARED_FN(Name, dtype_mask, fn)                                       \
  template <class T> struct Name {                                            \
    static constexpr int mask = dtype_mask;                                   \
    __device__ T operator()(T a, T b) const { return em::fn(a, b); }          \
  };
EMBER_SHARED_BINARY_KERNELS(SHARED_FN)
#undef SHARED_FN
#define CMP_FN(Name, op)                                              \
  template <class T> struct Name {                                    \
    static constexpr int mask = kAll;                                 \
    __device__ bool operator()(T a, T b) const { return a op b; }     \
  };
CMP_FN(Eq, ==)
CMP_FN(Ne, !=)
CMP_FN(Lt, <)
CMP_FN(Le, <=)
CMP_FN(Gt, >)
CMP_FN(Ge, >=)
#undef CMP_FN
// fmax/fmin ignore NaN (maximum/minimum, above, propagate it)
template <class T> struct Fmax {
  static constexpr int mask = kAll;
  __device__ T operator()(T a, T b) const { if constexpr (is_fp<T>) return ::fmax(a, b); else return a > b ? a : b; }
};
template <class T> struct Fmin {
  static constexpr int mask = kAll;
  __device__ T operator()(T a, T b) const { if constexpr (is_fp<T>) return ::fmin(a, b); else return a < b ? a : b; }
};
template <class T> struct Pow {
  static constexpr int mask = kNumeric;
  __device__ T operator()(T base, T exp) const {
    if constexpr (is_fp<T>) return ::pow(base, exp);
    else return em::integer_pow(base, exp);
  }
};
template <class T> struct Atan2 {
  static constexpr int mask = kFloats;
  __device__ T operator()(T a, T b) const { return ::atan2(a, b); }
};
template <class T> struct Copysign {
  static constexpr int mask = kFloats;
  __device__ T operator()(T a, T b) const { return ::copysign(a, b); }
};
template <class T> struct Hypot {
  static constexpr int mask = kFloats;
  __device__ T operator()(T a, T b) const { return ::hypot(a, b); }
};
template <class T> struct Nextafter {
  static constexpr int mask = kFloats;
  __device__ T operator()(T a, T b) const { return ::nextafter(a, b); }
};
// two-argument special functions (kernels/special_functions.h, shared with the CPU), in double
#define SPECIAL_FN2(Name, fn)                                                                     \
  template <class T> struct Name {                                                                \
    static constexpr int mask = kFloats;                                                          \
    __device__ T operator()(T a, T b) const { return T(special_fn::fn(double(a), double(b))); }   \
  };
SPECIAL_FN2(Xlogy, xlogy)
SPECIAL_FN2(Xlog1py, xlog1py)
SPECIAL_FN2(Zeta, zeta)
#undef SPECIAL_FN2
// P_n(x): the degree arrives in the floating compute dtype and is truncated, as PyTorch does
#define POLYNOMIAL_FN(Name, fn)                                                                    \
  template <class T> struct Name {                                                                 \
    static constexpr int mask = kFloats;                                                           \
    __device__ T operator()(T x, T n) const {                                                      \
      return T(special_fn::fn(double(x), special_fn::polynomial_degree(double(n))));               \
    }                                                                                              \
  };
EMBER_ORTHOGONAL_POLYNOMIALS(POLYNOMIAL_FN)
#undef POLYNOMIAL_FN
template <class T> struct BitwiseAnd { static constexpr int mask = kIntegral; __device__ T operator()(T a, T b) const { return T(a & b); } };
template <class T> struct BitwiseOr { static constexpr int mask = kIntegral; __device__ T operator()(T a, T b) const { return T(a | b); } };
template <class T> struct BitwiseXor { static constexpr int mask = kIntegral; __device__ T operator()(T a, T b) const { return T(a ^ b); } };
template <class T> struct LogicalAnd { static constexpr int mask = kAll; __device__ bool operator()(T a, T b) const { return a && b; } };
template <class T> struct LogicalOr { static constexpr int mask = kAll; __device__ bool operator()(T a, T b) const { return a || b; } };
template <class T> struct LogicalXor { static constexpr int mask = kAll; __device__ bool operator()(T a, T b) const { return bool(a) != bool(b); } };

// ---- ternary
template <class T> struct ClampOp {
  bool has_lo, has_hi;
  __device__ T operator()(T x, T lo, T hi) const { return em::clamp(x, lo, hi, has_lo, has_hi); }
};
template <class T> struct LerpOp {
  __device__ T operator()(T s, T e, T w) const { return em::lerp(s, e, w); }
};
template <class T> struct WhereOp {
  __device__ T operator()(bool c, T x, T y) const { return c ? x : y; }
};

template <template <class> class F>
Status run_binary(const Iter& it, const Args& a, void* stream) {
  return dispatch<F<float>::mask>(it.dtype[1], [&](auto tag) {
    using T = decltype(tag);
    auto f = make_functor<F<T>>(a);
    using R = decltype(f(T(), T()));
    return binary_loop<R, T>(it, stream, f);
  });
}

}  // namespace

Status unary(int kernel, const Iter& it, const Args& a, void* stream) {
  switch (UnaryKernel(kernel)) {
#define EMBER_CASE(F) case UnaryKernel::F: return run_unary<F>(it, a, stream);
    EMBER_CASE(Abs) EMBER_CASE(Acos) EMBER_CASE(Acosh) EMBER_CASE(Angle) EMBER_CASE(Asin) EMBER_CASE(Asinh)
    EMBER_CASE(Atan) EMBER_CASE(Atanh) EMBER_CASE(BesselJ0) EMBER_CASE(BesselJ1) EMBER_CASE(BesselY0)
    EMBER_CASE(BesselY1) EMBER_CASE(BitwiseNot) EMBER_CASE(Ceil) EMBER_CASE(Conj) EMBER_CASE(Cos) EMBER_CASE(Cosh)
    EMBER_CASE(Digamma) EMBER_CASE(Entr) EMBER_CASE(Erf) EMBER_CASE(Erfc) EMBER_CASE(Erfcx) EMBER_CASE(Erfinv) EMBER_CASE(Exp)
    EMBER_CASE(Exp2) EMBER_CASE(Expm1) EMBER_CASE(Floor) EMBER_CASE(Frac) EMBER_CASE(I0) EMBER_CASE(I0e)
    EMBER_CASE(I1) EMBER_CASE(I1e) EMBER_CASE(IsFinite) EMBER_CASE(IsInf) EMBER_CASE(IsNan) EMBER_CASE(IsNegInf)
    EMBER_CASE(IsPosInf) EMBER_CASE(Lgamma) EMBER_CASE(Log) EMBER_CASE(Log10) EMBER_CASE(Log1p) EMBER_CASE(Log2)
    EMBER_CASE(LogNdtr) EMBER_CASE(LogicalNot) EMBER_CASE(Logit) EMBER_CASE(NanToNum) EMBER_CASE(Ndtri) EMBER_CASE(Neg)
    EMBER_CASE(Polygamma) EMBER_CASE(SphericalJ0)
    EMBER_CASE(Reciprocal) EMBER_CASE(Relu) EMBER_CASE(Round) EMBER_CASE(RoundDecimals) EMBER_CASE(Rsqrt)
    EMBER_CASE(Sgn) EMBER_CASE(Sigmoid) EMBER_CASE(Sign) EMBER_CASE(Signbit) EMBER_CASE(Sin) EMBER_CASE(Sinc)
    EMBER_CASE(Sinh) EMBER_CASE(Sqrt) EMBER_CASE(Square) EMBER_CASE(Tan) EMBER_CASE(Tanh) EMBER_CASE(Trunc)
#undef EMBER_CASE
    default:
      return kNoKernel;  // the modified Bessel K and Airy (Boost.Math on the CPU, no CUDA routine)
  }
}

Status binary(int kernel, const Iter& it, const Args& a, void* stream) {
  switch (BinaryKernel(kernel)) {
#define EMBER_CASE(F) case BinaryKernel::F: return run_binary<F>(it, a, stream);
    EMBER_CASE(Add) EMBER_CASE(Atan2) EMBER_CASE(BitwiseAnd) EMBER_CASE(BitwiseOr) EMBER_CASE(BitwiseXor)
    EMBER_CASE(Copysign) EMBER_CASE(Eq) EMBER_CASE(FloorDiv) EMBER_CASE(Fmax) EMBER_CASE(Fmin) EMBER_CASE(Fmod)
    EMBER_CASE(Gcd) EMBER_CASE(Ge) EMBER_CASE(Gt) EMBER_CASE(Heaviside) EMBER_CASE(Hypot) EMBER_CASE(Lcm)
    EMBER_CASE(Le) EMBER_CASE(LeftShift) EMBER_CASE(LogicalAnd) EMBER_CASE(LogicalOr) EMBER_CASE(LogicalXor)
    EMBER_CASE(Lt) EMBER_CASE(Maximum) EMBER_CASE(Minimum) EMBER_CASE(Mul) EMBER_CASE(Ne) EMBER_CASE(Nextafter)
    EMBER_CASE(Pow) EMBER_CASE(ReluGrad) EMBER_CASE(Remainder) EMBER_CASE(RightShift) EMBER_CASE(Sub)
    EMBER_CASE(TrueDiv) EMBER_CASE(TruncDiv) EMBER_CASE(Xlog1py) EMBER_CASE(Xlogy) EMBER_CASE(Zeta)
#define EMBER_POLYNOMIAL_CASE(F, fn) EMBER_CASE(F)
    EMBER_ORTHOGONAL_POLYNOMIALS(EMBER_POLYNOMIAL_CASE)
#undef EMBER_POLYNOMIAL_CASE
#undef EMBER_CASE
    default:
      return kNoKernel;  // igamma, igammac (Boost.Math on the CPU)
  }
}

// clamp(x, lo, hi), lerp(start, end, weight), where(cond, x, y): inputs already in the compute dtype.
Status ternary(int kernel, const Iter& it, const Args& a, void* stream) {
  switch (TernaryKernelCode(kernel)) {
    case kTernaryClamp:
      return dispatch<kAll>(it.dtype[1], [&](auto tag) {
        using T = decltype(tag);
        return ternary_loop<T, T, T, T>(it, stream, ClampOp<T>{a.b[0], a.b[1]});
      });
    case kTernaryLerp:
      return dispatch<kFloats>(it.dtype[1], [&](auto tag) {
        using T = decltype(tag);
        return ternary_loop<T, T, T, T>(it, stream, LerpOp<T>{});
      });
    case kTernaryWhere:
      return dispatch<kAll>(it.dtype[2], [&](auto tag) {
        using T = decltype(tag);
        return ternary_loop<T, bool, T, T>(it, stream, WhereOp<T>{});
      });
  }
  return kNoKernel;
}

}  // namespace ember::cuda_kernels
