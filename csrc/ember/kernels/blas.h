#pragma once
// Matrix products. The ops (ops/linalg.cpp matmul, ops/blas.cpp addmm) check shapes and dtypes,
// handle empty sizes and allocate the result; a backend's entry multiplies with whatever library
// it picks (the CPU's: oneDNN's sgemm or OpenBLAS, kernels/cpu/blas.cpp).
#include "ember/core/tensor.h"
#include "ember/kernels/registry.h"

// c (contiguous [M, N]) = alpha * a [M, K] @ b [K, N] + beta * c for float and double; a and b of
// any strides, M, N, K > 0.
EMBER_DECLARE_STUB(gemm_stub, void, (const Tensor& c, const Tensor& a, const Tensor& b, double alpha, double beta))
// c (contiguous [M, N]) = a [M, K] @ b [K, N] in a's dtype (every dtype the backend multiplies).
EMBER_DECLARE_STUB(mm_stub, void, (const Tensor& c, const Tensor& a, const Tensor& b))
// c (contiguous [batch, M, N]) = a[i] @ b[i] for each i of the batch, a [batch, M, K], b [batch, K, N].
EMBER_DECLARE_STUB(bmm_stub, void, (const Tensor& c, const Tensor& a, const Tensor& b))
