// uint8 image resampling's inner loop (ops/interp.cpp's fixed-point weights), compiled per ISA: the
// int32 multiply-adds run across contiguous lanes, which the compiler vectorizes with the ISA's width.
#include <algorithm>
#include <cstdint>

#include "ember/kernels/cpu/isa/loops.h"  // EMBER_CPU_NS
#include "ember/kernels/kernels.h"

namespace ember::EMBER_CPU_NS {

void resample_u8_kernel(const uint8_t* x, uint8_t* y, int64_t lanes, const int64_t* start, const int64_t* idx,
                        const int16_t* w16, int64_t rows, int precision) {
  constexpr int64_t kChunk = 256;  // the accumulators of one chunk of lanes stay in L1
  int32_t acc[kChunk];
  const int32_t half = int32_t(1) << (precision - 1);
  for (int64_t l0 = 0; l0 < lanes; l0 += kChunk) {
    const int64_t n = std::min(kChunk, lanes - l0);
    for (int64_t j = 0; j < rows; j++) {
      for (int64_t i = 0; i < n; i++) acc[i] = half;
      for (int64_t t = start[j]; t < start[j + 1]; t++) {
        const uint8_t* xr = x + idx[t] * lanes + l0;
        const int32_t wt = w16[t];
        for (int64_t i = 0; i < n; i++) acc[i] += int32_t(xr[i]) * wt;
      }
      uint8_t* yr = y + j * lanes + l0;
      for (int64_t i = 0; i < n; i++) yr[i] = uint8_t(std::clamp(acc[i] >> precision, 0, 255));
    }
  }
}

}  // namespace ember::EMBER_CPU_NS
