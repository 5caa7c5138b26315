"""ember.nn.functional: the ops backed by Ember's fused kernels and convolution/pooling composites
(softmax, normalization, linear, conv, pooling, padding, fold/unfold). Re-exported by
ember.nn.functional."""
import math

from .. import _C
from .._C import _ops
from ..amp._ops import autocast_op, run_autocast_op

__all__ = [
    "softmax", "log_softmax", "softmin", "layer_norm", "batch_norm", "linear", "bilinear",
    "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
    "max_pool1d", "max_pool2d", "max_pool3d", "max_pool1d_with_indices", "max_pool2d_with_indices",
    "max_pool3d_with_indices", "avg_pool1d", "avg_pool2d", "avg_pool3d", "adaptive_avg_pool1d",
    "adaptive_avg_pool2d", "adaptive_avg_pool3d", "adaptive_max_pool1d", "adaptive_max_pool2d",
    "adaptive_max_pool1d_with_indices", "adaptive_max_pool2d_with_indices", "max_unpool1d", "max_unpool2d",
    "lp_pool1d", "lp_pool2d", "pad", "unfold", "fold", "pixel_shuffle", "pixel_unshuffle", "channel_shuffle",
]


def _tuple(v, n, name):
    if v is None:
        return None
    if isinstance(v, (list, tuple)):
        if len(v) == 1:
            return tuple(v) * n
        if len(v) != n:
            raise ValueError(f"{name} must be an int or a tuple of {n} ints, got {v}")
        return tuple(int(x) for x in v)
    return (int(v),) * n


def _softmax_dim(ndim):
    return 0 if ndim in (0, 1, 3) else 1


def softmax(input, dim=None, _stacklevel=3, dtype=None):
    """Softmax along a dimension: exp(x) normalized to sum to one."""
    if dim is None:
        dim = _softmax_dim(input.dim())
    return _ops.softmax(input, dim, dtype=dtype)


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    """Logarithm of the softmax along a dimension, computed stably."""
    if dim is None:
        dim = _softmax_dim(input.dim())
    return _ops.log_softmax(input, dim, dtype=dtype)


def softmin(input, dim=None, _stacklevel=3, dtype=None):
    """Softmax of the negated input along a dimension."""
    if dim is None:
        dim = _softmax_dim(input.dim())
    return _ops.softmax(-input if dtype is None else -input.to(dtype), dim)


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    """Normalize over the trailing dimensions, then scale and shift."""
    if isinstance(normalized_shape, int):
        normalized_shape = (normalized_shape,)
    return _ops.layer_norm(input, list(normalized_shape), weight, bias, eps)


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1, eps=1e-5):
    """Batch normalization per channel, with running statistics."""
    if training:
        size = input._checked_shape
        n = size[0]
        for s in size[2:]:
            n *= s
        if n == 1:
            raise ValueError(f"Expected more than 1 value per channel when training, got input size {size}")
    return _ops.batch_norm(input, weight, bias, running_mean, running_var, training,
                           0.0 if momentum is None else momentum, eps)


def linear(input, weight, bias=None):
    """Affine map x @ weight.T + bias."""
    return _ops._linear(input, weight, bias)


def bilinear(input1, input2, weight, bias=None):
    """y = x1^T A x2 + b, for every output feature (A: [out, in1, in2])."""
    s1, s2 = input1._checked_shape, input2._checked_shape  # checks only: a jit trace does not pin them
    if s1[:-1] != s2[:-1]:
        raise RuntimeError("bilinear(): input batch dimensions do not match: got "
                           f"{list(s1[:-1])} and {list(s2[:-1])}")
    if weight.dim() != 3 or weight._checked_shape[1] != s1[-1] or weight._checked_shape[2] != s2[-1]:
        raise RuntimeError(f"bilinear(): weight of shape {list(weight._checked_shape)} does not match inputs "
                           f"{list(s1)} and {list(s2)}")
    # (..., in1) @ (out, in1, in2) -> (..., out, in2), then contract with x2
    t = _ops.matmul(input1.unsqueeze(-2).unsqueeze(-3), weight).squeeze(-2)
    prod = t * input2.unsqueeze(-2)
    y = prod.sum(-1, dtype=prod.dtype)  # integer inputs keep their dtype (sum alone would widen to int64)
    return y + bias if bias is not None else y


def _conv(fn, n, input, weight, bias, stride, padding, dilation, groups):
    if isinstance(padding, str):
        return fn(input, weight, bias, _tuple(stride, n, "stride"), padding, _tuple(dilation, n, "dilation"), groups)
    return fn(input, weight, bias, _tuple(stride, n, "stride"), _tuple(padding, n, "padding"),
              _tuple(dilation, n, "dilation"), groups)


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """1-D convolution over an input of several channels."""
    return _conv(_ops.conv1d, 1, input, weight, bias, stride, padding, dilation, groups)


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """2-D convolution over an input of several channels."""
    return _conv(_ops.conv2d, 2, input, weight, bias, stride, padding, dilation, groups)


def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """3-D convolution over an input of several channels."""
    return _conv(_ops.conv3d, 3, input, weight, bias, stride, padding, dilation, groups)


def _conv_t(fn, n, input, weight, bias, stride, padding, output_padding, groups, dilation):
    return fn(input, weight, bias, _tuple(stride, n, "stride"), _tuple(padding, n, "padding"),
              _tuple(output_padding, n, "output_padding"), groups, _tuple(dilation, n, "dilation"))


def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """1-D transposed convolution (fractionally strided)."""
    return _conv_t(_ops.conv_transpose1d, 1, input, weight, bias, stride, padding, output_padding, groups, dilation)


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """2-D transposed convolution (fractionally strided)."""
    return _conv_t(_ops.conv_transpose2d, 2, input, weight, bias, stride, padding, output_padding, groups, dilation)


def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """3-D transposed convolution (fractionally strided)."""
    return _conv_t(_ops.conv_transpose3d, 3, input, weight, bias, stride, padding, output_padding, groups, dilation)


# ---- pooling
def _batched(input, n, name):
    if input.dim() == n + 2:
        return input, False
    if input.dim() == n + 1:
        return input.unsqueeze(0), True
    raise RuntimeError(f"{name}: Expected {n + 1}D or {n + 2}D input, but got input of size: {list(input.shape)}")


def _check_pool_input(n, x, input, name):
    """PyTorch's pooling refuses an empty non-batch dim (only the batch may be empty)."""
    if all(d > 0 for d in x._checked_shape[1:]):  # a check only: a jit trace does not pin the shape
        return
    if n == 3:
        i = next(i for i, d in enumerate(x.shape[2:]) if d == 0) if x.shape[1] else 0
        raise RuntimeError(f"{name}(): Expected input's non-batch dimensions to have positive length, but input has "
                           f"a shape of {list(input.shape)} and non-batch dimension {i} has length zero!")
    raise RuntimeError(f"{name}: Expected {n + 1}D or {n + 2}D (batch mode) tensor with optional 0 dim batch size "
                       f"for input, but got:{list(input.shape)}")


def _max_pool(n, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices):
    x, unbatched = _batched(input, n, f"max_pool{n}d")
    _check_pool_input(n, x, input, f"max_pool{n}d")
    k = _tuple(kernel_size, n, "kernel_size")
    s = k if stride is None or (isinstance(stride, (list, tuple)) and len(stride) == 0) else _tuple(stride, n, "stride")
    v, i = _ops._max_pool_with_indices(x, list(k), list(s), list(_tuple(padding, n, "padding")),
                                       list(_tuple(dilation, n, "dilation")), ceil_mode)
    if unbatched:
        v, i = v.squeeze(0), i.squeeze(0)
    return (v, i) if return_indices else v


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    """1-D max pooling (optionally with indices)."""
    return _max_pool(1, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices)


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    """2-D max pooling (optionally with indices)."""
    return _max_pool(2, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices)


def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    """3-D max pooling (optionally with indices)."""
    if not return_indices and _C._autocast_cpu_active():  # PyTorch's max_pool3d autocasts to float32
        return run_autocast_op("fp32", _max_pool, 3, input, kernel_size, stride, padding, dilation, ceil_mode, False)
    return _max_pool(3, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices)


def max_pool1d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=True):
    """1-D max pooling returning values and argmax indices."""
    return _max_pool(1, input, kernel_size, stride, padding, dilation, ceil_mode, True)


def max_pool2d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=True):
    """2-D max pooling returning values and argmax indices."""
    return _max_pool(2, input, kernel_size, stride, padding, dilation, ceil_mode, True)


def max_pool3d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=True):
    """3-D max pooling returning values and argmax indices."""
    return _max_pool(3, input, kernel_size, stride, padding, dilation, ceil_mode, True)


def _avg_pool(n, input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override):
    x, unbatched = _batched(input, n, f"avg_pool{n}d")
    _check_pool_input(n, x, input, f"avg_pool{n}d")
    k = _tuple(kernel_size, n, "kernel_size")
    s = k if stride is None or (isinstance(stride, (list, tuple)) and len(stride) == 0) else _tuple(stride, n, "stride")
    y = _ops._avg_pool_nd(x, list(k), list(s), list(_tuple(padding, n, "padding")), ceil_mode, count_include_pad,
                          divisor_override)
    return y.squeeze(0) if unbatched else y


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
    """1-D average pooling."""
    return _avg_pool(1, input, kernel_size, stride, padding, ceil_mode, count_include_pad, None)


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    """2-D average pooling."""
    return _avg_pool(2, input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)


@autocast_op("fp32")
def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    """3-D average pooling."""
    return _avg_pool(3, input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)


def _adaptive_size(n, input, output_size, kind="avg"):
    out = list(_tuple(output_size, n, "output_size")) if not isinstance(output_size, (list, tuple)) else list(output_size)
    if n == 1 and len(out) != 1:
        raise RuntimeError(f"adaptive_{kind}_pool1d() argument 'output_size' should contain one int (got {len(out)})")
    if n > 1 and isinstance(output_size, (list, tuple)) and input.dim() <= len(out):
        raise ValueError(f"Input dimension should be at least {len(out) + 1}")  # torch's Python-level check
    if len(out) != n:
        raise RuntimeError(f"adaptive_{kind}_pool{n}d: output_size must be {n}, got {output_size}")
    return [input.shape[input.dim() - n + i] if o is None else int(o) for i, o in enumerate(out)]


def adaptive_avg_pool1d(input, output_size):
    """1-D average pooling to a fixed output size."""
    return _ops._adaptive_avg_pool_nd(input, _adaptive_size(1, input, output_size))


def adaptive_avg_pool2d(input, output_size):
    """2-D average pooling to a fixed output size."""
    return _ops._adaptive_avg_pool_nd(input, _adaptive_size(2, input, output_size))


@autocast_op("fp32")
def adaptive_avg_pool3d(input, output_size):
    """3-D average pooling to a fixed output size."""
    return _ops._adaptive_avg_pool_nd(input, _adaptive_size(3, input, output_size))


def _adaptive_max(n, input, output_size, return_indices):
    size = _adaptive_size(n, input, output_size, "max")  # first: torch's Python-level checks come first
    x, unbatched = _batched(input, n, f"adaptive_max_pool{n}d")
    v, i = _ops._adaptive_max_pool_with_indices(x, size)
    if unbatched:
        v, i = v.squeeze(0), i.squeeze(0)
    return (v, i) if return_indices else v


def adaptive_max_pool1d(input, output_size, return_indices=False):
    """1-D max pooling to a fixed output size."""
    return _adaptive_max(1, input, output_size, return_indices)


def adaptive_max_pool2d(input, output_size, return_indices=False):
    """2-D max pooling to a fixed output size."""
    return _adaptive_max(2, input, output_size, return_indices)


def adaptive_max_pool1d_with_indices(input, output_size, return_indices=True):
    """1-D adaptive max pooling returning values and argmax indices."""
    return _adaptive_max(1, input, output_size, True)


def adaptive_max_pool2d_with_indices(input, output_size, return_indices=True):
    """2-D adaptive max pooling returning values and argmax indices."""
    return _adaptive_max(2, input, output_size, True)


def _max_unpool(n, input, indices, kernel_size, stride, padding, output_size):
    if tuple(indices._checked_shape) != tuple(input._checked_shape):
        raise RuntimeError(f"Expected shape of indices to be same as that of the input tensor ({list(input.shape)}) "
                           f"but got indices tensor with shape: {list(indices.shape)}")
    k = _tuple(kernel_size, n, "kernel_size")
    s = k if stride is None else _tuple(stride, n, "stride")
    p = _tuple(padding, n, "padding")
    spatial = input.shape[-n:]
    if output_size is None:
        out = [(spatial[i] - 1) * s[i] - 2 * p[i] + k[i] for i in range(n)]
    else:
        out = list(output_size)[-n:]
    lead = list(input.shape[:-n])
    flat_out = 1
    for o in out:
        flat_out *= o
    if indices.numel() and (int(indices.max()) >= flat_out or int(indices.min()) < 0):
        raise RuntimeError(f"Found an invalid max index: {int(indices.max())} (output volumes are of size "
                           f"{'x'.join(str(o) for o in out)}")
    z = _ops.zeros(lead + [flat_out], dtype=input.dtype, device=input.device)
    r = z.scatter(len(lead), indices.reshape(lead + [-1]), input.reshape(lead + [-1]))
    return r.reshape(lead + out)


def max_unpool1d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """Partial inverse of max_pool1d: values put back at their indices, zeros elsewhere."""
    return _max_unpool(1, input, indices, kernel_size, stride, padding, output_size)


@autocast_op("fp32")
def max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """Partial inverse of max_pool2d: values put back at their indices, zeros elsewhere."""
    return _max_unpool(2, input, indices, kernel_size, stride, padding, output_size)


def lp_pool1d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """1-D power-average pooling (the p-norm of each window)."""
    k = _tuple(kernel_size, 1, "kernel_size")[0]
    out = avg_pool1d(input.pow(norm_type), k, stride, 0, ceil_mode)
    return (_ops.sign(out) * out.abs().relu()).mul(k).pow(1.0 / norm_type)


def lp_pool2d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """2-D power-average pooling (the p-norm of each window)."""
    kw, kh = _tuple(kernel_size, 2, "kernel_size")
    out = avg_pool2d(input.pow(norm_type), (kw, kh), stride, 0, ceil_mode)
    return (_ops.sign(out) * out.abs().relu()).mul(kw * kh).pow(1.0 / norm_type)


def pad(input, pad, mode="constant", value=None):
    """Pad dimensions with a constant, or by reflection, replication or wrapping."""
    if mode not in ("constant", "reflect", "replicate", "circular"):
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    if mode != "constant" and _C._autocast_cpu_active() and _pad_autocasts(input, pad, mode):
        return run_autocast_op("fp32", _ops._pad, input, list(pad), mode, value)
    return _ops._pad(input, list(pad), mode, value)


def _pad_autocasts(input, pad, mode):
    """PyTorch autocasts to float32 its reflection_pad1d/2d and replication_pad1d/2d/3d."""
    spatial = len(pad) // 2
    return mode == "replicate" or (mode == "reflect" and spatial <= 2)


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    """Extract sliding local blocks of an image as columns."""
    if input.dim() not in (3, 4):
        raise NotImplementedError(f"Input Error: Only 3D or 4D input Tensors are supported (got {input.dim()}D)")
    x = input if input.dim() == 4 else input.unsqueeze(0)
    r = _ops._im2col(x, list(_tuple(kernel_size, 2, "kernel_size")), list(_tuple(dilation, 2, "dilation")),
                     list(_tuple(padding, 2, "padding")), list(_tuple(stride, 2, "stride")))
    return r if input.dim() == 4 else r.squeeze(0)


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """Combine sliding local blocks back into an image, summing overlaps."""
    if input.dim() not in (2, 3):
        raise NotImplementedError(f"Input Error: Only unbatched (2D) or batched (3D) input Tensors are supported "
                                  f"(got {input.dim()}D)")
    x = input if input.dim() == 3 else input.unsqueeze(0)
    r = _ops._col2im(x, list(_tuple(output_size, 2, "output_size")), list(_tuple(kernel_size, 2, "kernel_size")),
                     list(_tuple(dilation, 2, "dilation")), list(_tuple(padding, 2, "padding")),
                     list(_tuple(stride, 2, "stride")))
    return r if input.dim() == 3 else r.squeeze(0)


def channel_shuffle(input, groups):
    """(N, C, *): splits the channels into `groups` groups and interleaves them."""
    return _ops.channel_shuffle(input, groups)


def pixel_shuffle(input, upscale_factor):
    """Rearrange channels into spatial blocks, upscaling by a factor."""
    r = int(upscale_factor)
    if input.dim() < 3:
        raise RuntimeError(f"pixel_shuffle expects input to have at least 3 dimensions, but got input with "
                           f"{input.dim()} dimension(s)")
    *lead, c, h, w = input.shape
    if c % (r * r):
        raise RuntimeError(f"pixel_shuffle expects its input's 'channel' dimension to be divisible by the square of "
                           f"upscale_factor, but input.size(-3)={c} is not divisible by {r * r}")
    x = input.reshape(lead + [c // (r * r), r, r, h, w])
    n = len(lead)
    x = x.permute(list(range(n)) + [n, n + 3, n + 1, n + 4, n + 2])
    return x.reshape(lead + [c // (r * r), h * r, w * r])


def pixel_unshuffle(input, downscale_factor):
    """Rearrange spatial blocks into channels, downscaling by a factor."""
    r = int(downscale_factor)
    if input.dim() < 3:
        raise RuntimeError(f"pixel_unshuffle expects input to have at least 3 dimensions, but got input with "
                           f"{input.dim()} dimension(s)")
    *lead, c, h, w = input.shape
    if h % r or w % r:
        raise RuntimeError(f"pixel_unshuffle expects height and width to be divisible by downscale_factor, but got "
                           f"height={h}, width={w}, downscale_factor={r}")
    x = input.reshape(lead + [c, h // r, r, w // r, r])
    n = len(lead)
    x = x.permute(list(range(n)) + [n, n + 2, n + 4, n + 1, n + 3])
    return x.reshape(lead + [c * r * r, h // r, w // r])
