#include "ember/core/blocking.h"

#include <atomic>

namespace ember {
namespace {
std::atomic<BlockingHook> g_hook{nullptr};
}

void set_blocking_hook(BlockingHook hook) { g_hook.store(hook); }

void blocking_region(void (*fn)(void*), void* ctx) {
  if (BlockingHook h = g_hook.load()) h(fn, ctx);
  else fn(ctx);
}

}  // namespace ember
