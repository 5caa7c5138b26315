#pragma once
// libtorch's serialization names over Ember's archives (ember/serialize/archive.h holds the engine
// and documents the file format): torch::serialize::OutputArchive / InputArchive and
// torch::save / torch::load of tensors, tensor lists, modules and optimizers. Aliases only.
#include "ember/serialize/archive.h"

// When <torch/torch.h> makes `torch` an alias of `ember` (and defines EMBER_TORCH_IS_EMBER_ALIAS
// first) the names are already there; these using-declarations serve a `torch` of its own.
#ifndef EMBER_TORCH_IS_EMBER_ALIAS
namespace torch {
using ember::load;
using ember::save;
namespace serialize {
using ember::serialize::InputArchive;
using ember::serialize::OutputArchive;
}  // namespace serialize
}  // namespace torch
#endif
