// Convolution through oneDNN (float32, and bfloat16 where the CPU runs it), one of the CPU backend's
// libraries: kernels/cpu/conv.cpp runs a convolution here when `usable()` says yes, else im2col + GEMM. Every convolution, plain or
// transposed, is phrased as one plain convolution "C" from a large space to a small one: C(x) = y
// for conv, C^T(x) = y for conv_transpose. The three oneDNN primitives (forward, backward-data,
// backward-weights) then cover both directions.
#pragma once

#include <array>
#include <tuple>

#include "ember/kernels/conv.h"

namespace ember::onednn {

// float32 tensors (or bfloat16 ones where oneDNN runs them: autocast's convolutions), oneDNN built in
// and not disabled (EMBER_DISABLE_ONEDNN=1), non-empty problem.
bool usable(const Tensor& input, const Tensor& weight, const ConvParams& g);

// input [N, C, *S] batched; output spatial sizes already validated by the caller.
Tensor conv_forward(const Tensor& input, const Tensor& weight, const Tensor& bias, const ConvParams& g,
                    IntArrayRef out_spatial);

std::tuple<Tensor, Tensor, Tensor> conv_backward(const Tensor& grad, const Tensor& input, const Tensor& weight,
                                                 bool has_bias, const ConvParams& g, std::array<bool, 3> mask);

}  // namespace ember::onednn
