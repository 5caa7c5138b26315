// softmax, log_softmax, layer_norm, batch_norm with their backward ops, and linear. The fused
// kernels (kernels/kernels.h, per-ISA builds) take raw pointers to the contiguous buffers each op
// has allocated on the input's device; the ops hold no loops over data.
#include <array>
#include <cmath>

#include "ember/core/checked_math.h"
#include "ember/core/operators.h"
#include "ember/autograd/grad_mode.h"
#include "ember/generated/native.h"
#include "ember/iter/layout.h"
#include "ember/generated/ops.h"
#include "ember/iter/tensor_iter.h"
#include "ember/kernels/kernels.h"
#include "ember/kernels/nn_norm.h"

EMBER_DEFINE_STUB(batch_norm_fold_stub)
EMBER_DEFINE_STUB(batch_norm_backward_fold_stub)

namespace ember::native {

namespace {
const void* data_or_null(const Tensor& t) { return t.defined() ? t.kernel_data() : nullptr; }
void* data_or_null(Tensor& t) { return t.defined() ? t.kernel_data() : nullptr; }

Tensor double_contiguous(const Tensor& t) { return t.defined() ? t.to(kDouble).contiguous() : t; }

// [outer, n, inner] view of a contiguous shape around `dim` (a 0-d tensor is one row of one).
std::array<int64_t, 3> split_at(IntArrayRef sizes, int64_t dim) {
  int64_t nd = int64_t(sizes.size()), outer = 1, n = nd ? sizes[dim] : 1, inner = 1;
  for (int64_t i = 0; i < dim; i++) outer = checked_mul(outer, sizes[i], "numel");
  for (int64_t i = dim + 1; i < nd; i++) inner = checked_mul(inner, sizes[i], "numel");
  return {outer, n, inner};
}

Tensor softmax_impl(const Tensor& self, int64_t dim, std::optional<ScalarType> dtype, bool log) {
  Tensor x = dtype ? self.to(*dtype) : self;
  EMBER_CHECK_KIND(is_floating(x.dtype()), NotImplemented, "\"", log ? "log_softmax" : "softmax", "_lastdim_kernel_impl\" not implemented for '",
              x.dtype(), "'");
  ScalarType out_t = x.dtype(), cd = is_reduced_float(out_t) ? kFloat : out_t;
  int64_t nd = x.dim();
  dim = wrap_dim(dim, nd);
  auto kernel = softmax_kernel_stub(x.device(), log ? "log_softmax" : "softmax");
  Tensor xc = x.to(cd).contiguous();
  auto [outer, d, inner] = split_at(xc.sizes(), dim);
  Tensor y = empty_tensor(xc.sizes(), cd, xc.device());
  if (y.numel()) kernel(log, cd, xc.kernel_data(), y.kernel_data(), outer, d, inner);
  return y.to(out_t);
}

// Backward of softmax (log: log_softmax) from its output; computed in float for half / bfloat16.
Tensor softmax_backward_impl(const Tensor& grad, const Tensor& output, int64_t dim, ScalarType input_dtype, bool log) {
  const char* op = log ? "_log_softmax_backward_data" : "_softmax_backward_data";
  check_same_device(op, output.device(), {&grad});
  EMBER_CHECK(grad.sizes() == output.sizes(), op, ": expected grad_output and output of the same shape, got ",
              grad.sizes(), " and ", output.sizes());
  EMBER_CHECK_KIND(is_floating(output.dtype()), NotImplemented, "\"", op, "\" not implemented for '", output.dtype(),
                   "'");
  dim = wrap_dim(dim, output.dim());
  ScalarType cd = is_reduced_float(output.dtype()) ? kFloat : output.dtype();
  auto kernel = softmax_backward_kernel_stub(output.device(), op);
  Tensor g = grad.to(cd).contiguous(), y = output.to(cd).contiguous();
  auto [outer, n, inner] = split_at(y.sizes(), dim);
  Tensor gi = empty_tensor(y.sizes(), cd, y.device());
  if (gi.numel()) kernel(log, cd, g.kernel_data(), y.kernel_data(), gi.kernel_data(), outer, n, inner);
  return gi.to(input_dtype);
}
}  // namespace

Tensor softmax(const Tensor& self, int64_t dim, std::optional<ScalarType> dtype) { return softmax_impl(self, dim, dtype, false); }
Tensor log_softmax(const Tensor& self, int64_t dim, std::optional<ScalarType> dtype) { return softmax_impl(self, dim, dtype, true); }
Tensor _softmax_backward_data(const Tensor& grad_output, const Tensor& output, int64_t dim, ScalarType input_dtype) {
  return softmax_backward_impl(grad_output, output, dim, input_dtype, false);
}
Tensor _log_softmax_backward_data(const Tensor& grad_output, const Tensor& output, int64_t dim,
                                  ScalarType input_dtype) {
  return softmax_backward_impl(grad_output, output, dim, input_dtype, true);
}

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
  check_same_device("native_layer_norm", input.device(), {&weight, &bias});
  auto kernel = layer_norm_kernel_stub(input.device(), "layer_norm");
  ScalarType out_t = input.dtype(), cd = is_reduced_float(out_t) ? kFloat : out_t;
  Tensor x = input.to(cd).contiguous();
  Tensor w = weight.defined() ? weight.to(cd).contiguous() : Tensor();
  Tensor b = bias.defined() ? bias.to(cd).contiguous() : Tensor();
  int64_t cols = prod(normalized_shape), rows = cols ? x.numel() / cols : 0;
  DimVector stat_shape(IntArrayRef(input.sizes().data(), size_t(nd - k)));
  for (int64_t i = 0; i < k; i++) stat_shape.push_back(1);
  const Device dev = x.device();
  Tensor y = empty_tensor(x.sizes(), cd, dev), mean = empty_tensor(stat_shape, cd, dev),
         rstd = empty_tensor(stat_shape, cd, dev);
  if (rows && cols)
    kernel(cd, x.kernel_data(), data_or_null(w), data_or_null(b), y.kernel_data(), mean.kernel_data(), rstd.kernel_data(), rows,
           cols, eps);
  return {y.to(out_t), mean, rstd};
}

std::tuple<Tensor, Tensor, Tensor> native_layer_norm_backward(const Tensor& grad_out, const Tensor& input,
                                                              IntArrayRef normalized_shape, const Tensor& mean,
                                                              const Tensor& rstd, const Tensor& weight,
                                                              const Tensor& bias, bool grad_input, bool grad_weight,
                                                              bool grad_bias) {
  const char* op = "native_layer_norm_backward";
  EMBER_CHECK(int64_t(normalized_shape.size()) <= input.dim() && grad_out.sizes() == input.sizes(), op,
              ": expected grad_out of the input's shape ", input.sizes(), " normalized over ", normalized_shape,
              ", got ", grad_out.sizes());
  EMBER_CHECK_KIND(is_floating(input.dtype()), NotImplemented, "\"LayerNormBackwardKernelImpl\" not implemented for '",
                   input.dtype(), "'");
  check_same_device(op, input.device(), {&grad_out, &mean, &rstd, &weight, &bias});
  auto kernel = layer_norm_backward_kernel_stub(input.device(), "layer_norm_backward");
  ScalarType cd = is_reduced_float(input.dtype()) ? kFloat : input.dtype();
  Tensor x = input.to(cd).contiguous(), dy = grad_out.to(cd).contiguous();
  Tensor m = mean.to(cd).contiguous(), r = rstd.to(cd).contiguous();
  Tensor w = weight.defined() ? weight.to(cd).contiguous() : Tensor();
  int64_t cols = prod(normalized_shape), rows = cols ? x.numel() / cols : 0;
  EMBER_CHECK(m.numel() == rows && r.numel() == rows && (!w.defined() || w.numel() == cols), op,
              ": expected mean and rstd of ", rows, " elements and a weight of ", cols, ", got ", m.numel(), ", ",
              r.numel(), " and ", w.defined() ? w.numel() : cols);
  const Device dev = x.device();
  Tensor dx = grad_input ? empty_tensor(x.sizes(), cd, dev) : Tensor();
  Tensor dw = grad_weight && weight.defined() ? empty_tensor(normalized_shape, cd, dev) : Tensor();
  Tensor db = grad_bias && bias.defined() ? empty_tensor(normalized_shape, cd, dev) : Tensor();
  if (rows && cols) {
    kernel(cd, dy.kernel_data(), x.kernel_data(), m.kernel_data(), r.kernel_data(), data_or_null(w), data_or_null(dx),
           data_or_null(dw), data_or_null(db), rows, cols);
  } else {
    if (dx.defined()) dx.zero_();
    if (dw.defined()) dw.zero_();
    if (db.defined()) db.zero_();
  }
  return {dx.defined() ? dx.to(input.dtype()) : dx, dw.defined() ? dw.to(weight.dtype()) : dw,
          db.defined() ? db.to(bias.dtype()) : db};
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
  if (input.dim() < 2 && input.numel() == 0) {
    // PyTorch takes an empty 1-D input as having no channels: statistics of 0 elements, an empty result
    for (const Tensor* t : {&weight, &bias, &running_mean, &running_var})
      EMBER_CHECK(!t->defined() || t->numel() == 0, "running_mean should contain 0 elements not ", t->numel());
    Tensor none = empty_tensor({0}, input.dtype(), input.device());
    return {input.clone(), none, none.clone()};
  }
  EMBER_CHECK(input.dim() >= 2, "batch_norm: expected input with at least 2 dims (N, C, ...), got ", input.sizes());
  // (an empty batch of any dtype passes: there is nothing to normalize, as PyTorch's)
  EMBER_CHECK_KIND(is_floating(input.dtype()) || input.numel() == 0, NotImplemented, "\"batch_norm\" not implemented "
                   "for '", input.dtype(), "'");
  int64_t n = input.sizes()[0], c = input.sizes()[1], s = input.numel() / std::max<int64_t>(n * c, 1);
  for (const Tensor* t : {&weight, &bias, &running_mean, &running_var})
    EMBER_CHECK(!t->defined() || t->numel() == c, "running_mean should contain ", c, " elements not ",
                t->defined() ? t->numel() : 0);
  const Device dev = input.device();
  check_same_device("native_batch_norm", dev, {&weight, &bias, &running_mean, &running_var});
  auto apply = batch_norm_apply_kernel_stub(dev, "batch_norm");
  auto fold = batch_norm_fold_stub(dev, "batch_norm");
  ScalarType out_t = input.dtype(), cd = is_reduced_float(out_t) ? kFloat : out_t;
  Tensor x = input.to(cd).contiguous();
  Tensor mean_d = empty_tensor({c}, kDouble, dev), var_d = empty_tensor({c}, kDouble, dev);
  if (training && x.numel() == 0) {  // an empty batch: an empty output, running statistics untouched (PyTorch)
    mean_d.zero_();
    var_d.zero_();
  } else if (training) {
    EMBER_CHECK_KIND(n * s > 1, Value, "Expected more than 1 value per channel when training, got input size ",
                     input.sizes());
    batch_norm_stats_kernel_stub(dev, "batch_norm")(cd, x.kernel_data(), static_cast<double*>(mean_d.kernel_data()),
                                                    static_cast<double*>(var_d.kernel_data()), n, c, s);
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
  // y = x * a + b per channel
  Tensor invstd_d = empty_tensor({c}, kDouble, dev), a_d = empty_tensor({c}, kDouble, dev),
         b_d = empty_tensor({c}, kDouble, dev);
  fold(mean_d, var_d, double_contiguous(weight), double_contiguous(bias), eps, invstd_d, a_d, b_d);
  Tensor y = empty_tensor(x.sizes(), cd, dev);
  if (x.numel())
    apply(cd, x.kernel_data(), static_cast<const double*>(a_d.kernel_data()), static_cast<const double*>(b_d.kernel_data()),
          y.kernel_data(), n, c, s);
  if (!training) {  // the statistics came from the running estimates: nothing saved, as PyTorch's (empty)
    Tensor none = empty_tensor({0}, cd, dev);
    return {y.to(out_t), none, none.clone()};
  }
  return {y.to(out_t), mean_d.to(cd), invstd_d.to(cd)};
}

// Backward of native_batch_norm: per channel sums of dy and dy * (x - mean) (one kernel pass), folded
// into dx = dy * k1 + (x - mean) * k2 + k3 (a second pass); statistics from the forward in training,
// from the running estimates in evaluation.
std::tuple<Tensor, Tensor, Tensor> native_batch_norm_backward(const Tensor& grad_out, const Tensor& input,
                                                              const Tensor& weight, const Tensor& running_mean,
                                                              const Tensor& running_var, const Tensor& save_mean,
                                                              const Tensor& save_invstd, bool train, double eps,
                                                              bool grad_input, bool grad_weight, bool grad_bias) {
  const char* op = "native_batch_norm_backward";
  EMBER_CHECK(input.dim() >= 2 && grad_out.sizes() == input.sizes(), op,
              ": expected input with at least 2 dims (N, C, ...) and grad_out of its shape, got ", input.sizes(),
              " and ", grad_out.sizes());
  EMBER_CHECK_KIND(is_floating(input.dtype()), NotImplemented, "\"batch_norm_backward\" not implemented for '",
                   input.dtype(), "'");
  EMBER_CHECK(train ? save_mean.defined() && save_invstd.defined() : running_mean.defined() && running_var.defined(),
              op, ": expected ", train ? "save_mean and save_invstd" : "running_mean and running_var",
              " to be defined");
  int64_t n = input.sizes()[0], c = input.sizes()[1], s = input.numel() / std::max<int64_t>(n * c, 1);
  // (in evaluation the forward saved nothing: its save_mean/save_invstd may be empty)
  for (const Tensor* t : {&weight, &running_mean, &running_var, &save_mean, &save_invstd}) {
    const bool saved = t == &save_mean || t == &save_invstd;
    EMBER_CHECK(!t->defined() || t->numel() == c || (saved && !train && t->numel() == 0), op,
                ": expected per-channel tensors of ", c, " elements, got ", t->numel());
  }
  const Device dev = input.device();
  check_same_device(op, dev, {&grad_out, &weight, &running_mean, &running_var, &save_mean, &save_invstd});
  auto reduce = batch_norm_backward_reduce_kernel_stub(dev, "batch_norm_backward");
  auto apply = batch_norm_backward_apply_kernel_stub(dev, "batch_norm_backward");
  auto fold = batch_norm_backward_fold_stub(dev, "batch_norm_backward");
  ScalarType cd = is_reduced_float(input.dtype()) ? kFloat : input.dtype();
  autograd::AutoGradMode no_grad(false);
  Tensor x = input.to(cd).contiguous(), dy = grad_out.to(cd).contiguous();
  Tensor mean_d = (train ? save_mean : running_mean).to(kDouble).contiguous();
  Tensor invstd_d = train ? save_invstd.to(kDouble).contiguous()
                          : ember::rsqrt(running_var.to(kDouble) + eps).contiguous();
  Tensor s1_d = empty_tensor({c}, kDouble, dev), s2_d = empty_tensor({c}, kDouble, dev);
  const double* mean = static_cast<const double*>(mean_d.kernel_data());
  if (x.numel())
    reduce(cd, dy.kernel_data(), x.kernel_data(), mean, static_cast<double*>(s1_d.kernel_data()),
           static_cast<double*>(s2_d.kernel_data()), n, c, s);
  else {
    s1_d.zero_();
    s2_d.zero_();
  }
  Tensor k1 = empty_tensor({c}, kDouble, dev), k2 = empty_tensor({c}, kDouble, dev), k3 = empty_tensor({c}, kDouble, dev);
  fold(invstd_d, double_contiguous(weight), s1_d, s2_d, double(n * s), train, k1, k2, k3);
  Tensor dx, dw, db;
  if (grad_input) {
    dx = empty_tensor(x.sizes(), cd, dev);
    if (x.numel())
      apply(cd, dy.kernel_data(), x.kernel_data(), mean, static_cast<const double*>(k1.kernel_data()),
            static_cast<const double*>(k2.kernel_data()), static_cast<const double*>(k3.kernel_data()), dx.kernel_data(), n,
            c, s);
    dx = dx.to(input.dtype());
  }
  if (grad_weight && weight.defined()) dw = ember::mul(s2_d, invstd_d).to(weight.dtype());
  if (grad_bias) db = s1_d.to(weight.defined() ? weight.dtype() : input.dtype());
  return {dx, dw, db};
}

Tensor batch_norm(const Tensor& input, const Tensor& weight, const Tensor& bias, const Tensor& running_mean,
                  const Tensor& running_var, bool training, double momentum, double eps, bool) {
  // normalized in the input's layout: a channels-last input gives a channels-last output, as PyTorch's
  return to_memory_format(
      std::get<0>(ember::native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps)),
      suggest_memory_format(input));
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
    const int64_t rows = prod(IntArrayRef(input.sizes().data(), input.dim() - 1));  // not -1: in_features may be 0
    return ember::addmm(bias, input.reshape({rows, input.sizes().back()}), weight.t()).view(out_shape);
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
