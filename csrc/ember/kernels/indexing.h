#pragma once
// Kernel stubs of advanced indexing (ops/indexing.cpp). The op turns index tensors into one linear
// row number per index element (`lin`, int64) over the indexed dims moved first; kernels copy rows.
#include "ember/core/tensor.h"
#include "ember/kernels/registry.h"

// int64 [count, sizes.size()]: the coordinates of the true elements of a contiguous bool tensor of
// shape `sizes`, in row-major order.
EMBER_DECLARE_STUB(nonzero_stub, ::ember::Tensor, (const ::ember::Tensor& mask, ::ember::IntArrayRef sizes))
// lin = (or += when accumulate) (index wrapped into [0, size)) * stride for every element of the
// contiguous int64 `index` (lin's shape); an index outside [-size, size) raises IndexError naming `dim`.
EMBER_DECLARE_STUB(index_linearize_stub, void, (const ::ember::Tensor& lin, const ::ember::Tensor& index, int64_t size,
                                                int64_t stride, int64_t dim, bool accumulate))
// out row i = src row lin[i]; rows hold row_elems elements of contiguous out and src.
EMBER_DECLARE_STUB(index_rows_stub, void, (const ::ember::Tensor& out, const ::ember::Tensor& src,
                                           const ::ember::Tensor& lin, int64_t row_elems))
// dst row lin[i] = (or += when accumulate) values row i; contiguous dst and values of one dtype.
EMBER_DECLARE_STUB(index_put_rows_stub, void, (const ::ember::Tensor& dst, const ::ember::Tensor& values,
                                               const ::ember::Tensor& lin, int64_t row_elems, bool accumulate))
