"""ember.finfo / ember.iinfo: numeric limits of each dtype, with PyTorch's attributes, repr,
errors and equality (objects for the same dtype compare equal; like PyTorch's they are not
hashable, and their attributes are read-only)."""
import builtins

from . import _C

# bits, eps, max, smallest normal, resolution (10 ** -digits10)
_FLOAT = {
    _C.float16: (16, 2.0 ** -10, 65504.0, 2.0 ** -14, 0.001),
    _C.bfloat16: (16, 2.0 ** -7, (2.0 - 2.0 ** -7) * 2.0 ** 127, 2.0 ** -126, 0.01),
    _C.float32: (32, 2.0 ** -23, (2.0 - 2.0 ** -23) * 2.0 ** 127, 2.0 ** -126, 1e-06),
    _C.float64: (64, 2.0 ** -52, (2.0 - 2.0 ** -52) * 2.0 ** 1023, 2.0 ** -1022, 1e-15),
}

# bits, min, max
_INT = {
    _C.uint8: (8, 0, 255),
    _C.int8: (8, -128, 127),
    _C.int16: (16, -(2 ** 15), 2 ** 15 - 1),
    _C.int32: (32, -(2 ** 31), 2 ** 31 - 1),
    _C.int64: (64, -(2 ** 63), 2 ** 63 - 1),
}

# Python scalar types stand for the dtype PyTorch maps them to
_PY_TYPES = {builtins.float: _C.float64, builtins.int: _C.int64, builtins.bool: _C.bool}

_NO_ARG = object()


def _as_dtype(fn, type):
    if isinstance(type, _C.dtype):
        return type
    if isinstance(type, builtins.type) and type in _PY_TYPES:
        return _PY_TYPES[type]
    raise TypeError(f"{fn}(): argument 'type' (position 1) must be ember.dtype, not {builtins.type(type).__name__}")


def _dtype_name(d):
    return str(d).rsplit(".", 1)[-1]


class _Info:
    __slots__ = ("_values",)
    _fields = ()

    def __setattr__(self, name, value):
        if name in self._fields:
            raise AttributeError(f"attribute '{name}' of 'ember.{type(self).__name__}' objects is not writable")
        if name == "_values":
            raise AttributeError(f"'ember.{type(self).__name__}' object attribute '_values' is read-only")
        raise AttributeError(f"'ember.{type(self).__name__}' object has no attribute '{name}'")

    def __eq__(self, other):
        if type(other) is not type(self):
            return NotImplemented
        return self.dtype == other.dtype

    def __ne__(self, other):
        r = self.__eq__(other)
        return r if r is NotImplemented else not r

    __hash__ = None  # PyTorch's finfo/iinfo objects are unhashable too

    def __str__(self):
        return self.__repr__()


def _field(i):
    return property(lambda self: self._values[i])


class finfo(_Info):
    """Machine limits of a floating point dtype (the default dtype when called without one).

    bits: storage size; eps: distance from 1.0 to the next representable number; max / min: the
    largest / most negative finite values; tiny and smallest_normal: the smallest positive normal
    number; resolution: 10 ** -(decimal digits the type represents exactly); dtype: the name.
    """
    __slots__ = ()
    _fields = ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution", "dtype")
    bits, eps, max, min, tiny, smallest_normal, resolution, dtype = (_field(i) for i in range(8))

    def __init__(self, type=_NO_ARG):
        d = _C.get_default_dtype() if type is _NO_ARG else _as_dtype("finfo", type)
        d = {_C.complex64: _C.float32, _C.complex128: _C.float64}.get(d, d)  # a complex dtype's parts
        if d not in _FLOAT:
            raise TypeError("ember.finfo() requires a floating point input type. "
                            "Use ember.iinfo to handle 'ember.finfo'")
        bits, eps, mx, normal, resolution = _FLOAT[d]
        object.__setattr__(self, "_values", (bits, eps, mx, -mx, normal, normal, resolution, _dtype_name(d)))

    def __repr__(self):
        return (f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, eps={self.eps:g}, "
                f"smallest_normal={self.smallest_normal:g}, tiny={self.tiny:g}, dtype={self.dtype})")


class iinfo(_Info):
    """Machine limits of an integer dtype: bits, min, max, dtype (the name)."""
    __slots__ = ()
    _fields = ("bits", "max", "min", "dtype")
    bits, max, min, dtype = (_field(i) for i in range(4))

    def __init__(self, type):
        d = _as_dtype("iinfo", type)
        if d is _C.bool:
            raise TypeError("ember.bool is not supported by ember.iinfo")
        if d not in _INT:
            raise TypeError("ember.iinfo() requires an integer input type. Use ember.finfo to handle 'ember.iinfo'")
        bits, mn, mx = _INT[d]
        object.__setattr__(self, "_values", (bits, mx, mn, _dtype_name(d)))

    def __repr__(self):
        # PyTorch prints the limits in C's %g form, even for integers
        return f"iinfo(min={builtins.float(self.min):g}, max={builtins.float(self.max):g}, dtype={self.dtype})"
