#pragma once
// Ember's random number generator: Philox4x32-10 (Salmon et al., SC'11), a counter-based
// generator. Element i of a random tensor depends only on (seed, offset, i), never on how the
// work is split across threads, so results are identical for any thread count.
#include <cstdint>
#include <mutex>

#include "ember/core/macros.h"

namespace ember {

struct Philox {
  // Four 32-bit random words for (key, counter). The CPU's and the GPU's samplers share it
  // (kernels/cuda/random.cu), so a seed gives the same stream on both.
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

class EMBER_API Generator {
 public:
  static constexpr uint64_t kDefaultSeed = 67280421310721ull;
  explicit Generator(uint64_t seed = kDefaultSeed) : seed_(seed) {}

  void manual_seed(uint64_t seed) {
    std::lock_guard<std::mutex> g(mu_);
    seed_ = seed;
    offset_ = 0;
  }
  uint64_t initial_seed() const { return seed_; }
  uint64_t seed();  // re-seed from the OS's entropy and return the new seed

  // Reserve `n` Philox counters for one op; returns the first.
  uint64_t reserve(uint64_t n) {
    std::lock_guard<std::mutex> g(mu_);
    uint64_t o = offset_;
    offset_ += n;
    return o;
  }
  uint64_t key() const { return seed_; }

  // State as 16 bytes: seed then offset, little-endian (get_state/set_state).
  void get_state(uint8_t out[16]) const;
  void set_state(const uint8_t in[16]);

 private:
  std::mutex mu_;
  uint64_t seed_;
  uint64_t offset_ = 0;
};

EMBER_API Generator& default_generator();

}  // namespace ember
