#pragma once
// A wait that can block on another thread which needs an embedding interpreter's lock (Python's GIL:
// a thread finishing a collective runs Python callbacks) goes through blocking_region. The Python
// bindings install a hook that releases the lock for the wait, so a destructor that joins such a
// thread cannot deadlock with it; without a hook the wait simply runs.
#include <type_traits>

namespace ember {

using BlockingHook = void (*)(void (*fn)(void*), void* ctx);
void set_blocking_hook(BlockingHook hook);
void blocking_region(void (*fn)(void*), void* ctx);

template <class F>
void blocking_region(F&& f) {
  blocking_region([](void* c) { (*static_cast<std::remove_reference_t<F>*>(c))(); }, &f);
}

}  // namespace ember
