// The CPU's random samplers on the Philox4x32-10 stream of random/generator.h. Each op reserves
// ceil(n / per_counter) counters from the generator and element i reads word (i % per_counter) of
// counter (first + i / per_counter), so a value depends only on (seed, offset, i), never on how
// the work is split across threads.
#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "ember/generated/ops.h"
#include "ember/kernels/random.h"
#include "ember/parallel/parallel.h"
#include "ember/random/generator.h"

namespace ember::cpu {

namespace {

inline float u32_to_float(uint32_t w) { return float(w >> 8) * (1.0f / 16777216.0f); }         // [0, 1)
inline double u64_to_double(uint64_t w) { return double(w >> 11) * (1.0 / 9007199254740992.0); }  // [0, 1)

// Fill a contiguous buffer of n values; `emit(i, words, j)` writes element i from counter words.
template <class Emit>
void philox_fill(Generator& g, int64_t n, int per_counter, const Emit& emit) {
  if (n == 0) return;
  int64_t counters = (n + per_counter - 1) / per_counter;
  uint64_t first = g.reserve(uint64_t(counters));
  uint64_t key = g.key();
  parallel_for(0, counters, 4096, [&](int64_t b, int64_t e) {
    uint32_t w[4];
    for (int64_t c = b; c < e; c++) {
      Philox::block(key, first + uint64_t(c), w);
      int64_t base = c * per_counter;
      for (int j = 0; j < per_counter && base + j < n; j++) emit(base + j, w, j);
    }
  });
}

// uniform [lo, hi) in the tensor's dtype
void uniform_cpu(const Tensor& t, double lo, double hi, Generator& g) {
  int64_t n = t.numel();
  switch (t.dtype()) {
    case kDouble: {
      double* p = static_cast<double*>(t.data_ptr());
      philox_fill(g, n, 2, [&](int64_t i, const uint32_t* w, int j) {
        uint64_t v = (uint64_t(w[2 * j]) << 32) | w[2 * j + 1];
        p[i] = lo + (hi - lo) * u64_to_double(v);
      });
      return;
    }
    case kFloat: {
      float* p = static_cast<float*>(t.data_ptr());
      float flo = float(lo), fr = float(hi - lo);
      philox_fill(g, n, 4, [&](int64_t i, const uint32_t* w, int j) { p[i] = flo + fr * u32_to_float(w[j]); });
      return;
    }
    default: {
      Tensor f = empty_tensor(t.sizes(), kFloat);
      uniform_cpu(f, lo, hi, g);
      ember::copy_(t, f);
      return;
    }
  }
}

void normal_cpu(const Tensor& t, double mean, double std, Generator& g) {
  int64_t n = t.numel();
  const double two_pi = 6.283185307179586;
  if (t.dtype() == kDouble) {
    double* p = static_cast<double*>(t.data_ptr());
    philox_fill(g, n, 2, [&](int64_t i, const uint32_t* w, int j) {
      double u1 = 1.0 - u64_to_double((uint64_t(w[0]) << 32) | w[1]);  // (0, 1]
      double u2 = u64_to_double((uint64_t(w[2]) << 32) | w[3]);
      double r = std::sqrt(-2.0 * std::log(u1));
      p[i] = mean + std * r * (j == 0 ? std::cos(two_pi * u2) : std::sin(two_pi * u2));
    });
    return;
  }
  if (t.dtype() == kFloat) {
    float* p = static_cast<float*>(t.data_ptr());
    philox_fill(g, n, 4, [&](int64_t i, const uint32_t* w, int j) {
      int pair = j / 2;
      double u1 = 1.0 - double(u32_to_float(w[2 * pair]));
      double u2 = double(u32_to_float(w[2 * pair + 1]));
      double r = std::sqrt(-2.0 * std::log(u1));
      p[i] = float(mean + std * r * ((j & 1) == 0 ? std::cos(two_pi * u2) : std::sin(two_pi * u2)));
    });
    return;
  }
  Tensor f = empty_tensor(t.sizes(), kFloat);
  normal_cpu(f, mean, std, g);
  ember::copy_(t, f);
}

void exponential_cpu(const Tensor& t, double lambd, Generator& g) {
  Tensor u = empty_tensor(t.sizes(), kDouble);
  uniform_cpu(u, 0.0, 1.0, g);
  double* p = static_cast<double*>(u.data_ptr());
  for (int64_t i = 0; i < u.numel(); i++) p[i] = -std::log1p(-p[i]) / lambd;
  ember::copy_(t, u);
}

void bernoulli_cpu(const Tensor& t, const Tensor& prob, Generator& g) {
  const double* pp = static_cast<const double*>(prob.data_ptr());
  for (int64_t i = 0; i < prob.numel(); i++)
    EMBER_CHECK(pp[i] >= 0 && pp[i] <= 1, "bernoulli_ expects all elements of p to be in [0, 1]");
  Tensor u = empty_tensor(t.sizes(), kDouble);
  uniform_cpu(u, 0.0, 1.0, g);
  double* up = static_cast<double*>(u.data_ptr());
  for (int64_t i = 0; i < u.numel(); i++) up[i] = up[i] < pp[i] ? 1.0 : 0.0;
  ember::copy_(t, u);
}

void random_cpu(const Tensor& t, int64_t from, uint64_t range, Generator& g) {
  Tensor v = empty_tensor(t.sizes(), kLong);
  int64_t* p = static_cast<int64_t*>(v.data_ptr());
  philox_fill(g, v.numel(), 2, [&](int64_t i, const uint32_t* w, int j) {
    uint64_t r = (uint64_t(w[2 * j]) << 32) | w[2 * j + 1];
    p[i] = int64_t(uint64_t(from) + r % range);  // in [from, hi): the unsigned sum wraps back into range
  });
  ember::copy_(t, v);
}

// Fisher-Yates in the output's own storage: a request beyond memory fails in the allocator
void randperm_cpu(const Tensor& out, Generator& g) {
  int64_t n = out.numel();
  int64_t* perm = static_cast<int64_t*>(out.data_ptr());
  for (int64_t i = 0; i < n; i++) perm[i] = i;
  if (n > 1) {
    uint64_t first = g.reserve(uint64_t(n));
    uint32_t w[4];
    for (int64_t i = n - 1; i > 0; i--) {
      Philox::block(g.key(), first + uint64_t(i), w);
      uint64_t r = (uint64_t(w[0]) << 32) | w[1];
      std::swap(perm[i], perm[r % uint64_t(i + 1)]);
    }
  }
}

// Inverse-CDF draws over each row's weights; without replacement a drawn category's weight drops to 0.
void multinomial_cpu(const Tensor& out, const Tensor& p, bool replacement, Generator& g) {
  int64_t rows = p.sizes()[0], cats = p.sizes()[1], num_samples = out.sizes()[1];
  const double* pp = static_cast<const double*>(p.data_ptr());
  int64_t* op = static_cast<int64_t*>(out.data_ptr());
  uint64_t first = g.reserve(uint64_t(rows * num_samples));
  std::vector<double> w(static_cast<size_t>(cats));
  for (int64_t r = 0; r < rows; r++) {
    double total = 0;
    for (int64_t c = 0; c < cats; c++) {
      double v = pp[r * cats + c];
      EMBER_CHECK(std::isfinite(v) && v >= 0, "probability tensor contains either `inf`, `nan` or element < 0");
      w[c] = v;
      total += v;
    }
    EMBER_CHECK(total > 0, "invalid multinomial distribution (sum of probabilities <= 0)");
    for (int64_t s = 0; s < num_samples; s++) {
      uint32_t bits[4];
      Philox::block(g.key(), first + uint64_t(r * num_samples + s), bits);
      double u = u64_to_double((uint64_t(bits[0]) << 32) | bits[1]) * total;
      int64_t pick = cats - 1;
      double acc = 0;
      for (int64_t c = 0; c < cats; c++) {
        acc += w[c];
        if (u < acc && w[c] > 0) { pick = c; break; }
      }
      while (w[pick] == 0 && pick > 0) pick--;  // rounding at the top end
      op[r * num_samples + s] = pick;
      if (!replacement) {
        total -= w[pick];
        w[pick] = 0;
        if (s + 1 < num_samples)
          EMBER_CHECK(total > 0, "invalid multinomial distribution (with replacement=False, not enough non-negative "
                      "category to sample)");
      }
    }
  }
}

// A small per-element stream seeded from one Philox block: rejection samplers need an unbounded
// number of uniforms, and the result must not depend on how elements are split across threads.
struct SplitMix {
  uint64_t s;
  uint64_t next() {
    uint64_t z = (s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  double uniform() { return double(next() >> 11) * (1.0 / 9007199254740992.0); }  // [0, 1)
};

// Poisson(lambda): multiplication of uniforms for small rates; Hormann's transformed rejection
// with squeeze (PTRS) for rates >= 10.
double sample_poisson(double lambda, SplitMix& r) {
  if (lambda <= 0) return 0;
  if (lambda >= 10) {
    double slam = std::sqrt(lambda), loglam = std::log(lambda);
    double b = 0.931 + 2.53 * slam, a = -0.059 + 0.02483 * b, invalpha = 1.1239 + 1.1328 / (b - 3.4);
    double vr = 0.9277 - 3.6224 / (b - 2);
    while (true) {
      double u = r.uniform() - 0.5, v = r.uniform();
      double us = 0.5 - std::fabs(u);
      double k = std::floor((2 * a / us + b) * u + lambda + 0.43);
      if (us >= 0.07 && v <= vr) return k;
      if (k < 0 || (us < 0.013 && v > us)) continue;
      if (std::log(v) + std::log(invalpha) - std::log(a / (us * us) + b) <= -lambda + k * loglam - std::lgamma(k + 1))
        return k;
    }
  }
  double enlam = std::exp(-lambda), prod = 1.0;
  int64_t x = 0;
  while (true) {
    prod *= r.uniform();
    if (prod > enlam) x++;
    else return double(x);
  }
}

void poisson_cpu(const Tensor& out, const Tensor& rates, Generator& g) {
  const double* rp = static_cast<const double*>(rates.data_ptr());
  int64_t n = rates.numel();
  for (int64_t i = 0; i < n; i++)
    EMBER_CHECK(rp[i] >= 0 || std::isnan(rp[i]), "poisson expects all rates to be non-negative");
  double* op = static_cast<double*>(out.data_ptr());
  if (n == 0) return;
  uint64_t first = g.reserve(uint64_t(n)), key = g.key();
  parallel_for(0, n, 1024, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; i++) {
      uint32_t w[4];
      Philox::block(key, first + uint64_t(i), w);
      SplitMix r{(uint64_t(w[0]) << 32) | w[1]};
      op[i] = std::isnan(rp[i]) ? rp[i] : sample_poisson(rp[i], r);
    }
  });
}

}  // namespace

}  // namespace ember::cpu

EMBER_REGISTER_KERNEL(uniform_stub, CPU, &ember::cpu::uniform_cpu);
EMBER_REGISTER_KERNEL(normal_stub, CPU, &ember::cpu::normal_cpu);
EMBER_REGISTER_KERNEL(exponential_stub, CPU, &ember::cpu::exponential_cpu);
EMBER_REGISTER_KERNEL(bernoulli_stub, CPU, &ember::cpu::bernoulli_cpu);
EMBER_REGISTER_KERNEL(random_stub, CPU, &ember::cpu::random_cpu);
EMBER_REGISTER_KERNEL(randperm_stub, CPU, &ember::cpu::randperm_cpu);
EMBER_REGISTER_KERNEL(multinomial_stub, CPU, &ember::cpu::multinomial_cpu);
EMBER_REGISTER_KERNEL(poisson_stub, CPU, &ember::cpu::poisson_cpu);
