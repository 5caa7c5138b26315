#pragma once
// Where a tensor lives. A device type is a backend: it registers an allocator (alloc/allocator.h),
// a stream backend (core/stream.h) and kernels (kernels/registry.h); the CPU is the built-in one.
// PrivateUse1 ("privateuseone", as PyTorch names it) is the slot for an out-of-tree backend.
// Meta tensors have sizes, strides and a dtype but no memory: ops on them compute only their
// results' metadata (kernel stubs do nothing there, kernels/registry.h), for building a model
// without allocating it (`with torch.device("meta")`, then `Module.to_empty`).
#include <cstdint>
#include <ostream>
#include <string>

#include "ember/core/macros.h"

namespace ember {

enum class DeviceType : int8_t { CPU = 0, CUDA = 1, PrivateUse1 = 2, Meta = 3 };
constexpr int kNumDeviceTypes = 4;
EMBER_API const char* device_type_name(DeviceType t);  // "cpu", "cuda", "privateuseone", "meta"

struct EMBER_API Device {
  DeviceType type = DeviceType::CPU;
  int8_t index = -1;
  Device() = default;
  Device(DeviceType t, int8_t i = -1) : type(t), index(i) {}
  explicit Device(const std::string& spec);  // "cpu", "cuda", "cuda:1", "privateuseone:0"
  bool is_cpu() const { return type == DeviceType::CPU; }
  bool is_meta() const { return type == DeviceType::Meta; }
  bool operator==(const Device& o) const { return type == o.type && index == o.index; }
  bool operator!=(const Device& o) const { return !(*this == o); }
  std::string str() const;
  // Raises unless a backend for this device type is registered. CUDA registers on first use: a
  // CPU-only build raises PyTorch's AssertionError "... not compiled with CUDA enabled", a CUDA build
  // without a GPU a RuntimeError, and so does an index beyond the GPUs there are.
  void check_available() const;
};
inline std::ostream& operator<<(std::ostream& os, const Device& d) { return os << d.str(); }

}  // namespace ember
