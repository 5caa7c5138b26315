#include "ember/random/generator.h"

#include <array>
#include <cstring>
#include <memory>
#include <random>

#include "ember/core/error.h"
#include "ember/cuda/cuda.h"

namespace ember {

uint64_t Generator::seed() {
  std::random_device rd;
  uint64_t s = (uint64_t(rd()) << 32) | rd();
  manual_seed(s);
  return s;
}

void Generator::get_state(uint8_t out[16]) const {
  std::memcpy(out, &seed_, 8);
  std::memcpy(out + 8, &offset_, 8);
}

void Generator::set_state(const uint8_t in[16]) {
  std::lock_guard<std::mutex> g(mu_);
  std::memcpy(&seed_, in, 8);
  std::memcpy(&offset_, in + 8, 8);
}

Generator& default_generator() {
  static Generator g;
  return g;
}

namespace {
// Device indices are int8_t: one generator for each, made at first use, seeded before CUDA starts
// when a program seeds early (no CUDA call is needed to hold a seed).
constexpr int kMaxCudaGenerators = 128;
std::array<std::unique_ptr<Generator>, kMaxCudaGenerators>& cuda_generators() {
  static auto* gens = [] {
    auto* a = new std::array<std::unique_ptr<Generator>, kMaxCudaGenerators>();
    for (int i = 0; i < kMaxCudaGenerators; i++)
      (*a)[size_t(i)] = std::make_unique<Generator>(Generator::kDefaultSeed, Device(DeviceType::CUDA, int8_t(i)));
    return a;
  }();
  return *gens;
}
}  // namespace

Generator& default_generator(Device device) {
  // (an out-of-tree backend's samplers draw from the CPU's generator: it has none of its own)
  if (device.type != DeviceType::CUDA) return default_generator();
  const int index = device.index < 0 ? cuda::current_device() : device.index;
  return *cuda_generators()[size_t(index)];
}

void manual_seed_cuda_all(uint64_t seed) {
  for (auto& g : cuda_generators()) g->manual_seed(seed);
}

Generator& generator_for(Generator* gen, Device device) {
  if (!gen) return default_generator(device);
  const DeviceType expected = device.type == DeviceType::CUDA ? DeviceType::CUDA : DeviceType::CPU;
  EMBER_CHECK(gen->device().type == expected, "Expected a '", device_type_name(device.type),
              "' device type for generator but found '", device_type_name(gen->device().type), "'");
  return *gen;
}

}  // namespace ember
