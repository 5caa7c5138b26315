"""ember.finfo / ember.iinfo: numeric limits of each dtype, with PyTorch's attribute names."""
from . import _C

_FLOAT = {
    # bits, eps, max, tiny (smallest normal), smallest subnormal, resolution
    _C.float16: (16, 0.0009765625, 65504.0, 6.103515625e-05, 5.960464477539063e-08, 0.001),
    _C.bfloat16: (16, 0.0078125, 3.3895313892515355e38, 1.1754943508222875e-38, 9.183549615799121e-41, 0.01),
    _C.float32: (32, 1.1920928955078125e-07, 3.4028234663852886e38, 1.1754943508222875e-38,
                 1.401298464324817e-45, 1e-06),
    _C.float64: (64, 2.220446049250313e-16, 1.7976931348623157e308, 2.2250738585072014e-308,
                 5e-324, 1e-15),
}


class finfo:
    def __init__(self, type=None):
        if type is None:
            type = _C.get_default_dtype()
        if type not in _FLOAT:
            raise TypeError(f"finfo(): argument 'type' must be a floating point dtype, not {type}")
        self.dtype = repr(type).split(".")[-1]
        self.bits, self.eps, self.max, self.tiny, self.smallest_subnormal, self.resolution = _FLOAT[type]
        self.min = -self.max
        self.smallest_normal = self.tiny

    def __repr__(self):
        return (f"finfo(resolution={self.resolution}, min={self.min:.6e}, max={self.max:.6e}, eps={self.eps:.6e}, "
                f"smallest_normal={self.smallest_normal:.6e}, tiny={self.tiny:.6e}, dtype={self.dtype})")


_INT = {
    _C.uint8: (8, 0, 255), _C.int8: (8, -128, 127), _C.int16: (16, -32768, 32767),
    _C.int32: (32, -2147483648, 2147483647), _C.int64: (64, -9223372036854775808, 9223372036854775807),
}


class iinfo:
    def __init__(self, type):
        if type not in _INT:
            raise TypeError(f"iinfo(): argument 'type' must be an integer dtype, not {type}")
        self.dtype = repr(type).split(".")[-1]
        self.bits, self.min, self.max = _INT[type]

    def __repr__(self):
        return f"iinfo(min={self.min}, max={self.max}, dtype={self.dtype})"
