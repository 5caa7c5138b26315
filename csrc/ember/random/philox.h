#pragma once
// Philox4x32-10 (Salmon et al., SC'11), the counter-based generator behind every sampler: element i
// of a random tensor depends only on (seed, offset, i). Compiled for the host and the GPU
// (kernels/cuda/*.cu include this header alone), so a seed gives the same stream on both.
#include <cstdint>

#include "ember/core/macros.h"

namespace ember {

struct Philox {
  // Four 32-bit random words for (key, counter).
  EMBER_HOST_DEVICE static inline void block(uint64_t key, uint64_t counter, uint32_t out[4]) {
    uint32_t c0 = uint32_t(counter), c1 = uint32_t(counter >> 32), c2 = 0, c3 = 0;
    uint32_t k0 = uint32_t(key), k1 = uint32_t(key >> 32);
    for (int r = 0; r < 10; r++) {
      uint64_t p0 = uint64_t(0xD2511F53u) * c0, p1 = uint64_t(0xCD9E8D57u) * c2;
      uint32_t n0 = uint32_t(p1 >> 32) ^ c1 ^ k0, n1 = uint32_t(p1);
      uint32_t n2 = uint32_t(p0 >> 32) ^ c3 ^ k1, n3 = uint32_t(p0);
      c0 = n0; c1 = n1; c2 = n2; c3 = n3;
      k0 += 0x9E3779B9u;
      k1 += 0xBB67AE85u;
    }
    out[0] = c0; out[1] = c1; out[2] = c2; out[3] = c3;
  }
};

}  // namespace ember
