// Activation functions (ops.yaml's neural-network section, ember.nn.functional).
// Ops with a `grad:` formula compute their forward here with plain ember ops; the generated
// wrapper runs it without recording, so each is one autograd node whose backward (and, through
// `jvp: auto`, forward-mode tangent) is its formula in autograd/formulas.cpp. The others
// (relu6, selu, celu, softsign, tanhshrink, glu, prelu, rrelu) are composites of public ops.
#include <cmath>
#include <limits>

#include "ember/generated/native.h"
#include "ember/generated/ops.h"
#include "ember/ops/nn_common.h"
#include "ember/ops/opmath.h"

namespace ember::native {

using nn_detail::check_floating;
using nn_detail::scalar;

namespace {
constexpr double kSeluAlpha = 1.6732632423543772848170429916717;
constexpr double kSeluScale = 1.0507009873554804934193349852946;

// op_ of an op whose functional form is computed here: write the result back into self.
const Tensor& assign(const Tensor& self, const Tensor& result) {
  ember::copy_(self, result);
  return self;
}
}  // namespace

// ---- hardtanh, relu6
// the bounds in the input's own kind: an integer input stays integer, as PyTorch's kernel keeps it
static Tensor bound(const Tensor& self, const Scalar& v) {
  EMBER_CHECK(self.dtype() != kBool, "\"hardtanh\" not implemented for 'Bool'");
  return scalar_to_tensor(is_integral(self.dtype(), false) ? Scalar(v.to_long()) : v);
}
Tensor hardtanh(const Tensor& self, const Scalar& min_val, const Scalar& max_val) {
  return ember::clamp(self, bound(self, min_val), bound(self, max_val));
}
const Tensor& hardtanh_(const Tensor& self, const Scalar& min_val, const Scalar& max_val) {
  return ember::clamp_(self, bound(self, min_val), bound(self, max_val));
}
Tensor relu6(const Tensor& self) { return ember::hardtanh(self, 0, 6); }
const Tensor& relu6_(const Tensor& self) { return ember::hardtanh_(self, 0, 6); }

// ---- leaky_relu
Tensor leaky_relu(const Tensor& self, const Scalar& negative_slope) {
  check_floating(self, "leaky_relu_cpu");
  return ember::where(ember::gt(self, 0), self, self * negative_slope);
}
const Tensor& leaky_relu_(const Tensor& self, const Scalar& negative_slope) {
  return assign(self, native::leaky_relu(self, negative_slope));
}

// ---- elu family: x > 0 ? scale * x : scale * alpha * (exp(x * input_scale) - 1)
Tensor elu(const Tensor& self, const Scalar& alpha, const Scalar& scale, const Scalar& input_scale) {
  check_floating(self, "elu_cpu");
  return in_opmath(self, [&](const Tensor& x) {
    Tensor neg = ember::expm1(x * input_scale) * (alpha.to_double() * scale.to_double());
    return ember::where(ember::gt(x, 0), x * scale, neg);
  });
}
const Tensor& elu_(const Tensor& self, const Scalar& alpha, const Scalar& scale, const Scalar& input_scale) {
  return assign(self, native::elu(self, alpha, scale, input_scale));
}
Tensor selu(const Tensor& self) { return ember::elu(self, kSeluAlpha, kSeluScale, 1); }
const Tensor& selu_(const Tensor& self) { return ember::elu_(self, kSeluAlpha, kSeluScale, 1); }
static double celu_input_scale(const Scalar& alpha) {
  EMBER_CHECK(alpha.to_double() != 0, "ZeroDivisionError: alpha cannot be 0 for CELU");
  return 1.0 / alpha.to_double();
}
Tensor celu(const Tensor& self, const Scalar& alpha) { return ember::elu(self, alpha, 1, celu_input_scale(alpha)); }
const Tensor& celu_(const Tensor& self, const Scalar& alpha) {
  return ember::elu_(self, alpha, 1, celu_input_scale(alpha));
}

// ---- gelu: x * Phi(x), or its tanh approximation
Tensor gelu(const Tensor& self, std::string_view approximate) {
  EMBER_CHECK(approximate == "none" || approximate == "tanh", "approximate argument must be either none or tanh.");
  check_floating(self, "GeluKernelImpl");
  return in_opmath(self, [&](const Tensor& x) {
    if (approximate == "tanh") {
      const double beta = std::sqrt(2.0 / M_PI), kappa = 0.044715;
      Tensor inner = (x + x * x * x * kappa) * beta;
      return x * 0.5 * (ember::tanh(inner) + 1);
    }
    return x * 0.5 * (ember::erf(x * M_SQRT1_2) + 1);
  });
}

// ---- silu, mish
Tensor silu(const Tensor& self) {
  if (!is_complex(self.dtype())) check_floating(self, "silu_cpu");  // x sigmoid(x) is defined for complex x too
  return in_opmath(self, [](const Tensor& x) { return x * ember::sigmoid(x); });
}
const Tensor& silu_(const Tensor& self) { return assign(self, native::silu(self)); }

Tensor mish(const Tensor& self) {
  check_floating(self, "mish_cpu");
  return in_opmath(self, [](const Tensor& x) {
    Tensor softplus = ember::clamp_min(x, scalar(0.0)) + ember::log1p(ember::exp(-x.abs()));
    return x * ember::tanh(softplus);
  });
}
const Tensor& mish_(const Tensor& self) { return assign(self, native::mish(self)); }

// ---- hardsigmoid, hardswish: relu6(x + 3) / 6 and x * relu6(x + 3) / 6
Tensor hardsigmoid(const Tensor& self) {
  check_floating(self, "hardsigmoid_cpu");
  return in_opmath(self, [](const Tensor& x) { return ember::clamp(x + 3, scalar(0.0), scalar(6.0)) / 6; });
}
const Tensor& hardsigmoid_(const Tensor& self) { return assign(self, native::hardsigmoid(self)); }

Tensor hardswish(const Tensor& self) {
  check_floating(self, "hardswish_cpu");
  return in_opmath(self, [](const Tensor& x) { return x * ember::clamp(x + 3, scalar(0.0), scalar(6.0)) / 6; });
}
const Tensor& hardswish_(const Tensor& self) { return assign(self, native::hardswish(self)); }

// ---- softplus: log(1 + exp(beta x)) / beta, linear above the threshold
Tensor softplus(const Tensor& self, const Scalar& beta, const Scalar& threshold) {
  check_floating(self, "softplus_cpu");
  return in_opmath(self, [&](const Tensor& x) {
    Tensor z = x * beta;
    return ember::where(ember::gt(z, threshold), x, ember::log1p(ember::exp(z)) / beta);
  });
}

// ---- shrinks, threshold
static void check_lambda(const Tensor& self, const Scalar& lambd) {
  double hi = self.dtype() == kDouble ? std::numeric_limits<double>::max() : std::numeric_limits<float>::max();
  EMBER_CHECK(lambd.to_double() >= 0 && lambd.to_double() <= hi, "lambda must be in range [0, ", hi,
              "] for input dtype ", self.dtype(), ", but found ", lambd.to_double());
}
Tensor softshrink(const Tensor& self, const Scalar& lambd) {
  check_floating(self, "softshrink_cpu");
  check_lambda(self, lambd);
  Tensor l = scalar(lambd.to_double());
  return (self - ember::clamp(self, -l, l)).to(self.dtype());  // a 0-d self would promote with the 0-d bound
}
Tensor hardshrink(const Tensor& self, const Scalar& lambd) {
  return self.masked_fill(ember::le(self.abs(), lambd), 0);
}
Tensor threshold(const Tensor& self, const Scalar& threshold, const Scalar& value) {
  return self.masked_fill(ember::le(self, threshold), value);
}
const Tensor& threshold_(const Tensor& self, const Scalar& threshold, const Scalar& value) {
  return ember::masked_fill_(self, ember::le(self, threshold), value);
}

// ---- log_sigmoid: min(x, 0) - log1p(exp(-|x|)), stable for large |x|
Tensor log_sigmoid(const Tensor& self) {
  check_floating(self, "log_sigmoid_cpu");
  return in_opmath(self, [](const Tensor& x) {
    return ember::clamp_max(x, scalar(0.0)) - ember::log1p(ember::exp(-x.abs()));
  });
}

// ---- composites
Tensor softsign(const Tensor& self) { return self / (self.abs() + 1); }
Tensor tanhshrink(const Tensor& self) { return self - self.tanh(); }

Tensor glu(const Tensor& self, int64_t dim) {
  EMBER_CHECK(self.dim() > 0, "glu does not support scalars because halving size must be even");
  int64_t d = wrap_dim(dim, self.dim());
  int64_t n = self.size(d);
  EMBER_CHECK(n % 2 == 0, "Halving dimension must be even, but dimension ", d, " is size ", n);
  return self.narrow(d, 0, n / 2) * ember::sigmoid(self.narrow(d, n / 2, n / 2));
}

Tensor prelu(const Tensor& self, const Tensor& weight) {
  EMBER_CHECK(self.dtype() == weight.dtype(), "prelu: Type promoting not supported. Got ", self.dtype(), " and ",
              weight.dtype());
  if (weight.numel() != 1) {
    EMBER_CHECK(self.dim() > 0, "Not allow zero-dim input tensor.");
    int64_t channels = self.dim() > 1 ? self.size(1) : 1;
    EMBER_CHECK(channels == weight.numel(), "Mismatch of parameter numbers and input channel size. Found parameter "
                "numbers = ", weight.numel(), " and channel size = ", channels, ".");
  }
  EMBER_CHECK(weight.dim() <= 1, "prelu: Expected `weight` to be a scalar or 1D tensor, but got: ndim = ", weight.dim());
  Tensor w = weight;
  if (self.dim() != weight.dim()) {
    DimVector shape(size_t(self.dim()), 1);
    if (self.dim() > 1) shape[1] = weight.numel();
    w = weight.reshape(shape);
  }
  return ember::where(ember::gt(self, 0), self, w * self);
}

// ---- rrelu: in training, negative inputs are scaled by a slope drawn from U(lower, upper);
// in evaluation it is leaky_relu with the mean slope.
static void check_rrelu(const Tensor& self, const Scalar& lower, const Scalar& upper) {
  check_floating(self, "leaky_relu_cpu");
  EMBER_CHECK(lower.to_double() <= upper.to_double(), "Lower bound should be less than or equal to the upper bound");
}
static Tensor rrelu_noise(const Tensor& self, const Scalar& lower, const Scalar& upper, Generator* generator) {
  Tensor r = ember::empty_like(self, TensorOptions(self.dtype()));
  ember::uniform_(r, lower.to_double(), upper.to_double(), generator);
  return r.masked_fill(ember::gt(self, 0), 1);
}
Tensor rrelu(const Tensor& self, const Scalar& lower, const Scalar& upper, bool training, Generator* generator) {
  check_rrelu(self, lower, upper);
  if (!training) return ember::leaky_relu(self, (lower.to_double() + upper.to_double()) / 2);
  return self * rrelu_noise(self, lower, upper, generator);
}
const Tensor& rrelu_(const Tensor& self, const Scalar& lower, const Scalar& upper, bool training, Generator* generator) {
  check_rrelu(self, lower, upper);
  if (!training) return ember::leaky_relu_(self, (lower.to_double() + upper.to_double()) / 2);
  return ember::mul_(self, rrelu_noise(self, lower, upper, generator));
}

}  // namespace ember::native
