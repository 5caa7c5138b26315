#pragma once
// Entry points of the CPU kernels (each compiled per ISA; see dispatch.h).
#include "ember/core/scalar.h"
#include "ember/generated/kernels.h"
#include "ember/iter/tensor_iter.h"
#include "ember/kernels/dispatch.h"

namespace ember {

// Extra parameters an elementwise functor reads (alpha, clamp bounds, nan_to_num values, ...).
struct KernelArgs {
  Scalar s0, s1, s2;
  const char* name = "op";
};

enum class TernaryKernel { Clamp, Lerp, Where };

// Reductions over a contiguous [outer, reduced, inner] block into [outer, inner].
enum class ReduceKernel { Sum, Prod, Max, Min, ArgMax, ArgMin, All, Any };
struct ReduceShape {
  int64_t outer, reduced, inner;
};

}  // namespace ember

EMBER_DECLARE_KERNEL(void, unary_kernel, (::ember::UnaryKernel, ::ember::TensorIter&, const ::ember::KernelArgs&))
EMBER_DECLARE_KERNEL(void, binary_kernel, (::ember::BinaryKernel, ::ember::TensorIter&, const ::ember::KernelArgs&))
EMBER_DECLARE_KERNEL(void, ternary_kernel, (::ember::TernaryKernel, ::ember::TensorIter&, const ::ember::KernelArgs&))
EMBER_DECLARE_KERNEL(void, copy_kernel, (::ember::TensorIter&))
EMBER_DECLARE_KERNEL(void, fill_kernel, (::ember::TensorIter&, const ::ember::Scalar&))
// values: [outer, inner] of dtype; indices: int64 [outer, inner] for ArgMax/ArgMin/Max/Min (may be null)
EMBER_DECLARE_KERNEL(void, reduce_kernel,
                     (::ember::ReduceKernel, ::ember::ScalarType, const void* in, void* values, int64_t* indices,
                      ::ember::ReduceShape))
// Inclusive scan along the contiguous last axis of [rows, n]: cumsum (prod=false) or cumprod.
EMBER_DECLARE_KERNEL(void, scan_kernel, (bool prod, ::ember::ScalarType, const void* in, void* out, int64_t rows, int64_t n))
