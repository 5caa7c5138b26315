"""OpInfos for the linear-algebra ops beyond the first decompositions (the LU family, triangular and LDL
solves, slogdet, matrix_exp, Householder products and the torch.* spellings; imported at the end of
opdb.py). Inputs are well conditioned where the op inverts; ember.linalg's public functions are what is
called for the private `_linalg_*` ops, as torch.linalg's are for torch."""
import numpy as np

from opdb import OpInfo, add
from parity import Sample, T

F2 = ("float32", "float64")
TOL = {"float32": (2e-4, 2e-5), "float64": (1e-7, 1e-9)}
INT_ERRORS = lambda *shapes: lambda: [Sample(*[T(s, "int64", low=1, high=3) for s in shapes])]  # noqa: E731


def _data(shape, key, shift=0.0):
    rng = np.random.default_rng(key)
    a = rng.uniform(-1, 1, shape)
    return a + shift * np.eye(shape[-1]) if shift else a


def _wc(shape, dt, key=0):
    """Square matrices with a dominant diagonal."""
    return T(shape, dt, data=_data(shape, key, 4.0))


def _spd(shape, dt, key=0):
    a = _data(shape, key)
    return T(shape, dt, data=a @ np.swapaxes(a, -1, -2) + shape[-1] * np.eye(shape[-1]))


def _sym(shape, dt, key=0):
    a = _data(shape, key)
    return T(shape, dt, data=a + np.swapaxes(a, -1, -2))


def _m(shape, dt, key=0):
    return T(shape, dt, data=_data(shape, key))


def _lin(name):
    return lambda lib, *a, **k: getattr(lib.linalg, name)(*a, **k)


def _chol(lib, a, upper=False):
    return lib.linalg.cholesky(a, upper=upper)


add(OpInfo("linalg_lu_factor_ex", lambda dt: [Sample(_m((3, 3), dt)), Sample(_m((2, 4, 3), dt, 1)),
                                               Sample(_m((3, 5), dt, 2)), Sample(_m((0, 2, 2), dt)),
                                               Sample(T((2, 2), dt, data=[[1.0, 2.0], [2.0, 4.0]]))],
           dtypes=F2, tol=TOL, function=_lin("lu_factor_ex"),
           errors=lambda: [Sample(T((3,), "float32")), Sample(T((2, 2), "int64", low=1, high=3)),
                           Sample(T((2, 2), "float32"), pivot=False)]))
add(OpInfo("linalg_lu_solve", lambda dt: [Sample(_wc((3, 3), dt), _m((3, 2), dt, 1)),
                                           Sample(_wc((2, 3, 3), dt), _m((3, 1), dt, 2), adjoint=True),
                                           Sample(_wc((3, 3), dt), _m((2, 2, 3), dt, 3), left=False)],
           dtypes=F2, tol=TOL,
           function=lambda lib, a, b, **k: lib.linalg.lu_solve(*lib.linalg.lu_factor(a), b, **k),
           errors=lambda: [Sample(_wc((3, 3), "float32"), T((3,), "float32")),
                           Sample(_wc((3, 3), "float32"), T((2, 3), "float32")),
                           Sample(_wc((3, 3), "float32"), T((3, 2), "float64"))]))
add(OpInfo("linalg_solve_triangular", lambda dt: [Sample(_wc((3, 3), dt), _m((3, 2), dt, 1), upper=True),
                                                   Sample(_wc((2, 3, 3), dt), _m((2, 3), dt, 2), upper=False,
                                                          left=False),
                                                   Sample(_wc((3, 3), dt), _m((2, 3, 4), dt, 3), upper=False,
                                                          unitriangular=True)],
           dtypes=F2, tol=TOL, function=_lin("solve_triangular"),
           errors=lambda: [Sample(_wc((3, 3), "float32"), T((3,), "float32"), upper=True),
                           Sample(_wc((3, 3), "float32"), T((2, 3), "float32"), upper=True),
                           Sample(T((2, 2), "int64", low=1, high=3), T((2, 2), "int64", low=1, high=3),
                                  upper=True)]))
add(OpInfo("linalg_cholesky_ex", lambda dt: [Sample(_spd((3, 3), dt)), Sample(_spd((2, 3, 3), dt, 1), upper=True),
                                              Sample(T((2, 2), dt, data=[[1.0, 2.0], [2.0, 1.0]]))],
           dtypes=F2, tol=TOL, function=lambda lib, a, **k: tuple(lib.linalg.cholesky_ex(a, **k))[1:]
           if a.dim() == 2 and a.shape[-1] == 2 else lib.linalg.cholesky_ex(a, **k),
           errors=lambda: [Sample(T((2, 3), "float32")), Sample(T((2, 2), "int64", low=1, high=3))]))
add(OpInfo("linalg_slogdet", lambda dt: [Sample(_wc((3, 3), dt)), Sample(_m((2, 4, 4), dt, 1)),
                                          Sample(T((2, 2), dt, data=[[1.0, 2.0], [2.0, 4.0]])),
                                          Sample(T((0, 0), dt))],
           dtypes=F2, tol=TOL, function=_lin("slogdet"),
           errors=lambda: [Sample(T((2, 3), "float32")), Sample(T((2, 2), "int64", low=1, high=3))]))
add(OpInfo("slogdet", lambda dt: [Sample(_wc((3, 3), dt)), Sample(_m((2, 4, 4), dt, 1))], dtypes=F2, tol=TOL))
add(OpInfo("det", lambda dt: [Sample(_wc((3, 3), dt)), Sample(_m((2, 4, 4), dt, 1))], dtypes=F2, tol=TOL,
           errors=INT_ERRORS((2, 2))))
add(OpInfo("logdet", lambda dt: [Sample(_wc((3, 3), dt)), Sample(_m((3, 4, 4), dt, 1)),
                                  Sample(T((2, 2), dt, data=[[1.0, 2.0], [2.0, 4.0]]))], dtypes=F2, tol=TOL))
add(OpInfo("linalg_ldl_factor_ex", lambda dt: [Sample(_sym((3, 3), dt)), Sample(_sym((2, 4, 4), dt, 1), hermitian=True),
                                                Sample(T((3, 3), dt, data=[[0.0, 1, 2], [1, 0, 0.5], [2, 0.5, 1]]))],
           dtypes=F2, tol=TOL, function=_lin("ldl_factor_ex"),
           errors=lambda: [Sample(T((2, 3), "float32"))]))
add(OpInfo("linalg_ldl_solve", lambda dt: [Sample(_sym((3, 3), dt), _m((3, 2), dt, 1)),
                                            Sample(_sym((2, 3, 3), dt, 2), _m((2, 3, 1), dt, 3))],
           dtypes=F2, tol={"float32": (2e-3, 2e-4), "float64": (1e-7, 1e-9)},
           function=lambda lib, a, b: lib.linalg.ldl_solve(*lib.linalg.ldl_factor(a), b)))
add(OpInfo("geqrf", lambda dt: [Sample(_m((4, 3), dt)), Sample(_m((2, 3, 5), dt, 1)), Sample(_m((0, 3), dt))],
           dtypes=F2, tol=TOL, errors=INT_ERRORS((2, 2))))
add(OpInfo("matrix_exp", lambda dt: [Sample(_m((3, 3), dt)), Sample(T((2, 4, 4), dt, low=-4, high=4, key=1)),
                                      Sample(T((2, 2), dt, low=-0.01, high=0.01, key=2)), Sample(T((0, 3, 3), dt))],
           dtypes=F2, tol={"float32": (1e-4, 1e-5), "float64": (1e-9, 1e-10)},
           errors=lambda: [Sample(T((2, 3), "float32")), Sample(T((2, 2), "int64", low=1, high=3))]))
add(OpInfo("lu_unpack", lambda dt: [Sample(_m((4, 3), dt)), Sample(_m((2, 3, 5), dt, 1)), Sample(_m((3, 3), dt, 2),
                                                                                                  unpack_data=False),
                                     Sample(_m((3, 3), dt, 3), unpack_pivots=False)],
           dtypes=F2, tol=TOL, function=lambda lib, a, **k: lib.lu_unpack(*lib.linalg.lu_factor_ex(a)[:2], **k)))
add(OpInfo("linalg_householder_product", lambda dt: [Sample(_m((4, 3), dt), T((2,), dt, low=0.5, high=1.8)),
                                                      Sample(_m((2, 3, 3), dt, 1), T((2, 3), dt, low=0.5, high=1.8))],
           dtypes=F2, tol=TOL, function=_lin("householder_product"),
           errors=lambda: [Sample(T((2, 3), "float32"), T((1,), "float32")),
                           Sample(T((3, 2), "float32"), T((3,), "float32"))]))
add(OpInfo("orgqr", lambda dt: [Sample(_m((4, 3), dt), T((3,), dt, low=0.5, high=1.8))], dtypes=F2, tol=TOL))
add(OpInfo("ormqr", lambda dt: [Sample(_m((4, 3), dt), T((3,), dt, low=0.5, high=1.8), _m((4, 2), dt, 1)),
                                 Sample(_m((4, 3), dt), T((3,), dt, low=0.5, high=1.8), _m((2, 4), dt, 1), False, True)],
           dtypes=F2, tol=TOL,
           errors=lambda: [Sample(T((3, 2), "float32"), T((2,), "float32"), T((4, 3), "float32"))]))
add(OpInfo("matrix_power", lambda dt: [Sample(_wc((3, 3), dt), 3), Sample(_wc((2, 3, 3), dt, 1), -2),
                                        Sample(_m((2, 2), dt, 2), 0), Sample(_m((2, 2), dt, 3), 1)],
           dtypes=F2, tol={"float32": (1e-3, 1e-4), "float64": (1e-7, 1e-9)},
           errors=lambda: [Sample(T((2, 3), "float32"), 2),
                           Sample(T((2, 2), "float32", data=[[1.0, 2.0], [2.0, 4.0]]), -1)]))
add(OpInfo("inverse", lambda dt: [Sample(_wc((3, 3), dt)), Sample(_wc((2, 3, 3), dt, 1))], dtypes=F2, tol=TOL,
           errors=lambda: [Sample(T((2, 2), "float32", data=[[1.0, 2.0], [2.0, 4.0]]))]))
add(OpInfo("pinverse", lambda dt: [Sample(_m((4, 3), dt)), Sample(_m((2, 2, 5), dt, 1), 0.3)], dtypes=F2, tol=TOL))
add(OpInfo("cholesky", lambda dt: [Sample(_spd((3, 3), dt)), Sample(_spd((2, 3, 3), dt, 1), True)], dtypes=F2,
           tol=TOL, errors=lambda: [Sample(T((2, 2), "float32", data=[[1.0, 2.0], [2.0, 1.0]]))]))
add(OpInfo("cholesky_solve", lambda dt: [Sample(_m((3, 2), dt), _spd((3, 3), dt, 1)),
                                          Sample(_m((2, 3, 1), dt, 2), _spd((3, 3), dt, 3), True)],
           dtypes=F2, tol=TOL,
           function=lambda lib, b, a, upper=False, **k: lib.cholesky_solve(b, _chol(lib, a, upper), upper, **k),
           method=lambda lib, b, a, upper=False: b.cholesky_solve(_chol(lib, a, upper), upper)))
add(OpInfo("cholesky_inverse", lambda dt: [Sample(_spd((3, 3), dt)), Sample(_spd((2, 3, 3), dt, 1), True)],
           dtypes=F2, tol={"float32": (1e-3, 1e-4), "float64": (1e-7, 1e-9)},
           function=lambda lib, a, upper=False, **k: lib.cholesky_inverse(_chol(lib, a, upper), upper, **k),
           method=lambda lib, a, upper=False: _chol(lib, a, upper).cholesky_inverse(upper)))
add(OpInfo("qr", lambda dt: [Sample(_m((4, 3), dt)), Sample(_m((2, 3, 4), dt, 1), False)], dtypes=F2, tol=TOL))
# torch.svd's U and V are unique up to column signs: compare S, |U| and |V|
add(OpInfo("svd", lambda dt: [Sample(_m((4, 3), dt)), Sample(_m((2, 3, 4), dt, 1), True, False)], dtypes=F2,
           tol=TOL, function=lambda lib, a, *r: tuple(x.abs() for x in lib.svd(a, *r)),
           method=lambda lib, a, *r: tuple(x.abs() for x in a.svd(*r))))
add(OpInfo("lu_solve", lambda dt: [Sample(_m((3, 2), dt), _wc((3, 3), dt, 1)), Sample(_m((2, 3, 1), dt), _wc((3, 3), dt, 2))],
           dtypes=F2, tol=TOL, function=lambda lib, b, a, **k: lib.lu_solve(b, *lib.linalg.lu_factor(a), **k),
           method=lambda lib, b, a: b.lu_solve(*lib.linalg.lu_factor(a))))
add(OpInfo("triangular_solve", lambda dt: [Sample(_m((3, 2), dt), _wc((3, 3), dt, 1)),
                                            Sample(_m((2, 3, 2), dt), _wc((3, 3), dt, 2), False, True, True)],
           dtypes=F2, tol=TOL, errors=lambda: [Sample(T((3,), "float32"), T((3, 3), "float32")),
                                               Sample(T((3, 1), "float32"), T((3, 3), "float64"))]))
