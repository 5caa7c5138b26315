// bfloat16 matrix products through oneDNN's matmul primitive: bfloat16 operands, float32
// accumulation, one rounding of the result (what PyTorch's CPU bfloat16 GEMM does). The CPU's mm
// entry (kernels/cpu/blas.cpp) uses it for autocast's bfloat16 matmuls, linears and convolutions
// lowered to GEMM; without oneDNN (or with EMBER_DISABLE_ONEDNN=1) it computes through float32.
#pragma once

#include "ember/core/tensor.h"

namespace ember::onednn {

// c [M, N] (contiguous, bfloat16) = a [M, K] @ b [K, N] (bfloat16, any positive strides), M, N, K > 0.
// False when oneDNN cannot run it (not built in, disabled, a zero stride); c is then untouched.
bool matmul_bf16(const Tensor& c, const Tensor& a, const Tensor& b);

}  // namespace ember::onednn
