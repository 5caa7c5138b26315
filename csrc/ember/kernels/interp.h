#pragma once
// Interpolation's kernel entry (ops/interp.cpp; kernels/cpu/interp.cpp holds the CPU's).
#include <vector>

#include "ember/core/tensor.h"
#include "ember/kernels/registry.h"

namespace ember {
// One dim's resampling matrix [out, in], rows in CSR form: row j's taps are idx/w[start[j]:start[j+1]].
struct ResampleMatrix {
  std::vector<int64_t> start;  // rows + 1
  std::vector<int64_t> idx;
  std::vector<double> w;
  // uint8 images (bilinear/bicubic, as PyTorch's): the weights in fixed point, w * 2^precision rounded,
  // summed in int32 from 2^(precision-1) (the rounding), shifted back and clamped to [0, 255]
  std::vector<int16_t> w16;
  int precision = 0;
};
}  // namespace ember

// y = A x along `dim` of a contiguous x, or y = A^T x with `transpose` (y zero-filled then);
// x and y share their float dtype, or both are uint8 (forward only, A's fixed-point weights)
EMBER_DECLARE_STUB(resample_dim_stub, void,
                   (const Tensor& y, const Tensor& x, int64_t dim, const ResampleMatrix& a, bool transpose))

// Nearest-neighbour selection over the trailing k dims of a contiguous x [planes, in...] into y
// [planes, out...]: y[p, o_0, .., o_k-1] = x[p, idx[0][o_0], .., idx[k-1][o_k-1]], in one pass, any dtype.
EMBER_DECLARE_STUB(nearest_select_stub, void, (const Tensor& y, const Tensor& x, const std::vector<const int64_t*>& idx))

// 2-D grid sampling of a contiguous input [N, C, H, W] at a contiguous grid [N, Ho, Wo, 2] (x, y in
// [-1, 1]) into out [N, C, Ho, Wo]: mode 0 bilinear, 1 nearest; padding 0 zeros, 1 border, 2 reflection
EMBER_DECLARE_STUB(grid_sample_2d_stub, void, (const Tensor& out, const Tensor& input, const Tensor& grid, int64_t mode,
                                               int64_t padding, bool align_corners))
// its gradients: grad_input (zero-filled) and grad_grid, either undefined when not wanted
EMBER_DECLARE_STUB(grid_sample_2d_backward_stub, void,
                   (const Tensor& grad_input, const Tensor& grad_grid, const Tensor& grad_out, const Tensor& input,
                    const Tensor& grid, int64_t mode, int64_t padding, bool align_corners))
