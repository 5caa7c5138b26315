#pragma once
// Layout predicates shared by the iterator and the copies.
#include "ember/core/tensor.h"

namespace ember {

// Every element at its own address and the addresses one block that starts at the first element:
// a permutation of a contiguous layout (a transposed or channels_last tensor), no gaps, no broadcast.
EMBER_API bool non_overlapping_and_dense(const Tensor& t);

// channels_last (4-d) / channels_last_3d (5-d): the channel dim varies fastest, then W, H(, D), N.
// Contiguous in a format: the strides that format gives, size-1 dims' strides ignored (PyTorch's rule).
EMBER_API bool is_contiguous_in(const Tensor& t, MemoryFormat mf);
// An uninitialised tensor laid out in mf (Contiguous or a channels-last one; raises for the wrong rank).
EMBER_API Tensor empty_in_format(IntArrayRef sizes, ScalarType dtype, Device device, MemoryFormat mf);

}  // namespace ember
