// Binary and ternary elementwise kernels. Integer division by zero raises ZeroDivisionError
// (a RuntimeError), as PyTorch's CPU kernels do. Integer add/sub/mul/pow wrap like PyTorch's, through
// the wrapping_* helpers (unsigned arithmetic: signed overflow is undefined behaviour in C++).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "ember/core/checked_math.h"
#include "ember/core/complex_arith.h"
#include "ember/kernels/cpu/isa/loops.h"
#include "ember/kernels/cpu/isa/reduced_float.h"
#include "ember/kernels/cpu/isa/vec_math.h"
#include "ember/kernels/cpu/special_math.h"
#include "ember/kernels/elementwise_math.h"
#include "ember/kernels/special_functions.h"

namespace ember::EMBER_CPU_NS {

template <class T> constexpr bool is_fp = std::is_floating_point_v<T>;
template <class T> constexpr bool is_b = std::is_same_v<T, bool>;

namespace em = ::ember::elementwise_math;  // the scalar semantics shared with the GPU

// a * b + c as PyTorch's float kernels compute it: one fma where the build has FMA (exactly c + b when a
// is 1), two roundings in the baseline build (as PyTorch's baseline kernels)
template <class T>
inline T mul_add_like_torch(T a, T b, T c) {
#ifdef __FMA__
  return std::fma(a, b, c);
#else
  return a * b + c;
#endif
}

template <class T> struct Add {
  static constexpr int mask = kAll | kComplex;
  T alpha;
  explicit Add(const KernelArgs& a) : alpha(a.s0.to<T>()) {}
  T operator()(T x, T y) const {
    if constexpr (is_b<T>) return x || (alpha && y);
    else if constexpr (std::is_integral_v<T>) return wrapping_add(x, wrapping_mul(alpha, y));
    else if constexpr (is_cplx<T>) return x + textbook_mul(alpha, y);
    else return mul_add_like_torch(alpha, y, x);
  }
};
template <class T> struct Sub {
  static constexpr int mask = kNumeric | kComplex;
  T alpha;
  explicit Sub(const KernelArgs& a) : alpha(a.s0.to<T>()) {}
  T operator()(T x, T y) const {
    if constexpr (std::is_integral_v<T>) return wrapping_sub(x, wrapping_mul(alpha, y));
    else if constexpr (is_cplx<T>) return x - textbook_mul(alpha, y);
    else return mul_add_like_torch(-alpha, y, x);  // PyTorch's sub is add with -alpha
  }
};
template <class T> struct Mul {
  static constexpr int mask = kAll | kComplex;
  T operator()(T x, T y) const {
    if constexpr (is_cplx<T>) return textbook_mul(x, y);
    else if constexpr (is_b<T>) return x && y;
    else if constexpr (std::is_integral_v<T>) return wrapping_mul(x, y);
    else return T(x * y);
  }
};
// relu's backward in one pass: the gradient where the output is positive
template <class T> struct ReluGrad {
  static constexpr int mask = kFloats;
  T operator()(T g, T r) const { return r > T(0) ? g : T(0); }
};
template <class T> struct TrueDiv {
  static constexpr int mask = kFloats | kComplex;
  T operator()(T x, T y) const { if constexpr (is_cplx<T>) return smith_div(x, y); else return x / y; }
};
// the kernels whose scalar rules kernels/elementwise_math.h holds for both devices
#define SHARED_FN(Name, dtype_mask, fn)                                     \
  template <class T> struct Name {                                          \
    static constexpr int mask = dtype_mask;                                 \
    T operator()(T a, T b) const { return em::fn(a, b); }                   \
  };
EMBER_SHARED_BINARY_KERNELS(SHARED_FN)
#undef SHARED_FN
template <class T> struct Pow {
  static constexpr int mask = kNumeric | kComplex;
  T operator()(T base, T exp) const {
    if constexpr (is_cplx<T>) {
      if (exp == T(2)) return textbook_mul(base, base);  // exact for the common square, as PyTorch's
      return std::pow(base, exp);
    } else if constexpr (is_fp<T>) {
      return std::pow(base, exp);
    } else {
      return em::integer_pow(base, exp);
    }
  }
};
template <class T> struct Copysign {
  static constexpr int mask = kFloats;
  T operator()(T a, T b) const { return std::copysign(a, b); }
};
template <class T> struct Nextafter {
  static constexpr int mask = kFloats;
  T operator()(T a, T b) const { return std::nextafter(a, b); }
};

// Special functions of two arguments (kernels/cpu/special_math.cpp)
#define SPECIAL_FN2(Name, fn) \
  template <class T> struct Name { \
    static constexpr int mask = kFloats; \
    T operator()(T a, T b) const { return T(special_math::fn(double(a), double(b))); } \
  };
SPECIAL_FN2(Xlogy, xlogy)
SPECIAL_FN2(Xlog1py, xlog1py)
SPECIAL_FN2(Igamma, igamma)
SPECIAL_FN2(Igammac, igammac)
SPECIAL_FN2(Zeta, zeta)
#undef SPECIAL_FN2
// P_n(x): the degree arrives in the floating compute dtype and is truncated, as PyTorch does
#define POLYNOMIAL_FN(Name, fn) \
  template <class T> struct Name { \
    static constexpr int mask = kFloats; \
    T operator()(T x, T n) const { return T(special_math::fn(double(x), special_fn::polynomial_degree(double(n)))); } \
  };
EMBER_ORTHOGONAL_POLYNOMIALS(POLYNOMIAL_FN)
#undef POLYNOMIAL_FN

template <class T> struct Atan2 {
  static constexpr int mask = kFloats;
  T operator()(T a, T b) const { return std::atan2(a, b); }
};
template <class T> struct Hypot {
  static constexpr int mask = kFloats;
  T operator()(T a, T b) const { return std::hypot(a, b); }
};
// NaN propagates; on ties the first operand is returned (std::min/std::max), so signed zeros
// come out as in PyTorch: maximum(0., -0.) is 0., maximum(-0., 0.) is -0.
template <class T> struct Fmin {
  static constexpr int mask = kAll;
  T operator()(T a, T b) const { if constexpr (is_fp<T>) return std::fmin(a, b); else return a < b ? a : b; }
};
template <class T> struct Fmax {
  static constexpr int mask = kAll;
  T operator()(T a, T b) const { if constexpr (is_fp<T>) return std::fmax(a, b); else return a > b ? a : b; }
};
#define CMP(Name, op) \
  template <class T> struct Name { static constexpr int mask = kAll; bool operator()(T a, T b) const { return a op b; } };
// equality is defined for complex numbers, ordering is not
template <class T> struct Eq { static constexpr int mask = kAll | kComplex; bool operator()(T a, T b) const { return a == b; } };
template <class T> struct Ne { static constexpr int mask = kAll | kComplex; bool operator()(T a, T b) const { return a != b; } };
CMP(Lt, <) CMP(Le, <=) CMP(Gt, >) CMP(Ge, >=)
#undef CMP
template <class T> struct LogicalAnd {
  static constexpr int mask = kAll | kComplex;
  bool operator()(T a, T b) const { return truth(a) && truth(b); }
};
template <class T> struct LogicalOr {
  static constexpr int mask = kAll | kComplex;
  bool operator()(T a, T b) const { return truth(a) || truth(b); }
};
template <class T> struct LogicalXor {
  static constexpr int mask = kAll | kComplex;
  bool operator()(T a, T b) const { return truth(a) != truth(b); }
};
template <class T> struct BitwiseAnd { static constexpr int mask = kIntegral; T operator()(T a, T b) const { return T(a & b); } };
template <class T> struct BitwiseOr { static constexpr int mask = kIntegral; T operator()(T a, T b) const { return T(a | b); } };
template <class T> struct BitwiseXor { static constexpr int mask = kIntegral; T operator()(T a, T b) const { return T(a ^ b); } };

#ifdef EMBER_HAVE_VEC_MATH
// fmod, remainder and floor_divide of float/double: libm's scalar fmod walks the exponent difference
// bit by bit (~20 ns an element), so the inner loops take SLEEF's vector fmod in blocks of 256 and
// finish each element with the shared scalar rules. Operands contiguous or broadcast (x % 2.0).
template <template <class> class F, class T>
bool try_vec_fmod_family(TensorIter& it) {
  constexpr bool family = std::is_same_v<F<T>, Fmod<T>> || std::is_same_v<F<T>, Remainder<T>> ||
                          std::is_same_v<F<T>, FloorDiv<T>>;
  if constexpr (!family || !(std::is_same_v<T, float> || std::is_same_v<T, double>)) {
    return false;
  } else {
    if (it.ntensors() != 3 || it.dtype(0) != it.dtype(1) || it.dtype(1) != it.dtype(2)) return false;
    it.for_each([&](char** d, const int64_t* s, int64_t n) {
      const int64_t w = int64_t(sizeof(T));
      if (s[0] != w || (s[1] != w && s[1] != 0) || (s[2] != w && s[2] != 0)) {
        F<T> f;
        for (int64_t i = 0; i < n; i++)
          *reinterpret_cast<T*>(d[0] + i * s[0]) =
              f(*reinterpret_cast<const T*>(d[1] + i * s[1]), *reinterpret_cast<const T*>(d[2] + i * s[2]));
        return;
      }
      constexpr int64_t kBlock = 256;
      T mod[kBlock], res[kBlock], abuf[kBlock], bbuf[kBlock];
      T* o = reinterpret_cast<T*>(d[0]);
      for (int64_t i0 = 0; i0 < n; i0 += kBlock) {
        const int64_t m = std::min(kBlock, n - i0);
        const T* a = s[1] ? reinterpret_cast<const T*>(d[1]) + i0 : abuf;
        const T* b = s[2] ? reinterpret_cast<const T*>(d[2]) + i0 : bbuf;
        if (!s[1]) std::fill(abuf, abuf + m, *reinterpret_cast<const T*>(d[1]));
        if (!s[2]) std::fill(bbuf, bbuf + m, *reinterpret_cast<const T*>(d[2]));
        fmod_array(a, b, mod, m);
        // SLEEF's fmod flushes a subnormal divisor (NaN where libm is exact, fmod(1, 5e-324) = 0): those
        // elements take libm's, so a value never depends on its position in the vector loop
        // (a NaN is rare: one vectorizable pass looks for any before the per-element check runs)
        int nans = 0;
        for (int64_t j = 0; j < m; j++) nans += mod[j] != mod[j];
        if (nans)
          for (int64_t j = 0; j < m; j++)
            if (mod[j] != mod[j] && std::isfinite(a[j]) && std::isfinite(b[j]) && b[j] != 0) mod[j] = std::fmod(a[j], b[j]);
        if constexpr (std::is_same_v<F<T>, Fmod<T>>) {
          std::copy(mod, mod + m, o + i0);
        } else {
          // into a local block first: no aliasing with the inputs, so the loop vectorizes
          for (int64_t j = 0; j < m; j++) {
            if constexpr (std::is_same_v<F<T>, Remainder<T>>) res[j] = em::remainder_from_mod(b[j], mod[j]);
            else res[j] = em::floor_divide_from_mod(a[j], b[j], mod[j]);
          }
          std::copy(res, res + m, o + i0);
        }
      }
    });
    return true;
  }
}
#endif

template <template <class> class F>
void run(TensorIter& it, const KernelArgs& a) {
  if (is_reduced_float(it.compute_dtype())) {  // half/bfloat16: the float functor over widened blocks
    if constexpr ((F<float>::mask & bit(kFloat)) == 0) {
      EMBER_FAIL(NotImplemented, "\"", a.name, "\" not implemented for '", it.compute_dtype(), "'");
    } else {
      const ScalarType dt = it.compute_dtype();
      auto f = make_functor<F<float>>(a);
      // the arithmetic four widen a register at a time (the same float expressions as their functors)
      if constexpr (std::is_same_v<F<float>, Add<float>> || std::is_same_v<F<float>, Sub<float>>) {
        // PyTorch's alpha is a value of the dtype; sub is add with -alpha; PyTorch's scalar code rounds
        // alpha * b to the dtype before the sum
        const float alpha = round_to_reduced(dt, std::is_same_v<F<float>, Sub<float>> ? -f.alpha : f.alpha);
        return fused_reduced_binary(
            it, [alpha](auto x, auto y) { return mul_add(alpha, y, x); },
            [alpha, dt](float x, float y) { return x + round_to_reduced(dt, alpha * y); });
      } else if constexpr (std::is_same_v<F<float>, Mul<float>>) {
        auto mul = [](auto x, auto y) { return x * y; };
        return fused_reduced_binary(it, mul, mul);
      } else if constexpr (std::is_same_v<F<float>, TrueDiv<float>>) {
        auto div = [](auto x, auto y) { return x / y; };
        return fused_reduced_binary(it, div, div);
      }
      if constexpr (std::is_same_v<F<float>, Nextafter<float>>) {  // the neighbour among 16-bit values
        return reduced_float_map<2>(it, [dt](float x, float y) { return next_reduced(dt, x, y); });
      }
      // PyTorch's floor and trunc division of half/bfloat16 tensors round every step of the computation to
      // the dtype (by a single value, which arrives unrounded as float, they compute in float)
      if constexpr (std::is_same_v<F<float>, FloorDiv<float>> || std::is_same_v<F<float>, TruncDiv<float>>) {
        if (it.dtype(2) != kFloat) {
          return reduced_float_map<2>(it, [dt](float x, float y) {
            auto rd = [dt](float v) { return round_to_reduced(dt, v); };
            if constexpr (std::is_same_v<F<float>, TruncDiv<float>>) return std::trunc(rd(x / y));
            else return em::floor_divide_from_mod(x, y, y == 0 ? 0.f : std::fmod(x, y), rd);
          });
        }
      }
      reduced_float_map<2>(it, f);
    }
    return;
  }
  dispatch_compute<F<float>::mask>(it.dtype(1), a.name, [&](auto tag) {
    using T = decltype(tag);
#ifdef EMBER_HAVE_VEC_MATH
    if (try_vec_fmod_family<F, T>(it)) return;
#endif
    auto f = make_functor<F<T>>(a);
    using R = decltype(f(T(), T()));
    binary_loop<R, T>(it, f);
  });
}

void binary_kernel(BinaryKernel k, TensorIter& it, const KernelArgs& a) {
  switch (k) {
#define EMBER_CASE(F)    \
  case BinaryKernel::F:  \
    run<F>(it, a);       \
    return;
    EMBER_BINARY_KERNELS(EMBER_CASE)
#undef EMBER_CASE
  }
}

// where(cond, x, y) on the bit patterns of the values' width (U): a branch would mispredict half the
// time on a random mask; a mask made from the condition byte vectorizes (GCC does not vectorize the
// same select written over bool) and moves the values' bits, NaN payloads included, as they are.
template <class U>
void where_bits_loop(const TensorIter& it) {
  auto sel = [](uint8_t c, U x, U y) {
    const U m = U(U(0) - U(c));
    return U((x & m) | (y & U(~m)));
  };
  it.for_each([&](char** d, const int64_t* s, int64_t n) {
    constexpr int64_t w = sizeof(U);
    U* o = reinterpret_cast<U*>(d[0]);
    const uint8_t* c = reinterpret_cast<const uint8_t*>(d[1]);  // bool: 0 or 1
    const U* x = reinterpret_cast<const U*>(d[2]);
    const U* y = reinterpret_cast<const U*>(d[3]);
    if (s[0] == w && s[1] == 1 && s[2] == w && s[3] == w) {
      for (int64_t i = 0; i < n; i++) o[i] = sel(c[i], x[i], y[i]);
    } else if (s[0] == w && s[1] == 1 && s[2] == 0 && s[3] == w) {  // masked_fill: a scalar x
      const U xv = *x;
      for (int64_t i = 0; i < n; i++) o[i] = sel(c[i], xv, y[i]);
    } else if (s[0] == w && s[1] == 1 && s[2] == w && s[3] == 0) {
      const U yv = *y;
      for (int64_t i = 0; i < n; i++) o[i] = sel(c[i], x[i], yv);
    } else {
      for (int64_t i = 0; i < n; i++)
        *reinterpret_cast<U*>(d[0] + i * s[0]) = sel(*reinterpret_cast<const uint8_t*>(d[1] + i * s[1]),
                                                     *reinterpret_cast<const U*>(d[2] + i * s[2]),
                                                     *reinterpret_cast<const U*>(d[3] + i * s[3]));
    }
  });
}

// clamp(x, lo, hi), lerp(start, end, weight), where(cond, x, y): the iterator's inputs already
// have the compute dtype (cond is bool).
void ternary_kernel(TernaryKernel k, TensorIter& it, const KernelArgs& a) {
  switch (k) {
    case TernaryKernel::Clamp:
      if (is_reduced_float(it.compute_dtype())) {
        const bool has_lo = a.s0.to_bool(), has_hi = a.s1.to_bool();
        reduced_float_map<3>(it, [has_lo, has_hi](float x, float lo, float hi) {
          return em::clamp(x, lo, hi, has_lo, has_hi);
        });
        return;
      }
      dispatch_compute<kAll>(it.dtype(1), a.name, [&](auto tag) {
        using T = decltype(tag);
        const bool has_lo = a.s0.to_bool(), has_hi = a.s1.to_bool();
        ternary_loop<T, T, T, T>(it,
                                 [has_lo, has_hi](T x, T lo, T hi) { return em::clamp(x, lo, hi, has_lo, has_hi); });
      });
      return;
    case TernaryKernel::Lerp:
      if (is_reduced_float(it.compute_dtype()))
        return reduced_float_map<3>(it, [](float s, float e, float w) { return em::lerp(s, e, w); });
      dispatch_compute<kFloats | kComplex>(it.dtype(1), a.name, [&](auto tag) {
        using T = decltype(tag);
        ternary_loop<T, T, T, T>(it, [](T s, T e, T w) {
          if constexpr (is_cplx<T>)  // from the nearer end by |w|, as torch's
            return std::abs(w) < typename T::value_type(0.5) ? s + w * (e - s) : e - (e - s) * (T(1) - w);
          else
            return em::lerp(s, e, w);
        });
      });
      return;
    case TernaryKernel::Where: {
      // any dtype, half/bfloat16 included: a select only moves values
      const ScalarType dt = it.dtype(2);
      if (dt == kComplexDouble) {
        ternary_loop<std::complex<double>, bool, std::complex<double>, std::complex<double>>(
            it, [](bool c, std::complex<double> x, std::complex<double> y) { return c ? x : y; });
        return;
      }
      switch (itemsize(dt)) {
        case 1: return where_bits_loop<uint8_t>(it);
        case 2: return where_bits_loop<uint16_t>(it);
        case 4: return where_bits_loop<uint32_t>(it);
        default: return where_bits_loop<uint64_t>(it);
      }
    }
  }
}

}  // namespace ember::EMBER_CPU_NS
