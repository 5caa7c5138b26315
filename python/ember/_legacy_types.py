"""torch.FloatTensor, torch.LongTensor, ...: the legacy typed constructors, and isinstance checks
against them (`isinstance(t, torch.LongTensor)` is a dtype test on a CPU tensor, as in PyTorch)."""
import numbers

from . import _C
from ._C import _ops
from ._tensor import Size, Tensor

__all__ = ["FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor", "LongTensor", "IntTensor", "ShortTensor",
           "CharTensor", "ByteTensor", "BoolTensor"]


class _LegacyTensorType(type):
    def __instancecheck__(cls, obj):
        return isinstance(obj, Tensor) and obj.dtype is cls.dtype and obj.device.type == "cpu"

    def __call__(cls, *args, device=None):
        if device is not None and str(device) not in ("cpu", "cpu:0"):
            raise RuntimeError(f"legacy constructor expects device type: cpu but device type: {device} was passed")
        if not args:
            return _ops.empty((0,), dtype=cls.dtype)
        if len(args) == 1 and isinstance(args[0], Tensor):
            t = args[0]
            if t.dtype is not cls.dtype:
                raise TypeError(f"{cls.__name__}(): expected a tensor of dtype {cls.dtype}, got {t.dtype}")
            return t
        if len(args) == 1 and isinstance(args[0], Size):
            return _ops.empty(tuple(args[0]), dtype=cls.dtype)
        if all(isinstance(a, numbers.Integral) and not isinstance(a, bool) for a in args):
            return _ops.empty(tuple(int(a) for a in args), dtype=cls.dtype)
        if len(args) == 1 and not isinstance(args[0], (numbers.Number, str, bytes)):
            return _ops.tensor(args[0], dtype=cls.dtype)
        if len(args) == 1:
            raise TypeError(f"new(): data must be a sequence (got {type(args[0]).__name__})")
        raise TypeError(f"{cls.__name__}() received an invalid combination of arguments - got "
                        f"({', '.join(type(a).__name__ for a in args)}): expected sizes (ints), a Size, data "
                        "(a sequence) or a tensor")


def _make(name, dtype):
    doc = f"Legacy tensor type: {name}(sizes) or {name}(data) makes a {dtype} tensor; isinstance tests the dtype."
    return _LegacyTensorType(name, (), {"dtype": dtype, "__module__": "ember", "__doc__": doc})


FloatTensor = _make("FloatTensor", _C.float32)
DoubleTensor = _make("DoubleTensor", _C.float64)
HalfTensor = _make("HalfTensor", _C.float16)
BFloat16Tensor = _make("BFloat16Tensor", _C.bfloat16)
LongTensor = _make("LongTensor", _C.int64)
IntTensor = _make("IntTensor", _C.int32)
ShortTensor = _make("ShortTensor", _C.int16)
CharTensor = _make("CharTensor", _C.int8)
ByteTensor = _make("ByteTensor", _C.uint8)
BoolTensor = _make("BoolTensor", _C.bool)
