#include <atomic>
#include <cstdlib>

#include "ember/alloc/allocator.h"
#include "ember/core/error.h"

namespace ember {

namespace {
constexpr size_t kAlignment = 64;
std::atomic<int64_t> g_allocated{0}, g_peak{0}, g_count{0}, g_frees{0}, g_total_alloc{0}, g_total_freed{0};
std::atomic<AllocObserver> g_observer{nullptr};
}  // namespace

void* cpu_alloc(size_t nbytes) {
  if (nbytes == 0) return nullptr;
  // Refuse requests no machine can satisfy before asking the OS (which may overcommit).
  EMBER_CHECK(nbytes < (size_t(1) << 47), "DefaultCPUAllocator: not enough memory: you tried to allocate ",
              nbytes, " bytes.");
  size_t rounded = (nbytes + kAlignment - 1) & ~(kAlignment - 1);
  void* p = std::aligned_alloc(kAlignment, rounded);
  EMBER_CHECK(p != nullptr, "DefaultCPUAllocator: not enough memory: you tried to allocate ", nbytes, " bytes.");
  int64_t now = g_allocated.fetch_add(int64_t(nbytes), std::memory_order_relaxed) + int64_t(nbytes);
  int64_t peak = g_peak.load(std::memory_order_relaxed);
  while (now > peak && !g_peak.compare_exchange_weak(peak, now, std::memory_order_relaxed)) {}
  g_count.fetch_add(1, std::memory_order_relaxed);
  g_total_alloc.fetch_add(int64_t(nbytes), std::memory_order_relaxed);
  if (auto obs = g_observer.load(std::memory_order_relaxed)) obs(p, int64_t(nbytes));
  return p;
}

void cpu_free(void* ptr, size_t nbytes) {
  if (!ptr) return;
  std::free(ptr);
  g_allocated.fetch_sub(int64_t(nbytes), std::memory_order_relaxed);
  g_frees.fetch_add(1, std::memory_order_relaxed);
  g_total_freed.fetch_add(int64_t(nbytes), std::memory_order_relaxed);
  if (auto obs = g_observer.load(std::memory_order_relaxed)) obs(ptr, -int64_t(nbytes));
}

MemoryStats cpu_memory_stats() {
  return {g_allocated.load(), g_peak.load(), g_count.load(), g_frees.load(), g_total_alloc.load(), g_total_freed.load()};
}

void reset_peak_memory_stats() { g_peak.store(g_allocated.load()); }
void set_alloc_observer(AllocObserver fn) { g_observer.store(fn); }

}  // namespace ember
