#pragma once
// Two's-complement wrapping for integer kernels: PyTorch's integer add/sub/mul wrap on overflow, and
// doing it in the unsigned type keeps that defined behaviour (signed overflow is UB in C++). Compiled
// for the host and the GPU (the CUDA kernels include this header alone, with no other core header).
#include <type_traits>

#include "ember/core/macros.h"

namespace ember {

template <class T>
EMBER_HOST_DEVICE inline T wrapping_add(T a, T b) {
  if constexpr (std::is_integral_v<T> && std::is_signed_v<T>) {
    using U = std::make_unsigned_t<T>;
    return T(U(a) + U(b));
  } else {
    return a + b;
  }
}
template <class T>
EMBER_HOST_DEVICE inline T wrapping_sub(T a, T b) {
  if constexpr (std::is_integral_v<T> && std::is_signed_v<T>) {
    using U = std::make_unsigned_t<T>;
    return T(U(a) - U(b));
  } else {
    return a - b;
  }
}
template <class T>
EMBER_HOST_DEVICE inline T wrapping_mul(T a, T b) {
  if constexpr (std::is_integral_v<T> && std::is_signed_v<T>) {
    // uint8/uint16 would promote to (signed) int in U * U and could overflow it: widen to unsigned
    using U = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, std::make_unsigned_t<T>>;
    return T(U(std::make_unsigned_t<T>(a)) * U(std::make_unsigned_t<T>(b)));
  } else {
    return a * b;
  }
}
template <class T>
EMBER_HOST_DEVICE inline T wrapping_neg(T a) {
  if constexpr (std::is_integral_v<T> && std::is_signed_v<T>) {
    using U = std::make_unsigned_t<T>;
    return T(U(0) - U(a));
  } else {
    return -a;
  }
}

}  // namespace ember
