#include "ember/core/checked_math.h"
#include "ember/autograd/formulas.h"
#include "ember/sparse/sparse_ops.h"

#include "ember/iter/tensor_iter.h"
#include "ember/ops/opmath.h"

#include <algorithm>
#include <cmath>

namespace ember::autograd {

namespace {
// zeros of `sizes` in `like`'s dtype, on its device (a gradient stays on its tensor's device)
Tensor zeros_of(IntArrayRef sizes, const Tensor& like) {
  return ember::zeros(sizes, TensorOptions(like.dtype()).device(like.device()));
}
Tensor scalar(double v) { return scalar_to_tensor(v); }

// The reduced dims of a reduction over `dim` (None or empty: all) of a tensor with `ndim` dims.
std::vector<int64_t> reduced_dims(OptionalIntArrayRef dim, int64_t ndim) {
  std::vector<int64_t> d;
  if (!dim || dim->empty()) {
    for (int64_t i = 0; i < ndim; i++) d.push_back(i);
  } else {
    for (int64_t x : *dim) d.push_back(wrap_dim(x, ndim));
  }
  std::sort(d.begin(), d.end());
  return d;
}

// Re-insert reduced dims as size 1 so `t` broadcasts against the input.
Tensor unsqueeze_reduced(const Tensor& t, IntArrayRef sizes, OptionalIntArrayRef dim, bool keepdim) {
  if (keepdim || sizes.empty()) return t;
  Tensor r = t;
  for (int64_t d : reduced_dims(dim, int64_t(sizes.size()))) r = r.unsqueeze(d);
  return r;
}

bool has_zero(const Tensor& t) { return ember::eq(t, scalar(0.0)).any().item().to_bool(); }

double correction_value(std::optional<bool> unbiased, const std::optional<Scalar>& correction) {
  if (correction) return correction->to_double();
  if (unbiased) return *unbiased ? 1.0 : 0.0;
  return 1.0;
}

int64_t reduced_numel(IntArrayRef sizes, OptionalIntArrayRef dim) {
  int64_t n = 1;
  if (sizes.empty()) return 1;  // a 0-d input: dim 0 / -1 name the scalar itself
  for (int64_t d : reduced_dims(dim, int64_t(sizes.size()))) n = checked_mul(n, sizes[d], "numel");
  return n;
}
}  // namespace

std::vector<SavedVariable> save_list(const std::vector<Tensor>& ts) {
  std::vector<SavedVariable> r;
  for (const Tensor& t : ts) r.emplace_back(t, false);
  return r;
}
std::vector<Tensor> unpack_list(const std::vector<SavedVariable>& vs, const std::shared_ptr<Node>& owner) {
  std::vector<Tensor> r;
  for (const auto& v : vs) r.push_back(v.unpack(owner));
  return r;
}

Tensor zeros_like_grad(const Tensor& grad) { return ember::zeros_like(grad); }
Tensor maybe_multiply(const Tensor& grad, const Scalar& alpha) {
  if (!alpha.is_floating() && alpha.to_long() == 1) return grad;
  return grad * alpha;
}
Tensor mul_grad(const Tensor& grad, const Tensor& other, ScalarType) { return grad * other; }

Tensor div_self_grad(const Tensor& grad, const Tensor& other, std::optional<std::string_view> mode) {
  if (mode) return ember::zeros_like(grad);
  return grad / other;
}
Tensor div_other_grad(const Tensor& grad, const Tensor& self, const Tensor& other, std::optional<std::string_view> mode) {
  if (mode) return ember::zeros_like(grad);
  return -grad * self / (other * other);
}

Tensor pow_self_grad(const Tensor& grad, const Tensor& self, const Tensor& exponent) {
  if (exponent.impl()->is_wrapped_number() && !is_complex(exponent.dtype())) {
    // a number exponent stays a number, so pow(self, e - 1) takes the fast kernels (e = 2: a copy)
    const Scalar e = exponent.item();
    if (e.to_double() == 0.0) return ember::zeros_like(grad * exponent);
    const Scalar em1 = e.is_floating() ? Scalar(e.to_double() - 1.0) : Scalar(e.to_long() - 1);
    return grad * exponent * ember::pow(self, scalar_to_tensor(em1));
  }
  Tensor g = grad * exponent * ember::pow(self, exponent - 1);
  return ember::where(ember::eq(exponent, scalar(0.0)), ember::zeros_like(g), g);
}
Tensor pow_exponent_grad(const Tensor& grad, const Tensor& self, const Tensor& exponent, const Tensor& result) {
  Tensor g = grad * result * ember::log(self);
  // 0^e with e >= 0 has derivative 0 w.r.t. e (the log would give nan)
  Tensor mask = ember::logical_and(ember::eq(self, scalar(0.0)), ember::ge(exponent, scalar(0.0)));
  return ember::where(mask, ember::zeros_like(g), g);
}

Tensor min_max_grad(const Tensor& grad, const Tensor& a, const Tensor& b, bool is_min) {
  Tensor g = ember::where(ember::eq(a, b), grad / 2, grad);
  Tensor loses = is_min ? ember::gt(a, b) : ember::lt(a, b);
  return g.masked_fill(loses, 0);
}
Tensor fmin_fmax_grad(const Tensor& grad, const Tensor& self, const Tensor& other, bool is_min, int which) {
  Tensor self_wins = ember::logical_or(is_min ? ember::le(self, other) : ember::ge(self, other), ember::isnan(other));
  return grad.masked_fill(which == 0 ? self_wins.logical_not() : self_wins, 0);
}

Tensor clamp_self_grad(const Tensor& grad, const Tensor& self, const Tensor& min, const Tensor& max) {
  Tensor mask;
  if (min.defined()) mask = ember::ge(self, min);
  if (max.defined()) {
    Tensor m2 = ember::le(self, max);
    mask = mask.defined() ? ember::logical_and(mask, m2) : m2;
  }
  return grad * mask;
}
// With both bounds and min > max the result is max everywhere (PyTorch's clamp): min then gets no gradient
// and max all of it.
Tensor clamp_bound_grad(const Tensor& grad, const Tensor& self, const Tensor& bound, const Tensor& other, bool is_min) {
  Tensor mask = is_min ? ember::lt(self, bound) : ember::gt(self, bound);
  if (other.defined())
    mask = is_min ? ember::logical_and(mask, ember::lt(bound, other)) : ember::logical_or(mask, ember::lt(bound, other));
  return grad * mask;
}

// ---- reductions
Tensor sum_backward(const Tensor& grad, IntArrayRef sizes, OptionalIntArrayRef dim, bool keepdim) {
  return unsqueeze_reduced(grad, sizes, dim, keepdim).expand(sizes);
}
Tensor mean_backward(const Tensor& grad, IntArrayRef sizes, OptionalIntArrayRef dim, bool keepdim) {
  return sum_backward(grad, sizes, dim, keepdim) / double(reduced_numel(sizes, dim));
}

Tensor prod_backward(const Tensor& grad, const Tensor& self, const Tensor& result, std::optional<int64_t> dim, bool keepdim) {
  if (self.dim() == 0) return grad;
  if (!dim) {
    Tensor flat = self.reshape({-1});
    Tensor g = prod_backward(grad.reshape({1}), flat, result.reshape({1}), 0, true);
    return g.reshape(self.sizes());
  }
  int64_t d = wrap_dim(*dim, self.dim());
  Tensor g = keepdim ? grad : grad.unsqueeze(d);
  Tensor r = keepdim ? result : result.unsqueeze(d);
  if (!has_zero(self)) return g * r / self;
  // products of all other elements: exclusive prefix times exclusive suffix
  int64_t n = self.sizes()[d];
  Tensor one = ember::ones_like(self.narrow(d, 0, 1));
  Tensor prefix = ember::cat({one, self.narrow(d, 0, n - 1)}, d).cumprod(d);
  Tensor rev = self.flip({d});
  Tensor suffix = ember::cat({one, rev.narrow(d, 0, n - 1)}, d).cumprod(d).flip({d});
  return g * prefix * suffix;
}

Tensor amax_amin_backward(const Tensor& grad, const Tensor& self, const Tensor& result, IntArrayRef dim, bool keepdim) {
  // an empty dim reduces everything, which is how reduced_dims reads an empty list
  Tensor r = unsqueeze_reduced(result, self.sizes(), dim, keepdim);
  Tensor g = unsqueeze_reduced(grad, self.sizes(), dim, keepdim);
  Tensor mask = ember::eq(self, r);
  std::vector<int64_t> rd = reduced_dims(dim, self.dim());
  Tensor count = self.dim() ? ember::sum(mask, IntArrayRef(rd), true) : mask.to(kLong);
  return g * mask / count;
}

Tensor value_selecting_backward(const Tensor& grad, int64_t dim, const Tensor& indices, IntArrayRef sizes, bool keepdim) {
  if (sizes.empty()) return grad.reshape({});
  int64_t d = wrap_dim(dim, int64_t(sizes.size()));
  Tensor g = keepdim ? grad : grad.unsqueeze(d);
  Tensor idx = keepdim ? indices : indices.unsqueeze(d);
  DimVector shape(size_t(sizes.size()), 1);
  shape[d] = sizes[d];
  Tensor pos = ember::arange(0, sizes[d], 1, TensorOptions(kLong).device(grad.device())).reshape(shape);
  Tensor mask = ember::eq(pos, idx);
  return ember::where(mask, g.expand(sizes), ember::zeros_like(g).expand(sizes));
}

Tensor var_backward(const Tensor& grad, const Tensor& self, OptionalIntArrayRef dim, std::optional<bool> unbiased,
                    const std::optional<Scalar>& correction, bool keepdim) {
  double c = correction_value(unbiased, correction);
  int64_t n = reduced_numel(self.sizes(), dim);
  Tensor g = unsqueeze_reduced(grad, self.sizes(), dim, keepdim);
  std::vector<int64_t> rd = reduced_dims(dim, self.dim());
  Tensor mean = self.dim() ? ember::mean(self, IntArrayRef(rd), true) : self;
  return g * (self - mean) * (2.0 / (double(n) - c));
}
Tensor std_backward(const Tensor& grad, const Tensor& self, const Tensor& result, OptionalIntArrayRef dim,
                    std::optional<bool> unbiased, const std::optional<Scalar>& correction, bool keepdim) {
  Tensor g = (grad / (result * 2)).masked_fill(ember::eq(result, scalar(0.0)), 0);
  return var_backward(g, self, dim, unbiased, correction, keepdim);
}
Tensor var_mean_backward(const variable_list& grads, const Tensor& self, OptionalIntArrayRef dim,
                         std::optional<bool> unbiased, const std::optional<Scalar>& correction, bool keepdim) {
  Tensor r;
  if (grads[0].defined()) r = var_backward(grads[0], self, dim, unbiased, correction, keepdim);
  if (grads.size() > 1 && grads[1].defined()) {
    Tensor m = mean_backward(grads[1], self.sizes(), dim, keepdim);
    r = r.defined() ? r + m : m;
  }
  return r;
}
Tensor std_mean_backward(const variable_list& grads, const Tensor& self, const Tensor& std, OptionalIntArrayRef dim,
                         std::optional<bool> unbiased, const std::optional<Scalar>& correction, bool keepdim) {
  Tensor r;
  if (grads[0].defined()) r = std_backward(grads[0], self, std, dim, unbiased, correction, keepdim);
  if (grads.size() > 1 && grads[1].defined()) {
    Tensor m = mean_backward(grads[1], self.sizes(), dim, keepdim);
    r = r.defined() ? r + m : m;
  }
  return r;
}

Tensor norm_backward(const Tensor& grad, const Tensor& self, const std::optional<Scalar>& p_opt, const Tensor& result,
                     OptionalIntArrayRef dim, bool keepdim) {
  double p = p_opt ? p_opt->to_double() : 2.0;
  Tensor g = unsqueeze_reduced(grad, self.sizes(), dim, keepdim);
  Tensor r = unsqueeze_reduced(result, self.sizes(), dim, keepdim);
  Tensor zero_r = ember::eq(r, scalar(0.0));
  if (p == 0) return ember::zeros_like(self);
  if (p == 1) return self.sgn() * g;
  if (p == 2) return self * (g / r).masked_fill(zero_r, 0);
  if (std::isinf(p)) {
    Tensor mask = ember::eq(self.abs(), r);
    std::vector<int64_t> rd = reduced_dims(dim, self.dim());
    Tensor count = self.dim() ? ember::sum(mask, IntArrayRef(rd), true) : mask.to(kLong);
    return self.sgn() * g * mask / count;
  }
  if (p < 2) {
    // |x|^(p-1) sgn(x): 0 at x = 0 for p > 1 (x |x|^(p-2) would be 0 * inf there); for p < 1 PyTorch's
    // subgradient 0 at the zeros, and g r^(1-p) (finite at r = 0)
    Tensor self_scaled = self.sgn() * ember::pow(self.abs(), scalar(p - 1));
    if (p < 1) return self_scaled.masked_fill(ember::eq(self, scalar(0.0)), 0) * g * ember::pow(r, scalar(1 - p));
    return self_scaled * (g / ember::pow(r, scalar(p - 1))).masked_fill(zero_r, 0);
  }
  Tensor scale = (g / ember::pow(r, scalar(p - 1))).masked_fill(zero_r, 0);
  return self * ember::pow(self.abs(), scalar(p - 2)) * scale;
}

Tensor logsumexp_backward(const Tensor& grad, const Tensor& self, const Tensor& result, IntArrayRef dim, bool keepdim) {
  Tensor g = unsqueeze_reduced(grad, self.sizes(), dim, keepdim);  // empty dim: all, as in reduced_dims
  Tensor r = unsqueeze_reduced(result, self.sizes(), dim, keepdim);
  return g * (self - r).exp();
}

Tensor cumsum_backward(const Tensor& grad, int64_t dim) {
  if (grad.dim() == 0) return grad;
  int64_t d = wrap_dim(dim, grad.dim());
  return grad.flip({d}).cumsum(d).flip({d});
}

Tensor cumprod_backward(const Tensor& grad, const Tensor& self, int64_t dim, const Tensor& result) {
  if (self.dim() == 0) return grad;
  int64_t d = wrap_dim(dim, self.dim());
  if (!has_zero(self)) return cumsum_backward(grad * result, d) / self;
  int64_t n = self.sizes()[d];
  if (grad_enabled() && (requires_grad(self) || requires_grad(grad))) {
    // Double backward: the formula below is exact at the zeros but not in a neighbourhood of
    // them. dx_k = prod_{i<k} x_i * sum_{j>=k} g_j prod_{k<i<=j} x_i, one k at a time (O(n^2)).
    std::vector<Tensor> parts;
    Tensor one = ember::ones_like(self.narrow(d, 0, 1));
    for (int64_t k = 0; k < n; k++) {
      Tensor prefix = k == 0 ? one : ember::cumprod(self.narrow(d, 0, k), d).narrow(d, k - 1, 1);
      Tensor suffix = k + 1 < n ? ember::cat({one, ember::cumprod(self.narrow(d, k + 1, n - k - 1), d)}, d) : one;
      parts.push_back(prefix * ember::sum(grad.narrow(d, k, n - k) * suffix, IntArrayRef({d}), true));
    }
    return ember::cat(parts, d);
  }
  // With zeros. Along the dim, with
  // z the first zero: for k < z, dx_k = sum_{j>=k} g_j out_j / x_k (out_j = 0 past z);
  // dx_z = prod_{i<z} x_i * sum_{j>=z} g_j prod_{z<i<=j} x_i; dx_k = 0 for k > z.
  Tensor is_zero = ember::eq(self, scalar(0.0));
  Tensor zeros_so_far = ember::cumsum(is_zero, d);
  Tensor before = ember::eq(zeros_so_far, scalar(0.0));
  Tensor first = ember::logical_and(is_zero, ember::eq(zeros_so_far, scalar(1.0)));
  Tensor one = ember::ones_like(self);
  Tensor x_before = ember::where(before, self, one);
  Tensor part1 = ember::where(before, cumsum_backward(grad * result, d) / x_before, ember::zeros_like(grad));
  Tensor prefix = ember::cumprod(x_before, d);  // at z: prod_{i<z} x_i
  Tensor after = ember::cumprod(ember::where(ember::logical_or(before, first), one, self), d);
  Tensor part2 = ember::where(first, prefix * cumsum_backward(grad * after, d), ember::zeros_like(grad));
  return part1 + part2;
}

// ---- views
Tensor permute_backward(const Tensor& grad, IntArrayRef dims) {
  std::vector<int64_t> inv(dims.size());
  for (size_t i = 0; i < dims.size(); i++) inv[size_t(wrap_dim(dims[i], int64_t(dims.size())))] = int64_t(i);
  return grad.permute(inv);
}
Tensor narrow_backward(const Tensor& grad, IntArrayRef sizes, int64_t dim, int64_t start, int64_t length) {
  Tensor r = zeros_of(sizes, grad);
  int64_t d = wrap_dim(dim, int64_t(sizes.size()));
  if (start < 0) start += sizes[d];
  r.narrow(d, start, length).copy_(grad);
  return r;
}
Tensor slice_backward(const Tensor& grad, IntArrayRef sizes, int64_t dim, std::optional<int64_t> start,
                      std::optional<int64_t> end, int64_t step) {
  Tensor r = zeros_of(sizes, grad);
  ember::slice(r, dim, start, end, step).copy_(grad);
  return r;
}
Tensor select_backward(const Tensor& grad, IntArrayRef sizes, int64_t dim, int64_t index) {
  Tensor r = zeros_of(sizes, grad);
  r.select(dim, index).copy_(grad);
  return r;
}
Tensor unbind_backward(const variable_list& grads, const std::vector<TensorMeta>& outs, IntArrayRef sizes,
                       ScalarType dtype, int64_t dim) {
  std::vector<Tensor> parts;
  for (size_t i = 0; i < outs.size(); i++)
    parts.push_back(i < grads.size() && grads[i].defined()
                        ? grads[i]
                        : ember::zeros(outs[i].sizes, TensorOptions(dtype).device(outs[i].device)));
  if (parts.empty()) return ember::zeros(sizes, TensorOptions(dtype));
  return ember::stack(parts, dim);
}
Tensor split_backward(const variable_list& grads, const std::vector<TensorMeta>& outs, IntArrayRef sizes,
                      ScalarType dtype, int64_t dim) {
  std::vector<Tensor> parts;
  for (size_t i = 0; i < outs.size(); i++)
    parts.push_back(i < grads.size() && grads[i].defined()
                        ? grads[i]
                        : ember::zeros(outs[i].sizes, TensorOptions(dtype).device(outs[i].device)));
  if (parts.empty()) return ember::zeros(sizes, TensorOptions(dtype));
  return ember::cat(parts, dim);
}
Tensor as_strided_backward(const Tensor& grad, IntArrayRef sizes, IntArrayRef self_strides, int64_t self_offset,
                           IntArrayRef size, IntArrayRef stride, std::optional<int64_t> storage_offset) {
  // scatter-add every element of the view to its storage position, then read self's elements
  // (only self's geometry is needed: saving self itself would tie the node to its version)
  int64_t off = storage_offset.value_or(self_offset) - self_offset;
  int64_t extent = 1;
  for (size_t i = 0; i < sizes.size(); i++) {
    if (sizes[i] == 0) { extent = 0; break; }
    extent += (sizes[i] - 1) * self_strides[i];
  }
  const TensorOptions on_grad = TensorOptions(kLong).device(grad.device());
  Tensor pos = ember::full({}, off, on_grad);
  for (size_t i = 0; i < size.size(); i++) {
    DimVector shape(size.size(), 1);
    shape[i] = size[i];
    pos = pos + ember::arange(0, size[i], 1, on_grad).reshape(shape) * stride[i];
  }
  int64_t view_extent = 1;
  for (size_t i = 0; i < size.size(); i++) view_extent += size[i] ? (size[i] - 1) * stride[i] : 0;
  Tensor buf = zeros_of({std::max(extent, off + view_extent)}, grad);
  buf = ember::index_put_(buf, {pos.reshape({-1})}, grad.reshape({-1}), true);
  return ember::as_strided(buf, sizes, self_strides, 0);
}
Tensor diagonal_backward(const Tensor& grad, IntArrayRef sizes, int64_t offset, int64_t dim1, int64_t dim2) {
  Tensor r = zeros_of(sizes, grad);
  r.diagonal(offset, dim1, dim2).copy_(grad);
  return r;
}
Tensor unfold_backward(const Tensor& grad, IntArrayRef sizes, int64_t dimension, int64_t size, int64_t step) {
  Tensor r = zeros_of(sizes, grad);
  if (sizes.empty()) return grad.reshape({});
  int64_t d = wrap_dim(dimension, int64_t(sizes.size()));
  int64_t windows = grad.sizes()[d];
  for (int64_t i = 0; i < windows; i++) {
    Tensor w = grad.select(d, i).movedim({-1}, {d});
    Tensor dst = r.narrow(d, i * step, size);
    dst.copy_(dst + w);
  }
  return r;
}
std::vector<Tensor> cat_backward(const Tensor& grad, const std::vector<std::vector<int64_t>>& sizes, int64_t dim) {
  std::vector<Tensor> r;
  int64_t d = wrap_dim(dim, grad.dim());
  int64_t offset = 0;
  for (const auto& s : sizes) {
    if (s.size() == 1 && s[0] == 0 && grad.dim() != 1) {  // legacy empty input
      r.push_back(ember::zeros({0}, TensorOptions(grad.dtype()).device(grad.device())));
      continue;
    }
    int64_t n = s[size_t(d)];
    r.push_back(grad.narrow(d, offset, n));
    offset += n;
  }
  return r;
}
std::vector<Tensor> stack_backward(const Tensor& grad, const std::vector<std::vector<int64_t>>& sizes, int64_t dim) {
  int64_t d = wrap_dim(dim, grad.dim());
  std::vector<Tensor> r;
  for (size_t i = 0; i < sizes.size(); i++) r.push_back(grad.select(d, int64_t(i)));
  return r;
}
Tensor roll_backward(const Tensor& grad, IntArrayRef shifts, IntArrayRef dims) {
  std::vector<int64_t> neg;
  for (int64_t s : shifts) neg.push_back(-s);
  return grad.roll(neg, dims);
}

// ---- indexing, linear algebra
Tensor index_select_backward(const Tensor& grad, IntArrayRef sizes, int64_t dim, const Tensor& index) {
  if (sizes.empty()) return grad.reshape({});
  int64_t d = wrap_dim(dim, int64_t(sizes.size()));
  std::vector<Tensor> idx(static_cast<size_t>(d), Tensor());
  idx.push_back(index.reshape({-1}));
  return ember::index_put_(zeros_of(sizes, grad), idx, grad, true);
}
Tensor masked_select_backward(const Tensor& grad, const Tensor& self, const Tensor& mask) {
  DimVector shape = broadcast_shapes(self.sizes(), mask.sizes());
  Tensor z = zeros_of(shape, grad);
  return sum_to(ember::index_put_(z, {mask.expand(shape)}, grad, true), self.sizes());
}
Tensor index_backward(const Tensor& grad, IntArrayRef sizes, ScalarType dtype, const std::vector<Tensor>& indices) {
  return ember::index_put_(zeros_of(sizes, grad), indices, grad, true);
  (void)dtype;
}
Tensor index_put_self_grad(const Tensor& grad, const std::vector<Tensor>& indices, bool accumulate) {
  if (accumulate) return grad;
  return ember::index_put_(grad.clone(), indices, ember::zeros({}, TensorOptions(grad.dtype())), false);
}

Tensor matmul_backward(const Tensor& grad, const Tensor& self, const Tensor& other, int which) {
  if (self.dim() == 1 && other.dim() == 1) return grad * (which == 0 ? other : self);  // dot product
  Tensor a = self.dim() == 1 ? self.unsqueeze(0) : self;
  Tensor b = other.dim() == 1 ? other.unsqueeze(-1) : other;
  Tensor g = grad;
  if (self.dim() == 1) g = g.unsqueeze(-2);
  if (other.dim() == 1) g = g.unsqueeze(-1);
  if (which == 0) {
    Tensor ga = ember::matmul(g, b.transpose(-2, -1));
    return sum_to(ga, a.sizes()).reshape(self.sizes());
  }
  if (b.dim() == 2 && a.dim() >= 2) {  // one GEMM over all rows, in other's layout
    const int64_t rows = prod(IntArrayRef(a.sizes().data(), a.dim() - 1));
    Tensor a2 = a.reshape({rows, a.sizes().back()}), g2 = g.reshape({rows, g.sizes().back()});  // not -1: K may be 0
    return mm_mat2_backward(g2, a2, b, Scalar(int64_t(1))).reshape(other.sizes());
  }
  Tensor gb = ember::matmul(a.transpose(-2, -1), g);
  return sum_to(gb, b.sizes()).reshape(other.sizes());
}

// A transposed-layout operand (a W.t() view, as linear passes) gets its gradient in the same
// layout, so the gradient of W itself comes out contiguous and needs no copy.
static bool transposed_layout(const Tensor& m) {
  return m.dim() == 2 && m.strides()[0] == 1 && m.strides()[1] >= std::max<int64_t>(m.sizes()[0], 1) && m.sizes()[1] > 1;
}
Tensor mm_mat1_backward(const Tensor& grad, const Tensor& mat2, const Scalar& alpha) {
  return maybe_multiply(ember::matmul(grad, mat2.t()), alpha);
}
Tensor mm_mat2_backward(const Tensor& grad, const Tensor& mat1, const Tensor& mat2, const Scalar& alpha) {
  if (transposed_layout(mat2)) return maybe_multiply(ember::matmul(grad.t(), mat1).t(), alpha);
  return maybe_multiply(ember::matmul(mat1.t(), grad), alpha);
}

// ---- neural-network ops. Masks follow PyTorch's kernels exactly at the kinks (x == threshold ...).
namespace {
Tensor zero_where(const Tensor& grad, const Tensor& mask) { return grad.masked_fill(mask, 0); }
Tensor stable_softplus(const Tensor& x) { return ember::clamp_min(x, scalar(0.0)) + ember::log1p(ember::exp(-x.abs())); }
}  // namespace

Tensor hardtanh_backward(const Tensor& grad, const Tensor& result, const Scalar& min_val, const Scalar& max_val) {
  return zero_where(grad, ember::logical_or(ember::le(result, min_val), ember::ge(result, max_val)));
}
Tensor leaky_relu_backward(const Tensor& grad, const Tensor& self, const Scalar& negative_slope) {
  return ember::where(ember::gt(self, 0), grad, grad * negative_slope);
}
Tensor elu_backward(const Tensor& grad, const Tensor& self, const Scalar& alpha, const Scalar& scale,
                    const Scalar& input_scale) {
  // exp of min(x, 0): the branch for x > 0 is not taken, and must not overflow (0 * inf)
  double c = alpha.to_double() * scale.to_double() * input_scale.to_double();
  return in_opmath(grad, self, [&](const Tensor& g, const Tensor& x) {
    Tensor neg = g * ember::exp(ember::clamp_max(x, scalar(0.0)) * input_scale) * c;
    return ember::where(ember::gt(x, 0), g * scale, neg);
  });
}
Tensor gelu_backward(const Tensor& grad, const Tensor& self, std::string_view approximate) {
  return in_opmath(grad, self, [&](const Tensor& g, const Tensor& x) {
    if (approximate == "tanh") {
      const double beta = std::sqrt(2.0 / M_PI), kappa = 0.044715;
      Tensor x2 = x * x;
      Tensor t = ember::tanh((x + x2 * x * kappa) * beta);
      Tensor left = (t + 1) * 0.5;
      Tensor right = x * 0.5 * (-(t * t) + 1) * beta * (x2 * (3 * kappa) + 1);
      return g * (left + right);
    }
    Tensor cdf = (ember::erf(x * M_SQRT1_2) + 1) * 0.5;
    Tensor pdf = ember::exp(x * x * -0.5) * (0.5 * M_2_SQRTPI * M_SQRT1_2);
    return g * (cdf + x * pdf);
  });
}
Tensor silu_backward(const Tensor& grad, const Tensor& self) {
  return in_opmath(grad, self, [](const Tensor& g, const Tensor& x) {
    Tensor s = ember::sigmoid(x);
    return g * s * (x * (-s + 1) + 1);
  });
}
Tensor mish_backward(const Tensor& grad, const Tensor& self) {
  return in_opmath(grad, self, [](const Tensor& g, const Tensor& x) {
    Tensor t = ember::tanh(stable_softplus(x));
    return g * (t + x * ember::sigmoid(x) * (-(t * t) + 1));
  });
}
Tensor hardsigmoid_backward(const Tensor& grad, const Tensor& self) {
  return zero_where(grad / 6, ember::logical_or(ember::le(self, -3), ember::ge(self, 3)));
}
Tensor hardswish_backward(const Tensor& grad, const Tensor& self) {
  return in_opmath(grad, self, [](const Tensor& g, const Tensor& x) {
    Tensor mid = ember::where(ember::lt(x, 3), g * (x / 3 + 0.5), g);
    return zero_where(mid, ember::le(x, -3));
  });
}
Tensor softplus_backward(const Tensor& grad, const Tensor& self, const Scalar& beta, const Scalar& threshold) {
  return in_opmath(grad, self, [&](const Tensor& g, const Tensor& x) {
    Tensor z = x * beta;
    return ember::where(ember::gt(z, threshold), g, g * ember::sigmoid(z));
  });
}
Tensor shrink_backward(const Tensor& grad, const Tensor& self, const Scalar& lambd) {
  return zero_where(grad, ember::logical_and(ember::ge(self, -lambd.to_double()), ember::le(self, lambd)));
}
Tensor threshold_op_backward(const Tensor& grad, const Tensor& self, const Scalar& threshold) {
  return zero_where(grad, ember::le(self, threshold));
}
// PyTorch's formula, from its forward's buffer z = exp(-|x|), which it keeps in the input's dtype
Tensor log_sigmoid_backward(const Tensor& grad, const Tensor& self) {
  const ScalarType dt = self.dtype();
  return in_opmath(grad, self, [dt](const Tensor& g, const Tensor& x) {
    Tensor z = ember::exp(-x.abs());
    if (is_reduced_float(dt)) z = z.to(dt).to(kFloat);
    Tensor d = z / (z + 1);
    return g * ember::where(ember::lt(x, 0), 1 - d, d);
  });
}

// binary_cross_entropy: d/dx = w (x - t) / max(x (1 - x), 1e-12), finite at x = 0 and 1 as in
// PyTorch; d/dt = w (log(1 - x) - log(x)). Mean reduction divides by the element count.
Tensor binary_cross_entropy_backward(const Tensor& grad, const Tensor& self, const Tensor& target, const Tensor& weight,
                                     int64_t reduction) {
  Tensor g = reduction == 1 ? grad / double(self.numel()) : grad;
  Tensor r = g * (self - target) / ember::clamp_min((-self + 1) * self, scalar(1e-12));
  return weight.defined() ? r * weight : r;
}
Tensor binary_cross_entropy_target_backward(const Tensor& grad, const Tensor& self, const Tensor& target,
                                            const Tensor& weight, int64_t reduction) {
  (void)target;
  Tensor g = reduction == 1 ? grad / double(self.numel()) : grad;
  Tensor r = g * (ember::log1p(-self) - ember::log(self));
  return weight.defined() ? r * weight : r;
}

Tensor reduce_loss(const Tensor& loss, int64_t reduction) {
  return reduction == 1 ? loss.mean() : reduction == 2 ? loss.sum() : loss;
}

// embedding: the gradient rows accumulate into the rows they were read from; padding_idx gets
// none, and with scale_grad_by_freq each row is divided by how often its index occurs.
// With sparse=True the gradient is a sparse COO tensor of the rows read (ember/sparse/sparse_ops.h).
Tensor embedding_backward(const Tensor& grad, const Tensor& indices, IntArrayRef weight_sizes, int64_t padding_idx,
                          bool scale_grad_by_freq, bool sparse) {
  if (sparse) return sparse::embedding_backward(grad, indices, weight_sizes[0], padding_idx, scale_grad_by_freq);
  const int64_t num = weight_sizes[0], dim = weight_sizes[1];
  Tensor idx = indices.reshape({-1}).to(kLong);
  Tensor g = grad.reshape({-1, dim});
  if (scale_grad_by_freq) {
    Tensor counts = ember::index_put_(zeros_of({num}, grad), {idx},
                                      ember::ones({}, TensorOptions(grad.dtype())), true);
    g = g / ember::index_select(counts, 0, idx).unsqueeze(1);
  }
  if (padding_idx >= 0) g = g.masked_fill(ember::eq(idx, padding_idx).unsqueeze(1), 0);
  return ember::index_put_(zeros_of({num, dim}, grad), {idx}, g, true);
}

}  // namespace ember::autograd
