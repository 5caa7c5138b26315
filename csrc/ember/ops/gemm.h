#pragma once
// The BLAS GEMM entry shared by matmul and addmm (ops/linalg.cpp).
#include "ember/core/tensor.h"

namespace ember::native {

// c (contiguous [M, N]) = alpha * a [M, K] @ b [K, N] + beta * c, any BLAS-readable layout of a and
// b; false (nothing done) unless the dtype is float or double.
bool gemm_into(const Tensor& a, const Tensor& b, const Tensor& c, double alpha, double beta);

// c [M, N] (row stride ldc) = a [M, K] @ b [K, N] + beta * c on raw row-major float / double buffers;
// runs on the calling thread when called inside a parallel region.
void gemm_nn(ScalarType dt, int64_t M, int64_t N, int64_t K, const void* a, int64_t lda, const void* b, int64_t ldb,
             double beta, void* c, int64_t ldc);

}  // namespace ember::native
