// Loss functions (ember.nn.functional). `reduction` is PyTorch's enum: 0 none, 1 mean, 2 sum.
// All are composites of public ops (gather, log_softmax, log_sigmoid, clamp, where, ...), so
// their gradients of every order come from those ops; binary_cross_entropy alone has its own
// formulas (autograd/formulas.cpp), because its clamped logs would give 0 * inf = NaN gradients
// at 0 and 1 where PyTorch's are finite.
#include <cmath>
#include <limits>
#include <sstream>

#include "ember/autograd/grad_mode.h"
#include "ember/generated/native.h"
#include "ember/generated/ops.h"
#include "ember/iter/tensor_iter.h"
#include "ember/kernels/nn_loss.h"
#include "ember/ops/nn_common.h"

EMBER_DEFINE_STUB(nll_pick_stub)
EMBER_DEFINE_STUB(nll_pick_backward_stub)

namespace ember::native {

using nn_detail::apply_loss_reduction;
using nn_detail::check_floating;
using nn_detail::check_reduction;
using nn_detail::scalar;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// Lengths and targets that the composites below turn into index tensors on the host (sizes the
// op's semantics need there, as PyTorch's CPU and CUDA ctc_loss read them): copied to the CPU first,
// and the index tensors built there are moved to the input's device.
std::vector<int64_t> to_vec(const Tensor& t) {
  Tensor c = t.reshape({-1}).to(Device()).to(kLong).contiguous();
  const int64_t* p = static_cast<const int64_t*>(c.data_ptr());  // host copy, see above
  return std::vector<int64_t>(p, p + c.numel());
}
Tensor long_tensor(const std::vector<int64_t>& v, IntArrayRef shape, Device device = Device()) {
  Tensor t = ember::empty(shape, TensorOptions(kLong));
  std::copy(v.begin(), v.end(), static_cast<int64_t*>(t.data_ptr()));  // host tensor, see above
  return device.is_cpu() ? t : t.to(device);
}

// [1, C, 1, ...] view of a per-class weight against an input of `ndim` dims with classes at dim 1
// (dim 0 for 1-d inputs)
Tensor class_view(const Tensor& w, int64_t ndim) {
  if (ndim <= 1) return w;
  DimVector shape(size_t(ndim), 1);
  shape[1] = w.numel();
  return w.reshape(shape);
}

void check_class_weight(const Tensor& weight, int64_t n_classes, const char* prefix) {
  EMBER_CHECK(!weight.defined() || (weight.dim() == 1 && weight.numel() == n_classes), prefix,
              "weight tensor should be defined either for all ", n_classes,
              " classes or no classes but got weight tensor of shape: ", weight.sizes());
}

// The negative log likelihood of the rows of x ([M, C]) at t ([M], any integer dtype):
// per-row losses (ignored rows 0) and the per-row weights (ignored rows 0).
// Per-row losses -w[t] * x[i, t] (0 where t == ignore_index) and the row weights the mean divides by.
std::pair<Tensor, Tensor> nll_rows(const Tensor& x, const Tensor& target, const Tensor& weight, int64_t ignore_index) {
  Tensor t = target.to(kLong);
  Tensor loss = ember::nll_pick(x, t, weight, ignore_index);  // checks the targets' range
  Tensor ignored = ember::eq(t, ignore_index);
  Tensor safe = t.masked_fill(ignored, 0);
  Tensor w = weight.defined() ? ember::index_select(weight, 0, safe).to(x.dtype())
                              : ember::ones({t.numel()}, TensorOptions(x.dtype()).device(x.device()));
  return {loss, w.masked_fill(ignored, 0)};
}

// gather-free reductions of nll_rows' output
Tensor reduce_nll(const Tensor& loss, const Tensor& w, int64_t reduction, IntArrayRef none_shape) {
  if (reduction == Reduction::None) return loss.reshape(none_shape);
  if (reduction == Reduction::Sum) return loss.sum();
  return loss.sum() / w.sum();
}

// Classes moved last and flattened: [N, C, d1, ...] -> [N*d1*..., C]; [C] -> [1, C].
Tensor classes_last(const Tensor& input) {
  if (input.dim() == 1) return input.reshape({1, input.size(0)});
  if (input.dim() == 2) return input;
  return input.movedim(IntArrayRef({1}), IntArrayRef({-1})).reshape({-1, input.size(1)});
}

void check_target_dtype(const Tensor& target) {
  EMBER_CHECK(target.dtype() == kLong || target.dtype() == kByte, "expected target dtype to be Long or Byte, but got ",
              target.dtype());
}

// log(exp(a) + exp(b) + ...) elementwise, where any term may be -inf: all -inf gives -inf with
// zero (not NaN) gradients; the shift m is a constant (the result does not depend on it).
Tensor logsumexp_terms(const std::vector<Tensor>& terms) {
  Tensor m;
  {
    autograd::AutoGradMode no_grad(false);
    m = terms[0].detach();
    for (size_t i = 1; i < terms.size(); i++) m = ember::maximum(m, terms[i].detach());
  }
  Tensor dead = ember::eq(m, -kInf);
  Tensor shift = m.masked_fill(dead, 0);
  Tensor s = ember::exp(terms[0] - shift);
  for (size_t i = 1; i < terms.size(); i++) s = s + ember::exp(terms[i] - shift);
  return (ember::log(s.masked_fill(dead, 1)) + shift).masked_fill(dead, -kInf);
}

}  // namespace

// ---- regression losses
Tensor mse_loss(const Tensor& self, const Tensor& target, int64_t reduction) {
  check_reduction(reduction);
  Tensor d = self - target;
  check_floating(d, "mse_cpu");
  return apply_loss_reduction(d * d, reduction);
}

Tensor l1_loss(const Tensor& self, const Tensor& target, int64_t reduction) {
  check_reduction(reduction);
  return apply_loss_reduction((self - target).abs(), reduction);
}

Tensor smooth_l1_loss(const Tensor& self, const Tensor& target, int64_t reduction, double beta) {
  check_reduction(reduction);
  EMBER_CHECK(beta >= 0, "smooth_l1_loss does not support negative values for beta.");
  if (beta == 0) return native::l1_loss(self, target, reduction);
  Tensor d = self - target;
  check_floating(d, "smooth_l1_cpu");
  Tensor z = d.abs();
  Tensor loss = ember::where(ember::lt(z, beta), d * d * (0.5 / beta), z - 0.5 * beta);
  return apply_loss_reduction(loss, reduction);
}

Tensor huber_loss(const Tensor& self, const Tensor& target, int64_t reduction, double delta) {
  check_reduction(reduction);
  EMBER_CHECK(delta > 0, "huber_loss does not support non-positive values for delta.");
  Tensor d = self - target;
  check_floating(d, "huber_cpu");
  Tensor z = d.abs();
  Tensor loss = ember::where(ember::lt(z, delta), d * d * 0.5, (z - 0.5 * delta) * delta);
  return apply_loss_reduction(loss, reduction);
}

// ---- binary cross entropy: -w (t log x + (1 - t) log(1 - x)), each log clamped to >= -100
Tensor binary_cross_entropy(const Tensor& self, const Tensor& target, const Tensor& weight, int64_t reduction) {
  check_reduction(reduction);
  check_floating(self, "binary_cross_entropy");
  EMBER_CHECK(target.dtype() == self.dtype(), "Found dtype ", target.dtype(), " but expected ", self.dtype());
  EMBER_CHECK(target.sizes() == self.sizes(), "binary_cross_entropy: expected target of the input's size ", self.sizes(),
              ", but got ", target.sizes());
  if (self.numel() && !self.is_meta() && !target.is_meta()) {  // (meta tensors have no values to check)
    EMBER_CHECK(ember::logical_and(ember::ge(self, 0), ember::le(self, 1)).all().item().to_bool(),
                "all elements of input should be between 0 and 1");
    EMBER_CHECK(ember::logical_and(ember::ge(target, 0), ember::le(target, 1)).all().item().to_bool(),
                "all elements of target should be between 0 and 1");
  }
  Tensor log_x = ember::clamp_min(ember::log(self), scalar(-100.0));
  Tensor log_1mx = ember::clamp_min(ember::log1p(-self), scalar(-100.0));
  Tensor loss = (target - 1) * log_1mx - target * log_x;
  if (weight.defined()) loss = loss * weight;
  return apply_loss_reduction(loss, reduction);
}

// max(x, 0) - x t + log(1 + exp(-|x|)), with pos_weight scaling the positive term
Tensor binary_cross_entropy_with_logits(const Tensor& self, const Tensor& target, const Tensor& weight,
                                        const Tensor& pos_weight, int64_t reduction) {
  check_reduction(reduction);
  Tensor log_sig = ember::log_sigmoid(self);
  if (pos_weight.defined()) log_sig = log_sig * ((pos_weight - 1) * target + 1);
  Tensor loss = (1 - target) * self - log_sig;
  if (weight.defined()) loss = loss * weight;
  return apply_loss_reduction(loss, reduction);
}

Tensor kl_div(const Tensor& self, const Tensor& target, int64_t reduction, bool log_target) {
  check_reduction(reduction);
  EMBER_CHECK(!is_integral(self.dtype(), true) && !is_integral(target.dtype(), true),
              "kl_div: Integral inputs not supported.");
  EMBER_CHECK(!is_complex(self.dtype()) && !is_complex(target.dtype()), "kl_div: Complex inputs not supported.");
  Tensor loss;
  if (log_target) {
    loss = ember::exp(target) * (target - self);
  } else {
    // xlogy(t, t) - t x, with 0 log 0 = 0 (and, as PyTorch's xlogy, a nan gradient w.r.t. t there)
    Tensor xlogy = (target * ember::log(target)).masked_fill(ember::eq(target, 0), 0);
    loss = xlogy - target * self;
  }
  return apply_loss_reduction(loss, reduction);
}

Tensor poisson_nll_loss(const Tensor& input, const Tensor& target, bool log_input, bool full, double eps,
                        int64_t reduction) {
  check_reduction(reduction);
  Tensor loss = log_input ? ember::exp(input) - target * input : input - target * ember::log(input + eps);
  if (full) {  // Stirling's approximation of log(target!), for targets > 1
    Tensor stirling = target * ember::log(target) - target + ember::log(target * (2 * M_PI)) * 0.5;
    loss = loss + stirling.masked_fill(ember::le(target, 1), 0);
  }
  return apply_loss_reduction(loss, reduction);
}

// The variance may have one dimension fewer than the input, or size 1 in one dimension
// (homoscedastic); it is clamped to >= eps with the gradient passing as if unclamped.
Tensor gaussian_nll_loss(const Tensor& input, const Tensor& target, const Tensor& var, bool full, double eps,
                         int64_t reduction) {
  check_reduction(reduction);
  EMBER_CHECK_KIND(var.numel() == 0 || !ember::lt(var, 0).any().item().to_bool(), Value,
                   "var has negative entry/entries");
  Tensor v = var;
  if (v.sizes() != input.sizes()) {
    bool one_short = input.dim() >= 1 && v.dim() == input.dim() - 1;
    for (int64_t i = 0; one_short && i < v.dim(); i++) one_short = v.size(i) == input.size(i);
    int64_t mismatch = 0;
    if (!one_short && v.dim() == input.dim())
      for (int64_t i = 0; i < v.dim(); i++)
        if (v.size(i) != input.size(i)) mismatch += v.size(i);
    if (one_short) v = v.unsqueeze(-1);
    else EMBER_CHECK_KIND(v.dim() == input.dim() && mismatch == 1, Value, "var is of incorrect size");
  }
  v = v.clone();
  {
    autograd::AutoGradMode no_grad(false);
    ember::clamp_min_(v, scalar(eps));
  }
  Tensor d = input - target;
  Tensor loss = (ember::log(v) + d * d / v) * 0.5;
  if (full) loss = loss + 0.5 * std::log(2 * M_PI);
  return apply_loss_reduction(loss, reduction);
}

// ---- margin and embedding losses
Tensor margin_ranking_loss(const Tensor& input1, const Tensor& input2, const Tensor& target, double margin,
                           int64_t reduction) {
  check_reduction(reduction);
  Tensor loss = ember::clamp_min(-target * (input1 - input2) + margin, scalar(0.0));
  return apply_loss_reduction(loss, reduction);
}

Tensor hinge_embedding_loss(const Tensor& self, const Tensor& target, double margin, int64_t reduction) {
  check_reduction(reduction);
  Tensor zeros = ember::zeros_like(self, TensorOptions(self.dtype()));
  Tensor margin_clamp = ember::clamp_min(margin - self, scalar(0.0));
  Tensor out_margin = ember::where(ember::ne(target, 1), margin_clamp, zeros);
  Tensor out_self = ember::where(ember::ne(target, -1), self, zeros);
  return apply_loss_reduction(out_margin + out_self, reduction);
}

Tensor soft_margin_loss(const Tensor& self, const Tensor& target, int64_t reduction) {
  check_reduction(reduction);
  // PyTorch declares no gradient for the target here (unlike the other regression losses)
  EMBER_CHECK(!(autograd::grad_enabled() && target.requires_grad()), "The function 'soft_margin_loss' is not "
              "differentiable with respect to argument 'target'. This input cannot have requires_grad True.");
  return apply_loss_reduction(ember::log1p(ember::exp(-target * self)), reduction);
}

Tensor multilabel_soft_margin_loss(const Tensor& self, const Tensor& target, const Tensor& weight, int64_t reduction) {
  check_reduction(reduction);
  EMBER_CHECK(self.dim() >= 1, "multilabel_soft_margin_loss: expected an input with at least 1 dimension");
  Tensor loss = -(target * ember::log_sigmoid(self) + (1 - target) * ember::log_sigmoid(-self));
  if (weight.defined()) loss = loss * weight;
  const int64_t class_dim = self.dim() - 1;
  loss = loss.sum(IntArrayRef({class_dim})) / double(self.size(class_dim));
  return apply_loss_reduction(loss, reduction);
}

// sum over j != y of max(0, margin - x[y] + x[j])^p * w[y], divided by the number of classes
Tensor multi_margin_loss(const Tensor& self, const Tensor& target, const Scalar& p, const Scalar& margin,
                         const Tensor& weight, int64_t reduction) {
  check_reduction(reduction);
  // a 0-d input is one sample of one class, as PyTorch's
  EMBER_CHECK(self.dim() == 0 || (self.dim() == 1 && self.numel() > 0) || (self.dim() == 2 && self.size(1) > 0),
              "Expected non-empty vector or matrix with optional 0-dim batch size, but got: ", self.sizes());
  EMBER_CHECK(p.to_double() == 1 || p.to_double() == 2, "only p == 1 and p == 2 supported");
  const int64_t N = self.dim() == 2 ? self.size(0) : 1, C = self.dim() == 0 ? 1 : self.size(-1);
  EMBER_CHECK(target.dim() <= 1 && target.numel() == N, "multi_margin_loss: target tensor should be 1-D with size "
              "equal to the number of input samples (batch size). Expected target size [", N, "], but got ",
              target.sizes(), ". Input has shape ", self.sizes(), ".");
  EMBER_CHECK(!weight.defined() || (weight.dim() <= 1 && weight.numel() == C), "inconsistent weight size, expected ", C,
              " but got ", weight.sizes());
  EMBER_CHECK(is_integral(target.dtype(), false), "multi_margin_loss: expected an integer target, but got ",
              target.dtype());
  if (!target.is_meta())  // the meta device has no values to check
    for (int64_t v : to_vec(target)) EMBER_CHECK(v >= 0 && v < C, "target out of range");
  Tensor x = self.reshape({N, C});
  Tensor t = target.reshape({N, 1}).to(kLong);
  Tensor z = ember::relu(x + (margin - ember::gather(x, 1, t)));
  if (p.to_double() == 2) z = z * z;
  z = z.masked_fill(ember::eq(ember::arange(0, C, 1, TensorOptions(kLong).device(x.device())), t), 0);
  if (weight.defined()) z = z * ember::index_select(weight.reshape({-1}), 0, t.reshape({-1})).unsqueeze(1);
  Tensor loss = z.sum(IntArrayRef({1})) / double(C);
  if (reduction == Reduction::None) return target.dim() > 0 ? loss : loss.reshape({});
  return apply_loss_reduction(loss, reduction);
}

Tensor cosine_embedding_loss(const Tensor& input1, const Tensor& input2, const Tensor& target, double margin,
                             int64_t reduction) {
  check_reduction(reduction);
  const int64_t td = target.dim();
  EMBER_CHECK(td == 1 || td == 0, "0D or 1D target tensor expected, multi-target not supported");
  if (td == 1) {
    EMBER_CHECK(input1.dim() == 2 && input2.dim() == 2, "1D target tensor expects 2D input tensors, but found inputs "
                "with sizes ", input1.sizes(), " and ", input2.sizes(), ".");
  } else {
    EMBER_CHECK(input1.dim() == 1 && input2.dim() == 1, "0D target tensor expects 1D input tensors, but found inputs "
                "with sizes ", input1.sizes(), " and ", input2.sizes(), ".");
  }
  const double kEps = 1e-12;
  Tensor prod_sum = (input1 * input2).sum(IntArrayRef({td}));
  Tensor mag1 = (input1 * input1).sum(IntArrayRef({td})) + kEps;
  Tensor mag2 = (input2 * input2).sum(IntArrayRef({td})) + kEps;
  Tensor cos = prod_sum / ember::sqrt(mag1 * mag2);
  Tensor zeros = ember::zeros_like(cos, TensorOptions(cos.dtype()));
  Tensor pos = ember::where(ember::eq(target, 1), 1 - cos, zeros);
  Tensor neg = ember::where(ember::eq(target, -1), ember::clamp_min(cos - margin, scalar(0.0)), zeros);
  return apply_loss_reduction(pos + neg, reduction);
}

Tensor pairwise_distance(const Tensor& x1, const Tensor& x2, double p, double eps, bool keepdim) {
  const int64_t innermost = std::max(x1.dim(), x2.dim()) - 1;
  return ember::norm(x1 - x2 + eps, Scalar(p), IntArrayRef({innermost}), keepdim);
}

// Each input is divided by its norm (clamped to >= eps, the gradient passing as if unclamped)
// before the dot product, which keeps the result in [-1, 1].
Tensor cosine_similarity(const Tensor& x1_in, const Tensor& x2_in, int64_t dim, double eps) {
  ScalarType dt = promote_types(x1_in.dtype(), x2_in.dtype());
  EMBER_CHECK(is_floating(dt), "expected common dtype to be floating point, yet common dtype is ", dt);
  DimVector shape = broadcast_shapes(x1_in.sizes(), x2_in.sizes());
  Tensor x1 = x1_in.to(dt).expand(shape), x2 = x2_in.to(dt).expand(shape);
  Tensor n1 = ember::norm(x1, Scalar(2.0), IntArrayRef({dim}), true).clone();
  Tensor n2 = ember::norm(x2, Scalar(2.0), IntArrayRef({dim}), true).clone();
  {
    autograd::AutoGradMode no_grad(false);
    ember::clamp_min_(n1, scalar(eps));
    ember::clamp_min_(n2, scalar(eps));
  }
  return ((x1 / n1) * (x2 / n2)).sum(IntArrayRef({dim}));
}

Tensor triplet_margin_loss(const Tensor& anchor, const Tensor& positive, const Tensor& negative, double margin,
                           double p, double eps, bool swap, int64_t reduction) {
  check_reduction(reduction);
  EMBER_CHECK(anchor.dim() == positive.dim() && anchor.dim() == negative.dim(), "The anchor, positive, and negative "
              "tensors are expected to have the same number of dimensions, but got: anchor ", anchor.dim(),
              "D, positive ", positive.dim(), "D, and negative ", negative.dim(), "D inputs");
  Tensor d_pos = ember::pairwise_distance(anchor, positive, p, eps, false);
  Tensor d_neg = ember::pairwise_distance(anchor, negative, p, eps, false);
  if (swap) d_neg = ember::minimum(d_neg, ember::pairwise_distance(positive, negative, p, eps, false));
  Tensor loss = ember::clamp_min(d_pos - d_neg + margin, scalar(0.0));
  return apply_loss_reduction(loss, reduction);
}

// ---- classification losses
// nll_loss for 1-d (C) or 2-d (N, C) inputs, as PyTorch's nll_loss
Tensor nll_loss(const Tensor& self, const Tensor& target, const Tensor& weight, int64_t reduction,
                int64_t ignore_index) {
  check_reduction(reduction);
  EMBER_CHECK(self.dim() > 0 && self.dim() <= 2, "input tensor should be 1D or 2D");
  EMBER_CHECK(target.dim() <= 1, "0D or 1D target tensor expected, multi-target not supported");
  if (self.dim() == 1) {
    EMBER_CHECK_KIND(target.dim() == 0 || target.numel() == 1, Value, "For 1D input, 1D target must have size 1, but "
                     "got target size: ", target.numel());
  } else {
    EMBER_CHECK(target.dim() == 1 && self.size(0) == target.size(0), "size mismatch (got input: ", self.sizes(),
                ", target: ", target.sizes(), ")");
  }
  check_target_dtype(target);
  check_class_weight(weight, self.size(-1), "");
  Tensor x = classes_last(self);
  auto [loss, w] = nll_rows(x, target.reshape({-1}), weight, ignore_index);
  return reduce_nll(loss, w, reduction, self.dim() == 1 ? IntArrayRef() : target.sizes());
}

// Any number of dims: (C), (N, C) or (N, C, d1, ...) with target () / (N) / (N, d1, ...)
Tensor nll_loss_nd(const Tensor& self, const Tensor& target, const Tensor& weight, int64_t reduction,
                   int64_t ignore_index) {
  check_reduction(reduction);
  EMBER_CHECK_KIND(self.dim() >= 1, Value, "Expected 1 or more dimensions (got ", self.dim(), ")");
  if (self.dim() != 1 && (target.dim() == 0 || self.size(0) != target.size(0)))
    EMBER_FAIL(Value, "Expected input batch_size (", self.size(0), ") to match target batch_size (",
               target.dim() ? target.size(0) : 0, ").");
  if (self.dim() <= 2) return native::nll_loss(self, target, weight, reduction, ignore_index);
  DimVector out_size;
  out_size.push_back(self.size(0));
  for (int64_t i = 2; i < self.dim(); i++) out_size.push_back(self.size(i));
  EMBER_CHECK(target.sizes() == IntArrayRef(out_size), "Expected target size ", IntArrayRef(out_size), ", got ",
              target.sizes());
  check_target_dtype(target);
  check_class_weight(weight, self.size(1), "");
  auto [loss, w] = nll_rows(classes_last(self), target.reshape({-1}), weight, ignore_index);
  return reduce_nll(loss, w, reduction, out_size);
}

Tensor cross_entropy_loss(const Tensor& self, const Tensor& target, const Tensor& weight, int64_t reduction,
                          int64_t ignore_index, double label_smoothing) {
  check_reduction(reduction);
  const int64_t class_dim = self.dim() == 1 ? 0 : 1;
  if (self.sizes() == target.sizes()) {
    // class probabilities
    EMBER_CHECK(is_floating(target.dtype()), "Expected floating point type for target with class probabilities, got ",
                target.dtype());
    EMBER_CHECK(ignore_index < 0, "ignore_index is not supported for floating point target");
    EMBER_CHECK(label_smoothing >= 0 && label_smoothing <= 1, "label_smoothing must be between 0.0 and 1.0. Got: ",
                label_smoothing);
    const int64_t C = self.size(class_dim);
    check_class_weight(weight, C, "cross_entropy: ");
    Tensor logp = ember::log_softmax(self, class_dim, std::nullopt);
    Tensor t = label_smoothing > 0 ? target * (1 - label_smoothing) + label_smoothing / double(C) : target;
    Tensor prod = logp * t;
    if (weight.defined()) prod = prod * class_view(weight, self.dim());
    if (reduction == Reduction::None) return -prod.sum(IntArrayRef({class_dim}));
    if (reduction == Reduction::Sum) return -prod.sum();
    return -prod.sum() / double(self.numel() / std::max<int64_t>(C, 1));
  }
  EMBER_CHECK(label_smoothing >= 0 && label_smoothing <= 1, "label_smoothing must be between 0.0 and 1.0. Got: ",
              label_smoothing);
  Tensor logp = ember::log_softmax(self, class_dim, std::nullopt);
  Tensor nll = native::nll_loss_nd(logp, target, weight, reduction, ignore_index);
  if (label_smoothing == 0) return nll;
  // (1 - eps) * nll + eps / C * (the loss against the uniform distribution), ignored targets excluded
  const int64_t C = self.size(class_dim);
  Tensor ignored = ember::eq(target, ignore_index);
  Tensor wlogp = weight.defined() ? logp * class_view(weight, self.dim()) : logp;
  Tensor smooth = (-wlogp.sum(IntArrayRef({class_dim}))).masked_fill(ignored, 0);
  Tensor ret;
  if (reduction == Reduction::None) {
    ret = smooth;
  } else if (reduction == Reduction::Sum) {
    ret = smooth.sum();
  } else if (weight.defined()) {
    Tensor tw = ember::index_select(weight, 0, target.masked_fill(ignored, 0).reshape({-1}).to(kLong));
    ret = smooth.sum() / tw.masked_fill(ignored.reshape({-1}), 0).sum();
  } else {
    ret = smooth.sum() / ember::logical_not(ignored).sum();
  }
  return nll * (1 - label_smoothing) + ret * (label_smoothing / double(C));
}

// ---- CTC: the negative log likelihood of each target sequence under all alignments, by the
// forward (alpha) recursion over the blank-extended target l' (blank, l1, blank, l2, ..., blank),
// in log space, as differentiable ops (so the gradient is exact and twice differentiable).
Tensor ctc_loss(const Tensor& log_probs, const Tensor& targets, const Tensor& input_lengths,
                const Tensor& target_lengths, int64_t blank, int64_t reduction, bool zero_infinity) {
  check_reduction(reduction);
  const bool batched = log_probs.dim() == 3;
  EMBER_CHECK(log_probs.dim() == 3 || log_probs.dim() == 2, "ctc_loss: expected log_probs of shape (T, N, C) or "
              "(T, C), but got ", log_probs.sizes());
  EMBER_CHECK(is_floating(log_probs.dtype()), "ctc_loss: expected floating point log_probs, but got ", log_probs.dtype());
  Tensor lp = batched ? log_probs : log_probs.unsqueeze(1);
  const int64_t T = lp.size(0), N = lp.size(1), C = lp.size(2);
  EMBER_CHECK(blank >= 0 && blank < C, "blank must be in label range");
  EMBER_CHECK(is_integral(targets.dtype(), false) || is_floating(targets.dtype()),
              "ctc_loss: expected integer targets, but got ", targets.dtype());
  if (log_probs.is_meta())  // shapes only: the lengths and targets' values are not there to check
    return empty_tensor(reduction == Reduction::None && batched ? DimVector{N} : DimVector{}, log_probs.dtype(),
                        log_probs.device());
  std::vector<int64_t> in_len = to_vec(input_lengths), tg_len = to_vec(target_lengths);
  EMBER_CHECK(int64_t(in_len.size()) == N, "input_lengths must be of size batch_size");
  EMBER_CHECK(int64_t(tg_len.size()) == N, "target_lengths must be of size batch_size");
  Tensor tg = targets.to(kLong);
  if (!batched && tg.dim() == 1) tg = tg.unsqueeze(0);
  std::vector<int64_t> tv = to_vec(tg);
  // start of each target sequence in tv
  std::vector<int64_t> start(size_t(N), 0);
  int64_t max_len = 0;
  for (int64_t n = 0; n < N; n++) {
    EMBER_CHECK(tg_len[size_t(n)] >= 0, "ctc_loss: target_lengths must be non-negative, but got ", tg_len[size_t(n)]);
    EMBER_CHECK(in_len[size_t(n)] >= 0 && in_len[size_t(n)] <= T, "Expected input_lengths to have value at most ", T,
                ", but got value ", in_len[size_t(n)], " (while checking arguments for ctc_loss_allocate_outputs)");
    max_len = std::max(max_len, tg_len[size_t(n)]);
  }
  if (tg.dim() == 2) {
    EMBER_CHECK(tg.size(0) == N, "ctc_loss: expected targets of batch size ", N, ", but got ", tg.size(0));
    EMBER_CHECK(tg.size(1) >= max_len, "Expected tensor to have size at least ", max_len, " at dimension 1, but got "
                "size ", tg.size(1), " for argument #2 'targets' (while checking arguments for ctc_loss_allocate_outputs)");
    for (int64_t n = 0; n < N; n++) start[size_t(n)] = n * tg.size(1);
  } else {
    EMBER_CHECK(tg.dim() == 1, "ctc_loss: expected targets of shape (N, S) or (sum(target_lengths)), but got ", tg.sizes());
    int64_t pos = 0;
    for (int64_t n = 0; n < N; n++) {
      start[size_t(n)] = pos;
      pos += tg_len[size_t(n)];
    }
    EMBER_CHECK(pos <= tg.numel(), "ctc_loss: targets has ", tg.numel(), " elements, but target_lengths sum to ", pos);
  }
  // blank-extended targets [N, S], S = 2 * max_len + 1 (padded with blanks), and where the
  // two-step transition s-2 -> s is allowed (l'_s not blank and l'_s != l'_{s-2})
  const int64_t S = 2 * max_len + 1;
  std::vector<int64_t> ext(size_t(N * S), blank), skip_ok(size_t(N * S), 0);
  for (int64_t n = 0; n < N; n++)
    for (int64_t k = 0; k < tg_len[size_t(n)]; k++) {
      int64_t v = tv[size_t(start[size_t(n)] + k)];
      EMBER_CHECK(v >= 0 && v < C, "ctc_loss: target value ", v, " is out of the label range [0, ", C, ")");
      ext[size_t(n * S + 2 * k + 1)] = v;
    }
  for (int64_t n = 0; n < N; n++)
    for (int64_t s = 2; s < S; s++) {
      int64_t l = ext[size_t(n * S + s)];
      skip_ok[size_t(n * S + s)] = l != blank && l != ext[size_t(n * S + s - 2)];
    }
  const Device dev = lp.device();
  Tensor ext_t = long_tensor(ext, {N, S}, dev);
  Tensor no_skip = ember::eq(long_tensor(skip_ok, {N, S}, dev), 0);
  const TensorOptions opts = TensorOptions(lp.dtype()).device(dev);
  Tensor nll;
  if (T > 0) {
    Tensor lpe = ember::gather(lp, 2, ext_t.unsqueeze(0).expand({T, N, S}).contiguous());  // [T, N, S]
    Tensor ninf1 = ember::full({N, 1}, -kInf, opts), ninf2 = ember::full({N, 2}, -kInf, opts);
    Tensor first = lpe.select(0, 0);
    Tensor alpha = S > 2 ? ember::cat({first.narrow(1, 0, 2), ember::full({N, S - 2}, -kInf, opts)}, 1) : first;
    std::vector<Tensor> alphas{alpha};
    for (int64_t t = 1; t < T; t++) {
      Tensor a1 = ember::cat({ninf1, alpha.narrow(1, 0, S - 1)}, 1);
      std::vector<Tensor> terms{alpha, a1};
      if (S > 2) terms.push_back(ember::cat({ninf2, alpha.narrow(1, 0, S - 2)}, 1).masked_fill(no_skip, -kInf));
      alpha = logsumexp_terms(terms) + lpe.select(0, t);
      alphas.push_back(alpha);
    }
    Tensor all = ember::stack(alphas, 0);  // [T, N, S]
    std::vector<int64_t> t_last(static_cast<size_t>(N)), s_last(t_last), s_prev(t_last), no_prev(t_last);
    for (int64_t n = 0; n < N; n++) {
      t_last[size_t(n)] = std::max<int64_t>(in_len[size_t(n)] - 1, 0);
      s_last[size_t(n)] = 2 * tg_len[size_t(n)];
      s_prev[size_t(n)] = std::max<int64_t>(2 * tg_len[size_t(n)] - 1, 0);
      no_prev[size_t(n)] = tg_len[size_t(n)] == 0;
    }
    Tensor tl = long_tensor(t_last, {N}, dev), nn = ember::arange(0, N, 1, TensorOptions(kLong).device(dev));
    Tensor last = ember::index(all, {tl, nn, long_tensor(s_last, {N}, dev)});
    Tensor prev = ember::index(all, {tl, nn, long_tensor(s_prev, {N}, dev)}).masked_fill(ember::ne(long_tensor(no_prev, {N}, dev), 0), -kInf);
    nll = -logsumexp_terms({last, prev});
  } else {
    nll = ember::zeros({N}, opts);
  }
  // no input frames: probability 1 for the empty target, 0 otherwise
  std::vector<int64_t> empty_in(static_cast<size_t>(N));
  bool any_empty = false;
  for (int64_t n = 0; n < N; n++) {
    empty_in[size_t(n)] = in_len[size_t(n)] == 0;
    any_empty |= in_len[size_t(n)] == 0;
  }
  if (any_empty) {
    Tensor e = ember::ne(long_tensor(empty_in, {N}, dev), 0);
    Tensor fixed = ember::where(ember::eq(long_tensor(tg_len, {N}, dev), 0), ember::zeros({N}, opts), ember::full({N}, kInf, opts));
    nll = ember::where(e, fixed, nll);
  }
  if (zero_infinity) nll = nll.masked_fill(ember::isinf(nll), 0);
  if (reduction == Reduction::Mean) {
    Tensor lens = ember::clamp_min(long_tensor(tg_len, {N}, dev), scalar_to_tensor(int64_t(1))).to(nll.dtype());
    return (nll / lens).mean();
  }
  if (reduction == Reduction::Sum) return nll.sum();
  return batched ? nll : nll.squeeze(IntArrayRef({0}));
}

Tensor ctc_loss(const Tensor& log_probs, const Tensor& targets, IntArrayRef input_lengths, IntArrayRef target_lengths,
                int64_t blank, int64_t reduction, bool zero_infinity) {
  return native::ctc_loss(log_probs, targets, long_tensor(input_lengths.vec(), {int64_t(input_lengths.size())}),
                          long_tensor(target_lengths.vec(), {int64_t(target_lengths.size())}), blank, reduction,
                          zero_infinity);
}

// rows [R, C], targets [R]: out[i] = -w[t_i] * x[i, t_i], 0 for ignored rows; one pass, no gather
// (kernels/nn_loss.h). The op checks shapes and devices and prepares targets and weights.
namespace {
void check_nll_rows(const Tensor& x, const Tensor& target, const Tensor& weight, const char* name) {
  EMBER_CHECK(x.dim() == 2 && target.dim() == 1 && target.size(0) == x.size(0), name, ": expected rows [R, C] and "
              "targets [R], got ", x.sizes(), " and ", target.sizes());
  EMBER_CHECK(target.dtype() == kLong, name, ": expected int64 targets, got ", target.dtype());
  EMBER_CHECK(!weight.defined() || (weight.dim() == 1 && weight.numel() == x.size(1)), name, ": expected a weight of ",
              x.size(1), " elements, got ", weight.sizes());
  check_same_device(name, x.device(), {&target, &weight});
}
Tensor double_weight(const Tensor& weight) { return weight.defined() ? weight.to(kDouble).contiguous() : Tensor(); }
}  // namespace

Tensor nll_pick(const Tensor& self, const Tensor& target, const Tensor& weight, int64_t ignore_index) {
  EMBER_CHECK_KIND(is_floating(self.dtype()), NotImplemented, "\"nll_loss\" not implemented for '", self.dtype(), "'");
  check_nll_rows(self, target, weight, "nll_loss");
  auto kernel = nll_pick_stub(self.device(), "nll_loss");
  Tensor out = ember::zeros({self.size(0)}, TensorOptions(self.dtype()).device(self.device()));
  kernel(out, self, target.contiguous(), double_weight(weight), ignore_index);
  return out;
}

Tensor nll_pick_backward(const Tensor& grad_output, const Tensor& self, const Tensor& target, const Tensor& weight,
                         int64_t ignore_index) {
  EMBER_CHECK_KIND(self.dtype() != kBool, NotImplemented, "\"nll_loss_backward\" not implemented for 'Bool'");
  check_nll_rows(self, target, weight, "nll_loss_backward");
  check_same_device("nll_loss_backward", self.device(), {&grad_output});
  auto kernel = nll_pick_backward_stub(self.device(), "nll_loss_backward");
  Tensor gi = ember::zeros(self.sizes(), TensorOptions(self.dtype()).device(self.device()));
  kernel(gi, grad_output.to(kDouble).contiguous(), target.contiguous(), double_weight(weight), ignore_index);
  return gi;
}

}  // namespace ember::native
