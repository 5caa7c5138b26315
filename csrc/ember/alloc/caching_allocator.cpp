// The caching allocator's policy (see caching_allocator.h). Blocks of one segment form a doubly
// linked list in address order; free blocks sit in their pool ordered by (stream, size, address),
// so the best fit for a stream is one lower_bound.
#include "ember/alloc/caching_allocator.h"

#include <algorithm>
#include <cstdio>
#include <deque>
#include <functional>
#include <limits>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <unordered_map>

namespace ember {

namespace {

struct Pool;

struct Block {
  char* ptr;
  size_t size;
  StreamId stream;
  Pool* pool;
  size_t requested_size = 0;
  bool allocated = false;
  int event_count = 0;                // events still to complete before reuse
  std::vector<StreamId> stream_uses;  // other streams that used it (record_stream)
  Block* prev = nullptr;              // neighbours inside the segment
  Block* next = nullptr;

  Block(char* p, size_t s, StreamId st, Pool* pl) : ptr(p), size(s), stream(st), pool(pl) {}
  bool is_split() const { return prev != nullptr || next != nullptr; }
};

struct BlockOrder {
  bool operator()(const Block* a, const Block* b) const {
    if (a->stream != b->stream) return a->stream < b->stream;
    if (a->size != b->size) return a->size < b->size;
    return std::less<char*>()(a->ptr, b->ptr);
  }
};

struct Pool {
  explicit Pool(StatPool k) : kind(k) {}
  std::set<Block*, BlockOrder> free_blocks;
  StatPool kind;
  // inactive_split changes of the current operation, applied at its end as one net change
  int64_t inactive_blocks_delta = 0;
  int64_t inactive_bytes_delta = 0;
};

void update(AllocatorStat& s, int64_t delta) {
  s.current += delta;
  if (delta > 0) s.allocated += delta;
  else s.freed -= delta;
  s.peak = std::max(s.peak, s.current);
}

void update(StatArray& a, StatPool pool, int64_t delta) {
  if (delta == 0) return;
  update(a[kAllPools], delta);
  update(a[pool], delta);
}

std::string format_bytes(size_t n) {
  char buf[64];
  const double d = static_cast<double>(n);
  if (n < (size_t(1) << 10)) std::snprintf(buf, sizeof buf, "%zu bytes", n);
  else if (n < (size_t(1) << 20)) std::snprintf(buf, sizeof buf, "%.2f KiB", d / (1 << 10));
  else if (n < (size_t(1) << 30)) std::snprintf(buf, sizeof buf, "%.2f MiB", d / (1 << 20));
  else std::snprintf(buf, sizeof buf, "%.2f GiB", d / (1 << 30));
  return buf;
}

// Beyond this, rounding would overflow; no device has that much memory anyway.
constexpr size_t kMaxRequest = std::numeric_limits<size_t>::max() / 2;

}  // namespace

struct CachingAllocator::Impl {
  explicit Impl(RawMemory& r) : raw(r) {}

  RawMemory& raw;
  mutable std::mutex mutex;
  Pool small_pool{kSmallPool};
  Pool large_pool{kLargePool};
  std::unordered_map<void*, Block*> allocated_blocks;
  // events recorded at free() on each stream, oldest first (a stream completes them in order)
  std::map<StreamId, std::deque<std::pair<void*, Block*>>> pending_events;
  DeviceStats stats;
  double fraction = 1.0;  // set_memory_fraction
  size_t limit = 0;       // fraction * the device's total bytes; 0: no cap

  void* malloc(size_t nbytes, StreamId stream);
  void free(Block* block);

  Block* take_free_block(Pool& pool, StreamId stream, size_t size);
  Block* new_segment(Pool& pool, StreamId stream, size_t alloc_size);
  void hand_out(Block* block, size_t size, size_t nbytes);
  void insert_free(Block* block);
  void erase_free(Block* block);
  void free_block(Block* block);
  void merge(Block* dst, Block* src);
  void flush_inactive(Pool& pool);

  void record_events(Block* block);
  void process_events();
  void synchronize_and_free_events();

  void release_segment(Block* block);
  bool release_available(Pool& pool, size_t alloc_size);
  void release_cached();
  [[noreturn]] void raise_oom(size_t nbytes);
};

size_t CachingAllocator::round_size(size_t nbytes) {
  if (nbytes < kMinBlockSize) return kMinBlockSize;
  return (nbytes + kMinBlockSize - 1) / kMinBlockSize * kMinBlockSize;
}

size_t CachingAllocator::segment_size(size_t size) {
  if (size <= kSmallSize) return kSmallBuffer;
  if (size < kMinLargeAlloc) return kLargeBuffer;
  return (size + kRoundLarge - 1) / kRoundLarge * kRoundLarge;
}

void* CachingAllocator::Impl::malloc(size_t nbytes, StreamId stream) {
  // blocks whose events completed since the last call become reusable first
  process_events();
  if (nbytes > kMaxRequest) raise_oom(nbytes);
  const size_t size = round_size(nbytes);
  Pool& pool = size <= kSmallSize ? small_pool : large_pool;
  const size_t alloc_size = segment_size(size);

  Block* block = take_free_block(pool, stream, size);
  if (!block) block = new_segment(pool, stream, alloc_size);
  // Out of device memory: first give back just enough cached segments of this pool, then wait for
  // pending events and give back every cached segment.
  if (!block && release_available(pool, alloc_size)) {
    stats.num_alloc_retries += 1;
    block = new_segment(pool, stream, alloc_size);
  }
  if (!block) {
    release_cached();
    stats.num_alloc_retries += 1;
    block = new_segment(pool, stream, alloc_size);
  }
  if (!block) raise_oom(nbytes);
  hand_out(block, size, nbytes);
  return block->ptr;
}

Block* CachingAllocator::Impl::take_free_block(Pool& pool, StreamId stream, size_t size) {
  Block key(nullptr, size, stream, &pool);
  auto it = pool.free_blocks.lower_bound(&key);
  if (it == pool.free_blocks.end() || (*it)->stream != stream) return nullptr;
  Block* block = *it;
  erase_free(block);
  return block;
}

Block* CachingAllocator::Impl::new_segment(Pool& pool, StreamId stream, size_t alloc_size) {
  if (limit && static_cast<size_t>(stats.reserved_bytes[kAllPools].current) + alloc_size > limit) return nullptr;
  auto block = std::make_unique<Block>(nullptr, alloc_size, stream, &pool);
  block->ptr = static_cast<char*>(raw.malloc(alloc_size));
  if (!block->ptr) return nullptr;
  stats.num_device_alloc += 1;
  update(stats.segment, pool.kind, 1);
  update(stats.reserved_bytes, pool.kind, static_cast<int64_t>(alloc_size));
  return block.release();
}

// Splits off the rest of `block` when it is worth keeping and marks the front allocated.
void CachingAllocator::Impl::hand_out(Block* block, size_t size, size_t nbytes) {
  Pool& pool = *block->pool;
  const size_t remaining = block->size - size;
  // a small remainder is still a usable small block; a large one under 1 MiB would only fragment
  const bool split = pool.kind == kSmallPool ? remaining >= kMinBlockSize : remaining > kSmallSize;
  if (split) {
    Block* rest = new Block(block->ptr + size, remaining, block->stream, &pool);
    rest->prev = block;
    rest->next = block->next;
    if (rest->next) rest->next->prev = rest;
    block->next = rest;
    block->size = size;
    insert_free(rest);
  }
  block->allocated = true;
  block->requested_size = nbytes;
  allocated_blocks.emplace(block->ptr, block);
  const auto bytes = static_cast<int64_t>(block->size);
  update(stats.allocation, pool.kind, 1);
  update(stats.allocated_bytes, pool.kind, bytes);
  update(stats.active, pool.kind, 1);
  update(stats.active_bytes, pool.kind, bytes);
  update(stats.requested_bytes, pool.kind, static_cast<int64_t>(nbytes));
  flush_inactive(pool);
}

void CachingAllocator::Impl::insert_free(Block* block) {
  block->pool->free_blocks.insert(block);
  if (block->is_split()) {
    block->pool->inactive_blocks_delta += 1;
    block->pool->inactive_bytes_delta += static_cast<int64_t>(block->size);
  }
}

void CachingAllocator::Impl::erase_free(Block* block) {
  block->pool->free_blocks.erase(block);
  if (block->is_split()) {
    block->pool->inactive_blocks_delta -= 1;
    block->pool->inactive_bytes_delta -= static_cast<int64_t>(block->size);
  }
}

void CachingAllocator::Impl::flush_inactive(Pool& pool) {
  update(stats.inactive_split, pool.kind, pool.inactive_blocks_delta);
  update(stats.inactive_split_bytes, pool.kind, pool.inactive_bytes_delta);
  pool.inactive_blocks_delta = 0;
  pool.inactive_bytes_delta = 0;
}

void CachingAllocator::Impl::free(Block* block) {
  block->allocated = false;
  update(stats.allocation, block->pool->kind, -1);
  update(stats.allocated_bytes, block->pool->kind, -static_cast<int64_t>(block->size));
  if (block->stream_uses.empty()) free_block(block);
  else record_events(block);
}

// The block is no longer used by any stream: back into its pool, merged with free neighbours.
void CachingAllocator::Impl::free_block(Block* block) {
  Pool& pool = *block->pool;
  const auto size = static_cast<int64_t>(block->size);
  const auto requested = static_cast<int64_t>(block->requested_size);
  block->requested_size = 0;
  merge(block, block->prev);
  merge(block, block->next);
  insert_free(block);
  update(stats.active, pool.kind, -1);
  update(stats.active_bytes, pool.kind, -size);
  update(stats.requested_bytes, pool.kind, -requested);
  flush_inactive(pool);
}

void CachingAllocator::Impl::merge(Block* dst, Block* src) {
  // only free blocks in the pool merge; one waiting for events is not free yet
  if (!src || src->allocated || src->event_count > 0 || !src->stream_uses.empty()) return;
  erase_free(src);
  if (dst->prev == src) {
    dst->ptr = src->ptr;
    dst->prev = src->prev;
    if (dst->prev) dst->prev->next = dst;
  } else {
    dst->next = src->next;
    if (dst->next) dst->next->prev = dst;
  }
  dst->size += src->size;
  delete src;
}

void CachingAllocator::Impl::record_events(Block* block) {
  std::vector<StreamId> streams;
  streams.swap(block->stream_uses);
  for (StreamId s : streams) {
    void* event = raw.event_record(s);
    block->event_count += 1;
    pending_events[s].emplace_back(event, block);
  }
}

void CachingAllocator::Impl::process_events() {
  for (auto it = pending_events.begin(); it != pending_events.end();) {
    auto& queue = it->second;
    while (!queue.empty()) {
      auto [event, block] = queue.front();
      if (!raw.event_query(event)) break;  // later events on this stream are not done either
      raw.event_destroy(event);
      queue.pop_front();
      if (--block->event_count == 0) free_block(block);
    }
    it = queue.empty() ? pending_events.erase(it) : std::next(it);
  }
}

void CachingAllocator::Impl::synchronize_and_free_events() {
  stats.num_sync_all_streams += 1;
  auto pending = std::move(pending_events);
  pending_events.clear();
  for (auto& [stream, queue] : pending) {
    for (auto& [event, block] : queue) {
      raw.event_synchronize(event);
      raw.event_destroy(event);
      if (--block->event_count == 0) free_block(block);
    }
  }
}

void CachingAllocator::Impl::release_segment(Block* block) {
  Pool& pool = *block->pool;
  pool.free_blocks.erase(block);
  raw.free(block->ptr, block->size);
  stats.num_device_free += 1;
  update(stats.segment, pool.kind, -1);
  update(stats.reserved_bytes, pool.kind, -static_cast<int64_t>(block->size));
  delete block;
}

// Gives back the smallest cached whole segment of `pool` that covers alloc_size, or else the
// largest ones until they cover it. True when anything was given back.
bool CachingAllocator::Impl::release_available(Pool& pool, size_t alloc_size) {
  std::vector<Block*> whole;
  for (Block* b : pool.free_blocks)
    if (!b->is_split()) whole.push_back(b);
  if (whole.empty()) return false;
  std::sort(whole.begin(), whole.end(), [](Block* a, Block* b) { return a->size > b->size; });
  auto covering = std::find_if(whole.rbegin(), whole.rend(), [&](Block* b) { return b->size >= alloc_size; });
  if (covering != whole.rend()) {
    release_segment(*covering);
    return true;
  }
  size_t released = 0;
  for (Block* b : whole) {
    if (released >= alloc_size) break;
    released += b->size;
    release_segment(b);
  }
  return true;
}

void CachingAllocator::Impl::release_cached() {
  synchronize_and_free_events();
  for (Pool* pool : {&large_pool, &small_pool}) {
    std::vector<Block*> whole;
    for (Block* b : pool->free_blocks)
      if (!b->is_split()) whole.push_back(b);
    for (Block* b : whole) release_segment(b);
  }
}

void CachingAllocator::Impl::raise_oom(size_t nbytes) {
  stats.num_ooms += 1;
  size_t device_free = 0, device_total = 0;
  raw.mem_info(&device_free, &device_total);
  const auto allocated = static_cast<size_t>(stats.allocated_bytes[kAllPools].current);
  const auto reserved = static_cast<size_t>(stats.reserved_bytes[kAllPools].current);
  const auto fragmented = static_cast<size_t>(stats.inactive_split_bytes[kAllPools].current);
  std::string msg = std::string(raw.backend_name()) + " out of memory. Tried to allocate " +
                    format_bytes(nbytes) + ". GPU " + std::to_string(raw.device_index()) +
                    " has a total capacity of " + format_bytes(device_total) + " of which " +
                    format_bytes(device_free) + " is free. Of the memory in use by this process, " +
                    format_bytes(allocated) + " is allocated by Ember, and " +
                    format_bytes(reserved - allocated) + " is reserved by Ember but unallocated";
  if (fragmented > 0)
    msg += " (" + format_bytes(fragmented) +
           " of it is fragmentation: free pieces of segments still partly in use, which go back to "
           "the device only once the rest of their segment is freed)";
  msg += ".";
  if (limit) {
    std::ostringstream f;
    f << fraction;
    msg += " The process's memory fraction (" + f.str() + ", set_per_process_memory_fraction) allows " +
           format_bytes(limit) + " to be reserved.";
  }
  throw OutOfMemoryError(msg);
}

CachingAllocator::CachingAllocator(RawMemory& raw) : impl_(std::make_unique<Impl>(raw)) {}

CachingAllocator::~CachingAllocator() {
  try {
    empty_cache();
  } catch (...) {
    // a failing backend at teardown: the memory goes with the process
  }
  // the Block records of segments still in use; their device memory stays with whoever holds it
  std::set<Block*> blocks;
  for (auto& [ptr, b] : impl_->allocated_blocks) blocks.insert(b);
  for (Pool* pool : {&impl_->small_pool, &impl_->large_pool})
    blocks.insert(pool->free_blocks.begin(), pool->free_blocks.end());
  for (auto& [stream, queue] : impl_->pending_events)
    for (auto& [event, b] : queue) blocks.insert(b);
  for (Block* b : blocks) delete b;
}

void* CachingAllocator::allocate(size_t nbytes, StreamId stream) {
  if (nbytes == 0) return nullptr;
  std::lock_guard<std::mutex> lock(impl_->mutex);
  return impl_->malloc(nbytes, stream);
}

void CachingAllocator::free(void* ptr) {
  if (!ptr) return;
  std::lock_guard<std::mutex> lock(impl_->mutex);
  auto it = impl_->allocated_blocks.find(ptr);
  EMBER_CHECK(it != impl_->allocated_blocks.end(), "CachingAllocator.free(): invalid device pointer ", ptr,
              " (not allocated by this allocator, or freed already)");
  Block* block = it->second;
  impl_->allocated_blocks.erase(it);
  impl_->free(block);
}

void CachingAllocator::record_stream(void* ptr, StreamId stream) {
  if (!ptr) return;
  std::lock_guard<std::mutex> lock(impl_->mutex);
  auto it = impl_->allocated_blocks.find(ptr);
  EMBER_CHECK(it != impl_->allocated_blocks.end(), "record_stream(): no allocated block found for pointer ",
              ptr, " (not allocated by this allocator, or freed already)");
  Block* block = it->second;
  if (stream == block->stream) return;  // ordered with its own stream already
  auto& uses = block->stream_uses;
  if (std::find(uses.begin(), uses.end(), stream) == uses.end()) uses.push_back(stream);
}

void CachingAllocator::empty_cache() {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  impl_->release_cached();
}

void CachingAllocator::set_memory_fraction(double fraction) {
  EMBER_CHECK_KIND(fraction >= 0 && fraction <= 1, Value, "Invalid fraction value: ", fraction,
                   ". Allowed range: 0~1");
  std::lock_guard<std::mutex> lock(impl_->mutex);
  size_t device_free = 0, device_total = 0;
  impl_->raw.mem_info(&device_free, &device_total);
  impl_->fraction = fraction;
  impl_->limit = fraction >= 1 ? 0 : std::max<size_t>(size_t(double(device_total) * fraction), 1);
}

double CachingAllocator::memory_fraction() const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  return impl_->fraction;
}

DeviceStats CachingAllocator::stats() const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  return impl_->stats;
}

void CachingAllocator::reset_peak_stats() {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  auto& s = impl_->stats;
  for (StatArray* a : {&s.allocation, &s.segment, &s.active, &s.inactive_split, &s.allocated_bytes,
                       &s.reserved_bytes, &s.active_bytes, &s.inactive_split_bytes, &s.requested_bytes})
    for (AllocatorStat& stat : *a) stat.peak = stat.current;
}

void CachingAllocator::reset_accumulated_stats() {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  auto& s = impl_->stats;
  for (StatArray* a : {&s.allocation, &s.segment, &s.active, &s.inactive_split, &s.allocated_bytes,
                       &s.reserved_bytes, &s.active_bytes, &s.inactive_split_bytes, &s.requested_bytes})
    for (AllocatorStat& stat : *a) stat.allocated = stat.freed = 0;
  s.num_alloc_retries = s.num_ooms = s.num_sync_all_streams = 0;
  s.num_device_alloc = s.num_device_free = 0;
}

std::vector<SegmentInfo> CachingAllocator::snapshot() const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  std::set<Block*, bool (*)(Block*, Block*)> heads(
      [](Block* a, Block* b) { return std::less<char*>()(a->ptr, b->ptr); });
  auto add_head = [&](Block* b) {
    while (b->prev) b = b->prev;
    heads.insert(b);
  };
  for (auto& [ptr, b] : impl_->allocated_blocks) add_head(b);
  for (Pool* pool : {&impl_->small_pool, &impl_->large_pool})
    for (Block* b : pool->free_blocks) add_head(b);
  for (auto& [stream, queue] : impl_->pending_events)
    for (auto& [event, b] : queue) add_head(b);

  std::vector<SegmentInfo> segments;
  for (Block* head : heads) {
    SegmentInfo seg;
    seg.address = reinterpret_cast<uintptr_t>(head->ptr);
    seg.stream = head->stream;
    seg.is_large = head->pool->kind == kLargePool;
    for (Block* b = head; b; b = b->next) {
      const bool active = b->allocated || b->event_count > 0;
      seg.blocks.push_back({b->size, b->requested_size, b->allocated, active});
      seg.total_size += b->size;
      if (b->allocated) seg.allocated_size += b->size;
      if (active) seg.active_size += b->size;
      seg.requested_size += b->requested_size;
    }
    segments.push_back(std::move(seg));
  }
  return segments;
}

RawMemory& CachingAllocator::raw() const { return impl_->raw; }

}  // namespace ember
