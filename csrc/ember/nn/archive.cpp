// Modules to and from archives (declared in serialize/archive.h; defined here because modules live
// in the C++ frontend library, not in the core objects the Python extension shares).
#include "ember/serialize/archive.h"

#include <set>

namespace ember::serialize {

OutputArchive& operator<<(OutputArchive& archive, const nn::Module& module) {
  module.save(archive);
  return archive;
}

InputArchive& operator>>(InputArchive& archive, nn::Module& module) {
  module.load(archive);
  return archive;
}

}  // namespace ember::serialize

namespace ember::nn {

void Module::save(serialize::OutputArchive& archive) const {
  std::set<std::string> buffers;
  for (auto& kv : named_buffers()) buffers.insert(kv.first);
  for (auto& [name, t] : state_dict()) archive.write(name, t, buffers.count(name) > 0);
}

// Every parameter and persistent buffer must be in the archive; extra entries are ignored (as
// libtorch). load_state_dict checks every shape before it copies anything.
void Module::load(serialize::InputArchive& archive) {
  NamedTensors given;
  for (auto& [name, own] : state_dict()) {
    Tensor t;
    archive.read(name, t);
    given.emplace_back(name, t);
  }
  load_state_dict(given, /*strict=*/true);
}

}  // namespace ember::nn
