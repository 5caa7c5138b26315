"""OpInfos for ops.yaml's complex-number and Fourier-transform sections (ops/complex.cpp, ops/fft.cpp;
imported at the end of opdb.py). The sample tensors are real pairs (..., 2): ops that take a complex
tensor see view_as_complex of them. test_complex.py and test_fft.py cover the complex dtypes in depth."""
from opdb import OpInfo, add
from parity import ALL_DTYPES, Sample, T

F2 = ("float32", "float64")
TOL = {"float32": (2e-5, 2e-5), "float64": (1e-12, 1e-12)}  # FFTs round in their own order


def _c(lib, x):
    return lib.view_as_complex(x)


def _ops(lib):
    return lib._C._ops if lib.__name__ == "ember" else lib


add(OpInfo("conj_physical", lambda dt: [Sample(T((3, 4), dt)), Sample(T((2, 3), dt, layout="T", key=1)),
                                        Sample(T((), dt, key=2))], dtypes=ALL_DTYPES))
# conj: a view with the conjugate bit (tests/python/test_conj_views.py); its values, resolved
add(OpInfo("conj", lambda dt: [Sample(T((3, 4), dt)), Sample(T((2, 3), dt, layout="T", key=1)), Sample(T((), dt, key=2))],
           dtypes=ALL_DTYPES, function=lambda lib, x: lib.conj(x).resolve_conj()))
# _neg_view: a view with the negative bit (test_conj_views.py); its values, resolved
add(OpInfo("_neg_view", lambda dt: [Sample(T((3, 4), dt)), Sample(T((2, 3), dt, layout="T", key=1)),
                                    Sample(T((), dt, key=2))], dtypes=F2,
           function=lambda lib, x: lib._neg_view(x).resolve_neg()))
add(OpInfo("view_as_real", lambda dt: [Sample(T((3, 2), dt)), Sample(T((2, 4, 2), dt, key=1))], dtypes=F2,
           function=lambda lib, x: lib.view_as_real(_c(lib, x) * 2)))
add(OpInfo("view_as_complex", lambda dt: [Sample(T((3, 2), dt)), Sample(T((2, 4, 2), dt, key=1))], dtypes=F2,
           errors=lambda: [Sample(T((3,), "float32")), Sample(T((3, 3), "float32")), Sample(T((2,), "int64"))]))
add(OpInfo("complex", lambda dt: [Sample(T((3, 4), dt), T((3, 4), dt, key=1)), Sample(T((3, 1), dt), T((4,), dt, key=2))],
           dtypes=F2, errors=lambda: [Sample(T((3,), "float32"), T((3,), "float64")),
                                      Sample(T((3,), "int64"), T((3,), "int64"))]))
add(OpInfo("polar", lambda dt: [Sample(T((3, 4), dt, low=0, high=2), T((3, 4), dt, key=1)),
                                Sample(T((2, 1), dt, low=0, high=2), T((3,), dt, key=2))],
           dtypes=F2, tol=TOL, errors=lambda: [Sample(T((3,), "float32"), T((3,), "float64"))]))
add(OpInfo("_fft_c2c", lambda dt: [Sample(T((3, 4, 2), dt), [0, 1], 1, True), Sample(T((5, 2), dt, key=1), [0], 2, False),
                                   Sample(T((2, 3, 4, 2), dt, key=2), [2, 0], 0, True)],
           dtypes=F2, tol=TOL, function=lambda lib, x, *a: _ops(lib)._fft_c2c(_c(lib, x), *a)))
add(OpInfo("_fft_r2c", lambda dt: [Sample(T((3, 8), dt), [1], 0, True), Sample(T((4, 5), dt, key=1), [0, 1], 2, False),
                                   Sample(T((2, 3, 7), dt, key=2), [2, 0], 1, True)],
           dtypes=F2, tol=TOL, function=lambda lib, x, *a: _ops(lib)._fft_r2c(x, *a),
           errors=lambda: [Sample(T((3,), "int64"), [0], 0, True)]))
add(OpInfo("_fft_c2r", lambda dt: [Sample(T((3, 5, 2), dt), [1], 2, 8), Sample(T((4, 3, 2), dt, key=1), [0, 1], 0, 5)],
           dtypes=F2, tol=TOL, function=lambda lib, x, *a: _ops(lib)._fft_c2r(_c(lib, x), *a)))
# eigenvalues and |eigenvectors| (eigenvectors are unique only up to a phase per column)
add(OpInfo("linalg_eig", lambda dt: [Sample(T((4, 4), dt)), Sample(T((2, 3, 3), dt, key=1)), Sample(T((0, 0), dt))],
           dtypes=F2, tol={"float32": (1e-4, 1e-4), "float64": (1e-10, 1e-10)},
           function=lambda lib, x: (lambda r: (r[0], r[1].abs()))(lib.linalg.eig(x)),
           errors=lambda: [Sample(T((2, 3), "float32")), Sample(T((3, 3), "int64"))]))
