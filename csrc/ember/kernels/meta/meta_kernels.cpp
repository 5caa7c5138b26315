// The meta device's entries of the kernel stubs that return tensors (a stub returning nothing is a
// no-op there already, kernels/registry.h): each allocates its result's metadata, the sizes the
// CPU kernel's result would have, and computes nothing.
#include "ember/core/tensor.h"
#include "ember/kernels/conv.h"

namespace ember {
namespace {

Tensor convolution_meta(const Tensor& input, const Tensor& weight, const Tensor&, const ConvParams& p,
                        IntArrayRef out_spatial) {
  const int64_t cout = p.transposed ? weight.sizes()[1] * p.groups : weight.sizes()[0];
  DimVector shape = {input.sizes()[0], cout};
  for (int64_t v : out_spatial) shape.push_back(v);
  return empty_tensor(shape, input.dtype(), input.device());
}

ConvGrads convolution_backward_meta(const Tensor& grad, const Tensor& input, const Tensor& weight, bool has_bias,
                                    const ConvParams&, ConvMask mask) {
  Tensor gi, gw, gb;
  if (mask[0]) gi = empty_tensor(input.sizes(), input.dtype(), input.device());
  if (mask[1]) gw = empty_tensor(weight.sizes(), weight.dtype(), weight.device());
  if (mask[2] && has_bias) gb = empty_tensor({grad.sizes()[1]}, grad.dtype(), grad.device());
  return {gi, gw, gb};
}

}  // namespace
}  // namespace ember

EMBER_REGISTER_KERNEL(convolution_stub, Meta, &ember::convolution_meta);
EMBER_REGISTER_KERNEL(convolution_backward_stub, Meta, &ember::convolution_backward_meta);
