#pragma once
// Kernels looked up by (op, device). Each kernel entry point is a KernelStub: a table with one
// function pointer per device type, filled at static initialisation by the backend that implements
// it (the CPU's entries live in kernels/cpu/, a GPU backend's in kernels/cuda/). An op body in ops/
// checks its arguments, allocates its outputs on the inputs' device and calls
//     softmax_stub(x.device(), "softmax")(...);
// a device type with no entry raises NotImplementedError naming the op and device, never falls
// back to another device. A library choice (oneDNN or im2col + GEMM) is the entry a backend
// registers, not an `if` in the op.
#include <type_traits>

#include "ember/core/device.h"
#include "ember/core/macros.h"

namespace ember {

[[noreturn]] EMBER_API void no_kernel_for(const char* op, Device device);

// The meta device's entry of every stub that returns nothing: the op around it has already
// computed and allocated its outputs' metadata, which is all a meta op produces. A stub that
// returns a value gets a meta entry only where its result is metadata (kernels/meta/: the
// convolutions); one whose result is read from the data (nonzero, unique) raises on meta tensors.
template <class Fn>
struct MetaKernel;
template <class R, class... Args>
struct MetaKernel<R (*)(Args...)> {
  static constexpr bool available = std::is_void_v<R>;
  static void run(Args...) {}
};

template <class Fn>
struct KernelStub {
  const char* name;
  Fn entries[kNumDeviceTypes] = {};

  // The kernel for `device`; `op` names the op in the error (defaults to the stub's name).
  Fn operator()(Device device, const char* op = nullptr) const {
    Fn f = entries[int(device.type)];
    if (EMBER_UNLIKELY(!f)) return missing(device, op);
    return f;
  }
  Fn missing(Device device, const char* op) const {
    if constexpr (MetaKernel<Fn>::available)
      if (device.type == DeviceType::Meta) return &MetaKernel<Fn>::run;
    no_kernel_for(op ? op : name, device);
  }
  bool has(DeviceType t) const { return entries[int(t)] != nullptr; }
};

template <class Fn>
bool register_kernel(KernelStub<Fn>& stub, DeviceType type, Fn fn) {
  stub.entries[int(type)] = fn;
  return true;
}

}  // namespace ember

#define EMBER_CONCAT_IMPL(a, b) a##b
#define EMBER_CONCAT(a, b) EMBER_CONCAT_IMPL(a, b)

// In a header: EMBER_DECLARE_STUB(softmax_stub, void, (ScalarType, const void*, void*, int64_t))
#define EMBER_DECLARE_STUB(stub, ret, params) \
  namespace ember {                           \
  using stub##_fn = ret(*) params;            \
  extern EMBER_API KernelStub<stub##_fn> stub; \
  }
// In exactly one .cpp (kernels/stubs.cpp): the table, constant-initialised (empty) before any
// registration runs.
#define EMBER_DEFINE_STUB(stub) \
  namespace ember {             \
  KernelStub<stub##_fn> stub{#stub}; \
  }
// In a backend's .cpp: EMBER_REGISTER_KERNEL(softmax_stub, CPU, &softmax_cpu)
#define EMBER_REGISTER_KERNEL(stub, type, fn)                                      \
  static const bool EMBER_CONCAT(ember_registered_, __COUNTER__) [[maybe_unused]] = \
      ::ember::register_kernel(::ember::stub, ::ember::DeviceType::type, ::ember::stub##_fn(fn))
