#pragma once
// A module's state dict to and from a safetensors file, under the names of Python's state_dict(),
// so a model trained in C++ loads in Python (model.load_state_dict(ember.safetensors.load_file(p)))
// and back.
#include <string>

#include "ember/nn/module.h"

namespace ember::nn {

// Parameters and persistent buffers of `module` (and `metadata`) into `path`, atomically.
EMBER_API void save(const Module& module, const std::string& path, const StringDict& metadata = {});
// Copy a file written by save (or by Python) into `module` in place; shapes and dtypes are checked
// before anything is written, strict also makes missing or unexpected names an error.
EMBER_API serialize::LoadResult load(Module& module, const std::string& path, bool strict = true);

template <class Impl>
void save(const ModuleHolder<Impl>& module, const std::string& path, const StringDict& metadata = {}) {
  save(*module, path, metadata);
}
template <class Impl>
serialize::LoadResult load(const ModuleHolder<Impl>& module, const std::string& path, bool strict = true) {
  return load(*module, path, strict);
}

}  // namespace ember::nn
