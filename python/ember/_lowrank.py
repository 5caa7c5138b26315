"""torch.svd_lowrank and torch.pca_lowrank: a rank-q SVD of a matrix (or a batch of them) by
randomized range finding (Halko, Martinsson and Tropp 2009): sample the range of A with q Gaussian
random vectors, sharpen the sample with niter power (subspace) iterations re-orthonormalized by QR
each half step (their Algorithm 4.4), then take the exact SVD of the small projection Q^H A
(Algorithm 5.1). The random vectors come from ember.randn, so results follow ember.manual_seed.
Everything is made of differentiable ops (matmul, linalg.qr, linalg.svd), so gradients flow."""
import operator

from . import _C
from ._C import _ops
from .linalg import qr, svd
from .sparse import sparse_coo_tensor, sum as _sparse_sum

__all__ = ["svd_lowrank", "pca_lowrank"]


def _mH(A):
    """Conjugate transpose of the last two dims. A 2-D sparse COO matrix by swapping its index rows
    (Ember has no sparse transpose kernel): A^H @ X then stays a sparse @ dense product."""
    if A.is_sparse:
        return sparse_coo_tensor(A._indices().flip(0), A._values().conj_physical(), (A.shape[1], A.shape[0]))
    return A.mH


def _minus(P, M, X):
    """P - M @ X, where P = A @ X and M (the matrix subtracted from A) may be None."""
    return P if M is None else P - M @ X


def _range_basis(A, q, niter, M):
    """Orthonormal columns Q (m x q) with Q Q^H (A - M) ~ A - M."""
    R = _ops.randn(A.shape[-1], q, dtype=A.dtype, device=A.device)
    Q = qr(_minus(A @ R, M, R)).Q
    MH = None if M is None else M.mH
    AH = _mH(A)
    for _ in range(niter):
        # one power iteration: (A A^H) Q, orthonormalizing in between so small singular values survive
        Q = qr(_minus(AH @ Q, MH, Q)).Q
        Q = qr(_minus(A @ Q, M, Q)).Q
    return Q


def _svd_lowrank(A, q, niter, M):
    if A.dim() < 2:
        raise ValueError(f"svd_lowrank: expected a matrix or a batch of matrices, got a {A.dim()}-D tensor")
    if A.is_sparse and A.dim() != 2:
        raise ValueError(f"svd_lowrank: a sparse input must be 2-D, got {A.dim()}-D")
    if A.dtype not in (_C.float32, _C.float64, _C.complex64, _C.complex128):  # as PyTorch's QR
        raise RuntimeError(f"svd_lowrank: expected a float32, float64, complex64 or complex128 input, got {A.dtype}")
    q = 6 if q is None else operator.index(q)
    niter = 2 if niter is None else operator.index(niter)
    if q < 0:
        raise RuntimeError(f"svd_lowrank: q must be non-negative, got q={q}")
    m, n = A.shape[-2:]
    if M is not None:
        M = M.broadcast_to(A.shape)
    if m < n:  # sample the range of the tall side: A^H = V S U^H
        A, M = _mH(A), (None if M is None else M.mH)
    Q = _range_basis(A, q, niter, M)
    B = _minus(_mH(A) @ Q, None if M is None else M.mH, Q).mH  # Q^H (A - M), small: min(q, m) x n
    U, S, Vh = svd(B, full_matrices=False)
    U, V = Q @ U, Vh.mH
    return (V, S, U) if m < n else (U, S, V)


def svd_lowrank(A, q=6, niter=2, M=None):
    """(U, S, V) with A - M ~ U diag(S) V^H, the q largest singular triplets approximated by a
    randomized SVD with niter power iterations. A: (*, m, n), or a 2-D sparse COO matrix; M
    (optional) broadcasts to A's shape. U: (*, m, k), S: (*, k), V: (*, n, k), k = min(q, m, n).
    Exact when A - M has rank <= q; choose q a little above the rank wanted."""
    return _svd_lowrank(A, q, niter, M)


def pca_lowrank(A, q=None, center=True, niter=2):
    """(U, S, V): the low-rank SVD of A with its column means subtracted (center=True), so V's
    columns are the principal directions and S**2 / (m - 1) the variances they explain. q defaults to
    min(6, m, n) and may not exceed min(m, n)."""
    if A.dim() < 2:
        raise ValueError(f"pca_lowrank: expected a matrix or a batch of matrices, got a {A.dim()}-D tensor")
    m, n = A.shape[-2:]
    if q is None:
        q = min(6, m, n)
    elif not 0 <= q <= min(m, n):
        raise ValueError(f"q(={q}) must be non-negative integer and not greater than min(m, n)={min(m, n)}")
    if not niter >= 0:
        raise ValueError(f"niter(={niter}) must be non-negative integer")
    if not center:
        return _svd_lowrank(A, q, niter, None)
    if A.is_sparse:
        if A.dim() != 2:
            raise ValueError("pca_lowrank input is expected to be 2-dimensional tensor")
        # keep A sparse: subtract the means as M, a dense row broadcast over the m rows (no m x n copy)
        mean = _sparse_sum(A, (0,)).to_dense() / m
        return _svd_lowrank(A, q, niter, mean.expand(m, n))
    return _svd_lowrank(A - A.mean(dim=-2, keepdim=True), q, niter, None)
