#pragma once
// C++ arithmetic operators on ember::Tensor (t * 2, a + b, -t), recorded by autograd like the
// named ops they call.
#include <ostream>

#include "ember/core/tensor_indexing.h"
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

// Compound assignment writes into the left tensor (its in-place op), as libtorch's does.
inline Tensor& operator+=(Tensor& a, const Tensor& b) { a.add_(b); return a; }
inline Tensor& operator-=(Tensor& a, const Tensor& b) { a.sub_(b); return a; }
inline Tensor& operator*=(Tensor& a, const Tensor& b) { a.mul_(b); return a; }
inline Tensor& operator/=(Tensor& a, const Tensor& b) { a.div_(b); return a; }
inline Tensor& operator+=(Tensor& a, const Scalar& b) { a.add_(b); return a; }
inline Tensor& operator-=(Tensor& a, const Scalar& b) { a.sub_(b); return a; }
inline Tensor& operator*=(Tensor& a, const Scalar& b) { a.mul_(b); return a; }
inline Tensor& operator/=(Tensor& a, const Scalar& b) { a.div_(scalar_to_tensor(b)); return a; }

// Prints the values, then the type and shape as libtorch does: "[ CPUFloatType{2,3} ]"
// (core/tensor_print.cpp). An undefined tensor prints "[ Tensor (undefined) ]".
EMBER_API std::ostream& operator<<(std::ostream& os, const Tensor& t);

}  // namespace ember
