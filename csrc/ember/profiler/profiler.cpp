#include "ember/profiler/profiler.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <mutex>

#include "ember/alloc/allocator.h"
#include "ember/core/error.h"

namespace ember::profiler {

std::atomic<bool> g_enabled{false};

namespace {

// One per thread that recorded something; owned by the registry so that events outlive threads.
struct ThreadBuffer {
  std::mutex mu;
  uint64_t tid = 0;
  uint64_t session = 0;  // the session its events belong to; a stale one is cleared on first use
  std::vector<Event> events;
  std::vector<MemEvent> memory;
  std::vector<int32_t> open;  // indices of the open events, innermost last
};

std::mutex g_session_mu;  // start/stop/clear
std::mutex g_registry_mu;
std::vector<std::shared_ptr<ThreadBuffer>> g_buffers;
std::atomic<uint64_t> g_session{0};
// the running session's options (read by any thread while ops run)
std::atomic<bool> g_record_shapes{false}, g_with_stack{false};
std::atomic<StackHook> g_stack_hook{nullptr};
int64_t g_start_ns = 0;
// device activity: the installed tracer, the one this session runs (null when none) and the
// correlation ids ranges get while it does; ids below the floor belong to before the last clear()
std::atomic<DeviceTracer*> g_tracer{nullptr};
std::atomic<DeviceTracer*> g_session_tracer{nullptr};
std::atomic<uint64_t> g_next_correlation{1};
uint64_t g_correlation_floor = 1;
std::string g_device_warning;

ThreadBuffer* this_thread_buffer() {
  thread_local std::shared_ptr<ThreadBuffer> buf;
  if (!buf) {
    buf = std::make_shared<ThreadBuffer>();
    buf->tid = current_thread_id();
    std::lock_guard<std::mutex> g(g_registry_mu);
    g_buffers.push_back(buf);
  }
  return buf.get();
}

// Called with b->mu held: starts the buffer afresh when it still holds an earlier session's events.
void sync_session(ThreadBuffer* b, uint64_t session) {
  if (b->session == session) return;
  b->events.clear();
  b->memory.clear();
  b->open.clear();
  b->session = session;
}

void memory_observer(void* ptr, int64_t delta) {
  if (!enabled()) return;
  ThreadBuffer* b = this_thread_buffer();
  MemEvent m;
  m.ts_ns = now_ns();
  m.bytes = delta;
  m.total_allocated = cpu_memory_stats().allocated_bytes;
  m.addr = reinterpret_cast<uintptr_t>(ptr);
  std::lock_guard<std::mutex> g(b->mu);
  sync_session(b, g_session.load(std::memory_order_relaxed));
  if (!b->open.empty()) {
    m.owner = b->open.back();
    Event& e = b->events[m.owner];
    (delta > 0 ? e.alloc_bytes : e.freed_bytes) += delta > 0 ? delta : -delta;
  }
  b->memory.push_back(m);
}

const char* cpp_type_name(ScalarType t) {
  // the C++ element types, as PyTorch's traces name them in "Input type"
  static const char* names[] = {"unsigned char", "signed char", "short int", "int",  "long int",
                                "c10::Half",     "float",       "double",    "bool", "c10::BFloat16"};
  return int(t) >= 0 && int(t) < kNumDtypes ? names[int(t)] : "";
}

}  // namespace

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

uint64_t current_thread_id() {
  thread_local uint64_t tid = uint64_t(::syscall(SYS_gettid));
  return tid;
}

void set_stack_hook(StackHook fn) { g_stack_hook.store(fn); }

DeviceTracer* set_device_tracer(DeviceTracer* tracer) {
  std::lock_guard<std::mutex> g(g_session_mu);
  EMBER_CHECK_KIND(!enabled(), Runtime, "the device tracer cannot change while the profiler runs");
  return g_tracer.exchange(tracer);
}
bool is_running() { return enabled(); }

std::string device_warning() {
  std::lock_guard<std::mutex> g(g_session_mu);
  return g_device_warning;
}

void start(const Config& cfg) {
  std::lock_guard<std::mutex> g(g_session_mu);
  EMBER_CHECK_KIND(!enabled(), Runtime, "Profiler is already enabled (only one profiler can run at a time)");
  g_record_shapes.store(cfg.record_shapes);
  g_with_stack.store(cfg.with_stack);
  g_session.fetch_add(1);
  g_device_warning.clear();
  if (cfg.trace_device) {
    DeviceTracer* tracer = g_tracer.load();
    std::string why;
    if (tracer == nullptr)
      g_device_warning = "this Ember has no device profiler (built without CUDA, or without CUPTI's headers)";
    else if (tracer->start(&why))
      g_session_tracer.store(tracer);
    else
      g_device_warning = why;
  }
  g_correlation_floor = g_next_correlation.load();
  g_start_ns = now_ns();
  if (cfg.profile_memory) set_alloc_observer(&memory_observer);
  g_enabled.store(true);
}

void clear() {
  std::lock_guard<std::mutex> g(g_session_mu);
  g_session.fetch_add(1);  // buffers resync lazily; ranges still open from before are dropped
  g_correlation_floor = g_next_correlation.load();  // and so is the device work they launched
  g_start_ns = now_ns();
}

Result stop() {
  std::lock_guard<std::mutex> g(g_session_mu);
  EMBER_CHECK_KIND(enabled(), Runtime, "Can't stop the profiler: it is not running");
  g_enabled.store(false);
  set_alloc_observer(nullptr);
  Result r;
  r.start_ns = g_start_ns;
  r.stop_ns = now_ns();
  r.device_warning = g_device_warning;
  if (DeviceTracer* tracer = g_session_tracer.exchange(nullptr)) {
    // waits for the queued kernels: device work launched inside the profile is part of it
    for (DeviceEvent& d : tracer->stop()) {
      bool after_clear = d.correlation != 0 ? d.correlation >= g_correlation_floor : d.start_ns >= r.start_ns;
      if (after_clear) r.device_events.push_back(std::move(d));
    }
  }
  auto wall = std::chrono::duration_cast<std::chrono::nanoseconds>(
                  std::chrono::system_clock::now().time_since_epoch()).count();
  r.epoch_offset_ns = wall - now_ns();
  uint64_t session = g_session.load();
  std::vector<std::shared_ptr<ThreadBuffer>> buffers;
  {
    std::lock_guard<std::mutex> rg(g_registry_mu);
    buffers = g_buffers;
  }
  for (auto& b : buffers) {
    std::lock_guard<std::mutex> bg(b->mu);
    if (b->session != session || (b->events.empty() && b->memory.empty())) continue;
    ThreadTrace t;
    t.tid = b->tid;
    for (int32_t i : b->open) b->events[i].end_ns = r.stop_ns;
    t.events = std::move(b->events);
    t.memory = std::move(b->memory);
    b->events.clear();
    b->memory.clear();
    b->open.clear();
    r.threads.push_back(std::move(t));
  }
  g_session.fetch_add(1);  // scopes still open end into a stale session and are ignored
  buffers.clear();
  {
    // drop the buffers of threads that have exited (the registry holds the last reference)
    std::lock_guard<std::mutex> rg(g_registry_mu);
    g_buffers.erase(std::remove_if(g_buffers.begin(), g_buffers.end(), [](auto& b) { return b.use_count() == 1; }),
                    g_buffers.end());
  }
  return r;
}

void on_node_created(int64_t seq_nr) {
  if (!enabled()) return;
  ThreadBuffer* b = this_thread_buffer();
  std::lock_guard<std::mutex> g(b->mu);
  if (b->session != g_session.load(std::memory_order_relaxed)) return;
  // the ops that are running made this node: the innermost op and the composites around it
  for (auto it = b->open.rbegin(); it != b->open.rend(); ++it) {
    Event& e = b->events[*it];
    if (e.kind != EventKind::Op || e.seq_nr != -1) break;
    e.seq_nr = seq_nr;
  }
}

namespace detail {
bool want_shapes() { return g_record_shapes.load(std::memory_order_relaxed); }

void add_input(InputMeta& m, const Tensor& t) {
  if (!t.defined()) {
    m.shapes.emplace_back();
    m.dtypes.emplace_back();
    return;
  }
  auto s = t.sizes();
  m.shapes.emplace_back(s.begin(), s.end());
  m.dtypes.emplace_back(cpp_type_name(t.dtype()));
}

void add_input(InputMeta& m, const std::vector<Tensor>& ts) {
  // a tensor list shows as one entry: the shape of its first tensor is not meaningful alone
  m.shapes.emplace_back();
  m.dtypes.emplace_back("TensorList");
  (void)ts;
}

void add_input(InputMeta& m, const Scalar&) {
  m.shapes.emplace_back();
  m.dtypes.emplace_back("Scalar");
}
}  // namespace detail

void RecordScope::begin(std::string name, EventKind kind, int64_t seq_nr, detail::InputMeta meta) {
  pushed_ = false;
  if (!enabled()) return;
  ThreadBuffer* b = this_thread_buffer();
  Event e;
  e.name = std::move(name);
  e.kind = kind;
  e.seq_nr = seq_nr;
  e.shapes = std::move(meta.shapes);
  e.dtypes = std::move(meta.dtypes);
  if (g_with_stack.load(std::memory_order_relaxed)) {
    if (StackHook hook = g_stack_hook.load()) e.stack = hook();
  }
  if (DeviceTracer* tracer = g_session_tracer.load(std::memory_order_relaxed)) {
    // the kernels this range launches (while it is the innermost) carry its id
    e.correlation = g_next_correlation.fetch_add(1, std::memory_order_relaxed);
    tracer->push_correlation(e.correlation);
    pushed_ = true;
  }
  e.start_ns = now_ns();
  std::lock_guard<std::mutex> g(b->mu);
  uint64_t session = g_session.load(std::memory_order_relaxed);
  sync_session(b, session);
  e.parent = b->open.empty() ? -1 : b->open.back();
  index_ = int32_t(b->events.size());
  b->events.push_back(std::move(e));
  b->open.push_back(index_);
  buf_ = b;
  session_ = session;
}

void RecordScope::end() {
  int64_t t = now_ns();
  auto* b = static_cast<ThreadBuffer*>(buf_);
  buf_ = nullptr;
  if (pushed_) {
    if (DeviceTracer* tracer = g_tracer.load(std::memory_order_relaxed)) tracer->pop_correlation();
  }
  std::lock_guard<std::mutex> g(b->mu);
  if (b->session != session_ || index_ >= int32_t(b->events.size())) return;
  b->events[index_].end_ns = t;
  // pop this scope (and any inner one an exception skipped) off the open stack
  while (!b->open.empty()) {
    int32_t top = b->open.back();
    b->open.pop_back();
    if (top == index_) break;
    if (b->events[top].end_ns < 0) b->events[top].end_ns = t;
  }
}

}  // namespace ember::profiler
