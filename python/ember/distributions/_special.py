"""Special functions the distributions need and ember's core lacks, written as differentiable
composites of ember ops (so autograd gives their derivatives, to any order), plus the standard gamma
sampler with its implicit-reparameterization gradient.  Internal to ember.distributions."""
import math

import ember
from ember.autograd import Function

_SHIFT = 8  # recurrence shift: the asymptotic series are evaluated at x + 8 >= 8.5
# Stirling series coefficients B_2k / (2k (2k-1)) for 1/z, 1/z^3, ..., 1/z^13
_LGAMMA_COEF = (1 / 12, -1 / 360, 1 / 1260, -1 / 1680, 1 / 1188, -691 / 360360, 1 / 156)
# digamma asymptotic coefficients B_2k / (2k) for 1/z^2, ..., 1/z^14
_DIGAMMA_COEF = (1 / 12, -1 / 120, 1 / 252, -1 / 240, 1 / 132, -691 / 32760, 1 / 12)
_HALF_LOG_2PI = 0.5 * math.log(2 * math.pi)


def _as_tensor(x):
    if isinstance(x, ember.Tensor):
        return x if x.is_floating_point() else x.to(ember.get_default_dtype())
    return ember.tensor(float(x), dtype=ember.get_default_dtype())


def _in_float64(fn):
    # evaluate in float64 (the recurrence shift cancels digits) and round once to the input dtype
    def wrapper(x):
        x = _as_tensor(x)
        if x.dtype == ember.float64:
            return fn(x)
        return fn(x.to(ember.float64)).to(x.dtype)
    wrapper.__name__ = fn.__name__
    wrapper.__doc__ = fn.__doc__
    return wrapper


def _horner_odd(r, coef):
    r2 = r * r
    acc = r2 * 0 + coef[-1]
    for c in reversed(coef[:-1]):
        acc = acc * r2 + c
    return acc * r


@_in_float64
def lgamma(x):
    """log|Gamma(x)| elementwise; reflection formula below 0.5."""
    x = _as_tensor(x)
    neg = x < 0.5
    xp = ember.where(neg, 1 - x, x)
    z = xp + _SHIFT
    shift = ember.log(xp)
    for k in range(1, _SHIFT):
        shift = shift + ember.log(xp + k)
    val = (z - 0.5) * ember.log(z) - z + _HALF_LOG_2PI + _horner_odd(1 / z, _LGAMMA_COEF) - shift
    # masked argument so the unused branch never produces inf/nan gradients
    xs = ember.where(neg, x, ember.full_like(x, 0.5))
    refl = math.log(math.pi) - ember.log(ember.abs(ember.sin(math.pi * xs))) - val
    out = ember.where(neg, refl, val)
    # poles: non-positive integers
    pole = neg & (x == ember.floor(x))
    return ember.where(pole, ember.full_like(x, math.inf), out)


@_in_float64
def digamma(x):
    """d/dx lgamma(x) elementwise; reflection formula below 0.5."""
    x = _as_tensor(x)
    neg = x < 0.5
    xp = ember.where(neg, 1 - x, x)
    z = xp + _SHIFT
    shift = 1 / xp
    for k in range(1, _SHIFT):
        shift = shift + 1 / (xp + k)
    r = 1 / z
    val = ember.log(z) - 0.5 * r - _horner_odd(r, _DIGAMMA_COEF) * r - shift
    xs = ember.where(neg, x, ember.full_like(x, 0.25))
    refl = val - math.pi / ember.tan(math.pi * xs)
    out = ember.where(neg, refl, val)
    pole = neg & (x == ember.floor(x))
    # torch: digamma(0) = -inf, digamma(negative integer) = nan
    pole_val = ember.where(x == 0, ember.full_like(x, -math.inf), ember.full_like(x, math.nan))
    return ember.where(pole, pole_val, out)


def mvlgamma(x, p):
    """Multivariate log-gamma of dimension p."""
    out = lgamma(x) * 0 + p * (p - 1) / 4 * math.log(math.pi)
    for j in range(p):
        out = out + lgamma(x - j / 2)
    return out


def xlogy(x, y):
    """x * log(y) with 0 * log(0) = 0."""
    return ember.where(x == 0, ember.zeros_like(x * y), x * ember.log(y))


# ----------------------------------------------------------------------------------------------
# Standard gamma sampling


def _sample_standard_gamma(alpha, generator=None):
    """Marsaglia & Tsang (2000) on a flat tensor of concentrations, vectorised rejection."""
    shape = alpha.shape
    a = alpha.detach().reshape(-1).to(ember.float64)
    small = a < 1
    boosted = ember.where(small, a + 1, a)
    d = boosted - 1.0 / 3
    c = 1 / ember.sqrt(9 * d)
    out = ember.zeros_like(a)
    pending = ember.arange(a.numel())
    while pending.numel():
        dp, cp = d[pending], c[pending]
        z = ember.randn(pending.numel(), dtype=ember.float64, generator=generator)
        u = ember.rand(pending.numel(), dtype=ember.float64, generator=generator)
        v = (1 + cp * z) ** 3
        ok = (v > 0) & (ember.log(u) < 0.5 * z * z + dp - dp * v + dp * ember.log(v.clamp(min=1e-300)))
        out[pending[ok]] = (dp * v)[ok]
        pending = pending[~ok]
    if bool(small.any()):
        # Gamma(a) = Gamma(a + 1) * U^(1/a) for a < 1
        u = ember.rand(a.numel(), dtype=ember.float64, generator=generator)
        out = ember.where(small, out * u ** (1 / a), out)
    tiny = ember.finfo(alpha.dtype).tiny
    return out.to(alpha.dtype).clamp(min=tiny).reshape(shape)


_SERIES_MAX_ALPHA = 1000.0


def standard_gamma_grad(x, alpha):
    """d sample / d alpha for x ~ Gamma(alpha, 1), by implicit differentiation of the CDF:
    dx/da = -(dP(a, x)/da) / p(x).  With P(a, x) = x^a e^-x / Gamma(a+1) * S,
    S = sum_n x^n / ((a+1)...(a+n)), this is -(x/a) * (S (log x - digamma(a+1)) + dS/da):
    the exact series summed in float64 (no exponentials).  Above alpha = 1000 the Wilson-Hilferty
    cube-root normal approximation of the quantile is differentiated at fixed normal score
    (relative error ~1e-5 there)."""
    dtype = x.dtype
    x64 = x.detach().to(ember.float64)
    a64 = alpha.detach().to(ember.float64)
    x64, a64 = _bcast(x64, a64)
    big = a64 > _SERIES_MAX_ALPHA
    a_s = ember.where(big, ember.ones_like(a64), a64)
    x_s = ember.where(big, ember.ones_like(x64), x64)
    n_terms = 40
    if x_s.numel():
        n_terms = int(float(((x_s - a_s).clamp(min=0) + 12 * ember.sqrt(x_s + a_s)).max())) + 40
    term = ember.ones_like(x_s)
    harmonic = ember.zeros_like(x_s)
    s = ember.ones_like(x_s)
    ds = ember.zeros_like(x_s)
    for n in range(1, n_terms + 1):
        inv = 1 / (a_s + n)
        term = term * x_s * inv
        harmonic = harmonic + inv
        s = s + term
        ds = ds - term * harmonic
    series = -(x_s / a_s) * (s * (ember.log(x_s) - digamma(a_s + 1)) + ds)
    # Wilson-Hilferty branch
    a_b = ember.where(big, a64, ember.full_like(a64, 2 * _SERIES_MAX_ALPHA))
    x_b = ember.where(big, x64, a_b)
    sq = ember.sqrt(a_b)
    zscore = ((x_b / a_b) ** (1 / 3) - 1 + 1 / (9 * a_b)) * 3 * sq
    w = 1 - 1 / (9 * a_b) + zscore / (3 * sq)
    dw = 1 / (9 * a_b * a_b) - zscore / (6 * a_b * sq)
    wh = w ** 3 + 3 * a_b * w * w * dw
    return ember.where(big, wh, series).to(dtype)


def _bcast(a, b):
    from .utils import broadcast_shape
    shape = broadcast_shape(a.shape, b.shape)
    return a.expand(shape), b.expand(shape)


class _StandardGamma(Function):
    @staticmethod
    def forward(ctx, alpha):
        x = _sample_standard_gamma(alpha)
        ctx.save_for_backward(x, alpha)
        return x

    @staticmethod
    def backward(ctx, grad):
        x, alpha = ctx.saved_tensors
        with ember.no_grad():
            return grad * standard_gamma_grad(x, alpha)


def standard_gamma(alpha):
    """A Gamma(alpha, 1) sample per element, differentiable w.r.t. alpha (implicit gradient)."""
    if alpha.requires_grad and ember.is_grad_enabled():
        return _StandardGamma.apply(alpha)
    return _sample_standard_gamma(alpha)


# ----------------------------------------------------------------------------------------------
# Regularised lower incomplete gamma P(a, x)

_TINY = 1e-300
_EPS = 1e-16


def _gammainc_value(a, x):
    """P(a, x) in float64: power series below x = a + 1, Lentz's continued fraction for Q = 1 - P
    above (Numerical Recipes 6.2); both iterated until the relative update is below 1e-16."""
    log_pref = a * ember.log(x.clamp(min=_TINY)) - x - lgamma(a)
    use_series = x < a + 1
    # series on its own elements only (elsewhere its terms grow without bound)
    xs = ember.where(use_series, x, ember.zeros_like(x))
    term = 1 / a
    total = term
    for n in range(1, 100000):
        term = term * xs / (a + n)
        total = total + term
        if n % 16 == 0 and not bool((term.abs() > _EPS * total.abs()).any()):
            break
    p_series = total * ember.exp(log_pref)
    # continued fraction on its own elements only
    xc = ember.where(use_series, a + 1, x)
    b = xc + 1 - a
    c = ember.full_like(b, 1 / _TINY)
    d = 1 / b
    h = d
    for i in range(1, 100000):
        an = -i * (i - a)
        b = b + 2
        d = an * d + b
        d = ember.where(d.abs() < _TINY, ember.full_like(d, _TINY), d)
        c = b + an / c
        c = ember.where(c.abs() < _TINY, ember.full_like(c, _TINY), c)
        d = 1 / d
        delta = d * c
        h = h * delta
        if i % 8 == 0 and not bool(((delta - 1).abs() > 4 * _EPS).any()):  # within an ulp or two
            break
    q_cf = ember.exp(log_pref) * h
    out = ember.where(use_series, p_series, 1 - q_cf)
    out = ember.where(x <= 0, ember.zeros_like(out), out)
    return ember.where(x == math.inf, ember.ones_like(out), out)


def _sum_to(grad, shape):
    """Reduce a broadcast gradient back to `shape`."""
    shape = tuple(shape)
    while grad.dim() > len(shape):
        grad = grad.sum(0)
    for i, n in enumerate(shape):
        if n == 1 and grad.shape[i] != 1:
            grad = grad.sum(i, keepdim=True)
    return grad


class _GammaInc(Function):
    @staticmethod
    def forward(ctx, a, x):
        a64, x64 = _bcast(a.detach().to(ember.float64), x.detach().to(ember.float64))
        out = _gammainc_value(a64, x64)
        ctx.save_for_backward(a, x)
        return out.to(ember.promote_types(a.dtype, x.dtype))

    @staticmethod
    def backward(ctx, grad):
        a, x = ctx.saved_tensors
        with ember.no_grad():
            a64, x64 = _bcast(a.to(ember.float64), x.to(ember.float64))
            # dP/dx is the gamma density; dP/da = -(dx/da at fixed P) * density
            pdf = ember.exp((a64 - 1) * ember.log(x64.clamp(min=_TINY)) - x64 - lgamma(a64))
            pdf = ember.where(x64 > 0, pdf, ember.zeros_like(pdf))
            g64 = grad.to(ember.float64)
            grad_x = _sum_to(g64 * pdf, x.shape).to(x.dtype) if ctx.needs_input_grad[1] else None
            grad_a = None
            if ctx.needs_input_grad[0]:
                safe_x = ember.where(x64 > 0, x64, ember.ones_like(x64))
                dpda = -standard_gamma_grad(safe_x, a64) * pdf
                grad_a = _sum_to(g64 * dpda, a.shape).to(a.dtype)
            return grad_a, grad_x


def gammainc(a, x):
    """Regularised lower incomplete gamma function P(a, x) = gamma(a, x) / Gamma(a)."""
    return _GammaInc.apply(a, x)
