// CUDA streams and events behind core/stream.h. A Stream's id is the cudaStream_t (0: the legacy
// default stream, as torch.cuda.default_stream()); each thread has its own current stream per
// device, as PyTorch. Streams made by new_stream are non-blocking (they do not wait for the
// default stream) and live until exit, as PyTorch's pooled streams.
#ifdef EMBER_HAVE_CUDA
#include <mutex>
#include <vector>

#include "ember/cuda/backend.h"
#include "ember/cuda/cuda.h"

namespace ember::cuda {
namespace {

constexpr int kMaxDevices = 64;
thread_local cudaStream_t t_current[kMaxDevices] = {};

// The slot of a device in t_current: its index once resolved (-1: the current device), below kMaxDevices.
int checked_slot(int device) {
  const int index = resolve_index(device);
  EMBER_CHECK(index < kMaxDevices, "Ember supports up to ", kMaxDevices, " CUDA devices, got device ", index);
  return index;
}

struct CudaEvent {
  cudaEvent_t ev = nullptr;
  int device = -1;
  bool timing = false;
};

class CudaStreams final : public StreamBackend {
 public:
  Stream current_stream(Device d) const override {
    const int index = checked_slot(d.index);
    return {Device(DeviceType::CUDA, int8_t(index)), stream_id(t_current[index])};
  }
  void set_current_stream(Stream s) override {
    const int index = checked_slot(s.device.index);
    t_current[index] = to_cuda(s);
  }
  Stream new_stream(Device d, int priority) override {
    const int index = resolve_index(d.index);
    DeviceGuard g(index);
    int least = 0, greatest = 0;
    check(cudaDeviceGetStreamPriorityRange(&least, &greatest), "cudaDeviceGetStreamPriorityRange");
    if (priority > least) priority = least;  // clamp into the device's range, as the runtime does
    if (priority < greatest) priority = greatest;
    cudaStream_t s = nullptr;
    check(cudaStreamCreateWithPriority(&s, cudaStreamNonBlocking, priority), "cudaStreamCreateWithPriority");
    return {Device(DeviceType::CUDA, int8_t(index)), stream_id(s)};
  }
  bool query_stream(Stream s) const override {
    DeviceGuard g(s.device.index);
    cudaError_t err = cudaStreamQuery(to_cuda(s));
    if (err == cudaErrorNotReady) {
      cudaGetLastError();
      return false;
    }
    check(err, "cudaStreamQuery");
    return true;
  }
  void synchronize_stream(Stream s) const override {
    DeviceGuard g(s.device.index);
    check(cudaStreamSynchronize(to_cuda(s)), "cudaStreamSynchronize");
  }
  void synchronize_device(Device d) const override { synchronize(d.index); }
  void* create_event(Device d, bool enable_timing) override {
    const int index = resolve_index(d.index);
    DeviceGuard g(index);
    auto* e = new CudaEvent{nullptr, index, enable_timing};
    cudaError_t err = cudaEventCreateWithFlags(&e->ev, enable_timing ? cudaEventDefault : cudaEventDisableTiming);
    if (err != cudaSuccess) {
      delete e;
      fail(err, "cudaEventCreate");
    }
    return e;
  }
  void destroy_event(void* ev) override {
    auto* e = static_cast<CudaEvent*>(ev);
    if (cudaEventDestroy(e->ev) != cudaSuccess) (void)cudaGetLastError();  // (no stale error for the next launch)
    delete e;
  }
  void record_event(void* ev, Stream s) override {
    auto* e = static_cast<CudaEvent*>(ev);
    EMBER_CHECK(s.device.index == e->device, "Event device ", e->device, " does not match recording stream's device ",
                int(s.device.index), ".");
    DeviceGuard g(e->device);
    check(cudaEventRecord(e->ev, to_cuda(s)), "cudaEventRecord");
  }
  void wait_event(void* ev, Stream s) override {
    auto* e = static_cast<CudaEvent*>(ev);
    DeviceGuard g(s.device.index);
    check(cudaStreamWaitEvent(to_cuda(s), e->ev, 0), "cudaStreamWaitEvent");
  }
  bool query_event(void* ev) const override {
    cudaError_t err = cudaEventQuery(static_cast<CudaEvent*>(ev)->ev);
    if (err == cudaErrorNotReady) {
      cudaGetLastError();
      return false;
    }
    check(err, "cudaEventQuery");
    return true;
  }
  void synchronize_event(void* ev) const override {
    check(cudaEventSynchronize(static_cast<CudaEvent*>(ev)->ev), "cudaEventSynchronize");
  }
  double elapsed_ms(void* start, void* end) const override {
    auto *a = static_cast<CudaEvent*>(start), *b = static_cast<CudaEvent*>(end);
    EMBER_CHECK(a->timing && b->timing, "Both events must be created with argument 'enable_timing=True'.");
    float ms = 0;
    check(cudaEventElapsedTime(&ms, a->ev, b->ev), "cudaEventElapsedTime");
    return double(ms);
  }
};

}  // namespace

StreamBackend* make_stream_backend() {
  static CudaStreams* b = new CudaStreams();
  return b;
}

cudaStream_t current_cuda_stream(int index) { return t_current[checked_slot(index)]; }

Stream current_stream(int device) { return stream_backend(DeviceType::CUDA).current_stream(Device(DeviceType::CUDA, int8_t(device))); }
Stream default_stream(int device) { return {Device(DeviceType::CUDA, int8_t(resolve_index(device))), 0}; }
Stream new_stream(int device, int priority) {
  return stream_backend(DeviceType::CUDA).new_stream(Device(DeviceType::CUDA, int8_t(device)), priority);
}
void set_stream(const Stream& s) { stream_backend(DeviceType::CUDA).set_current_stream(s); }
std::pair<int, int> stream_priority_range() {
  DeviceGuard g(resolve_index(-1));
  int least = 0, greatest = 0;
  check(cudaDeviceGetStreamPriorityRange(&least, &greatest), "cudaDeviceGetStreamPriorityRange");
  return {least, greatest};
}

}  // namespace ember::cuda
#endif  // EMBER_HAVE_CUDA
