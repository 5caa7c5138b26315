#pragma once
// Kernel stub of cdist's direct form (ops/distance.cpp).
#include "ember/core/tensor.h"
#include "ember/kernels/registry.h"

// out [nb, r1, r2] = the p-norm distance of each row of a [nb, r1, c] to each row of b [nb, r2, c]
// (contiguous, float or double).
EMBER_DECLARE_STUB(cdist_stub, void, (const ::ember::Tensor& out, const ::ember::Tensor& a, const ::ember::Tensor& b,
                                      double p))
