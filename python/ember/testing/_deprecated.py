"""assert_allclose: the pre-1.12 comparison, kept (with torch's FutureWarning) for old test code."""
import functools
import warnings

from .. import _C
from ._comparison import assert_close

__all__ = ["assert_allclose"]

# its own defaults, looser than assert_close's for float32 and float16
_ALLCLOSE_TOLERANCES = {_C.float16: (1e-3, 1e-3), _C.float32: (1e-4, 1e-5), _C.float64: (1e-5, 1e-8)}

_MESSAGE = ("`torch.testing.assert_allclose()` is deprecated since 1.12 and will be removed in a future release. "
            "Please use `torch.testing.assert_close()` instead. You can find detailed upgrade instructions in "
            "https://github.com/pytorch/pytorch/issues/61844.")


def _deprecated(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        warnings.warn(_MESSAGE, FutureWarning, stacklevel=2)
        return fn(*args, **kwargs)
    wrapper.__deprecated__ = _MESSAGE
    return wrapper


@_deprecated
def assert_allclose(actual, expected, rtol=None, atol=None, equal_nan=True, msg=""):
    """assert_close with NaNs equal by default, dtypes not checked (expected takes actual's dtype when
    it is not a tensor) and the tolerances of the old API."""
    if not isinstance(actual, _C.TensorBase):
        actual = _C._ops.tensor(actual)
    if not isinstance(expected, _C.TensorBase):
        expected = _C._ops.tensor(expected, dtype=actual.dtype)
    if rtol is None and atol is None:
        pairs = [_ALLCLOSE_TOLERANCES.get(t.dtype, (0.0, 0.0)) for t in (actual, expected)]
        rtol, atol = max(p[0] for p in pairs), max(p[1] for p in pairs)
    assert_close(actual, expected, rtol=rtol, atol=atol, equal_nan=equal_nan, check_device=True, check_dtype=False,
                 check_stride=False, msg=msg or None)
