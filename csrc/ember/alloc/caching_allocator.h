#pragma once
// The device-independent caching allocator: PyTorch's CUDA caching policy over a raw-memory backend.
// A backend (CUDA: cudaMalloc/cudaFree/cudaEvent) implements RawMemory; CachingAllocator keeps the
// device allocations it made and hands pieces of them out again, so the steady state of a training
// loop makes no device allocation at all. One instance per device, one mutex per instance.
//
// The policy: requests round up to 512 bytes; requests <= 1 MiB come from the small pool (2 MiB
// segments), bigger ones from the large pool (20 MiB segments below 10 MiB, else rounded up to
// 2 MiB); best fit among the free blocks of the requesting stream; a block splits when the rest is
// worth keeping and merges with its free neighbours when freed. A block used on other streams
// (record_stream) is reused only once events recorded on those streams at free() have completed.
// When the device is full, cached segments go back to the device and the allocation is retried.
#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ember/core/error.h"
#include "ember/core/macros.h"

namespace ember {

using StreamId = int64_t;  // the backend's stream handle; 0 = the default stream

// What a device backend provides. Called with the allocator's mutex held.
struct RawMemory {
  virtual ~RawMemory() = default;
  virtual void* malloc(size_t nbytes) = 0;  // nullptr when the device is out of memory (no throw)
  virtual void free(void* ptr, size_t nbytes) = 0;
  virtual void mem_info(size_t* free_bytes, size_t* total_bytes) = 0;
  virtual void* event_record(StreamId stream) = 0;  // an event recorded now on `stream`
  virtual bool event_query(void* event) = 0;        // has it completed?
  virtual void event_synchronize(void* event) = 0;  // wait until it has completed
  virtual void event_destroy(void* event) = 0;
  virtual int device_index() const { return 0; }
  virtual const char* backend_name() const { return "CUDA"; }  // starts the out-of-memory message
};

// Out of device memory even after the cache was released; a RuntimeError for Python, which the
// binding layer can raise as ember.cuda.OutOfMemoryError by catching this type first.
class EMBER_API OutOfMemoryError : public Error {
 public:
  explicit OutOfMemoryError(const std::string& msg) : Error(ErrorKind::Runtime, msg) {}
};

// One statistic as PyTorch's memory_stats() reports it. `allocated`/`freed` accumulate the
// increases/decreases since the last reset_accumulated_stats().
struct AllocatorStat {
  int64_t current = 0;
  int64_t peak = 0;
  int64_t allocated = 0;
  int64_t freed = 0;
};
enum StatPool : int { kAllPools = 0, kSmallPool = 1, kLargePool = 2 };  // index into StatArray
using StatArray = std::array<AllocatorStat, 3>;

struct DeviceStats {
  StatArray allocation;            // blocks handed out by allocate()
  StatArray segment;               // device allocations held
  StatArray active;                // blocks allocated or waiting for their streams' events
  StatArray inactive_split;        // free blocks inside segments that are partly in use
  StatArray allocated_bytes;       // sizes (rounded) of the allocated blocks
  StatArray reserved_bytes;        // sizes of the segments
  StatArray active_bytes;
  StatArray inactive_split_bytes;  // the fragmentation: free but not returnable to the device
  StatArray requested_bytes;       // sizes as asked, before rounding
  int64_t num_alloc_retries = 0;   // device allocations retried after releasing the cache
  int64_t num_ooms = 0;            // out-of-memory errors raised
  int64_t num_sync_all_streams = 0;  // waits on every pending event (before releasing the cache)
  int64_t num_device_alloc = 0;    // RawMemory::malloc successes
  int64_t num_device_free = 0;     // RawMemory::free calls
};

// A segment (one device allocation) and its blocks in address order, for memory snapshots.
struct BlockInfo {
  size_t size = 0;
  size_t requested_size = 0;  // 0 unless active
  bool allocated = false;
  bool active = false;  // allocated, or freed but waiting for events
};
struct SegmentInfo {
  uintptr_t address = 0;
  size_t total_size = 0;
  StreamId stream = 0;
  bool is_large = false;
  size_t allocated_size = 0;
  size_t active_size = 0;
  size_t requested_size = 0;
  std::vector<BlockInfo> blocks;
};

class EMBER_API CachingAllocator {
 public:
  static constexpr size_t kMinBlockSize = 512;          // every size is a multiple of this
  static constexpr size_t kSmallSize = 1 << 20;         // the largest request of the small pool
  static constexpr size_t kSmallBuffer = 2 << 20;       // small pool segments
  static constexpr size_t kLargeBuffer = 20 << 20;      // large pool segments for requests < 10 MiB
  static constexpr size_t kMinLargeAlloc = 10 << 20;
  static constexpr size_t kRoundLarge = 2 << 20;        // larger requests round up to this

  explicit CachingAllocator(RawMemory& raw);
  // Returns the cached segments to the device. Segments still in use are left alone (kernels may
  // still be reading them), so free everything first.
  ~CachingAllocator();
  CachingAllocator(const CachingAllocator&) = delete;
  CachingAllocator& operator=(const CachingAllocator&) = delete;

  // nbytes == 0 gives nullptr. Throws OutOfMemoryError when the device cannot provide the memory.
  void* allocate(size_t nbytes, StreamId stream = 0);
  void free(void* ptr);  // nullptr is a no-op; a pointer not from allocate() raises
  // `ptr` is used on `stream` too: its memory is not reused before that stream's work queued up to
  // free() has finished.
  void record_stream(void* ptr, StreamId stream);
  // Waits for pending events, then returns every free unsplit segment to the device.
  void empty_cache();

  // Caps this process's reserved memory at `fraction` of the device's total (PyTorch's
  // set_per_process_memory_fraction): a segment past the cap is treated as the device being out of
  // memory (cached segments are released and the request retried, then OutOfMemoryError). 1 lifts it.
  void set_memory_fraction(double fraction);
  double memory_fraction() const;

  DeviceStats stats() const;
  void reset_peak_stats();         // peaks := current values
  void reset_accumulated_stats();  // allocated/freed and the num_* counters := 0
  std::vector<SegmentInfo> snapshot() const;  // sorted by address
  RawMemory& raw() const;

  static size_t round_size(size_t nbytes);        // the block size serving a request
  static size_t segment_size(size_t block_size);  // the device allocation made for a block size

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ember
