#pragma once
// The scalar arithmetic of the elementwise kernels whose semantics are PyTorch's own rather than the
// language's: floor and truncating division, remainder and fmod (Python's sign rules, INT_MIN / -1
// wrapping), integer powers, gcd/lcm, shifts, heaviside, NaN-propagating maximum/minimum. Written
// once for both devices: the CPU's kernels/cpu/isa/binary.cpp and the GPU's kernels/cuda/elementwise.cu
// wrap these in their functors (EMBER_HOST_DEVICE; nothing here nvcc would have to chew through).
// Integer division by zero raises ZeroDivisionError on the CPU, as PyTorch's CPU kernels do; a GPU
// kernel cannot raise, and gives 0 (PyTorch's CUDA kernels give an unspecified value).
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "ember/core/macros.h"
#include "ember/core/wrapping.h"

namespace ember::elementwise_math {

[[noreturn]] EMBER_API void raise_zero_division();  // RuntimeError "ZeroDivisionError" (host only)

EMBER_HOST_DEVICE inline void on_zero_division() {
#ifndef __CUDA_ARCH__
  raise_zero_division();
#endif
}

// Floating-point functions from std:: on the host (its float overloads) and CUDA's on the device.
#ifdef __CUDA_ARCH__
#define EMBER_FMATH(fn) ::fn
#else
#define EMBER_FMATH(fn) std::fn
#endif

template <class T>
EMBER_HOST_DEVICE inline T trunc_divide(T x, T y) {
  if constexpr (std::is_floating_point_v<T>) {
    return EMBER_FMATH(trunc)(x / y);
  } else {
    if (y == 0) {
      on_zero_division();
      return T(0);
    }
    if constexpr (std::is_signed_v<T>) if (y == -1) return wrapping_neg(x);  // avoids the INT_MIN / -1 trap
    return T(x / y);
  }
}

// floor(a / b) for floats from mod = fmod(a, b) (which a vector loop may have computed), as Python's //.
// Selects rather than branches, so a loop over it vectorizes (the signs of random data defeat branches).
// (rd rounds each step's result: the identity, or to half/bfloat16, where PyTorch computes in that dtype)
struct NoRounding {
  template <class T> EMBER_HOST_DEVICE T operator()(T v) const { return v; }
};
template <class T, class Round = NoRounding>
EMBER_HOST_DEVICE inline T floor_divide_from_mod(T a, T b, T mod, Round rd = {}) {
  // (adding a 0/1 converted from the condition, not a conditional add: the compiler may not
  // speculate an FP add, and so would not vectorize; fl + 0 cannot flip a zero's sign, zeros go below)
  const T q = rd(a / b);
  const T div = rd(rd(rd(a - mod) / b) - T((mod != 0) & ((b < 0) != (mod < 0))));
  const T fl = EMBER_FMATH(floor)(div);
  const T rounded = rd(fl + T(rd(div - fl) > T(0.5)));
  const T r = div == 0 ? EMBER_FMATH(copysign)(T(0), q) : rounded;
  return b == 0 ? q : r;
}

// Python's remainder for floats from mod = fmod(a, b): the sign of the divisor
template <class T>
EMBER_HOST_DEVICE inline T remainder_from_mod(T b, T mod) {
  return ((mod != 0) & ((b < 0) != (mod < 0))) ? mod + b : mod;  // (& not &&: no branch)
}

template <class T>
EMBER_HOST_DEVICE inline T floor_divide(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    return floor_divide_from_mod(a, b, b == 0 ? T(0) : EMBER_FMATH(fmod)(a, b));
  } else {
    if (b == 0) {
      on_zero_division();
      return T(0);
    }
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

// Python's remainder: the sign of the divisor
template <class T>
EMBER_HOST_DEVICE inline T remainder(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    return remainder_from_mod(b, EMBER_FMATH(fmod)(a, b));
  } else {
    if (b == 0) {
      on_zero_division();
      return T(0);
    }
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

// C's fmod: the sign of the dividend
template <class T>
EMBER_HOST_DEVICE inline T fmod(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    return EMBER_FMATH(fmod)(a, b);
  } else {
    if (b == 0) {
      on_zero_division();
      return T(0);
    }
    if constexpr (std::is_signed_v<T>) if (b == -1) return 0;
    return T(a % b);
  }
}

// base ** exp for integers: by squaring, wrapping; negative exponents follow PyTorch's integer rules
template <class T>
EMBER_HOST_DEVICE inline T integer_pow(T base, T exp) {
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

// Euclid on magnitudes (unsigned, so INT_MIN's magnitude is representable)
template <class T>
EMBER_HOST_DEVICE inline T gcd(T a, T b) {
  using U = std::make_unsigned_t<T>;
  U x = a < 0 ? U(0) - U(a) : U(a), y = b < 0 ? U(0) - U(b) : U(b);
  while (y != 0) {
    const U r = U(x % y);
    x = y;
    y = r;
  }
  return T(x);
}

// |a / gcd * b|, computed as PyTorch's: 8- and 16-bit operands in int (their product fits), then wrapped
template <class T>
EMBER_HOST_DEVICE inline T lcm(T a, T b) {
  const T g = gcd(a, b);
  if (g == 0) return T(0);
  if constexpr (sizeof(T) < 4) {
    const int l = int(a / g) * int(b);
    return T(l < 0 ? -l : l);
  } else {
    const T l = wrapping_mul(T(a / g), b);
    return l < 0 ? wrapping_neg(l) : l;
  }
}

// Shifts by a negative amount or by the width or more give 0 (or -1 for a negative signed value
// shifted right), as PyTorch's
template <class T>
EMBER_HOST_DEVICE inline T left_shift(T a, T b) {
  if (b < 0 || b >= T(sizeof(T) * 8)) return 0;
  using U = std::make_unsigned_t<T>;
  return T(U(a) << b);
}
template <class T>
EMBER_HOST_DEVICE inline T right_shift(T a, T b) {
  if (b < 0 || b >= T(sizeof(T) * 8)) {
    if constexpr (std::is_signed_v<T>) return a < 0 ? T(-1) : T(0);
    else return 0;
  }
  return T(a >> b);
}

// 0 below zero, 1 above, `values` at zero (NaN compares false: 0)
template <class T>
EMBER_HOST_DEVICE inline T heaviside(T x, T v) {
  if constexpr (std::is_same_v<T, bool>) return x ? true : v;
  else return x == T(0) ? v : T(x > T(0));
}

// NaN-propagating maximum/minimum; a tie (0 and -0) keeps the first operand
template <class T>
EMBER_HOST_DEVICE inline T maximum(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) return a != a ? a : (b != b ? b : (a < b ? b : a));
  else return a < b ? b : a;
}
template <class T>
EMBER_HOST_DEVICE inline T minimum(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) return a != a ? a : (b != b ? b : (b < a ? b : a));
  else return b < a ? b : a;
}

// clamp: min(max(x, lo), hi) with NaN propagating from any operand; a bound not given is skipped
// (selects, not early returns: the CPU loop vectorizes; a NaN x wins, then a NaN lo, then a NaN hi)
template <class T>
EMBER_HOST_DEVICE inline T clamp(T x, T lo, T hi, bool has_lo, bool has_hi) {
  T r = x;
  if (has_lo) r = r < lo ? lo : r;
  if (has_hi) r = r > hi ? hi : r;
  if constexpr (std::is_floating_point_v<T>) {
    if (has_hi) r = hi != hi ? hi : r;
    if (has_lo) r = lo != lo ? lo : r;
    r = x != x ? x : r;
  }
  return r;
}

// lerp: start + weight * (end - start), from the nearer end (exact at both ends), as PyTorch's
template <class T>
EMBER_HOST_DEVICE inline T lerp(T s, T e, T w) {
  return EMBER_FMATH(fabs)(w) < T(0.5) ? s + w * (e - s) : e - (e - s) * (T(1) - w);
}

#undef EMBER_FMATH

// The binary kernels that are exactly these functions (BinaryKernel name, dtype mask, function): each
// device's functor macro wraps them (kernels/cpu/isa/binary.cpp, kernels/cuda/elementwise.cu).
#define EMBER_SHARED_BINARY_KERNELS(X)                                                                  \
  X(TruncDiv, kNumeric, trunc_divide) X(FloorDiv, kNumeric, floor_divide) X(Remainder, kNumeric, remainder) \
  X(Fmod, kNumeric, fmod) X(Maximum, kAll, maximum) X(Minimum, kAll, minimum) X(Heaviside, kAll, heaviside) \
  X(Gcd, kInts, gcd) X(Lcm, kInts, lcm) X(LeftShift, kInts, left_shift) X(RightShift, kInts, right_shift)

}  // namespace ember::elementwise_math
