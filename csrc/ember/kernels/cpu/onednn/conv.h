// Convolution through oneDNN (float32), one of the CPU backend's libraries: kernels/cpu/conv.cpp
// runs a convolution here when `usable()` says yes, else im2col + GEMM. Every convolution, plain or
// transposed, is phrased as one plain convolution "C" from a large space to a small one: C(x) = y
// for conv, C^T(x) = y for conv_transpose. The three oneDNN primitives (forward, backward-data,
// backward-weights) then cover both directions.
#pragma once

#include "ember/kernels/conv.h"

namespace ember::onednn {

// float32 tensors, oneDNN built in and not disabled (EMBER_DISABLE_ONEDNN=1), non-empty problem.
bool usable(const Tensor& input, const Tensor& weight, const ConvParams& g);

// out [N, Cout, *out] (allocated, contiguous) <- conv(input [N, C, *S]); sizes validated by the op.
void conv_forward(const Tensor& out, const Tensor& input, const Tensor& weight, const Tensor& bias,
                  const ConvParams& g);

// Writes each defined gradient (grad_bias: the convolution had a bias and its gradient is wanted).
void conv_backward(const Tensor& grad_input, const Tensor& grad_weight, const Tensor& grad_bias, const Tensor& grad,
                   const Tensor& input, const Tensor& weight, const ConvParams& g);

}  // namespace ember::onednn
