#include "ember/core/device.h"

#include <cstdlib>

#include "ember/core/error.h"

namespace ember {

Device::Device(const std::string& spec) {
  std::string kind = spec, idx;
  auto colon = spec.find(':');
  if (colon != std::string::npos) {
    kind = spec.substr(0, colon);
    idx = spec.substr(colon + 1);
  }
  if (kind == "cpu") type = DeviceType::CPU;
  else if (kind == "cuda") type = DeviceType::CUDA;
  else EMBER_FAIL(Runtime, "Expected one of cpu, cuda device type at start of device string: ", spec);
  if (!idx.empty()) {
    char* end = nullptr;
    long v = std::strtol(idx.c_str(), &end, 10);
    EMBER_CHECK(*end == 0 && v >= 0 && v < 128, "Invalid device string: '", spec, "'");
    index = int8_t(v);
  }
}

void Device::check_available() const {
  EMBER_CHECK_KIND(is_cpu(), Assertion, "Ember not compiled with CUDA enabled");
}

std::string Device::str() const {
  std::string s = type == DeviceType::CPU ? "cpu" : "cuda";
  if (index >= 0) s += ":" + std::to_string(index);
  return s;
}

}  // namespace ember
