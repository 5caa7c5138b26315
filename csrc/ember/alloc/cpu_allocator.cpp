#include <atomic>
#include <cstring>
#include <cstdlib>
#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "ember/alloc/allocator.h"
#include "ember/core/error.h"

namespace ember {

namespace {
constexpr size_t kAlignment = 64;
std::atomic<int64_t> g_allocated{0}, g_peak{0}, g_count{0}, g_frees{0}, g_total_alloc{0}, g_total_freed{0};
std::atomic<AllocObserver> g_observer{nullptr};
}  // namespace

// Large blocks (>= 1 MiB) are kept after they are freed, up to a byte budget, and handed back to
// the next request of the same rounded size: a training step allocates the same sizes every
// iteration, and a fresh large block costs a page fault per 4 KiB on first touch (an out-of-place
// add on 64 MiB tensors ran at half the memory bandwidth). Tensors are still freed at once; only
// the pages stay with the process. EMBER_CPU_CACHE_MB sets the budget (0 disables it).
namespace {
constexpr size_t kCacheMin = size_t(1) << 20, kPage = 4096;
struct BlockCache {
  std::mutex mu;
  std::map<size_t, std::vector<void*>> free_blocks;  // rounded size -> blocks
  std::deque<std::pair<size_t, void*>> order;         // oldest first, for eviction
  size_t held = 0;
  size_t budget = [] {
#ifdef EMBER_NO_ALLOC_CACHE  // sanitizer builds: every free reaches free(), so ASan sees use-after-free
    return size_t(0);
#endif
    const char* e = std::getenv("EMBER_CPU_CACHE_MB");
    return (e && *e ? size_t(std::strtoull(e, nullptr, 10)) : size_t(256)) << 20;
  }();

  void* take(size_t rounded) {
    std::lock_guard<std::mutex> lock(mu);
    auto it = free_blocks.find(rounded);
    if (it == free_blocks.end() || it->second.empty()) return nullptr;
    void* p = it->second.back();
    it->second.pop_back();
    held -= rounded;
    for (auto o = order.begin(); o != order.end(); ++o)
      if (o->second == p) { order.erase(o); break; }
    return p;
  }
  bool put(void* p, size_t rounded) {
    if (rounded > budget) return false;
    std::vector<void*> evicted;
    {
      std::lock_guard<std::mutex> lock(mu);
      while (held + rounded > budget && !order.empty()) {
        auto [sz, q] = order.front();
        order.pop_front();
        auto& v = free_blocks[sz];
        for (auto b = v.begin(); b != v.end(); ++b)
          if (*b == q) { v.erase(b); break; }
        held -= sz;
        evicted.push_back(q);
      }
      free_blocks[rounded].push_back(p);
      order.emplace_back(rounded, p);
      held += rounded;
    }
    for (void* q : evicted) std::free(q);
    return true;
  }
  void clear() {
    std::lock_guard<std::mutex> lock(mu);
    for (auto& [sz, v] : free_blocks)
      for (void* q : v) std::free(q);
    free_blocks.clear();
    order.clear();
    held = 0;
  }
};
BlockCache& block_cache() {
  static BlockCache* c = new BlockCache();  // never destroyed: storages may be freed during exit
  return *c;
}
size_t round_size(size_t nbytes) {
  return nbytes >= kCacheMin ? (nbytes + kPage - 1) & ~(kPage - 1) : (nbytes + kAlignment - 1) & ~(kAlignment - 1);
}
}  // namespace

// Tiny blocks (<= 512 bytes: scalars, small shapes) recycle through a per-thread free list: the
// per-op cost of 1-element tensors was ~10% aligned_alloc/free. Any thread may reuse a block another
// freed (they are all plain aligned_alloc blocks); a thread's list is released when it exits.
namespace {
constexpr size_t kTinyMax = 512, kTinyClasses = kTinyMax / kAlignment, kTinyDepth = 32;
struct TinyCache {  // trivially destructible: usable (as "off") even after its thread's drain ran
  void* blocks[kTinyClasses][kTinyDepth];
  int count[kTinyClasses];
  bool off;
};
thread_local TinyCache t_tiny{};
struct TinyDrain {
  bool armed = false;
  ~TinyDrain() {  // at thread exit: release the blocks, and stop caching (later frees go to free())
    t_tiny.off = true;
    for (size_t c = 0; c < kTinyClasses; c++) {
      for (int i = 0; i < t_tiny.count[c]; i++) std::free(t_tiny.blocks[c][i]);
      t_tiny.count[c] = 0;
    }
  }
};
thread_local TinyDrain t_drain;
inline bool tiny_on() {
#ifdef EMBER_NO_ALLOC_CACHE
  return false;
#endif
  if (t_tiny.off) return false;
  t_drain.armed = true;  // constructs this thread's drain on first use
  return true;
}
}  // namespace

void cpu_empty_cache() { block_cache().clear(); }
int64_t cpu_cached_bytes() {
  BlockCache& c = block_cache();
  std::lock_guard<std::mutex> lock(c.mu);
  return int64_t(c.held);
}

void* cpu_alloc(size_t nbytes) {
  if (nbytes == 0) return nullptr;
  // Refuse requests no machine can satisfy before asking the OS (which may overcommit).
  EMBER_CHECK(nbytes < (size_t(1) << 47), "DefaultCPUAllocator: not enough memory: you tried to allocate ",
              nbytes, " bytes.");
  size_t rounded = round_size(nbytes);
  void* p = nullptr;
  if (rounded <= kTinyMax && tiny_on()) {
    size_t c = rounded / kAlignment - 1;
    if (t_tiny.count[c] > 0) p = t_tiny.blocks[c][--t_tiny.count[c]];
  } else if (rounded >= kCacheMin) {
    p = block_cache().take(rounded);
  }
  if (!p) p = std::aligned_alloc(kAlignment, rounded);
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
  size_t rounded = round_size(nbytes);
  if (rounded <= kTinyMax && tiny_on() && t_tiny.count[rounded / kAlignment - 1] < int(kTinyDepth)) {
    size_t c = rounded / kAlignment - 1;
    t_tiny.blocks[c][t_tiny.count[c]++] = ptr;
  } else if (rounded < kCacheMin || !block_cache().put(ptr, rounded)) {
    std::free(ptr);
  }
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

// ---- the registry of allocators by device type, with the CPU's built in
namespace ember {

namespace {
class CpuAllocator final : public Allocator {
 public:
  DataPtr allocate(size_t nbytes) override {
    return {cpu_alloc(nbytes), nullptr, &cpu_deleter, Device()};
  }
  void copy_data(void* dst, Device, const void* src, Device, size_t nbytes, bool) override {
    if (nbytes) std::memcpy(dst, src, nbytes);
  }
};
CpuAllocator g_cpu_allocator;
// The meta device's storages record a size and hold no memory; copies to and from meta tensors are
// resolved in copy_ (ops/copy.cpp) before they could get here.
class MetaAllocator final : public Allocator {
 public:
  DataPtr allocate(size_t) override { return {nullptr, nullptr, nullptr, Device(DeviceType::Meta)}; }
  DataPtr allocate_on(size_t nbytes, Device) override { return allocate(nbytes); }
  void copy_data(void*, Device, const void*, Device, size_t, bool) override {
    EMBER_FAIL(NotImplemented, "Cannot copy out of meta tensor; no data!");
  }
};
MetaAllocator g_meta_allocator;
std::atomic<Allocator*> g_allocators[kNumDeviceTypes] = {{&g_cpu_allocator}, {nullptr}, {nullptr}, {&g_meta_allocator}};
}  // namespace

Allocator* cpu_allocator() { return &g_cpu_allocator; }
void cpu_deleter(void*, void* data, size_t nbytes) { cpu_free(data, nbytes); }

bool allocator_registered(DeviceType type) {
  return g_allocators[int(type)].load(std::memory_order_acquire) != nullptr;
}

Allocator* get_allocator(DeviceType type) {
  Allocator* a = g_allocators[int(type)].load(std::memory_order_acquire);
  if (EMBER_UNLIKELY(!a)) {
    Device(type).check_available();  // raises PyTorch's error for the type, or registers (CUDA)
    a = g_allocators[int(type)].load(std::memory_order_acquire);
    EMBER_CHECK(a, "no allocator is registered for device type '", device_type_name(type), "'");
  }
  return a;
}

void register_allocator(DeviceType type, Allocator* allocator) {
  EMBER_CHECK(type != DeviceType::CPU || allocator, "register_allocator: the CPU allocator cannot be removed");
  g_allocators[int(type)].store(allocator, std::memory_order_release);
}

void copy_bytes(void* dst, Device dst_device, const void* src, Device src_device, size_t nbytes, bool non_blocking) {
  EMBER_CHECK(dst_device.is_cpu() || src_device.is_cpu() || dst_device.type == src_device.type,
              "copy between ", src_device, " and ", dst_device, " must go through the CPU");
  Device side = dst_device.is_cpu() ? src_device : dst_device;
  get_allocator(side.type)->copy_data(dst, dst_device, src, src_device, nbytes, non_blocking);
}

}  // namespace ember
