"""Parametrizations built on nn.utils.parametrize: orthogonal, weight_norm and spectral_norm
(torch's torch.nn.utils.parametrizations; same state_dict keys)."""
import math
from enum import Enum, auto

from ... import _C
from ...autograd.grad_mode import no_grad
from .. import functional as F
from ..modules.conv import _ConvTransposeNd
from ..modules.module import Module
from . import parametrize

__all__ = ["orthogonal", "weight_norm", "spectral_norm"]


# ---------------------------------------------------------------- orthogonal

def _eye_like(X, n):
    return _C._ops.eye(n, dtype=X.dtype, device=X.device)


def _matrix_exp(A):
    """exp(A) of a (batch of) square matrices by scaling and squaring: Taylor to degree 18 of
    A / 2^s with ||A / 2^s||_1 <= 1/2 (truncation error below 1e-22), then s squarings."""
    n = A.shape[-1]
    with no_grad():
        norm = float(A.abs().sum(-2).max()) if A.numel() else 0.0
    s = max(0, math.ceil(math.log2(norm / 0.5))) if norm > 0.5 else 0
    B = A / (2 ** s) if s else A
    eye = _eye_like(A, n)
    # Horner: I + B (I + B/2 (I + B/3 (...)))
    term = eye
    for k in range(18, 0, -1):
        term = eye + (B @ term) / k
    for _ in range(s):
        term = term @ term
    return term


def _householder_product(A, tau):
    """The first k columns of H_0 H_1 ... H_{k-1}, H_i = I - tau_i v_i v_i^T, v_i the i-th column of
    A below the diagonal with a unit i-th entry (LAPACK's orgqr), for A of shape (..., n, k)."""
    n, k = A.shape[-2], A.shape[-1]
    Q = _eye_like(A, n).expand(*A.shape[:-2], n, n)
    rows = _C._ops.arange(n)
    for i in range(k):
        below = (rows > i).to(A.dtype)
        unit = (rows == i).to(A.dtype)
        v = A[..., :, i] * below + unit  # (..., n)
        Qv = (Q @ v.unsqueeze(-1))  # (..., n, 1)
        Q = Q - (Qv * tau[..., i].unsqueeze(-1).unsqueeze(-1)) @ v.unsqueeze(-2)
    return Q[..., :k]


def _make_orthogonal(A):
    """The Q of A = QR (A tall) with diag(R) >= 0."""
    from ... import linalg
    Q, R = linalg.qr(A)
    return Q * _C._ops.sign(R.diagonal(dim1=-2, dim2=-1)).unsqueeze(-2)


def _is_orthogonal(Q):
    n, k = Q.shape[-2], Q.shape[-1]
    from ..._dtype_info import finfo
    eps = 10.0 * n * finfo(Q.dtype).eps
    return bool(((Q.mT @ Q) - _eye_like(Q, k)).abs().le(eps).all())


class _OrthMaps(Enum):
    matrix_exp = auto()
    cayley = auto()
    householder = auto()


class _Orthogonal(Module):
    def __init__(self, weight, orthogonal_map, *, use_trivialization=True):
        super().__init__()
        self.shape = weight.shape
        self.orthogonal_map = orthogonal_map
        if use_trivialization:
            self.register_buffer("base", None)

    def forward(self, X):
        n, k = X.shape[-2], X.shape[-1]
        transposed = n < k
        if transposed:
            X = X.mT
            n, k = k, n
        if self.orthogonal_map in (_OrthMaps.matrix_exp, _OrthMaps.cayley):
            # a skew-symmetric A from the lower triangle (n x k, padded to n x n): exp / Cayley of it is orthogonal
            X = X.tril()
            if n != k:
                X = _C._ops.cat([X, _C._ops.zeros(tuple(X.shape[:-2]) + (n, n - k), dtype=X.dtype, device=X.device)], -1)
            A = X - X.mT
            if self.orthogonal_map == _OrthMaps.matrix_exp:
                Q = _matrix_exp(A)
            else:
                from ... import linalg
                eye = _eye_like(A, n)
                Q = linalg.solve(eye - A * 0.5, eye + A * 0.5)
            if n != k:
                Q = Q[..., :k]
        else:
            A = X.tril(-1)
            tau = 2.0 / (1.0 + (A * A).sum(-2))
            Q = _householder_product(A, tau)
            # the diagonal of X holds the signs (+-1), not differentiated
            Q = Q * X.diagonal(dim1=-2, dim2=-1).detach().to(_C.int32).unsqueeze(-2)
        if hasattr(self, "base"):
            Q = self.base @ Q
        if transposed:
            Q = Q.mT
        return Q

    def right_inverse(self, Q):
        with no_grad():
            if Q.shape != self.shape:
                raise ValueError(f"Expected a matrix or batch of matrices of shape {self.shape}. "
                                 f"Got a tensor of shape {Q.shape}.")
            Q_init = Q
            n, k = Q.shape[-2], Q.shape[-1]
            transpose = n < k
            if transpose:
                Q = Q.mT
                n, k = k, n
            if not hasattr(self, "base"):
                if self.orthogonal_map in (_OrthMaps.matrix_exp, _OrthMaps.cayley):
                    raise NotImplementedError("It is not possible to assign to the matrix exponential or the Cayley "
                                              "parametrizations when use_trivialization=False.")
                # Householder vectors of Q's QR with the signs of diag(R) on the diagonal
                A = _householder_vectors(Q)
                return A.mT if transpose else A
            if n == k:
                Q = Q.clone() if _is_orthogonal(Q) else _make_orthogonal(Q)
            else:
                # complete Q to a square orthogonal matrix
                N = _C._ops.randn(tuple(Q.shape[:-2]) + (n, n - k), dtype=Q.dtype, device=Q.device)
                Q = _make_orthogonal(_C._ops.cat([Q, N], -1))
            self.base = Q
            # -Id: the parametrization of the identity for every map (so weight == base)
            neg_id = _C._ops.zeros_like(Q_init)
            return neg_id - _C._ops.eye(neg_id.shape[-2], neg_id.shape[-1], dtype=neg_id.dtype, device=neg_id.device)


def _householder_vectors(Q):
    """A (n x k, Q tall) whose strict lower triangle holds the unit-leading Householder vectors of
    Q's QR and whose diagonal holds the signs of R's diagonal, so the householder map gives back
    Q's orthogonal factor (Q itself when Q is orthogonal)."""
    n, k = Q.shape[-2], Q.shape[-1]
    M = Q.clone()
    rows = _C._ops.arange(n)
    vecs, signs = [], []
    for i in range(k):
        x = M[..., :, i] * (rows >= i).to(Q.dtype)
        alpha = x[..., i]
        sgn = _C._ops.where(alpha >= 0, _C._ops.ones_like(alpha), -_C._ops.ones_like(alpha))
        u1 = alpha + sgn * x.norm(2, -1)
        u1 = _C._ops.where(u1 == 0, _C._ops.ones_like(u1), u1)
        v = (x / u1.unsqueeze(-1)) * (rows > i).to(Q.dtype) + (rows == i).to(Q.dtype)
        tau = 2.0 / (v * v).sum(-1)
        # the reflection maps column i to -sgn(alpha) ||x|| e_i: that sign is R's diagonal entry
        M = M - (tau.unsqueeze(-1) * v).unsqueeze(-1) @ (v.unsqueeze(-2) @ M)
        vecs.append(v)
        signs.append(-sgn)
    A = _C._ops.stack(vecs, -1).tril(-1)
    return A + _C._ops.stack(signs, -1).unsqueeze(-2) * _C._ops.eye(n, k, dtype=Q.dtype, device=Q.device)


def orthogonal(module, name="weight", orthogonal_map=None, *, use_trivialization=True):
    """Constrain ``module.<name>`` (a matrix or batch of matrices) to be orthogonal: Q^T Q = I for a
    tall weight, Q Q^T = I for a wide one. orthogonal_map: "matrix_exp" (default for square),
    "cayley" or "householder" (default otherwise). use_trivialization=True keeps a ``base``
    orthogonal matrix as a buffer and parametrizes around it. Returns ``module``."""
    weight = getattr(module, name, None)
    if not isinstance(weight, _C.TensorBase):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if weight.ndim < 2:
        raise ValueError(f"Expected a matrix or batch of matrices. Got a tensor of {weight.ndim} dimensions.")
    if orthogonal_map is None:
        orthogonal_map = "matrix_exp" if weight.shape[-2] == weight.shape[-1] else "householder"
    orth_enum = getattr(_OrthMaps, orthogonal_map, None) if isinstance(orthogonal_map, str) else None
    if orth_enum is None:
        raise ValueError('orthogonal_map has to be one of "matrix_exp", "cayley", "householder". '
                         f"Got: {orthogonal_map}")
    orth = _Orthogonal(weight, orth_enum, use_trivialization=use_trivialization)
    parametrize.register_parametrization(module, name, orth, unsafe=True)
    return module


def _norm_except_dim(v, pow, dim):
    """The p-norm of v over every dim but ``dim``, shaped to broadcast against v; dim=-1 means the
    norm of the whole tensor (a 0-d tensor), as torch's norm_except_dim."""
    if dim == -1:
        return v.norm(pow)
    dim = dim % v.dim()
    shape = [1] * v.dim()
    shape[dim] = v.shape[dim]
    return v.transpose(0, dim).reshape(v.shape[dim], -1).norm(pow, 1).reshape(shape)


def _weight_norm(v, g, dim=0):
    """v * g / ||v|| (norm over every dim but ``dim``)."""
    return v * (g / _norm_except_dim(v, 2, dim))


class _WeightNorm(Module):
    def __init__(self, dim=0):
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g, weight_v):
        return _weight_norm(weight_v, weight_g, self.dim)

    def right_inverse(self, weight):
        return _norm_except_dim(weight, 2, self.dim), weight


def weight_norm(module, name="weight", dim=0):
    """Reparametrize ``module.<name>`` as g * v / ||v||: the magnitude g is
    ``parametrizations.<name>.original0`` and the direction v ``parametrizations.<name>.original1``.
    dim: the dim kept by the norm (None: the norm of the whole tensor). Returns ``module``."""
    parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)

    # state dicts written by the old nn.utils.weight_norm (keys <name>_g, <name>_v) still load
    def _weight_norm_compat_hook(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                                 error_msgs):
        g_key, v_key = f"{prefix}{name}_g", f"{prefix}{name}_v"
        if g_key in state_dict and v_key in state_dict:
            state_dict[f"{prefix}parametrizations.{name}.original0"] = state_dict.pop(g_key)
            state_dict[f"{prefix}parametrizations.{name}.original1"] = state_dict.pop(v_key)

    module._register_load_state_dict_pre_hook(_weight_norm_compat_hook)
    return module


class _SpectralNorm(Module):
    def __init__(self, weight, n_power_iterations=1, dim=0, eps=1e-12):
        super().__init__()
        ndim = weight.ndim
        if dim >= ndim or dim < -ndim:
            raise IndexError("Dimension out of range (expected to be in range of "
                             f"[-{ndim}, {ndim - 1}] but got {dim})")
        if n_power_iterations <= 0:
            raise ValueError("Expected n_power_iterations to be positive, but "
                             f"got n_power_iterations={n_power_iterations}")
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps = eps
        if ndim > 1:
            self.n_power_iterations = n_power_iterations
            weight_mat = self._reshape_weight_to_matrix(weight)
            h, w = weight_mat.shape
            u = weight_mat.new_empty(h).normal_(0, 1)
            v = weight_mat.new_empty(w).normal_(0, 1)
            self.register_buffer("_u", F.normalize(u, dim=0, eps=self.eps))
            self.register_buffer("_v", F.normalize(v, dim=0, eps=self.eps))
            # start from a good estimate of the top singular vectors
            self._power_method(weight_mat, 15)

    def _reshape_weight_to_matrix(self, weight):
        if self.dim != 0:
            weight = weight.permute(self.dim, *(d for d in range(weight.dim()) if d != self.dim))
        return weight.flatten(1)

    def _power_method(self, weight_mat, n_power_iterations):
        # updates _u and _v in place (they are buffers; the in-place write keeps them so)
        with no_grad():
            for _ in range(n_power_iterations):
                self._u = F.normalize(_C._ops.mv(weight_mat, self._v), dim=0, eps=self.eps, out=self._u)
                self._v = F.normalize(_C._ops.mv(weight_mat.t(), self._u), dim=0, eps=self.eps, out=self._v)

    def forward(self, weight):
        if weight.ndim == 1:
            return F.normalize(weight, dim=0, eps=self.eps)
        weight_mat = self._reshape_weight_to_matrix(weight)
        if self.training:
            self._power_method(weight_mat, self.n_power_iterations)
        u = self._u.clone()
        v = self._v.clone()
        sigma = _C._ops.vdot(u, _C._ops.mv(weight_mat, v))
        return weight / sigma

    def right_inverse(self, value):
        return value


def spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    """Reparametrize ``module.<name>`` as W / sigma(W), sigma estimated by power iteration (one step
    per training forward). dim: the output dim (default 1 for ConvTranspose, else 0). The vectors
    are buffers ``parametrizations.<name>.0._u`` / ``._v``. Returns ``module``."""
    weight = getattr(module, name, None)
    if not isinstance(weight, _C.TensorBase):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if dim is None:
        dim = 1 if isinstance(module, _ConvTransposeNd) else 0
    parametrize.register_parametrization(module, name, _SpectralNorm(weight, n_power_iterations, dim, eps))
    return module
