#pragma once
// A Python number carried into C++: bool, integer, double or complex, remembering which.
#include <cmath>
#include <cstdint>

#include "ember/core/dtype.h"

namespace ember {

class Scalar {
 public:
  enum class Tag : uint8_t { Bool, Int, Double, Complex };
  Scalar() : Scalar(int64_t(0)) {}
  Scalar(double v) : tag_(Tag::Double) { v_.d = v; }
  Scalar(float v) : Scalar(double(v)) {}
  Scalar(int64_t v) : tag_(Tag::Int) { v_.i = v; }
  Scalar(int v) : Scalar(int64_t(v)) {}
  Scalar(long long v) : Scalar(int64_t(v)) {}
  Scalar(bool v) : tag_(Tag::Bool) { v_.i = v; }
  Scalar(std::complex<double> v) : tag_(Tag::Complex) { v_.d = v.real(); im_ = v.imag(); }
  Scalar(std::complex<float> v) : Scalar(std::complex<double>(v)) {}

  bool is_bool() const { return tag_ == Tag::Bool; }
  bool is_integral(bool include_bool) const { return tag_ == Tag::Int || (include_bool && tag_ == Tag::Bool); }
  bool is_floating() const { return tag_ == Tag::Double; }
  bool is_complex() const { return tag_ == Tag::Complex; }
  Tag tag() const { return tag_; }

  // A complex value reads as its real part here; callers that store into a real dtype check
  // fits_real() first (PyTorch refuses a nonzero imaginary part).
  double to_double() const { return is_fp() ? v_.d : double(v_.i); }
  int64_t to_long() const { return is_fp() ? int64_t(v_.d) : v_.i; }
  bool to_bool() const { return is_fp() ? (v_.d != 0 || (tag_ == Tag::Complex && im_ != 0)) : v_.i != 0; }
  double imag() const { return tag_ == Tag::Complex ? im_ : 0.0; }
  std::complex<double> to_complex() const { return {to_double(), imag()}; }
  template <class T> T to() const {
    if constexpr (std::is_same_v<T, bool>) return to_bool();
    else if constexpr (std::is_same_v<T, std::complex<float>>) return T(float(to_double()), float(imag()));
    else if constexpr (std::is_same_v<T, std::complex<double>>) return to_complex();
    else if constexpr (std::is_integral_v<T>) return is_fp() ? T(int64_t(v_.d)) : T(v_.i);
    else return T(float_value<T>());
  }
  // The dtype a wrapped Python number of this kind gets (float -> double, as PyTorch wraps it).
  ScalarType dtype() const {
    return tag_ == Tag::Double ? kDouble : tag_ == Tag::Int ? kLong : tag_ == Tag::Bool ? kBool : kComplexDouble;
  }

 private:
  template <class T> auto float_value() const {
    if constexpr (std::is_same_v<T, double>) return to_double();
    else return float(to_double());
  }
  bool is_fp() const { return tag_ == Tag::Double || tag_ == Tag::Complex; }
  union { double d; int64_t i; } v_;
  double im_ = 0.0;
  Tag tag_;
};

}  // namespace ember
