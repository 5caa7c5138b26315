"""ember.testing.make_tensor: random tensors for tests, with torch.testing's ranges and options."""
import math
import warnings

from .. import _C
from .._C import _ops

_INTEGRAL = (_C.uint8, _C.int8, _C.int16, _C.int32, _C.int64)


def _shape(shape):
    if len(shape) == 1 and not isinstance(shape[0], int):
        return tuple(shape[0])
    return tuple(shape)


def _dtype_bounds(dtype):
    from .._dtype_info import finfo, iinfo
    if dtype is _C.bool:
        return 0, 2
    info = iinfo(dtype) if dtype in _INTEGRAL else finfo(dtype)
    return info.min, info.max


def _range(dtype, low, high, default_low, default_high):
    """low/high, defaulted, checked (not NaN, low < high) and clamped to what `dtype` represents."""
    low = default_low if low is None else low
    high = default_high if high is None else high
    if (isinstance(low, float) and math.isnan(low)) or (isinstance(high, float) and math.isnan(high)):
        raise ValueError(f"`low` and `high` cannot be NaN, but got low={low} and high={high}")
    if low == high and dtype.is_floating_point:
        warnings.warn("Passing `low==high` to `ember.testing.make_tensor` for floating point types is deprecated "
                      "since 2.1 and will be removed in 2.3. Use `ember.full(...)` instead.", FutureWarning,
                      stacklevel=3)
    elif low >= high:
        raise ValueError(f"`low` must be less than `high`, but got {low} >= {high}")
    lo, hi = _dtype_bounds(dtype)
    return max(low, lo), min(high, hi)


def make_tensor(*shape, dtype, device, low=None, high=None, requires_grad=False, noncontiguous=False,
                exclude_zero=False, memory_format=None):
    """A tensor of `shape` filled with values from [low, high): by default [0, 2) for bool, [0, 10) for
    uint8, [-9, 10) for other integers and [-9, 9) for floating types. low/high are clamped to the
    dtype's range; integer bounds round up. noncontiguous=True gives a non-contiguous tensor (when it
    has more than one element); exclude_zero replaces zeros by 1 (integers, bool) or the dtype's
    smallest positive normal number (floating types)."""
    shape = _shape(shape)
    if noncontiguous and memory_format is not None:
        raise ValueError(f"The parameters `noncontiguous` and `memory_format` are mutually exclusive, but got "
                         f"noncontiguous={noncontiguous} and memory_format={memory_format}")
    if requires_grad and not (dtype.is_floating_point or dtype.is_complex):
        raise ValueError(f"`requires_grad=True` is not supported for boolean and integral dtypes, but got "
                         f"dtype={dtype}")
    if dtype not in _DTYPES:
        raise TypeError(f"The requested dtype '{dtype}' is not supported by ember.testing.make_tensor().")
    # noncontiguous: draw twice the last dim, then keep every other column
    draw = shape[:-1] + (shape[-1] * 2,) if noncontiguous and shape and math.prod(shape) > 1 else shape
    if dtype is _C.bool:
        low, high = (0, 2) if low is None and high is None else _range(dtype, low, high, 0, 2)
        result = _ops.randint(int(low), int(high), draw, dtype=_C.int64, device=device).to(_C.bool)
    elif dtype in _INTEGRAL:
        low, high = _range(dtype, low, high, 0 if dtype is _C.uint8 else -9, 10)
        result = _ops.randint(math.ceil(low), math.ceil(high), draw, dtype=dtype, device=device)
    else:
        low, high = _range(dtype, low, high, -9, 9)
        # uniform in [low, high), in float64 and as (1 - u) * low + u * high so that bounds near the
        # dtype's limits do not overflow the span
        # (a complex dtype: its real and imaginary parts each so)
        parts = draw + (2,) if dtype.is_complex else draw
        u = _ops.rand(parts, dtype=_C.float64, device=device)
        result = (u * high + (1 - u) * low).clamp(low, high)
        result = _ops.view_as_complex(result).to(dtype) if dtype.is_complex else result.to(dtype)
    if draw != shape:
        result = result[..., ::2]
    if exclude_zero:
        if dtype is _C.bool or dtype in _INTEGRAL:
            replacement = 1
        else:
            from .._dtype_info import finfo
            replacement = finfo(dtype).tiny
        result = _ops.masked_fill(result, _ops.eq(result, 0), replacement)
    if memory_format is not None:
        result = result.clone(memory_format=memory_format)
    if requires_grad:
        result.requires_grad_(True)
    return result


_DTYPES = (_C.bool,) + _INTEGRAL + (_C.float16, _C.bfloat16, _C.float32, _C.float64, _C.complex64, _C.complex128)
