#pragma once
// The values of a small integer tensor as host numbers, for ops whose semantics need them on the
// host (split points, index bounds named in an error). The tensor is copied to the CPU first, so
// this reads host memory whatever device it came from.
#include <vector>

#include "ember/core/tensor.h"

namespace ember::native {

inline std::vector<int64_t> host_int64_values(const Tensor& t) {
  Tensor c = t.to(Device(), kLong).contiguous();
  const int64_t* p = static_cast<const int64_t*>(c.data_ptr());  // host memory: c is on the CPU
  return std::vector<int64_t>(p, p + c.numel());
}

}  // namespace ember::native
