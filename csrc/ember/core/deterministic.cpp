#include "ember/core/deterministic.h"

#include <atomic>
#include <cstdio>
#include <string>

#include "ember/core/error.h"

namespace ember {
namespace {
std::atomic<bool> g_mode{false}, g_warn_only{false};
std::atomic<WarningHook> g_warning_hook{nullptr};
}  // namespace

void set_warning_hook(WarningHook hook) { g_warning_hook.store(hook); }

void emit_warning(const char* message) {
  if (WarningHook hook = g_warning_hook.load()) hook(message);
  else std::fprintf(stderr, "UserWarning: %s\n", message);
}

void set_deterministic_algorithms(bool mode, bool warn_only) {
  g_mode.store(mode, std::memory_order_relaxed);
  g_warn_only.store(warn_only, std::memory_order_relaxed);
}
bool deterministic_algorithms() { return g_mode.load(std::memory_order_relaxed); }
bool deterministic_warn_only() { return g_warn_only.load(std::memory_order_relaxed); }

void alert_not_deterministic(const char* what) {
  if (!deterministic_algorithms()) return;
  if (deterministic_warn_only()) {
    const std::string msg = std::string(what) +
                            " does not have a deterministic implementation, but you set "
                            "'torch.use_deterministic_algorithms(True, warn_only=True)'. You can file an issue at "
                            "https://github.com/pytorch/pytorch/issues to help us prioritize adding deterministic "
                            "support for this operation.";
    emit_warning(msg.c_str());
    return;
  }
  EMBER_FAIL(Runtime, what,
             " does not have a deterministic implementation, but you set 'torch.use_deterministic_algorithms(True)'. "
             "You can turn off determinism just for this operation, or you can use the 'warn_only=True' option, if "
             "that's acceptable for your application. You can also file an issue at "
             "https://github.com/pytorch/pytorch/issues to help us prioritize adding deterministic support for this "
             "operation.");
}

}  // namespace ember
