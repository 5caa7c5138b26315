#pragma once
// What the convolution family's ops (ops/conv.cpp, ops/pooling.cpp), its backward formula and the
// backends' convolution entries share.
#include <tuple>

#include "ember/kernels/conv.h"

namespace ember {

// stride/padding/dilation/output_padding already expanded to `ns` values each
ConvParams conv_params(int64_t ns, IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation,
                       IntArrayRef output_padding, int64_t groups, bool transposed);

// The convolution of a batched input and its gradients as im2col/col2im + matmul: device-independent
// ops, differentiable (so double backward works) and the fallback of a backend without a direct
// convolution (the CPU's for non-float32 dtypes). Gradients come back per mask (bias: when defined).
Tensor conv_forward_composite(const Tensor& input, const Tensor& weight, const Tensor& bias, const ConvParams& p,
                              IntArrayRef out_spatial);
std::tuple<Tensor, Tensor, Tensor> conv_backward_composite(const Tensor& grad, const Tensor& input,
                                                           const Tensor& weight, bool has_bias, const ConvParams& p,
                                                           std::array<bool, 3> mask);

namespace native {
// One value per spatial dim from a param given as one value, `n` values or none (`fill_if_empty`).
DimVector expand_param(IntArrayRef v, int64_t n, const char* name, int64_t fill_if_empty);
// The window geometry of `in` -> `out` spatial sizes, padded to 3 dims with leading unit dims.
WindowGeometry make_geometry(IntArrayRef in, IntArrayRef out, IntArrayRef k, IntArrayRef d, IntArrayRef p,
                             IntArrayRef s);
}  // namespace native

}  // namespace ember
