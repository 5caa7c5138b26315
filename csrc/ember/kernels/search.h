#pragma once
// Kernel stub of searchsorted / bucketize (ops/search.cpp).
#include "ember/core/tensor.h"
#include "ember/kernels/registry.h"

// out (int64, values' shape) = insertion points of each element of `values` in its row of the sorted
// `boundaries` (1-D, or one row per leading index of values), read through `sorter` when defined.
// boundaries and values are contiguous of one dtype (not bool, half or bfloat16); sorter int64.
EMBER_DECLARE_STUB(searchsorted_stub, void, (const ::ember::Tensor& out, const ::ember::Tensor& boundaries,
                                             const ::ember::Tensor& values, const ::ember::Tensor& sorter, bool right))
