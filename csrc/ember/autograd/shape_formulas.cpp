// Backward formulas of the shape, indexing and scan ops (ops/shape_ops.cpp, indexing.cpp, scatter.cpp,
// cumulative.cpp, ...). Written with differentiable ember ops, so gradients of gradients come for free.
#include <cmath>
#include <limits>

#include "ember/core/checked_math.h"
#include "ember/autograd/formulas.h"
#include "ember/iter/tensor_iter.h"

namespace ember::autograd {

namespace {
Tensor scalar(double v) { return scalar_to_tensor(v); }
Tensor zeros0(const Tensor& like) { return ember::zeros({}, TensorOptions(like.dtype())); }

// The elements of src that index positions address: src's leading block of index's shape.
Tensor src_at_index(const Tensor& src, const Tensor& index) {
  Tensor r = src;
  for (int64_t d = 0; d < index.dim(); d++)
    if (r.sizes()[d] != index.sizes()[d]) r = r.narrow(d, 0, index.sizes()[d]);
  return r;
}
}  // namespace

// index_fill(dim, index, value): value reaches every selected slice once, however often an index repeats.
Tensor index_fill_value_grad(const Tensor& grad, int64_t dim, const Tensor& index) {
  Tensor g = grad.dim() ? grad : grad.reshape({1});
  int64_t d = wrap_dim(dim, g.dim());
  int64_t size = g.sizes()[d];
  Tensor idx = index.reshape({-1});
  idx = ember::where(ember::lt(idx, scalar_to_tensor(int64_t(0))), idx + size, idx);
  Tensor uniq = std::get<0>(ember::unique2(idx, true, false, false));
  return ember::index_select(g, d, uniq).sum(std::nullopt, false, std::nullopt);
}

// masked_scatter(mask, source): source element k went to the k-th selected position; the rest of
// source was not used.
Tensor masked_scatter_source_grad(const Tensor& grad, const Tensor& mask, IntArrayRef source_sizes) {
  Tensor sel = ember::masked_select(grad, mask);
  int64_t n = 1;
  for (int64_t s : source_sizes) n = checked_mul(n, s, "numel");
  int64_t k = sel.numel();
  if (k < n) sel = ember::cat({sel, ember::zeros({n - k}, TensorOptions(grad.dtype()).device(grad.device()))}, 0);
  return sel.reshape(source_sizes);
}

std::tuple<Tensor, Tensor> scatter_reduce_backward(const Tensor& grad, const Tensor& self, int64_t dim,
                                                   const Tensor& index, const Tensor& src, std::string_view reduce,
                                                   bool include_self, const Tensor& result, std::array<bool, 2>) {
  Tensor grad_self, grad_src;
  // positions of self that received at least one src value
  auto scattered = [&]() {
    return ember::zeros(self.sizes(), TensorOptions(kBool).device(self.device()))
        .scatter(dim, index, ember::ones({}, TensorOptions(kBool).device(self.device())));
  };
  if (reduce == "sum") {
    grad_self = grad;
    grad_src = ember::gather(grad, dim, index);
  } else if (reduce == "mean") {
    Tensor n = include_self ? ember::ones_like(grad, {}) : ember::zeros_like(grad, {});
    n = n.scatter_add(dim, index, ember::ones(index.sizes(), TensorOptions(grad.dtype()).device(grad.device())));
    n = n.masked_fill(ember::eq(n, scalar(0.0)), 1);
    grad_self = grad / n;
    grad_src = ember::gather(grad / n, dim, index);
  } else if (reduce == "amax" || reduce == "amin" || reduce == "max" || reduce == "min") {
    // the gradient is shared evenly among the values equal to the result
    Tensor value = ember::gather(result, dim, index);
    Tensor self_is = ember::eq(self, result);
    if (!include_self) self_is = ember::logical_and(self_is, scattered().logical_not());
    Tensor src_is = ember::eq(src_at_index(src, index), value);
    Tensor n = self_is.to(grad.dtype()).scatter_add(dim, index, src_is.to(grad.dtype()));
    Tensor share = grad / n;
    grad_self = ember::where(self_is, share, zeros0(grad));
    grad_src = ember::where(src_is, ember::gather(share, dim, index), zeros0(grad));
  } else if (reduce == "prod") {
    // d(product)/dx is the product of the other factors of x's group: result / x for x != 0; for
    // the only zero of a group, the group's product with its zeros replaced by 1; else 0
    Tensor src_g = src_at_index(src, index);
    Tensor self_zero = ember::eq(self, scalar(0.0)), src_zero = ember::eq(src_g, scalar(0.0));
    Tensor zeros_in = (include_self ? self_zero.to(grad.dtype()) : ember::zeros_like(grad, {}))
                          .scatter_add(dim, index, src_zero.to(grad.dtype()));
    Tensor one_zero = ember::eq(zeros_in, scalar(1.0));
    // with two zeros in a group this formula's own derivative is wrong (the zeros' gradients are
    // constant 0 here): refuse to record it, as PyTorch does
    EMBER_CHECK(!grad_enabled() || !ember::gt(zeros_in, scalar(1.0)).any(std::nullopt, false).item().to_bool(),
                "scatter_reduce(): Double backward is unsupported for src when >1 zeros in src are scattered to "
                "the same position in self");
    Tensor masked_self = self.masked_fill(self_zero, 1);
    Tensor masked_src = src.masked_fill(ember::eq(src, scalar(0.0)), 1);
    Tensor others = masked_self.scatter_reduce(dim, index, masked_src, "prod", include_self);
    Tensor if_zero_self = ember::where(one_zero, others, zeros0(grad));
    grad_self = grad * ember::where(self_zero, if_zero_self, result / masked_self);
    Tensor if_zero_src = ember::where(ember::gather(one_zero, dim, index), ember::gather(others, dim, index), zeros0(grad));
    Tensor masked_src_g = src_g.masked_fill(src_zero, 1);
    grad_src = ember::gather(grad, dim, index) *
               ember::where(src_zero, if_zero_src, ember::gather(result, dim, index) / masked_src_g);
  } else {
    EMBER_FAIL(Runtime, "Expected 'reduce' argument to be one of 'sum', 'prod', 'mean', 'amax', 'amin' but got ", reduce, ".");
  }
  if (!include_self) grad_self = ember::where(scattered(), zeros0(grad), grad_self);
  return {grad_self, grad_src};
}

Tensor cummaxmin_backward(const Tensor& grad, const Tensor& self, const Tensor& indices, int64_t dim) {
  if (self.dim() == 0) return grad;
  if (self.numel() == 0) return ember::zeros_like(grad, {});
  return ember::zeros(self.sizes(), TensorOptions(grad.dtype()).device(grad.device())).scatter_add(dim, indices, grad);
}

// d/dx_j of log(sum_{k<=i} exp x_k) summed against grad_i: sum_{i>=j} grad_i exp(x_j - r_i), evaluated
// in log space separately for the positive and the negative grad_i (a reverse logcumsumexp).
Tensor logcumsumexp_backward(const Tensor& grad, const Tensor& self, const Tensor& result, int64_t dim) {
  if (grad.dim() == 0 || grad.numel() == 0) return grad;
  int64_t d = wrap_dim(dim, grad.dim());
  const std::vector<int64_t> dims = {d};
  double lowest = grad.dtype() == kDouble ? std::numeric_limits<double>::lowest()
                                          : double(std::numeric_limits<float>::lowest());
  if (grad.dtype() == kHalf) lowest = -65504.0;
  Tensor low = ember::full({}, lowest, TensorOptions(grad.dtype()));
  auto rev = [&](const Tensor& x) { return ember::flip(ember::logcumsumexp(ember::flip(x, dims), d), dims); };
  // complex: g_i = sum_(j >= i) g_j conj(e^(x_i - out_j)), summed in the log domain (log of a complex g)
  if (is_complex(grad.dtype())) return (rev(grad.log() - result.conj_physical()) + self.conj_physical()).exp();
  Tensor log_abs = grad.abs().log();
  Tensor log_pos = ember::where(ember::gt(grad, scalar(0.0)), log_abs, low);
  Tensor log_neg = ember::where(ember::lt(grad, scalar(0.0)), log_abs, low);
  Tensor pos = (rev(log_pos - result) + self).exp();
  Tensor neg = (rev(log_neg - result) + self).exp();
  return pos - neg;
}

// cdist: d dist_ij / d x1_i = sign(u) |u|^(p-1) / dist^(p-1) for u = x1_i - x2_j (p = 2: u / dist;
// p = 1: sign(u); p = inf: sign(u) where |u| is the max; p = 0: zero), 0 where dist = 0 (PyTorch's
// choice); x2's gradient is the negative, summed the other way. Built on the [.., r1, r2, c]
// differences, with differentiable ops.
std::tuple<Tensor, Tensor> cdist_backward(const Tensor& grad, const Tensor& x1, const Tensor& x2, double p,
                                          const Tensor& result, std::array<bool, 2>) {
  Tensor u = x1.unsqueeze(-2) - x2.unsqueeze(-3);
  Tensor g = grad.unsqueeze(-1);
  Tensor d = result.unsqueeze(-1);
  // (the matrix-product form of p = 2 clamps squared distances at 1e-30: those count as zero too)
  Tensor zero = p == 2 ? ember::le(d, scalar(1e-15)) : ember::eq(d, scalar(0.0));
  Tensor t;
  if (p == 0) {
    t = ember::zeros_like(u, {});
  } else if (p == 1) {
    t = u.sgn() * g;
  } else if (p == 2) {
    t = u * ember::where(zero, zeros0(grad), g / d);
  } else if (std::isinf(p)) {
    t = u.sgn() * ember::eq(u.abs(), d) * g;
  } else {
    Tensor scale = ember::where(zero, zeros0(grad), g / ember::pow(d, scalar(p - 1)));
    t = u.sgn() * ember::pow(u.abs(), scalar(p - 1)) * scale;
  }
  Tensor g1 = t.sum(IntArrayRef({int64_t(-2)}), false, std::nullopt);
  Tensor g2 = -t.sum(IntArrayRef({int64_t(-3)}), false, std::nullopt);
  return {autograd::sum_to(g1, x1.sizes()), autograd::sum_to(g2, x2.sizes())};
}

}  // namespace ember::autograd
