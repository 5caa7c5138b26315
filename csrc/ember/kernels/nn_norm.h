#pragma once
// Per-channel arithmetic of batch norm (ops/nn_core.cpp) between its fused passes over the data
// (batch_norm_*_kernel in kernels/kernels.h). All tensors are contiguous float64 [C]; weight and
// bias may be undefined (1 and 0).
#include "ember/core/tensor.h"
#include "ember/kernels/registry.h"

// invstd = 1 / sqrt(var + eps); y = x * scale + shift with scale = w invstd, shift = b - mean scale.
EMBER_DECLARE_STUB(batch_norm_fold_stub, void, (const Tensor& mean, const Tensor& var, const Tensor& weight,
                                                const Tensor& bias, double eps, const Tensor& invstd,
                                                const Tensor& scale, const Tensor& shift))
// dx = dy * k1 + (x - mean) * k2 + k3 from the sums of dy and dy * (x - mean) over `count` values
// per channel: k1 = w invstd; in training k2 = -w invstd^3 sum_dy_xmu / count and
// k3 = -w invstd sum_dy / count, else both 0.
EMBER_DECLARE_STUB(batch_norm_backward_fold_stub, void, (const Tensor& invstd, const Tensor& weight,
                                                         const Tensor& sum_dy, const Tensor& sum_dy_xmu, double count,
                                                         bool training, const Tensor& k1, const Tensor& k2,
                                                         const Tensor& k3))
