#pragma once
// C++ arithmetic operators on ember::Tensor (t * 2, a + b, -t), recorded by autograd like the
// named ops they call.
#include "ember/generated/ops.h"

namespace ember {

inline Tensor operator+(const Tensor& a, const Tensor& b) { return ember::add(a, b); }
inline Tensor operator-(const Tensor& a, const Tensor& b) { return ember::sub(a, b); }
inline Tensor operator*(const Tensor& a, const Tensor& b) { return ember::mul(a, b); }
inline Tensor operator/(const Tensor& a, const Tensor& b) { return ember::div(a, b); }
inline Tensor operator+(const Tensor& a, const Scalar& b) { return ember::add(a, scalar_to_tensor(b)); }
inline Tensor operator-(const Tensor& a, const Scalar& b) { return ember::sub(a, scalar_to_tensor(b)); }
inline Tensor operator*(const Tensor& a, const Scalar& b) { return ember::mul(a, scalar_to_tensor(b)); }
inline Tensor operator/(const Tensor& a, const Scalar& b) { return ember::div(a, scalar_to_tensor(b)); }
inline Tensor operator+(const Scalar& a, const Tensor& b) { return ember::add(scalar_to_tensor(a), b); }
inline Tensor operator-(const Scalar& a, const Tensor& b) { return ember::sub(scalar_to_tensor(a), b); }
inline Tensor operator*(const Scalar& a, const Tensor& b) { return ember::mul(scalar_to_tensor(a), b); }
inline Tensor operator/(const Scalar& a, const Tensor& b) { return ember::div(scalar_to_tensor(a), b); }
inline Tensor operator-(const Tensor& a) { return ember::neg(a); }
inline Tensor operator==(const Tensor& a, const Scalar& b) { return ember::eq(a, scalar_to_tensor(b)); }
inline Tensor operator>(const Tensor& a, const Scalar& b) { return ember::gt(a, scalar_to_tensor(b)); }
inline Tensor operator<(const Tensor& a, const Scalar& b) { return ember::lt(a, scalar_to_tensor(b)); }

}  // namespace ember
