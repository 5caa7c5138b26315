#pragma once
// The dtype table. Every per-dtype switch in Ember expands EMBER_FORALL_DTYPES or
// switches over ScalarType without a default, so adding a dtype breaks the build where it must.
#include <complex>
#include <cstdint>
#include <string>

#include "ember/core/error.h"
#include "ember/core/half.h"

namespace ember {

// _(C++ type, enum name, python name, itemsize)
#define EMBER_FORALL_DTYPES(_)        \
  _(uint8_t, Byte, uint8, 1)          \
  _(int8_t, Char, int8, 1)            \
  _(int16_t, Short, int16, 2)         \
  _(int32_t, Int, int32, 4)           \
  _(int64_t, Long, int64, 8)          \
  _(::ember::Half, Half, float16, 2)  \
  _(float, Float, float32, 4)         \
  _(double, Double, float64, 8)       \
  _(bool, Bool, bool, 1)              \
  _(::ember::BFloat16, BFloat16, bfloat16, 2)

// The complex dtypes sit apart: a kernel opts into them (EMBER_DISPATCH_WITH_COMPLEX, or a functor's
// kComplex mask bit); everywhere else a complex tensor meets PyTorch's "not implemented for
// 'ComplexFloat'" instead of a template that makes no sense for it (ordering, floor, bit ops).
#define EMBER_FORALL_COMPLEX(_)                    \
  _(std::complex<float>, ComplexFloat, complex64, 8) \
  _(std::complex<double>, ComplexDouble, complex128, 16)
#define EMBER_FORALL_DTYPES_AND_COMPLEX(_) EMBER_FORALL_DTYPES(_) EMBER_FORALL_COMPLEX(_)

enum class ScalarType : int8_t {
#define EMBER_ENUM(T, N, P, S) N,
  EMBER_FORALL_DTYPES_AND_COMPLEX(EMBER_ENUM)
#undef EMBER_ENUM
      Undefined,
};
constexpr int kNumDtypes = int(ScalarType::Undefined);

constexpr ScalarType kByte = ScalarType::Byte, kChar = ScalarType::Char, kShort = ScalarType::Short,
                     kInt = ScalarType::Int, kLong = ScalarType::Long, kHalf = ScalarType::Half,
                     kFloat = ScalarType::Float, kDouble = ScalarType::Double, kBool = ScalarType::Bool,
                     kBFloat16 = ScalarType::BFloat16, kComplexFloat = ScalarType::ComplexFloat,
                     kComplexDouble = ScalarType::ComplexDouble;

inline int64_t itemsize(ScalarType t) {
  switch (t) {
#define EMBER_CASE(T, N, P, S) \
  case ScalarType::N:          \
    return S;
    EMBER_FORALL_DTYPES_AND_COMPLEX(EMBER_CASE)
#undef EMBER_CASE
    case ScalarType::Undefined:
      break;
  }
  EMBER_FAIL(Runtime, "itemsize of an undefined dtype");
}

// "float32", as Python spells it (ember.float32)
const char* dtype_name(ScalarType t);
// "Float", as PyTorch's error messages spell it
const char* dtype_cname(ScalarType t);
std::ostream& operator<<(std::ostream& os, ScalarType t);

inline bool is_floating(ScalarType t) {
  return t == kFloat || t == kDouble || t == kHalf || t == kBFloat16;
}
inline bool is_integral(ScalarType t, bool include_bool) {
  return t == kByte || t == kChar || t == kShort || t == kInt || t == kLong || (include_bool && t == kBool);
}
inline bool is_signed(ScalarType t) { return t != kByte && t != kBool; }
inline bool is_reduced_float(ScalarType t) { return t == kHalf || t == kBFloat16; }
inline bool is_complex(ScalarType t) { return t == kComplexFloat || t == kComplexDouble; }
// the dtypes that can require gradients
inline bool is_differentiable_dtype(ScalarType t) { return is_floating(t) || is_complex(t); }
// complex64 -> float32, complex128 -> float64; real dtypes map to themselves.
inline ScalarType to_real_dtype(ScalarType t) {
  return t == kComplexFloat ? kFloat : t == kComplexDouble ? kDouble : t;
}
// float64 -> complex128, other floats -> complex64 (Ember has no complex32); complex maps to itself.
inline ScalarType to_complex_dtype(ScalarType t) {
  return t == kDouble || t == kComplexDouble ? kComplexDouble : kComplexFloat;
}

// PyTorch's promotion lattice for two dtypes (torch.promote_types).
ScalarType promote_types(ScalarType a, ScalarType b);

template <class T> struct DtypeOf;
#define EMBER_DTYPE_OF(T, N, P, S) \
  template <> struct DtypeOf<T> { static constexpr ScalarType value = ScalarType::N; };
EMBER_FORALL_DTYPES_AND_COMPLEX(EMBER_DTYPE_OF)
#undef EMBER_DTYPE_OF

// The default floating dtype (ember.get_default_dtype()).
ScalarType default_dtype();
void set_default_dtype(ScalarType t);

}  // namespace ember

// EMBER_DISPATCH_ALL(dtype, "op", [&](auto tag) { using T = decltype(tag); ... }) over every real
// dtype (complex ones raise NotImplementedError); EMBER_DISPATCH_WITH_COMPLEX adds the complex ones.
#define EMBER_DISPATCH_CASE(T, N, P, S) \
  case ::ember::ScalarType::N:          \
    return fn_(T{});
#define EMBER_DISPATCH_NO_CASE(T, N, P, S) case ::ember::ScalarType::N:
#define EMBER_DISPATCH_ALL(dtype, name, ...)                                                  \
  [&] {                                                                                       \
    auto&& fn_ = __VA_ARGS__;                                                                 \
    const ::ember::ScalarType dt_ = (dtype);                                                  \
    switch (dt_) {                                                                            \
      EMBER_FORALL_DTYPES(EMBER_DISPATCH_CASE)                                                \
      EMBER_FORALL_COMPLEX(EMBER_DISPATCH_NO_CASE)                                            \
      EMBER_FAIL(NotImplemented, "\"", name, "\" not implemented for '", dt_, "'");            \
      case ::ember::ScalarType::Undefined:                                                    \
        break;                                                                                \
    }                                                                                         \
    EMBER_FAIL(Runtime, "\"", name, "\" not implemented for an undefined dtype");             \
  }()
#define EMBER_DISPATCH_WITH_COMPLEX(dtype, name, ...)                             \
  [&] {                                                                           \
    auto&& fn_ = __VA_ARGS__;                                                     \
    switch (dtype) {                                                              \
      EMBER_FORALL_DTYPES_AND_COMPLEX(EMBER_DISPATCH_CASE)                        \
      case ::ember::ScalarType::Undefined:                                        \
        break;                                                                    \
    }                                                                             \
    EMBER_FAIL(Runtime, "\"", name, "\" not implemented for an undefined dtype"); \
  }()
