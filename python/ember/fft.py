"""Discrete Fourier transforms (torch.fft): the 1-D, 2-D and n-D complex, real and Hermitian transforms,
their inverses, the sample frequencies and the shifts. Each is PyTorch's: the same `n`/`s` (zero-pad
or trim the input first), `dim` and `norm` ("backward", "ortho", "forward") arguments, dtypes and
errors. They reduce to three differentiable primitives (ops/fft.cpp, pocketfft on the CPU):
_fft_c2c, _fft_r2c and _fft_c2r."""

import math
import numbers

from . import _C
from ._C import _ops
from ._tensor import Tensor  # noqa: F401  (torch.fft.Tensor, as torch re-exports it)

__all__ = ["fft", "ifft", "fft2", "ifft2", "fftn", "ifftn", "rfft", "irfft", "rfft2", "irfft2", "rfftn", "irfftn",
           "hfft", "ihfft", "hfft2", "ihfft2", "hfftn", "ihfftn", "fftfreq", "rfftfreq", "fftshift", "ifftshift"]

_NONE, _ROOT_N, _BY_N = 0, 1, 2


def _norm_mode(norm, forward):
    """The primitive's normalization for `norm` applied to a transform in the given direction."""
    if norm is None or norm == "backward":
        return _NONE if forward else _BY_N
    if norm == "forward":
        return _BY_N if forward else _NONE
    if norm == "ortho":
        return _ROOT_N
    raise RuntimeError(f'Invalid normalization mode: "{norm}"')


def _check_tensor(fn, x):
    if not isinstance(x, _C.TensorBase):
        raise TypeError(f"{fn}(): argument 'input' (position 1) must be Tensor, not {type(x).__name__}")


def _float_input(fn, x, want_complex):
    """x promoted as torch.fft promotes: integers and bools to the default float dtype; float16 and
    bfloat16 have no CPU transform; want_complex turns a real input complex."""
    _check_tensor(fn, x)
    dt = x.dtype
    if dt in (_C.float16, _C.bfloat16):
        raise RuntimeError(f"Unsupported dtype {'Half' if dt == _C.float16 else 'BFloat16'}")
    if not dt.is_floating_point and not dt.is_complex:
        x = x.to(_C.get_default_dtype())
    if want_complex and not x.dtype.is_complex:
        x = x.to(_C.complex128 if x.dtype == _C.float64 else _C.complex64)
    return x


def _wrap(d, ndim):
    if not isinstance(d, numbers.Integral) or isinstance(d, bool):
        raise TypeError(f"dim must be an int, not {type(d).__name__}")
    if ndim == 0:  # a transform needs a dimension to run along
        raise IndexError(f"Dimension specified as {d} but tensor has no dimensions")
    if not -max(ndim, 1) <= d < max(ndim, 1):
        raise IndexError(f"Dimension out of range (expected to be in range of [{-max(ndim, 1)}, {max(ndim, 1) - 1}], "
                         f"but got {d})")
    return d % max(ndim, 1)


def _resize(x, dims, sizes):
    """x zero-padded or trimmed (from the end) to sizes[i] along dims[i]."""
    for d, n in zip(dims, sizes):
        if n == -1:
            continue
        have = x.shape[d]
        if n < have:
            x = x.narrow(d, 0, n)
        elif n > have:
            shape = list(x.shape)
            shape[d] = n - have
            x = _ops.cat([x, _ops.zeros(shape, dtype=x.dtype)], d)
    return x


def _dims_1d(fn, x, n, dim):
    if x.dim() == 0:
        raise IndexError("Dimension specified as -1 but tensor has no dimensions")
    d = _wrap(dim, x.dim())
    if n is not None and n < 1:
        raise RuntimeError(f"Invalid number of data points ({n}) specified")
    return [d], [n if n is not None else -1]


def _dims_nd(fn, x, s, dim, default_all=True):
    """torch's n-D argument rules: dims (unique, wrapped) and the signal sizes (-1: keep)."""
    if dim is not None:
        dims = [dim] if isinstance(dim, numbers.Integral) else list(dim)
        dims = [_wrap(d, x.dim()) for d in dims]
        if len(set(dims)) != len(dims):
            raise RuntimeError("FFT dims must be unique")
        if s is not None:
            s = list(s)
            if len(s) != len(dims):
                raise RuntimeError("When given, dim and shape arguments must have the same length")
    elif s is not None:
        s = list(s)
        if len(s) > x.dim():
            raise RuntimeError(f"Got shape with {len(s)} values but input tensor only has {x.dim()} dimensions.")
        dims = list(range(x.dim() - len(s), x.dim()))
    else:
        dims = list(range(x.dim())) if default_all else []
    sizes = [-1] * len(dims) if s is None else [int(v) for v in s]
    for v in sizes:
        if v != -1 and v < 1:
            raise RuntimeError(f"Invalid number of data points ({v}) specified")
    return dims, sizes


def _out(result, out):
    if out is None:
        return result
    if out.dtype != result.dtype:
        raise RuntimeError(f"Expected out tensor to have dtype {result.dtype}, but got {out.dtype} instead")
    out.resize_(result.shape)
    return out.copy_(result)


# ---- complex-to-complex

def _c2c(fn, x, dims, sizes, norm, forward, out):
    x = _float_input(fn, x, want_complex=False)
    x = _resize(x, dims, sizes)
    if x.dtype.is_complex:
        r = _ops._fft_c2c(x, dims, _norm_mode(norm, forward), forward)
    else:  # a real signal: its full spectrum (the onesided half plus its conjugate mirror)
        r = _ops._fft_r2c(x, dims, _norm_mode(norm, forward), False)
        if not forward:
            r = r.conj_physical()
    return _out(r, out)


def fft(input, n=None, dim=-1, norm=None, *, out=None):
    """1-D discrete Fourier transform of input along dim."""
    _check_tensor("fft_fft", input)
    dims, sizes = _dims_1d("fft", input, n, dim)
    return _c2c("fft_fft", input, dims, sizes, norm, True, out)


def ifft(input, n=None, dim=-1, norm=None, *, out=None):
    """1-D inverse discrete Fourier transform of input along dim."""
    _check_tensor("fft_ifft", input)
    dims, sizes = _dims_1d("ifft", input, n, dim)
    return _c2c("fft_ifft", input, dims, sizes, norm, False, out)


def fftn(input, s=None, dim=None, norm=None, *, out=None):
    """N-D discrete Fourier transform over dim (all dims by default)."""
    _check_tensor("fft_fftn", input)
    dims, sizes = _dims_nd("fftn", input, s, dim)
    return _c2c("fft_fftn", input, dims, sizes, norm, True, out)


def ifftn(input, s=None, dim=None, norm=None, *, out=None):
    """N-D inverse discrete Fourier transform over dim (all dims by default)."""
    _check_tensor("fft_ifftn", input)
    dims, sizes = _dims_nd("ifftn", input, s, dim)
    return _c2c("fft_ifftn", input, dims, sizes, norm, False, out)


def fft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """2-D discrete Fourier transform over the last two dims (or dim)."""
    return fftn(input, s, dim, norm, out=out)


def ifft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """2-D inverse discrete Fourier transform over the last two dims (or dim)."""
    return ifftn(input, s, dim, norm, out=out)


# ---- real-to-complex (onesided) and its inverse

def _real_input(fn, x):
    _check_tensor(fn, x)
    if x.dtype.is_complex:
        raise RuntimeError(f"{fn} expects a real input tensor, but got {_cname(x.dtype)}")
    return _float_input(fn, x, want_complex=False)


def _cname(dtype):
    return {_C.complex64: "ComplexFloat", _C.complex128: "ComplexDouble"}.get(dtype, str(dtype))


def _r2c(fn, x, dims, sizes, norm, forward, out):
    x = _resize(_real_input(fn, x), dims, sizes)
    r = _ops._fft_r2c(x, dims, _norm_mode(norm, forward), True)
    if not forward:
        r = r.conj_physical()
    return _out(r, out)


def _c2r(fn, x, dims, sizes, norm, forward, out):
    """The real signal of n = sizes[-1] points (default 2 * (m - 1)) whose onesided spectrum is x."""
    x = _float_input(fn, x, want_complex=True)
    last = sizes[-1] if sizes and sizes[-1] != -1 else 2 * (x.shape[dims[-1]] - 1)
    if last < 1:
        raise RuntimeError(f"Invalid number of data points ({last}) specified")
    sizes = list(sizes[:-1]) + [last // 2 + 1]
    x = _resize(x, dims, sizes)
    if forward:
        x = x.conj()
    return _out(_ops._fft_c2r(x, dims, _norm_mode(norm, forward), last), out)


def rfft(input, n=None, dim=-1, norm=None, *, out=None):
    """1-D Fourier transform of a real input: the n // 2 + 1 non-negative frequencies."""
    _check_tensor("fft_rfft", input)
    dims, sizes = _dims_1d("rfft", input, n, dim)
    return _r2c("rfft", input, dims, sizes, norm, True, out)


def irfft(input, n=None, dim=-1, norm=None, *, out=None):
    """Inverse of rfft: the real signal of n points (default 2 * (input.size(dim) - 1))."""
    _check_tensor("fft_irfft", input)
    dims, sizes = _dims_1d("irfft", input, n, dim)
    return _c2r("irfft", input, dims, sizes, norm, False, out)


def rfftn(input, s=None, dim=None, norm=None, *, out=None):
    """N-D Fourier transform of a real input, onesided along the last of dim."""
    _check_tensor("fft_rfftn", input)
    dims, sizes = _dims_nd("rfftn", input, s, dim)
    if not dims:
        raise RuntimeError("rfftn must transform at least one axis")
    return _r2c("rfftn", input, dims, sizes, norm, True, out)


def irfftn(input, s=None, dim=None, norm=None, *, out=None):
    """Inverse of rfftn: a real output, s[-1] points (default 2 * (m - 1)) along the last of dim."""
    _check_tensor("fft_irfftn", input)
    dims, sizes = _dims_nd("irfftn", input, s, dim)
    if not dims:
        raise RuntimeError("irfftn must transform at least one axis")
    return _c2r("irfftn", input, dims, sizes, norm, False, out)


def rfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """2-D Fourier transform of a real input."""
    return rfftn(input, s, dim, norm, out=out)


def irfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """Inverse of rfft2."""
    return irfftn(input, s, dim, norm, out=out)


# ---- Hermitian: a onesided spectrum in, a real signal out (hfft), and back (ihfft)

def hfft(input, n=None, dim=-1, norm=None, *, out=None):
    """1-D Fourier transform of a Hermitian-symmetric signal given by its first half: a real output."""
    _check_tensor("fft_hfft", input)
    dims, sizes = _dims_1d("hfft", input, n, dim)
    return _c2r("hfft", input, dims, sizes, norm, True, out)


def ihfft(input, n=None, dim=-1, norm=None, *, out=None):
    """Inverse of hfft: the onesided inverse transform of a real signal."""
    _check_tensor("fft_ihfft", input)
    dims, sizes = _dims_1d("ihfft", input, n, dim)
    return _r2c("ihfft", input, dims, sizes, norm, False, out)


def hfftn(input, s=None, dim=None, norm=None, *, out=None):
    """N-D Fourier transform of a signal Hermitian-symmetric along the last of dim: a real output."""
    _check_tensor("fft_hfftn", input)
    dims, sizes = _dims_nd("hfftn", input, s, dim)
    if not dims:
        raise RuntimeError("hfftn must transform at least one axis")
    return _c2r("hfftn", input, dims, sizes, norm, True, out)


def ihfftn(input, s=None, dim=None, norm=None, *, out=None):
    """Inverse of hfftn: the onesided n-D inverse transform of a real signal."""
    _check_tensor("fft_ihfftn", input)
    dims, sizes = _dims_nd("ihfftn", input, s, dim)
    if not dims:
        raise RuntimeError("ihfftn must transform at least one axis")
    return _r2c("ihfftn", input, dims, sizes, norm, False, out)


def hfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """2-D Fourier transform of a Hermitian-symmetric signal: a real output."""
    return hfftn(input, s, dim, norm, out=out)


def ihfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """Inverse of hfft2."""
    return ihfftn(input, s, dim, norm, out=out)


# ---- frequencies and shifts

def _freq_tensor(values, d, n, dtype, device, requires_grad, out):
    if dtype is None:
        dtype = _C.get_default_dtype()
    r = _C._tensor_from_data(values, _C.float64).div_(d * n).to(dtype)
    if device is not None and str(device) != "cpu":
        r = r.to(device)
    if out is not None:
        return _out(r, out)
    return r.requires_grad_(requires_grad) if requires_grad else r


def fftfreq(n, d=1.0, *, out=None, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False):
    """The sample frequencies of an n-point transform with sample spacing d: [0, 1, ..., -1] / (d * n)."""
    if not isinstance(n, numbers.Integral) or isinstance(n, bool):
        raise TypeError(f"fft_fftfreq(): argument 'n' (position 1) must be int, not {type(n).__name__}")
    if n < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {n}: [{n}]")
    values = [i if i < (n + 1) // 2 else i - n for i in range(n)]
    return _freq_tensor(values, d, n, dtype, device, requires_grad, out)


def rfftfreq(n, d=1.0, *, out=None, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False):
    """The non-negative sample frequencies of rfft's output: [0, 1, ..., n // 2] / (d * n)."""
    if not isinstance(n, numbers.Integral) or isinstance(n, bool):
        raise TypeError(f"fft_rfftfreq(): argument 'n' (position 1) must be int, not {type(n).__name__}")
    if n < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {n // 2 + 1}: [{n // 2 + 1}]")
    return _freq_tensor(list(range(n // 2 + 1)), d, n, dtype, device, requires_grad, out)


def _shift(fn, input, dim, inverse):
    _check_tensor(fn, input)
    if dim is None:
        dims = list(range(input.dim()))
    else:
        dims = [dim] if isinstance(dim, numbers.Integral) else list(dim)
        dims = [_wrap(d, input.dim()) for d in dims]
    if not dims:
        raise RuntimeError("`shifts` required")
    shifts = [-(input.shape[d] // 2) if inverse else input.shape[d] // 2 for d in dims]
    return input.roll(shifts, dims)


def fftshift(input, dim=None):
    """Reorders an FFT's output so the zero frequency sits in the middle (rolls each dim by n // 2)."""
    return _shift("fft_fftshift", input, dim, False)


def ifftshift(input, dim=None):
    """The inverse of fftshift (rolls each dim by -(n // 2))."""
    return _shift("fft_ifftshift", input, dim, True)
