"""ember.linalg: PyTorch's torch.linalg for real matrices. Decompositions run on LAPACK (with
gradients); norms are composites of differentiable ops."""
import collections
import math
import warnings

from . import _C
from ._C import _ops
from ._dtype_info import finfo


class LinAlgError(RuntimeError):
    """Raised for singular, not positive-definite or non-converging inputs (a RuntimeError, as in torch)."""


def _wrap(fn):
    def call(*a, **k):
        try:
            return fn(*a, **k)
        except RuntimeError as e:
            msg = str(e)
            if any(s in msg for s in ("singular", "positive-definite", "failed to converge")):
                raise LinAlgError(msg) from None
            raise
    return call


def _result_type(name, fields):
    """A named tuple printed as ember.return_types.<name>, the twin of torch.return_types.<name>."""
    def make(type_name, what):
        t = collections.namedtuple(type_name, fields)
        t.__module__ = "ember.return_types"
        t.__doc__ = f"Named tuple ({', '.join(fields)}) returned by {what}."
        plain_repr = t.__repr__
        t.__repr__ = lambda self: "ember.return_types." + plain_repr(self)
        return t
    what = name.replace("linalg_", "linalg.", 1)
    t = make(name, what)
    t._out_type = make(name + "_out", what + " with out=")  # torch names the out= results <name>_out
    return t


def _out(result, out):
    """out=: the result written into out (resized to the result's shape, as torch does); out returned."""
    if out is None:
        return result
    if isinstance(result, tuple):
        if not isinstance(out, (tuple, list)) or len(out) != len(result):
            raise TypeError(f"out must be a tuple of {len(result)} tensors")
        for r, o in zip(result, out):
            _out(r, o)
        return getattr(type(result), "_out_type", type(result))(*out)
    if result.requires_grad and _C.is_grad_enabled():
        raise RuntimeError("functions with out=... arguments don't support automatic differentiation, but one of "
                           "the arguments requires grad.")
    if out.dtype != result.dtype:
        raise RuntimeError(f"Expected out tensor to have dtype {_name(result.dtype)}, but got {_name(out.dtype)} "
                           "instead")
    # a sum over a new dimension of size one: the values unchanged, out resized like any out= op
    _ops.sum(result.detach().unsqueeze(0), [0], False, dtype=result.dtype, out=out)
    return out


QRResult = _result_type("linalg_qr", ["Q", "R"])
EighResult = _result_type("linalg_eigh", ["eigenvalues", "eigenvectors"])
SVDResult = _result_type("linalg_svd", ["U", "S", "Vh"])
LstsqResult = _result_type("linalg_lstsq", ["solution", "residuals", "rank", "singular_values"])


def det(A, *, out=None):
    """The determinant of each square matrix of A."""
    return _out(_wrap(_ops._linalg_det)(A), out)


def inv(A, *, out=None):
    """The inverse of each square matrix of A (LinAlgError if singular)."""
    return _out(_wrap(_ops._linalg_inv)(A), out)


def solve(A, B, *, left=True, out=None):
    """X with A X = B (X A = B unless left)."""
    if left:
        return _out(_wrap(_ops._linalg_solve)(A, B), out)
    return _out(_wrap(_ops._linalg_solve)(A.mT, B.mT).mT, out)  # X A = B  <=>  A^T X^T = B^T


def cholesky(A, *, upper=False, out=None):
    """The Cholesky factor L (A = L L^H), or U = L^H with upper."""
    return _out(_wrap(_ops._linalg_cholesky)(A, upper=upper), out)


def qr(A, mode="reduced", *, out=None):
    """The QR decomposition (Q, R); mode 'reduced', 'complete' or 'r'."""
    return _out(QRResult(*_ops._linalg_qr(A, mode)), out)


def eigh(A, UPLO="L", *, out=None):
    """Eigenvalues (ascending) and eigenvectors of symmetric A, read from one triangle."""
    return _out(EighResult(*_wrap(_ops._linalg_eigh)(A, UPLO)), out)


EigResult = _result_type("linalg_eig", ["eigenvalues", "eigenvectors"])


def eig(A, *, out=None):
    """Eigenvalues and unit-norm eigenvectors of a general square A, as complex tensors (A = V diag(L) V^-1)."""
    return _out(EigResult(*_wrap(_ops._linalg_eig)(A)), out)


def eigvals(A, *, out=None):
    """The (complex) eigenvalues of a general square A."""
    return _out(eig(A).eigenvalues, out)


def eigvalsh(A, UPLO="L", *, out=None):
    """The eigenvalues (ascending) of symmetric A."""
    return _out(eigh(A, UPLO).eigenvalues, out)


def svd(A, full_matrices=True, *, driver=None, out=None):
    """The singular value decomposition (U, S, Vh)."""
    return _out(SVDResult(*_wrap(_ops._linalg_svd)(A, full_matrices)), out)


def svdvals(A, *, driver=None, out=None):
    """The singular values (descending)."""
    return _out(svd(A, full_matrices=False).S, out)


def pinv(A, *, atol=None, rtol=None, hermitian=False, out=None):
    """The Moore-Penrose pseudo-inverse."""
    if hermitian:
        # eigh reads the lower triangle only, as PyTorch's: |eigenvalues| play the singular values' part
        L, Q = eigh(A)
        S = L.abs()
    else:
        U, S, Vh = svd(A, full_matrices=False)
    if rtol is None:
        rtol = max(A.shape[-2:]) * finfo(A.dtype).eps if atol is None else 0.0
    cutoff = _amax_or_zero(S, -1, True) * rtol
    if atol is not None:
        cutoff = cutoff.clamp_min(atol) if isinstance(atol, (int, float)) else _ops.maximum(cutoff, atol)
    if hermitian:
        Linv = _ops.where(S > cutoff, L.reciprocal(), _ops.zeros_like(L))
        return _out((Q * Linv.unsqueeze(-2).to(Q.dtype)) @ Q.mH, out)
    Sinv = _ops.where(S > cutoff, S.reciprocal(), _ops.zeros_like(S))
    return _out((Vh.mH * Sinv.unsqueeze(-2).to(Vh.dtype)) @ U.mH, out)


def _amax_or_zero(x, dim, keepdim=False):
    """amax over dim, 0 where that dim is empty: the largest of no singular values or row sums, as torch's norms."""
    if x.shape[dim] == 0:
        shape = list(x.shape)
        if keepdim:
            shape[dim] = 1
        else:
            del shape[dim]
        return _ops.zeros(shape, dtype=x.dtype, device=x.device)
    return x.amax(dim, keepdim=keepdim)


def lstsq(A, B, rcond=None, *, driver=None):
    """Least squares through the pseudo-inverse (the minimum-norm solution for every driver), with
    PyTorch's outputs per driver: rank for all but gels, singular values for gelsd/gelss, residuals
    when m > n (and A has full rank) except for gelsy, the CPU's default."""
    drivers = ("gels", "gelsy", "gelsd", "gelss")
    if driver is not None and driver not in drivers:
        raise RuntimeError(f"torch.linalg.lstsq: parameter `driver` should be one of {drivers}")
    driver = driver or "gelsy"
    if A.dim() < 2:
        raise RuntimeError("torch.linalg.lstsq: input must have at least 2 dimensions.")
    vector = B.dim() == A.dim() - 1
    Bm = B.unsqueeze(-1) if vector else B
    m, n = A.shape[-2], A.shape[-1]
    rtol = rcond if rcond is not None and rcond >= 0 else finfo(A.dtype).eps * max(m, n)
    S = svd(A, full_matrices=False).S
    X = pinv(A, rtol=rtol) @ Bm
    rank = (S > _amax_or_zero(S, -1, True) * rtol).sum(-1)
    empty = _ops.empty(0, dtype=S.dtype, device=A.device)
    residuals = empty
    if m > n and driver != "gelsy" and (driver == "gels" or bool((rank == n).all())):
        residuals = ((A @ X - Bm).abs() ** 2).sum(-2)
        if n == 0 and driver == "gels":  # no unknowns: gels reports zero residuals (torch passes that on)
            residuals = _ops.zeros_like(residuals)
    if vector:
        X = X.squeeze(-1)
    return LstsqResult(X, residuals,
                       _ops.empty(0, dtype=_C.int64, device=A.device) if driver == "gels" else rank,
                       S if driver in ("gelsd", "gelss") else empty)


def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None, out=None):
    """Vector p-norm over dimensions."""
    if not (x.is_floating_point() or x.is_complex()):
        raise RuntimeError(f"linalg.vector_norm: Expected a floating point or complex tensor as input. Got {_name(x.dtype)}")
    if dtype is not None:
        x = x.to(dtype)
    if isinstance(dim, int):
        dim = [dim]
    return _ops.norm(x, float(ord), list(dim) if dim is not None else None, keepdim)


def _name(d):
    return d._cname() if hasattr(d, "_cname") else str(d)


def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None, out=None):
    """Matrix norm (Frobenius, nuclear, or induced 1/2/inf norms) over two dimensions."""
    if A.dim() < 2:
        raise RuntimeError(f"linalg.matrix_norm: The input tensor A must have at least 2 dimensions.")
    if dtype is not None:
        A = A.to(dtype)
    d0, d1 = (d % A.dim() for d in dim)
    if ord == "fro":
        return vector_norm(A, 2, (d0, d1), keepdim)
    if ord == "nuc" or ord in (2, -2):
        S = svd(_ops.movedim(A, [d0, d1], [-2, -1]), full_matrices=False).S
        r = S.sum(-1) if ord == "nuc" else (_amax_or_zero(S, -1) if ord == 2 else S.amin(-1))
        if keepdim:
            r = r.unsqueeze(min(d0, d1)).unsqueeze(max(d0, d1))
        return r
    if ord in (1, -1, math.inf, -math.inf):
        sum_dim, red_dim = (d0, d1) if ord in (1, -1) else (d1, d0)
        s = A.abs().sum(sum_dim, keepdim=True)
        r = _amax_or_zero(s, red_dim, True) if ord > 0 else s.amin(red_dim, keepdim=True)
        return r if keepdim else r.squeeze(max(d0, d1)).squeeze(min(d0, d1))
    raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")


def norm(A, ord=None, dim=None, keepdim=False, *, dtype=None, out=None):
    """Vector or matrix norm, chosen by ord and dim."""
    if isinstance(dim, int):
        dim = (dim,)
    if ord is None:
        if dim is not None and len(dim) == 2:
            return matrix_norm(A, "fro", dim, keepdim, dtype=dtype)
        return vector_norm(A, 2, dim, keepdim, dtype=dtype)
    if dim is None:
        if A.dim() == 2:
            return matrix_norm(A, ord, (-2, -1), keepdim, dtype=dtype)
        if A.dim() == 1:
            return vector_norm(A, ord, None, keepdim, dtype=dtype)
        raise RuntimeError("linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. "
                           f"Got {A.dim()}D.")
    if len(dim) == 2:
        return matrix_norm(A, ord, dim, keepdim, dtype=dtype)
    return vector_norm(A, ord, dim, keepdim, dtype=dtype)


def cross(input, other, *, dim=-1, out=None):
    """Cross product of 3-vectors along a dimension (default the last)."""
    return _ops._linalg_cross(input, other, dim=dim, out=out)


# ---- LU, triangular, LDL and the _ex variants (info tensors instead of errors)
LUFactorResult = _result_type("linalg_lu_factor", ["LU", "pivots"])
LUFactorExResult = _result_type("linalg_lu_factor_ex", ["LU", "pivots", "info"])
LUResult = _result_type("linalg_lu", ["P", "L", "U"])
SolveExResult = _result_type("linalg_solve_ex", ["result", "info"])
InvExResult = _result_type("linalg_inv_ex", ["inverse", "info"])
CholeskyExResult = _result_type("linalg_cholesky_ex", ["L", "info"])
SlogdetResult = _result_type("linalg_slogdet", ["sign", "logabsdet"])
LDLFactorResult = _result_type("linalg_ldl_factor", ["LD", "pivots"])
LDLFactorExResult = _result_type("linalg_ldl_factor_ex", ["LD", "pivots", "info"])


def _first_failure(info):
    """(batch index, info value) of the first positive LAPACK info, or None."""
    bad = (info.reshape(-1) > 0).nonzero()
    if bad.numel() == 0:
        return None
    b = int(bad[0, 0])
    return b, int(info.reshape(-1)[b])


def _batch_prefix(A, b):
    return f"(Batch element {b}): " if A.dim() > 2 else ""


def _check_square(A, name):
    if A.dim() < 2:
        raise RuntimeError(f"{name}: The input tensor A must have at least 2 dimensions.")
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"{name}: A must be batches of square matrices, but they are {A.shape[-2]} by "
                           f"{A.shape[-1]} matrices")


def lu_factor_ex(A, *, pivot=True, check_errors=False, out=None):
    """Packed LU factors, LAPACK pivots and info (0, or the first zero pivot of U)."""
    return _out(LUFactorExResult(*_ops._linalg_lu_factor_ex(A, pivot=pivot, check_errors=check_errors)), out)


def lu_factor(A, *, pivot=True, out=None):
    """Packed LU factors and LAPACK pivots (raises if U has a zero pivot)."""
    LU, pivots, info = _ops._linalg_lu_factor_ex(A, pivot=pivot)
    failure = _first_failure(info)
    if failure is not None:
        b, i = failure
        raise RuntimeError(f"torch.linalg.lu_factor: {_batch_prefix(A, b)}U[{i},{i}] is zero and using it on "
                           "lu_solve would result in a division by zero. If you still want to perform the "
                           "factorization, consider calling linalg.lu(A, pivot) or linalg.lu_factor_ex(A, pivot)")
    return _out(LUFactorResult(LU, pivots), out)


def lu(A, *, pivot=True, out=None):
    """The LU decomposition with partial pivoting: (P, L, U), A = P L U."""
    LU, pivots, _ = _ops._linalg_lu_factor_ex(A, pivot=pivot)
    return _out(LUResult(*_ops.lu_unpack(LU, pivots)), out)


def lu_solve(LU, pivots, B, *, left=True, adjoint=False, out=None):
    """X with A X = B from lu_factor's output (X A = B unless left; A^T with adjoint)."""
    return _out(_ops._linalg_lu_solve(LU, pivots, B, left=left, adjoint=adjoint), out)


def solve_triangular(A, B, *, upper, left=True, unitriangular=False, out=None):
    """X with A X = B for triangular A (only its upper or lower triangle is read)."""
    return _out(_ops._linalg_solve_triangular(A, B, upper=upper, left=left, unitriangular=unitriangular), out)


def _solve_with_info(A, B, left, name):
    """X and LAPACK's info for A X = B (X A = B unless left), B a matrix or a batch of vectors."""
    _check_square(A, name)
    if not (A.is_floating_point() or A.is_complex()):
        raise RuntimeError(f"{name}: Expected a floating point or complex tensor as input. Got {_name(A.dtype)}")
    if A.dtype != B.dtype:
        raise RuntimeError(f"{name}: Expected A and B to have the same dtype, but found A of type "
                           f"{_name(A.dtype)} and B of type {_name(B.dtype)} instead")
    vector = B.dim() == 1 or (B.dim() == A.dim() - 1 and tuple(B.shape) == tuple(A.shape[:-1]))
    Bm = B.unsqueeze(-1 if left else -2) if vector else B
    LU, pivots, info = _ops._linalg_lu_factor_ex(A)
    X = _ops._linalg_lu_solve(LU, pivots, Bm, left=left)
    return (X.squeeze(-1 if left else -2) if vector else X), info


def solve_ex(A, B, *, left=True, check_errors=False, out=None):
    """solve() that reports singular matrices in info instead of raising."""
    X, info = _solve_with_info(A, B, left, "linalg.solve")
    failure = _first_failure(info) if check_errors else None
    if failure is not None:
        raise LinAlgError(f"torch.linalg.solve_ex: {_batch_prefix(A, failure[0])}The solver failed because the "
                          "input matrix is singular.")
    return _out(SolveExResult(X, info), out)


def inv_ex(A, *, check_errors=False, out=None):
    """inv() that reports singular matrices in info instead of raising."""
    _check_square(A, "linalg.inv")
    if not (A.is_floating_point() or A.is_complex()):
        raise RuntimeError(f"linalg.inv: Expected a floating point or complex tensor as input. Got {_name(A.dtype)}")
    if A.dtype in (_C.float16, _C.bfloat16):
        raise RuntimeError(f"linalg.inv: Low precision dtypes not supported. Got {_name(A.dtype)}")
    eye = _ops.eye(A.shape[-1], dtype=A.dtype).expand(A.shape)
    X, info = _solve_with_info(A, eye, True, "linalg.inv")
    failure = _first_failure(info) if check_errors else None
    if failure is not None:
        b, i = failure
        raise LinAlgError(f"linalg.inv_ex: {_batch_prefix(A, b)}The diagonal element {i} is zero, the inversion "
                          "could not be completed because the input matrix is singular.")
    return _out(InvExResult(X, info), out)


def cholesky_ex(A, *, upper=False, check_errors=False, out=None):
    """cholesky() that reports failures in info instead of raising."""
    L, info = _wrap(_ops._linalg_cholesky_ex)(A, upper=upper, check_errors=check_errors)
    return _out(CholeskyExResult(L, info), out)


def slogdet(A, *, out=None):
    """The sign and the log of the absolute value of the determinant."""
    return _out(SlogdetResult(*_ops._linalg_slogdet(A)), out)


def ldl_factor_ex(A, *, hermitian=False, check_errors=False, out=None):
    """Bunch-Kaufman L D L^T factors of symmetric A (compact LD, pivots, info)."""
    r = _wrap(_ops._linalg_ldl_factor_ex)(A, hermitian=hermitian, check_errors=check_errors)
    return _out(LDLFactorExResult(*r), out)


def ldl_factor(A, *, hermitian=False, out=None):
    """Bunch-Kaufman L D L^T factors of symmetric A (compact LD and pivots)."""
    LD, pivots, info = _ops._linalg_ldl_factor_ex(A, hermitian=hermitian)
    failure = _first_failure(info)
    if failure is not None:
        b, i = failure
        raise LinAlgError(f"torch.linalg.ldl_factor: {_batch_prefix(A, b)}The factorization could not be completed "
                          f"because the block diagonal matrix D is singular (D[{i},{i}] is zero).")
    return _out(LDLFactorResult(LD, pivots), out)


def ldl_solve(LD, pivots, B, *, hermitian=False, out=None):
    """X with A X = B from ldl_factor's output."""
    if B.dim() < 2:  # torch indexes B's second-to-last dimension first
        raise IndexError(f"Dimension out of range (expected to be in range of [{-max(B.dim(), 1)}, "
                         f"{max(B.dim(), 1) - 1}], but got -2)")
    return _out(_ops._linalg_ldl_solve(LD, pivots, B, hermitian=hermitian), out)


def householder_product(A, tau, *, out=None):
    """The first n columns of the product of Householder reflectors (LAPACK's orgqr)."""
    return _out(_ops._linalg_householder_product(A, tau), out)


# ---- matrix functions
def matrix_power(A, n, *, out=None):
    """A to the integer power n (negative n: powers of the inverse)."""
    return _out(_wrap(_ops.matrix_power)(A, n), out)


def matrix_exp(A):
    """The matrix exponential of each square matrix of A."""
    return _ops.matrix_exp(A)


def _as_tensor_like(x, S):
    return x if isinstance(x, _C.TensorBase) else _ops.full([], float(x), dtype=S.dtype)


def matrix_rank(A, tol=None, hermitian=False, *, atol=None, rtol=None, out=None):
    """The number of singular values (|eigenvalues| if hermitian) above max(atol, rtol * the largest)."""
    if tol is not None:  # the deprecated positional tolerance: an absolute one
        atol, rtol = tol, 0.0
    if A.dim() < 2:
        raise RuntimeError("linalg.matrix_rank: The input tensor input must have at least 2 dimensions.")
    if A.dtype not in (_C.float32, _C.float64, _C.complex64, _C.complex128):
        raise RuntimeError("This function doesn't handle types other than float and double")
    if A.numel() == 0:
        return _out(_ops.zeros(list(A.shape[:-2]), dtype=_C.int64), out)
    S = eigvalsh(A).abs() if hermitian else svdvals(A)
    if rtol is None:
        default = max(A.shape[-2:]) * finfo(A.dtype).eps
        rtol = default if atol is None or (not isinstance(atol, _C.TensorBase) and atol <= 0) else 0.0
    smax = S.amax(-1, keepdim=True)
    cutoff = _ops.maximum(_as_tensor_like(rtol, S).unsqueeze(-1) * smax if isinstance(rtol, _C.TensorBase)
                          else smax * rtol,
                          (_as_tensor_like(atol, S).unsqueeze(-1) if isinstance(atol, _C.TensorBase)
                           else _as_tensor_like(0.0 if atol is None else atol, S)))
    return _out((S > cutoff).sum(-1), out)


_COND_ORDS = (None, 2, -2, "fro", "nuc", math.inf, -math.inf, 1, -1)


def cond(A, p=None, *, out=None):
    """The condition number: ratio of extreme singular values for p in (None, 2, -2), else
    norm(A, p) * norm(A^-1, p) (inf for a singular A)."""
    if p not in _COND_ORDS:
        raise RuntimeError(f"linalg.cond got an invalid norm type: {p}")
    if A.dim() < 2:
        raise RuntimeError("linalg.cond: The input tensor A must have at least 2 dimensions.")
    if p in (None, 2, -2):
        if A.numel() == 0:
            return _out(_ops.zeros(list(A.shape[:-2]), dtype=A.dtype), out)
        S = svdvals(A)
        r = S.amax(-1) / S.amin(-1) if p in (None, 2) else S.amin(-1) / S.amax(-1)
        return _out(r, out)
    _check_square(A, f"linalg.cond(ord={p})")
    if A.numel() == 0:
        return _out(_ops.zeros(list(A.shape[:-2]), dtype=A.dtype), out)
    Ainv, info = inv_ex(A)
    singular = (info > 0).unsqueeze(-1).unsqueeze(-1)
    Ainv = _ops.where(singular, _ops.zeros_like(Ainv), Ainv)  # finite (no SVD of inf), replaced below
    r = matrix_norm(A, p) * matrix_norm(Ainv, p)
    return _out(_ops.where(info > 0, _ops.full([], math.inf, dtype=r.dtype), r), out)


def multi_dot(tensors, *, out=None):
    """The chained product, first and last factor possibly vectors; evaluated left to right."""
    n = len(tensors)
    if n < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {n}")
    first, last = tensors[0], tensors[-1]
    if first.dim() not in (1, 2):
        raise RuntimeError(f"multi_dot(): the first tensor must be 1D or 2D but got {first.dim()}D")
    if last.dim() not in (1, 2):
        raise RuntimeError(f"multi_dot(): the last tensor must be 1D or 2D but got {last.dim()}D")
    for i in range(1, n - 1):
        if tensors[i].dim() != 2:
            raise RuntimeError(f"multi_dot(): tensor {i} must be 2D but got {tensors[i].dim()}D")
    for i, t in enumerate(tensors):
        if t.dtype != first.dtype:
            raise RuntimeError(f"multi_dot(): all tensors must have be the same dtype but tensor 0 is "
                               f"{_name(first.dtype).lower()} and tensor {i} {_name(t.dtype).lower()}")
    mats = [first.unsqueeze(0) if first.dim() == 1 else first] + list(tensors[1:-1]) + \
        [last.unsqueeze(-1) if last.dim() == 1 else last]
    for i in range(n - 1):
        if mats[i].shape[-1] != mats[i + 1].shape[0]:
            raise RuntimeError(f"multi_dot(): tensors {i} and {i + 1} with shapes {list(tensors[i].shape)} and "
                               f"{list(tensors[i + 1].shape)} cannot be multiplied")
    r = mats[0]
    for m in mats[1:]:
        r = r @ m
    if first.dim() == 1:
        r = r.squeeze(0)
    if last.dim() == 1:
        r = r.squeeze(-1)
    return _out(r, out)


_chain_matmul_warned = False


def _chain_matmul(*matrices, out=None):
    """torch.chain_matmul: multi_dot of 2-D matrices (one matrix is returned as a copy)."""
    if len(matrices) == 1 and isinstance(matrices[0], (list, tuple)):
        matrices = tuple(matrices[0])
    if not matrices:
        raise RuntimeError("chain_matmul(): Expected one or more matrices")
    for t in matrices:
        if t.dim() != 2:
            raise RuntimeError(f"Tensor dimension is {t.dim()}, expected 2 instead.")
    global _chain_matmul_warned
    if not _chain_matmul_warned:
        _chain_matmul_warned = True
        warnings.warn("chain_matmul is deprecated: use linalg.multi_dot, which takes a list of two or more tensors")
    if len(matrices) == 1:
        return _out(matrices[0].clone(), out)
    return multi_dot(list(matrices), out=out)


def _torch_lu(A, pivot=True, get_infos=False, out=None):
    """torch.lu / Tensor.lu: (LU, pivots) or, with get_infos, (LU, pivots, infos); never raises for singular A."""
    r = tuple(_ops._linalg_lu_factor_ex(A, pivot=pivot))
    return _out(r if get_infos else r[:2], out)


def tensorinv(A, ind=2, *, out=None):
    """The inverse of A seen as a linear map from its first ind dimensions to the rest."""
    if ind <= 0:
        raise RuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    rows, cols = list(A.shape[:ind]), list(A.shape[ind:])
    p, q = math.prod(rows), math.prod(cols)
    if p != q:
        raise RuntimeError(f"Expected self to satisfy the requirement prod(self.shape[ind:]) == "
                           f"prod(self.shape[:ind]), but got {q} != {p}")
    return _out(inv(A.reshape(p, q)).reshape(cols + rows), out)


def tensorsolve(A, B, dims=None, *, out=None):
    """X with tensordot(A, X, X.ndim) = B."""
    if dims is not None:
        dims = [d % A.dim() for d in dims]
        A = _ops.movedim(A, dims, list(range(A.dim() - len(dims), A.dim())))
    result_shape = list(A.shape[B.dim():])
    p, q = B.numel(), math.prod(result_shape)
    if p != q:
        raise RuntimeError(f"Expected self to satisfy the requirement prod(self.shape[other.ndim:]) == "
                           f"prod(self.shape[:other.ndim]), but got {q} != {p}")
    return _out(solve(A.reshape(p, q), B.reshape(p)).reshape(result_shape), out)


def vander(x, N=None):
    """Columns x**0, x**1, ..., x**(N-1) (increasing powers, unlike numpy's default)."""
    if x.dim() < 1:
        if N is None:
            raise RuntimeError("N must be greater than 1.")
        x = x.reshape(1)  # a 0-d x is a one-element vector, as torch's
    n = x.shape[-1] if N is None else N
    if n <= 1:
        raise RuntimeError("N must be greater than 1.")
    if x.dtype == _C.bool:
        raise RuntimeError("linalg.vander supports floating point, complex, and integer tensors, but got Bool")
    dtype = x.dtype if x.is_floating_point() or x.is_complex() else _C.int64  # integers: cumprod's int64, as torch
    x = x.to(dtype)
    powers = x.unsqueeze(-1).expand(*x.shape, n - 1).cumprod(-1, dtype=dtype)
    return _ops.cat([_ops.ones_like(x).unsqueeze(-1), powers], -1)


def vecdot(x, y, *, dim=-1, out=None):
    """The dot product of x and y along dim (broadcasting), conjugating x: sum(conj(x) * y)."""
    for t in (x, y):
        if not (t.is_floating_point() or t.is_complex()):
            raise RuntimeError(f"linalg.vecdot: Expected a floating point or complex tensor as input. "
                               f"Got {_name(t.dtype)}")
    if x.dtype != y.dtype:
        raise RuntimeError(f"linalg.vecdot: Expected x and y to have the same dtype, but found x of type "
                           f"{_name(x.dtype)} and y of type {_name(y.dtype)} instead.")
    return _out((x.conj() * y).sum(dim), out)


def diagonal(A, *, offset=0, dim1=-2, dim2=-1):
    """The diagonals of A's matrices (torch.diagonal over the last two dimensions)."""
    return A.diagonal(offset, dim1, dim2)


def matmul(input, other, *, out=None):
    """Matrix product with broadcasting over batch dimensions (the same as ember.matmul)."""
    return _ops.matmul(input, other) if out is None else _ops.matmul(input, other, out=out)


# torch.linalg.common_notes: the note templates its docstrings share (CPU-only Ember never synchronizes a device)
common_notes = {
    "experimental_warning": 'This function is "experimental" and it may change in a future release.',
    "sync_note": "When inputs are on a CUDA device, this function synchronizes that device with the CPU.",
    "sync_note_ex": "When the inputs are on a CUDA device, this function synchronizes only when "
                    ":attr:`check_errors`\\ `= True`.",
    "sync_note_has_ex": "When inputs are on a CUDA device, this function synchronizes that device with the CPU. "
                        "For a version of this function that does not synchronize, see :func:`{}`.",
}


def _install_tensor_lu():
    # Tensor.lu is Python in torch too (it calls torch.lu)
    from ._tensor import Tensor

    def lu(self, pivot=True, get_infos=False):
        """LU factorization with pivots (optionally the info tensor)."""
        return _torch_lu(self, pivot, get_infos)
    Tensor.lu = lu


_install_tensor_lu()
