#pragma once
// The BLAS GEMM entry shared by matmul and addmm (ops/linalg.cpp).
#include "ember/core/tensor.h"

namespace ember::native {

// c (contiguous [M, N]) = alpha * a [M, K] @ b [K, N] + beta * c, any BLAS-readable layout of a and
// b; false (nothing done) unless the dtype is float or double.
bool gemm_into(const Tensor& a, const Tensor& b, const Tensor& c, double alpha, double beta);

}  // namespace ember::native
