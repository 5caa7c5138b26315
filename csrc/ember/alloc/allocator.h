#pragma once
// The CPU allocator: 64-byte aligned blocks (one cache line, the widest AVX-512 load) and
// counters for ember.memory_stats(). Huge or failed requests raise instead of aborting.
#include <cstddef>
#include <cstdint>

#include "ember/core/macros.h"

namespace ember {

struct MemoryStats {
  int64_t allocated_bytes = 0;       // currently held by live storages
  int64_t peak_allocated_bytes = 0;  // high-water mark since the last reset
  int64_t allocation_count = 0;      // number of allocations ever made
  int64_t free_count = 0;
  int64_t total_allocated_bytes = 0;  // bytes ever allocated / freed (cumulative)
  int64_t total_freed_bytes = 0;
};

EMBER_API void* cpu_alloc(size_t nbytes);
EMBER_API void cpu_free(void* ptr, size_t nbytes);
EMBER_API MemoryStats cpu_memory_stats();
EMBER_API void reset_peak_memory_stats();
// Returns the large freed blocks the allocator keeps for reuse to the system.
EMBER_API void cpu_empty_cache();
EMBER_API int64_t cpu_cached_bytes();  // held in that cache (not counted as allocated)

// Called on every allocation (+bytes) and free (-bytes) while set; the profiler installs it.
using AllocObserver = void (*)(void* ptr, int64_t delta_bytes);
EMBER_API void set_alloc_observer(AllocObserver fn);

}  // namespace ember
