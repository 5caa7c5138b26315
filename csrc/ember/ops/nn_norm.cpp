// Normalization ops (ember.nn.functional): group_norm, instance_norm, rms_norm,
// local_response_norm, normalize. All are composites of public ops (layer_norm, batch_norm,
// rsqrt, norm, ...), so their gradients of any order come from those ops' formulas.
#include <limits>
#include <sstream>

#include "ember/autograd/grad_mode.h"
#include "ember/generated/native.h"
#include "ember/iter/layout.h"
#include "ember/generated/ops.h"
#include "ember/ops/nn_common.h"

namespace ember::native {

namespace {
// weight/bias of shape [C] viewed as [1, C, 1, ...] against an input of `ndim` dims
Tensor channel_view(const Tensor& t, int64_t ndim) {
  DimVector shape(size_t(ndim), 1);
  shape[1] = t.numel();
  return t.reshape(shape);
}
Tensor affine(Tensor y, const Tensor& weight, const Tensor& bias, int64_t ndim) {
  if (weight.defined()) y = y * channel_view(weight, ndim);
  if (bias.defined()) y = y + channel_view(bias, ndim);
  return y;
}
void check_channel_param(const Tensor& t, const char* what, const Tensor& input) {
  if (!t.defined()) return;
  EMBER_CHECK(t.dim() == 1 && t.numel() == input.size(1), "Expected ", what, " to be a vector of size equal to the "
              "number of channels in input, but got ", what, " of shape ", t.sizes(), " and input of shape ",
              input.sizes());
}
int64_t numel_from(const Tensor& t, int64_t first) {
  int64_t n = 1;
  for (int64_t i = first; i < t.dim(); i++) n *= t.size(i);
  return n;
}
std::vector<int64_t> dims_from(int64_t first, int64_t ndim) {
  std::vector<int64_t> d;
  for (int64_t i = first; i < ndim; i++) d.push_back(i);
  return d;
}
}  // namespace

// layer_norm over each group (the fused kernel and its formulas), then the per-channel affine
Tensor group_norm(const Tensor& input, int64_t num_groups, const Tensor& weight, const Tensor& bias, double eps,
                  bool cudnn_enabled) {
  (void)cudnn_enabled;
  // a 0-d input has no size(0) to read; a 1-d one fails at size(1) with PyTorch's IndexError
  EMBER_CHECK(input.dim() > 0, "Expected at least 2 dimensions for input tensor but received ", input.dim());
  const int64_t N = input.size(0), C = input.size(1);
  EMBER_CHECK(num_groups > 0 && C % num_groups == 0, "Expected number of channels in input to be divisible by "
              "num_groups, but got input of shape ", input.sizes(), " and num_groups=", num_groups);
  check_channel_param(weight, "weight", input);
  check_channel_param(bias, "bias", input);
  const int64_t group_size = C / num_groups * numel_from(input, 2);
  Tensor x = input.reshape({N, num_groups, group_size});
  Tensor y = ember::layer_norm(x, IntArrayRef({group_size}), Tensor(), Tensor(), eps).reshape(input.sizes());
  return to_memory_format(affine(y, weight, bias, input.dim()), suggest_memory_format(input));
}

// As PyTorch: batch_norm over the (1, N*C, ...) view, each (sample, channel) its own channel, with
// the running stats repeated per sample and their batch average written back.
Tensor instance_norm(const Tensor& input, const Tensor& weight, const Tensor& bias, const Tensor& running_mean,
                     const Tensor& running_var, bool use_input_stats, double momentum, double eps, bool cudnn_enabled) {
  EMBER_CHECK(use_input_stats || (running_mean.defined() && running_var.defined()),
              "Expected running_mean and running_var to be defined when use_input_stats is false");
  EMBER_CHECK(input.dim() >= 2, "instance_norm: expected an input with at least 2 dimensions, but got ", input.dim());
  const int64_t N = input.size(0), C = input.size(1);
  check_channel_param(weight, "weight", input);
  check_channel_param(bias, "bias", input);
  auto repeat = [&](const Tensor& t) {
    if (!t.defined()) return t;
    EMBER_CHECK(t.numel() == C, "instance_norm: expected running stats of ", C, " elements, but got ", t.sizes());
    // a copy even for N == 1 (where the chain above is a view): batch_norm writes its running stats, and
    // running_mean itself is written below, which must not touch what the graph saved
    return t.reshape({1, C}).expand({N, C}).reshape({N * C}).clone();
  };
  Tensor w = repeat(weight), b = repeat(bias), rm = repeat(running_mean), rv = repeat(running_var);
  DimVector shape(input.sizes());
  shape[0] = 1;
  shape[1] = N * C;
  Tensor y = ember::batch_norm(input.contiguous().reshape(shape), w, b, rm, rv, use_input_stats, momentum, eps,
                               cudnn_enabled);
  if (use_input_stats && (running_mean.defined() || running_var.defined())) {
    autograd::AutoGradMode no_grad(false);
    if (running_mean.defined()) running_mean.copy_(rm.reshape({N, C}).mean(IntArrayRef({0})));
    if (running_var.defined()) running_var.copy_(rv.reshape({N, C}).mean(IntArrayRef({0})));
  }
  return y.reshape(input.sizes());
}

Tensor rms_norm(const Tensor& input, IntArrayRef normalized_shape, const Tensor& weight, std::optional<double> eps) {
  const int64_t k = int64_t(normalized_shape.size()), nd = input.dim();
  EMBER_CHECK(k >= 1, "Expected normalized_shape to be at least 1-dimensional, i.e., containing at least one element, "
              "but got normalized_shape = ", normalized_shape);
  EMBER_CHECK(!weight.defined() || weight.sizes() == normalized_shape, "Expected weight to be of same shape as "
              "normalized_shape, but got weight of shape ", weight.sizes(), " and normalized_shape = ", normalized_shape);
  bool ok = nd >= k;
  for (int64_t i = 0; ok && i < k; i++) ok = input.size(nd - k + i) == normalized_shape[size_t(i)];
  if (!ok) {
    std::ostringstream shape;
    for (int64_t i = 0; i < k; i++) shape << (i ? ", " : "") << normalized_shape[size_t(i)];
    EMBER_FAIL(Runtime, "Given normalized_shape=", normalized_shape, ", expected input with shape [*", shape.str(),
               "], but got input of size", input.sizes());
  }
  EMBER_CHECK(is_differentiable_dtype(input.dtype()), "rms_norm: expected a floating point input, but got ",
              input.dtype());
  // computed in float for half/bfloat16 (PyTorch's opmath type), complex in itself (x * x, as torch's
  // composite: no modulus); eps defaults to the machine epsilon of the real type
  ScalarType opmath = is_complex(input.dtype()) || input.dtype() == kDouble ? input.dtype() : kFloat;
  double e = eps ? *eps
                 : (to_real_dtype(opmath) == kDouble ? std::numeric_limits<double>::epsilon()
                                                     : std::numeric_limits<float>::epsilon());
  Tensor x = input.to(opmath);
  std::vector<int64_t> dims = dims_from(nd - k, nd);
  Tensor y = (x * ember::rsqrt((x * x).mean(IntArrayRef(dims), true) + e)).to(input.dtype());
  if (weight.defined()) y = y * weight;
  return y;
}

// x / (k + alpha * mean of x^2 over a window of `size` channels)^beta, the window zero-padded
// by size/2 channels before and (size-1)/2 after (AlexNet's local response normalization).
Tensor local_response_norm(const Tensor& input, int64_t size, double alpha, double beta, double k) {
  EMBER_CHECK_KIND(input.dim() >= 3, Value, "Expected 3D or higher dimensionality                          input (got ",
                   input.dim(), " dimensions)");
  EMBER_CHECK_KIND(size > 0, Value, "local_response_norm: size must be positive, but got ", size);
  if (input.numel() == 0) return input;
  const int64_t C = input.size(1), before = size / 2, after = (size - 1) / 2;
  Tensor sq = input * input;
  std::vector<Tensor> parts;
  auto zeros_channels = [&](int64_t n) {
    DimVector shape(input.sizes());
    shape[1] = n;
    return ember::zeros(shape, TensorOptions(sq.dtype()).device(sq.device()));
  };
  if (before) parts.push_back(zeros_channels(before));
  parts.push_back(sq);
  if (after) parts.push_back(zeros_channels(after));
  Tensor padded = parts.size() == 1 ? sq : ember::cat(parts, 1);
  Tensor sum = padded.narrow(1, 0, C);
  for (int64_t j = 1; j < size; j++) sum = sum + padded.narrow(1, j, C);
  Tensor div = ember::pow(sum / double(size) * alpha + k, nn_detail::scalar(beta));
  return input / div;
}

Tensor normalize(const Tensor& input, double p, int64_t dim, double eps) {
  Tensor denom = ember::norm(input, Scalar(p), IntArrayRef({dim}), true).clamp_min(nn_detail::scalar(eps));
  return input / denom.expand_as(input);
}

}  // namespace ember::native
