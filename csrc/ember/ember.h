#pragma once
// Everything of Ember's C++ API (as torch/torch.h): tensors and ops, autograd, nn, optim, data,
// safetensors serialization.
#include "ember/autograd/engine.h"
#include "ember/autograd/grad_mode.h"
#include "ember/core/factories.h"
#include "ember/core/operators.h"
#include "ember/core/scalar_overloads.h"
#include "ember/core/tensor.h"
#include "ember/cuda/cuda.h"
#include "ember/data/data.h"
#include "ember/generated/ops.h"
#include "ember/jit/module.h"
#include "ember/nn/nn.h"
#include "ember/optim/optim.h"
#include "ember/random/generator.h"
#include "ember/serialize/safetensors.h"
#include "ember/parallel/parallel.h"

namespace ember {
// Seed the default generator and every CUDA device's (ember.manual_seed / torch::manual_seed).
inline void manual_seed(uint64_t seed) {
  default_generator().manual_seed(seed);
  manual_seed_cuda_all(seed);
}
}  // namespace ember
