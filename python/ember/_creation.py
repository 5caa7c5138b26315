"""Tensor constructors of torch's top level written in Python: asarray, scalar_tensor, empty_strided,
empty_permuted, fill, randint_like, range, from_file and the signal windows (bartlett, blackman,
hamming, hann, kaiser)."""
import builtins  # this module defines torch.range, which hides the builtin
import math
import numbers
import os
import warnings

from . import _C
from ._C import _ops
from ._flags import is_warn_always_enabled
from ._tensor import Tensor
from ._utils import _checked_device

_SCALAR_TYPE_NAMES = {"float32": "Float", "float64": "Double", "float16": "Half", "bfloat16": "BFloat16",
                      "int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte",
                      "bool": "Bool"}


def _on(device, t):
    """t on `device` (a checked device or None): the constructors here build on the CPU, then move once."""
    return t if device is None or device.type == "cpu" else t.to(device)


def _pinned(t, pin_memory):
    return t.pin_memory() if pin_memory else t


def _leaf(t, requires_grad):
    return t.requires_grad_(True) if requires_grad else t


def scalar_tensor(s, *, dtype=None, layout=None, device=None, pin_memory=False, requires_grad=False):
    """A 0-d tensor holding the number s, of the default float dtype unless dtype is given."""
    if isinstance(s, _C.TensorBase):
        if s.dim() != 0:
            raise TypeError("scalar_tensor(): argument 's' (position 1) must be Number, not Tensor")
        s = s.item()
    if not isinstance(s, numbers.Number):
        raise TypeError(f"scalar_tensor(): argument 's' (position 1) must be Number, not {type(s).__name__}")
    return _ops.full((), s, dtype=dtype or _C.get_default_dtype(), device=_checked_device(device),
                     pin_memory=pin_memory, requires_grad=requires_grad)


def empty_strided(size, stride, *, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False):
    """An uninitialised tensor with the given sizes and strides over a storage just large enough for them."""
    size, stride = list(size), list(stride)
    if len(size) != len(stride):
        raise RuntimeError(f"dimensionality of sizes ({len(size)}) must match dimensionality of strides "
                           f"({len(stride)})")
    for s in size:
        if s < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: {size}")
    if any(st < 0 for st in stride):
        raise RuntimeError(f"Storage size calculation overflowed with sizes={size} and strides={stride}")
    n = 0 if 0 in size else 1 + sum((s - 1) * st for s, st in zip(size, stride))
    base = _ops.empty((n,), dtype=dtype, device=_checked_device(device), pin_memory=pin_memory, requires_grad=False)
    return _leaf(base.as_strided(size, stride, 0), requires_grad)


def empty_permuted(size, physical_layout, *, dtype=None, layout=None, device=None, requires_grad=False,
                   pin_memory=False):
    """An uninitialised tensor of logical shape `size` whose memory holds dims in the order
    physical_layout (outermost first): empty_permuted((N, C, H, W), (0, 2, 3, 1)) is channels-last."""
    size, order = list(size), list(physical_layout)
    if len(size) != len(order):
        raise RuntimeError("Number of dimensions in size does not match the length of the physical_layout; i.e. "
                           f"len(size) = {len(size)} is not equal to len(physical_layout) = {len(order)}")
    if sorted(order) != list(builtins.range(len(order))):
        raise RuntimeError("Duplicate dim not allowed" if len(set(order)) != len(order)
                           else f"Dimension out of range (got physical_layout {order})")
    physical = _ops.empty([size[d] for d in order], dtype=dtype, device=_checked_device(device), pin_memory=pin_memory)
    inverse = [order.index(d) for d in builtins.range(len(order))]
    return _leaf(physical.permute(*inverse), requires_grad)


def fill(input, value):
    """A new tensor like input with every element set to value (a number or a 0-d tensor): the
    gradient reaches a tensor value and not input, as in PyTorch."""
    if isinstance(value, _C.TensorBase):
        if value.dim() != 0:
            raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor with {value.dim()} "
                               "dimensions.")
        # where() with an all-false mask: input's gradient is zero, value's the sum, no NaN from input
        return _ops.where(_ops.zeros(tuple(input.shape), dtype=_C.bool), input, value.to(input.dtype))
    return _ops.full_like(input, value, dtype=input.dtype)


def randint_like(input, low=0, high=None, *, generator=None, dtype=None, layout=None, device=None,
                 requires_grad=False, memory_format=None):
    """Integers uniform in [low, high) in input's shape: randint_like(input, high) or (input, low, high);
    input's dtype unless dtype is given."""
    if high is None:
        low, high = 0, low
    if isinstance(high, _C.TensorBase):
        high = int(high.item())
    if isinstance(low, _C.TensorBase):
        low = int(low.item())
    return _ops.randint(low, high, tuple(input.shape), generator=generator, dtype=dtype or input.dtype,
                        device=_checked_device(device) if device is not None else input.device,
                        requires_grad=requires_grad)


def _window(name, window_length, periodic, dtype, device, requires_grad, values, pin_memory=False):
    """Shared checks and the periodic trick: a periodic window of length N is the symmetric one of
    length N + 1 without its last point. `values(n, N)` computes the symmetric window in float64."""
    if not isinstance(window_length, int) or isinstance(window_length, bool):
        raise TypeError(f"{name}(): argument 'window_length' (position 1) must be int, not "
                        f"{type(window_length).__name__}")
    dtype = dtype or _C.get_default_dtype()
    if not dtype.is_floating_point:
        raise RuntimeError(f"{name} expects floating point dtypes, got: {dtype}")
    if window_length < 0:
        raise RuntimeError(f"{name} requires non-negative window_length, got window_length={window_length}")
    device = _checked_device(device)
    if window_length <= 1:
        w = _ops.ones((window_length,), dtype=dtype)
    else:
        n = window_length + 1 if periodic else window_length
        w = values(_ops.arange(n, dtype=_C.float64), n)[:window_length].to(dtype)
    return _leaf(_pinned(_on(device, w), pin_memory), requires_grad)


def _cosine_sum(coefficients):
    """sum_k (-1)^k a_k cos(2 pi k n / (N - 1)): the generalized cosine windows."""
    def values(n, size):
        phase = n * (2 * math.pi / (size - 1))
        w = _ops.full(tuple(n.shape), coefficients[0], dtype=_C.float64)
        for k, a in enumerate(coefficients[1:], 1):
            w = w + (-1) ** k * a * (phase * k).cos()
        return w
    return values


def hann_window(window_length, periodic=True, *, dtype=None, layout=None, device=None, pin_memory=False,
                requires_grad=False):
    """The Hann window 0.5 - 0.5 cos(2 pi n / (N - 1)) (periodic: N = window_length + 1)."""
    return _window("hann_window", window_length, periodic, dtype, device, requires_grad, _cosine_sum((0.5, 0.5)),
                   pin_memory)


def hamming_window(window_length, periodic=True, alpha=0.54, beta=0.46, *, dtype=None, layout=None, device=None,
                   pin_memory=False, requires_grad=False):
    """The Hamming window alpha - beta cos(2 pi n / (N - 1)) (periodic: N = window_length + 1)."""
    return _window("hamming_window", window_length, periodic, dtype, device, requires_grad,
                   _cosine_sum((alpha, beta)), pin_memory)


def blackman_window(window_length, periodic=True, *, dtype=None, layout=None, device=None, pin_memory=False,
                    requires_grad=False):
    """The Blackman window 0.42 - 0.5 cos(2 pi n / (N - 1)) + 0.08 cos(4 pi n / (N - 1))."""
    return _window("blackman_window", window_length, periodic, dtype, device, requires_grad,
                   _cosine_sum((0.42, 0.5, 0.08)), pin_memory)


def bartlett_window(window_length, periodic=True, *, dtype=None, layout=None, device=None, pin_memory=False,
                    requires_grad=False):
    """The triangle 1 - |2n / (N - 1) - 1|."""
    return _window("bartlett_window", window_length, periodic, dtype, device, requires_grad,
                   lambda n, size: 1 - (n * (2 / (size - 1)) - 1).abs(), pin_memory)


def kaiser_window(window_length, periodic=True, beta=12.0, *, dtype=None, layout=None, device=None,
                  pin_memory=False, requires_grad=False):
    """I0(beta sqrt(1 - ((n - c) / c)^2)) / I0(beta) with c = (N - 1) / 2."""
    def values(n, size):
        c = (size - 1) / 2
        r = ((n - c) / c).square()
        return _ops.i0(beta * (1 - r).clamp(min=0).sqrt()) / _ops.i0(_ops.tensor(float(beta), dtype=_C.float64))
    return _window("kaiser_window", window_length, periodic, dtype, device, requires_grad, values, pin_memory)


def range(start=0, end=None, step=1, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    """Values start, start + step, ... up to and including end (deprecated in PyTorch for arange,
    whose end is excluded); the default float dtype unless dtype is given."""
    warnings.warn("torch.range is deprecated and will be removed in a future release because its behavior is "
                  "inconsistent with Python's range builtin. Instead, use torch.arange, which produces values in "
                  "[start, end).", UserWarning, stacklevel=2)
    if end is None:
        raise TypeError('range() missing 1 required positional arguments: "end"')
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if (step > 0 and end < start) or (step < 0 and start < end):
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    device = _checked_device(device)
    n = int(math.floor((end - start) / step)) + 1
    dtype = dtype or _C.get_default_dtype()
    # start + i * step in double, then cast: exact ends for the usual integral and binary-fraction steps
    values = _ops.arange(n, dtype=_C.float64) * step + start
    result = values.to(dtype)
    if out is not None:
        return _ops.where(_ops.tensor(True), result, result, out=out)
    return _leaf(_on(device, result), requires_grad)


def from_file(filename, shared=None, size=0, *, dtype=None, layout=None, device=None, pin_memory=False,
              requires_grad=False):
    """A 1-d tensor of `size` elements read from the start of a file: with shared=True the tensor maps
    the file (writes go to the file); otherwise it is a private copy."""
    import numpy as np
    device = _checked_device(device)
    if shared and device is not None and device.type != "cpu":
        raise RuntimeError(f"from_file: shared=True maps the file into host memory; it cannot be on {device}")
    dtype = dtype or _C.get_default_dtype()
    nbytes = size * dtype.itemsize
    try:
        available = os.path.getsize(filename)
    except OSError as e:
        mode = "read-write" if shared else "read-only"
        raise RuntimeError(f"unable to open file <{filename}> in {mode} mode: {e.strerror} ({e.errno})") from None
    if available < nbytes:
        raise RuntimeError(f"file <{filename}> size <{available}> is smaller than the required mapping size "
                           f"<{nbytes}>")
    if size == 0:
        return _leaf(_pinned(_on(device, _ops.empty((0,), dtype=dtype)), pin_memory), requires_grad)
    if shared:
        raw = np.memmap(filename, dtype=np.uint8, mode="r+", shape=(nbytes,)).view(np.ndarray)  # keeps the map
    else:
        raw = np.fromfile(filename, dtype=np.uint8, count=nbytes)
    return _leaf(_pinned(_on(device, _C.from_numpy(raw).view(dtype)), pin_memory), requires_grad)


def _tensor_new(self, *args, device=None):
    """Tensor.new: the legacy constructor of self's type (sizes, a Size, data, or a tensor of the same
    dtype), as ember.FloatTensor(...) is for float32."""
    from . import _legacy_types
    kind = self.device.type if device is None else _C.device(device).type
    cls = _legacy_types._type_of(self.dtype, kind)
    if cls is None:
        raise TypeError(f"new(): no legacy tensor type for dtype {self.dtype} on {kind}")
    return cls(*args, device=device if device is not None else self.device)


_warned_requires_grad = []


def _is_buffer(obj):
    if isinstance(obj, (list, tuple, str, numbers.Number)) or obj is None:
        return False
    try:
        memoryview(obj)
    except TypeError:
        return False
    return True


def _buffer_tensor(obj, dtype):
    from ._functional import frombuffer
    return frombuffer(obj, dtype=dtype or _C.get_default_dtype())


def asarray(obj, *, dtype=None, device=None, copy=None, requires_grad=None):
    """obj as a tensor, sharing its memory when it can: a tensor, NumPy array or scalar, DLPack
    capsule owner or buffer (bytes, bytearray, array.array, memoryview: read as `dtype`, by default
    the default dtype) is aliased unless dtype/device differ; other sequences and numbers are
    copied. copy=True always copies; copy=False raises where aliasing is impossible.
    requires_grad=None keeps obj's; True/False sets it (on obj itself when obj is returned)."""
    device = _checked_device(device)
    tensor = None
    if isinstance(obj, _C.TensorBase):
        tensor = obj
    elif type(obj).__module__ == "numpy":
        import numpy as np
        if isinstance(obj, (np.ndarray, np.generic)):
            tensor = _C.from_numpy(np.asarray(obj))
    elif hasattr(obj, "__dlpack__"):
        tensor = _C.from_dlpack(obj)
    elif _is_buffer(obj):
        tensor = _buffer_tensor(obj, dtype)
    if tensor is None:
        if copy is False:
            raise ValueError("can't alias arbitrary sequence into a tensor.")
        if isinstance(obj, str):
            raise TypeError("new(): invalid data type 'str'")
        if obj is None:
            raise RuntimeError("Could not infer dtype of NoneType")
        tensor = _ops.tensor(obj, dtype=dtype)
    elif dtype is not None and tensor.dtype != dtype:
        if copy is False:
            raise ValueError(f"can't alias tensor with dtype '{_SCALAR_TYPE_NAMES[str(tensor.dtype).split('.')[-1]]}' "
                             f"into dtype '{_SCALAR_TYPE_NAMES[str(dtype).split('.')[-1]]}'.")
        tensor = tensor.to(dtype)  # a copy that keeps the autograd graph, as PyTorch's
    elif copy:
        tensor = tensor.clone()
    if device is not None and (device.type != tensor.device.type or
                               (device.index is not None and device.index != tensor.device.index)):
        if copy is False:
            raise ValueError(f"can't alias tensor on {tensor.device} into a tensor on {device}.")
        tensor = tensor.to(device)
    if requires_grad is None:
        if tensor is obj and tensor.requires_grad and (not _warned_requires_grad or is_warn_always_enabled()):
            _warned_requires_grad.append(True)
            warnings.warn("torch.asarray: unspecified requires_grad now defaults to obj.requires_grad instead of "
                          "False. Pass requires_grad=False explicitly to get the old behavior and silence this "
                          "warning.", UserWarning, stacklevel=2)
    elif requires_grad and not tensor.requires_grad:
        tensor.requires_grad_(True)
    elif not requires_grad and tensor.requires_grad:
        tensor = tensor.requires_grad_(False) if tensor.is_leaf else tensor.detach()
    return tensor


__all__ = [
    "asarray", "range", "from_file", "scalar_tensor", "empty_strided", "empty_permuted", "fill", "randint_like",
    "bartlett_window", "blackman_window", "hamming_window", "hann_window", "kaiser_window"
]

Tensor.new = _tensor_new
