// Convolution through oneDNN (float32). Every convolution, plain or transposed, is phrased as one
// plain convolution "C" from a large space to a small one: C(x) = y for conv, C^T(x) = y for
// conv_transpose. The three oneDNN primitives (forward, backward-data, backward-weights) then cover
// both directions. Callers fall back to im2col + GEMM when `usable()` says no.
#pragma once

#include <array>
#include <tuple>

#include "ember/core/tensor.h"

namespace ember::onednn {

struct ConvGeometry {
  int64_t ns;                    // spatial dims, 1..3
  std::array<int64_t, 3> s, p, d, op;
  int64_t groups;
  bool transposed;
};

// float32 tensors, oneDNN built in and not disabled (EMBER_DISABLE_ONEDNN=1), non-empty problem.
bool usable(const Tensor& input, const Tensor& weight, const ConvGeometry& g);

// input [N, C, *S] batched; output spatial sizes already validated by the caller.
Tensor conv_forward(const Tensor& input, const Tensor& weight, const Tensor& bias, const ConvGeometry& g,
                    IntArrayRef out_spatial);

std::tuple<Tensor, Tensor, Tensor> conv_backward(const Tensor& grad, const Tensor& input, const Tensor& weight,
                                                 bool has_bias, const ConvGeometry& g, std::array<bool, 3> mask);

}  // namespace ember::onednn
