"""Padding modules: Zero/Constant/Reflection/Replication/Circular Pad 1d/2d/3d (over F.pad)."""
from .module import Module
from .utils import F, _ntuple, _pair, _quadruple

__all__ = ["CircularPad1d", "CircularPad2d", "CircularPad3d", "ConstantPad1d", "ConstantPad2d", "ConstantPad3d",
           "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d", "ReplicationPad1d", "ReplicationPad2d",
           "ReplicationPad3d", "ZeroPad1d", "ZeroPad2d", "ZeroPad3d"]

_sextuple = _ntuple(6, "_sextuple")
_TUPLES = {1: _pair, 2: _quadruple, 3: _sextuple}


class _ConstantPadNd(Module):
    __constants__ = ["padding", "value"]

    def __init__(self, value):
        super().__init__()
        self.value = value

    def forward(self, input):
        return F.pad(input, self.padding, "constant", self.value)

    def extra_repr(self):
        return f"padding={self.padding}, value={self.value}"


class _ModePadNd(Module):
    __constants__ = ["padding"]
    _mode = None
    _n = None

    def __init__(self, padding):
        super().__init__()
        self.padding = _TUPLES[self._n](padding)

    def forward(self, input):
        return F.pad(input, self.padding, self._mode)

    def extra_repr(self):
        return f"{self.padding}"


def _constant(n):
    class ConstantPadNd(_ConstantPadNd):
        def __init__(self, padding, value):
            super().__init__(value)
            self.padding = _TUPLES[n](padding)
    ConstantPadNd.__name__ = ConstantPadNd.__qualname__ = f"ConstantPad{n}d"
    ConstantPadNd.__doc__ = f"Pads the last {n} dim(s) with a constant value."
    return ConstantPadNd


def _zero(n, base):
    class ZeroPadNd(base):
        def __init__(self, padding):
            super().__init__(padding, 0.0)

        def extra_repr(self):
            return f"{self.padding}"
    ZeroPadNd.__name__ = ZeroPadNd.__qualname__ = f"ZeroPad{n}d"
    ZeroPadNd.__doc__ = f"Pads the last {n} dim(s) with zeros."
    return ZeroPadNd


def _mode(n, mode, prefix):
    attrs = {"_mode": mode, "_n": n, "__doc__": f"Pads the last {n} dim(s) in {mode} mode.", "__module__": __name__}
    if mode == "circular":
        def _check_input_dim(self, input):
            if input.dim() not in (n + 1, n + 2):
                raise ValueError(f"expected {n + 1}D or {n + 2}D input (got {input.dim()}D input)")

        def forward(self, input):
            self._check_input_dim(input)
            return F.pad(input, self.padding, "circular")
        attrs.update(_check_input_dim=_check_input_dim, forward=forward)
    cls = type(f"{prefix}Pad{n}d", (_ModePadNd,), attrs)
    return cls


ConstantPad1d, ConstantPad2d, ConstantPad3d = _constant(1), _constant(2), _constant(3)
ZeroPad1d, ZeroPad2d, ZeroPad3d = _zero(1, ConstantPad1d), _zero(2, ConstantPad2d), _zero(3, ConstantPad3d)
ReflectionPad1d, ReflectionPad2d, ReflectionPad3d = (_mode(n, "reflect", "Reflection") for n in (1, 2, 3))
ReplicationPad1d, ReplicationPad2d, ReplicationPad3d = (_mode(n, "replicate", "Replication") for n in (1, 2, 3))
CircularPad1d, CircularPad2d, CircularPad3d = (_mode(n, "circular", "Circular") for n in (1, 2, 3))
