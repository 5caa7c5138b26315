#pragma once
// The GEMM shared by matmul, addmm (ops/blas.cpp) and the LSTM backward (ops/nn_rnn.cpp).
#include "ember/core/tensor.h"
#include "ember/kernels/cpu/blas.h"

namespace ember::native {

// c (contiguous [M, N]) = alpha * a [M, K] @ b [K, N] + beta * c on c's device (gemm_stub), any
// strides of a and b; false (nothing done) unless the dtype is float or double.
bool gemm_into(const Tensor& a, const Tensor& b, const Tensor& c, double alpha, double beta);

// The CPU's raw-buffer GEMM (kernels/cpu/blas.h), still reached here by kernels/cpu/isa/rnn.cpp.
using ::ember::cpu::gemm_nn;

}  // namespace ember::native
