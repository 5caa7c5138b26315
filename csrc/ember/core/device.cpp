#include "ember/core/device.h"

#include <cctype>
#include <cstdlib>

#include "ember/alloc/allocator.h"
#include "ember/core/error.h"
#include "ember/cuda/cuda.h"

namespace ember {

// PyTorch's grammar: a type of letters and '_', then optionally ':' and an index without a sign, spaces
// or leading zeros ("cuda:1", not "cuda:01" or "cuda:+1"); anything else is an invalid string.
Device::Device(const std::string& spec) {
  const auto colon = spec.find(':');
  const std::string kind = spec.substr(0, colon);
  const std::string idx = colon == std::string::npos ? "" : spec.substr(colon + 1);
  bool well_formed = !kind.empty() && (colon == std::string::npos || !idx.empty()) && idx.size() <= 3 &&
                     (idx.size() <= 1 || idx[0] != '0');
  for (char c : kind) well_formed = well_formed && (std::isalpha(static_cast<unsigned char>(c)) || c == '_');
  for (char c : idx) well_formed = well_formed && std::isdigit(static_cast<unsigned char>(c));
  EMBER_CHECK(well_formed, "Invalid device string: '", spec, "'");
  bool found = false;
  for (int t = 0; t < kNumDeviceTypes && !found; t++)
    if (kind == device_type_name(DeviceType(t))) type = DeviceType(t), found = true;
  EMBER_CHECK(found, "Expected one of cpu, cuda, meta, privateuseone device type at start of device string: ", spec);
  if (!idx.empty()) {
    const long v = std::strtol(idx.c_str(), nullptr, 10);
    EMBER_CHECK(v < 128, "Invalid device string: '", spec, "'");  // (Ember's index is an int8_t)
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
