// The one oneDNN CPU engine and the EMBER_DISABLE_ONEDNN switch, shared by the convolution and matmul
// primitives (inline: one engine per process, not one per file). Include only under EMBER_HAVE_ONEDNN.
#pragma once

#include <cstdlib>
#include <cstring>

#include <oneapi/dnnl/dnnl.hpp>

namespace ember::onednn {

inline dnnl::engine& engine() {
  static dnnl::engine e(dnnl::engine::kind::cpu, 0);
  return e;
}

// EMBER_DISABLE_ONEDNN=1 (any value but empty or "0") routes every call to the fallback paths
inline bool disabled() {
  static const bool v = [] {
    const char* e = std::getenv("EMBER_DISABLE_ONEDNN");
    return e && *e && std::strcmp(e, "0") != 0;
  }();
  return v;
}

}  // namespace ember::onednn
