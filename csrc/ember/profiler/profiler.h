#pragma once
// The CPU profiler (ember.profiler / ember.autograd.profiler). Every generated op entry, every
// autograd node the engine runs and every record_function range opens a RecordScope. With no
// profiler running a scope costs one relaxed load and a not-taken branch; while one runs, each
// thread appends events to its own buffer (its own uncontended lock), collected by stop().
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ember/core/macros.h"
#include "ember/core/tensor.h"

namespace ember::profiler {

EMBER_API extern std::atomic<bool> g_enabled;
inline bool enabled() { return g_enabled.load(std::memory_order_relaxed); }

enum class EventKind : uint8_t { Op = 0, UserRange = 1, Backward = 2 };

struct Config {
  bool record_shapes = false;
  bool profile_memory = false;
  bool with_stack = false;
  bool trace_device = false;  // also record device activity (kernels, copies) through the DeviceTracer
};

struct Event {
  std::string name;
  int64_t start_ns = 0, end_ns = -1;  // steady clock
  int64_t seq_nr = -1;                // autograd sequence number (forward op and its backward node)
  int32_t parent = -1;                // index of the enclosing event in the same thread's list
  EventKind kind = EventKind::Op;
  int64_t alloc_bytes = 0, freed_bytes = 0;  // made/freed while this event was innermost
  std::vector<std::vector<int64_t>> shapes;  // one per input; [] for non-tensors
  std::vector<std::string> dtypes;           // "float", "Scalar" or "" per input
  std::vector<std::string> stack;            // Python frames, innermost first (with_stack)
  uint64_t correlation = 0;                  // with trace_device: the id device activity it launched names
};

// One piece of device activity (a kernel, a copy, a fill), as the DeviceTracer saw it.
enum class DeviceEventKind : uint8_t { Kernel = 0, Memcpy = 1, Memset = 2 };
struct DeviceEvent {
  std::string name;
  int64_t start_ns = 0, end_ns = 0;  // steady clock, as the host events
  int32_t device = 0;
  int64_t stream = 0;
  uint64_t correlation = 0;  // the innermost host event open when it was launched (Event::correlation); 0: none
  DeviceEventKind kind = DeviceEventKind::Kernel;
  int64_t bytes = 0;                // copies and fills
  int32_t grid[3] = {0, 0, 0};      // kernels
  int32_t block[3] = {0, 0, 0};
};

// What records device activity for a session: the CUDA backend's one on CUPTI (cuda/cupti_tracer.cpp).
// start() and stop() run on the thread that starts and stops the profiler; push/pop on any thread
// that opens a range (the id names the range's event until it is popped on that same thread).
class EMBER_API DeviceTracer {
 public:
  virtual ~DeviceTracer() = default;
  // Begins recording; false, with the reason in *why, when it cannot (no GPU, no CUPTI).
  virtual bool start(std::string* why) = 0;
  virtual void push_correlation(uint64_t id) = 0;
  virtual void pop_correlation() = 0;
  // Waits for the queued work, ends recording and hands back what ran, in steady-clock time.
  virtual std::vector<DeviceEvent> stop() = 0;
};
// Installs the tracer sessions use (nullptr: none); returns the previous one. Not while a session runs.
EMBER_API DeviceTracer* set_device_tracer(DeviceTracer* tracer);

// One allocation (+bytes) or free (-bytes) seen by the CPU allocator while profile_memory is on.
struct MemEvent {
  int64_t ts_ns = 0;
  int64_t bytes = 0;
  int64_t total_allocated = 0;
  uint64_t addr = 0;
  int32_t owner = -1;  // innermost open event on that thread, -1 outside every event
};

struct ThreadTrace {
  uint64_t tid = 0;
  std::vector<Event> events;
  std::vector<MemEvent> memory;
};

struct Result {
  int64_t start_ns = 0, stop_ns = 0;  // steady clock
  int64_t epoch_offset_ns = 0;        // add to a steady timestamp for nanoseconds since the Unix epoch
  std::vector<ThreadTrace> threads;
  std::vector<DeviceEvent> device_events;  // with trace_device, those launched after the last clear()
  std::string device_warning;              // why trace_device recorded nothing (empty when it ran)
};

// Starts a session; raises RuntimeError if one is already running.
EMBER_API void start(const Config& cfg);
// Ends the session and hands back every thread's events (open ranges are closed at the stop time).
EMBER_API Result stop();
// Drops what the running session recorded so far (the end of a schedule's warmup).
EMBER_API void clear();
EMBER_API bool is_running();
// Why the running (or last) session records no device activity although trace_device asked; "" if it does.
EMBER_API std::string device_warning();
EMBER_API uint64_t current_thread_id();  // the OS thread id, as traces show it
EMBER_API int64_t now_ns();

// with_stack: the Python layer installs a function returning the calling Python frames.
using StackHook = std::vector<std::string> (*)();
EMBER_API void set_stack_hook(StackHook fn);

// The autograd engine reports each new Node: the innermost open ops take its sequence number.
EMBER_API void on_node_created(int64_t seq_nr);

namespace detail {
struct InputMeta {
  std::vector<std::vector<int64_t>> shapes;
  std::vector<std::string> dtypes;
};
EMBER_API bool want_shapes();
EMBER_API void add_input(InputMeta& m, const Tensor& t);
EMBER_API void add_input(InputMeta& m, const std::vector<Tensor>& ts);
EMBER_API void add_input(InputMeta& m, const Scalar&);
template <class T>
void add_input(InputMeta& m, const T&) {
  m.shapes.emplace_back();
  m.dtypes.emplace_back();
}
}  // namespace detail

class EMBER_API RecordScope {
 public:
  RecordScope() = default;
  RecordScope(const RecordScope&) = delete;
  RecordScope& operator=(const RecordScope&) = delete;
  ~RecordScope() {
    if (EMBER_UNLIKELY(buf_ != nullptr)) end();
  }

  // An op entry: inputs are recorded (shapes, dtypes) only with record_shapes.
  template <class... Args>
  void begin_op(const char* name, const Args&... args) {
    detail::InputMeta meta;
    if (detail::want_shapes()) (detail::add_input(meta, args), ...);
    begin(name, EventKind::Op, -1, std::move(meta));
  }
  void begin(std::string name, EventKind kind, int64_t seq_nr = -1, detail::InputMeta meta = {});
  void end();  // only while active()
  bool active() const { return buf_ != nullptr; }

 private:
  void* buf_ = nullptr;  // set by begin(); the rest is read only while it is
  int32_t index_;
  bool pushed_;  // a correlation id was pushed to the device tracer, to pop at end()
  uint64_t session_;
};

}  // namespace ember::profiler

// Opens a profiler range for the enclosing C++ scope; the arguments after the name are the op's
// inputs. Off: one relaxed load and a not-taken branch.
#define EMBER_RECORD_OP(name, ...)                       \
  ::ember::profiler::RecordScope ember_record_scope_;   \
  if (EMBER_UNLIKELY(::ember::profiler::enabled())) ember_record_scope_.begin_op(name, ##__VA_ARGS__)
