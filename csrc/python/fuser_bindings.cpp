// ember._C._fuser_*: the fusion backends' switches and counters, for tests and benchmarks
// (ember.compile runs fusion groups itself; see csrc/ember/jit/fuser/).
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>

#include "ember/core/error.h"
#include "ember/jit/fuser/fuser.h"
#include "ember/jit/fuser/kernel.h"
#include "python/bindings.h"

namespace nb = nanobind;

namespace ember::py {

void bind_fuser(nb::module_& m) {
  namespace fz = ember::jit::fuser;
  // "codegen" / "interp", or None: back to EMBER_FUSER / the default
  m.def("_fuser_set_backend", [](std::optional<std::string> name) {
    if (!name) return fz::set_backend(std::nullopt);
    if (*name == "codegen") return fz::set_backend(fz::Backend::Codegen);
    if (*name == "interp") return fz::set_backend(fz::Backend::Interp);
    EMBER_FAIL(Value, "fuser backend must be 'codegen' or 'interp', got '", *name, "'");
  }, nb::arg("name").none());
  m.def("_fuser_backend", [] { return std::string(fz::backend() == fz::Backend::Codegen ? "codegen" : "interp"); });
  m.def("_fuser_codegen_available", [] { return fz::codegen_available(); });
  // (groups run as one loop, groups run op by op) since the process started
  m.def("_fuser_stats", [] {
    fz::Stats s = fz::stats();
    return std::make_pair(s.fused, s.eager);
  });
}

}  // namespace ember::py
