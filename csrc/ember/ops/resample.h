#pragma once
// Separable resampling shared by interpolation and average pooling (ops/interp.cpp): each of the
// trailing spatial dims is mapped by a sparse [out, in] matrix (kernels/interp.h's ResampleMatrix).
#include <vector>

#include "ember/kernels/interp.h"

namespace ember::native {

// adaptive average pooling's (and interpolate's "area") matrix: row j averages [floor(j in / out), ceil((j + 1) in / out))
ResampleMatrix area_matrix(int64_t in, int64_t out);

// y = A_0 A_1 ... A_{k-1} x over the trailing k = mats.size() dims of x (the dim that shrinks most first);
// with `adjoint`, the transposes in the reverse order, x's dims then having the matrices' row counts and
// y's `in_sizes` (the trailing k). Math in float (reduced floats widen, the result rounds once) or double.
// `op` names the caller in errors (a device without the resampling kernel).
Tensor resample_separable(const Tensor& x, const std::vector<ResampleMatrix>& mats, IntArrayRef in_sizes, bool adjoint,
                          const char* op);

}  // namespace ember::native
