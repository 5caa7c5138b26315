"""OpInfos for the special functions (ops.yaml's special-functions section; imported at the end of opdb.py).
Each runs over awkward shapes and layouts, every dtype torch accepts for it (others must raise the same
error), its method / in-place / out= forms, and the special values (NaN, +-inf, +-0, poles)."""
import numpy as np

from opdb import OpInfo, add
from parity import ALL_DTYPES, FLOATS, INTEGRAL, T, Sample, unary_samples

F2 = ("float32", "float64")
# torch's CPU kernels for the Bessel/Airy functions, the polynomials and zeta take no float16/bfloat16
NO_REDUCED = F2 + INTEGRAL
TOL = {"float32": (2e-5, 1e-5), "float64": (1e-9, 1e-12), "float16": (2e-3, 1e-4), "bfloat16": (1.6e-2, 1e-4)}
# integer inputs compute in float32 (also when written to a float64 out=): float32's tolerance
TOL.update({d: (2e-5, 2e-5) for d in INTEGRAL})
POLES = [-3.0, -2.0, -1.0, 0.0, -0.0, 1e-300, 20.0, 170.5, 700.0, 800.0]


def _special(name):
    return lambda lib, *a, **k: getattr(lib._C._special, name)(*a, **k)


def _unary(name, low=None, high=None, dtypes=ALL_DTYPES, extra=(), tol=TOL, **kw):
    def samples(dt):
        out = unary_samples(dt, low, high)
        if dt in FLOATS:
            out.append(Sample(T((len(POLES) + len(extra),), dt, data=POLES + list(extra)), name="poles"))
        return out
    return add(OpInfo(name, samples, tol=tol, dtypes=dtypes, **kw))


_unary("lgamma", -5.0, 5.0)
_unary("digamma", -5.0, 5.0)
_unary("i0", -10.0, 10.0)
_unary("sinc", -4.0, 4.0)
# torch's bfloat16 i0e/i1/i1e are off by up to 2% (e.g. i0e(-7.25): 0.1484 for 0.1514)
_BESSEL_TOL = dict(TOL, bfloat16=(3e-2, 1e-3))
for _n in ("special_i0e", "special_i1", "special_i1e"):
    _unary(_n, -30.0, 30.0, tol=_BESSEL_TOL)
_unary("special_erfcx", -10.0, 40.0)
_unary("special_ndtri", -0.1, 1.1, extra=(1e-300, 1e-20, 0.999999, 0.5))
_unary("special_log_ndtr", -40.0, 10.0, extra=(-1e3, -38.5, -1.0, 5.0))
_unary("special_ndtr", -10.0, 10.0, tol=dict(TOL, float16=(2e-3, 2e-4), bfloat16=(1.6e-2, 2e-3)))
_unary("special_entr", -1.0, 5.0)
# torch's Bessel J/Y and Airy kernels are accurate to ~3e-7 (Airy ~3e-6) absolute in float64, Ember's to
# ~1e-16 (test_special.py checks both against mpmath): compare with torch at its accuracy
_TORCH_BESSEL = dict(TOL, float64=(1e-6, 1e-5))
for _n in ("special_bessel_j0", "special_bessel_j1", "special_bessel_y0", "special_bessel_y1",
           "special_spherical_bessel_j0", "special_airy_ai"):
    _unary(_n, -30.0, 30.0, dtypes=NO_REDUCED, tol=_TORCH_BESSEL)
for _n in ("special_modified_bessel_i0", "special_modified_bessel_i1", "special_modified_bessel_k0",
           "special_modified_bessel_k1", "special_scaled_modified_bessel_k0", "special_scaled_modified_bessel_k1"):
    _unary(_n, -5.0, 60.0, dtypes=NO_REDUCED)


def _polygamma_samples(dt):
    # integers from 1: at the poles (0, -1, ...) torch's float trigamma returns large finite values, Ember inf
    x = T((3, 4), dt, low=-4.0 if dt in FLOATS else 1, high=6.0, key="pg")
    out = [Sample(n, x) for n in (0, 1, 2, 3, 5)]
    out += [Sample(2, T((0,), dt)), Sample(1, T((), dt, low=0.5, high=3.0)), Sample(2, T((4, 3), dt, layout="T"))]
    if dt in FLOATS:
        out.append(Sample(2, T((len(POLES),), dt, data=POLES), name="poles"))
    return out


add(OpInfo("polygamma", _polygamma_samples, tol=TOL,
           errors=lambda: [Sample(-1, T((3,), "float32"))]))
add(OpInfo("mvlgamma", lambda dt: [Sample(T((3, 4), dt, low=2.0, high=6.0), p) for p in (1, 2, 4)] +
           [Sample(T((0, 2), dt), 3)], tol=TOL, inplace=False,
           errors=lambda: [Sample(T((3,), "float32"), 0)]))
add(OpInfo("logit", lambda dt: unary_samples(dt, -0.2, 1.2) + [Sample(T((3, 4), dt, low=-0.2, high=1.2), eps=0.1),
                                                              Sample(T((5,), dt, low=0.0, high=1.0), eps=-1.0),
                                                              Sample(T((5,), dt, low=0.0, high=1.0), 0.25)],
           tol=dict(TOL, float16=(1e-2, 1e-3), bfloat16=(3e-2, 1e-2))))  # torch rounds its reduced-float logit in between


def _ab(dt, low_a, high_a, low_b, high_b):
    return [Sample(T((5,), dt, low=low_a, high=high_a, key=0), T((5,), dt, low=low_b, high=high_b, key=1)),
            Sample(T((3, 1), dt, low=low_a, high=high_a, key=2), T((1, 4), dt, low=low_b, high=high_b, key=3)),
            Sample(T((), dt, low=low_a, high=high_a, key=4), T((2, 3), dt, low=low_b, high=high_b, key=5)),
            Sample(T((3, 4), dt, low=low_a, high=high_a, layout="T", key=6),
                   T((3, 4), dt, low=low_b, high=high_b, layout="step", key=7)),
            Sample(T((0, 3), dt), T((1, 3), dt))]


def _edges(dt):
    if dt not in FLOATS:
        return []
    v = [float("nan"), float("inf"), float("-inf"), 0.0, -0.0, 0.5, 1.0, 2.5, -1.5, 1e3]
    n = len(v)
    return [Sample(T((n, 1), dt, data=np.array(v).reshape(n, 1)), T((1, n), dt, data=np.array(v).reshape(1, n)),
                   name="special")]


for _n in ("igamma", "igammac"):
    add(OpInfo(_n, lambda dt: _ab(dt, 0.0, 6.0, 0.0, 8.0) + _edges(dt), tol=TOL, dtypes=FLOATS + ("int64",)))
add(OpInfo("special_xlog1py", lambda dt: _ab(dt, -2.0, 2.0, -1.5, 4.0) + _edges(dt), tol=TOL))
add(OpInfo("special_xlog1py.self_scalar", lambda dt: [Sample(2, T((3, 4), dt, low=-0.5)), Sample(0, T((5,), dt)),
                                                      Sample(1.5, T((), dt, low=0))], tol=TOL,
           function=_special("special_xlog1py")))
add(OpInfo("special_xlog1py.other_scalar", lambda dt: [Sample(T((3, 4), dt), 3), Sample(T((5,), dt), 0.5),
                                                       Sample(T((2, 3), dt, layout="T"), 0)], tol=TOL,
           function=_special("special_xlog1py")))
add(OpInfo("special_zeta", lambda dt: _ab(dt, 1.0, 6.0, -3.0, 5.0) + _edges(dt), tol=TOL, dtypes=NO_REDUCED))
add(OpInfo("special_zeta.self_scalar", lambda dt: [Sample(2.0, T((3, 4), dt, low=0.1, high=5.0)),
                                                   Sample(3, T((5,), dt, low=-3.0, high=4.0))],
           tol=TOL, dtypes=NO_REDUCED, function=_special("special_zeta")))
add(OpInfo("special_zeta.other_scalar", lambda dt: [Sample(T((3, 4), dt, low=1.0, high=6.0), 1.5),
                                                    Sample(T((5,), dt, low=0.0, high=9.0), 2)],
           tol=TOL, dtypes=NO_REDUCED, function=_special("special_zeta")))

# orthogonal polynomials: degrees -1..12 (a float degree is truncated), x inside and outside [-1, 1]; NaN x is
# left out (torch's vectorized loop returns a neighbour's value for it)
POLYNOMIALS = ["chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
               "chebyshev_polynomial_w", "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u",
               "shifted_chebyshev_polynomial_v", "shifted_chebyshev_polynomial_w", "hermite_polynomial_h",
               "hermite_polynomial_he", "laguerre_polynomial_l", "legendre_polynomial_p"]


def _poly_samples(dt):
    xs = [-2.0, -1.0, -0.7, -0.25, 0.0, 0.3, 0.5, 0.9, 1.0, 1.5]
    ns = [-1, 0, 1, 2, 3, 5, 7, 9, 12]
    if dt == "uint8":  # negative values would wrap to degree 255 (overflowing differently in torch's float32)
        xs, ns = [x for x in xs if x >= 0], [n for n in ns if n >= 0]
    out = [Sample(T((len(xs), 1), dt, data=np.array(xs).reshape(-1, 1)),
                  T((1, len(ns)), dt, data=np.array(ns).reshape(1, -1)), name="grid")]
    out.append(Sample(T((3, 4), dt, low=-1.0, high=1.0, layout="T"), T((4,), dt, low=0.0, high=6.0)))
    out.append(Sample(T((0,), dt), T((0,), dt)))
    if dt in FLOATS:
        out.append(Sample(T((4,), dt, data=[0.3, -0.6, 0.9, 1.2]), T((4,), dt, data=[2.5, 3.9, 7.2, 4.7]),
                          name="fractional_degree"))
    return out


for _p in POLYNOMIALS:
    _full = "special_" + _p
    add(OpInfo(_full, _poly_samples, tol=TOL, dtypes=NO_REDUCED))
    add(OpInfo(_full + ".x_scalar", lambda dt: [Sample(0.5, T((6,), dt, data=[0, 1, 2, 3, 4, 10])),
                                               Sample(2, T((2, 3), dt, low=0.0, high=5.0))],
               tol=TOL, dtypes=NO_REDUCED, function=_special(_full)))
    add(OpInfo(_full + ".n_scalar", lambda dt: [Sample(T((3, 4), dt, low=-1.0, high=1.0), 3),
                                               Sample(T((5,), dt, low=-2.0, high=2.0), 8),
                                               Sample(T((5,), dt, low=-2.0, high=2.0), 2.5)],
               tol=TOL, dtypes=NO_REDUCED, function=_special(_full)))
