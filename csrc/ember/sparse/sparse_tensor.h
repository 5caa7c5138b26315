#pragma once
// Sparse COO tensors (PyTorch's torch.sparse_coo layout). A tensor of `sizes` whose entries are
// given by indices [sparse_dim, nnz] (int64) and values [nnz, *sizes[sparse_dim:]]: column k of
// indices says where values[k] goes; duplicate columns add up, absent ones are zero. coalesce()
// sorts the columns and sums the duplicates.
//
// A SparseTensorImpl has no storage of its own: TensorImpl::data() refuses it, and every generated
// op refuses sparse arguments unless ops.yaml marks it `sparse:` (tools/codegen/gen.py), so no
// kernel ever reads memory a sparse tensor doesn't have.
#include "ember/core/tensor.h"

namespace ember::sparse {

class EMBER_API SparseTensorImpl : public TensorImpl {
 public:
  SparseTensorImpl(Tensor indices, Tensor values, IntArrayRef sizes, bool coalesced);

  const Tensor& indices() const { return indices_; }
  const Tensor& values() const { return values_; }
  int64_t sparse_dim() const { return indices_.size(0); }
  int64_t dense_dim() const { return values_.dim() - 1; }
  int64_t nnz() const { return values_.size(0); }
  bool coalesced() const { return coalesced_; }
  void set_coalesced(bool c) { coalesced_ = c; }

  // In-place ops replace the contents (same sizes) and bump the version.
  void set_contents(Tensor indices, Tensor values, bool coalesced);

 private:
  Tensor indices_, values_;
  bool coalesced_;
};

// The impl of a sparse tensor (checked).
EMBER_API SparseTensorImpl& impl_of(const Tensor& t);

// A sparse tensor from indices and values that are known to be consistent (no checks, no copies).
EMBER_API Tensor make_coo(Tensor indices, Tensor values, IntArrayRef sizes, bool coalesced);

}  // namespace ember::sparse
