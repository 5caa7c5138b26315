"""Closeness and equality of tensors: isclose, allclose, equal (functions and Tensor methods),
composed from elementwise ops. isclose tests |input - other| <= atol + rtol * |other| elementwise,
broadcasting its inputs, which must share a dtype; integer and bool inputs are compared in the
default float dtype (PyTorch's rule), and with zero tolerances the test is plain equality."""
import builtins

from . import _C
from ._C import _ops
from ._tensor import Tensor


def _check_tensor(fn, name, pos, x):
    if not isinstance(x, _C.TensorBase):
        where = f"(position {pos})" if pos else ""
        raise TypeError(f"{fn}(): argument '{name}' {where} must be Tensor, not {type(x).__name__}".replace(" ()", ""))


def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """Elementwise test that input is close to other (within rtol and atol)."""
    return _isclose("isclose", input, other, rtol, atol, equal_nan)


def _isclose(fn, input, other, rtol, atol, equal_nan):
    _check_tensor(fn, "input", 1, input)
    _check_tensor(fn, "other", 2, other)
    if not isinstance(equal_nan, builtins.bool):
        raise TypeError(f"{fn}(): argument 'equal_nan' must be bool, not {type(equal_nan).__name__}")
    if input.dtype != other.dtype:
        raise RuntimeError(f"{input.dtype._cname()} did not match {other.dtype._cname()}")
    if rtol < 0:
        raise RuntimeError(f"rtol must be greater than or equal to zero, but got {rtol:g}")
    if atol < 0:
        raise RuntimeError(f"atol must be greater than or equal to zero, but got {atol:g}")
    close = _ops.eq(input, other)
    floating = input.dtype.is_floating_point or input.dtype.is_complex
    if equal_nan and floating:
        close = _ops.logical_or(close, _ops.logical_and(_ops.isnan(input), _ops.isnan(other)))
    if rtol == 0 and atol == 0:
        return close
    if not floating:  # integers and bools are compared in the default float dtype
        default = _C.get_default_dtype()
        input, other = input.to(default), other.to(default)
    allowed = _ops.add(_ops.abs(_ops.mul(other, rtol)), atol)
    actual = _ops.abs(_ops.sub(input, other))
    # a finite error within tolerance; inf == inf was already caught by the equality above
    return _ops.logical_or(close, _ops.logical_and(_ops.isfinite(actual), _ops.le(actual, allowed)))


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """True when every element of input is close to other (within rtol and atol)."""
    return builtins.bool(_isclose("allclose", input, other, rtol, atol, equal_nan).all().item())


def equal(input, other):
    """True when both have the same shape and the same values (NaN never equals NaN); dtypes may differ."""
    _check_tensor("equal", "input", 1, input)
    _check_tensor("equal", "other", 2, other)
    if input.is_meta or other.is_meta:  # a value answer, and meta tensors have no values
        raise NotImplementedError("aten::equal: cannot run on meta tensors (they have no data to compare)")
    if tuple(input.shape) != tuple(other.shape):
        return False
    return builtins.bool(_ops.eq(input, other).all().item())


Tensor.isclose = isclose
Tensor.allclose = allclose
Tensor.equal = equal
