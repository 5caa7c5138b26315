"""torch.lobpcg: the k largest (or smallest) eigenpairs of a symmetric positive definite generalized
eigenproblem A x = lambda B x by LOBPCG (Knyazev 2001): Rayleigh-Ritz on span[X, W, P] each step,
X the current eigenvector estimates, W the (preconditioned) residuals, P the previous step's
directions. The basis is B-orthonormalized through the eigendecomposition of its Gram matrix, and
columns that became dependent are dropped ("ortho"; "basic" skips nothing but the same way).
Gradients (B = I): the partial symmetric eigendecomposition's, as torch's lobpcg backward."""
import math

from . import _C
from ._C import _ops
from .autograd.function import Function
from .autograd.grad_mode import no_grad

__all__ = ["lobpcg"]


class _State:
    """What a tracker sees each step (torch's LOBPCG attributes)."""

    def __init__(self, A, B, iK, iparams, fparams, bparams, method):
        self.A, self.B, self.iK, self.method = A, B, iK, method
        self.iparams, self.fparams, self.bparams = iparams, fparams, bparams
        self.ivars = {"istep": 0, "converged_count": 0, "converged_end": 0}
        self.fvars = {"_": 0.0}
        self.bvars = {"force_stop": False}
        self.tvars = {}
        self.E = self.X = self.S = self.R = None


def _b_orthonormal_basis(S, B, drop_tol):
    """(Q, T): Q = S @ T with Q^T B Q = I over the well-conditioned part of span(S). Twice: one pass
    through the Gram matrix squares S's condition number, the second restores orthonormality."""
    Q1, T1 = _b_orthonormal_pass(S, B, drop_tol)
    Q2, T2 = _b_orthonormal_pass(Q1, B, drop_tol)
    return Q2, T1 @ T2


def _b_orthonormal_pass(S, B, drop_tol):
    BS = S if B is None else B @ S
    G = S.mT @ BS
    G = (G + G.mT) * 0.5
    w, V = _linalg().eigh(G)
    keep = w > drop_tol * w.abs().max().clamp_min(1e-300)
    V, w = V[:, keep], w[keep]
    T = V / w.sqrt()
    return S @ T, T


def _rayleigh_ritz(A, Q, n, largest):
    H = Q.mT @ (A @ Q)
    H = (H + H.mT) * 0.5
    lam, Y = _linalg().eigh(H)
    order = _ops.argsort(lam, descending=largest)[:n]
    return lam[order], Y[:, order]


def _run(A, B, X, iK, k, niter, tol, largest, method, tracker, iparams, fparams, bparams):
    m, n = X.shape
    drop = fparams.get("ortho_tol_drop", tol) if method == "ortho" else 0.0
    drop = max(drop * drop, 1e3 * _finfo_eps(A.dtype) ** 2)
    st = _State(A, B, iK, iparams, fparams, bparams, method)
    Q, _ = _b_orthonormal_basis(X, B, drop)
    E, Y = _rayleigh_ritz(A, Q, n, largest)
    X = Q @ Y
    P = None
    a_norm = _linalg().matrix_norm(A).item()
    b_norm = 1.0 if B is None else _linalg().matrix_norm(B).item()
    step = 0
    best, best_step = math.inf, 0
    while niter < 0 or step < niter:
        BX = X if B is None else B @ X
        R = A @ X - BX * E
        xnorm = _linalg().vector_norm(X, dim=0)
        rerr = _linalg().vector_norm(R, dim=0) / (xnorm * (a_norm + E.abs() * b_norm))
        converged = int((rerr[:k] < tol).sum().item())
        st.ivars.update(istep=step, converged_count=converged, converged_end=converged)
        st.tvars["rerr"] = rerr
        st.E, st.X, st.R = E, X, R
        if tracker is not None:
            tracker(st)
            if st.bvars.get("force_stop"):
                break
        if converged >= k:
            break
        # stagnation: the residuals stopped shrinking at the precision's floor (niter=-1 must end)
        worst = float(rerr[:k].max().item())
        if worst < 0.5 * best:
            best, best_step = worst, step
        elif step - best_step >= 50:
            break
        W = R if iK is None else iK @ R
        parts = [X, W] if P is None else [X, W, P]
        S = _ops.cat(parts, 1)
        st.S = S
        Q, T = _b_orthonormal_basis(S, B, drop)
        E, Y = _rayleigh_ritz(A, Q, n, largest)
        C = T @ Y  # coefficients of the new X over [X, W, P]
        X_new = S @ C
        P = S[:, n:] @ C[n:]  # the part of the step outside the old X
        X = X_new
        step += 1
    return E[:k], X[:, :k]


def _linalg():
    from . import linalg
    return linalg


def _finfo_eps(dtype):
    return 2.220446049250313e-16 if dtype == _C.float64 else 1.1920928955078125e-07


class _LobpcgFn(Function):
    @staticmethod
    def forward(ctx, A, B, X, iK, k, niter, tol, largest, method, tracker, iparams, fparams, bparams):
        with no_grad():
            E, U = _lobpcg_batched(A, B, X, iK, k, niter, tol, largest, method, tracker, iparams, fparams, bparams)
        ctx.save_for_backward(A, E, U)
        ctx.has_B = B is not None
        return E, U

    @staticmethod
    def backward(ctx, gE, gU):
        A, E, U = ctx.saved_tensors
        if ctx.has_B:
            raise ValueError("lobpcg.backward does not support backward with B != I yet.")
        return (_partial_eigh_backward(A, E, U, gE, gU),) + (None,) * 12


def _partial_eigh_backward(A, E, U, gE, gU):
    """d(loss)/dA for the eigenpairs (E, U) of symmetric A (U's columns span an invariant subspace):
    the subspace part as eigh's, and for each eigenvector the component outside the subspace,
    z_i = (lambda_i I - A)^+ (I - U U^T) gU_i on the complement (solved with U U^T shifted away)."""
    if A.dim() > 2:
        return _ops.stack([_partial_eigh_backward(a, e, u, None if ge is None else ge, None if gu is None else gu)
                           for a, e, u, ge, gu in _zip_batch(A, E, U, gE, gU)])
    m, k = U.shape
    gA = _ops.zeros_like(A)
    if gE is not None:
        gA = gA + (U * gE) @ U.mT
    if gU is not None:
        inner = U.mT @ gU
        diff = E.unsqueeze(0) - E.unsqueeze(1)  # lambda_j - lambda_i
        off = ~_ops.eye(k, dtype=_C.bool)
        F = _ops.where(off, 1.0 / _ops.where(off, diff, _ops.ones_like(diff)), _ops.zeros_like(diff))
        gA = gA + U @ (F * inner) @ U.mT
        resid = gU - U @ inner  # (I - U U^T) gU
        shift = 2.0 * (E.abs().max() + A.abs().max() + 1.0)
        eye = _ops.eye(m, dtype=A.dtype)
        uut = U @ U.mT
        cols = []
        for i in range(k):
            M = E[i] * eye - A + shift * uut
            cols.append(_linalg().solve(M, resid[:, i:i + 1]))
        Z = _ops.cat(cols, 1)
        Z = Z - U @ (U.mT @ Z)
        gA = gA + Z @ U.mT
    return gA


def _zip_batch(A, E, U, gE, gU):
    lead = A.shape[:-2]
    n = math.prod(lead)
    bA, bE, bU = A.reshape(n, *A.shape[-2:]), E.reshape(n, E.shape[-1]), U.reshape(n, *U.shape[-2:])
    bgE = None if gE is None else gE.reshape(n, gE.shape[-1])
    bgU = None if gU is None else gU.reshape(n, *gU.shape[-2:])
    for i in range(n):
        yield bA[i], bE[i], bU[i], None if bgE is None else bgE[i], None if bgU is None else bgU[i]


def _lobpcg_batched(A, B, X, iK, k, niter, tol, largest, method, tracker, iparams, fparams, bparams):
    m = A.shape[-1]
    n = X.shape[-1] if X is not None else iparams["n"]
    if A.dim() == 2:
        X0 = _ops.randn((m, n), dtype=A.dtype) if X is None else X
        return _run(A, B, X0, iK, k, niter, tol, largest, method, tracker, iparams, fparams, bparams)
    lead = A.shape[:-2]
    N = math.prod(lead)
    bA = A.reshape(N, m, m)
    bB = None if B is None else B.reshape(N, m, m)
    bX = None if X is None else X.reshape(N, m, n)
    Es, Us = [], []
    for i in range(N):
        X0 = _ops.randn((m, n), dtype=A.dtype) if bX is None else bX[i]
        iparams["batch_index"] = i
        e, u = _run(bA[i], None if bB is None else bB[i], X0, iK, k, niter, tol, largest, method, tracker, iparams,
                    fparams, bparams)
        Es.append(e)
        Us.append(u)
    return _ops.stack(Es).reshape(*lead, k), _ops.stack(Us).reshape(*lead, m, k)


def lobpcg(A, k=None, B=None, X=None, n=None, iK=None, niter=None, tol=None, largest=None, method=None,
           tracker=None, ortho_iparams=None, ortho_fparams=None, ortho_bparams=None):
    """The k largest (or smallest) eigenpairs (E, X) of the symmetric (generalized) eigenproblem
    A X = B X diag(E), by LOBPCG; differentiable in A (B = I; A is symmetrized when it requires grad)."""
    if A.shape[-2] != A.shape[-1]:
        raise AssertionError(f"A must be square, got shape {A.shape}")
    if B is not None and A.shape != B.shape:
        raise AssertionError(f"A and B must have same shape, got {A.shape} vs {B.shape}")
    if A.dtype not in (_C.float32, _C.float64):
        raise NotImplementedError(f"lobpcg: Ember supports float32 and float64 input, got {A.dtype}")
    if A.is_sparse:
        A = A.to_dense()
    if B is not None and B.is_sparse:
        B = B.to_dense()
    if tol is None:
        tol = _finfo_eps(A.dtype) ** 0.5
    m = A.shape[-1]
    k = (1 if X is None else X.shape[-1]) if k is None else k
    n = (k if n is None else n) if X is None else X.shape[-1]
    if m < 3 * n:
        raise ValueError(f"LOBPCG algorithm is not applicable when the number of A rows (={m})"
                         f" is smaller than 3 x the number of requested eigenpairs (={n})")
    if X is not None and (X.shape[-2] != m or X.dim() != A.dim()):
        raise AssertionError(f"X shape mismatch: got {X.shape}, expected {tuple(A.shape[:-1]) + (n,)}")
    method = "ortho" if method is None else method
    if method not in ("ortho", "basic"):
        raise ValueError(f"lobpcg: method must be 'ortho' or 'basic', got {method!r}")
    iparams = {"m": m, "n": n, "k": k, "niter": 1000 if niter is None else niter}
    fparams = {"tol": tol}
    bparams = {"largest": True if largest is None else largest}
    if method == "ortho":
        iparams.update(ortho_iparams or {})
        fparams.update(ortho_fparams or {})
        bparams.update(ortho_bparams or {})
    largest = bparams["largest"]
    niter = iparams["niter"]
    if A.requires_grad or (B is not None and B.requires_grad):
        if B is not None and B.requires_grad:
            raise ValueError("lobpcg.backward does not support backward with B != I yet.")
        A = (A + A.mT) / 2
        return _LobpcgFn.apply(A, B, X, iK, k, niter, tol, largest, method, tracker, iparams, fparams, bparams)
    return _lobpcg_batched(A, B, X, iK, k, niter, tol, largest, method, tracker, iparams, fparams, bparams)
