#pragma once
// Kernels of the losses that are not composites (ops/nn_loss.cpp): picking the target's entry of
// each row for nll_loss, and scattering its gradient back.
#include "ember/core/tensor.h"
#include "ember/kernels/registry.h"

// out[i] = -w[t_i] * self[i, t_i] for rows self [R, C] (any strides) and int64 targets t [R]
// (contiguous); rows whose target is ignore_index are left as they are (the op zero-fills out).
// weight: contiguous float64 [C], or undefined for 1. Raises IndexError for a target outside [0, C).
EMBER_DECLARE_STUB(nll_pick_stub, void, (const Tensor& out, const Tensor& self, const Tensor& target,
                                         const Tensor& weight, int64_t ignore_index))
// grad_input[i, t_i] = -w[t_i] * grad_output[i] into a zero-filled contiguous grad_input [R, C];
// grad_output: contiguous float64 [R]; targets and weight as for nll_pick_stub.
EMBER_DECLARE_STUB(nll_pick_backward_stub, void, (const Tensor& grad_input, const Tensor& grad_output,
                                                  const Tensor& target, const Tensor& weight, int64_t ignore_index))
