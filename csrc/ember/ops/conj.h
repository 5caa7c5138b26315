#pragma once
// Note [Conjugate views] (core/tensor_impl.h): conj() of a complex tensor is a view whose elements
// read as the conjugates of the stored ones; _neg_view() (the imaginary part of a conjugate view) one
// whose elements read negated. Only the view ops, copy_, resize_ and to_dtype read these bits; every
// other generated op entry hands its body materialized copies through these helpers (a cold path:
// one flag test per tensor argument otherwise).
#include <vector>

#include "ember/core/tensor.h"

namespace ember {

// t itself unless it has the bit (resolve_bits: either); else its values, materialized (differentiable)
EMBER_API Tensor resolve_conj(const Tensor& t);
EMBER_API Tensor resolve_neg(const Tensor& t);
EMBER_API Tensor resolve_bits(const Tensor& t);
EMBER_API std::vector<Tensor> resolve_bits(TensorList ts);
EMBER_API bool any_math_bits(TensorList ts);
// A view of t's storage without the bits: the stored values (no autograd history).
EMBER_API Tensor storage_alias(const Tensor& t);
// After an op ran on resolve_bits(self) in self's stead: its result goes back through self's bits (copy_).
EMBER_API const Tensor& write_back_through_bits(const Tensor& self, const Tensor& computed);
// An op's out= tensor with a bit: the op writes into a stand-in, which then goes to `out` (resized).
EMBER_API Tensor out_stand_in_for_bits(const Tensor& out);
EMBER_API void out_write_back_through_bits(const Tensor& out, const Tensor& tmp);
// Ops that update tensor lists in place (the fused optimizers) refuse conjugate (or negative) views in them.
EMBER_API void refuse_math_bits_mutation(TensorList ts, const char* op);

}  // namespace ember
