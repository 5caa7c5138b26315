#pragma once
// Kernel stubs of the cumulative ops (ops/cumulative.cpp) that have no per-ISA scan kernel. Inputs are
// contiguous [rows, n] blocks, the scanned dim moved last by the op.
#include "ember/core/tensor.h"
#include "ember/kernels/registry.h"

// values/indices [rows, n]: running max (is_max) or min of x and where it was (NaN wins and stays).
EMBER_DECLARE_STUB(cum_extreme_stub, void, (const ::ember::Tensor& values, const ::ember::Tensor& indices,
                                            const ::ember::Tensor& x, bool is_max))
// out = running log(sum(exp(x))) of double rows, without overflow.
EMBER_DECLARE_STUB(logcumsumexp_stub, void, (const ::ember::Tensor& out, const ::ember::Tensor& x))
