"""ember.testing.assert_close: compares tensors, NumPy arrays, Python scalars and (nested) sequences
and mappings of them, with PyTorch's per-dtype default tolerances and failure messages."""
import collections.abc
import math
import numbers

from .. import _C
from .._C import _ops

# (rtol, atol) per dtype when neither is given, as PyTorch's; exact for integers and bool
_DEFAULT_TOLERANCES = {_C.float16: (1e-3, 1e-5), _C.bfloat16: (1.6e-2, 1e-5), _C.float32: (1.3e-6, 1e-5),
                       _C.float64: (1e-7, 1e-7), _C.complex64: (1.3e-6, 1e-5), _C.complex128: (1e-7, 1e-7)}


class _Mismatch(Exception):
    """A failed comparison; its message becomes the AssertionError's (or goes through `msg`)."""


def _unsupported(actual, expected):
    return TypeError(f"No comparison pair was able to handle inputs of type {type(actual)} and {type(expected)}.")


def _is_numpy_array(x):
    return type(x).__module__ == "numpy" and type(x).__name__ == "ndarray"


def _is_tensor_like(x):
    return isinstance(x, _C.TensorBase) or _is_numpy_array(x)


def _tolerances(dtypes, rtol, atol):
    if rtol is not None:
        return rtol, atol
    pairs = [_DEFAULT_TOLERANCES.get(d, (0.0, 0.0)) for d in dtypes]
    return max(p[0] for p in pairs), max(p[1] for p in pairs)


def _header(identifier, rtol, atol):
    return f"{identifier} are not {'equal' if rtol == 0 and atol == 0 else 'close'}!\n\n"


def _allowed(tol, rtol, atol):
    return "" if rtol == 0 and atol == 0 else f" (up to {tol} allowed)"


def _scalar_message(actual, expected, rtol, atol):
    abs_diff = abs(actual - expected)
    rel_diff = math.inf if expected == 0 and abs_diff != 0 else (abs_diff / abs(expected) if expected != 0 else 0)
    if isinstance(abs_diff, float) and math.isnan(abs_diff):
        rel_diff = math.nan
    return (_header("Scalars", rtol, atol) + f"Expected {expected} but got {actual}.\n"
            f"Absolute difference: {abs_diff}{_allowed(atol, rtol, atol)}\n"
            f"Relative difference: {rel_diff}{_allowed(rtol, rtol, atol)}")


def _scalars_close(actual, expected, rtol, atol, equal_nan):
    if actual == expected:
        return True
    if isinstance(actual, float) or isinstance(expected, float):
        if math.isnan(actual) or math.isnan(expected):
            return equal_nan and math.isnan(actual) and math.isnan(expected)
        if math.isinf(actual) or math.isinf(expected):
            return False
    return abs(actual - expected) <= atol + rtol * abs(expected)


def _compare_numbers(actual, expected, rtol, atol, equal_nan, check_dtype):
    if check_dtype and type(actual) is not type(expected):
        raise _Mismatch(f"The (d)types do not match: {type(actual)} != {type(expected)}.")
    if rtol is None:
        floating = isinstance(actual, float) or isinstance(expected, float)
        rtol, atol = _DEFAULT_TOLERANCES[_C.float64] if floating else (0, 0)
    if not _scalars_close(actual, expected, rtol, atol, equal_nan):
        raise _Mismatch(_scalar_message(actual, expected, rtol, atol))


def _unravel(flat, shape):
    idx = []
    for s in reversed(shape):
        idx.append(flat % s)
        flat //= s
    return tuple(reversed(idx))


def _tensor_message(actual, expected, matches, rtol, atol):
    total = matches.numel()
    mismatched = total - int(matches.sum().item())
    a, e, m = actual.reshape(-1), expected.reshape(-1), matches.reshape(-1)
    if not (a.dtype.is_floating_point or a.dtype.is_complex):  # exact differences for integers and bools
        a, e = a.to(_C.int64), e.to(_C.int64)
    abs_diff = _ops.abs(_ops.sub(a, e))
    abs_diff = _ops.masked_fill(abs_diff, m, 0)
    rel_diff = _ops.masked_fill(_ops.div(abs_diff, _ops.abs(e)), m, 0)
    lines = [f"Mismatched elements: {mismatched} / {total} ({mismatched / total:.1%})"]
    for name, diff, tol in (("absolute", abs_diff, atol), ("relative", rel_diff, rtol)):
        # NaN counts as the greatest difference, as in PyTorch's max
        nan = _ops.isnan(diff) if diff.dtype.is_floating_point else None
        if nan is not None and bool(nan.any().item()):
            flat = int(_ops.argmax(nan.to(_C.int32)).item())
        else:
            flat = int(_ops.argmax(diff).item())
        lines.append(f"Greatest {name} difference: {diff[flat].item()} at index {_unravel(flat, actual.shape)}"
                     f"{_allowed(tol, rtol, atol)}")
    return _header("Tensor-likes", rtol, atol) + "\n".join(lines)


def _compare_tensors(actual, expected, rtol, atol, equal_nan, check_dtype, check_stride, allow_subclasses):
    if _is_numpy_array(actual) != _is_numpy_array(expected):
        raise _unsupported(actual, expected)
    if not allow_subclasses and type(actual) is not type(expected):
        raise _unsupported(actual, expected)
    if _is_numpy_array(actual):
        actual, expected = _C.from_numpy(actual), _C.from_numpy(expected)
    actual, expected = actual.detach(), expected.detach()
    checks = [("shape", actual.shape, expected.shape)]
    if check_dtype:
        checks.append(("dtype", actual.dtype, expected.dtype))
    if check_stride:
        checks.append(("stride()", actual.stride(), expected.stride()))
    for name, a, e in checks:
        if a != e:
            raise _Mismatch(f"The values for attribute '{name}' do not match: {a} != {e}.")
    rtol, atol = _tolerances((actual.dtype, expected.dtype), rtol, atol)
    if actual.dtype != expected.dtype:
        common = _C.promote_types(actual.dtype, expected.dtype)
        actual, expected = actual.to(common), expected.to(common)
    from .._comparison import isclose
    matches = isclose(actual, expected, rtol=rtol, atol=atol, equal_nan=equal_nan)
    if bool(matches.all().item()):
        return
    if actual.dim() == 0:
        raise _Mismatch(_scalar_message(actual.item(), expected.item(), rtol, atol))
    raise _Mismatch(_tensor_message(actual, expected, matches, rtol, atol))


def _compare(actual, expected, path, opts):
    try:
        if actual is None or expected is None:
            if actual is not expected:
                raise _Mismatch(f"None mismatch: {actual} is not {expected}")
        elif _is_tensor_like(actual) or _is_tensor_like(expected):
            if not (_is_tensor_like(actual) and _is_tensor_like(expected)):
                raise _unsupported(actual, expected)
            _compare_tensors(actual, expected, opts["rtol"], opts["atol"], opts["equal_nan"], opts["check_dtype"],
                             opts["check_stride"], opts["allow_subclasses"])
        elif isinstance(actual, bool) and isinstance(expected, bool):
            if actual is not expected:
                raise _Mismatch(f"Booleans mismatch: {actual} is not {expected}")
        elif isinstance(actual, numbers.Number) and isinstance(expected, numbers.Number) and not (
                isinstance(actual, bool) or isinstance(expected, bool)):
            _compare_numbers(actual, expected, opts["rtol"], opts["atol"], opts["equal_nan"], opts["check_dtype"])
        elif isinstance(actual, collections.abc.Mapping) and isinstance(expected, collections.abc.Mapping):
            missing = [k for k in expected if k not in actual]
            extra = [k for k in actual if k not in expected]
            if missing or extra:
                lines = ["The keys of the mappings do not match:"]
                if missing:
                    lines.append(f"Missing keys in the actual mapping: {sorted(missing, key=repr)}")
                if extra:
                    lines.append(f"Additional keys in the actual mapping: {sorted(extra, key=repr)}")
                raise _Mismatch("\n".join(lines))
            for k in expected:
                _compare(actual[k], expected[k], path + f"[{k!r}]", opts)
        elif _is_sequence(actual) and _is_sequence(expected):
            if len(actual) != len(expected):
                raise _Mismatch(f"The length of the sequences mismatch: {len(actual)} != {len(expected)}")
            for i, (a, e) in enumerate(zip(actual, expected)):
                _compare(a, e, path + f"[{i}]", opts)
        else:
            raise _unsupported(actual, expected)
    except _Mismatch as m:
        if path and not getattr(m, "located", False):
            m = _Mismatch(f"{m}\n\nThe failure occurred for item {path}")
            m.located = True
        raise m from None


def _is_sequence(x):
    return isinstance(x, collections.abc.Sequence) and not isinstance(x, (str, bytes))


def assert_close(actual, expected, *, allow_subclasses=True, rtol=None, atol=None, equal_nan=False,
                 check_device=True, check_dtype=True, check_layout=True, check_stride=False, msg=None):
    """Raises AssertionError unless `actual` and `expected` are close: same shape (and dtype, with
    check_dtype), and elementwise |actual - expected| <= atol + rtol * |expected|. Without rtol/atol
    the tolerances are the larger defaults of the two dtypes (zero for integers and bool)."""
    if (rtol is None) != (atol is None):
        raise ValueError(f"Both 'rtol' and 'atol' must be either specified or omitted, but got no "
                         f"{'rtol' if rtol is None else 'atol'}.")
    opts = dict(rtol=rtol, atol=atol, equal_nan=equal_nan, check_dtype=check_dtype, check_stride=check_stride,
                allow_subclasses=allow_subclasses)
    try:
        _compare(actual, expected, "", opts)
    except _Mismatch as m:
        message = str(m)
        if callable(msg):
            message = msg(message)
        elif msg is not None:
            message = msg
        raise AssertionError(message) from None
