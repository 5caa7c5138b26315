#include "ember/core/tensor_impl.h"

namespace ember {

TensorImpl::TensorImpl(Storage storage, ScalarType dtype, IntArrayRef sizes, IntArrayRef strides,
                       int64_t storage_offset)
    : storage_(std::move(storage)), dtype_(dtype) {
  set_sizes_and_strides(sizes, strides, storage_offset);
}

TensorImpl::~TensorImpl() = default;

void TensorImpl::set_sizes_and_strides(IntArrayRef sizes, IntArrayRef strides, int64_t storage_offset) {
  sizes_.assign(sizes);
  strides_.assign(strides);
  storage_offset_ = storage_offset;
  numel_ = prod(sizes);
  is_contiguous_ = compute_is_contiguous(sizes, strides);
}

DimVector contiguous_strides(IntArrayRef sizes) {
  DimVector st(sizes.size());
  int64_t s = 1;
  for (int64_t i = int64_t(sizes.size()) - 1; i >= 0; i--) {
    st[i] = s;
    s *= std::max<int64_t>(sizes[i], 1);
  }
  return st;
}

bool compute_is_contiguous(IntArrayRef sizes, IntArrayRef strides) {
  for (int64_t s : sizes)
    if (s == 0) return true;  // an empty tensor is contiguous whatever its strides
  int64_t expected = 1;
  for (int64_t i = int64_t(sizes.size()) - 1; i >= 0; i--) {
    if (sizes[i] == 1) continue;
    if (strides[i] != expected) return false;
    expected *= sizes[i];
  }
  return true;
}

}  // namespace ember
