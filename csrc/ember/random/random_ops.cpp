// Random sampling ops. Each op reserves ceil(n / per_counter) Philox counters from the generator
// and element i reads word (i % per_counter) of counter (first + i / per_counter).
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "ember/core/checked_math.h"
#include "ember/generated/native.h"
#include "ember/generated/ops.h"
#include "ember/parallel/parallel.h"
#include "ember/random/generator.h"
#include "ember/iter/tensor_iter.h"

namespace ember::native {

namespace {
Generator& gen_or_default(Generator* g) { return g ? *g : default_generator(); }

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

// Run `fill_contig(tensor)` on a contiguous tensor, copying back when self is strided.
template <class F>
const Tensor& fill_via_contiguous(const Tensor& self, const F& fill_contig) {
  self.impl()->bump_version();
  if (self.is_contiguous()) {
    fill_contig(self);
    return self;
  }
  Tensor tmp = empty_tensor(self.sizes(), self.dtype());
  fill_contig(tmp);
  ember::copy_(self, tmp);
  return self;
}

void check_float(const Tensor& t, const char* what) {
  EMBER_CHECK_KIND(is_floating(t.dtype()), NotImplemented, "\"", what, "\" not implemented for '", t.dtype(), "'");
}

// uniform [lo, hi) in the tensor's dtype
void uniform_contig(const Tensor& t, double lo, double hi, Generator& g) {
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
      uniform_contig(f, lo, hi, g);
      ember::copy_(t, f);
      return;
    }
  }
}

void normal_contig(const Tensor& t, double mean, double std, Generator& g) {
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
  normal_contig(f, mean, std, g);
  ember::copy_(t, f);
}
}  // namespace

const Tensor& uniform_(const Tensor& self, double from, double to, Generator* gen) {
  check_float(self, "check_uniform_bounds");
  EMBER_CHECK(from <= to, "uniform_ expects to return a [from, to) range, but found from=", from, " > to=", to);
  Generator& g = gen_or_default(gen);
  return fill_via_contiguous(self, [&](const Tensor& t) { uniform_contig(t, from, to, g); });
}

const Tensor& normal_(const Tensor& self, double mean, double std, Generator* gen) {
  if (self.numel() == 0) return self;  // PyTorch checks the dtype in the kernel, which an empty tensor skips
  check_float(self, "normal_kernel_cpu");
  EMBER_CHECK(std >= 0.0, "normal expects std >= 0.0, but found std ", std);
  Generator& g = gen_or_default(gen);
  return fill_via_contiguous(self, [&](const Tensor& t) { normal_contig(t, mean, std, g); });
}

const Tensor& exponential_(const Tensor& self, double lambd, Generator* gen) {
  EMBER_CHECK(is_floating(self.dtype()) || self.numel() == 0, "Exponential distribution is a continuous probability distribution. dtype "
              "must be a floating point but you specified ", self.dtype());
  EMBER_CHECK(lambd > 0.0, "exponential_ expects lambda > 0.0, but found lambda=", lambd);
  Generator& g = gen_or_default(gen);
  return fill_via_contiguous(self, [&](const Tensor& t) {
    Tensor u = empty_tensor(t.sizes(), kDouble);
    uniform_contig(u, 0.0, 1.0, g);
    double* p = static_cast<double*>(u.data_ptr());
    for (int64_t i = 0; i < u.numel(); i++) p[i] = -std::log1p(-p[i]) / lambd;
    ember::copy_(t, u);
  });
}

const Tensor& bernoulli_(const Tensor& self, const Tensor& p, Generator* gen) {
  if (self.numel() == 0) return self;
  Generator& g = gen_or_default(gen);
  Tensor prob = ember::expand(p.to(kDouble), self.sizes()).contiguous();
  const double* pp = static_cast<const double*>(prob.data_ptr());
  for (int64_t i = 0; i < prob.numel(); i++)
    EMBER_CHECK(pp[i] >= 0 && pp[i] <= 1, "bernoulli_ expects all elements of p to be in [0, 1]");
  return fill_via_contiguous(self, [&](const Tensor& t) {
    Tensor u = empty_tensor(t.sizes(), kDouble);
    uniform_contig(u, 0.0, 1.0, g);
    double* up = static_cast<double*>(u.data_ptr());
    for (int64_t i = 0; i < u.numel(); i++) up[i] = up[i] < pp[i] ? 1.0 : 0.0;
    ember::copy_(t, u);
  });
}

Tensor bernoulli(const Tensor& self, Generator* gen) {
  if (self.numel() > 0) check_float(self, "bernoulli_tensor_cpu_self_");
  Tensor r = empty_tensor(self.sizes(), self.dtype());
  return native::bernoulli_(r, self, gen);
}

const Tensor& random_(const Tensor& self, int64_t from, std::optional<int64_t> to, Generator* gen) {
  int64_t hi;
  if (to) {
    hi = *to;
  } else {
    switch (self.dtype()) {
      case kBool: hi = 2; break;
      case kByte: hi = 256; break;
      case kChar: hi = 128; break;
      case kShort: hi = 32768; break;
      case kInt: hi = int64_t(1) << 31; break;
      case kHalf: hi = (int64_t(1) << 11) + 1; break;
      case kBFloat16: hi = (int64_t(1) << 8) + 1; break;
      case kFloat: hi = (int64_t(1) << 24) + 1; break;
      case kDouble: hi = (int64_t(1) << 53) + 1; break;
      default: hi = std::numeric_limits<int64_t>::max(); break;
    }
  }
  EMBER_CHECK(from < hi, "random_ expects 'from' to be less than 'to', but got from=", from, " >= to=", hi);
  if (to && (is_integral(self.dtype(), true))) {
    // the range must fit the dtype (PyTorch's check_from_to_in_range)
    int64_t lo = 0, top = 1;
    const char* tn = "bool";
    switch (self.dtype()) {
      case kByte: lo = 0; top = 255; tn = "unsigned char"; break;
      case kChar: lo = -128; top = 127; tn = "signed char"; break;
      case kShort: lo = -32768; top = 32767; tn = "short int"; break;
      case kInt: lo = std::numeric_limits<int32_t>::min(); top = std::numeric_limits<int32_t>::max(); tn = "int"; break;
      case kLong: lo = std::numeric_limits<int64_t>::min(); top = std::numeric_limits<int64_t>::max(); tn = "long int"; break;
      default: break;
    }
    EMBER_CHECK(from >= lo && from <= top, "from is out of bounds for ", tn);
    EMBER_CHECK(hi - 1 >= lo && hi - 1 <= top, "to - 1 is out of bounds for ", tn);
  }
  Generator& g = gen_or_default(gen);
  uint64_t range = uint64_t(hi) - uint64_t(from);  // up to 2**64 - 1: hi - from in int64 would overflow
  return fill_via_contiguous(self, [&](const Tensor& t) {
    Tensor v = empty_tensor(t.sizes(), kLong);
    int64_t* p = static_cast<int64_t*>(v.data_ptr());
    philox_fill(g, v.numel(), 2, [&](int64_t i, const uint32_t* w, int j) {
      uint64_t r = (uint64_t(w[2 * j]) << 32) | w[2 * j + 1];
      p[i] = int64_t(uint64_t(from) + r % range);  // in [from, hi): the unsigned sum wraps back into range
    });
    ember::copy_(t, v);
  });
}

// ---- factories
// factories start at version 0, whatever in-place fill made them
static Tensor fresh(Tensor t) {
  t.impl()->set_version_counter(intrusive_ptr<VersionCounter>());
  return t;
}
Tensor rand(IntArrayRef size, Generator* gen, const TensorOptions& o) {
  Tensor t = empty_tensor(size, o.dtype_or(default_dtype()), o.device_or_cpu());
  return fresh(native::uniform_(t, 0, 1, gen));
}
Tensor randn(IntArrayRef size, Generator* gen, const TensorOptions& o) {
  Tensor t = empty_tensor(size, o.dtype_or(default_dtype()), o.device_or_cpu());
  return fresh(native::normal_(t, 0, 1, gen));
}
Tensor randint(int64_t high, IntArrayRef size, Generator* gen, const TensorOptions& o) {
  return native::randint(0, high, size, gen, o);
}
Tensor randint(int64_t low, int64_t high, IntArrayRef size, Generator* gen, const TensorOptions& o) {
  EMBER_CHECK(low < high, "random_ expects 'from' to be less than 'to', but got from=", low, " >= to=", high);
  Tensor t = empty_tensor(size, o.dtype_or(kLong), o.device_or_cpu());
  return fresh(native::random_(t, low, high, gen));
}
Tensor randperm(int64_t n, Generator* gen, const TensorOptions& o) {
  EMBER_CHECK(n >= 0, "randperm expects n to be non-negative, got n=", n);
  EMBER_CHECK_KIND(o.dtype_or(kLong) != kBool, NotImplemented, "\"randperm\" not implemented for 'Bool'");
  Generator& g = gen_or_default(gen);
  // shuffled in place in the output's own storage: a request beyond memory fails in the allocator
  Tensor idx = empty_tensor({n}, kLong);
  int64_t* perm = static_cast<int64_t*>(idx.data_ptr());
  for (int64_t i = 0; i < n; i++) perm[i] = i;
  if (n > 1) {
    uint64_t first = g.reserve(uint64_t(n));
    uint32_t w[4];
    for (int64_t i = n - 1; i > 0; i--) {  // Fisher-Yates
      Philox::block(g.key(), first + uint64_t(i), w);
      uint64_t r = (uint64_t(w[0]) << 32) | w[1];
      std::swap(perm[i], perm[r % uint64_t(i + 1)]);
    }
  }
  return idx.to(o.dtype_or(kLong));
}
Tensor rand_like(const Tensor& self, const TensorOptions& o, std::optional<MemoryFormat>) {
  return native::rand(self.sizes(), nullptr, o.dtype(o.dtype_or(self.dtype())));
}
Tensor randn_like(const Tensor& self, const TensorOptions& o, std::optional<MemoryFormat>) {
  return native::randn(self.sizes(), nullptr, o.dtype(o.dtype_or(self.dtype())));
}

// A factory's out= variant with an explicit dtype that disagrees with out's.
static void check_out_options(const Tensor& out, const TensorOptions& o) {
  EMBER_CHECK(!o.dtype_ || *o.dtype_ == out.dtype(), "dtype ", *o.dtype_, " does not match dtype of out parameter (",
              out.dtype(), ")");
}
#define RANDOM_OUT(name, call)                                                               \
  const Tensor& name##_out(const Tensor& out, IntArrayRef size, Generator* gen, const TensorOptions& o) { \
    check_out_options(out, o);                                                               \
    resize_output(out, size);                                                                \
    return ember::copy_(out, call);                                                          \
  }
RANDOM_OUT(rand, native::rand(size, gen, o.dtype(out.dtype())))
RANDOM_OUT(randn, native::randn(size, gen, o.dtype(out.dtype())))
#undef RANDOM_OUT
const Tensor& randint_out(const Tensor& out, int64_t high, IntArrayRef size, Generator* gen, const TensorOptions& o) {
  check_out_options(out, o);
  resize_output(out, size);
  return native::random_(out, 0, high, gen);
}
const Tensor& randint_out(const Tensor& out, int64_t low, int64_t high, IntArrayRef size, Generator* gen,
                          const TensorOptions& o) {
  check_out_options(out, o);
  resize_output(out, size);
  return native::random_(out, low, high, gen);
}
const Tensor& randperm_out(const Tensor& out, int64_t n, Generator* gen, const TensorOptions& o) {
  check_out_options(out, o);
  resize_output(out, {n});
  return ember::copy_(out, native::randperm(n, gen, o.dtype(out.dtype())));
}

Tensor multinomial(const Tensor& self, int64_t num_samples, bool replacement, Generator* gen) {
  EMBER_CHECK(self.dim() == 1 || self.dim() == 2, "prob_dist must be 1 or 2 dim");
  EMBER_CHECK(is_floating(self.dtype()), "multinomial only supports floating-point dtypes for input, got: ", self.dtype());
  EMBER_CHECK(num_samples > 0, "cannot sample n_sample <= 0 samples");
  int64_t cats = self.sizes().back();
  EMBER_CHECK(replacement || num_samples <= cats, "cannot sample n_sample > prob_dist.size(-1) samples without replacement");
  Tensor p = self.reshape({-1, cats}).to(kDouble).contiguous();
  int64_t rows = p.sizes()[0];
  Tensor out = empty_tensor({rows, num_samples}, kLong);
  Generator& g = gen_or_default(gen);
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
  return self.dim() == 1 ? out.reshape({num_samples}) : out;
}

}  // namespace ember::native
