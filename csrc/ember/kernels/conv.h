#pragma once
// The convolution family's kernel entries (ops/conv.cpp calls them; kernels/cpu/conv.cpp holds the
// CPU's, which picks oneDNN or im2col + GEMM per call). Outputs come allocated, contiguous, on the
// inputs' device.
#include <array>

#include "ember/core/tensor.h"
#include "ember/kernels/registry.h"

namespace ember {

// A convolution's parameters, each padded to 3 values (unused dims: stride 1, padding 0, ...).
struct ConvParams {
  int64_t ns;  // spatial dims, 1..3
  std::array<int64_t, 3> s, p, d, op;
  int64_t groups;
  bool transposed;
};

// One window geometry over up to 3 spatial dims, padded to 3 with leading unit dims (im2col,
// col2im, max pooling): input and output sizes, kernel, dilation, padding, stride.
struct WindowGeometry {
  int64_t in[3], out[3], k[3], d[3], p[3], s[3];
};

}  // namespace ember

// cols [N, C * prod(k), L] <- x [N, C, *in] (both contiguous, one non-reduced dtype)
EMBER_DECLARE_STUB(im2col_stub, void, (const Tensor& cols, const Tensor& x, const WindowGeometry& g))
// x [N, C, *in] (zero-filled) += the blocks of cols [N, C * prod(k), L]
EMBER_DECLARE_STUB(col2im_stub, void, (const Tensor& x, const Tensor& cols, const WindowGeometry& g))
// out [N, Cout, *out] <- conv(input [N, Cin, *in], weight, bias (may be undefined)), transposed or not
EMBER_DECLARE_STUB(convolution_stub, void,
                   (const Tensor& out, const Tensor& input, const Tensor& weight, const Tensor& bias,
                    const ConvParams& p))
// The gradients of a batched convolution: each output that is defined is written (grad_bias only
// when the convolution had a bias); not differentiable (create_graph goes through ops instead).
EMBER_DECLARE_STUB(convolution_backward_stub, void,
                   (const Tensor& grad_input, const Tensor& grad_weight, const Tensor& grad_bias,
                    const Tensor& grad, const Tensor& input, const Tensor& weight, const ConvParams& p))
