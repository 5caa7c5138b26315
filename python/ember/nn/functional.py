"""ember.nn.functional: PyTorch's torch.nn.functional, name for name.

The ops are declared in ops.yaml and implemented in C++ (csrc/ember/ops/nn_*.cpp); this module
adds PyTorch's Python signatures (defaults, `inplace=`, the legacy `size_average`/`reduce`
arguments, reduction strings) and the argument checks PyTorch makes in Python (ValueError,
AssertionError). Functions that PyTorch keeps in torch._C._nn live in ember._C._nn.
"""
import numbers
import warnings

from .. import _C
from .._C import _nn, _ops
from . import _functional_core
from ._functional_core import *  # noqa: F401,F403  softmax, norms, linear, conv, pooling, padding
from . import _functional_shape
from ._functional_shape import *  # noqa: F401,F403  interpolate, grid_sample, affine_grid
from . import _functional_attention
from ._functional_attention import *  # noqa: F401,F403  scaled_dot_product_attention, multi_head_attention_forward

# grid_sample's mode and padding_mode names and the codes its kernel takes (as torch.nn.functional lists them)
GRID_SAMPLE_INTERPOLATION_MODES = {"bilinear": 0, "nearest": 1, "bicubic": 2}
GRID_SAMPLE_PADDING_MODES = {"zeros": 0, "border": 1, "reflection": 2}
from . import _functional_extra
from ._functional_extra import *  # noqa: F401,F403  fractional/3-d pooling, gumbel_softmax, pdist, ...
from ._reduction import _get_enum, _legacy_get_string, _reduction_enum, _reduction_str  # noqa: F401
from . import grad  # noqa: F401  F.grad.conv2d_input(...), as torch.nn.functional exposes it

Tensor = _C.TensorBase


def _warn_size_mismatch(input, target):
    if target._checked_shape != input._checked_shape:
        warnings.warn(
            f"Using a target size ({target._checked_shape}) that is different to the input size ({input._checked_shape}). "
            "This will likely lead to incorrect results due to broadcasting. "
            "Please ensure they have the same size.", stacklevel=3)


def _check_p(p):
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


# ---------------------------------------------------------------- activations


def threshold(input, threshold, value, inplace=False):
    """Replace the values not above a threshold with a given value."""
    return _ops.threshold_(input, threshold, value) if inplace else _ops.threshold(input, threshold, value)


threshold_ = _ops.threshold_


def relu(input, inplace=False):
    """Rectified linear unit, max(x, 0)."""
    return input.relu_() if inplace else _ops.relu(input)


def relu_(input):
    """Rectified linear unit, in place."""
    return input.relu_()


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    """Clamp to [min_val, max_val] (a piecewise-linear tanh)."""
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    return _nn.hardtanh_(input, min_val, max_val) if inplace else _nn.hardtanh(input, min_val, max_val)


hardtanh_ = _nn.hardtanh_


def relu6(input, inplace=False):
    """ReLU capped at 6, min(max(x, 0), 6)."""
    return _nn.relu6_(input) if inplace else _nn.relu6(input)


def elu(input, alpha=1.0, inplace=False):
    """Exponential linear unit."""
    return _nn.elu_(input, alpha) if inplace else _nn.elu(input, alpha)


elu_ = _nn.elu_


def selu(input, inplace=False):
    """Scaled exponential linear unit (self-normalizing)."""
    return _ops.selu_(input) if inplace else _ops.selu(input)


selu_ = _ops.selu_


def celu(input, alpha=1.0, inplace=False):
    """Continuously differentiable exponential linear unit."""
    return _ops.celu_(input, alpha) if inplace else _ops.celu(input, alpha)


celu_ = _ops.celu_


def leaky_relu(input, negative_slope=0.01, inplace=False):
    """ReLU with a small slope for negative inputs."""
    return _nn.leaky_relu_(input, negative_slope) if inplace else _nn.leaky_relu(input, negative_slope)


leaky_relu_ = _nn.leaky_relu_
prelu = _ops.prelu


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False):
    """Leaky ReLU with a random slope in training, the mean slope in evaluation."""
    return _ops.rrelu_(input, lower, upper, training) if inplace else _ops.rrelu(input, lower, upper, training)


rrelu_ = _ops.rrelu_


def glu(input, dim=-1):
    """Gated linear unit: half of a dimension gated by the sigmoid of the other half."""
    if input.dim() == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    return _nn.glu(input, dim)


gelu = _nn.gelu
logsigmoid = _nn.log_sigmoid
hardshrink = _ops.hardshrink
softplus = _nn.softplus
softshrink = _nn.softshrink


def tanhshrink(input):
    """x - tanh(x)."""
    return _nn.tanhshrink(input)


def softsign(input):
    """x / (1 + |x|)."""
    return _nn.softsign(input)


def tanh(input):
    """Elementwise hyperbolic tangent."""
    warnings.warn("nn.functional.tanh is deprecated. Use torch.tanh instead.", stacklevel=2)
    return _ops.tanh(input)


def sigmoid(input):
    """Elementwise logistic function 1 / (1 + exp(-x))."""
    warnings.warn("nn.functional.sigmoid is deprecated. Use torch.sigmoid instead.", stacklevel=2)
    return _ops.sigmoid(input)


def hardsigmoid(input, inplace=False):
    """Piecewise-linear approximation of the sigmoid."""
    return _nn.hardsigmoid_(input) if inplace else _nn.hardsigmoid(input)


def silu(input, inplace=False):
    """Sigmoid-weighted linear unit, x * sigmoid(x)."""
    return _nn.silu_(input) if inplace else _nn.silu(input)


def mish(input, inplace=False):
    """x * tanh(softplus(x))."""
    return _nn.mish_(input) if inplace else _nn.mish(input)


def hardswish(input, inplace=False):
    """x * hardsigmoid(x), a cheap swish."""
    return _nn.hardswish_(input) if inplace else _nn.hardswish(input)


# ---------------------------------------------------------------- normalization


def _verify_batch_size(size):
    n = size[0]
    for s in size[2:]:
        n *= s
    if n == 1:
        raise ValueError(f"Expected more than 1 value per channel when training, got input size {size}")


def _verify_spatial_size(size):
    n = 1
    for s in size[2:]:
        n *= s
    if n == 1:
        raise ValueError(f"Expected more than 1 spatial element when training, got input size {size}")


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    """Normalize over groups of channels, then scale and shift per channel."""
    if input.dim() < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received {input.dim()}")
    size = input._checked_shape
    _verify_batch_size([size[0] * size[1] // num_groups, num_groups] + list(size[2:]))
    return _ops.group_norm(input, num_groups, weight, bias, eps)


def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None, use_input_stats=True,
                  momentum=0.1, eps=1e-5):
    """Normalize each channel of each sample over its spatial dimensions."""
    if use_input_stats:
        _verify_spatial_size(input._checked_shape)
    return _ops.instance_norm(input, weight, bias, running_mean, running_var, use_input_stats, momentum, eps, False)


def rms_norm(input, normalized_shape, weight=None, eps=None):
    """Root-mean-square normalization over the trailing dimensions."""
    if isinstance(normalized_shape, numbers.Integral):
        normalized_shape = (normalized_shape,)
    return _ops.rms_norm(input, list(normalized_shape), weight, eps)


def local_response_norm(input, size, alpha=1e-4, beta=0.75, k=1.0):
    """Normalize by the activity of neighbouring channels."""
    return _nn.local_response_norm(input, size, alpha, beta, k)


def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    """Divide by the p-norm along a dimension (unit vectors)."""
    if out is None:
        return _nn.normalize(input, p, dim, eps)
    denom = input.norm(p, dim, keepdim=True).clamp_min_(eps).expand_as(input)
    return _ops.div(input, denom, out=out)


# ---------------------------------------------------------------- dropout


def dropout(input, p=0.5, training=True, inplace=False):
    """Zero elements at random with probability p and rescale the rest (in training)."""
    _check_p(p)
    if not training or p == 0.0:  # the input itself, as torch (the C++ op returns it too)
        return input
    return _ops.dropout_(input, p, training) if inplace else _ops.dropout(input, p, training)


def alpha_dropout(input, p=0.5, training=False, inplace=False):
    """Dropout that keeps SELU's mean and variance (in training)."""
    _check_p(p)
    if not training or p == 0.0:
        return input
    return _ops.alpha_dropout_(input, p, training) if inplace else _ops.alpha_dropout(input, p, training)


def feature_alpha_dropout(input, p=0.5, training=False, inplace=False):
    """Alpha dropout of whole channels (in training)."""
    _check_p(p)
    if not training or p == 0.0:
        return input
    return (_ops.feature_alpha_dropout_(input, p, training) if inplace
            else _ops.feature_alpha_dropout(input, p, training))


def _feature_dropout(input, p, training, inplace):
    return _ops.feature_dropout_(input, p, training) if inplace else _ops.feature_dropout(input, p, training)


def dropout1d(input, p=0.5, training=True, inplace=False):
    """Zero whole channels of a 1-D signal at random (in training)."""
    _check_p(p)
    inp_dim = input.dim()
    if inp_dim not in (2, 3):
        raise RuntimeError(
            f"dropout1d: Expected 2D or 3D input, but received a {inp_dim}D input. Note that dropout1d exists to "
            "provide channel-wise dropout on inputs with 1 spatial dimension, a channel dimension, and an optional "
            "batch dimension (i.e. 2D or 3D inputs).")
    if inp_dim == 3:
        return _feature_dropout(input, p, training, inplace)
    result = _feature_dropout(input.unsqueeze(0), p, training, False).squeeze(0)
    return input.copy_(result) if inplace else result


def dropout2d(input, p=0.5, training=True, inplace=False):
    """Zero whole 2-D feature maps at random (in training)."""
    _check_p(p)
    inp_dim = input.dim()
    if inp_dim not in (3, 4):
        warnings.warn(
            f"dropout2d: Received a {inp_dim}-D input to dropout2d, which is deprecated and will result in an error "
            "in a future release. To retain the behavior and silence this warning, please use dropout instead. Note "
            "that dropout2d exists to provide channel-wise dropout on inputs with 2 spatial dimensions, a channel "
            "dimension, and an optional batch dimension (i.e. 3D or 4D inputs).", stacklevel=2)
    if inp_dim == 3:
        warnings.warn(
            "dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D dropout behavior is "
            "desired - input is interpreted as shape (N, C, L), where C is the channel dim. This behavior will "
            "change in a future release to interpret the input as one without a batch dimension, i.e. shape "
            "(C, H, W). To maintain the 1D channel-wise dropout behavior, please switch to using dropout1d "
            "instead.", stacklevel=2)
    return _feature_dropout(input, p, training, inplace)


def dropout3d(input, p=0.5, training=True, inplace=False):
    """Zero whole 3-D feature maps at random (in training)."""
    _check_p(p)
    inp_dim = input.dim()
    if inp_dim not in (4, 5):
        warnings.warn(
            f"dropout3d: Received a {inp_dim}-D input to dropout3d, which is deprecated and will result in an error "
            "in a future release. To retain the behavior and silence this warning, please use dropout instead. Note "
            "that dropout3d exists to provide channel-wise dropout on inputs with 3 spatial dimensions, a channel "
            "dimension, and an optional batch dimension (i.e. 4D or 5D inputs).", stacklevel=2)
    if inp_dim == 5:
        return _feature_dropout(input, p, training, inplace)
    result = _feature_dropout(input.unsqueeze(0), p, training, False).squeeze(0)
    return input.copy_(result) if inplace else result


# ---------------------------------------------------------------- embeddings


def _no_grad_embedding_renorm_(weight, input, max_norm, norm_type):
    from ..autograd.grad_mode import no_grad
    with no_grad():
        _ops.embedding_renorm_(weight, input, max_norm, norm_type)


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0, scale_grad_by_freq=False,
              sparse=False):
    """Look up rows of an embedding matrix by index."""
    if padding_idx is not None:
        if padding_idx > 0:
            if padding_idx >= weight.size(0):
                raise AssertionError("Padding_idx must be within num_embeddings")
        elif padding_idx < 0:
            if padding_idx < -weight.size(0):
                raise AssertionError("Padding_idx must be within num_embeddings")
            padding_idx = weight.size(0) + padding_idx
    else:
        padding_idx = -1
    if max_norm is not None:
        input = input.contiguous()
        _no_grad_embedding_renorm_(weight, input, max_norm, norm_type)
    return _ops.embedding(weight, input, padding_idx, scale_grad_by_freq, sparse)


def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2, scale_grad_by_freq=False, mode="mean",
                  sparse=False, per_sample_weights=None, include_last_offset=False, padding_idx=None):
    """Sums, means or maxima of bags of embedding rows."""
    if weight.dtype == _C.int64 and input.is_floating_point():
        warnings.warn("Argument order of nn.functional.embedding_bag was changed. Usage `embedding_bag(weight, "
                      "input, ...)` is deprecated, and should now be `embedding_bag(input, weight, ...)`.",
                      stacklevel=2)
        weight, input = input, weight
    if per_sample_weights is not None and input.size() != per_sample_weights.size():
        raise ValueError(f"embedding_bag: If per_sample_weights ({per_sample_weights.shape}) is not None, then it "
                         f"must have the same shape as the input ({input.shape})")
    if not weight.dim() == 2:
        raise ValueError(f"weight has to be a 2D Tensor, but got Tensor of dimension {weight.dim()}")
    if input.dim() == 2:
        if offsets is not None:
            raise ValueError("if input is 2D, then offsets has to be None, as input is treated is a mini-batch of "
                             f"fixed length sequences. However, found offsets of type {type(offsets)}")
        offsets = _ops.arange(0, input.numel(), input.size(1), dtype=input.dtype, device=input.device)
        include_last_offset = False
        input = input.reshape(-1)
        if per_sample_weights is not None:
            per_sample_weights = per_sample_weights.reshape(-1)
    elif input.dim() == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        if offsets.dim() != 1:
            raise ValueError("offsets has to be a 1D Tensor")
    else:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension {input.dim()}")
    if mode == "sum":
        mode_enum = 0
    elif mode == "mean":
        mode_enum = 1
    elif mode == "max":
        mode_enum = 2
        if scale_grad_by_freq:
            raise ValueError("max mode does not support scaling the gradient by the frequency")
        if sparse:
            raise ValueError("max mode does not support sparse weights")
    else:
        raise ValueError("mode has to be one of sum, mean or max")
    if max_norm is not None:
        _no_grad_embedding_renorm_(weight, input, max_norm, norm_type)
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError(
            "embedding_bag: per_sample_weights was not None. per_sample_weights is only supported for mode='sum' "
            f"(got mode='{mode}'). Please open a feature request on GitHub.")
    ret, _, _, _ = _ops.embedding_bag(weight, input, offsets, scale_grad_by_freq, mode_enum, sparse,
                                      per_sample_weights, include_last_offset, padding_idx)
    return ret


one_hot = _nn.one_hot

# ---------------------------------------------------------------- losses


def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean"):
    """Negative log likelihood loss on log-probabilities."""
    reduction = _reduction_str(size_average, reduce, reduction)
    return _nn.nll_loss_nd(input, target, weight, _get_enum(reduction), ignore_index)


def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean",
                  label_smoothing=0.0):
    """Cross entropy between logits and class indices or class probabilities."""
    reduction = _reduction_str(size_average, reduce, reduction)
    return _nn.cross_entropy_loss(input, target, weight, _get_enum(reduction), ignore_index, label_smoothing)


def poisson_nll_loss(input, target, log_input=True, full=False, size_average=None, eps=1e-8, reduce=None,
                     reduction="mean"):
    """Negative log likelihood of a Poisson-distributed target."""
    reduction = _reduction_str(size_average, reduce, reduction)
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not a valid value for reduction")
    return _ops.poisson_nll_loss(input, target, log_input, full, eps, _get_enum(reduction))


def gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction="mean"):
    """Negative log likelihood of a Gaussian target with predicted variance."""
    if isinstance(var, float):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        var = var * _ops.ones_like(input)
    elif not isinstance(var, Tensor):
        raise TypeError(f"gaussian_nll_loss(): var must be a Tensor or a float, got {type(var).__name__}")
    elif bool((var < 0).any()):
        raise ValueError("var has negative entry/entries")
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    return _nn.gaussian_nll_loss(input, target, var, full, eps, _get_enum(reduction))


def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    """Kullback-Leibler divergence loss from log-probabilities."""
    if size_average is not None or reduce is not None:
        reduction_enum = _get_enum(_legacy_get_string(size_average, reduce))
    else:
        if reduction == "mean":
            warnings.warn(
                "reduction: 'mean' divides the total loss by both the batch size and the support size."
                "'batchmean' divides only by the batch size, and aligns with the KL div math definition."
                "'mean' will be changed to behave the same as 'batchmean' in the next major release.", stacklevel=2)
        reduction_enum = _get_enum("sum") if reduction == "batchmean" else _get_enum(reduction)
    reduced = _ops.kl_div(input, target, reduction_enum, log_target=log_target)
    if reduction == "batchmean" and input.dim() != 0:
        reduced = reduced / input.size()[0]
    return reduced


def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    """Binary cross entropy between probabilities and targets."""
    reduction_enum = _reduction_enum(size_average, reduce, reduction)
    if target.size() != input.size():
        raise ValueError(f"Using a target size ({target.size()}) that is different to the input size "
                         f"({input.size()}) is deprecated. Please ensure they have the same size.")
    if weight is not None:
        weight = weight.expand(_broadcast_shape(target.size(), weight.size()))
    return _nn.binary_cross_entropy(input, target, weight, reduction_enum)


def _broadcast_shape(a, b):
    """The broadcast of two shapes, raising PyTorch's error when they do not broadcast."""
    n = max(len(a), len(b))
    out = []
    for i in range(-1, -n - 1, -1):
        x = a[i] if -i <= len(a) else 1
        y = b[i] if -i <= len(b) else 1
        if x != y and x != 1 and y != 1:
            raise RuntimeError(f"The size of tensor a ({x}) must match the size of tensor b ({y}) at non-singleton "
                               f"dimension {n + i}")
        out.append(y if x == 1 else x)
    return out[::-1]


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None, reduction="mean",
                                     pos_weight=None):
    """Binary cross entropy on logits, computed stably."""
    reduction_enum = _reduction_enum(size_average, reduce, reduction)
    if not (target._checked_shape == input._checked_shape):
        raise ValueError(f"Target size ({target._checked_shape}) must be the same as input size ({input._checked_shape})")
    return _ops.binary_cross_entropy_with_logits(input, target, weight, pos_weight, reduction_enum)


def _weighted_reduce(loss, weight, reduction):
    if reduction == "none":
        return loss
    if reduction == "sum":
        return _ops.sum(loss)
    if reduction == "mean":
        return _ops.sum(loss) / _ops.sum(weight)
    raise ValueError(f"Invalid reduction mode: {reduction}. Expected one of 'none', 'mean', 'sum'.")


def _broadcast_pair(input, target):
    if input._checked_shape == target._checked_shape:
        return input, target  # nothing to expand: no shape flows into an op
    shape = _broadcast_shape(input.size(), target.size())
    return input.expand(shape), target.expand(shape)


def mse_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    """Mean squared error loss."""
    _warn_size_mismatch(input, target)
    reduction = _reduction_str(size_average, reduce, reduction)
    expanded_input, expanded_target = _broadcast_pair(input, target)
    if weight is not None:
        if weight.size() != input.size():
            raise ValueError("Weights and input must have the same size.")
        loss = _ops.pow(expanded_input - expanded_target, 2) * weight
        return _weighted_reduce(loss, weight, reduction)
    return _nn.mse_loss(expanded_input, expanded_target, _get_enum(reduction))


def l1_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    """Mean absolute error loss."""
    _warn_size_mismatch(input, target)
    reduction = _reduction_str(size_average, reduce, reduction)
    expanded_input, expanded_target = _broadcast_pair(input, target)
    if weight is not None:
        if weight.size() != input.size():
            raise ValueError("Weights and input must have the same size.")
        loss = _ops.abs(expanded_input - expanded_target) * weight
        return _weighted_reduce(loss, weight, reduction)
    return _nn.l1_loss(expanded_input, expanded_target, _get_enum(reduction))


def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    """L1 loss that is quadratic below beta."""
    _warn_size_mismatch(input, target)
    reduction = _reduction_str(size_average, reduce, reduction)
    expanded_input, expanded_target = _broadcast_pair(input, target)
    if beta == 0.0:
        return _nn.l1_loss(expanded_input, expanded_target, _get_enum(reduction))
    return _nn.smooth_l1_loss(expanded_input, expanded_target, _get_enum(reduction), beta)


def huber_loss(input, target, reduction="mean", delta=1.0, weight=None):
    """Huber loss: quadratic below delta, linear above."""
    _warn_size_mismatch(input, target)
    expanded_input, expanded_target = _broadcast_pair(input, target)
    if weight is None:
        return _nn.huber_loss(expanded_input, expanded_target, _get_enum(reduction), delta)
    if weight.size() != input.size():
        raise ValueError("Weights and input must have the same size.")
    loss = _nn.huber_loss(expanded_input, expanded_target, 0, delta) * weight
    if reduction == "none":
        return loss
    if reduction == "sum":
        return _ops.sum(loss)
    if reduction == "mean":
        return loss.mean()
    raise ValueError(f"Invalid reduction mode: {reduction}. Expected one of 'none', 'mean', 'sum'.")


def margin_ranking_loss(input1, input2, target, margin=0, size_average=None, reduce=None, reduction="mean"):
    """Hinge loss on the ordering of two inputs."""
    reduction_enum = _reduction_enum(size_average, reduce, reduction)
    if input1.dim() != input2.dim() or input1.dim() != target.dim():
        raise RuntimeError(
            f"margin_ranking_loss : All input tensors should have same dimension but got sizes: "
            f"input1: {input1.size()}, input2: {input2.size()}, target: {target.size()} ")
    return _ops.margin_ranking_loss(input1, input2, target, margin, reduction_enum)


def hinge_embedding_loss(input, target, margin=1.0, size_average=None, reduce=None, reduction="mean"):
    """Hinge loss for similarity labels of 1 or -1."""
    return _ops.hinge_embedding_loss(input, target, margin, _reduction_enum(size_average, reduce, reduction))


def soft_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """Logistic loss for two-class labels of 1 or -1."""
    return _nn.soft_margin_loss(input, target, _reduction_enum(size_average, reduce, reduction))


def multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    """One-versus-all logistic loss for multi-label targets."""
    reduction = _reduction_str(size_average, reduce, reduction)
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    return _nn.multilabel_soft_margin_loss(input, target, weight, _get_enum(reduction))


def cosine_embedding_loss(input1, input2, target, margin=0, size_average=None, reduce=None, reduction="mean"):
    """Loss on the cosine similarity of pairs labelled similar or dissimilar."""
    return _ops.cosine_embedding_loss(input1, input2, target, margin,
                                      _reduction_enum(size_average, reduce, reduction))


def multi_margin_loss(input, target, p=1, margin=1.0, weight=None, size_average=None, reduce=None,
                      reduction="mean"):
    """Multi-class hinge loss."""
    reduction_enum = _reduction_enum(size_average, reduce, reduction)
    if p != 1 and p != 2:
        raise ValueError("only p == 1 and p == 2 supported")
    if weight is not None and weight.dim() != 1:
        raise ValueError("weight must be one-dimensional")
    return _nn.multi_margin_loss(input, target, p, margin, weight, reduction_enum)


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False, size_average=None,
                        reduce=None, reduction="mean"):
    """Triplet loss on anchor, positive and negative p-norm distances."""
    reduction_enum = _reduction_enum(size_average, reduce, reduction)
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    return _ops.triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap, reduction_enum)


def triplet_margin_with_distance_loss(anchor, positive, negative, *, distance_function=None, margin=1.0,
                                      swap=False, reduction="mean"):
    """Triplet loss with a distance function of your choice."""
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    a_dim, p_dim, n_dim = anchor.ndim, positive.ndim, negative.ndim
    if not (a_dim == p_dim and p_dim == n_dim):
        raise RuntimeError(
            f"The anchor, positive, and negative tensors are expected to have the same number of dimensions, but "
            f"got: anchor {a_dim}D, positive {p_dim}D, and negative {n_dim}D inputs")
    distance_function = distance_function if distance_function is not None else pairwise_distance
    dist_pos = distance_function(anchor, positive)
    dist_neg = distance_function(anchor, negative)
    if swap:
        dist_neg = _ops.minimum(dist_neg, distance_function(positive, negative))
    loss = _ops.clamp_min(margin + dist_pos - dist_neg, 0)
    if reduction == "sum":
        return _ops.sum(loss)
    if reduction == "mean":
        return _ops.mean(loss)
    if reduction == "none":
        return loss
    raise ValueError(f"{reduction} is not a valid value for reduction")


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction="mean", zero_infinity=False):
    """The Connectionist Temporal Classification loss (torch.nn.functional.ctc_loss).

    Ember's gradient is the exact derivative of the loss with respect to `log_probs` (and can be
    differentiated again). PyTorch's kernel returns exp(log_probs) - posterior instead, which is
    the gradient with respect to the logits *when log_probs = log_softmax(logits)*: through a
    log_softmax (the documented use) both give the same gradient to the logits; on a raw
    log_probs leaf they differ by exp(log_probs) * sum of the upstream gradient.
    Target values outside [0, C) raise (PyTorch reads out of bounds).
    """
    if not isinstance(input_lengths, Tensor):
        input_lengths = _ops.tensor(list(input_lengths) if not isinstance(input_lengths, int) else [input_lengths],
                                    dtype=_C.int64)
    if not isinstance(target_lengths, Tensor):
        target_lengths = _ops.tensor(list(target_lengths) if not isinstance(target_lengths, int) else [target_lengths],
                                     dtype=_C.int64)
    return _ops.ctc_loss(log_probs, targets, input_lengths, target_lengths, blank, _get_enum(reduction),
                         zero_infinity)


cosine_similarity = _ops.cosine_similarity
pairwise_distance = _ops.pairwise_distance

__all__ = list(_functional_core.__all__) + list(_functional_shape.__all__) + list(_functional_attention.__all__) + list(_functional_extra.__all__) + [
    "threshold", "threshold_", "relu", "relu_", "hardtanh", "hardtanh_", "relu6", "elu", "elu_", "selu", "selu_",
    "celu", "celu_", "leaky_relu", "leaky_relu_", "prelu", "rrelu", "rrelu_", "glu", "gelu", "logsigmoid",
    "hardshrink", "tanhshrink", "softsign", "softplus", "softshrink", "tanh", "sigmoid", "hardsigmoid", "silu",
    "mish", "hardswish", "group_norm", "instance_norm", "rms_norm", "local_response_norm", "normalize", "dropout",
    "alpha_dropout", "feature_alpha_dropout", "dropout1d", "dropout2d", "dropout3d", "embedding", "embedding_bag",
    "one_hot", "nll_loss", "cross_entropy", "poisson_nll_loss", "gaussian_nll_loss", "kl_div",
    "binary_cross_entropy", "binary_cross_entropy_with_logits", "mse_loss", "l1_loss", "smooth_l1_loss",
    "huber_loss", "margin_ranking_loss", "hinge_embedding_loss", "soft_margin_loss", "multilabel_soft_margin_loss",
    "cosine_embedding_loss", "multi_margin_loss", "triplet_margin_loss", "triplet_margin_with_distance_loss",
    "ctc_loss", "cosine_similarity", "pairwise_distance",
]
