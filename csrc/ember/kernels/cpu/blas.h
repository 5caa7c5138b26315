#pragma once
// GEMM on raw row-major buffers for the CPU kernels that multiply inside their own loops (the fused
// LSTM layer, kernels/cpu/isa/rnn.cpp). Defined in kernels/cpu/blas.cpp.
#include <cstdint>

#include "ember/core/dtype.h"

namespace ember::cpu {

// c [M, N] (row stride ldc) = a [M, K] @ b [K, N] + beta * c on float / double buffers; runs on the
// calling thread when called inside a parallel region.
void gemm_nn(ScalarType dt, int64_t M, int64_t N, int64_t K, const void* a, int64_t lda, const void* b, int64_t ldb,
             double beta, void* c, int64_t ldc);

}  // namespace ember::cpu
