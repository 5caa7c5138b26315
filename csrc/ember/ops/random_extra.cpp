// Random ops beyond the in-place samplers of random/random_ops.cpp: torch.normal with tensor
// mean/std, torch.poisson, bernoulli with a float p, random_(to).
#include <cmath>

#include "ember/generated/native.h"
#include "ember/core/operators.h"
#include "ember/generated/ops.h"
#include "ember/iter/tensor_iter.h"
#include "ember/parallel/parallel.h"
#include "ember/random/generator.h"

namespace ember::native {

namespace {

void check_std(const Tensor& std_dev) {
  if (std_dev.numel() == 0) return;
  bool ok = ember::ge(std_dev, scalar_to_tensor(0.0)).all(std::nullopt, false).item().to_bool();
  EMBER_CHECK(ok, "normal expects all elements of std >= 0.0");
}

// out = N(0, 1) * std + mean, drawn into `out` (already shaped)
void normal_into(const Tensor& out, const Tensor& mean, const Tensor& std_dev, double std_scalar, Generator* gen) {
  if (std_dev.defined()) {
    native::normal_(out, 0.0, 1.0, gen);
    ember::mul_(out, std_dev);
  } else {
    native::normal_(out, 0.0, std_scalar, gen);
  }
  if (mean.defined()) ember::add_(out, mean);
}

}  // namespace

Tensor normal(const Tensor& mean, const Tensor& std_dev, Generator* gen) {
  check_std(std_dev);
  Tensor both[2] = {mean, std_dev};
  Tensor out = empty_tensor(broadcast_shapes(mean.sizes(), std_dev.sizes()), result_type(both, 2));
  normal_into(out, mean, std_dev, 1.0, gen);
  return out;
}
const Tensor& normal_out(const Tensor& out, const Tensor& mean, const Tensor& std_dev, Generator* gen) {
  check_std(std_dev);
  resize_output(out, broadcast_shapes(mean.sizes(), std_dev.sizes()));
  normal_into(out, mean, std_dev, 1.0, gen);
  return out;
}

Tensor normal(const Tensor& mean, double std_dev, Generator* gen) {
  EMBER_CHECK(std_dev >= 0.0, "normal expects std >= 0.0, but found std ", std_dev);
  Tensor out = empty_tensor(mean.sizes(), mean.dtype());
  normal_into(out, mean, Tensor(), std_dev, gen);
  return out;
}
const Tensor& normal_out(const Tensor& out, const Tensor& mean, double std_dev, Generator* gen) {
  EMBER_CHECK(std_dev >= 0.0, "normal expects std >= 0.0, but found std ", std_dev);
  // PyTorch does not resize out here: out is filled, then mean is added in place (so broadcast)
  normal_into(out, mean, Tensor(), std_dev, gen);
  return out;
}

Tensor normal(double mean, const Tensor& std_dev, Generator* gen) {
  check_std(std_dev);
  Tensor out = empty_tensor(std_dev.sizes(), std_dev.dtype());
  normal_into(out, Tensor(), std_dev, 1.0, gen);
  return out.add_(scalar_to_tensor(mean));
}
const Tensor& normal_out(const Tensor& out, double mean, const Tensor& std_dev, Generator* gen) {
  check_std(std_dev);
  resize_output(out, std_dev.sizes());
  normal_into(out, Tensor(), std_dev, 1.0, gen);
  return out.add_(scalar_to_tensor(mean));
}

Tensor normal(double mean, double std_dev, IntArrayRef size, Generator* gen, const TensorOptions& o) {
  EMBER_CHECK(std_dev >= 0.0, "normal expects std >= 0.0, but found std ", std_dev);
  Tensor out = empty_tensor(size, o.dtype_or(default_dtype()));
  return native::normal_(out, mean, std_dev, gen);
}
const Tensor& normal_out(const Tensor& out, double mean, double std_dev, IntArrayRef size, Generator* gen,
                         const TensorOptions& o) {
  EMBER_CHECK(std_dev >= 0.0, "normal expects std >= 0.0, but found std ", std_dev);
  EMBER_CHECK(!o.dtype_ || *o.dtype_ == out.dtype(), "dtype ", *o.dtype_, " does not match dtype of out parameter (",
              out.dtype(), ")");
  resize_output(out, size);
  return native::normal_(out, mean, std_dev, gen);
}

// ---------------------------------------------------------------- poisson
namespace {

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

Generator& gen_or_default(Generator* g) { return g ? *g : default_generator(); }

}  // namespace

Tensor poisson(const Tensor& self, Generator* gen) {
  EMBER_CHECK_KIND(is_floating(self.dtype()), NotImplemented, "\"poisson_cpu\" not implemented for '", self.dtype(), "'");
  Tensor rates = self.to(kDouble).contiguous();
  const double* rp = static_cast<const double*>(rates.data_ptr());
  int64_t n = rates.numel();
  for (int64_t i = 0; i < n; i++)
    EMBER_CHECK(rp[i] >= 0 || std::isnan(rp[i]), "poisson expects all rates to be non-negative");
  Tensor out = empty_tensor(self.sizes(), kDouble);
  double* op = static_cast<double*>(out.data_ptr());
  if (n > 0) {
    Generator& g = gen_or_default(gen);
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
  return out.to(self.dtype());
}

// ---------------------------------------------------------------- bernoulli(p: float), random_(to)
Tensor bernoulli(const Tensor& self, double p, Generator* gen) {
  Tensor r = empty_tensor(self.sizes(), self.dtype());
  return native::bernoulli_(r, p, gen);
}

const Tensor& bernoulli_(const Tensor& self, double p, Generator* gen) {
  EMBER_CHECK(p >= 0 && p <= 1, "bernoulli_ expects p to be in [0, 1], but got p=", p);
  return native::bernoulli_(self, ember::full({}, p, TensorOptions(kDouble)), gen);
}

const Tensor& random_(const Tensor& self, int64_t to, Generator* gen) { return native::random_(self, 0, to, gen); }

}  // namespace ember::native
