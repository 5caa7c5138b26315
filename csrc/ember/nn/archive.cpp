// Modules to and from archives (declared in serialize/archive.h; defined here because modules live
// in the C++ frontend library, not in the core objects the Python extension shares).
#include "ember/serialize/archive.h"

#include <set>

namespace ember::serialize {

OutputArchive& operator<<(OutputArchive& archive, const nn::Module& module) {
  std::set<std::string> buffers;
  for (auto& kv : module.named_buffers()) buffers.insert(kv.first);
  for (auto& [name, t] : module.state_dict()) archive.write(name, t, buffers.count(name) > 0);
  return archive;
}

// Every parameter and persistent buffer must be in the archive; extra entries are ignored (as
// libtorch). load_state_dict checks every shape before it copies anything.
InputArchive& operator>>(InputArchive& archive, nn::Module& module) {
  nn::NamedTensors given;
  for (auto& [name, own] : module.state_dict()) {
    Tensor t;
    archive.read(name, t);
    given.emplace_back(name, t);
  }
  module.load_state_dict(given, /*strict=*/true);
  return archive;
}

}  // namespace ember::serialize
