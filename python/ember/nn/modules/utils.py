"""Helpers of the layer modules: int-or-tuple arguments, and `F`, the functional namespace."""
import collections.abc
import importlib
import importlib.util
from itertools import repeat

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


class _Functional:
    """ember.nn.functional, resolved on first use (it is written alongside these modules; until
    it lands, the core functions of ember.nn._functional_core serve), each looked-up function
    cached on this object."""

    def __getattr__(self, name):
        if importlib.util.find_spec("ember.nn.functional") is not None:
            mod = importlib.import_module("ember.nn.functional")
        else:
            mod = importlib.import_module("ember.nn._functional_core")
        fn = getattr(mod, name)
        object.__setattr__(self, name, fn)
        return fn


F = _Functional()
