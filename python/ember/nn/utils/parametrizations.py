"""Parametrizations built on nn.utils.parametrize: weight_norm and spectral_norm (torch's
torch.nn.utils.parametrizations; same state_dict keys)."""
from ... import _C
from ...autograd.grad_mode import no_grad
from .. import functional as F
from ..modules.conv import _ConvTransposeNd
from ..modules.module import Module
from . import parametrize

__all__ = ["weight_norm", "spectral_norm"]


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
