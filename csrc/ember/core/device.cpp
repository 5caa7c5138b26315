#include "ember/core/device.h"

#include <cstdlib>

#include "ember/alloc/allocator.h"
#include "ember/core/error.h"
#include "ember/cuda/cuda.h"

namespace ember {

Device::Device(const std::string& spec) {
  std::string kind = spec, idx;
  auto colon = spec.find(':');
  if (colon != std::string::npos) {
    kind = spec.substr(0, colon);
    idx = spec.substr(colon + 1);
  }
  bool found = false;
  for (int t = 0; t < kNumDeviceTypes && !found; t++)
    if (kind == device_type_name(DeviceType(t))) type = DeviceType(t), found = true;
  EMBER_CHECK(found, "Expected one of cpu, cuda, meta, privateuseone device type at start of device string: ", spec);
  if (!idx.empty()) {
    char* end = nullptr;
    long v = std::strtol(idx.c_str(), &end, 10);
    EMBER_CHECK(*end == 0 && v >= 0 && v < 128, "Invalid device string: '", spec, "'");
    index = int8_t(v);
  }
}

const char* device_type_name(DeviceType t) {
  switch (t) {
    case DeviceType::CPU: return "cpu";
    case DeviceType::CUDA: return "cuda";
    case DeviceType::PrivateUse1: return "privateuseone";
    case DeviceType::Meta: return "meta";
  }
  return "unknown";
}

void Device::check_available() const {
  if (is_cpu() || is_meta()) return;
  if (type == DeviceType::CUDA) return cuda::lazy_init(index);  // raises without a GPU or CUDA build
  if (allocator_registered(type)) return;
  EMBER_FAIL(Runtime, "no backend is registered for device type '", device_type_name(type), "'");
}

std::string Device::str() const {
  std::string s = device_type_name(type);
  if (index >= 0) s += ":" + std::to_string(index);
  return s;
}

}  // namespace ember
