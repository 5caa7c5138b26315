"""torch.signal.windows: SciPy's window functions as 1-D tensors of M points.

sym=True gives the symmetric window (filter design); sym=False the periodic one (spectral analysis):
the symmetric window of M + 1 points without its last. As in PyTorch, the points are computed in the
requested dtype (float32 or float64) on the requested device from an evenly spaced grid, and with
requires_grad=True the grid is the leaf that requires grad, so the window is a differentiable result
of it (not a leaf itself) except for the M <= 1 constants."""
import math
import operator
from collections.abc import Iterable

from .. import _C
from .._C import _ops
from .._utils import strided

__all__ = ["bartlett", "blackman", "cosine", "exponential", "gaussian", "general_cosine", "general_hamming",
           "hamming", "hann", "kaiser", "nuttall"]


def _checked(name, M, dtype, layout):
    """(M, dtype) after PyTorch's checks, in its order (ValueError for each); M must be an integer."""
    dtype = _C.get_default_dtype() if dtype is None else dtype
    if M < 0:
        raise ValueError(f"{name} requires non-negative window length, got M={M}")
    if layout is not strided:
        raise ValueError(f"{name} is implemented for strided tensors only, got: {layout}")
    if dtype not in (_C.float32, _C.float64):
        raise ValueError(f"{name} expects float32 or float64 dtypes, got: {dtype}")
    return operator.index(M), dtype


def _constant(M, value, dtype, device, requires_grad):
    """The windows of 0 points, and of 1 point where the formula has no spacing to work with."""
    return _ops.full((M,), value, dtype=dtype, device=device, requires_grad=requires_grad)


def _grid(M, start, step, dtype, device, requires_grad):
    """start, start + step, ..., start + (M - 1) * step."""
    return _ops.linspace(start, start + (M - 1) * step, M, dtype=dtype, device=device, requires_grad=requires_grad)


def _span(M, sym):
    """The number of intervals the window's formula spans: M - 1 symmetric, M periodic (the M + 1 point
    window's span). A periodic window of 1 point keeps M - 1, as PyTorch's do."""
    return M if not sym and M > 1 else M - 1


def exponential(M, *, center=None, tau=1.0, sym=True, dtype=None, layout=strided, device=None, requires_grad=False):
    """Exponential (Poisson) window exp(-|n - center| / tau); center defaults to the window's middle
    and can be given only for periodic windows (sym=False)."""
    M, dtype = _checked("exponential", M, dtype, layout)
    if tau <= 0:
        raise ValueError(f"Tau must be positive, got: {tau} instead.")
    if sym and center is not None:
        raise ValueError("Center must be None for symmetric windows")
    if M == 0:
        return _constant(0, 0.0, dtype, device, requires_grad)
    if center is None:
        center = _span(M, sym) / 2.0
    return _grid(M, -center / tau, 1 / tau, dtype, device, requires_grad).abs().neg().exp()


def cosine(M, *, sym=True, dtype=None, layout=strided, device=None, requires_grad=False):
    """Cosine (sine) window sin(pi (n + 1/2) / M) (periodic: M + 1 in the denominator)."""
    M, dtype = _checked("cosine", M, dtype, layout)
    if M == 0:
        return _constant(0, 0.0, dtype, device, requires_grad)
    step = math.pi / (M + 1 if not sym and M > 1 else M)
    return _grid(M, 0.5 * step, step, dtype, device, requires_grad).sin()


def gaussian(M, *, std=1.0, sym=True, dtype=None, layout=strided, device=None, requires_grad=False):
    """Gaussian window exp(-(n - middle)^2 / (2 std^2))."""
    M, dtype = _checked("gaussian", M, dtype, layout)
    if std <= 0:
        raise ValueError(f"Standard deviation must be positive, got: {std} instead.")
    if M == 0:
        return _constant(0, 0.0, dtype, device, requires_grad)
    step = 1 / (std * math.sqrt(2))
    return _grid(M, -_span(M, sym) / 2.0 * step, step, dtype, device, requires_grad).square().neg().exp()


def kaiser(M, *, beta=12.0, sym=True, dtype=None, layout=strided, device=None, requires_grad=False):
    """Kaiser window I0(beta sqrt(1 - (2n / span - 1)^2)) / I0(beta)."""
    M, dtype = _checked("kaiser", M, dtype, layout)
    if beta < 0:
        raise ValueError(f"beta must be non-negative, got: {beta} instead.")
    if M <= 1:
        return _constant(M, 1.0, dtype, device, requires_grad)
    beta = float(beta)
    step = 2.0 * beta / (M - 1 if sym else M)
    # the grid runs over [-beta, beta]; capping its end keeps beta^2 - k^2 >= 0 despite rounding
    k = _ops.linspace(-beta, min(beta, -beta + (M - 1) * step), M, dtype=dtype, device=device,
                      requires_grad=requires_grad)
    i0_beta = _ops.i0(_ops.full((), beta, dtype=dtype, device=device))
    # (clamped: in float32 beta^2 - k^2 may round below zero at the ends, where the window is 1 / I0(beta))
    return _ops.i0((beta * beta - k.square()).clamp_min(0).sqrt()) / i0_beta


def general_cosine(M, *, a, sym=True, dtype=None, layout=strided, device=None, requires_grad=False):
    """Generalized cosine window sum_i (-1)^i a[i] cos(2 pi i n / span), for coefficients a."""
    M, dtype = _checked("general_cosine", M, dtype, layout)
    if M <= 1:
        return _constant(M, 1.0, dtype, device, requires_grad)
    if not isinstance(a, Iterable):
        raise TypeError("Coefficients must be a list/tuple")
    if not a:
        raise ValueError("Coefficients cannot be empty")
    k = _grid(M, 0.0, 2 * math.pi / (M - 1 if sym else M), dtype, device, requires_grad)
    w = None
    for i, coefficient in enumerate(a):
        term = (k * i).cos() * ((-1) ** i * float(coefficient))
        w = term if w is None else w + term
    return w


def general_hamming(M, *, alpha=0.54, sym=True, dtype=None, layout=strided, device=None, requires_grad=False):
    """Generalized Hamming window alpha - (1 - alpha) cos(2 pi n / span)."""
    return general_cosine(M, a=[alpha, 1.0 - alpha], sym=sym, dtype=dtype, layout=layout, device=device,
                          requires_grad=requires_grad)


def hamming(M, *, sym=True, dtype=None, layout=strided, device=None, requires_grad=False):
    """Hamming window: general_hamming with alpha = 0.54."""
    return general_hamming(M, sym=sym, dtype=dtype, layout=layout, device=device, requires_grad=requires_grad)


def hann(M, *, sym=True, dtype=None, layout=strided, device=None, requires_grad=False):
    """Hann window: general_hamming with alpha = 0.5."""
    return general_hamming(M, alpha=0.5, sym=sym, dtype=dtype, layout=layout, device=device,
                           requires_grad=requires_grad)


def blackman(M, *, sym=True, dtype=None, layout=strided, device=None, requires_grad=False):
    """Blackman window: general_cosine with a = [0.42, 0.5, 0.08]."""
    _checked("blackman", M, dtype, layout)  # so its errors name blackman, as PyTorch's do
    return general_cosine(M, a=[0.42, 0.5, 0.08], sym=sym, dtype=dtype, layout=layout, device=device,
                          requires_grad=requires_grad)


def nuttall(M, *, sym=True, dtype=None, layout=strided, device=None, requires_grad=False):
    """Nuttall's minimum 4-term Blackman-Harris window (a general_cosine)."""
    return general_cosine(M, a=[0.3635819, 0.4891775, 0.1365995, 0.0106411], sym=sym, dtype=dtype,
                          layout=layout, device=device, requires_grad=requires_grad)


def bartlett(M, *, sym=True, dtype=None, layout=strided, device=None, requires_grad=False):
    """Bartlett (triangular) window 1 - |2n / span - 1|."""
    M, dtype = _checked("bartlett", M, dtype, layout)
    if M <= 1:
        return _constant(M, 1.0, dtype, device, requires_grad)
    step = 2 / (M - 1 if sym else M)
    return 1 - _grid(M, -1.0, step, dtype, device, requires_grad).abs()
