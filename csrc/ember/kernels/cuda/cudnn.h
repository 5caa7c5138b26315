#pragma once
// Convolutions on cuDNN (kernels/cuda/cudnn.cpp), tried first by the CUDA convolution entries of
// register.cpp; a call cuDNN does not take (not built or not loadable, switched off, a dtype or size it
// has no kernel for) returns false and the entry runs im2col + cuBLAS instead, still on the GPU.
#include "ember/core/tensor.h"
#include "ember/kernels/conv.h"

namespace ember::cuda {

bool cudnn_convolution(Tensor& out, const Tensor& input, const Tensor& weight, const Tensor& bias, const ConvParams& p,
                       IntArrayRef out_spatial);
bool cudnn_convolution_backward(ConvGrads& out, const Tensor& grad, const Tensor& input, const Tensor& weight,
                                bool has_bias, const ConvParams& p, ConvMask mask);

}  // namespace ember::cuda
