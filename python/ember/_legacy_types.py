"""torch.FloatTensor, torch.LongTensor, ...: the legacy typed constructors, and isinstance checks
against them (`isinstance(t, torch.LongTensor)` is a dtype test on a CPU tensor, as in PyTorch)."""
import numbers

from . import _C
from ._C import _ops
from ._tensor import Size, Tensor

__all__ = ["FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor", "LongTensor", "IntTensor", "ShortTensor",
           "CharTensor", "ByteTensor", "BoolTensor"]


class _LegacyTensorType(type):
    """The metaclass of the legacy types: a dtype and a device type (ember.FloatTensor: cpu,
    ember.cuda.FloatTensor: cuda)."""

    def __instancecheck__(cls, obj):
        return isinstance(obj, Tensor) and obj.dtype is cls.dtype and obj.device.type == cls.device_type

    @property
    def is_cuda(cls):
        return cls.device_type == "cuda"

    def __call__(cls, *args, device=None):
        kind = cls.device_type
        if device is not None and _C.device(device).type != kind:
            raise RuntimeError(f"legacy constructor expects device type: {kind} but device type: "
                               f"{_C.device(device).type} was passed")
        if kind == "cuda":
            _C._cuda_init()  # PyTorch's errors where there is no GPU
        dev = kind if device is None else device
        if not args:
            return _ops.empty((0,), dtype=cls.dtype, device=dev)
        if len(args) == 1 and isinstance(args[0], Tensor):
            t = args[0]
            if t.dtype is not cls.dtype or t.device.type != kind:
                raise TypeError(f"{cls.__module__}.{cls.__name__}(): expected a {kind} tensor of dtype {cls.dtype}, "
                                f"got a {t.device.type} tensor of dtype {t.dtype}")
            return t
        if len(args) == 1 and isinstance(args[0], Size):
            return _ops.empty(tuple(args[0]), dtype=cls.dtype, device=dev)
        if all(isinstance(a, numbers.Integral) and not isinstance(a, bool) for a in args):
            return _ops.empty(tuple(int(a) for a in args), dtype=cls.dtype, device=dev)
        if len(args) == 1 and not isinstance(args[0], (numbers.Number, str, bytes)):
            return _ops.tensor(args[0], dtype=cls.dtype, device=dev)
        if len(args) == 1:
            raise TypeError(f"new(): data must be a sequence (got {type(args[0]).__name__})")
        raise TypeError(f"{cls.__name__}() received an invalid combination of arguments - got "
                        f"({', '.join(type(a).__name__ for a in args)}): expected sizes (ints), a Size, data "
                        "(a sequence) or a tensor")


def _make(name, dtype, device_type="cpu"):
    module = "ember" if device_type == "cpu" else "ember." + device_type
    doc = (f"Legacy tensor type: {name}(sizes) or {name}(data) makes a {device_type} {dtype} tensor; isinstance "
           "tests the dtype and the device type.")
    return _LegacyTensorType(name, (), {"dtype": dtype, "device_type": device_type, "__module__": module,
                                        "__doc__": doc})


_NAMES = {"FloatTensor": _C.float32, "DoubleTensor": _C.float64, "HalfTensor": _C.float16,
          "BFloat16Tensor": _C.bfloat16, "LongTensor": _C.int64, "IntTensor": _C.int32, "ShortTensor": _C.int16,
          "CharTensor": _C.int8, "ByteTensor": _C.uint8, "BoolTensor": _C.bool}


def _types_for(device_type):
    """name -> legacy type, for ember (cpu) and ember.cuda."""
    return {n: _make(n, d, device_type) for n, d in _NAMES.items()}


_BY_DEVICE = {"cpu": _types_for("cpu"), "cuda": _types_for("cuda")}  # ember.cuda re-exports the second
(FloatTensor, DoubleTensor, HalfTensor, BFloat16Tensor, LongTensor, IntTensor, ShortTensor, CharTensor, ByteTensor,
 BoolTensor) = _BY_DEVICE["cpu"].values()


def _type_of(dtype, device_type):
    """The legacy type of a dtype on a device type (None when there is none)."""
    return next((t for t in _BY_DEVICE.get(device_type, {}).values() if t.dtype is dtype), None)
