"""LayerNorm, GroupNorm, RMSNorm, LocalResponseNorm."""
import numbers

from ... import _C
from .. import init
from ..parameter import Parameter
from .module import Module
from .utils import F, _register_affine, _reset_affine

__all__ = ["LayerNorm", "GroupNorm", "RMSNorm", "LocalResponseNorm", "CrossMapLRN2d"]


class LayerNorm(Module):
    """Normalizes over the trailing `normalized_shape` dims; elementwise affine (ones/zeros)."""

    __constants__ = ["normalized_shape", "eps", "elementwise_affine"]

    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, bias=True, device=None, dtype=None):
        super().__init__()
        if isinstance(normalized_shape, numbers.Integral):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        _register_affine(self, elementwise_affine, bias, self.normalized_shape, dtype, device)
        self.reset_parameters()

    def reset_parameters(self):
        _reset_affine(self)

    def forward(self, input):
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return ("{normalized_shape}, eps={eps}, elementwise_affine={elementwise_affine}, "
                "bias={use_bias}".format(**self.__dict__, use_bias=self.bias is not None))


class GroupNorm(Module):
    """Normalizes (N, C, *) over groups of C / num_groups channels; per-channel affine."""

    __constants__ = ["num_groups", "num_channels", "eps", "affine"]

    def __init__(self, num_groups, num_channels, eps=1e-5, affine=True, device=None, dtype=None, *, bias=True):
        super().__init__()
        if num_channels % num_groups != 0:
            raise ValueError("num_channels must be divisible by num_groups")
        self.num_groups = num_groups
        self.num_channels = num_channels
        self.eps = eps
        self.affine = affine
        _register_affine(self, affine, bias, num_channels, dtype, device)
        self.reset_parameters()

    def reset_parameters(self):
        _reset_affine(self)

    def forward(self, input):
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return ("{num_groups}, {num_channels}, eps={eps}, affine={affine}, "
                "bias={use_bias}".format(**self.__dict__, use_bias=self.bias is not None))


class RMSNorm(Module):
    """x / sqrt(mean(x^2) + eps) over the trailing dims, times a weight (ones). eps=None uses the
    dtype's machine epsilon."""

    __constants__ = ["normalized_shape", "eps", "elementwise_affine"]

    def __init__(self, normalized_shape, eps=None, elementwise_affine=True, device=None, dtype=None):
        super().__init__()
        if isinstance(normalized_shape, numbers.Integral):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(_C._ops.empty(self.normalized_shape, dtype=dtype, device=device))
        else:
            self.register_parameter("weight", None)
        self.reset_parameters()

    def reset_parameters(self):
        if self.elementwise_affine:
            init.ones_(self.weight)

    def forward(self, x):
        return F.rms_norm(x, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self):
        return "{normalized_shape}, eps={eps}, elementwise_affine={elementwise_affine}".format(**self.__dict__)


class _ChannelWindowNorm(Module):
    """x / (k + alpha/size * sum of x^2 over a window of channels)^beta: the parameters and repr."""

    __constants__ = ["size", "alpha", "beta", "k"]

    def __init__(self, size, alpha=1e-4, beta=0.75, k=1.0):
        super().__init__()
        self.size = size
        self.alpha = alpha
        self.beta = beta
        self.k = k

    def extra_repr(self):
        return "{size}, alpha={alpha}, beta={beta}, k={k}".format(**self.__dict__)


class LocalResponseNorm(_ChannelWindowNorm):
    """Normalization over `size` neighbouring channels: x / (k + alpha/n sum x^2)^beta."""

    def forward(self, input):
        return F.local_response_norm(input, self.size, self.alpha, self.beta, self.k)


class CrossMapLRN2d(_ChannelWindowNorm):
    """The legacy (Lua Torch) cross-channel LRN of 4-D input: x * (k + alpha/size * s_c)^-beta, where s_c
    sums x^2 over channels c - pre + 1 .. c + pre - 1 (pre = (size - 1) // 2 + 1) and, as PyTorch's
    running-sum implementation does, always includes channel 0."""

    def __init__(self, size, alpha=1e-4, beta=0.75, k=1):
        super().__init__(size, alpha, beta, k)

    def forward(self, input):
        if input.dim() != 4:
            raise ValueError(f"CrossMapLRN2d: Expected input to be 4D, got {input.dim()}D instead.")
        return _cross_map_lrn_function().apply(input, self.size, self.alpha, self.beta, self.k)



def _channel_window_sums(t, lo, hi):
    """For each channel c, the sum of t's channels lo[c] <= j < hi[c] (through a running sum)."""
    cs = _C._ops.cat([_C._ops.zeros_like(t.narrow(1, 0, 1)), t.cumsum(1)], 1)
    idx = _C._tensor_from_data
    return cs.index_select(1, idx(hi, _C.int64)) - cs.index_select(1, idx(lo, _C.int64))


_CROSS_MAP_LRN = []


def _cross_map_lrn_function():
    """CrossMapLRN2d's autograd Function, made on first use (nn loads before ember.autograd is importable).
    Its backward is PyTorch's: the symmetric-window LRN gradient, which is not the exact derivative of
    the forward's channel-0 quirk, so gradients match torch's rather than finite differences."""
    if _CROSS_MAP_LRN:
        return _CROSS_MAP_LRN[0]
    from ...autograd.function import Function

    class _CrossMapLRN2dFn(Function):
        @staticmethod
        def forward(ctx, input, size, alpha, beta, k):
            channels = input.shape[1]
            pre = int((size - 1) / 2 + 1)
            sq = input * input
            hi = [min(c + pre - 1, channels - 1) + 1 for c in range(channels)]
            lo = [min(max(c - pre + 1, 1), h) for c, h in zip(range(channels), hi)]
            scale = (_channel_window_sums(sq, lo, hi) + sq.narrow(1, 0, 1)) * (alpha / size) + k
            output = input * scale.pow(-beta)
            ctx.save_for_backward(input, output, scale)
            ctx.size, ctx.alpha, ctx.beta = size, alpha, beta
            return output

        @staticmethod
        def backward(ctx, grad_output):
            input, output, scale = ctx.saved_tensors
            size, channels = ctx.size, input.shape[1]
            ratio = grad_output * output / scale
            # channel c gathers the ratios of channels c - inv .. c - inv + size - 1 (zero outside)
            inv = int(size - (size - 1) / 2)
            lo = [min(max(c - inv, 0), channels) for c in range(channels)]
            hi = [min(max(c - inv + size, 0), channels) for c in range(channels)]
            accum = _channel_window_sums(ratio, lo, hi)
            grad_input = scale.pow(-ctx.beta) * grad_output - input * accum * (2 * ctx.alpha * ctx.beta / size)
            return grad_input, None, None, None, None

    _CROSS_MAP_LRN.append(_CrossMapLRN2dFn)
    return _CrossMapLRN2dFn

