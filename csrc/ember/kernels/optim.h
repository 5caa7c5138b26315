#pragma once
// Fused optimizer update kernels (ops/optim.cpp): one call updates one parameter and its state in
// place. The op has checked the tensors and made them contiguous in the compute dtype (float32 or
// float64, the parameter's); an optional state tensor is undefined when the options leave it out.
// Hyperparameters and the per-step values the op owns (the bumped step count, NAdam's mu product)
// come in double; the kernel rounds them to the compute dtype, as PyTorch's reference loops do.
#include "ember/core/tensor.h"
#include "ember/kernels/optim_args.h"
#include "ember/kernels/registry.h"


// momentum_buffer: undefined when momentum == 0
EMBER_DECLARE_STUB(fused_sgd_stub, void, (const Tensor& param, const Tensor& grad, const Tensor& momentum_buffer,
                                          const FusedSgdArgs&))
// max_exp_avg_sq: undefined unless amsgrad
EMBER_DECLARE_STUB(fused_adam_stub, void, (const Tensor& param, const Tensor& grad, const Tensor& exp_avg,
                                           const Tensor& exp_avg_sq, const Tensor& max_exp_avg_sq,
                                           const FusedAdamArgs&))
// grad_avg: undefined unless centered; momentum_buffer: undefined unless momentum > 0
EMBER_DECLARE_STUB(fused_rmsprop_stub, void, (const Tensor& param, const Tensor& grad, const Tensor& square_avg,
                                              const Tensor& grad_avg, const Tensor& momentum_buffer,
                                              const FusedRmspropArgs&))
EMBER_DECLARE_STUB(fused_adagrad_stub, void, (const Tensor& param, const Tensor& grad, const Tensor& state_sum,
                                              const FusedAdagradArgs&))
EMBER_DECLARE_STUB(fused_adadelta_stub, void, (const Tensor& param, const Tensor& grad, const Tensor& square_avg,
                                               const Tensor& acc_delta, const FusedAdadeltaArgs&))
EMBER_DECLARE_STUB(fused_adamax_stub, void, (const Tensor& param, const Tensor& grad, const Tensor& exp_avg,
                                             const Tensor& exp_inf, const FusedAdamaxArgs&))
EMBER_DECLARE_STUB(fused_nadam_stub, void, (const Tensor& param, const Tensor& grad, const Tensor& exp_avg,
                                            const Tensor& exp_avg_sq, const FusedNadamArgs&))
EMBER_DECLARE_STUB(fused_radam_stub, void, (const Tensor& param, const Tensor& grad, const Tensor& exp_avg,
                                            const Tensor& exp_avg_sq, const FusedRadamArgs&))
