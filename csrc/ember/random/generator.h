#pragma once
// Ember's random number generator: Philox4x32-10 (Salmon et al., SC'11), a counter-based
// generator. Element i of a random tensor depends only on (seed, offset, i), never on how the
// work is split across threads, so results are identical for any thread count.
#include <cstdint>
#include <mutex>

#include "ember/core/device.h"
#include "ember/core/macros.h"
#include "ember/random/philox.h"

namespace ember {

class EMBER_API Generator {
 public:
  static constexpr uint64_t kDefaultSeed = 67280421310721ull;
  explicit Generator(uint64_t seed = kDefaultSeed, Device device = Device()) : seed_(seed), device_(device) {}

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
  // The device whose samplers draw from it (a CUDA generator's index is its device's).
  Device device() const { return device_; }

  // State as 16 bytes: seed then offset, little-endian (get_state/set_state).
  void get_state(uint8_t out[16]) const;
  void set_state(const uint8_t in[16]);

 private:
  std::mutex mu_;
  uint64_t seed_;
  uint64_t offset_ = 0;
  Device device_;
};

// The CPU's default generator.
EMBER_API Generator& default_generator();
// The default generator of `device`: one per CUDA device (index -1: the current one), each seeded on
// its own as PyTorch's, all starting from kDefaultSeed; the CPU's for every other device.
EMBER_API Generator& default_generator(Device device);
// Seeds the default generator of every CUDA device, present or not (torch.cuda.manual_seed_all).
EMBER_API void manual_seed_cuda_all(uint64_t seed);
// `gen`, or the default generator of `device`; RuntimeError when `gen` belongs to another device type.
EMBER_API Generator& generator_for(Generator* gen, Device device);

}  // namespace ember
