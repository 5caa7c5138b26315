// The caching allocator's policy on host memory: a counting RawMemory with a capacity (to reach the
// out-of-memory paths) and fake events that complete when the test says so.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <map>
#include <thread>
#include <vector>

#include "ember/alloc/caching_allocator.h"
#include "error_kind.h"

using namespace ember;

namespace {

constexpr size_t KiB = 1024;
constexpr size_t MiB = 1024 * 1024;

struct FakeEvent {
  StreamId stream;
  bool done = false;
};

class FakeRaw : public RawMemory {
 public:
  explicit FakeRaw(size_t capacity, int device = 0) : capacity_(capacity), device_(device) {}
  ~FakeRaw() override {
    for (auto& [p, n] : live_) std::free(p);
    for (FakeEvent* e : events_) delete e;
  }

  void* malloc(size_t nbytes) override {
    if (used_ + nbytes > capacity_) {
      failed_mallocs += 1;
      return nullptr;
    }
    void* p = std::malloc(nbytes);
    used_ += nbytes;
    live_[p] = nbytes;
    return p;
  }
  void free(void* ptr, size_t nbytes) override {
    auto it = live_.find(ptr);
    ASSERT_NE(it, live_.end()) << "freeing memory the fake did not hand out";
    EXPECT_EQ(it->second, nbytes) << "freed with another size than allocated";
    used_ -= it->second;
    live_.erase(it);
    std::free(ptr);
  }
  void mem_info(size_t* free_bytes, size_t* total_bytes) override {
    *free_bytes = capacity_ - used_;
    *total_bytes = capacity_;
  }
  void* event_record(StreamId stream) override {
    events_.push_back(new FakeEvent{stream});
    return events_.back();
  }
  bool event_query(void* event) override { return static_cast<FakeEvent*>(event)->done; }
  void event_synchronize(void* event) override {
    syncs += 1;
    static_cast<FakeEvent*>(event)->done = true;
  }
  void event_destroy(void* event) override {
    auto it = std::find(events_.begin(), events_.end(), static_cast<FakeEvent*>(event));
    ASSERT_NE(it, events_.end()) << "destroying an unknown event";
    delete *it;
    events_.erase(it);
  }
  int device_index() const override { return device_; }

  // the work queued on `stream` so far has finished
  void complete(StreamId stream) {
    for (FakeEvent* e : events_)
      if (e->stream == stream) e->done = true;
  }
  size_t live_events() const { return events_.size(); }
  std::vector<size_t> segment_sizes() const {
    std::vector<size_t> sizes;
    for (auto& [p, n] : live_) sizes.push_back(n);
    std::sort(sizes.begin(), sizes.end());
    return sizes;
  }
  size_t used() const { return used_; }

  int64_t failed_mallocs = 0;
  int64_t syncs = 0;

 private:
  size_t capacity_;
  int device_;
  size_t used_ = 0;
  std::map<void*, size_t> live_;
  std::vector<FakeEvent*> events_;
};

char* at(void* p, size_t offset) { return static_cast<char*>(p) + offset; }
int64_t i64(size_t n) { return static_cast<int64_t>(n); }

}  // namespace

TEST(CachingAllocator, RoundsSizesAndPicksSegmentSizes) {
  EXPECT_EQ(CachingAllocator::round_size(1), 512u);
  EXPECT_EQ(CachingAllocator::round_size(512), 512u);
  EXPECT_EQ(CachingAllocator::round_size(513), 1024u);
  EXPECT_EQ(CachingAllocator::round_size(3 * MiB + 1), 3 * MiB + 512);
  EXPECT_EQ(CachingAllocator::segment_size(512), 2 * MiB);
  EXPECT_EQ(CachingAllocator::segment_size(MiB), 2 * MiB);
  EXPECT_EQ(CachingAllocator::segment_size(MiB + 512), 20 * MiB);
  EXPECT_EQ(CachingAllocator::segment_size(10 * MiB - 512), 20 * MiB);
  EXPECT_EQ(CachingAllocator::segment_size(10 * MiB), 10 * MiB);
  EXPECT_EQ(CachingAllocator::segment_size(11 * MiB), 12 * MiB);

  FakeRaw raw(1024 * MiB);
  CachingAllocator alloc(raw);
  void* p = alloc.allocate(1);
  DeviceStats s = alloc.stats();
  EXPECT_EQ(s.allocated_bytes[kAllPools].current, 512);
  EXPECT_EQ(s.requested_bytes[kAllPools].current, 1);
  EXPECT_EQ(s.reserved_bytes[kAllPools].current, i64(2 * MiB));
  EXPECT_EQ(raw.segment_sizes(), std::vector<size_t>({2 * MiB}));
  alloc.free(p);
}

TEST(CachingAllocator, SmallAndLargePools) {
  auto segments_for = [](size_t nbytes) {
    FakeRaw raw(1024 * MiB);
    CachingAllocator alloc(raw);
    void* p = alloc.allocate(nbytes);
    auto sizes = raw.segment_sizes();
    alloc.free(p);
    return sizes;
  };
  EXPECT_EQ(segments_for(MiB), std::vector<size_t>({2 * MiB}));
  EXPECT_EQ(segments_for(MiB + 1), std::vector<size_t>({20 * MiB}));
  EXPECT_EQ(segments_for(10 * MiB), std::vector<size_t>({10 * MiB}));
  EXPECT_EQ(segments_for(11 * MiB + 1), std::vector<size_t>({12 * MiB}));

  FakeRaw raw(1024 * MiB);
  CachingAllocator alloc(raw);
  void* small = alloc.allocate(MiB);  // the largest small request
  void* large = alloc.allocate(MiB + 1);
  void* ten = alloc.allocate(10 * MiB);  // best fit: the rest of the 20 MiB segment
  EXPECT_EQ(ten, at(large, MiB + 512));
  void* eleven = alloc.allocate(11 * MiB + 1);  // does not fit in the 9 MiB left: a 12 MiB segment
  DeviceStats s = alloc.stats();
  EXPECT_EQ(s.allocated_bytes[kSmallPool].current, i64(MiB));
  // the 12 MiB segment is not split: 1 MiB - 512 left is too little for the large pool
  EXPECT_EQ(s.allocated_bytes[kLargePool].current, i64((MiB + 512) + 10 * MiB + 12 * MiB));
  EXPECT_EQ(s.requested_bytes[kLargePool].current, i64((MiB + 1) + 10 * MiB + (11 * MiB + 1)));
  EXPECT_EQ(s.reserved_bytes[kSmallPool].current, i64(2 * MiB));
  EXPECT_EQ(s.reserved_bytes[kLargePool].current, i64(20 * MiB + 12 * MiB));
  EXPECT_EQ(s.segment[kSmallPool].current, 1);
  EXPECT_EQ(s.segment[kLargePool].current, 2);
  EXPECT_EQ(s.segment[kAllPools].current, 3);
  EXPECT_EQ(raw.segment_sizes(), std::vector<size_t>({2 * MiB, 12 * MiB, 20 * MiB}));

  // the cached small segment does not serve a large request: the large segment's rest does
  alloc.free(small);
  void* large2 = alloc.allocate(MiB + MiB / 2);
  EXPECT_EQ(large2, at(ten, 10 * MiB));
  EXPECT_EQ(alloc.stats().num_device_alloc, 3);
  for (void* p : {large, ten, eleven, large2}) alloc.free(p);
}

TEST(CachingAllocator, SplitsAndMergesSmallBlocks) {
  FakeRaw raw(1024 * MiB);
  CachingAllocator alloc(raw);
  void* a = alloc.allocate(1000);
  void* b = alloc.allocate(1000);
  void* c = alloc.allocate(1000);
  EXPECT_EQ(b, at(a, 1024));
  EXPECT_EQ(c, at(b, 1024));
  EXPECT_EQ(alloc.stats().num_device_alloc, 1);
  EXPECT_EQ(alloc.stats().inactive_split[kAllPools].current, 1);
  EXPECT_EQ(alloc.stats().inactive_split_bytes[kAllPools].current, i64(2 * MiB - 3 * 1024));

  alloc.free(b);  // a hole between two allocated blocks
  EXPECT_EQ(alloc.stats().inactive_split[kAllPools].current, 2);
  EXPECT_EQ(alloc.stats().inactive_split_bytes[kAllPools].current, i64(2 * MiB - 2 * 1024));
  alloc.free(a);  // merges with b's block
  EXPECT_EQ(alloc.stats().inactive_split[kAllPools].current, 2);
  auto snap = alloc.snapshot();
  ASSERT_EQ(snap.size(), 1u);
  ASSERT_EQ(snap[0].blocks.size(), 3u);
  EXPECT_EQ(snap[0].blocks[0].size, 2048u);
  EXPECT_FALSE(snap[0].blocks[0].allocated);
  EXPECT_TRUE(snap[0].blocks[1].allocated);
  EXPECT_EQ(snap[0].allocated_size, 1024u);
  EXPECT_EQ(snap[0].requested_size, 1000u);
  alloc.free(c);  // everything coalesces back into the whole segment
  EXPECT_EQ(alloc.stats().inactive_split[kAllPools].current, 0);
  EXPECT_EQ(alloc.stats().inactive_split_bytes[kAllPools].current, 0);
  snap = alloc.snapshot();
  ASSERT_EQ(snap.size(), 1u);
  ASSERT_EQ(snap[0].blocks.size(), 1u);
  EXPECT_EQ(snap[0].blocks[0].size, 2 * MiB);
  EXPECT_EQ(snap[0].address, reinterpret_cast<uintptr_t>(a));

  // a remainder of exactly 512 bytes is kept as its own block
  void* d = alloc.allocate(MiB);
  void* e = alloc.allocate(MiB - 512);
  void* f = alloc.allocate(512);
  EXPECT_EQ(d, a);
  EXPECT_EQ(e, at(a, MiB));
  EXPECT_EQ(f, at(e, MiB - 512));
  EXPECT_EQ(alloc.snapshot()[0].blocks.size(), 3u);
  EXPECT_EQ(alloc.stats().num_device_alloc, 1);
  for (void* p : {d, e, f}) alloc.free(p);
}

TEST(CachingAllocator, LargeBlocksSplitOnlyWhenTheRestExceedsOneMiB) {
  FakeRaw raw(1024 * MiB);
  CachingAllocator alloc(raw);
  void* x = alloc.allocate(19 * MiB);  // a 20 MiB segment; 1 MiB left is not worth a block
  DeviceStats s = alloc.stats();
  EXPECT_EQ(s.allocated_bytes[kLargePool].current, i64(20 * MiB));
  EXPECT_EQ(s.requested_bytes[kLargePool].current, i64(19 * MiB));
  EXPECT_EQ(s.inactive_split[kLargePool].current, 0);
  alloc.free(x);
  void* y = alloc.allocate(19 * MiB - 512);  // the cached segment, leaving 1 MiB + 512: split
  EXPECT_EQ(y, x);
  s = alloc.stats();
  EXPECT_EQ(s.allocated_bytes[kLargePool].current, i64(19 * MiB - 512));
  EXPECT_EQ(s.inactive_split_bytes[kLargePool].current, i64(MiB + 512));
  EXPECT_EQ(s.num_device_alloc, 1);
  alloc.free(y);
}

TEST(CachingAllocator, SteadyStateMakesNoDeviceAllocations) {
  FakeRaw raw(1024 * MiB);
  CachingAllocator alloc(raw);
  const std::vector<size_t> param_sizes = {4 * MiB, 300 * KiB, 64 * KiB, 12 * MiB + 7};
  const std::vector<size_t> activation_sizes = {3 * MiB, 700 * KiB, 5 * KiB, 25 * MiB, MiB + MiB / 2, 100};
  std::vector<void*> params;
  for (size_t n : param_sizes) params.push_back(alloc.allocate(n));

  auto iteration = [&] {
    std::vector<void*> acts;
    for (size_t n : activation_sizes) {
      acts.push_back(alloc.allocate(n));
      alloc.free(alloc.allocate(n / 3 + 1));  // a temporary inside the op
    }
    std::vector<void*> grads;
    for (auto it = acts.rbegin(); it != acts.rend(); ++it) {
      alloc.free(*it);  // backward frees activations last to first...
      grads.push_back(alloc.allocate(param_sizes[grads.size() % param_sizes.size()]));
    }
    for (void* g : grads) alloc.free(g);  // ...and the optimizer step drops the gradients
  };
  iteration();
  const DeviceStats first = alloc.stats();
  EXPECT_GE(first.num_device_alloc, 3);
  for (int i = 0; i < 99; ++i) iteration();
  const DeviceStats last = alloc.stats();
  EXPECT_EQ(last.num_device_alloc, first.num_device_alloc);
  EXPECT_EQ(last.num_device_free, 0);
  EXPECT_EQ(last.reserved_bytes[kAllPools].current, first.reserved_bytes[kAllPools].current);
  EXPECT_EQ(last.allocation[kAllPools].current, 4);
  EXPECT_EQ(last.allocation[kAllPools].allocated, i64(4 + 100 * (6 * 2 + 6)));
  for (void* p : params) alloc.free(p);
}

TEST(CachingAllocator, BlocksStayWithTheirStream) {
  for (auto [owner, other] : {std::pair<StreamId, StreamId>{1, 2}, {2, 1}}) {
    FakeRaw raw(1024 * MiB);
    CachingAllocator alloc(raw);
    void* p = alloc.allocate(4096, owner);
    alloc.free(p);
    void* q = alloc.allocate(4096, other);  // the owner's cached block is not handed over
    EXPECT_NE(q, p);
    EXPECT_EQ(alloc.stats().num_device_alloc, 2);
    void* r = alloc.allocate(4096, owner);
    EXPECT_EQ(r, p);
    EXPECT_EQ(alloc.stats().num_device_alloc, 2);
    auto snap = alloc.snapshot();
    ASSERT_EQ(snap.size(), 2u);
    std::vector<StreamId> streams = {snap[0].stream, snap[1].stream};
    std::sort(streams.begin(), streams.end());
    EXPECT_EQ(streams, std::vector<StreamId>({1, 2}));
    alloc.free(q);
    alloc.free(r);
  }
}

TEST(CachingAllocator, RecordStreamDefersReuseUntilEventsComplete) {
  FakeRaw raw(1024 * MiB);
  CachingAllocator alloc(raw);
  void* p = alloc.allocate(MiB, 0);
  alloc.record_stream(p, 0);  // its own stream: nothing to wait for
  alloc.record_stream(p, 7);
  alloc.record_stream(p, 8);
  alloc.record_stream(p, 7);
  alloc.free(p);
  EXPECT_EQ(raw.live_events(), 2u);
  DeviceStats s = alloc.stats();
  EXPECT_EQ(s.allocated_bytes[kAllPools].current, 0);
  EXPECT_EQ(s.active[kAllPools].current, 1);
  EXPECT_EQ(s.active_bytes[kAllPools].current, i64(MiB));

  void* q = alloc.allocate(MiB, 0);  // the rest of the segment; p's block is still in use
  EXPECT_EQ(q, at(p, MiB));
  alloc.free(q);
  EXPECT_EQ(alloc.snapshot()[0].blocks.size(), 2u);  // q's block cannot merge with a busy block
  raw.complete(7);
  void* q2 = alloc.allocate(MiB, 0);  // stream 8 has not caught up yet
  EXPECT_EQ(q2, q);
  EXPECT_EQ(raw.live_events(), 1u);
  alloc.free(q2);
  raw.complete(8);
  void* q3 = alloc.allocate(MiB, 0);
  EXPECT_EQ(q3, p);
  EXPECT_EQ(raw.live_events(), 0u);
  s = alloc.stats();
  EXPECT_EQ(s.num_device_alloc, 1);
  EXPECT_EQ(s.active[kAllPools].current, 1);
  EXPECT_EQ(s.num_sync_all_streams, 0);
  alloc.free(q3);
}

TEST(CachingAllocator, OutOfMemoryReleasesCachedSegmentsOfThePoolAndRetries) {
  FakeRaw raw(40 * MiB);
  CachingAllocator alloc(raw);
  alloc.free(alloc.allocate(25 * MiB));  // 26 MiB cached
  void* p = alloc.allocate(30 * MiB);    // does not fit next to the cache
  ASSERT_NE(p, nullptr);
  DeviceStats s = alloc.stats();
  EXPECT_EQ(raw.failed_mallocs, 1);
  EXPECT_EQ(s.num_alloc_retries, 1);
  EXPECT_EQ(s.num_device_alloc, 2);
  EXPECT_EQ(s.num_device_free, 1);
  EXPECT_EQ(s.num_ooms, 0);
  EXPECT_EQ(s.num_sync_all_streams, 0);
  EXPECT_EQ(s.reserved_bytes[kAllPools].current, i64(30 * MiB));
  EXPECT_EQ(raw.segment_sizes(), std::vector<size_t>({30 * MiB}));
  alloc.free(p);
}

TEST(CachingAllocator, OutOfMemoryReleasesJustEnoughOfThePool) {
  auto setup = [](FakeRaw& raw, CachingAllocator& alloc) {
    void* hold = alloc.allocate(30 * MiB, 0);
    std::vector<void*> cached = {alloc.allocate(14 * MiB, 1), alloc.allocate(12 * MiB, 1),
                                 alloc.allocate(10 * MiB, 1)};
    for (void* p : cached) alloc.free(p);
    EXPECT_EQ(raw.used(), 66 * MiB);
    return hold;
  };
  {
    // no cached segment covers 24 MiB: the largest go back until they do (14 + 12), the 10 stays
    FakeRaw raw(70 * MiB);
    CachingAllocator alloc(raw);
    void* hold = setup(raw, alloc);
    void* p = alloc.allocate(24 * MiB, 1);
    EXPECT_EQ(alloc.stats().num_device_free, 2);
    EXPECT_EQ(alloc.stats().num_alloc_retries, 1);
    EXPECT_EQ(raw.segment_sizes(), std::vector<size_t>({10 * MiB, 24 * MiB, 30 * MiB}));
    alloc.free(p);
    alloc.free(hold);
  }
  {
    // stream 2 cannot use stream 1's blocks, but the smallest segment that covers the request goes
    FakeRaw raw(70 * MiB);
    CachingAllocator alloc(raw);
    void* hold = setup(raw, alloc);
    void* p = alloc.allocate(11 * MiB, 2);
    EXPECT_EQ(alloc.stats().num_device_free, 1);
    EXPECT_EQ(raw.segment_sizes(), std::vector<size_t>({10 * MiB, 12 * MiB, 14 * MiB, 30 * MiB}));
    EXPECT_EQ(alloc.snapshot().size(), 4u);
    alloc.free(p);
    alloc.free(hold);
  }
}

TEST(CachingAllocator, OutOfMemoryReleasesTheWholeCacheAndRetries) {
  FakeRaw raw(24 * MiB);
  CachingAllocator alloc(raw);
  std::vector<void*> small;
  for (int i = 0; i < 10; ++i) small.push_back(alloc.allocate(MiB));
  for (void* p : small) alloc.free(p);
  EXPECT_EQ(alloc.stats().reserved_bytes[kSmallPool].current, i64(10 * MiB));
  void* p = alloc.allocate(15 * MiB);  // the large pool has nothing to give back; the small one has
  DeviceStats s = alloc.stats();
  EXPECT_EQ(s.num_alloc_retries, 1);
  EXPECT_EQ(s.num_sync_all_streams, 1);
  EXPECT_EQ(s.num_device_free, 5);
  EXPECT_EQ(s.reserved_bytes[kAllPools].current, i64(16 * MiB));
  EXPECT_EQ(s.reserved_bytes[kSmallPool].current, 0);
  alloc.free(p);

  // a block waiting for another stream is waited for before its segment goes back
  FakeRaw raw2(24 * MiB);
  CachingAllocator alloc2(raw2);
  void* busy = alloc2.allocate(12 * MiB, 0);
  alloc2.record_stream(busy, 3);
  alloc2.free(busy);
  void* q = alloc2.allocate(14 * MiB, 0);
  EXPECT_EQ(raw2.syncs, 1);
  EXPECT_EQ(raw2.live_events(), 0u);
  EXPECT_EQ(alloc2.stats().num_device_free, 1);
  EXPECT_EQ(alloc2.stats().active[kAllPools].current, 1);
  alloc2.free(q);
}

TEST(CachingAllocator, OutOfMemoryErrorSaysWhatWasAskedAndWhereTheMemoryIs) {
  FakeRaw raw(64 * MiB, /*device=*/3);
  CachingAllocator alloc(raw);
  void* a = alloc.allocate(30 * MiB);
  void* b = alloc.allocate(MiB);  // half of a small segment: 1 MiB of fragmentation
  std::string msg;
  try {
    alloc.allocate(40 * MiB);
    FAIL() << "expected an out-of-memory error";
  } catch (const OutOfMemoryError& e) {
    msg = e.what();
    EXPECT_EQ(e.kind(), ErrorKind::Runtime);
  }
  EXPECT_NE(msg.find("CUDA out of memory. Tried to allocate 40.00 MiB."), std::string::npos) << msg;
  EXPECT_NE(msg.find("GPU 3 has a total capacity of 64.00 MiB of which 32.00 MiB is free."), std::string::npos)
      << msg;
  EXPECT_NE(msg.find("31.00 MiB is allocated by Ember, and 1.00 MiB is reserved by Ember but unallocated"),
            std::string::npos)
      << msg;
  EXPECT_NE(msg.find("(1.00 MiB of it is fragmentation: free pieces of segments still partly in use"), std::string::npos)
      << msg;
  DeviceStats s = alloc.stats();
  EXPECT_EQ(s.num_ooms, 1);
  EXPECT_EQ(s.num_alloc_retries, 1);
  EXPECT_EQ(s.allocated_bytes[kAllPools].current, i64(31 * MiB));
  EXPECT_EQ(s.reserved_bytes[kAllPools].current, i64(32 * MiB));

  // beyond any device, without overflowing the size arithmetic
  EXPECT_EQ(test_util::error_kind([&] { alloc.allocate(SIZE_MAX); }), ErrorKind::Runtime);
  EXPECT_THROW(alloc.allocate(SIZE_MAX - 100), OutOfMemoryError);
  EXPECT_EQ(alloc.stats().num_ooms, 3);

  // the allocator is still consistent and serves what fits
  void* c = alloc.allocate(20 * MiB);
  EXPECT_NE(c, nullptr);
  for (void* p : {a, b, c}) alloc.free(p);
  alloc.empty_cache();
  EXPECT_EQ(raw.used(), 0u);
  EXPECT_EQ(alloc.stats().reserved_bytes[kAllPools].current, 0);
}

TEST(CachingAllocator, EmptyCacheReleasesFreeUnsplitSegments) {
  FakeRaw raw(1024 * MiB);
  CachingAllocator alloc(raw);
  void* a = alloc.allocate(1000);
  void* b = alloc.allocate(1000);
  void* c = alloc.allocate(5 * MiB);
  void* d = alloc.allocate(16 * MiB);  // more than the 15 MiB left in c's segment
  alloc.free(a);  // its segment stays: b still uses it
  alloc.free(c);
  alloc.free(d);
  alloc.empty_cache();
  DeviceStats s = alloc.stats();
  EXPECT_EQ(s.num_device_free, 2);
  EXPECT_EQ(s.segment[kAllPools].current, 1);
  EXPECT_EQ(s.reserved_bytes[kAllPools].current, i64(2 * MiB));
  EXPECT_EQ(raw.segment_sizes(), std::vector<size_t>({2 * MiB}));
  alloc.free(b);
  alloc.empty_cache();
  EXPECT_EQ(alloc.stats().num_device_free, 3);
  EXPECT_EQ(alloc.stats().reserved_bytes[kAllPools].current, 0);
  EXPECT_TRUE(alloc.snapshot().empty());
  EXPECT_EQ(raw.used(), 0u);
}

TEST(CachingAllocator, StatsPeaksAndResets) {
  FakeRaw raw(1024 * MiB);
  CachingAllocator alloc(raw);
  void* p = alloc.allocate(1000);
  void* q = alloc.allocate(3 * MiB);  // a 20 MiB segment split into 3 MiB + 17 MiB
  DeviceStats s = alloc.stats();
  EXPECT_EQ(s.allocation[kAllPools].current, 2);
  EXPECT_EQ(s.allocation[kAllPools].peak, 2);
  EXPECT_EQ(s.allocation[kAllPools].allocated, 2);
  EXPECT_EQ(s.allocation[kAllPools].freed, 0);
  EXPECT_EQ(s.allocation[kSmallPool].current, 1);
  EXPECT_EQ(s.allocation[kLargePool].current, 1);
  EXPECT_EQ(s.allocated_bytes[kAllPools].current, i64(1024 + 3 * MiB));
  EXPECT_EQ(s.requested_bytes[kAllPools].current, i64(1000 + 3 * MiB));
  EXPECT_EQ(s.reserved_bytes[kAllPools].current, i64(22 * MiB));
  EXPECT_EQ(s.reserved_bytes[kSmallPool].current, i64(2 * MiB));
  EXPECT_EQ(s.segment[kAllPools].current, 2);
  EXPECT_EQ(s.active[kAllPools].current, 2);
  EXPECT_EQ(s.active_bytes[kAllPools].current, i64(1024 + 3 * MiB));
  EXPECT_EQ(s.inactive_split[kAllPools].current, 2);
  EXPECT_EQ(s.inactive_split_bytes[kAllPools].current, i64((2 * MiB - 1024) + 17 * MiB));
  EXPECT_EQ(s.inactive_split_bytes[kLargePool].current, i64(17 * MiB));
  EXPECT_EQ(s.num_device_alloc, 2);

  alloc.free(q);  // merges back into the whole 20 MiB segment
  s = alloc.stats();
  EXPECT_EQ(s.allocation[kAllPools].current, 1);
  EXPECT_EQ(s.allocation[kAllPools].peak, 2);
  EXPECT_EQ(s.allocation[kAllPools].freed, 1);
  EXPECT_EQ(s.allocated_bytes[kAllPools].peak, i64(1024 + 3 * MiB));
  EXPECT_EQ(s.allocated_bytes[kAllPools].freed, i64(3 * MiB));
  EXPECT_EQ(s.requested_bytes[kLargePool].current, 0);
  EXPECT_EQ(s.active[kAllPools].current, 1);
  EXPECT_EQ(s.inactive_split[kLargePool].current, 0);
  EXPECT_EQ(s.inactive_split[kLargePool].freed, 1);
  EXPECT_EQ(s.inactive_split_bytes[kLargePool].current, 0);
  EXPECT_EQ(s.inactive_split_bytes[kLargePool].peak, i64(17 * MiB));
  EXPECT_EQ(s.reserved_bytes[kAllPools].current, i64(22 * MiB));  // cached, not released

  alloc.reset_peak_stats();
  s = alloc.stats();
  EXPECT_EQ(s.allocated_bytes[kAllPools].peak, 1024);
  EXPECT_EQ(s.allocation[kAllPools].peak, 1);
  EXPECT_EQ(s.reserved_bytes[kAllPools].peak, i64(22 * MiB));
  EXPECT_EQ(s.allocation[kAllPools].allocated, 2);  // untouched by the peak reset

  alloc.reset_accumulated_stats();
  s = alloc.stats();
  EXPECT_EQ(s.allocation[kAllPools].allocated, 0);
  EXPECT_EQ(s.allocation[kAllPools].freed, 0);
  EXPECT_EQ(s.allocation[kAllPools].current, 1);
  EXPECT_EQ(s.num_device_alloc, 0);
  void* r = alloc.allocate(3 * MiB);
  s = alloc.stats();
  EXPECT_EQ(r, q);
  EXPECT_EQ(s.num_device_alloc, 0);  // served from the cache
  EXPECT_EQ(s.allocation[kAllPools].allocated, 1);
  EXPECT_EQ(s.allocated_bytes[kAllPools].peak, i64(1024 + 3 * MiB));
  alloc.free(p);
  alloc.free(r);
}

TEST(CachingAllocator, BadPointersRaiseAndZeroBytesGiveNull) {
  FakeRaw raw(1024 * MiB);
  CachingAllocator alloc(raw);
  EXPECT_EQ(alloc.allocate(0), nullptr);
  alloc.free(nullptr);
  EXPECT_EQ(alloc.stats().allocation[kAllPools].allocated, 0);
  void* p = alloc.allocate(100);
  int local = 0;
  EXPECT_EQ(test_util::error_kind([&] { alloc.free(&local); }), ErrorKind::Runtime);
  EXPECT_EQ(test_util::error_kind([&] { alloc.free(at(p, 512)); }), ErrorKind::Runtime);
  EXPECT_EQ(test_util::error_kind([&] { alloc.record_stream(&local, 1); }), ErrorKind::Runtime);
  alloc.free(p);
  EXPECT_EQ(test_util::error_kind([&] { alloc.free(p); }), ErrorKind::Runtime);  // double free
  EXPECT_EQ(alloc.stats().allocation[kAllPools].current, 0);
}

TEST(CachingAllocator, TwoThreadsShareOneAllocator) {
  FakeRaw raw(1024 * MiB);
  CachingAllocator alloc(raw);
  constexpr int kIters = 3000;
  auto worker = [&](StreamId stream) {
    std::vector<std::pair<char*, size_t>> live;
    for (int i = 0; i < kIters; ++i) {
      const size_t n = (i % 3 == 0) ? (i % 7 + 1) * 300 * KiB + 17 : (i % 11 + 1) * 1000;
      char* p = static_cast<char*>(alloc.allocate(n, stream));
      std::memset(p, static_cast<int>(stream), n);  // a block handed out twice would be overwritten
      live.emplace_back(p, n);
      if (live.size() > 8) {
        auto [old, len] = live.front();
        EXPECT_EQ(old[0], static_cast<char>(stream));
        EXPECT_EQ(old[len - 1], static_cast<char>(stream));
        alloc.free(old);
        live.erase(live.begin());
      }
    }
    for (auto [p, len] : live) alloc.free(p);
  };
  std::thread t1(worker, 1), t2(worker, 2);
  t1.join();
  t2.join();
  DeviceStats s = alloc.stats();
  EXPECT_EQ(s.allocation[kAllPools].current, 0);
  EXPECT_EQ(s.allocation[kAllPools].allocated, 2 * kIters);
  EXPECT_EQ(s.allocated_bytes[kAllPools].current, 0);
  EXPECT_EQ(s.requested_bytes[kAllPools].current, 0);
  EXPECT_EQ(s.active[kAllPools].current, 0);
  EXPECT_EQ(s.inactive_split[kAllPools].current, 0);
  alloc.empty_cache();
  EXPECT_EQ(alloc.stats().reserved_bytes[kAllPools].current, 0);
  EXPECT_EQ(raw.used(), 0u);
}

// set_per_process_memory_fraction: the reserve may not pass fraction * capacity; past it the cache is
// released and the request retried, then OutOfMemoryError names the cap. Lifting it (1.0) allows again.
TEST(CachingAllocator, MemoryFractionCapsTheReserve) {
  FakeRaw raw(100 * MiB);
  CachingAllocator alloc(raw);
  EXPECT_EQ(alloc.memory_fraction(), 1.0);
  alloc.set_memory_fraction(0.5);  // 50 MiB
  void* a = alloc.allocate(30 * MiB);
  alloc.free(alloc.allocate(12 * MiB));  // 12 MiB segment cached: 42 MiB reserved
  void* b = alloc.allocate(16 * MiB);    // 58 > 50: the cached segment goes back, then it fits (46)
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(alloc.stats().reserved_bytes[kAllPools].current, i64(46 * MiB));
  EXPECT_EQ(raw.failed_mallocs, 0);  // the cap refused, not the device
  try {
    alloc.allocate(20 * MiB);  // 66 > 50 with nothing cached to release
    FAIL() << "expected OutOfMemoryError";
  } catch (const OutOfMemoryError& e) {
    EXPECT_NE(std::string(e.what()).find("memory fraction (0.5"), std::string::npos) << e.what();
  }
  EXPECT_THROW(alloc.set_memory_fraction(1.5), Error);
  alloc.set_memory_fraction(1.0);
  void* c = alloc.allocate(20 * MiB);
  ASSERT_NE(c, nullptr);
  for (void* p : {a, b, c}) alloc.free(p);
}
