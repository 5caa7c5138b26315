#pragma once
// Overflow-checked size arithmetic: every element count, stride, storage extent and output size that
// Ember computes goes through these. A product that wraps would otherwise turn into a small allocation
// that a loop then overruns, or a negative size that a check lets through. Each check is one
// __builtin_*_overflow (an imul/add and a flag test), so the eager path does not notice it.
// Errors carry PyTorch's messages ("numel: integer multiplication overflow", "Storage size calculation
// overflowed with sizes=... and strides=...", "Stride calculation overflowed").
#include <cstdint>
#include <type_traits>

#include "ember/core/array_ref.h"
#include "ember/core/error.h"
#include "ember/core/wrapping.h"  // wrapping_add/sub/mul/neg

namespace ember {

// True when the exact result does not fit in int64; *out then holds the wrapped value.
inline bool mul_overflows(int64_t a, int64_t b, int64_t* out) { return __builtin_mul_overflow(a, b, out); }
inline bool add_overflows(int64_t a, int64_t b, int64_t* out) { return __builtin_add_overflow(a, b, out); }
inline bool sub_overflows(int64_t a, int64_t b, int64_t* out) { return __builtin_sub_overflow(a, b, out); }

// a * b and a + b, or a RuntimeError naming `what` (e.g. "repeat_interleave: output size").
inline int64_t checked_mul(int64_t a, int64_t b, const char* what) {
  int64_t r;
  EMBER_CHECK(!mul_overflows(a, b, &r), what, " overflowed: ", a, " * ", b, " does not fit in int64");
  return r;
}
inline int64_t checked_add(int64_t a, int64_t b, const char* what) {
  int64_t r;
  EMBER_CHECK(!add_overflows(a, b, &r), what, " overflowed: ", a, " + ", b, " does not fit in int64");
  return r;
}

// The element count of `sizes`, multiplied left to right as PyTorch does: a partial product that
// overflows is an error even when a later size is 0 ([2**62, 2**62, 0] raises, [0, 2**62, 2**62] not).
inline bool numel_overflows(IntArrayRef sizes, int64_t* out) {
  uint64_t n = 1;
  bool overflow = false;
  for (int64_t s : sizes) overflow |= __builtin_mul_overflow(n, uint64_t(s), &n);
  *out = int64_t(n);
  return overflow || n > uint64_t(INT64_MAX);
}
inline int64_t checked_numel(IntArrayRef sizes) {
  int64_t n;
  EMBER_CHECK(!numel_overflows(sizes, &n), "numel: integer multiplication overflow");
  return n;
}

// Bytes a storage needs to back a view of (sizes, strides) at storage_offset: 0 when empty, else
// (offset + sum((size - 1) * stride) + 1) * itemsize. Sizes and strides must be non-negative.
EMBER_API int64_t storage_nbytes(IntArrayRef sizes, IntArrayRef strides, int64_t storage_offset, int64_t itemsize);
// Contiguous strides for sizes (a size 0 counts as 1, as PyTorch does), checked.
EMBER_API DimVector checked_contiguous_strides(IntArrayRef sizes);

// For ops that do work proportional to their output before allocating it (interpolation plans its
// taps per output index): raises as the allocation would ("Storage size calculation overflowed",
// "not enough memory") when a tensor of these sizes cannot exist on this machine.
EMBER_API void check_output_size(IntArrayRef sizes, int64_t itemsize, const char* op);

// Ops that return one view per piece (split, chunk, unbind, tensor_split) check the count before
// building any: an expanded or empty dimension can ask for billions of views, each a tensor header.
// Raises when the headers alone would not fit in this machine's memory.
EMBER_API void check_view_count(int64_t count, const char* op);

// wrap_dim for ops that index a real dimension (sizes()[d]): a 0-d tensor has none, and PyTorch's
// wrap_dim(0 or -1, 0) would otherwise hand back 0, an index past its empty sizes.
inline int64_t wrap_existing_dim(int64_t dim, int64_t ndim) {
  EMBER_CHECK_KIND(ndim > 0, Index, "Dimension specified as ", dim, " but tensor has no dimensions");
  EMBER_CHECK_KIND(dim >= -ndim && dim < ndim, Index, "Dimension out of range (expected to be in range of [", -ndim,
                   ", ", ndim - 1, "], but got ", dim, ")");
  return dim < 0 ? dim + ndim : dim;
}

}  // namespace ember
