#pragma once
// Thread-local autograd switches: grad mode (no_grad / enable_grad), inference mode, anomaly mode.
#include "ember/core/macros.h"

namespace ember::autograd {

EMBER_API bool grad_enabled();
EMBER_API void set_grad_enabled(bool enabled);
EMBER_API bool inference_mode_enabled();
EMBER_API void set_inference_mode(bool enabled);
EMBER_API bool anomaly_enabled();
EMBER_API void set_anomaly_enabled(bool enabled, bool check_nan = true);
EMBER_API bool anomaly_check_nan();  // anomaly mode also fails on NaN gradients

// RAII: AutoGradMode g(false) disables recording in this scope.
struct AutoGradMode {
  explicit AutoGradMode(bool enabled) : prev_(grad_enabled()) { set_grad_enabled(enabled); }
  ~AutoGradMode() { set_grad_enabled(prev_); }
  AutoGradMode(const AutoGradMode&) = delete;
  AutoGradMode& operator=(const AutoGradMode&) = delete;

 private:
  bool prev_;
};
struct NoGradGuard : AutoGradMode {
  NoGradGuard() : AutoGradMode(false) {}
};

}  // namespace ember::autograd
