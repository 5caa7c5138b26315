#include "ember/random/generator.h"

#include <cstring>
#include <random>

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

}  // namespace ember
