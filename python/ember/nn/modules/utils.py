"""Helpers of the layer modules: int-or-tuple arguments, and `F`, the functional namespace."""
import collections.abc
from itertools import repeat

from .. import functional as F  # the functions the layers call (F.linear, F.conv2d, ...)

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
