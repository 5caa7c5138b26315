#pragma once
// The ops that take sparse COO arguments (ember/sparse/sparse_tensor.h). Generated op entries
// marked `sparse: dispatch` in ops.yaml hand calls with a sparse argument here; the others refuse
// them through unsupported(). Each works on the indices and values with ordinary dense ops.
// Autograd does not record through sparse tensors: a sparse tensor cannot require grad, and these
// refuse dense arguments that do (NotImplementedError) rather than drop their gradient.
#include <optional>
#include <string_view>

#include "ember/core/tensor.h"

namespace ember::sparse {

[[noreturn]] EMBER_API void unsupported(const char* op);

inline bool any_sparse(TensorList ts) {
  for (const Tensor& t : ts)
    if (t.is_sparse()) return true;
  return false;
}

// ---- the `sparse: dispatch` targets (same signatures as the generated ops)
EMBER_API Tensor add(const Tensor& self, const Tensor& other, const Scalar& alpha);
EMBER_API const Tensor& add_(const Tensor& self, const Tensor& other, const Scalar& alpha);
EMBER_API Tensor sub(const Tensor& self, const Tensor& other, const Scalar& alpha);
EMBER_API const Tensor& sub_(const Tensor& self, const Tensor& other, const Scalar& alpha);
EMBER_API Tensor mul(const Tensor& self, const Tensor& other);
EMBER_API const Tensor& mul_(const Tensor& self, const Tensor& other);
EMBER_API Tensor div(const Tensor& self, const Tensor& other, std::optional<std::string_view> rounding_mode);
EMBER_API const Tensor& div_(const Tensor& self, const Tensor& other, std::optional<std::string_view> rounding_mode);
EMBER_API Tensor neg(const Tensor& self);
EMBER_API const Tensor& neg_(const Tensor& self);
EMBER_API Tensor sum(const Tensor& self, std::optional<ScalarType> dtype);
// over dims: sparse while a sparse dim remains (coalesced), strided once all are reduced, as PyTorch
EMBER_API Tensor sum(const Tensor& self, OptionalIntArrayRef dim, bool keepdim, std::optional<ScalarType> dtype);
// empty sparse tensors shaped like self (zeros_like/empty_like) or of `size` (new_zeros)
EMBER_API Tensor zeros_like(const Tensor& self, const TensorOptions& options, std::optional<MemoryFormat> memory_format);
EMBER_API Tensor empty_like(const Tensor& self, const TensorOptions& options, std::optional<MemoryFormat> memory_format);
EMBER_API Tensor new_zeros(const Tensor& self, IntArrayRef size, const TensorOptions& options);
EMBER_API Tensor clone(const Tensor& self, std::optional<MemoryFormat> memory_format);
EMBER_API const Tensor& zero_(const Tensor& self);
EMBER_API Tensor to_dtype(const Tensor& self, ScalarType dtype, bool copy);
// sparse [n, m] @ dense [m, k] (or [m]): dense, differentiable in the dense argument
EMBER_API Tensor mm(const Tensor& self, const Tensor& mat2);
EMBER_API Tensor matmul(const Tensor& self, const Tensor& other);

EMBER_API Tensor pow(const Tensor& self, const Tensor& exponent);
EMBER_API const Tensor& pow_(const Tensor& self, const Tensor& exponent);
EMBER_API Tensor norm(const Tensor& self, const std::optional<Scalar>& p, OptionalIntArrayRef dim, bool keepdim,
                      std::optional<ScalarType> dtype);
EMBER_API Tensor norm(const Tensor& self, std::string_view p, OptionalIntArrayRef dim, bool keepdim,
                      std::optional<ScalarType> dtype);
EMBER_API const Tensor& copy_(const Tensor& self, const Tensor& other, bool non_blocking);

// ---- `sparse: values` ops: f applied to the coalesced values of sparse `self`
EMBER_API void check_scalar_operand(const char* op, const Tensor& t);
EMBER_API Tensor coalesced(const Tensor& self, const char* op);  // coalesce, refusing inputs that require grad
EMBER_API Tensor with_values(const Tensor& coalesced_self, Tensor values);
template <class F>
Tensor map_values(const char* op, const Tensor& self, F&& f) {
  Tensor c = coalesced(self, op);
  return with_values(c, f(c._values()));
}
// in place on the values, which (as PyTorch's) must be coalesced already
EMBER_API void check_coalesced(const char* op, const Tensor& self);
template <class F>
const Tensor& map_values_(const char* op, const Tensor& self, F&& f) {
  check_coalesced(op, self);
  f(self._values());
  self.impl()->bump_version();
  return self;
}

// ---- used by autograd
// A new sparse tensor sharing self's indices and values (detach, .data).
EMBER_API Tensor shallow_copy(const Tensor& self);
// grad of embedding(weight, indices, padding_idx, sparse=True): rows of `grad` at `indices`
// (PyTorch's embedding_sparse_backward: uncoalesced, padding rows dropped).
EMBER_API Tensor embedding_backward(const Tensor& grad, const Tensor& indices, int64_t num_weights,
                                    int64_t padding_idx, bool scale_grad_by_freq);

}  // namespace ember::sparse
