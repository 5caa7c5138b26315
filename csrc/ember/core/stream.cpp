#include "ember/core/stream.h"

#include <atomic>
#include <chrono>

#include "ember/core/error.h"

namespace ember {

namespace {
// The CPU runs every op to completion before returning: one default stream, events that complete
// when recorded and keep the time they were recorded at (for elapsed_time).
class CpuStreams final : public StreamBackend {
  using Clock = std::chrono::steady_clock;
  struct CpuEvent {
    bool timing;
    Clock::time_point at{};
    bool recorded = false;
  };

 public:
  Stream current_stream(Device d) const override { return {d, 0}; }
  void set_current_stream(Stream s) override {
    EMBER_CHECK(s.id == 0, "the CPU has only its default stream, got stream ", s.id);
  }
  Stream new_stream(Device d, int) override { return {d, 0}; }
  bool query_stream(Stream) const override { return true; }
  void synchronize_stream(Stream) const override {}
  void synchronize_device(Device) const override {}
  void* create_event(Device, bool timing) override { return new CpuEvent{timing}; }
  void destroy_event(void* ev) override { delete static_cast<CpuEvent*>(ev); }
  void record_event(void* ev, Stream) override {
    auto* e = static_cast<CpuEvent*>(ev);
    e->at = Clock::now();
    e->recorded = true;
  }
  void wait_event(void*, Stream) override {}
  bool query_event(void*) const override { return true; }
  void synchronize_event(void*) const override {}
  double elapsed_ms(void* start, void* end) const override {
    auto *a = static_cast<CpuEvent*>(start), *b = static_cast<CpuEvent*>(end);
    EMBER_CHECK(a->timing && b->timing, "Both events must be created with argument 'enable_timing=True'.");
    EMBER_CHECK(a->recorded && b->recorded, "Both events must be recorded before calculating elapsed time.");
    return std::chrono::duration<double, std::milli>(b->at - a->at).count();
  }
};
CpuStreams g_cpu_streams;
std::atomic<StreamBackend*> g_backends[kNumDeviceTypes] = {{&g_cpu_streams}, {nullptr}, {nullptr}, {nullptr}};
}  // namespace

StreamBackend& stream_backend(DeviceType type) {
  StreamBackend* b = g_backends[int(type)].load(std::memory_order_acquire);
  if (EMBER_UNLIKELY(!b)) {
    Device(type).check_available();  // a backend registered on first use (CUDA) is there after this
    b = g_backends[int(type)].load(std::memory_order_acquire);
    if (b) return *b;
    EMBER_FAIL(Runtime, "no stream backend is registered for device type '", device_type_name(type), "'");
  }
  return *b;
}

void register_stream_backend(DeviceType type, StreamBackend* backend) {
  EMBER_CHECK(type != DeviceType::CPU || backend, "register_stream_backend: the CPU backend cannot be removed");
  g_backends[int(type)].store(backend, std::memory_order_release);
}

Event::~Event() {
  if (handle_) stream_backend(device_.type).destroy_event(handle_);
}

void Event::record(const Stream& s) {
  EMBER_CHECK(s.device.type == device_.type && (device_.index < 0 || s.device.index < 0 || s.device.index == device_.index),
              "Event device ", device_, " does not match recording stream's device ", s.device, ".");
  auto& b = stream_backend(device_.type);
  if (!handle_) handle_ = b.create_event(s.device, timing_);
  b.record_event(handle_, s);
}

void Event::wait(const Stream& s) {
  if (handle_) stream_backend(device_.type).wait_event(handle_, s);
}

bool Event::query() const { return !handle_ || stream_backend(device_.type).query_event(handle_); }

void Event::synchronize() const {
  if (handle_) stream_backend(device_.type).synchronize_event(handle_);
}

double Event::elapsed_time(const Event& end) const {
  EMBER_CHECK(handle_ && end.handle_, "Both events must be recorded before calculating elapsed time.");
  EMBER_CHECK(timing_ && end.timing_, "Both events must be created with argument 'enable_timing=True'.");
  return stream_backend(device_.type).elapsed_ms(handle_, end.handle_);
}

}  // namespace ember
