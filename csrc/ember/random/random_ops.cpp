// Random sampling ops: argument checks, outputs on the inputs' (or the options') device, and the
// sampling stubs of kernels/random.h (the CPU's Philox samplers: kernels/cpu/random.cpp). torch.normal
// with tensor mean/std is a composite of normal_ with mul_/add_.
#include <algorithm>
#include <cmath>
#include <limits>

#include "ember/core/fresh.h"
#include "ember/core/operators.h"
#include "ember/generated/native.h"
#include "ember/generated/ops.h"
#include "ember/iter/tensor_iter.h"
#include "ember/kernels/random.h"
#include "ember/random/generator.h"

EMBER_DEFINE_STUB(uniform_stub)
EMBER_DEFINE_STUB(normal_stub)
EMBER_DEFINE_STUB(exponential_stub)
EMBER_DEFINE_STUB(bernoulli_stub)
EMBER_DEFINE_STUB(random_stub)
EMBER_DEFINE_STUB(randperm_stub)
EMBER_DEFINE_STUB(multinomial_stub)
EMBER_DEFINE_STUB(poisson_stub)

namespace ember::native {

namespace {

// Run `fill_contig(tensor)` on a contiguous tensor, copying back when self is strided. The version
// moves once the values are written (a failed check leaves it).
template <class F>
const Tensor& fill_via_contiguous(const Tensor& self, const F& fill_contig) {
  if (self.is_contiguous()) {
    fill_contig(self);
    self.impl()->bump_version();
    return self;
  }
  Tensor tmp = empty_tensor(self.sizes(), self.dtype(), self.device());
  fill_contig(tmp);
  ember::copy_(self, tmp);
  self.impl()->bump_version();
  return self;
}

void check_float(const Tensor& t, const char* what) {
  EMBER_CHECK_KIND(is_floating(t.dtype()), NotImplemented, "\"", what, "\" not implemented for '", t.dtype(), "'");
}
}  // namespace

const Tensor& uniform_(const Tensor& self, double from, double to, Generator* gen) {
  if (is_complex(self.dtype())) {  // both parts from U[from, to), as PyTorch's complex rand
    native::uniform_(ember::view_as_real(self), from, to, gen);
    return self;
  }
  check_float(self, "check_uniform_bounds");
  EMBER_CHECK(from <= to, "uniform_ expects to return a [from, to) range, but found from=", from, " > to=", to);
  auto kernel = uniform_stub(self.device(), "uniform_");
  Generator& g = generator_for(gen, self.device());
  return fill_via_contiguous(self, [&](const Tensor& t) { kernel(t, from, to, g); });
}

const Tensor& normal_(const Tensor& self, double mean, double std, Generator* gen) {
  if (self.numel() == 0) return self;  // PyTorch checks the dtype in the kernel, which an empty tensor skips
  if (is_complex(self.dtype())) {  // a complex normal of variance std^2: each part with std / sqrt(2)
    EMBER_CHECK(std >= 0.0, "normal expects std >= 0.0, but found std ", std);
    native::normal_(ember::view_as_real(self), mean, std / std::sqrt(2.0), gen);
    return self;
  }
  check_float(self, "normal_kernel_cpu");
  EMBER_CHECK(std >= 0.0, "normal expects std >= 0.0, but found std ", std);
  auto kernel = normal_stub(self.device(), "normal_");
  Generator& g = generator_for(gen, self.device());
  return fill_via_contiguous(self, [&](const Tensor& t) { kernel(t, mean, std, g); });
}

const Tensor& exponential_(const Tensor& self, double lambd, Generator* gen) {
  EMBER_CHECK(is_floating(self.dtype()) || self.numel() == 0, "Exponential distribution is a continuous probability distribution. dtype "
              "must be a floating point but you specified ", self.dtype());
  EMBER_CHECK(lambd > 0.0, "exponential_ expects lambda > 0.0, but found lambda=", lambd);
  auto kernel = exponential_stub(self.device(), "exponential_");
  Generator& g = generator_for(gen, self.device());
  return fill_via_contiguous(self, [&](const Tensor& t) { kernel(t, lambd, g); });
}

// Cauchy, log-normal and geometric draws: transforms of uniform / normal ones (inverse CDFs)
const Tensor& cauchy_(const Tensor& self, double median, double sigma, Generator* gen) {
  EMBER_CHECK(is_floating(self.dtype()), "Cauchy distribution is a continuous probability distribution. dtype must "
              "be a floating point but you specified ", self.dtype());
  EMBER_CHECK(sigma > 0.0, "cauchy_ expects sigma > 0.0, but found sigma=", sigma);
  native::uniform_(self, 0.0, 1.0, gen);
  return self.sub_(Scalar(0.5)).mul_(Scalar(M_PI)).tan_().mul_(Scalar(sigma)).add_(Scalar(median));
}

const Tensor& log_normal_(const Tensor& self, double mean, double std, Generator* gen) {
  check_float(self, "log_normal_cpu");
  EMBER_CHECK(std > 0.0, "log_normal_ expects std > 0.0, but found std=", std);
  native::normal_(self, mean, std, gen);
  return self.exp_();
}

// trials until the first success: ceil(log(1 - u) / log(1 - p)) >= 1
const Tensor& geometric_(const Tensor& self, double p, Generator* gen) {
  EMBER_CHECK(p > 0 && p < 1, "geometric_ expects p to be in (0, 1), but found p=", p);
  if (self.numel() == 0) return self;
  Tensor u = empty_tensor(self.sizes(), kDouble, self.device());
  native::uniform_(u, 0.0, 1.0, gen);
  Tensor draws = u.neg_().log1p_().div_(scalar_to_tensor(Scalar(std::log1p(-p)))).ceil_().clamp_min_(scalar_to_tensor(Scalar(1.0)));
  ember::copy_(self, draws);
  return self;
}

const Tensor& bernoulli_(const Tensor& self, const Tensor& p, Generator* gen) {
  if (self.numel() == 0) return self;
  // p may be a CPU number (dropout's keep probability) for a tensor on any device
  if (p.device() != self.device() && !(p.dim() == 0 && p.device().is_cpu()))
    fail_device_mismatch("bernoulli_", self.device(), p.device());
  auto kernel = bernoulli_stub(self.device(), "bernoulli_");
  if (p.dim() == 0 && !self.device().is_cpu()) {
    // a number p (dropout's keep probability) for a device tensor: checked on the host, compared on the
    // device with the same uniforms the kernel would draw; no full-size p, no device-side check to read back
    const double pv = p.item().to_double();
    EMBER_CHECK(pv >= 0 && pv <= 1, "bernoulli_ expects all elements of p to be in [0, 1]");
    Tensor u = empty_tensor(self.sizes(), kDouble, self.device());
    native::uniform_(u, 0.0, 1.0, gen);
    ember::copy_(self, ember::lt(u, scalar_to_tensor(Scalar(pv))));
    return self;
  }
  Generator& g = generator_for(gen, self.device());
  Tensor pd = p.to(kDouble);
  if (pd.device() != self.device()) pd = pd.to(self.device());
  Tensor prob = ember::expand(pd, self.sizes()).contiguous();
  return fill_via_contiguous(self, [&](const Tensor& t) { kernel(t, prob, g); });
}

Tensor bernoulli(const Tensor& self, Generator* gen) {
  if (self.numel() > 0) check_float(self, "bernoulli_tensor_cpu_self_");
  Tensor r = empty_tensor(self.sizes(), self.dtype(), self.device());
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
  auto kernel = random_stub(self.device(), "random_");
  Generator& g = generator_for(gen, self.device());
  uint64_t range = uint64_t(hi) - uint64_t(from);  // up to 2**64 - 1: hi - from in int64 would overflow
  return fill_via_contiguous(self, [&](const Tensor& t) { kernel(t, from, range, g); });
}

// ---- factories
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
  auto kernel = randperm_stub(o.device_or_cpu(), "randperm");
  Generator& g = generator_for(gen, o.device_or_cpu());
  Tensor idx = empty_tensor({n}, kLong, o.device_or_cpu());
  kernel(idx, g);
  return idx.to(o.dtype_or(kLong));
}
Tensor rand_like(const Tensor& self, const TensorOptions& o, std::optional<MemoryFormat>) {
  return native::rand(self.sizes(), nullptr, o.dtype(o.dtype_or(self.dtype())).device(o.device_ ? *o.device_ : self.device()));
}
Tensor randn_like(const Tensor& self, const TensorOptions& o, std::optional<MemoryFormat>) {
  return native::randn(self.sizes(), nullptr, o.dtype(o.dtype_or(self.dtype())).device(o.device_ ? *o.device_ : self.device()));
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
RANDOM_OUT(rand, native::rand(size, gen, o.dtype(out.dtype()).device(out.device())))
RANDOM_OUT(randn, native::randn(size, gen, o.dtype(out.dtype()).device(out.device())))
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
  return ember::copy_(out, native::randperm(n, gen, o.dtype(out.dtype()).device(out.device())));
}

Tensor multinomial(const Tensor& self, int64_t num_samples, bool replacement, Generator* gen) {
  EMBER_CHECK(self.dim() == 1 || self.dim() == 2, "prob_dist must be 1 or 2 dim");
  EMBER_CHECK(is_floating(self.dtype()), "multinomial only supports floating-point dtypes for input, got: ", self.dtype());
  EMBER_CHECK(num_samples > 0, "cannot sample n_sample <= 0 samples");
  int64_t cats = self.sizes().back();
  EMBER_CHECK(replacement || num_samples <= cats, "cannot sample n_sample > prob_dist.size(-1) samples without replacement");
  auto kernel = multinomial_stub(self.device(), "multinomial");
  Tensor p = self.reshape({-1, cats}).to(kDouble).contiguous();
  Tensor out = empty_tensor({p.sizes()[0], num_samples}, kLong, self.device());
  kernel(out, p, replacement, generator_for(gen, self.device()));
  return self.dim() == 1 ? out.reshape({num_samples}) : out;
}

// ---------------------------------------------------------------- normal with tensor mean / std
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
  check_same_device("normal", mean.device(), {&std_dev});
  check_std(std_dev);
  Tensor both[2] = {mean, std_dev};
  Tensor out = empty_tensor(broadcast_shapes(mean.sizes(), std_dev.sizes()), result_type(both, 2), mean.device());
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
  Tensor out = empty_tensor(mean.sizes(), mean.dtype(), mean.device());
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
  Tensor out = empty_tensor(std_dev.sizes(), std_dev.dtype(), std_dev.device());
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
  Tensor out = empty_tensor(size, o.dtype_or(default_dtype()), o.device_or_cpu());
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
Tensor poisson(const Tensor& self, Generator* gen) {
  EMBER_CHECK_KIND(is_floating(self.dtype()), NotImplemented, "\"poisson_cpu\" not implemented for '", self.dtype(), "'");
  auto kernel = poisson_stub(self.device(), "poisson");
  Tensor rates = self.to(kDouble).contiguous();
  Tensor out = empty_tensor(self.sizes(), kDouble, self.device());
  kernel(out, rates, generator_for(gen, self.device()));
  return out.to(self.dtype());
}

// ---------------------------------------------------------------- bernoulli(p: float), random_(to)
Tensor bernoulli(const Tensor& self, double p, Generator* gen) {
  Tensor r = empty_tensor(self.sizes(), self.dtype(), self.device());
  return native::bernoulli_(r, p, gen);
}

const Tensor& bernoulli_(const Tensor& self, double p, Generator* gen) {
  EMBER_CHECK(p >= 0 && p <= 1, "bernoulli_ expects p to be in [0, 1], but got p=", p);
  return native::bernoulli_(self, ember::full({}, p, TensorOptions(kDouble)), gen);
}

const Tensor& random_(const Tensor& self, int64_t to, Generator* gen) { return native::random_(self, 0, to, gen); }

}  // namespace ember::native
