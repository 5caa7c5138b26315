#pragma once
// Layout predicates shared by the iterator and the copies.
#include "ember/core/tensor.h"

namespace ember {

// Every element at its own address and the addresses one block that starts at the first element:
// a permutation of a contiguous layout (a transposed or channels_last tensor), no gaps, no broadcast.
EMBER_API bool non_overlapping_and_dense(const Tensor& t);

}  // namespace ember
