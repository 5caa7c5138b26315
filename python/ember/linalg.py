"""ember.linalg: PyTorch's torch.linalg for real matrices. Decompositions run on LAPACK (with
gradients); norms are composites of differentiable ops."""
import collections
import math

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


QRResult = collections.namedtuple("QRResult", ["Q", "R"])
EighResult = collections.namedtuple("EighResult", ["eigenvalues", "eigenvectors"])
SVDResult = collections.namedtuple("SVDResult", ["U", "S", "Vh"])
LstsqResult = collections.namedtuple("LstsqResult", ["solution", "residuals", "rank", "singular_values"])


def det(A, *, out=None):
    return _wrap(_ops._linalg_det)(A)


def inv(A, *, out=None):
    return _wrap(_ops._linalg_inv)(A)


def solve(A, B, *, left=True, out=None):
    if left:
        return _wrap(_ops._linalg_solve)(A, B)
    return _wrap(_ops._linalg_solve)(A.mT, B.mT).mT  # X A = B  <=>  A^T X^T = B^T


def cholesky(A, *, upper=False, out=None):
    return _wrap(_ops._linalg_cholesky)(A, upper=upper)


def qr(A, mode="reduced", *, out=None):
    return QRResult(*_ops._linalg_qr(A, mode))


def eigh(A, UPLO="L", *, out=None):
    return EighResult(*_wrap(_ops._linalg_eigh)(A, UPLO))


def eigvalsh(A, UPLO="L", *, out=None):
    return eigh(A, UPLO).eigenvalues


def svd(A, full_matrices=True, *, driver=None, out=None):
    return SVDResult(*_wrap(_ops._linalg_svd)(A, full_matrices))


def svdvals(A, *, driver=None, out=None):
    return svd(A, full_matrices=False).S


def pinv(A, *, atol=None, rtol=None, hermitian=False, out=None):
    U, S, Vh = svd(A, full_matrices=False)
    if rtol is None:
        rtol = max(A.shape[-2:]) * finfo(A.dtype).eps if atol is None else 0.0
    cutoff = S.amax(-1, keepdim=True) * rtol
    if atol is not None:
        cutoff = cutoff.clamp_min(atol) if isinstance(atol, (int, float)) else _ops.maximum(cutoff, atol)
    Sinv = _ops.where(S > cutoff, S.reciprocal(), _ops.zeros_like(S))
    return (Vh.mT * Sinv.unsqueeze(-2)) @ U.mT


def lstsq(A, B, rcond=None, *, driver=None):
    """Least squares through the pseudo-inverse (gelsd semantics: minimum-norm solution)."""
    vector = B.dim() == A.dim() - 1
    Bm = B.unsqueeze(-1) if vector else B
    m, n = A.shape[-2], A.shape[-1]
    rtol = rcond if rcond is not None and rcond >= 0 else finfo(A.dtype).eps * max(m, n)
    S = svd(A, full_matrices=False).S
    X = pinv(A, rtol=rtol) @ Bm
    rank = (S > S.amax(-1, keepdim=True) * rtol).sum(-1)
    if m > n and bool((rank == n).all()):
        residuals = ((A @ X - Bm) ** 2).sum(-2)
    else:
        residuals = _ops.empty(0, dtype=A.dtype)
    if vector:
        X = X.squeeze(-1)
    return LstsqResult(X, residuals, rank, S)


def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None, out=None):
    if not x.is_floating_point():
        raise RuntimeError(f"linalg.vector_norm: Expected a floating point or complex tensor as input. Got {_name(x.dtype)}")
    if dtype is not None:
        x = x.to(dtype)
    if isinstance(dim, int):
        dim = [dim]
    return _ops.norm(x, float(ord), list(dim) if dim is not None else None, keepdim)


def _name(d):
    return d._cname() if hasattr(d, "_cname") else str(d)


def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None, out=None):
    if A.dim() < 2:
        raise RuntimeError(f"linalg.matrix_norm: The input tensor A must have at least 2 dimensions.")
    if dtype is not None:
        A = A.to(dtype)
    d0, d1 = (d % A.dim() for d in dim)
    if ord == "fro":
        return vector_norm(A, 2, (d0, d1), keepdim)
    if ord == "nuc" or ord in (2, -2):
        S = svd(_ops.movedim(A, [d0, d1], [-2, -1]), full_matrices=False).S
        r = S.sum(-1) if ord == "nuc" else (S.amax(-1) if ord == 2 else S.amin(-1))
        if keepdim:
            r = r.unsqueeze(min(d0, d1)).unsqueeze(max(d0, d1))
        return r
    if ord in (1, -1, math.inf, -math.inf):
        sum_dim, red_dim = (d0, d1) if ord in (1, -1) else (d1, d0)
        s = A.abs().sum(sum_dim, keepdim=True)
        r = s.amax(red_dim, keepdim=True) if ord > 0 else s.amin(red_dim, keepdim=True)
        return r if keepdim else r.squeeze(max(d0, d1)).squeeze(min(d0, d1))
    raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")


def norm(A, ord=None, dim=None, keepdim=False, *, dtype=None, out=None):
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
    return _ops._linalg_cross(input, other, dim=dim, out=out)
