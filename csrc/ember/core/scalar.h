#pragma once
// A Python number carried into C++: bool, integer or double, remembering which.
#include <cmath>
#include <cstdint>

#include "ember/core/dtype.h"

namespace ember {

class Scalar {
 public:
  enum class Tag : uint8_t { Bool, Int, Double };
  Scalar() : Scalar(int64_t(0)) {}
  Scalar(double v) : tag_(Tag::Double) { v_.d = v; }
  Scalar(float v) : Scalar(double(v)) {}
  Scalar(int64_t v) : tag_(Tag::Int) { v_.i = v; }
  Scalar(int v) : Scalar(int64_t(v)) {}
  Scalar(long long v) : Scalar(int64_t(v)) {}
  Scalar(bool v) : tag_(Tag::Bool) { v_.i = v; }

  bool is_bool() const { return tag_ == Tag::Bool; }
  bool is_integral(bool include_bool) const { return tag_ == Tag::Int || (include_bool && tag_ == Tag::Bool); }
  bool is_floating() const { return tag_ == Tag::Double; }
  Tag tag() const { return tag_; }

  double to_double() const { return tag_ == Tag::Double ? v_.d : double(v_.i); }
  int64_t to_long() const { return tag_ == Tag::Double ? int64_t(v_.d) : v_.i; }
  bool to_bool() const { return tag_ == Tag::Double ? v_.d != 0 : v_.i != 0; }
  template <class T> T to() const {
    if constexpr (std::is_same_v<T, bool>) return to_bool();
    else if constexpr (std::is_integral_v<T>) return tag_ == Tag::Double ? T(int64_t(v_.d)) : T(v_.i);
    else return T(float_value<T>());
  }
  // The dtype a wrapped Python number of this kind gets (float -> double, as PyTorch wraps it).
  ScalarType dtype() const { return tag_ == Tag::Double ? kDouble : tag_ == Tag::Int ? kLong : kBool; }

 private:
  template <class T> auto float_value() const {
    if constexpr (std::is_same_v<T, double>) return to_double();
    else return float(to_double());
  }
  union { double d; int64_t i; } v_;
  Tag tag_;
};

}  // namespace ember
