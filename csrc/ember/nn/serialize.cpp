#include "ember/nn/serialize.h"

namespace ember::nn {

void save(const Module& module, const std::string& path, const StringDict& metadata) {
  TensorDict tensors;
  for (auto& [name, t] : module.state_dict()) tensors[name] = t.detach();
  ember::save(tensors, path, metadata);
}

serialize::LoadResult load(Module& module, const std::string& path, bool strict) {
  return serialize::load_parameters(path, module.state_dict(), strict);
}

}  // namespace ember::nn
