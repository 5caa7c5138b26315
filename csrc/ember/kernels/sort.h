#pragma once
// Kernel stubs of sorting and selection (ops/sort.cpp). Inputs are contiguous [rows, n] blocks (the
// op moved the sorted dim last) in the compute dtype: float for half/bfloat16.
#include <tuple>

#include "ember/core/tensor.h"
#include "ember/kernels/registry.h"

namespace ember {
using TensorPair = std::tuple<Tensor, Tensor>;  // (a macro argument cannot hold the comma of tuple<,>)
}  // namespace ember

// values/indices [rows, n]: each row of x stably sorted (NaN last ascending, first descending).
EMBER_DECLARE_STUB(sort_stub, void, (const ::ember::Tensor& values, const ::ember::Tensor& indices,
                                     const ::ember::Tensor& x, bool descending))
// values/indices [rows, k]: the first k of each row's stable order (largest: descending), in that order.
EMBER_DECLARE_STUB(topk_stub, void, (const ::ember::Tensor& values, const ::ember::Tensor& indices,
                                     const ::ember::Tensor& x, int64_t k, bool largest))
// values/indices [rows, 1]: the lower median of each row of x (a NaN row gives its first NaN).
EMBER_DECLARE_STUB(median_stub, void, (const ::ember::Tensor& values, const ::ember::Tensor& indices,
                                       const ::ember::Tensor& x))
// values/indices [rows, 1]: the most frequent value of each row and its last index.
EMBER_DECLARE_STUB(mode_stub, void, (const ::ember::Tensor& values, const ::ember::Tensor& indices,
                                     const ::ember::Tensor& x))
// unique of a sorted 1-D tensor: `order` is the sort permutation (int64 [n]) and `differs` (bool [n - 1],
// undefined when n < 2) whether each sorted value differs from the one before it. Fills `inverse`
// (int64, n elements) and returns {positions in the sorted tensor of each first occurrence, counts}.
EMBER_DECLARE_STUB(unique_sorted_stub, ::ember::TensorPair,
                   (const ::ember::Tensor& order, const ::ember::Tensor& differs, const ::ember::Tensor& inverse))
// unique rows of a double [n, m] block: consecutive=false sorts them (lexicographically, stably),
// true only merges runs of equal neighbours. Fills `inverse` (int64 [n]) and returns {row numbers kept, counts}.
EMBER_DECLARE_STUB(unique_rows_stub, ::ember::TensorPair,
                   (const ::ember::Tensor& rows, const ::ember::Tensor& inverse, bool consecutive))
