// The CPU's padding entry: the source position of each reflected, replicated or wrapped position.
#include <algorithm>

#include "ember/kernels/padding.h"

namespace ember {

namespace {

void pad_source_index_cpu(const Tensor& index, int64_t n, int64_t lo, PadMode mode) {
  int64_t* out = static_cast<int64_t*>(index.data_ptr());
  const int64_t count = index.numel();
  for (int64_t t = 0; t < count; t++) {
    const int64_t j = t - lo;
    int64_t src;
    if (mode == PadMode::Replicate) src = std::min(std::max<int64_t>(j, 0), n - 1);
    else if (mode == PadMode::Circular) src = ((j % n) + n) % n;
    else src = j < 0 ? -j : (j >= n ? 2 * (n - 1) - j : j);
    out[t] = src;
  }
}

}  // namespace

EMBER_REGISTER_KERNEL(pad_source_index_stub, CPU, &pad_source_index_cpu);

}  // namespace ember
