"""ember.nn.functional composites: 3-d adaptive max / Lp / unpooling, fractional max pooling,
gumbel_softmax, pdist, multilabel_margin_loss, conv_tbc, native_channel_shuffle, linear_cross_entropy. Re-exported by
ember.nn.functional."""
import warnings

from .. import _C
from .._C import _ops
from ..amp._ops import autocast_op
from ._linear_cross_entropy_chunked import chunked_linear_cross_entropy
from ._reduction import _get_enum, _reduction_str
from ._functional_core import _adaptive_max, _max_unpool, _tuple, avg_pool3d, channel_shuffle, conv1d

__all__ = [
    "adaptive_max_pool3d", "adaptive_max_pool3d_with_indices", "lp_pool3d", "max_unpool3d",
    "fractional_max_pool2d", "fractional_max_pool2d_with_indices", "fractional_max_pool3d",
    "fractional_max_pool3d_with_indices", "gumbel_softmax", "pdist", "multilabel_margin_loss", "conv_tbc",
    "native_channel_shuffle", "linear_cross_entropy",
]


@autocast_op("fp32")  # PyTorch's autocast lists of the CPU: these run in float32
def adaptive_max_pool3d(input, output_size, return_indices=False):
    """3-D max pooling to a fixed output size."""
    return _adaptive_max(3, input, output_size, return_indices)


@autocast_op("fp32")
def adaptive_max_pool3d_with_indices(input, output_size, return_indices=False):
    """3-D adaptive max pooling returning values and argmax indices."""
    return _adaptive_max(3, input, output_size, True)


def lp_pool3d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """(sum over each window of x^p)^(1/p), as avg_pool3d of x^p times the window size."""
    kd, kw, kh = _tuple(kernel_size, 3, "kernel_size")
    out = avg_pool3d(input.pow(norm_type), (kd, kw, kh), stride, 0, ceil_mode)
    return (_ops.sign(out) * out.abs().relu()).mul(kd * kw * kh).pow(1.0 / norm_type)


@autocast_op("fp32")
def max_unpool3d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """Partial inverse of max_pool3d: values put back at their indices, zeros elsewhere."""
    return _max_unpool(3, input, indices, kernel_size, stride, padding, output_size)


# ---------------------------------------------------------------- fractional max pooling

def _fractional_starts(sample, in_size, out_size, pool):
    """Window starts (..., out_size) from the samples u in [0, 1): floor((i + u) a) - floor(u a) with
    a = (in - pool) / (out - 1), the last window flush with the end (Graham's pseudo-random pooling)."""
    idx = _ops.arange(out_size, dtype=sample.dtype, device=sample.device)
    if out_size > 1:
        alpha = (in_size - pool) / (out_size - 1)
        s = sample.unsqueeze(-1)
        starts = ((idx + s) * alpha).trunc() - (s * alpha).trunc()
        starts = starts.to(_C.int64)
    else:
        starts = _ops.zeros(tuple(sample.shape) + (out_size,), dtype=_C.int64, device=sample.device)
    last = _ops.full(tuple(sample.shape) + (1,), in_size - pool, dtype=_C.int64, device=sample.device)
    return _ops.cat([starts[..., :-1], last], -1) if out_size > 0 else starts


def _fractional_max_pool(n, input, kernel_size, output_size, output_ratio, return_indices, _random_samples):
    name = f"fractional_max_pool{n}d"
    if input.dim() not in (n + 1, n + 2):
        raise RuntimeError(f"{name}(): Expected {n + 1}D or {n + 2}D tensor, but got: {input.dim()}D")
    if output_size is None and output_ratio is None:
        raise ValueError(f"{name} requires specifying either an output_size or an output_ratio")
    if output_size is None:
        if n == 2 and isinstance(output_ratio, (list, tuple)) and len(output_ratio) > 2:
            raise ValueError("fractional_max_pool2d requires output_ratio to either be a single Int or tuple of Ints.")
        ratio = tuple(output_ratio) * (n if len(tuple(output_ratio)) == 1 else 1) \
            if isinstance(output_ratio, (list, tuple)) else (output_ratio,) * n
        output_size = [int(input.shape[input.dim() - n + i] * ratio[i]) for i in range(n)]
    out = list(_tuple(output_size, n, "output_size"))
    k = list(_tuple(kernel_size, n, "kernel_size"))
    unbatched = input.dim() == n + 1
    x = input.unsqueeze(0) if unbatched else input
    N, C = x.shape[0], x.shape[1]
    spatial = list(x.shape[2:])
    dims = ("height", "width") if n == 2 else ("time", "height", "width")
    for i in range(n):
        # torch's bound: windows must fit (3-d also needs one spare position)
        if out[i] + k[i] - 1 > spatial[i] - (n == 3):
            raise RuntimeError(f"{name}(): pool {dims[i]} {k[i]} too large relative to input {dims[i]} "
                               f"{spatial[i]}")
    if _random_samples is None:
        _random_samples = _ops.rand((N, C, n), dtype=input.dtype, device=input.device)
    if tuple(_random_samples.shape) != (N, C, n):
        raise RuntimeError(f"{name}(): Expected _random_samples of shape ({N}, {C}, {n}), but got "
                           f"{tuple(_random_samples.shape)}")
    samples = _random_samples.to(input.dtype)
    # torch's sample order: (w, h) in 2-d, (t, h, w) in 3-d
    order = [1, 0] if n == 2 else [0, 1, 2]
    # flat input index of every (output position, window offset), built one spatial dim at a time
    flat = None
    for d in range(n):
        starts = _fractional_starts(samples[:, :, order[d]], spatial[d], out[d], k[d])  # (N, C, out_d)
        pos = starts.unsqueeze(-1) + _ops.arange(k[d], dtype=_C.int64, device=starts.device)  # (N, C, out_d, k_d)
        # place this dim's (out_d, k_d) axes so the final layout is (N, C, out_0.., out_{n-1}, k_0.., k_{n-1})
        shape = [N, C] + [1] * (2 * n)
        shape[2 + d] = out[d]
        shape[2 + n + d] = k[d]
        pos = pos.reshape(shape)
        stride = 1
        for s in spatial[d + 1:]:
            stride *= s
        term = pos * stride
        flat = term if flat is None else flat + term
    full = [N, C] + out + k
    flat = flat.expand(full).reshape(N, C, -1)
    gathered = x.reshape(N, C, -1).gather(2, flat).reshape([N, C] + out + [-1])
    values, arg = gathered.max(-1)
    indices = flat.reshape([N, C] + out + [-1]).gather(-1, arg.unsqueeze(-1)).squeeze(-1)
    if unbatched:
        values, indices = values.squeeze(0), indices.squeeze(0)
    return values, indices


@autocast_op("fp32")
def fractional_max_pool2d_with_indices(input, kernel_size, output_size=None, output_ratio=None,
                                       return_indices=False, _random_samples=None):
    """Fractional max pooling over (N, C, H, W): windows at pseudo-random fractional strides set by
    _random_samples (N, C, 2) in [0, 1) (drawn uniformly when not given). Returns (values, indices)."""
    return _fractional_max_pool(2, input, kernel_size, output_size, output_ratio, return_indices, _random_samples)


def fractional_max_pool2d(input, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                          _random_samples=None):
    """2-D max pooling over pseudo-randomly sized windows."""
    out = fractional_max_pool2d_with_indices(input, kernel_size, output_size, output_ratio, return_indices,
                                             _random_samples)
    return out if return_indices else out[0]


@autocast_op("fp32")
def fractional_max_pool3d_with_indices(input, kernel_size, output_size=None, output_ratio=None,
                                       return_indices=False, _random_samples=None):
    """Fractional max pooling over (N, C, T, H, W); _random_samples is (N, C, 3). Returns (values, indices)."""
    return _fractional_max_pool(3, input, kernel_size, output_size, output_ratio, return_indices, _random_samples)


def fractional_max_pool3d(input, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                          _random_samples=None):
    """3-D max pooling over pseudo-randomly sized windows."""
    out = fractional_max_pool3d_with_indices(input, kernel_size, output_size, output_ratio, return_indices,
                                             _random_samples)
    return out if return_indices else out[0]


# ---------------------------------------------------------------- misc

def gumbel_softmax(logits, tau=1, hard=False, eps=1e-10, dim=-1):
    """softmax((logits + g) / tau) with g ~ Gumbel(0, 1). hard=True returns the one-hot of the argmax
    in the forward pass with the soft sample's gradient (straight-through)."""
    if eps != 1e-10:
        warnings.warn("`eps` parameter is deprecated and has no effect.", stacklevel=2)
    gumbels = -_ops.empty_like(logits).exponential_().log()
    y_soft = ((logits + gumbels) / tau).softmax(dim)
    if not hard:
        return y_soft
    index = y_soft.max(dim, keepdim=True)[1]
    y_hard = _ops.zeros_like(logits).scatter_(dim, index, 1.0)
    return y_hard - y_soft.detach() + y_soft


def pdist(input, p=2):
    """The p-norm distance between every pair of rows i < j of an (N, M) input, as an N(N-1)/2 vector
    (row-major upper triangle)."""
    if input.dim() != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.dim()}D")
    if p < 0:
        raise RuntimeError("pdist only supports non-negative p values")
    if not input.is_floating_point():
        raise RuntimeError(f"pdist only supports floating-point dtypes, {input.dtype} given")
    n = input.shape[0]
    if n < 2:
        return _ops.empty((0,), dtype=input.dtype, device=input.device)
    ij = _ops.triu_indices(n, n, 1)
    # only the i < j differences: the diagonal's zero distances would make the norm's gradient NaN
    return (input.index_select(0, ij[0]) - input.index_select(0, ij[1])).norm(p, 1)


@autocast_op("fp32")
def multilabel_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """sum over target classes j and non-target classes i of max(0, 1 - (x[y_j] - x[i])) / C, where
    each row of ``target`` lists class indices, ended by the first -1."""
    if size_average is not None or reduce is not None:
        reduction = _reduction_str(size_average, reduce, reduction)
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if (input.dim() <= 1 and input.numel() == 0) or (input.dim() == 2 and input.shape[1] == 0) or input.dim() > 2:
        raise RuntimeError("Expected non-empty vector or matrix with optional 0-dim batch size, but got: "
                           f"{list(input.shape)}")
    if tuple(target.shape) != tuple(input.shape):
        raise RuntimeError(f"inconsistent target size: {tuple(target.shape)} for input of size: "
                           f"{tuple(input.shape)}")
    x = input.reshape(1, -1) if input.dim() <= 1 else input
    y = target.reshape(1, -1) if input.dim() <= 1 else target
    n, c = x.shape
    if c and y.numel() and (int(y.max()) >= c or int(y.min()) < -1):
        raise RuntimeError(f"multilabel_margin_loss: target values must be in [-1, {c - 1}]")
    # a class index counts while no -1 came before it in its row
    valid = (y >= 0).to(_C.int64).cumprod(1).to(_C.bool)
    yc = y.clamp(min=0)
    is_target = ((y.unsqueeze(2) == _ops.arange(c, dtype=y.dtype, device=y.device)) & valid.unsqueeze(2)).any(1)
    x_y = x.gather(1, yc)  # (n, c): the score of each listed target
    margins = (1 - x_y.unsqueeze(2) + x.unsqueeze(1)).relu()  # [row, j, i]
    mask = valid.unsqueeze(2) & is_target.logical_not().unsqueeze(1)
    loss = (margins * mask.to(x.dtype)).sum((1, 2)) / c if c else x.sum(1)
    if input.dim() <= 1:
        loss = loss.reshape(())
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    return loss


@autocast_op("lower_precision_fp")
def conv_tbc(input, weight, bias, pad=0):
    """1-d convolution in time-batch-channel layout: input (T, B, C_in), weight (K, C_in, C_out),
    bias (C_out,) -> (T + 2 pad - K + 1, B, C_out)."""
    if input.dim() != 3:
        raise RuntimeError("Input must have 3 dims: time, batch, in_channel")
    if weight.dim() != 3:
        raise RuntimeError("Weight tensor must have 3 dims: kernel_width, in_channels, out_channels.")
    if bias.dim() != 1:
        raise RuntimeError("Bias must be 1-D")
    if input.shape[2] != weight.shape[1]:
        raise RuntimeError("Input dim 2 (input channels) is not == dim 1 in the weight tensor")
    if weight.shape[2] != bias.shape[0]:
        raise RuntimeError("Bias size must equal dim 2 in the weight tensor (output channels).")
    y = conv1d(input.permute(1, 2, 0), weight.permute(2, 1, 0), bias, padding=pad)
    return y.permute(2, 0, 1)


def native_channel_shuffle(input, groups):
    """Interleave the channels of groups (ShuffleNet's shuffle)."""
    return channel_shuffle(input, groups)


def linear_cross_entropy(input, linear_weight, target, *, linear_bias=None, weight=None, reduction="mean",
                         ignore_index=None, label_smoothing=0.0, options=None):
    """cross_entropy(linear(input, linear_weight, linear_bias), target): input (N, in) or (in,),
    linear_weight (C, *out_features, in) (out_features: the K dims of a K-dimensional loss).
    With options (a LinearCrossEntropyOptions) the batch is processed in chunks, never holding all logits."""
    if input.dim() < 1 or input.dim() > 2:
        raise RuntimeError(f"expected input with dimensionality 1 or 2, got {input.dim()}")
    if linear_weight.dim() < 2:
        raise RuntimeError(f"expected linear_weight with dimensionality at least 2, got {linear_weight.dim()}")
    batch = tuple(input.shape[:-1])
    in_features = input.shape[-1]
    if in_features != linear_weight.shape[-1]:
        raise RuntimeError("expected equal input and linear_weight last dimensions (in_features), got "
                           f"{input.shape[-1]} and {linear_weight.shape[-1]}, respectively")
    num_classes = linear_weight.shape[0]
    out_features = tuple(linear_weight.shape[1:-1])
    if linear_bias is not None and tuple(linear_bias.shape) != (num_classes, *out_features):
        raise RuntimeError(f"expected linear_bias shape {(num_classes, *out_features)}, got "
                           f"{tuple(linear_bias.shape)}")
    if out_features and not batch:
        raise RuntimeError(f"K-dimensional loss defined by linear_weight shape {tuple(linear_weight.shape)} requires "
                           f"batched input, (N, {in_features}), got unbatched input with shape "
                           f"{tuple(input.shape)}")
    logits_shape = (*batch, num_classes, *out_features)
    if tuple(target.shape) == logits_shape and ignore_index is not None:
        raise RuntimeError("ignore_index cannot be specified when target contains probabilities")
    if ignore_index is None:
        ignore_index = -100
    if options is not None:
        chunkable = (not out_features and reduction in ("mean", "sum", "none") and label_smoothing == 0.0
                     and target.dtype == _C.int64)
        if chunkable:
            return chunked_linear_cross_entropy(input, linear_weight, target, linear_bias, weight, reduction,
                                                ignore_index, options, num_classes, in_features)
        bias_shape = None if linear_bias is None else tuple(linear_bias.shape)
        warnings.warn("linear_cross_entropy: ``options`` ignored; the chunked path needs reduction in "
                      "{'mean','sum','none'}, label_smoothing == 0, target.dtype == int64, out_features == (). Got "
                      f"reduction={reduction!r}, label_smoothing={label_smoothing}, target.dtype={target.dtype}, "
                      f"out_features={out_features}, linear_bias.shape={bias_shape}.", stacklevel=2)
    logits = (input @ linear_weight.reshape(-1, in_features).t()).reshape(logits_shape)
    if linear_bias is not None:
        logits = logits + linear_bias
    # F.cross_entropy's body (functional.py imports this module, so it cannot be imported from here)
    return _C._nn.cross_entropy_loss(logits, target, weight, _get_enum(reduction), ignore_index, label_smoothing)
