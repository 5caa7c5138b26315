#pragma once
// The fused optimizers' hyperparameters (kernels/optim.h): plain structs, shared with the CUDA
// launchers (kernels/cuda/launch.h), which nvcc compiles without the core's headers.

namespace ember {

struct FusedSgdArgs {
  double lr, momentum, dampening, weight_decay;
  bool nesterov, maximize, first_step;
};
struct FusedAdamArgs {
  double lr, beta1, beta2, weight_decay, eps, step;
  bool amsgrad, maximize, decoupled_weight_decay;
};
struct FusedRmspropArgs {
  double lr, alpha, eps, weight_decay, momentum;
  bool centered, maximize;
};
struct FusedAdagradArgs {
  double lr, weight_decay, lr_decay, eps, step;
  bool maximize;
};
struct FusedAdadeltaArgs {
  double lr, rho, eps, weight_decay;
  bool maximize;
};
struct FusedAdamaxArgs {
  double lr, beta1, beta2, eps, weight_decay, step;
  bool maximize;
};
// mu / mu_next: this step's and the next step's momentum coefficients; mu_product: the product of
// mu over the steps so far, as rounded in its state tensor.
struct FusedNadamArgs {
  double lr, beta1, beta2, weight_decay, eps, step, mu, mu_next, mu_product;
  bool decoupled_weight_decay, maximize;
};
struct FusedRadamArgs {
  double lr, beta1, beta2, weight_decay, eps, step;
  bool decoupled_weight_decay, maximize;
};

}  // namespace ember
