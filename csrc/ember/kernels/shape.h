#pragma once
// Kernel stubs of the shape ops that write generated indices (ops/shape_ops.cpp).
#include <optional>

#include "ember/core/tensor.h"
#include "ember/kernels/registry.h"

// int64 [sum(repeats)]: i repeated repeats[i] times, for the contiguous int64 `repeats`; raises on a
// negative repeat, an overflowing sum, or a sum that differs from output_size when given.
EMBER_DECLARE_STUB(repeat_interleave_stub, ::ember::Tensor,
                   (const ::ember::Tensor& repeats, std::optional<int64_t> output_size))
// out int64 [2, n]: the (row, column) coordinates of the lower (or upper) triangle of a row x col
// matrix, from diagonal `offset`, row by row; n is their count.
EMBER_DECLARE_STUB(tri_indices_stub, void, (const ::ember::Tensor& out, int64_t row, int64_t col, int64_t offset,
                                            bool lower))
// out int64 [count * r]: every increasing (or non-decreasing, with_replacement) r-tuple of [0, n), in
// lexicographic order; count is their number (> 0).
EMBER_DECLARE_STUB(combinations_stub, void, (const ::ember::Tensor& out, int64_t n, int64_t r, bool with_replacement))
