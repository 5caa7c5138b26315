// Backward formulas of the fused NN ops. When the engine records (create_graph=True) they are
// written with differentiable ops, recomputing statistics from the input, so gradients of
// gradients are exact; otherwise they call the fused backward kernels.
#include "ember/core/checked_math.h"
#include "ember/autograd/formulas.h"
#include "ember/kernels/kernels.h"

namespace ember::autograd {

namespace {
std::vector<int64_t> range_dims(int64_t from, int64_t to) {
  std::vector<int64_t> d;
  for (int64_t i = from; i < to; i++) d.push_back(i);
  return d;
}
}  // namespace

Tensor softmax_backward(const Tensor& grad, const Tensor& result, int64_t dim, bool log) {
  int64_t nd = result.dim();
  int64_t d = wrap_dim(dim, nd);
  if (grad_enabled() || nd == 0) {
    std::vector<int64_t> dd = {d};
    if (nd == 0) return log ? grad - result.exp() * grad : result * (grad - grad * result);
    if (log) return grad - result.exp() * ember::sum(grad, IntArrayRef(dd), true);
    return result * (grad - ember::sum(grad * result, IntArrayRef(dd), true));
  }
  ScalarType cd = is_reduced_float(result.dtype()) ? kFloat : result.dtype();
  Tensor g = grad.to(cd).contiguous(), y = result.to(cd).contiguous();
  int64_t outer = 1, n = y.sizes()[d], inner = 1;
  for (int64_t i = 0; i < d; i++) outer = checked_mul(outer, y.sizes()[i], "numel");
  for (int64_t i = d + 1; i < nd; i++) inner = checked_mul(inner, y.sizes()[i], "numel");
  Tensor gi = empty_tensor(y.sizes(), cd);
  if (gi.numel()) softmax_backward_kernel_stub(g.device(), "softmax_backward")(log, cd, g.data_ptr(), y.data_ptr(), gi.data_ptr(), outer, n, inner);
  return gi.to(result.dtype());
}

Tensor log_softmax_jvp(const Tensor& t, const Tensor& result, int64_t dim) {
  if (result.dim() == 0) return t - t;
  std::vector<int64_t> dd = {wrap_dim(dim, result.dim())};
  return t - ember::sum(t * result.exp(), IntArrayRef(dd), true);
}

std::tuple<Tensor, Tensor, Tensor> layer_norm_backward(const Tensor& grad, const Tensor& input,
                                                       IntArrayRef normalized_shape, const Tensor& mean,
                                                       const Tensor& rstd, const Tensor& weight, const Tensor& bias,
                                                       double eps, std::array<bool, 3> mask) {
  if (!grad.defined()) return {};
  int64_t nd = input.dim(), k = int64_t(normalized_shape.size());
  std::vector<int64_t> axes = range_dims(nd - k, nd), batch = range_dims(0, nd - k);
  if (grad_enabled()) {
    Tensor mu = ember::mean(input, IntArrayRef(axes), true);
    Tensor xc = input - mu;
    Tensor rs = (ember::mean(xc * xc, IntArrayRef(axes), true) + eps).rsqrt();
    Tensor xhat = xc * rs;
    Tensor dxhat = weight.defined() ? grad * weight : grad;
    Tensor dx, dw, db;
    if (mask[0])
      dx = rs * (dxhat - ember::mean(dxhat, IntArrayRef(axes), true) - xhat * ember::mean(dxhat * xhat, IntArrayRef(axes), true));
    if (mask[1] && weight.defined()) dw = batch.empty() ? grad * xhat : ember::sum(grad * xhat, IntArrayRef(batch), false);
    if (mask[2] && bias.defined()) db = batch.empty() ? grad : ember::sum(grad, IntArrayRef(batch), false);
    return {dx, dw, db};
  }
  ScalarType cd = is_reduced_float(input.dtype()) ? kFloat : input.dtype();
  Tensor x = input.to(cd).contiguous(), dy = grad.to(cd).contiguous();
  Tensor m = mean.to(cd).contiguous(), r = rstd.to(cd).contiguous();
  Tensor w = weight.defined() ? weight.to(cd).contiguous() : Tensor();
  int64_t cols = prod(normalized_shape), rows = cols ? x.numel() / cols : 0;
  Tensor dx = mask[0] ? empty_tensor(x.sizes(), cd) : Tensor();
  Tensor dw = mask[1] && weight.defined() ? empty_tensor(normalized_shape, cd) : Tensor();
  Tensor db = mask[2] && bias.defined() ? empty_tensor(normalized_shape, cd) : Tensor();
  if (rows && cols) {
    layer_norm_backward_kernel_stub(dy.device(), "layer_norm_backward")(cd, dy.data_ptr(), x.data_ptr(), m.data_ptr(), r.data_ptr(),
                                             w.defined() ? w.data_ptr() : nullptr, dx.defined() ? dx.data_ptr() : nullptr,
                                             dw.defined() ? dw.data_ptr() : nullptr, db.defined() ? db.data_ptr() : nullptr,
                                             rows, cols);
  } else {
    if (dx.defined()) dx.zero_();
    if (dw.defined()) dw.zero_();
    if (db.defined()) db.zero_();
  }
  (void)eps;
  return {dx.defined() ? dx.to(input.dtype()) : dx, dw.defined() ? dw.to(weight.dtype()) : dw,
          db.defined() ? db.to(bias.dtype()) : db};
}

std::tuple<Tensor, Tensor, Tensor> batch_norm_backward(const Tensor& grad, const Tensor& input, const Tensor& weight,
                                                       const Tensor& running_mean, const Tensor& running_var,
                                                       const Tensor& save_mean, const Tensor& save_invstd,
                                                       bool training, double eps, std::array<bool, 3> mask) {
  if (!grad.defined()) return {};
  int64_t nd = input.dim(), n = input.sizes()[0], c = input.sizes()[1];
  int64_t s = input.numel() / std::max<int64_t>(n * c, 1);
  DimVector bshape(size_t(nd), 1);
  bshape[1] = c;
  std::vector<int64_t> red = {0};
  for (int64_t i = 2; i < nd; i++) red.push_back(i);
  if (grad_enabled()) {
    Tensor w = weight.defined() ? weight.reshape(bshape) : Tensor();
    Tensor dx, dw, db;
    if (training) {
      Tensor mu = ember::mean(input, IntArrayRef(red), true);
      Tensor xc = input - mu;
      Tensor invstd = (ember::mean(xc * xc, IntArrayRef(red), true) + eps).rsqrt();
      Tensor xhat = xc * invstd;
      Tensor dxhat = w.defined() ? grad * w : grad;
      if (mask[0])
        dx = invstd * (dxhat - ember::mean(dxhat, IntArrayRef(red), true) - xhat * ember::mean(dxhat * xhat, IntArrayRef(red), true));
      if (mask[1] && weight.defined()) dw = ember::sum(grad * xhat, IntArrayRef(red), false);
    } else {
      Tensor invstd = (running_var + eps).rsqrt().reshape(bshape);
      Tensor xhat = (input - running_mean.reshape(bshape)) * invstd;
      if (mask[0]) dx = w.defined() ? grad * w * invstd : grad * invstd;
      if (mask[1] && weight.defined()) dw = ember::sum(grad * xhat, IntArrayRef(red), false);
    }
    if (mask[2]) db = ember::sum(grad, IntArrayRef(red), false);
    return {dx, dw, db};
  }
  ScalarType cd = is_reduced_float(input.dtype()) ? kFloat : input.dtype();
  Tensor x = input.to(cd).contiguous(), dy = grad.to(cd).contiguous();
  Tensor mean_d = (training ? save_mean : running_mean).to(kDouble).contiguous();
  Tensor invstd_d = training ? save_invstd.to(kDouble).contiguous()
                             : ember::rsqrt(running_var.to(kDouble) + eps).contiguous();
  Tensor s1_d = empty_tensor({c}, kDouble), s2_d = empty_tensor({c}, kDouble);
  const double* mean = static_cast<const double*>(mean_d.data_ptr());
  const double* invstd = static_cast<const double*>(invstd_d.data_ptr());
  double* s1 = static_cast<double*>(s1_d.data_ptr());
  double* s2 = static_cast<double*>(s2_d.data_ptr());
  if (x.numel()) batch_norm_backward_reduce_kernel_stub(dy.device(), "batch_norm_backward")(cd, dy.data_ptr(), x.data_ptr(), mean, s1, s2, n, c, s);
  else { s1_d.zero_(); s2_d.zero_(); }
  Tensor w = weight.defined() ? weight.to(kDouble).contiguous() : Tensor();
  Tensor k1_d = empty_tensor({c}, kDouble), k2_d = empty_tensor({c}, kDouble), k3_d = empty_tensor({c}, kDouble);
  double* k1 = static_cast<double*>(k1_d.data_ptr());
  double* k2 = static_cast<double*>(k2_d.data_ptr());
  double* k3 = static_cast<double*>(k3_d.data_ptr());
  double M = double(n * s);
  for (int64_t ch = 0; ch < c; ch++) {
    double wv = w.defined() ? static_cast<const double*>(w.data_ptr())[ch] : 1.0;
    k1[ch] = wv * invstd[ch];
    k2[ch] = training ? -wv * invstd[ch] * invstd[ch] * invstd[ch] * s2[ch] / M : 0.0;
    k3[ch] = training ? -wv * invstd[ch] * s1[ch] / M : 0.0;
  }
  Tensor dx, dw, db;
  if (mask[0]) {
    dx = empty_tensor(x.sizes(), cd);
    if (x.numel())
      batch_norm_backward_apply_kernel_stub(dy.device(), "batch_norm_backward")(cd, dy.data_ptr(), x.data_ptr(), mean, k1, k2, k3, dx.data_ptr(), n, c, s);
    dx = dx.to(input.dtype());
  }
  if (mask[1] && weight.defined()) dw = ember::mul(s2_d, invstd_d).to(weight.dtype());
  if (mask[2]) db = s1_d.to(weight.defined() ? weight.dtype() : input.dtype());
  return {dx, dw, db};
}

Tensor gather_backward(const Tensor& grad, IntArrayRef self_sizes, int64_t dim, const Tensor& index) {
  return ember::scatter_add(ember::zeros(self_sizes, TensorOptions(grad.dtype())), dim, index, grad);
}

Tensor index_add_source_grad(const Tensor& grad, int64_t dim, const Tensor& index, IntArrayRef source_sizes,
                             const Scalar& alpha) {
  if (grad.dim() == 0) return maybe_multiply(grad, alpha).reshape(source_sizes);
  return maybe_multiply(ember::index_select(grad, dim, index.reshape({-1})), alpha).reshape(source_sizes);
}

std::vector<int64_t> self_spatial(IntArrayRef sizes) { return std::vector<int64_t>(sizes.begin() + 2, sizes.end()); }

Tensor evenly_distribute_backward(const Tensor& grad, const Tensor& self, const Tensor& result) {
  Tensor mask = ember::logical_or(ember::eq(self, result), ember::logical_and(ember::isnan(self), ember::isnan(result)));
  return grad * mask / ember::sum(mask, std::nullopt, false).to(grad.dtype());
}

}  // namespace ember::autograd
