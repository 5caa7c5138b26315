#pragma once
// Shared bodies of the generated elementwise ops (see ops.yaml `kernel:`).
#include "ember/generated/kernels.h"
#include "ember/iter/tensor_iter.h"

namespace ember {

// kNoReducedFloat: no float16/bfloat16 kernel in PyTorch (its special functions' CPU kernels): raise its error
enum ElementwiseFlags : int { kPromoteToFloat = 1, kResultBool = 2, kNoReducedFloat = 4 };

Tensor unary_op(UnaryKernel k, int flags, const Tensor& self, const Tensor& out, OutMode mode, const char* name,
                const Scalar& arg0 = Scalar());
Tensor binary_op(BinaryKernel k, int flags, const Tensor& self, const Tensor& other, const Scalar& alpha,
                 const Tensor& out, OutMode mode, const char* name);

}  // namespace ember
