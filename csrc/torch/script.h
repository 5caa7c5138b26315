#pragma once
// <torch/script.h>: what libtorch programs that load saved modules include: the frontend of
// <torch/torch.h> plus torch::jit::load, which reads graphs saved by ember.jit.save (Ember's format,
// a safetensors file with the graph in its metadata; TorchScript archives are not read).
#include "ember/jit/module.h"
#include "torch/torch.h"

namespace torch::jit {
using ::ember::jit::load;
using Module = ::ember::jit::Module;
using ::ember::IValue;
namespace script {
using Module = ::ember::jit::Module;
}  // namespace script
}  // namespace torch::jit
