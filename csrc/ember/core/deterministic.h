#pragma once
// use_deterministic_algorithms: the process-wide switch ops read where their result could depend on
// scheduling (GPU atomics, cuDNN's algorithm choice). Set from Python (ember.use_deterministic_algorithms)
// or C++; relaxed atomics, read on the hot path only by ops that have such a variant.
#include "ember/core/macros.h"

namespace ember {

EMBER_API void set_deterministic_algorithms(bool mode, bool warn_only = false);
EMBER_API bool deterministic_algorithms();
EMBER_API bool deterministic_warn_only();
// What an op without a deterministic implementation does in deterministic mode: raises PyTorch's
// RuntimeError naming it, or (warn_only) prints PyTorch's warning once per call site and goes on.
EMBER_API void alert_not_deterministic(const char* what);
// Where warn_only's warning (and other warnings of the core) go: the Python layer installs one raising a
// UserWarning; stderr otherwise.
using WarningHook = void (*)(const char* message);
EMBER_API void set_warning_hook(WarningHook hook);
EMBER_API void emit_warning(const char* message);

}  // namespace ember
