#include "ember/core/dtype.h"

#include <ostream>

namespace ember {

const char* dtype_name(ScalarType t) {
  switch (t) {
#define EMBER_CASE(T, N, P, S) \
  case ScalarType::N:          \
    return #P;
    EMBER_FORALL_DTYPES_AND_COMPLEX(EMBER_CASE)
#undef EMBER_CASE
    case ScalarType::Undefined:
      break;
  }
  return "undefined";
}

const char* dtype_cname(ScalarType t) {
  switch (t) {
#define EMBER_CASE(T, N, P, S) \
  case ScalarType::N:          \
    return #N;
    EMBER_FORALL_DTYPES_AND_COMPLEX(EMBER_CASE)
#undef EMBER_CASE
    case ScalarType::Undefined:
      break;
  }
  return "Undefined";
}

std::ostream& operator<<(std::ostream& os, ScalarType t) { return os << dtype_cname(t); }

ScalarType promote_types(ScalarType a, ScalarType b) {
  if (a == b) return a;
  if (a == ScalarType::Undefined) return b;
  if (b == ScalarType::Undefined) return a;
  if (a == kBool) return b;
  if (b == kBool) return a;
  if (is_complex(a) || is_complex(b)) {  // the complex type wide enough for both value types
    ScalarType ra = to_real_dtype(a), rb = to_real_dtype(b);
    return (ra == kDouble || rb == kDouble) ? kComplexDouble : kComplexFloat;
  }
  bool fa = is_floating(a), fb = is_floating(b);
  if (fa && !fb) return a;
  if (fb && !fa) return b;
  if (fa && fb) {
    if (a == kDouble || b == kDouble) return kDouble;
    return kFloat;  // float32 with anything, and float16 with bfloat16
  }
  // both integral
  if (a == kByte || b == kByte) {
    ScalarType other = a == kByte ? b : a;
    return other == kChar ? kShort : other;
  }
  return itemsize(a) >= itemsize(b) ? a : b;
}

static ScalarType g_default_dtype = kFloat;
ScalarType default_dtype() { return g_default_dtype; }
void set_default_dtype(ScalarType t) {
  EMBER_CHECK_KIND(is_floating(t), Type, "only floating-point types are supported as the default type");
  g_default_dtype = t;
}

}  // namespace ember
