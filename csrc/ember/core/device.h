#pragma once
// Where a tensor lives. Only the CPU has kernels today; the field exists so that
// kernels, allocators and checks are written per device from the start.
#include <cstdint>
#include <ostream>
#include <string>

namespace ember {

enum class DeviceType : int8_t { CPU = 0, CUDA = 1 };

struct Device {
  DeviceType type = DeviceType::CPU;
  int8_t index = -1;
  Device() = default;
  Device(DeviceType t, int8_t i = -1) : type(t), index(i) {}
  explicit Device(const std::string& spec);  // "cpu", "cuda", "cuda:1"
  bool is_cpu() const { return type == DeviceType::CPU; }
  bool operator==(const Device& o) const { return type == o.type && index == o.index; }
  bool operator!=(const Device& o) const { return !(*this == o); }
  std::string str() const;
  // Raises what PyTorch's CPU-only build raises for a CUDA device: AssertionError, "... not compiled
  // with CUDA enabled".
  void check_available() const;
};
inline std::ostream& operator<<(std::ostream& os, const Device& d) { return os << d.str(); }

}  // namespace ember
