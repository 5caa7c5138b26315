"""Helpers of the layer modules: int-or-tuple arguments, and `F`, the functional namespace."""
import collections.abc
import math
from itertools import repeat

from ... import _C
from .. import functional as F  # the functions the layers call (F.linear, F.conv2d, ...)
from .. import init
from ..parameter import Parameter

__all__ = ["F"]


def _ntuple(n, name="parse"):
    def parse(x):
        if isinstance(x, collections.abc.Iterable) and not isinstance(x, str):
            return tuple(x)
        return tuple(repeat(x, n))
    parse.__name__ = name
    return parse


_single = _ntuple(1, "_single")
_pair = _ntuple(2, "_pair")
_triple = _ntuple(3, "_triple")
_quadruple = _ntuple(4, "_quadruple")


def _reverse_repeat_tuple(t, n):
    """(a, b) -> (b, b, a, a) for n = 2: the per-side padding F.pad takes, last dim first."""
    return tuple(x for x in reversed(t) for _ in range(n))


def _register_affine(module, affine, bias, shape, dtype=None, device=None):
    """The normalization layers' weight and bias Parameters of `shape` (the bias only with bias=True),
    or None entries when not affine; reset_affine gives them their values."""
    if affine:
        module.weight = Parameter(_C._ops.empty(shape, dtype=dtype, device=device))
        if bias:
            module.bias = Parameter(_C._ops.empty(shape, dtype=dtype, device=device))
        else:
            module.register_parameter("bias", None)
    else:
        module.register_parameter("weight", None)
        module.register_parameter("bias", None)


def _reset_affine(module):
    """Weight ones, bias zeros (where they exist), as every PyTorch normalization layer starts."""
    if module.weight is not None:
        init.ones_(module.weight)
    if module.bias is not None:
        init.zeros_(module.bias)


def _reset_fan_in_uniform(module):
    """Linear and convolution layers' default init: weight by kaiming_uniform_ with a = sqrt(5), i.e.
    U(-1/sqrt(fan_in), 1/sqrt(fan_in)), and the bias (if any) from the same range."""
    init.kaiming_uniform_(module.weight, a=math.sqrt(5))
    if module.bias is not None:
        fan_in, _ = init._calculate_fan_in_and_fan_out(module.weight)
        bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
        init.uniform_(module.bias, -bound, bound)
