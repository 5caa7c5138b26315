// The interpreter (jit/interpreter.*) runs prim::FusionGroup nodes through a hook the fuser sets
// when the library loads. The hook is declared weak here so the fuser also builds (and its tests
// run) where the interpreter is absent; with it linked, the strong definition is the one called.
#include <vector>

#include "ember/jit/fuser/fuser.h"

namespace ember::jit {
using GroupRunner = std::vector<Tensor> (*)(const Node& n, const std::vector<Tensor>& inputs);
EMBER_API void set_group_runner(GroupRunner fn) __attribute__((weak));
}  // namespace ember::jit

namespace {
const bool g_installed = [] {
  if (ember::jit::set_group_runner) ember::jit::set_group_runner(&ember::jit::fuser::run_group);
  return true;
}();
}  // namespace
