// The C++ profiler: op entries, nested scopes, autograd nodes linked to their forward op, memory.
#include <gtest/gtest.h>

#include <algorithm>
#include <thread>

#include "ember/autograd/engine.h"
#include "ember/autograd/node.h"
#include "ember/generated/ops.h"
#include "ember/profiler/profiler.h"

using namespace ember;

namespace {
const profiler::Event* find(const profiler::ThreadTrace& t, const std::string& name) {
  for (auto& e : t.events)
    if (e.name == name) return &e;
  return nullptr;
}
}  // namespace

TEST(Profiler, RecordsOpsAndNesting) {
  Tensor a = ember::ones({2, 3}), b = ember::ones({2, 3});
  profiler::Config cfg;
  cfg.record_shapes = true;
  profiler::start(cfg);
  EXPECT_THROW(profiler::start(cfg), Error);  // one session at a time
  {
    profiler::RecordScope outer;
    outer.begin("outer", profiler::EventKind::UserRange);
    ember::add(a, b);
  }
  profiler::Result r = profiler::stop();
  EXPECT_FALSE(profiler::enabled());
  ASSERT_EQ(r.threads.size(), 1u);
  const auto& t = r.threads[0];
  EXPECT_EQ(t.tid, profiler::current_thread_id());
  const auto* outer = find(t, "outer");
  const auto* add = find(t, "aten::add");
  ASSERT_TRUE(outer && add);
  EXPECT_EQ(add->parent, int32_t(outer - t.events.data()));
  EXPECT_LE(outer->start_ns, add->start_ns);
  EXPECT_LE(add->end_ns, outer->end_ns);
  ASSERT_EQ(add->shapes.size(), 3u);  // self, other, alpha
  EXPECT_EQ(add->shapes[0], (std::vector<int64_t>{2, 3}));
  EXPECT_TRUE(add->shapes[2].empty());
  EXPECT_EQ(add->dtypes[0], "float");
  EXPECT_EQ(add->dtypes[2], "Scalar");
  // nothing is recorded once stopped
  ember::add(a, b);
  profiler::start({});
  EXPECT_TRUE(profiler::stop().threads.empty());
}

TEST(Profiler, BackwardNodeLinkedToForwardOp) {
  Tensor x = ember::ones({3});
  autograd::set_requires_grad(x, true);
  profiler::start({});
  Tensor y = ember::mul(x, x).sum();
  autograd::backward({y});
  profiler::Result r = profiler::stop();
  ASSERT_EQ(r.threads.size(), 1u);
  const auto* fwd = find(r.threads[0], "aten::mul");
  const auto* node = find(r.threads[0], "MulBackward0");
  const auto* eval = find(r.threads[0], "autograd::engine::evaluate_function: MulBackward0");
  ASSERT_TRUE(fwd && node && eval);
  EXPECT_GE(fwd->seq_nr, 0);
  EXPECT_EQ(node->seq_nr, fwd->seq_nr);
  EXPECT_EQ(eval->seq_nr, fwd->seq_nr);
  EXPECT_EQ(node->kind, profiler::EventKind::Backward);
  EXPECT_EQ(node->parent, int32_t(eval - r.threads[0].events.data()));
}

TEST(Profiler, MemoryAttributedToInnermostRange) {
  profiler::Config cfg;
  cfg.profile_memory = true;
  profiler::start(cfg);
  {
    Tensor t = ember::empty({100});
  }
  profiler::Result r = profiler::stop();
  ASSERT_EQ(r.threads.size(), 1u);
  const auto* e = find(r.threads[0], "aten::empty");
  ASSERT_TRUE(e);
  EXPECT_EQ(e->alloc_bytes, 400);
  ASSERT_EQ(r.threads[0].memory.size(), 2u);  // the allocation, then the free outside every range
  EXPECT_EQ(r.threads[0].memory[0].bytes, 400);
  EXPECT_EQ(r.threads[0].memory[1].bytes, -400);
  EXPECT_EQ(r.threads[0].memory[1].owner, -1);
}

TEST(Profiler, ThreadsRecordIntoTheirOwnBuffers) {
  profiler::start({});
  std::thread th([] { ember::ones({2}); });
  th.join();  // the thread is gone; its events are not
  ember::zeros({2});
  profiler::Result r = profiler::stop();
  ASSERT_EQ(r.threads.size(), 2u);
  EXPECT_NE(r.threads[0].tid, r.threads[1].tid);
}

namespace {
// Stands in for CUPTI: each range pushed "launches" one kernel named after its id, so the test can
// check that ids reach the ranges, balance, and survive (or not) a clear().
struct FakeTracer : profiler::DeviceTracer {
  bool fail = false;
  std::vector<uint64_t> stack;
  std::vector<profiler::DeviceEvent> launched;
  int pushes = 0, pops = 0;
  bool start(std::string* why) override {
    if (fail) *why = "no device here";
    return !fail;
  }
  void push_correlation(uint64_t id) override {
    stack.push_back(id);
    ++pushes;
    profiler::DeviceEvent d;
    d.name = "kernel_" + std::to_string(id);
    d.correlation = id;
    d.start_ns = profiler::now_ns();
    d.end_ns = d.start_ns + 1000;
    launched.push_back(d);
  }
  void pop_correlation() override {
    ASSERT_FALSE(stack.empty());
    stack.pop_back();
    ++pops;
  }
  std::vector<profiler::DeviceEvent> stop() override { return std::move(launched); }
};

struct TracerGuard {
  profiler::DeviceTracer* previous;
  explicit TracerGuard(profiler::DeviceTracer* t) : previous(profiler::set_device_tracer(t)) {}
  ~TracerGuard() { profiler::set_device_tracer(previous); }
};
}  // namespace

TEST(Profiler, DeviceWorkIsTiedToTheRangeThatLaunchedIt) {
  FakeTracer fake;
  TracerGuard guard(&fake);
  Tensor a = ember::ones({4});
  profiler::Config cfg;
  cfg.trace_device = true;
  profiler::start(cfg);
  EXPECT_THROW(profiler::set_device_tracer(nullptr), Error);  // not while a session runs
  ember::add(a, a);  // before the clear: dropped with its device work
  profiler::clear();
  {
    profiler::RecordScope outer;
    outer.begin("step", profiler::EventKind::UserRange);
    ember::mul(a, a);
  }
  profiler::Result r = profiler::stop();
  EXPECT_TRUE(r.device_warning.empty());
  EXPECT_TRUE(fake.stack.empty());  // every push popped, on the thread that pushed it
  EXPECT_EQ(fake.pops, fake.pushes);
  ASSERT_EQ(r.threads.size(), 1u);
  const auto* step = find(r.threads[0], "step");
  const auto* mul = find(r.threads[0], "aten::mul");
  ASSERT_TRUE(step && mul);
  EXPECT_EQ(find(r.threads[0], "aten::add"), nullptr);
  EXPECT_NE(step->correlation, 0u);
  EXPECT_GT(mul->correlation, step->correlation);  // the innermost range has its own id
  // exactly the device work of the ranges recorded after the clear comes back
  std::vector<uint64_t> ids;
  for (auto& d : r.device_events) ids.push_back(d.correlation);
  std::vector<uint64_t> want;
  for (auto& e : r.threads[0].events) want.push_back(e.correlation);
  std::sort(ids.begin(), ids.end());
  std::sort(want.begin(), want.end());
  EXPECT_EQ(ids, want);
  // with no device profile asked for, no id is handed out
  profiler::start({});
  ember::mul(a, a);
  r = profiler::stop();
  ASSERT_EQ(r.threads.size(), 1u);
  EXPECT_EQ(r.threads[0].events[0].correlation, 0u);
  EXPECT_TRUE(r.device_events.empty());
}

TEST(Profiler, ATracerThatCannotStartLeavesAWarning) {
  FakeTracer fake;
  fake.fail = true;
  TracerGuard guard(&fake);
  profiler::Config cfg;
  cfg.trace_device = true;
  profiler::start(cfg);
  EXPECT_EQ(profiler::device_warning(), "no device here");
  ember::neg(ember::ones({2}));
  profiler::Result r = profiler::stop();
  EXPECT_EQ(r.device_warning, "no device here");
  EXPECT_TRUE(r.device_events.empty());
  EXPECT_TRUE(fake.launched.empty());
  TracerGuard none(nullptr);  // a build without a device profiler says so
  profiler::start(cfg);
  EXPECT_NE(profiler::stop().device_warning.find("no device profiler"), std::string::npos);
}
