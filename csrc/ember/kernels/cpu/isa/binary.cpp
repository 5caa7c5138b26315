// Binary and ternary elementwise kernels. Integer division by zero raises ZeroDivisionError
// (a RuntimeError), as PyTorch's CPU kernels do. Integer add/sub/mul/pow wrap like PyTorch's, through
// the wrapping_* helpers (unsigned arithmetic: signed overflow is undefined behaviour in C++).
#include <cmath>
#include <limits>

#include "ember/core/checked_math.h"
#include "ember/core/complex_arith.h"
#include "ember/kernels/cpu/isa/loops.h"
#include "ember/kernels/cpu/special_math.h"
#include "ember/kernels/special_functions.h"

namespace ember::EMBER_CPU_NS {

template <class T> constexpr bool is_fp = std::is_floating_point_v<T>;
template <class T> constexpr bool is_b = std::is_same_v<T, bool>;

[[noreturn]] inline void zero_division() { EMBER_FAIL(Runtime, "ZeroDivisionError"); }

template <class T> struct Add {
  static constexpr int mask = kAll | kComplex;
  T alpha;
  explicit Add(const KernelArgs& a) : alpha(a.s0.to<T>()) {}
  T operator()(T x, T y) const {
    if constexpr (is_b<T>) return x || (alpha && y);
    else if constexpr (std::is_integral_v<T>) return wrapping_add(x, wrapping_mul(alpha, y));
    else if constexpr (is_cplx<T>) return x + textbook_mul(alpha, y);
    else return T(x + alpha * y);
  }
};
template <class T> struct Sub {
  static constexpr int mask = kNumeric | kComplex;
  T alpha;
  explicit Sub(const KernelArgs& a) : alpha(a.s0.to<T>()) {}
  T operator()(T x, T y) const {
    if constexpr (std::is_integral_v<T>) return wrapping_sub(x, wrapping_mul(alpha, y));
    else if constexpr (is_cplx<T>) return x - textbook_mul(alpha, y);
    else return T(x - alpha * y);
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
template <class T> struct TruncDiv {
  static constexpr int mask = kNumeric;
  T operator()(T x, T y) const {
    if constexpr (is_fp<T>) return std::trunc(x / y);
    else {
      if (y == 0) zero_division();
      if constexpr (std::is_signed_v<T>) if (y == -1) return wrapping_neg(x);  // avoids INT_MIN / -1 trap
      return T(x / y);
    }
  }
};
template <class T> struct FloorDiv {
  static constexpr int mask = kNumeric;
  T operator()(T a, T b) const {
    if constexpr (is_fp<T>) {
      if (b == 0) return a / b;
      T mod = std::fmod(a, b);
      T div = (a - mod) / b;
      if (mod != 0 && (b < 0) != (mod < 0)) div -= T(1);
      T floordiv;
      if (div != 0) {
        floordiv = std::floor(div);
        if (div - floordiv > T(0.5)) floordiv += T(1);
      } else {
        floordiv = std::copysign(T(0), a / b);
      }
      return floordiv;
    } else {
      if (b == 0) zero_division();
      if constexpr (std::is_signed_v<T>) {
        if (b == -1) return wrapping_neg(a);
        T q = T(a / b);
        if ((a % b != 0) && ((a < 0) != (b < 0))) q = T(q - 1);
        return q;
      } else {
        return T(a / b);
      }
    }
  }
};
template <class T> struct Remainder {
  static constexpr int mask = kNumeric;
  T operator()(T a, T b) const {
    if constexpr (is_fp<T>) {
      T mod = std::fmod(a, b);
      if (mod != 0 && (b < 0) != (mod < 0)) mod += b;
      return mod;
    } else {
      if (b == 0) zero_division();
      if constexpr (std::is_signed_v<T>) {
        if (b == -1) return 0;
        T r = T(a % b);
        if (r != 0 && (r < 0) != (b < 0)) r = T(r + b);
        return r;
      } else {
        return T(a % b);
      }
    }
  }
};
template <class T> struct Fmod {
  static constexpr int mask = kNumeric;
  T operator()(T a, T b) const {
    if constexpr (is_fp<T>) return std::fmod(a, b);
    else {
      if (b == 0) zero_division();
      if constexpr (std::is_signed_v<T>) if (b == -1) return 0;
      return T(a % b);
    }
  }
};
template <class T> struct Pow {
  static constexpr int mask = kNumeric | kComplex;
  T operator()(T base, T exp) const {
    if constexpr (is_cplx<T>) {
      if (exp == T(2)) return textbook_mul(base, base);  // exact for the common square, as PyTorch's
      return std::pow(base, exp);
    } else if constexpr (is_fp<T>) return std::pow(base, exp);
    else {
      // exponentiation by squaring; negative exponents follow PyTorch's integer rules
      if constexpr (std::is_signed_v<T>) {
        if (exp < 0) {
          if (base == 1) return 1;
          if (base == -1) return (exp & 1) ? T(-1) : T(1);
          return 0;
        }
      }
      T result = 1;
      while (exp) {
        if (exp & 1) result = wrapping_mul(result, base);
        exp = T(exp >> 1);
        base = wrapping_mul(base, base);
      }
      return result;
    }
  }
};
template <class T> struct Copysign {
  static constexpr int mask = kFloats;
  T operator()(T a, T b) const { return std::copysign(a, b); }
};
// 0 below zero, 1 above, `values` at zero (NaN compares false: 0)
template <class T> struct Heaviside {
  static constexpr int mask = kAll;
  T operator()(T x, T v) const {
    if constexpr (is_b<T>) return x ? true : v;
    else return x == T(0) ? v : T(x > T(0));
  }
};
template <class T> struct Gcd {
  static constexpr int mask = kInts;
  T operator()(T a, T b) const {
    // Euclid on magnitudes (unsigned, so INT_MIN's magnitude is representable)
    using U = std::make_unsigned_t<T>;
    U x = a < 0 ? U(0) - U(a) : U(a), y = b < 0 ? U(0) - U(b) : U(b);
    while (y != 0) { U r = U(x % y); x = y; y = r; }
    return T(x);
  }
};
// |a / gcd * b|, computed as PyTorch's: 8- and 16-bit operands in int (their product fits), then wrapped
template <class T> struct Lcm {
  static constexpr int mask = kInts;
  T operator()(T a, T b) const {
    T g = Gcd<T>()(a, b);
    if (g == 0) return T(0);
    if constexpr (sizeof(T) < 4) {
      int l = int(a / g) * int(b);
      return T(l < 0 ? -l : l);
    } else {
      T l = wrapping_mul(T(a / g), b);
      return l < 0 ? wrapping_neg(l) : l;
    }
  }
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
    T operator()(T x, T n) const { \
      if (std::isnan(n)) return n; \
      return T(special_math::fn(double(x), special_fn::polynomial_degree(double(n)))); \
    } \
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
template <class T> struct Minimum {
  static constexpr int mask = kAll;
  T operator()(T a, T b) const {
    if constexpr (is_fp<T>) return a != a ? a : (b != b ? b : (b < a ? b : a));
    else return b < a ? b : a;
  }
};
template <class T> struct Maximum {
  static constexpr int mask = kAll;
  T operator()(T a, T b) const {
    if constexpr (is_fp<T>) return a != a ? a : (b != b ? b : (a < b ? b : a));
    else return a < b ? b : a;
  }
};
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
template <class T> struct LogicalAnd { static constexpr int mask = kAll; bool operator()(T a, T b) const { return a && b; } };
template <class T> struct LogicalOr { static constexpr int mask = kAll; bool operator()(T a, T b) const { return a || b; } };
template <class T> struct LogicalXor {
  static constexpr int mask = kAll;
  bool operator()(T a, T b) const { return bool(a) != bool(b); }
};
template <class T> struct BitwiseAnd { static constexpr int mask = kIntegral; T operator()(T a, T b) const { return T(a & b); } };
template <class T> struct BitwiseOr { static constexpr int mask = kIntegral; T operator()(T a, T b) const { return T(a | b); } };
template <class T> struct BitwiseXor { static constexpr int mask = kIntegral; T operator()(T a, T b) const { return T(a ^ b); } };
template <class T> struct LeftShift {
  static constexpr int mask = kInts;
  T operator()(T a, T b) const {
    using U = std::make_unsigned_t<T>;
    if (b < 0 || b >= T(sizeof(T) * 8)) return 0;
    return T(U(a) << b);
  }
};
template <class T> struct RightShift {
  static constexpr int mask = kInts;
  T operator()(T a, T b) const {
    if (b < 0 || b >= T(sizeof(T) * 8)) {
      if constexpr (std::is_signed_v<T>) return a < 0 ? T(-1) : T(0);
      else return 0;
    }
    return T(a >> b);
  }
};

template <template <class> class F>
void run(TensorIter& it, const KernelArgs& a) {
  dispatch_compute<F<float>::mask>(it.dtype(1), a.name, [&](auto tag) {
    using T = decltype(tag);
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

// clamp(x, lo, hi), lerp(start, end, weight), where(cond, x, y): the iterator's inputs already
// have the compute dtype (cond is bool).
void ternary_kernel(TernaryKernel k, TensorIter& it, const KernelArgs& a) {
  switch (k) {
    case TernaryKernel::Clamp:
      dispatch_compute<kAll>(it.dtype(1), a.name, [&](auto tag) {
        using T = decltype(tag);
        const bool has_lo = a.s0.to_bool(), has_hi = a.s1.to_bool();
        ternary_loop<T, T, T, T>(it, [has_lo, has_hi](T x, T lo, T hi) {
          // min(max(x, lo), hi) with NaN propagating from any operand
          if constexpr (is_fp<T>) {
            if (x != x) return x;
            if (has_lo && lo != lo) return lo;
            if (has_hi && hi != hi) return hi;
          }
          if (has_lo && x < lo) x = lo;
          if (has_hi && x > hi) x = hi;
          return x;
        });
      });
      return;
    case TernaryKernel::Lerp:
      dispatch_compute<kFloats>(it.dtype(1), a.name, [&](auto tag) {
        using T = decltype(tag);
        ternary_loop<T, T, T, T>(it, [](T s, T e, T w) {
          return std::abs(w) < T(0.5) ? s + w * (e - s) : e - (e - s) * (T(1) - w);
        });
      });
      return;
    case TernaryKernel::Where:
      dispatch_compute<kAll | kComplex>(it.dtype(2), a.name, [&](auto tag) {
        using T = decltype(tag);
        ternary_loop<T, bool, T, T>(it, [](bool c, T x, T y) { return c ? x : y; });
      });
      return;
  }
}

}  // namespace ember::EMBER_CPU_NS
