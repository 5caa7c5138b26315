"""OpInfos for ops.yaml's "more of torch.*" section (ops/math_extra.cpp; imported at the end of opdb.py)."""
import numpy as np

from opdb import OpInfo, add
from parity import ALL_DTYPES, FLOATS, INTEGRAL, INTS, Sample, T, binary_samples, unary_samples

F2 = ("float32", "float64")
NOT_BOOL = tuple(d for d in ALL_DTYPES if d != "bool")
TOL = {"float32": (2e-5, 1e-5), "float16": (2e-3, 1e-3), "bfloat16": (1.6e-2, 1e-2)}


def _x(dt, shape=(3, 4), layout=None, key=0, **kw):
    return T(shape, dt, layout=layout, key=key, **kw)


# no NaN operands: the sign bit of a NaN is not a value torch keeps stable through its bfloat16 casts
add(OpInfo("copysign.Tensor", lambda dt: binary_samples(dt, scalars=False, special=False) + [
    Sample(_x(dt, (6, 1), data=[[v] for v in (float("inf"), -2.5, 0.0, -0.0, 1.0, 3.0)] if dt in FLOATS else None),
           _x(dt, (1, 4), key=9, data=[[-0.0, 0.0, -1.0, float("-inf")]] if dt in FLOATS else None))], tol=TOL))
add(OpInfo("copysign.Scalar", lambda dt: [Sample(_x(dt), -1.5), Sample(_x(dt, (5,), key=1), 2),
                                          Sample(_x(dt, (), key=2), -0.0)], tol=TOL))
add(OpInfo("heaviside", lambda dt: [Sample(_x(dt, (5,), data=[-1, 0, 2, 0, 3] if dt != "bool" else None),
                                           _x(dt, (5,), key=1)),
                                    Sample(_x(dt, (3, 1), key=2), _x(dt, (4,), key=3)),
                                    Sample(_x(dt, (3, 4), layout="T", key=4), _x(dt, (), key=5))],
           errors=lambda: [Sample(T((3,), "float32"), T((3,), "float64"))]))
for _n in ("gcd", "lcm"):
    add(OpInfo(_n, lambda dt: [Sample(_x(dt, (6,), low=-50, high=50), _x(dt, (6,), key=1, low=-50, high=50)),
                               Sample(_x(dt, (3, 1), key=2), _x(dt, (4,), key=3)),
                               Sample(_x(dt, (3, 4), layout="T", key=4), _x(dt, (), key=5))],
               dtypes=ALL_DTYPES, errors=lambda: [Sample(T((3,), "float32"), T((3,), "float32"))]))
add(OpInfo("nextafter", lambda dt: [Sample(_x(dt, (6,)), _x(dt, (6,), key=1)),
                                    Sample(_x(dt, (3, 1), key=2), _x(dt, (4,), key=3)),
                                    Sample(_x(dt, (4,), data=[0.0, 1.0, float("inf"), -0.0]),
                                           _x(dt, (4,), key=4, data=[1.0, 0.0, 0.0, 1.0]))], dtypes=F2))
add(OpInfo("ldexp.Tensor", lambda dt: [Sample(_x(dt, (5,)), T((5,), "int64", low=-4, high=6)),
                                       Sample(_x(dt, (3, 1), key=1), T((4,), "int32", low=0, high=5))],
           tol=TOL, dtypes=FLOATS, out=False))  # torch's out= with an integer exponent trips an internal assert
add(OpInfo("frexp.Tensor", lambda dt: [Sample(_x(dt, (7,), data=[8.0, 0.3, -0.0, 1e-3, -5.5, 1024.0, 0.75])),
                                       Sample(_x(dt, (3, 4), layout="T", key=1, low=-100, high=100)),
                                       Sample(_x(dt, (0,)))], dtypes=FLOATS,
           errors=lambda: [Sample(T((3,), "int64"))]))
for _n in ("deg2rad", "rad2deg"):
    add(OpInfo(_n, lambda dt: unary_samples(dt, -400.0, 400.0), tol=TOL, dtypes=FLOATS))


def _addc(dt, div):
    low = 1 if div and dt not in FLOATS else None
    out = [Sample(_x(dt, (3, 4)), _x(dt, (3, 4), key=1), _x(dt, (3, 4), key=2, low=0.5 if div else None, high=3)),
           Sample(_x(dt, (3, 1), key=3), _x(dt, (4,), key=4), _x(dt, (3, 4), key=5, low=0.5 if div else None, high=3),
                  value=-0.5),
           Sample(_x(dt, (), key=6), _x(dt, (2, 3), key=7, layout="T"),
                  _x(dt, (2, 3), key=8, low=low if div else None, high=4), value=2)]
    return out


add(OpInfo("addcmul", lambda dt: _addc(dt, False), tol=TOL, dtypes=NOT_BOOL))
add(OpInfo("addcdiv", lambda dt: _addc(dt, True), tol=TOL, dtypes=FLOATS,
           errors=lambda: [Sample(T((3,), "float32"), T((3,), "int64"), T((3,), "int64", low=1))]))
add(OpInfo("positive", lambda dt: [Sample(_x(dt)), Sample(_x(dt, ()))], dtypes=NOT_BOOL,
           errors=lambda: [Sample(T((3,), "bool"))]))
add(OpInfo("rsub.Tensor", lambda dt: [Sample(_x(dt), _x(dt, key=1)), Sample(_x(dt), _x(dt, (4,), key=2), alpha=2)],
           dtypes=NOT_BOOL, tol=TOL))
add(OpInfo("rsub.Scalar", lambda dt: [Sample(_x(dt), 3), Sample(_x(dt, (5,)), 2, alpha=2)], dtypes=NOT_BOOL, tol=TOL))
add(OpInfo("isreal", lambda dt: [Sample(_x(dt)), Sample(_x(dt, (0,)))]))
add(OpInfo("isin.Tensor_Tensor", lambda dt: [Sample(_x(dt, (3, 4), low=0, high=6), _x(dt, (5,), key=1, low=0, high=6)),
                                             Sample(_x(dt, (6,), low=0, high=4), _x(dt, (2, 2), key=2, low=0, high=4),
                                                    invert=True),
                                             Sample(_x(dt, (4,)), _x(dt, (0,))),
                                             Sample(_x(dt, (4,), low=0, high=3), _x(dt, (3,), low=0, high=3, key=3),
                                                    assume_unique=True)],
           dtypes=NOT_BOOL))
add(OpInfo("isin.Tensor_Scalar", lambda dt: [Sample(_x(dt, (3, 4), low=0, high=4), 2)], dtypes=NOT_BOOL))
add(OpInfo("isin.Scalar_Tensor", lambda dt: [Sample(2, _x(dt, (5,), low=0, high=4))], dtypes=NOT_BOOL))
add(OpInfo("aminmax", lambda dt: [Sample(_x(dt, (3, 4))), Sample(_x(dt, (3, 4), key=1), dim=1),
                                  Sample(_x(dt, (2, 3, 4), key=2, layout="permute"), dim=-1, keepdim=True),
                                  Sample(_x(dt, (3, 4), key=3), keepdim=True), Sample(_x(dt, (), key=4), dim=0)],
           errors=lambda: [Sample(T((0,), "float32")), Sample(T((2, 0), "float32"), dim=1)]))
add(OpInfo("dist", lambda dt: [Sample(_x(dt, (3, 4)), _x(dt, (4,), key=1)),
                               Sample(_x(dt, (5,)), _x(dt, (5,), key=2), p=1),
                               Sample(_x(dt, (5,)), _x(dt, (5,), key=3), p=float("inf")),
                               Sample(_x(dt, (5,)), _x(dt, (5,), key=4), p=0)], dtypes=FLOATS, tol=TOL,
           errors=lambda: [Sample(T((3,), "int64"), T((3,), "int64"))]))
add(OpInfo("renorm", lambda dt: [Sample(_x(dt, (3, 4)), 2, 0, 1.0), Sample(_x(dt, (2, 3, 4), key=1), 1, 1, 2.0),
                                 Sample(_x(dt, (4, 3), key=2, layout="T"), 3, -1, 0.5)], dtypes=FLOATS, tol=TOL,
           errors=lambda: [Sample(T((3,), "float32"), 2, 0, 1.0), Sample(T((3, 2), "float32"), -1, 0, 1.0)]))
add(OpInfo("msort", lambda dt: [Sample(_x(dt, (5, 3))), Sample(_x(dt, (4,), key=1)), Sample(_x(dt, (3, 2), layout="T"))],
           dtypes=NOT_BOOL))


def _nan_data(dt, shape, key):
    a = np.random.default_rng(key).permutation(int(np.prod(shape))).astype(np.float64).reshape(shape)
    a[a % 3 == 1] = np.nan  # distinct values with NaNs between them
    return T(shape, dt, data=a)


add(OpInfo("nanmedian", lambda dt: [Sample(_nan_data(dt, (3, 5), 0)), Sample(_x(dt, (0,))), Sample(_x(dt, ()))],
           dtypes=F2))
add(OpInfo("nanmedian.dim", lambda dt: [Sample(_nan_data(dt, (3, 5), 1), 1), Sample(_nan_data(dt, (4, 6), 2), 0, True),
                                        Sample(_x(dt, ()), 0)], dtypes=F2,
           errors=lambda: [Sample(T((2, 0), "float32"), 1)]))


def _q_samples(dt, nan):
    x = _nan_data(dt, (4, 6), 3) if nan else _x(dt, (4, 6))
    q = T((3,), dt, data=[0.0, 0.35, 1.0])
    out = [Sample(x, q), Sample(x, q, dim=1), Sample(x, q, dim=0, keepdim=True)]
    for interp in ("lower", "higher", "midpoint", "nearest"):
        out.append(Sample(x, q, dim=1, interpolation=interp))
    return out


def _q_scalar_samples(dt, nan):
    x = _nan_data(dt, (4, 6), 4) if nan else _x(dt, (4, 6))
    return [Sample(x, 0.3), Sample(x, 0.5, dim=-1), Sample(x, 0.9, dim=0, keepdim=True, interpolation="nearest"),
            Sample(x, 0.25, keepdim=True)]


def _q_errors():
    x = T((4,), "float32")
    return [Sample(T((4,), "int64"), 0.5), Sample(x, 1.5), Sample(x, 0.5, interpolation="cubic"),
            Sample(x, T((3,), "float64")), Sample(T((0,), "float32"), 0.5)]


add(OpInfo("quantile", lambda dt: _q_samples(dt, False), dtypes=F2, tol=TOL, errors=_q_errors))
add(OpInfo("quantile.scalar", lambda dt: _q_scalar_samples(dt, False), dtypes=F2, tol=TOL))
add(OpInfo("nanquantile", lambda dt: _q_samples(dt, True), dtypes=F2, tol=TOL, errors=_q_errors))
add(OpInfo("nanquantile.scalar", lambda dt: _q_scalar_samples(dt, True), dtypes=F2, tol=TOL))
add(OpInfo("cov", lambda dt: [Sample(_x(dt, (3, 5))), Sample(_x(dt, (5,), key=1)), Sample(_x(dt, (2, 4), key=2), correction=0),
                              Sample(_x(dt, (2, 4), key=3), fweights=T((4,), "int64", low=0, high=4)),
                              Sample(_x(dt, (2, 4), key=4), aweights=T((4,), "float32", low=0.1, high=2.0)),
                              Sample(_x(dt, (2, 4), key=5), fweights=T((4,), "int64", low=1, high=3),
                                     aweights=T((4,), "float64", low=0.1, high=2.0), correction=2)],
           dtypes=FLOATS + ("int64",), tol=dict(TOL, float64=(1e-6, 1e-6)),
           errors=lambda: [Sample(T((2, 3, 4), "float32")), Sample(T((2, 4), "float32"), fweights=T((4,), "float32")),
                           Sample(T((2, 4), "float32"), aweights=T((3,), "float32"))]))
add(OpInfo("corrcoef", lambda dt: [Sample(_x(dt, (3, 5))), Sample(_x(dt, (5,), key=1))], dtypes=F2 + ("int64",),
           tol=dict(TOL, float64=(1e-6, 1e-6))))
for _n in ("trapezoid", "cumulative_trapezoid"):
    add(OpInfo(_n + ".x", lambda dt: [Sample(_x(dt, (3, 5)), T((5,), "float64", low=0, high=3)),
                                      Sample(_x(dt, (3, 5), key=1), _x(dt, (3, 5), key=2), dim=0),
                                      Sample(_x(dt, (4,), key=3), T((4,), dt, data=[0, 1, 3, 6]))],
               dtypes=F2 + ("int64",), tol=dict(TOL, float64=(1e-6, 1e-6)),
               function=lambda lib, *a, n=_n, **k: getattr(lib, n)(*a, **k)))
    add(OpInfo(_n + ".dx", lambda dt: [Sample(_x(dt, (3, 5))), Sample(_x(dt, (3, 5), key=1), dx=0.5, dim=0),
                                       Sample(_x(dt, (1,), key=2)), Sample(_x(dt, (2, 0), key=3))],
               dtypes=F2 + ("int64",), tol=dict(TOL, float64=(1e-6, 1e-6)),
               function=lambda lib, *a, n=_n, **k: getattr(lib, n)(*a, **k),
               errors=lambda: [Sample(T((), "float32"))]))
add(OpInfo("trapz.x", lambda dt: [Sample(_x(dt, (3, 5)), T((5,), "float64", low=0, high=3))], dtypes=F2, tol=TOL,
           function=lambda lib, *a, **k: lib.trapz(*a, **k)))
add(OpInfo("trapz.dx", lambda dt: [Sample(_x(dt, (3, 5)), dx=2.0), Sample(_x(dt, (4,)))], dtypes=F2, tol=TOL,
           function=lambda lib, *a, **k: lib.trapz(*a, **k)))
add(OpInfo("diagonal_scatter", lambda dt: [Sample(_x(dt, (3, 4)), _x(dt, (3,), key=1)),
                                           Sample(_x(dt, (3, 4)), _x(dt, (2,), key=2), 2),
                                           Sample(_x(dt, (2, 3, 3)), _x(dt, (3, 2), key=3), 0, 0, 1)],
           errors=lambda: [Sample(T((3, 4), "float32"), T((2,), "float32"))]))
add(OpInfo("select_scatter", lambda dt: [Sample(_x(dt, (3, 4)), _x(dt, (4,), key=1), 0, 1),
                                         Sample(_x(dt, (3, 4), layout="T"), _x(dt, (3,), key=2), 1, -1)],
           errors=lambda: [Sample(T((3, 4), "float32"), T((3,), "float32"), 0, 0)]))
add(OpInfo("slice_scatter", lambda dt: [Sample(_x(dt, (4, 6)), _x(dt, (4, 3), key=1), 1, 0, 6, 2),
                                        Sample(_x(dt, (4, 6)), _x(dt, (2, 6), key=2), start=2),
                                        Sample(_x(dt, (4, 6)), _x(dt, (4, 6), key=3))],
           errors=lambda: [Sample(T((4, 6), "float32"), T((4, 2), "float32"), 1)]))
add(OpInfo("fill_diagonal_", lambda dt: [Sample(_x(dt, (3, 4)), 2), Sample(_x(dt, (7, 3)), 1, True),
                                         Sample(_x(dt, (7, 3)), 1, False), Sample(_x(dt, (3, 3, 3)), 0)],
           errors=lambda: [Sample(T((3, 4, 5), "float32"), 1.0), Sample(T((3,), "float32"), 1.0)]))

# ---- put / index_put / index_reduce, resize_, angle, and the Cauchy / log-normal / geometric fills
add(OpInfo("index_put", lambda dt: [Sample(_x(dt, (4, 3)), (T((2,), "int64", data=[3, 0]),), _x(dt, (2, 3), key=1)),
                                    Sample(_x(dt, (4, 3)), (T((3,), "int64", data=[1, 1, 2]), T((3,), "int64", data=[0, 0, 2])),
                                           _x(dt, (3,), key=2), accumulate=True)],
           dtypes=NOT_BOOL))
add(OpInfo("put_", lambda dt: [Sample(_x(dt, (3, 4)), T((3,), "int64", data=[0, 11, -2]), _x(dt, (3,), key=1)),
                               Sample(_x(dt, (4, 3), layout="T"), T((2, 2), "int64", data=[[0, 5], [5, 7]]),
                                      _x(dt, (2, 2), key=2), True)],
           dtypes=NOT_BOOL, errors=lambda: [Sample(T((4,), "float32"), T((1,), "int64", data=[4]), T((1,), "float32")),
                                            Sample(T((4,), "float32"), T((2,), "int64"), T((3,), "float32"))]))
add(OpInfo("put", lambda dt: [Sample(_x(dt, (3, 4)), T((3,), "int64", data=[0, 11, -2]), _x(dt, (3,), key=1))],
           dtypes=NOT_BOOL))
add(OpInfo("index_reduce", lambda dt: [Sample(_x(dt, (3, 2), low=1, high=3), 0, T((4,), "int64", data=[0, 2, 0, 2]),
                                              _x(dt, (4, 2), key=1, low=1, high=3), r, include_self=inc)
                                       for r in ("prod", "mean", "amax", "amin") for inc in (True, False)],
           dtypes=("float32", "float64"), tol=TOL,
           errors=lambda: [Sample(T((3, 2), "float32"), 0, T((2,), "int64", data=[0, 5]), T((2, 2), "float32"), "prod"),
                           Sample(T((3, 2), "float32"), 0, T((2,), "int64", data=[0, 1]), T((2, 2), "float32"), "sum")]))
add(OpInfo("resize_", lambda dt: [Sample(_x(dt, (2, 3)), (3, 2)), Sample(_x(dt, (2, 3)), (2,)), Sample(_x(dt, (2, 3)), (0,))],
           values=True))
add(OpInfo("resize_as_", lambda dt: [Sample(_x(dt, (2, 3)), _x(dt, (1, 2), key=1))]))
add(OpInfo("angle", lambda dt: unary_samples(dt, -3.0, 3.0), dtypes=FLOATS + INTEGRAL, tol=TOL))


def _fill_samples(dt, *args):
    return [Sample(T((3, 4), dt), *args), Sample(T((3, 4), dt, layout="T"), *args), Sample(T((0,), dt), *args)]


add(OpInfo("cauchy_", lambda dt: _fill_samples(dt) + _fill_samples(dt, 1.0, 0.5), values=False, dtypes=FLOATS,
           errors=lambda: [Sample(T((3,), "float32"), 0.0, -1.0), Sample(T((3,), "int64"))]))
add(OpInfo("log_normal_", lambda dt: _fill_samples(dt) + _fill_samples(dt, 0.0, 0.5), values=False, dtypes=FLOATS,
           errors=lambda: [Sample(T((3,), "float32"), 1.0, 0.0), Sample(T((3,), "int64"))]))
add(OpInfo("geometric_", lambda dt: _fill_samples(dt, 0.3), values=False, dtypes=FLOATS + INTS,
           errors=lambda: [Sample(T((3,), "float32"), 1.5), Sample(T((3,), "float32"), 0.0)]))
