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
// The layout PyTorch gives the outputs of the NN ops (convolution, pooling, normalization, upsampling,
// padding) computed from t: channels-last when t is laid out so and not also row-major, else Contiguous.
EMBER_API MemoryFormat suggest_memory_format(const Tensor& t);
// r in layout mf: r itself when it is laid out so already (or mf is Contiguous: the kernels' own layout).
EMBER_API Tensor to_memory_format(const Tensor& r, MemoryFormat mf);

}  // namespace ember
