// Backward formulas of the fused NN ops. When the engine records (create_graph=True) they are
// written with differentiable ops, recomputing statistics from the input, so gradients of
// gradients are exact; otherwise they call the fused backward ops (ops/nn_core.cpp).
#include "ember/autograd/formulas.h"

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
  return log ? ember::_log_softmax_backward_data(grad, result, d, result.dtype())
             : ember::_softmax_backward_data(grad, result, d, result.dtype());
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
  return ember::native_layer_norm_backward(grad, input, normalized_shape, mean, rstd, weight, bias, mask[0], mask[1],
                                           mask[2]);
}

std::tuple<Tensor, Tensor, Tensor> batch_norm_backward(const Tensor& grad, const Tensor& input, const Tensor& weight,
                                                       const Tensor& running_mean, const Tensor& running_var,
                                                       const Tensor& save_mean, const Tensor& save_invstd,
                                                       bool training, double eps, std::array<bool, 3> mask) {
  if (!grad.defined()) return {};
  int64_t nd = input.dim(), c = input.sizes()[1];
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
  return ember::native_batch_norm_backward(grad, input, weight, running_mean, running_var, save_mean, save_invstd,
                                           training, eps, mask[0], mask[1], mask[2]);
}

Tensor gather_backward(const Tensor& grad, IntArrayRef self_sizes, int64_t dim, const Tensor& index) {
  return ember::scatter_add(ember::zeros(self_sizes, TensorOptions(grad.dtype()).device(grad.device())), dim, index, grad);
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
