#pragma once
// Where storages get their memory. Each device type registers one Allocator: StorageImpl asks it for
// memory (a DataPtr that carries its own deleter, so freeing needs no lookup) and for copies that
// involve its device. The CPU's is built in: 64-byte aligned blocks (one cache line, the widest
// AVX-512 load) with counters for ember.memory_stats(); huge or failed requests raise instead of
// aborting. A GPU backend registers its caching allocator (alloc/caching_allocator.h) the same way.
#include <cstddef>
#include <cstdint>

#include "ember/core/device.h"
#include "ember/core/macros.h"

namespace ember {

// Memory and how to give it back: deleter(ctx, data, nbytes) runs when the last storage goes.
struct DataPtr {
  using Deleter = void (*)(void* ctx, void* data, size_t nbytes);
  void* data = nullptr;
  void* ctx = nullptr;
  Deleter deleter = nullptr;
  Device device;
};

class EMBER_API Allocator {
 public:
  virtual ~Allocator() = default;
  // nbytes on this allocator's device (nbytes == 0 may give a null data pointer); raises when it
  // cannot (ErrorKind::Runtime with the size asked for).
  virtual DataPtr allocate(size_t nbytes) = 0;
  // The same on one device of this type (device.index; -1: the current one). The DataPtr's device
  // says where the memory is, index included (the CPU has none). Backends with one device need not
  // override it: their current device is device 0.
  virtual DataPtr allocate_on(size_t nbytes, Device device) {
    DataPtr p = allocate(nbytes);
    p.device = device;
    if (p.device.index < 0 && !p.device.is_cpu()) p.device.index = 0;
    return p;
  }
  // Copy nbytes from src to dst where one side is this allocator's device and the other is this
  // device or the CPU. Ordered with the current stream of the device (core/stream.h). Unless
  // non_blocking, the host side may be reused when it returns; with non_blocking a backend may
  // return before a copy from page-locked host memory has been read (the stream orders it).
  virtual void copy_data(void* dst, Device dst_device, const void* src, Device src_device, size_t nbytes,
                         bool non_blocking) = 0;
};

// The allocator for a device type: registered ones, or the built-in CPU allocator. Raises (as
// Device::check_available) when none is registered.
EMBER_API Allocator* get_allocator(DeviceType type);
EMBER_API bool allocator_registered(DeviceType type);
// Installs (or with nullptr removes) a device type's allocator; it must outlive its storages.
EMBER_API void register_allocator(DeviceType type, Allocator* allocator);
// Copy between any two devices: the non-CPU side's allocator does it.
EMBER_API void copy_bytes(void* dst, Device dst_device, const void* src, Device src_device, size_t nbytes,
                          bool non_blocking = false);

// ---- the CPU allocator's own entry points (also used by the profiler and memory_stats)
// The registered CPU allocator and the deleter of its blocks: StorageImpl calls them directly for CPU
// storages (no registry load, no virtual call on the per-op path).
EMBER_API Allocator* cpu_allocator();
EMBER_API void cpu_deleter(void* ctx, void* data, size_t nbytes);
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
