#pragma once
// The convolution family's kernel entries (ops/conv.cpp calls them; kernels/cpu/conv.cpp holds the
// CPU's, which picks oneDNN or im2col + GEMM per call).
#include <array>
#include <tuple>

#include "ember/core/tensor.h"
#include "ember/kernels/registry.h"
#include "ember/kernels/window_geometry.h"

namespace ember {

// A convolution's parameters, each padded to 3 values (unused dims: stride 1, padding 0, ...).
struct ConvParams {
  int64_t ns;  // spatial dims, 1..3
  std::array<int64_t, 3> s, p, d, op;
  int64_t groups;
  bool transposed;
};

using ConvGrads = std::tuple<Tensor, Tensor, Tensor>;  // input, weight, bias
using ConvMask = std::array<bool, 3>;                  // which of them are wanted


}  // namespace ember

// cols [N, C * prod(k), L] <- x [N, C, *in] (both contiguous, one non-reduced dtype)
EMBER_DECLARE_STUB(im2col_stub, void, (const Tensor& cols, const Tensor& x, const WindowGeometry& g))
// x [N, C, *in] (zero-filled) += the blocks of cols [N, C * prod(k), L]
EMBER_DECLARE_STUB(col2im_stub, void, (const Tensor& x, const Tensor& cols, const WindowGeometry& g))
// conv(input [N, Cin, *in], weight, bias (may be undefined)), transposed or not, as a new
// [N, Cout, *out_spatial] tensor on the inputs' device: the library allocates (oneDNN fills a fresh
// buffer, im2col + GEMM hands back matmul's result, no copy). The op has checked the sizes.
EMBER_DECLARE_STUB(convolution_stub, Tensor,
                   (const Tensor& input, const Tensor& weight, const Tensor& bias, const ConvParams& p,
                    IntArrayRef out_spatial))
// The gradients of a batched convolution per mask (the bias's only when it had one); not
// differentiable (create_graph goes through ops instead).
EMBER_DECLARE_STUB(convolution_backward_stub, ConvGrads,
                   (const Tensor& grad, const Tensor& input, const Tensor& weight, bool has_bias, const ConvParams& p,
                    ConvMask mask))
