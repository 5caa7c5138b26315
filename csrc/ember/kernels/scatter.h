#pragma once
// Kernel stubs of the scatter/gather family (ops/scatter.cpp): element-wise indexing along one dim.
// Each kernel bounds-checks the indices it reads; the op has checked shapes, dtypes and devices.
#include "ember/core/tensor.h"
#include "ember/kernels/registry.h"

namespace ember {
enum class ScatterMode { Set, Add };
enum class ScatterReduce { Sum, Prod, Mean, Amax, Amin };
}  // namespace ember

// out[e] = self[... index[e] ...] along dim; out has index's shape and self's dtype.
EMBER_DECLARE_STUB(gather_stub, void, (const ::ember::Tensor& out, const ::ember::Tensor& self, int64_t dim,
                                       const ::ember::Tensor& index))
// self[... index[e] ...] = src[e] (Set) or += src[e] (Add); src already has self's dtype.
EMBER_DECLARE_STUB(scatter_stub, void, (const ::ember::Tensor& self, int64_t dim, const ::ember::Tensor& index,
                                        const ::ember::Tensor& src, ::ember::ScatterMode mode))
// scatter_reduce into `work` (contiguous, compute dtype, as many dims as index and src, which are contiguous
// int64 and work's dtype respectively).
EMBER_DECLARE_STUB(scatter_reduce_stub, void, (const ::ember::Tensor& work, int64_t dim, const ::ember::Tensor& index,
                                               const ::ember::Tensor& src, ::ember::ScatterReduce reduce,
                                               bool include_self))
