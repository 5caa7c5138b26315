"""ember.special: PyTorch's torch.special. The functions special to this namespace are ops.yaml ops bound in
ember._C._special (as PyTorch's in torch._C._special); the rest are the same ops as ember.* under
scipy-style names (expit is sigmoid, gammaln is lgamma, psi is digamma, ...)."""
from ._C import _ops, _special

airy_ai = _special.special_airy_ai
bessel_j0 = _special.special_bessel_j0
bessel_j1 = _special.special_bessel_j1
bessel_y0 = _special.special_bessel_y0
bessel_y1 = _special.special_bessel_y1
modified_bessel_i0 = _special.special_modified_bessel_i0
modified_bessel_i1 = _special.special_modified_bessel_i1
modified_bessel_k0 = _special.special_modified_bessel_k0
modified_bessel_k1 = _special.special_modified_bessel_k1
scaled_modified_bessel_k0 = _special.special_scaled_modified_bessel_k0
scaled_modified_bessel_k1 = _special.special_scaled_modified_bessel_k1
spherical_bessel_j0 = _special.special_spherical_bessel_j0
chebyshev_polynomial_t = _special.special_chebyshev_polynomial_t
chebyshev_polynomial_u = _special.special_chebyshev_polynomial_u
chebyshev_polynomial_v = _special.special_chebyshev_polynomial_v
chebyshev_polynomial_w = _special.special_chebyshev_polynomial_w
shifted_chebyshev_polynomial_t = _special.special_shifted_chebyshev_polynomial_t
shifted_chebyshev_polynomial_u = _special.special_shifted_chebyshev_polynomial_u
shifted_chebyshev_polynomial_v = _special.special_shifted_chebyshev_polynomial_v
shifted_chebyshev_polynomial_w = _special.special_shifted_chebyshev_polynomial_w
hermite_polynomial_h = _special.special_hermite_polynomial_h
hermite_polynomial_he = _special.special_hermite_polynomial_he
laguerre_polynomial_l = _special.special_laguerre_polynomial_l
legendre_polynomial_p = _special.special_legendre_polynomial_p
entr = _special.special_entr
erfcx = _special.special_erfcx
i0e = _special.special_i0e
i1 = _special.special_i1
i1e = _special.special_i1e
log_ndtr = _special.special_log_ndtr
ndtr = _special.special_ndtr
ndtri = _special.special_ndtri
xlog1py = _special.special_xlog1py
zeta = _special.special_zeta

# the same ops as ember.*
digamma = psi = _ops.digamma
erf = _ops.erf
erfc = _ops.erfc
erfinv = _ops.erfinv
exp2 = _ops.exp2
expit = _ops.sigmoid
expm1 = _ops.expm1
gammainc = _ops.igamma
gammaincc = _ops.igammac
gammaln = _ops.lgamma
i0 = _ops.i0
log1p = _ops.log1p
log_softmax = _ops.log_softmax
logit = _ops.logit
logsumexp = _ops.logsumexp
multigammaln = _ops.mvlgamma
polygamma = _ops.polygamma
round = _ops.round
sinc = _ops.sinc
softmax = _ops.softmax
xlogy = _ops.xlogy

__all__ = [
    "airy_ai", "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "chebyshev_polynomial_t",
    "chebyshev_polynomial_u", "chebyshev_polynomial_v", "chebyshev_polynomial_w", "digamma", "entr", "erf",
    "erfc", "erfcx", "erfinv", "exp2", "expit", "expm1", "gammainc", "gammaincc", "gammaln",
    "hermite_polynomial_h", "hermite_polynomial_he", "i0", "i0e", "i1", "i1e", "laguerre_polynomial_l",
    "legendre_polynomial_p", "log1p", "log_ndtr", "log_softmax", "logit", "logsumexp", "modified_bessel_i0",
    "modified_bessel_i1", "modified_bessel_k0", "modified_bessel_k1", "multigammaln", "ndtr", "ndtri",
    "polygamma", "psi", "round", "scaled_modified_bessel_k0", "scaled_modified_bessel_k1",
    "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
    "shifted_chebyshev_polynomial_w", "sinc", "softmax", "spherical_bessel_j0", "xlog1py", "xlogy", "zeta",
]
