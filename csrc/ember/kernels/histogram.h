#pragma once
// Kernel stubs of histc and bincount (ops/histogram.cpp).
#include "ember/core/tensor.h"
#include "ember/kernels/registry.h"

// counts (int64 [bins], zeroed) += the histogram of the contiguous double `x` over [lo, hi]; the bin
// of each value is computed with every step rounded to `dtype` (the input's), as PyTorch does.
EMBER_DECLARE_STUB(histc_stub, void, (const ::ember::Tensor& counts, const ::ember::Tensor& x, double lo, double hi,
                                      ::ember::ScalarType dtype))
// out (zeroed; int64, or weights' float/double) [v] += 1 or weights[i] for each v = x[i] of the
// contiguous int64 `x` (all in [0, out.numel())); weights contiguous or undefined.
EMBER_DECLARE_STUB(bincount_stub, void, (const ::ember::Tensor& out, const ::ember::Tensor& x,
                                         const ::ember::Tensor& weights))
