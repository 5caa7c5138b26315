#pragma once
// The pooling family's kernel entries (ops/pooling.cpp calls them; kernels/cpu/pooling.cpp holds
// the CPU's). Inputs come contiguous in a non-reduced dtype; outputs allocated on their device.
#include "ember/kernels/conv.h"

// vals, indices [N, C, *out] <- max over each window of x [N, C, *in]; an index is the flat
// position in its input plane
EMBER_DECLARE_STUB(max_pool_stub, void,
                   (const Tensor& vals, const Tensor& indices, const Tensor& x, const WindowGeometry& g))
// grad_input [planes, *in] (zero-filled) += grad_output at each index; raises IndexError for an
// index outside its plane
EMBER_DECLARE_STUB(max_pool_backward_stub, void,
                   (const Tensor& grad_input, const Tensor& grad_output, const Tensor& indices))
// adaptive max pooling of x [N, C, *in] into vals, indices [N, C, *out]: window r of a dim is
// [floor(r * in / out), ceil((r + 1) * in / out))
EMBER_DECLARE_STUB(adaptive_max_pool_stub, void, (const Tensor& vals, const Tensor& indices, const Tensor& x))
