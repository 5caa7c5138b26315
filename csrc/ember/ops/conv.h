#pragma once
// What the convolution op shares with its backward formula (autograd/formulas.h declares that one).
#include "ember/onednn/conv.h"

namespace ember {

// stride/padding/dilation/output_padding already expanded to `ns` values each
onednn::ConvGeometry conv_geometry(int64_t ns, IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation,
                                   IntArrayRef output_padding, int64_t groups, bool transposed);

}  // namespace ember
