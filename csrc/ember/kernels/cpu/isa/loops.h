#pragma once
// Inner loops for elementwise kernels. Included only by kernels/cpu/isa/*.cpp, which are compiled
// once per ISA: the contiguous branches are plain indexed loops the compiler vectorizes.
#include <complex>
#include <type_traits>

#include "ember/kernels/kernels.h"

#ifndef EMBER_CPU_CAPABILITY
#define EMBER_CPU_CAPABILITY DEFAULT
#endif
#define EMBER_CAT2(a, b) a##b
#define EMBER_CAT(a, b) EMBER_CAT2(a, b)
#define EMBER_CPU_NS EMBER_CAT(cpu_, EMBER_CPU_CAPABILITY)

namespace ember::EMBER_CPU_NS {

// Dtype masks: which compute dtypes a functor supports.
constexpr int bit(ScalarType t) { return 1 << int(t); }
constexpr int kInts = bit(kByte) | bit(kChar) | bit(kShort) | bit(kInt) | bit(kLong);
constexpr int kFloats = bit(kFloat) | bit(kDouble);
constexpr int kNumeric = kInts | kFloats;
constexpr int kAll = kNumeric | bit(kBool);
constexpr int kIntegral = kInts | bit(kBool);
constexpr int kComplex = bit(kComplexFloat) | bit(kComplexDouble);

template <class T> struct is_complex_t : std::false_type {};
template <class T> struct is_complex_t<std::complex<T>> : std::true_type {};
template <class T> constexpr bool is_cplx = is_complex_t<T>::value;
// a value as a condition: nonzero (a complex number is true unless both parts are zero)
template <class T> inline bool truth(T x) {
  if constexpr (is_cplx<T>) return x != T(0);
  else return bool(x);
}

// sum of f(i) for i < n in L independent lanes: without -ffast-math a single accumulator is a
// serial dependency chain; lanes let the compiler vectorize (and change the rounding order like
// PyTorch's vectorized reductions do).
template <class Acc, int L = 16, class F>
inline Acc lane_sum(int64_t n, F f) {
  Acc acc[L] = {};
  int64_t i = 0;
  for (; i + L <= n; i += L)
    for (int j = 0; j < L; j++) acc[j] += f(i + j);
  Acc s = 0;
  for (; i < n; i++) s += f(i);
  for (int j = 0; j < L; j++) s += acc[j];
  return s;
}

template <class F>
F make_functor(const KernelArgs& a) {
  if constexpr (std::is_constructible_v<F, const KernelArgs&>) return F(a);
  else return F{};
}

// Calls fn(T{}) for the compute dtype if `mask` allows it, else raises PyTorch's error.
template <int mask, class Fn>
void dispatch_compute(ScalarType dt, const char* name, Fn&& fn) {
  switch (dt) {
#define EMBER_DC(T, N, P, S)                                 \
  case ScalarType::N:                                        \
    if constexpr ((mask & bit(ScalarType::N)) != 0) {        \
      fn(T{});                                               \
      return;                                                \
    }                                                        \
    break;
    EMBER_FORALL_DTYPES_AND_COMPLEX(EMBER_DC)
#undef EMBER_DC
    case ScalarType::Undefined:
      break;
  }
  EMBER_FAIL(NotImplemented, "\"", name, "\" not implemented for '", dt, "'");
}

template <class R, class A, class F>
void unary_loop(const TensorIter& it, const F& f) {
  it.for_each([&](char** d, const int64_t* s, int64_t n) {
    if (s[0] == sizeof(R) && s[1] == sizeof(A)) {
      R* o = reinterpret_cast<R*>(d[0]);
      const A* x = reinterpret_cast<const A*>(d[1]);
      for (int64_t i = 0; i < n; i++) o[i] = f(x[i]);
    } else {
      for (int64_t i = 0; i < n; i++)
        *reinterpret_cast<R*>(d[0] + i * s[0]) = f(*reinterpret_cast<const A*>(d[1] + i * s[1]));
    }
  });
}

template <class R, class A, class F>
void binary_loop(const TensorIter& it, const F& f) {
  it.for_each([&](char** d, const int64_t* s, int64_t n) {
    R* o = reinterpret_cast<R*>(d[0]);
    const A* x = reinterpret_cast<const A*>(d[1]);
    const A* y = reinterpret_cast<const A*>(d[2]);
    if (s[0] == sizeof(R) && s[1] == sizeof(A) && s[2] == sizeof(A)) {
      for (int64_t i = 0; i < n; i++) o[i] = f(x[i], y[i]);
    } else if (s[0] == sizeof(R) && s[1] == sizeof(A) && s[2] == 0) {
      const A b = *y;
      for (int64_t i = 0; i < n; i++) o[i] = f(x[i], b);
    } else if (s[0] == sizeof(R) && s[1] == 0 && s[2] == sizeof(A)) {
      const A a = *x;
      for (int64_t i = 0; i < n; i++) o[i] = f(a, y[i]);
    } else {
      for (int64_t i = 0; i < n; i++)
        *reinterpret_cast<R*>(d[0] + i * s[0]) =
            f(*reinterpret_cast<const A*>(d[1] + i * s[1]), *reinterpret_cast<const A*>(d[2] + i * s[2]));
    }
  });
}

template <class R, class A, class B, class C, class F>
void ternary_loop(const TensorIter& it, const F& f) {
  it.for_each([&](char** d, const int64_t* s, int64_t n) {
    if (s[0] == sizeof(R) && s[1] == sizeof(A) && s[2] == sizeof(B) && s[3] == sizeof(C)) {
      R* o = reinterpret_cast<R*>(d[0]);
      const A* x = reinterpret_cast<const A*>(d[1]);
      const B* y = reinterpret_cast<const B*>(d[2]);
      const C* z = reinterpret_cast<const C*>(d[3]);
      for (int64_t i = 0; i < n; i++) o[i] = f(x[i], y[i], z[i]);
    } else if (s[0] == sizeof(R) && s[1] == sizeof(A) && s[2] == 0 && s[3] == 0) {  // clamp(x, lo, hi)
      R* o = reinterpret_cast<R*>(d[0]);
      const A* x = reinterpret_cast<const A*>(d[1]);
      const B y = *reinterpret_cast<const B*>(d[2]);
      const C z = *reinterpret_cast<const C*>(d[3]);
      for (int64_t i = 0; i < n; i++) o[i] = f(x[i], y, z);
    } else {
      for (int64_t i = 0; i < n; i++)
        *reinterpret_cast<R*>(d[0] + i * s[0]) =
            f(*reinterpret_cast<const A*>(d[1] + i * s[1]), *reinterpret_cast<const B*>(d[2] + i * s[2]),
              *reinterpret_cast<const C*>(d[3] + i * s[3]));
    }
  });
}

}  // namespace ember::EMBER_CPU_NS
