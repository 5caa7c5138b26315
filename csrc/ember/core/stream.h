#pragma once
// Streams and events: the order in which a device runs the work queued on it (paper §5.2). Every
// device type has a StreamBackend; the CPU's runs everything synchronously on its one default stream,
// so its events complete when recorded and only timestamps matter. Kernels read the stream to queue
// on from their launch context (TensorIter::stream(), or current_stream(device) for raw kernels).
#include <cstdint>

#include "ember/core/device.h"
#include "ember/core/macros.h"

namespace ember {

struct Stream {
  Device device;
  int64_t id = 0;  // the backend's handle; 0 is the device's default stream
  bool operator==(const Stream& o) const { return device == o.device && id == o.id; }
  bool operator!=(const Stream& o) const { return !(*this == o); }
};

// What a device backend provides for streams and events (events are opaque handles).
class EMBER_API StreamBackend {
 public:
  virtual ~StreamBackend() = default;
  virtual Stream current_stream(Device d) const = 0;  // the calling thread's
  virtual void set_current_stream(Stream s) = 0;
  virtual Stream new_stream(Device d, int priority) = 0;
  virtual bool query_stream(Stream s) const = 0;  // all queued work done?
  virtual void synchronize_stream(Stream s) const = 0;
  virtual void synchronize_device(Device d) const = 0;
  virtual void* create_event(Device d, bool enable_timing) = 0;
  virtual void destroy_event(void* ev) = 0;
  virtual void record_event(void* ev, Stream s) = 0;
  virtual void wait_event(void* ev, Stream s) = 0;  // later work on s waits for ev
  virtual bool query_event(void* ev) const = 0;
  virtual void synchronize_event(void* ev) const = 0;
  virtual double elapsed_ms(void* start, void* end) const = 0;
};

EMBER_API StreamBackend& stream_backend(DeviceType type);  // raises if none is registered
EMBER_API void register_stream_backend(DeviceType type, StreamBackend* backend);

inline Stream current_stream(Device d) { return stream_backend(d.type).current_stream(d); }
inline void synchronize(Device d) { stream_backend(d.type).synchronize_device(d); }

// An event on one device, created lazily on first record (PyTorch's torch.Event / cuda.Event).
class EMBER_API Event {
 public:
  explicit Event(Device device = Device(), bool enable_timing = false) : device_(device), timing_(enable_timing) {}
  ~Event();
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  void record(const Stream& s);
  void record() { record(current_stream(device_)); }
  void wait(const Stream& s);  // s waits for this event (no host blocking)
  bool query() const;          // true when never recorded, as PyTorch
  void synchronize() const;
  double elapsed_time(const Event& end) const;  // milliseconds; both recorded with enable_timing
  Device device() const { return device_; }

 private:
  Device device_;
  bool timing_;
  void* handle_ = nullptr;
};

// Switch the calling thread's current stream for a scope (ember.cuda.stream(s)).
class StreamGuard {
 public:
  explicit StreamGuard(Stream s) : prev_(current_stream(s.device)) { stream_backend(s.device.type).set_current_stream(s); }
  ~StreamGuard() { stream_backend(prev_.device.type).set_current_stream(prev_); }
  StreamGuard(const StreamGuard&) = delete;
  StreamGuard& operator=(const StreamGuard&) = delete;

 private:
  Stream prev_;
};

}  // namespace ember
