"""The masked ops of ember.masked (see the package's docstring)."""
import math

from .. import _C
from .._C import _ops
from .._dtype_info import iinfo
from .._utils import strided
from ..linalg import vector_norm
from ..nn import functional as F

_SMALL_INTS = (_C.uint8, _C.bool, _C.int8, _C.int16, _C.int32)  # sum/prod promote them to int64, as torch.sum


def _strided(input, name):
    if input.layout != strided:
        raise ValueError(f"masked {name} expects strided tensor (got {input.layout} tensor)")


def _dims(dim, ndim):
    """dim as a sorted tuple of non-negative dims; None and () mean every dim."""
    if dim is None or dim == ():
        return tuple(range(ndim))
    ndim = max(ndim, 1)
    seen = []
    for d in ((dim,) if isinstance(dim, int) else dim):
        if d in seen:
            raise RuntimeError(f"dim={d} appears multiple times in the list of dims")
        if not -ndim <= d < ndim:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-ndim}, {ndim - 1}], but got {d})")
        seen.append(d)
    return tuple(sorted(d % ndim for d in seen))


def _input_mask(input, mask):
    """mask broadcast to input's shape, as bool."""
    if tuple(mask.shape) != tuple(input.shape):
        if mask.dim() > input.dim():
            raise IndexError("_input_mask expected broadcastable mask (got mask dimensionality higher than of the "
                             "input)")
        mask = _ops.broadcast_to(mask, list(input.shape))
    return mask.to(_C.bool)


def _identity(op, input, ord=None):
    """The value op ignores (op(identity, x) == x) in input's dtype, or None where there is none."""
    dt = input.dtype
    floating, integral = input.is_floating_point(), not (input.is_floating_point() or input.is_complex())
    lowest = highest = None
    if integral and dt != _C.bool:
        info = iinfo(dt)
        lowest, highest = info.min, info.max
    if op in ("sum", "cumsum"):
        value = 0
    elif op in ("prod", "cumprod"):
        value = 1
    elif op in ("amax", "argmax", "logaddexp", "logsumexp"):
        if floating or (op == "logsumexp" and input.is_complex()):
            value = -math.inf
        elif lowest is not None:
            value = lowest
        else:
            raise NotImplementedError(f"identity of {op} on {dt} input")
    elif op in ("amin", "argmin"):
        if floating:
            value = math.inf
        elif highest is not None:
            value = highest
        else:
            raise NotImplementedError(f"identity of {op} on {dt} input")
    elif op == "norm":
        value = math.inf if ord == -math.inf else 0
    elif op == "median":  # nanmedian skips NaN
        return _ops.full([], math.nan, dtype=dt if floating else _C.float32, device=input.device)
    else:
        return None
    return _ops.full([], value, dtype=dt, device=input.device)


def _filled(op, input, mask, ord=None):
    """input with its masked-out elements replaced by op's identity."""
    if mask is None:
        return input
    return _ops.where(_input_mask(input, mask), input, _identity(op, input, ord))


def _int64_if_small(input, dtype):
    if dtype is not None:
        return dtype
    return _C.int64 if input.dtype in _SMALL_INTS else input.dtype


def sum(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    """Sum of the masked-in elements over dim (all dims by default)."""
    _strided(input, "sum")
    dtype = _int64_if_small(input, dtype)
    return _ops.sum(_filled("sum", input, mask), list(_dims(dim, input.dim())), bool(keepdim), dtype=dtype)


def prod(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    """Product of the masked-in elements over dim (all dims by default)."""
    _strided(input, "prod")
    dtype = _int64_if_small(input, dtype)
    result = _filled("prod", input, mask).to(dtype)
    for d in reversed(_dims(dim, input.dim())):  # one dim at a time, last first, as torch
        result = result.prod(d, keepdim=bool(keepdim))
    return result


def cumsum(input, dim, *, dtype=None, mask=None):
    """Running sum along dim; masked-out elements count as 0."""
    _strided(input, "cumsum")
    dtype = input.dtype if dtype is None else dtype
    return _ops.cumsum(_filled("sum", input, mask), _dims(dim, input.dim())[0], dtype=dtype).to(dtype)


def cumprod(input, dim, *, dtype=None, mask=None):
    """Running product along dim; masked-out elements count as 1."""
    _strided(input, "cumprod")
    dtype = input.dtype if dtype is None else dtype
    return _ops.cumprod(_filled("prod", input, mask), _dims(dim, input.dim())[0], dtype=dtype).to(dtype)


def amax(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    """Largest masked-in element over dim (-inf, or the dtype's minimum, where all are masked out)."""
    _strided(input, "amax")
    dtype = input.dtype if dtype is None else dtype
    x = _filled("amax", input, mask)
    return _ops.amax(x, list(_dims(dim, x.dim())), bool(keepdim)).to(dtype)


def amin(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    """Smallest masked-in element over dim (inf, or the dtype's maximum, where all are masked out)."""
    _strided(input, "amin")
    dtype = input.dtype if dtype is None else dtype
    x = _filled("amin", input, mask)
    return _ops.amin(x, list(_dims(dim, x.dim())), bool(keepdim)).to(dtype)


def argmax(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    """Index of the largest masked-in element along dim, in input's dtype unless dtype says (as torch)."""
    _strided(input, "argmax")
    dtype = input.dtype if dtype is None else dtype
    return _ops.argmax(_filled("argmax", input, mask), dim, bool(keepdim)).to(dtype)


def argmin(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    """Index of the smallest masked-in element along dim, in input's dtype unless dtype says (as torch)."""
    _strided(input, "argmin")
    dtype = input.dtype if dtype is None else dtype
    return _ops.argmin(_filled("argmin", input, mask), dim, bool(keepdim)).to(dtype)


def mean(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    """Mean of the masked-in elements over dim (nan where all are masked out)."""
    _strided(input, "mean")
    source = "Input" if dtype is None else "Optional"
    dtype = input.dtype if dtype is None else dtype
    if not (dtype.is_floating_point or dtype.is_complex):
        raise ValueError(f"mean(): Could not infer output dtype. {source} dtype must be either a floating point or "
                         f"complex dtype. Got: {dtype}")
    count, total, _ = _count_and_total(input, dim, keepdim, dtype, mask)
    return total / count


def _count_and_total(input, dim, keepdim, dtype, mask):
    """(the number of masked-in elements, their sum in dtype, the broadcast bool mask or None) over dim."""
    if mask is None:
        count = sum(_ops.ones(list(input.shape), dtype=_C.int64, device=input.device), dim, keepdim=keepdim)
        return count, sum(input, dim, keepdim=keepdim, dtype=dtype), None
    inmask = _input_mask(input, mask)
    count = inmask.sum(list(_dims(dim, input.dim())), keepdim=bool(keepdim))
    return count, sum(input, dim, keepdim=keepdim, dtype=dtype, mask=inmask), inmask


def median(input, dim=-1, *, keepdim=False, dtype=None, mask=None):
    """Median of the masked-in elements along one dim (nan where all are masked out; integer inputs must
    not have such slices)."""
    _strided(input, "median")
    dtype = input.dtype if dtype is None else dtype
    d = _dims(dim, input.dim())[0]
    floating = input.is_floating_point()
    if not floating:
        input = input.to(_C.float32)
    out = _ops.nanmedian(_filled("median", input, mask), d, keepdim).values
    if floating:
        return out
    if bool(out.isnan().any()):
        raise ValueError("masked median expects no fully masked out rows if dtype is not floating point")
    return out.to(dtype)


def logsumexp(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    """log(sum(exp(x))) over the masked-in elements (-inf where all are masked out)."""
    _strided(input, "logsumexp")
    dtype = input.dtype if dtype is None else dtype
    return _ops.logsumexp(_filled("logsumexp", input, mask), list(_dims(dim, input.dim())), keepdim).to(dtype)


def logaddexp(input, other, *, dtype=None, input_mask=None, other_mask=None):
    """log(exp(input) + exp(other)), each operand's masked-out elements taken as -inf."""
    _strided(input, "logaddexp")
    _strided(other, "logaddexp")
    dtype = input.dtype if dtype is None else dtype
    return _ops.logaddexp(_filled("logaddexp", input, input_mask), _filled("logaddexp", other, other_mask)).to(dtype)


def norm(input, ord=2.0, dim=None, *, keepdim=False, dtype=None, mask=None):
    """Vector ord-norm of the masked-in elements over dim."""
    _strided(input, "norm")
    dtype = input.dtype if dtype is None else dtype
    return vector_norm(_filled("norm", input, mask, ord), ord, _dims(dim, input.dim()), bool(keepdim), dtype=dtype)


def _std_var(input, dim, unbiased, correction, keepdim, dtype, mask, sqrt):
    if unbiased is not None and correction is not None:
        raise AssertionError("Only one of unbiased and correction may be given")
    c = 1.0 if unbiased is None or unbiased else 0.0
    if correction is not None:
        c = float(correction)
    if dtype is None:
        dtype = input.dtype if (input.dtype.is_floating_point or input.dtype.is_complex) else _C.float32
    compute = dtype if (dtype.is_floating_point or dtype.is_complex) else _C.float32
    count, total, inmask = _count_and_total(input, dim, True, dtype, mask)
    x = input - total / count
    squares = sum(x * x.conj(), dim, keepdim=keepdim, dtype=compute, mask=inmask)
    if not keepdim:
        count = count.reshape(list(squares.shape))
    if c != 0:
        real = {_C.complex64: _C.float32, _C.complex128: _C.float64}.get(compute, compute)
        count = _ops.maximum(count.to(real) - c, _ops.zeros([], dtype=real, device=count.device))
    out = (squares / count).to(dtype)
    return out.sqrt() if sqrt else out


def var(input, dim=None, unbiased=None, *, correction=None, keepdim=False, dtype=None, mask=None):
    """Variance of the masked-in elements over dim (correction 1 unless unbiased=False or correction says)."""
    _strided(input, "std/var")
    return _std_var(input, dim, unbiased, correction, keepdim, dtype, mask, False)


def std(input, dim=None, unbiased=None, *, correction=None, keepdim=False, dtype=None, mask=None):
    """Standard deviation of the masked-in elements over dim."""
    _strided(input, "std/var")
    return _std_var(input, dim, unbiased, correction, keepdim, dtype, mask, True)


def softmax(input, dim, *, dtype=None, mask=None):
    """softmax along dim over the masked-in elements (masked-out ones get 0; nan for a fully masked slice)."""
    _strided(input, "softmax")
    return F.softmax(_filled("amax", input, mask), _dims(dim, input.dim())[0],
                     dtype=input.dtype if dtype is None else dtype)


def log_softmax(input, dim, *, dtype=None, mask=None):
    """log_softmax along dim over the masked-in elements (masked-out ones get -inf)."""
    _strided(input, "log_softmax")
    return F.log_softmax(_filled("amax", input, mask), _dims(dim, input.dim())[0],
                         dtype=input.dtype if dtype is None else dtype)


def softmin(input, dim, *, dtype=None, mask=None):
    """softmin along dim over the masked-in elements (masked-out ones get 0)."""
    _strided(input, "softmin")
    return F.softmin(_filled("amin", input, mask), _dims(dim, input.dim())[0],
                     dtype=input.dtype if dtype is None else dtype)


def normalize(input, ord, dim, *, eps=1e-12, dtype=None, mask=None):
    """input divided by its masked ord-norm along dim (at least eps); masked-out elements become 0."""
    _strided(input, "normalize")
    dtype = input.dtype if dtype is None else dtype
    denom = norm(input, ord, dim, keepdim=True, dtype=dtype, mask=mask)
    denom = _ops.maximum(denom, _ops.full([], eps, dtype=denom.dtype, device=denom.device))
    return _filled("sum", input, mask) / denom

