#pragma once
// A test-only backend for the PrivateUse1 device type ("privateuseone"), backed by host memory and
// plugged in through the public interfaces alone: an Allocator, a StreamBackend and kernel entries
// (here the CPU's own functions, since the memory is the host's). Proof that a backend is a set of
// registrations, not edits to ops/. Install it with a HostDevice object for a test's scope.
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <type_traits>
#include <vector>

#include "ember/alloc/allocator.h"
#include "ember/core/stream.h"
#include "ember/kernels/kernels.h"

namespace ember::test_util {

inline Device host_device() { return Device(DeviceType::PrivateUse1, 0); }

class HostAllocator final : public Allocator {
 public:
  std::atomic<int64_t> live_bytes{0}, allocations{0}, copies_in{0}, copies_out{0};
  DataPtr allocate(size_t nbytes) override {
    void* p = nbytes ? std::malloc(nbytes) : nullptr;
    EMBER_CHECK(!nbytes || p, "host device: out of memory");
    live_bytes += int64_t(nbytes);
    allocations++;
    return {p, this, [](void* ctx, void* data, size_t n) {
              static_cast<HostAllocator*>(ctx)->live_bytes -= int64_t(n);
              std::free(data);
            },
            host_device()};
  }
  void copy_data(void* dst, Device dst_device, const void* src, Device src_device, size_t nbytes, bool) override {
    if (dst_device.is_cpu()) copies_out++;
    if (src_device.is_cpu()) copies_in++;
    if (nbytes) std::memcpy(dst, src, nbytes);
  }
};

// Streams are numbers; work runs at once (the memory is the host's), so events complete when recorded.
class HostStreams final : public StreamBackend {
 public:
  int64_t current = 0, next = 1;
  Stream current_stream(Device d) const override { return {d, current}; }
  void set_current_stream(Stream s) override { current = s.id; }
  Stream new_stream(Device d, int) override { return {d, next++}; }
  bool query_stream(Stream) const override { return true; }
  void synchronize_stream(Stream) const override {}
  void synchronize_device(Device) const override {}
  void* create_event(Device, bool) override { return new int64_t(-1); }
  void destroy_event(void* ev) override { delete static_cast<int64_t*>(ev); }
  void record_event(void* ev, Stream s) override { *static_cast<int64_t*>(ev) = s.id; }
  void wait_event(void*, Stream) override {}
  bool query_event(void*) const override { return true; }
  void synchronize_event(void*) const override {}
  double elapsed_ms(void*, void*) const override { return 0.0; }
};

// The stream each binary kernel launch on the host device saw (TensorIter's launch context).
inline std::atomic<int64_t>& last_binary_stream() {
  static std::atomic<int64_t> s{-1};
  return s;
}

// Registers the backend for a scope: allocator, streams, and kernels for elementwise, reduction and
// copy ops. Everything else (softmax, conv, sort, ...) has no entry and must raise NotImplementedError.
class HostDevice {
 public:
  HostAllocator allocator;
  HostStreams streams;
  HostDevice() {
    register_allocator(DeviceType::PrivateUse1, &allocator);
    register_stream_backend(DeviceType::PrivateUse1, &streams);
    set(unary_kernel_stub, unary_kernel_stub.entries[0]);
    set(binary_kernel_stub, [](BinaryKernel k, TensorIter& it, const KernelArgs& a) {
      last_binary_stream() = it.stream().id;
      binary_kernel_stub(Device())(k, it, a);
    });
    set(ternary_kernel_stub, ternary_kernel_stub.entries[0]);
    set(copy_kernel_stub, copy_kernel_stub.entries[0]);
    set(fill_kernel_stub, fill_kernel_stub.entries[0]);
    set(transpose_copy_kernel_stub, transpose_copy_kernel_stub.entries[0]);
    set(reduce_kernel_stub, reduce_kernel_stub.entries[0]);
  }
  ~HostDevice() {
    for (auto& undo : undo_) undo();
    register_stream_backend(DeviceType::PrivateUse1, nullptr);
    register_allocator(DeviceType::PrivateUse1, nullptr);
  }
  HostDevice(const HostDevice&) = delete;
  HostDevice& operator=(const HostDevice&) = delete;

 private:
  template <class Fn>
  void set(KernelStub<Fn>& stub, std::common_type_t<Fn> fn) {  // (second argument not deduced: lambdas convert)
    register_kernel(stub, DeviceType::PrivateUse1, fn);
    undo_.push_back([&stub] { register_kernel(stub, DeviceType::PrivateUse1, Fn(nullptr)); });
  }
  std::vector<std::function<void()>> undo_;
};

}  // namespace ember::test_util
