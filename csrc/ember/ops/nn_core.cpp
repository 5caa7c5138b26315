// softmax, log_softmax, layer_norm, batch_norm (fused kernels) and linear.
#include <cmath>

#include "ember/core/checked_math.h"
#include "ember/autograd/grad_mode.h"
#include "ember/generated/native.h"
#include "ember/generated/ops.h"
#include "ember/iter/tensor_iter.h"
#include "ember/kernels/kernels.h"

namespace ember::native {

namespace {
Tensor softmax_impl(const Tensor& self, int64_t dim, std::optional<ScalarType> dtype, bool log) {
  Tensor x = dtype ? self.to(*dtype) : self;
  EMBER_CHECK_KIND(is_floating(x.dtype()), NotImplemented, "\"", log ? "log_softmax" : "softmax", "_lastdim_kernel_impl\" not implemented for '",
              x.dtype(), "'");
  ScalarType out_t = x.dtype(), cd = is_reduced_float(out_t) ? kFloat : out_t;
  int64_t nd = x.dim();
  dim = wrap_dim(dim, nd);
  Tensor xc = x.to(cd).contiguous();
  int64_t outer = 1, d = nd ? xc.sizes()[dim] : 1, inner = 1;
  for (int64_t i = 0; i < dim; i++) outer = checked_mul(outer, xc.sizes()[i], "numel");
  for (int64_t i = dim + 1; i < nd; i++) inner = checked_mul(inner, xc.sizes()[i], "numel");
  Tensor y = empty_tensor(xc.sizes(), cd);
  if (y.numel()) softmax_kernel_stub(xc.device(), log ? "log_softmax" : "softmax")(log, cd, xc.data_ptr(), y.data_ptr(), outer, d, inner);
  return y.to(out_t);
}
}  // namespace

Tensor softmax(const Tensor& self, int64_t dim, std::optional<ScalarType> dtype) { return softmax_impl(self, dim, dtype, false); }
Tensor log_softmax(const Tensor& self, int64_t dim, std::optional<ScalarType> dtype) { return softmax_impl(self, dim, dtype, true); }

std::tuple<Tensor, Tensor, Tensor> native_layer_norm(const Tensor& input, IntArrayRef normalized_shape,
                                                     const Tensor& weight, const Tensor& bias, double eps) {
  int64_t k = int64_t(normalized_shape.size()), nd = input.dim();
  bool ok = k >= 1 && k <= nd;
  for (int64_t i = 0; ok && i < k; i++) ok = input.sizes()[nd - k + i] == normalized_shape[i];
  if (!ok) {
    std::ostringstream os;
    os << "Given normalized_shape=" << normalized_shape << ", expected input with shape [*";
    for (int64_t s : normalized_shape) os << ", " << s;
    os << "], but got input of size" << input.sizes();
    EMBER_FAIL(Runtime, os.str());
  }
  EMBER_CHECK(!weight.defined() || weight.sizes() == normalized_shape, "Expected weight to be of same shape as "
              "normalized_shape, but got weight of shape ", weight.sizes(), " and normalized_shape = ", normalized_shape);
  EMBER_CHECK(!bias.defined() || bias.sizes() == normalized_shape, "Expected bias to be of same shape as "
              "normalized_shape, but got bias of shape ", bias.sizes(), " and normalized_shape = ", normalized_shape);
  EMBER_CHECK_KIND(is_floating(input.dtype()), NotImplemented, "\"LayerNormKernelImpl\" not implemented for '", input.dtype(), "'");
  ScalarType out_t = input.dtype(), cd = is_reduced_float(out_t) ? kFloat : out_t;
  Tensor x = input.to(cd).contiguous();
  Tensor w = weight.defined() ? weight.to(cd).contiguous() : Tensor();
  Tensor b = bias.defined() ? bias.to(cd).contiguous() : Tensor();
  int64_t cols = prod(normalized_shape), rows = cols ? x.numel() / cols : 0;
  DimVector stat_shape(IntArrayRef(input.sizes().data(), size_t(nd - k)));
  for (int64_t i = 0; i < k; i++) stat_shape.push_back(1);
  Tensor y = empty_tensor(x.sizes(), cd), mean = empty_tensor(stat_shape, cd), rstd = empty_tensor(stat_shape, cd);
  if (rows && cols)
    layer_norm_kernel_stub(x.device(), "layer_norm")(cd, x.data_ptr(), w.defined() ? w.data_ptr() : nullptr,
                                    b.defined() ? b.data_ptr() : nullptr, y.data_ptr(), mean.data_ptr(),
                                    rstd.data_ptr(), rows, cols, eps);
  return {y.to(out_t), mean, rstd};
}

Tensor layer_norm(const Tensor& input, IntArrayRef normalized_shape, const Tensor& weight, const Tensor& bias,
                  double eps, bool) {
  return std::get<0>(ember::native_layer_norm(input, normalized_shape, weight, bias, eps));
}

// running = (1 - momentum) * running + momentum * batch_stat, written through an alias with its own
// version counter: like PyTorch, updating running statistics does not bump their version, so a
// graph that saved them (eval-mode batch norm earlier in the step) stays valid.
static void update_running_stat(const Tensor& running, const Tensor& batch_stat, double momentum) {
  Tensor blended = ember::add(ember::mul(running, Scalar(1.0 - momentum)), ember::mul(batch_stat, Scalar(momentum)));
  Tensor alias(make_intrusive<TensorImpl>(running.impl()->storage(), running.dtype(), running.sizes(),
                                          running.strides(), running.storage_offset()));
  alias.copy_(blended);
}

std::tuple<Tensor, Tensor, Tensor> native_batch_norm(const Tensor& input, const Tensor& weight, const Tensor& bias,
                                                     const Tensor& running_mean, const Tensor& running_var,
                                                     bool training, double momentum, double eps) {
  EMBER_CHECK(input.dim() >= 2, "batch_norm: expected input with at least 2 dims (N, C, ...), got ", input.sizes());
  EMBER_CHECK_KIND(is_floating(input.dtype()), NotImplemented, "\"batch_norm\" not implemented for '", input.dtype(), "'");
  int64_t n = input.sizes()[0], c = input.sizes()[1], s = input.numel() / std::max<int64_t>(n * c, 1);
  for (const Tensor* t : {&weight, &bias, &running_mean, &running_var})
    EMBER_CHECK(!t->defined() || t->numel() == c, "running_mean should contain ", c, " elements not ",
                t->defined() ? t->numel() : 0);
  ScalarType out_t = input.dtype(), cd = is_reduced_float(out_t) ? kFloat : out_t;
  Tensor x = input.to(cd).contiguous();
  Tensor mean_d = empty_tensor({c}, kDouble), var_d = empty_tensor({c}, kDouble);
  double* mean = static_cast<double*>(mean_d.data_ptr());
  double* var = static_cast<double*>(var_d.data_ptr());
  if (training) {
    EMBER_CHECK_KIND(n * s > 1, Value, "Expected more than 1 value per channel when training, got input size ",
                     input.sizes());
    if (x.numel()) batch_norm_stats_kernel_stub(x.device(), "batch_norm")(cd, x.data_ptr(), mean, var, n, c, s);
    autograd::AutoGradMode no_grad(false);
    if (running_mean.defined()) {
      Tensor m = mean_d.to(running_mean.dtype());
      update_running_stat(running_mean, m, momentum);
    }
    if (running_var.defined()) {
      double cnt = double(n * s);
      Tensor v = ember::mul(var_d, Scalar(cnt / std::max(cnt - 1.0, 1.0))).to(running_var.dtype());
      update_running_stat(running_var, v, momentum);
    }
  } else {
    EMBER_CHECK(running_mean.defined() && running_var.defined(),
                "running_mean and running_var must be defined in evaluation mode");
    mean_d.copy_(running_mean);
    var_d.copy_(running_var);
  }
  Tensor invstd_d = empty_tensor({c}, kDouble), a_d = empty_tensor({c}, kDouble), b_d = empty_tensor({c}, kDouble);
  double* invstd = static_cast<double*>(invstd_d.data_ptr());
  double* a = static_cast<double*>(a_d.data_ptr());
  double* b = static_cast<double*>(b_d.data_ptr());
  Tensor w = weight.defined() ? weight.to(kDouble).contiguous() : Tensor();
  Tensor bb = bias.defined() ? bias.to(kDouble).contiguous() : Tensor();
  for (int64_t ch = 0; ch < c; ch++) {
    invstd[ch] = 1.0 / std::sqrt(var[ch] + eps);
    double wv = w.defined() ? static_cast<const double*>(w.data_ptr())[ch] : 1.0;
    double bv = bb.defined() ? static_cast<const double*>(bb.data_ptr())[ch] : 0.0;
    a[ch] = wv * invstd[ch];
    b[ch] = bv - mean[ch] * a[ch];
  }
  Tensor y = empty_tensor(x.sizes(), cd);
  if (x.numel()) batch_norm_apply_kernel_stub(x.device(), "batch_norm")(cd, x.data_ptr(), a, b, y.data_ptr(), n, c, s);
  return {y.to(out_t), mean_d.to(cd), invstd_d.to(cd)};
}

Tensor batch_norm(const Tensor& input, const Tensor& weight, const Tensor& bias, const Tensor& running_mean,
                  const Tensor& running_var, bool training, double momentum, double eps, bool) {
  return std::get<0>(ember::native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps));
}

Tensor linear(const Tensor& input, const Tensor& weight, const Tensor& bias) {
  EMBER_CHECK(weight.dim() == 1 || weight.dim() == 2, "linear: weight must be 1-D or 2-D, got ", weight.dim(), "-D");
  if (input.dim() >= 1 && weight.dim() == 2 && input.sizes().back() != weight.sizes()[1]) {
    int64_t rows = input.numel() / std::max<int64_t>(input.sizes().back(), 1);
    EMBER_FAIL(Runtime, "mat1 and mat2 shapes cannot be multiplied (", rows, "x", input.sizes().back(), " and ",
               weight.sizes()[1], "x", weight.sizes()[0], ")");
  }
  if (bias.defined() && weight.dim() == 2 && input.dim() >= 2) {  // one GEMM with the bias as its C, as PyTorch
    if (input.dim() == 2) return ember::addmm(bias, input, weight.t());
    DimVector out_shape(IntArrayRef(input.sizes().data(), input.dim() - 1));
    out_shape.push_back(weight.sizes()[0]);
    return ember::addmm(bias, input.reshape({-1, input.sizes().back()}), weight.t()).view(out_shape);
  }
  Tensor out = ember::matmul(input, weight.dim() == 2 ? weight.t() : weight);
  return bias.defined() ? ember::add(out, bias) : out;
}

// (N, C, *) with C = g * k: channel i * k + j moves to j * g + i (its inverse is groups = k).
Tensor channel_shuffle(const Tensor& self, int64_t groups) {
  EMBER_CHECK(self.dim() > 2, "channel_shuffle expects input with > 2 dims, but got input with sizes ", self.sizes());
  EMBER_CHECK(groups > 0, "Number of groups to divide channels in must be positive. Value of groups:", groups);
  int64_t c = self.sizes()[1];
  EMBER_CHECK(c % groups == 0, "Number of channels must be divisible by groups. Got ", c, " channels and ", groups,
              " groups.");
  DimVector split = {self.sizes()[0], groups, c / groups};
  for (int64_t i = 2; i < self.dim(); i++) split.push_back(self.sizes()[i]);
  return self.reshape(split).transpose(1, 2).contiguous().reshape(self.sizes());
}

}  // namespace ember::native
