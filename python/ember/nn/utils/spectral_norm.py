"""The hook-based spectral normalisation (torch.nn.utils.spectral_norm): parameter ``<name>_orig``,
power-iteration buffers ``<name>_u`` / ``<name>_v``, the weight recomputed before every forward."""
from ... import _C
from ...autograd.grad_mode import no_grad
from .. import functional as F
from ..modules.conv import _ConvTransposeNd
from ..parameter import Parameter, is_lazy

__all__ = ["SpectralNorm", "spectral_norm", "remove_spectral_norm"]


class SpectralNorm:
    _version = 1  # the version written into state_dict metadata, as torch's

    def __init__(self, name="weight", n_power_iterations=1, dim=0, eps=1e-12):
        self.name = name
        self.dim = dim
        if n_power_iterations <= 0:
            raise ValueError("Expected n_power_iterations to be positive, but "
                             f"got n_power_iterations={n_power_iterations}")
        self.n_power_iterations = n_power_iterations
        self.eps = eps

    def reshape_weight_to_matrix(self, weight):
        weight_mat = weight
        if self.dim != 0:
            weight_mat = weight_mat.permute(self.dim, *[d for d in range(weight_mat.dim()) if d != self.dim])
        return weight_mat.reshape(weight_mat.size(0), -1)

    def compute_weight(self, module, do_power_iteration):
        weight = getattr(module, self.name + "_orig")
        u = getattr(module, self.name + "_u")
        v = getattr(module, self.name + "_v")
        weight_mat = self.reshape_weight_to_matrix(weight)
        if do_power_iteration:
            with no_grad():
                for _ in range(self.n_power_iterations):
                    # in place, so the buffers keep the running estimate
                    v = F.normalize(_C._ops.mv(weight_mat.t(), u), dim=0, eps=self.eps, out=v)
                    u = F.normalize(_C._ops.mv(weight_mat, v), dim=0, eps=self.eps, out=u)
                # clones: u, v are used by autograd below and get overwritten by the next forward
                u = u.clone()
                v = v.clone()
        sigma = _C._ops.dot(u, _C._ops.mv(weight_mat, v))
        return weight / sigma

    def remove(self, module):
        with no_grad():
            weight = self.compute_weight(module, do_power_iteration=False)
        delattr(module, self.name)
        delattr(module, self.name + "_u")
        delattr(module, self.name + "_v")
        delattr(module, self.name + "_orig")
        module.register_parameter(self.name, Parameter(weight.detach()))

    def __call__(self, module, inputs):
        setattr(module, self.name, self.compute_weight(module, do_power_iteration=module.training))

    def _solve_v_and_rescale(self, weight_mat, u, target_sigma):
        # v with u^T W v = target_sigma, for state dicts written before v was saved
        from ... import linalg
        w = weight_mat.t().mm(weight_mat)
        rhs = weight_mat.t().mm(u.unsqueeze(1))
        v = linalg.pinv(w).mm(rhs).squeeze(1)
        return v.mul_(target_sigma / _C._ops.dot(u, _C._ops.mv(weight_mat, v)))

    @staticmethod
    def apply(module, name, n_power_iterations, dim, eps):
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, SpectralNorm) and hook.name == name:
                raise RuntimeError(f"Cannot register two spectral_norm hooks on the same parameter {name}")
        fn = SpectralNorm(name, n_power_iterations, dim, eps)
        weight = module._parameters[name]
        if is_lazy(weight):
            raise ValueError("The module passed to `SpectralNorm` can't have uninitialized parameters. Make sure to "
                             "run the dummy forward before applying spectral normalization")
        with no_grad():
            weight_mat = fn.reshape_weight_to_matrix(weight)
            h, w = weight_mat.shape
            u = F.normalize(weight.new_empty(h).normal_(0, 1), dim=0, eps=fn.eps)
            v = F.normalize(weight.new_empty(w).normal_(0, 1), dim=0, eps=fn.eps)
        delattr(module, fn.name)
        module.register_parameter(fn.name + "_orig", weight)
        # a plain attribute, replaced by the hook before each forward
        setattr(module, fn.name, weight.data)
        module.register_buffer(fn.name + "_u", u)
        module.register_buffer(fn.name + "_v", v)
        module.register_forward_pre_hook(fn)
        module._register_state_dict_hook(_SpectralNormStateDictHook(fn))
        module._register_load_state_dict_pre_hook(_SpectralNormLoadStateDictPreHook(fn))
        return fn


class _SpectralNormLoadStateDictPreHook:
    # state dicts of version None (before 1) lack <name>_v: rebuild it from <name>_orig and <name>_u
    def __init__(self, fn):
        self.fn = fn

    def __call__(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs):
        fn = self.fn
        version = local_metadata.get("spectral_norm", {}).get(fn.name + ".version", None)
        if version is None or version < 1:
            weight_key = prefix + fn.name
            if version is None and all(weight_key + s in state_dict for s in ("_orig", "_u", "_v")) and \
                    weight_key not in state_dict:
                return
            has_missing_keys = False
            for suffix in ("_orig", "", "_u"):
                if weight_key + suffix not in state_dict:
                    has_missing_keys = True
                    if strict:
                        missing_keys.append(weight_key + suffix)
            if has_missing_keys:
                return
            with no_grad():
                weight_orig = state_dict[weight_key + "_orig"]
                weight = state_dict.pop(weight_key)
                sigma = (weight_orig / weight).mean()
                weight_mat = fn.reshape_weight_to_matrix(weight_orig)
                u = state_dict[weight_key + "_u"]
                state_dict[weight_key + "_v"] = fn._solve_v_and_rescale(weight_mat, u, sigma)


class _SpectralNormStateDictHook:
    # records the format version under local_metadata["spectral_norm"]
    def __init__(self, fn):
        self.fn = fn

    def __call__(self, module, state_dict, prefix, local_metadata):
        if "spectral_norm" not in local_metadata:
            local_metadata["spectral_norm"] = {}
        key = self.fn.name + ".version"
        if key in local_metadata["spectral_norm"]:
            raise RuntimeError(f"Unexpected key in metadata['spectral_norm']: {key}")
        local_metadata["spectral_norm"][key] = self.fn._version


def spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    """Replace ``module.<name>`` by W / sigma(W) before every forward, sigma estimated by power
    iteration (stepped only in training). dim: the output dim (default 1 for ConvTranspose, else 0).
    Returns ``module``."""
    if dim is None:
        dim = 1 if isinstance(module, _ConvTransposeNd) else 0
    SpectralNorm.apply(module, name, n_power_iterations, dim, eps)
    return module


def remove_spectral_norm(module, name="weight"):
    """Fold a spectral_norm back into a plain ``<name>`` parameter. Returns ``module``."""
    for k, hook in module._forward_pre_hooks.items():
        if isinstance(hook, SpectralNorm) and hook.name == name:
            hook.remove(module)
            del module._forward_pre_hooks[k]
            break
    else:
        raise ValueError(f"spectral_norm of '{name}' not found in {module}")
    for k, hook in list(module._state_dict_hooks.items()):
        if isinstance(hook, _SpectralNormStateDictHook) and hook.fn.name == name:
            del module._state_dict_hooks[k]
            break
    for k, hook in list(module._load_state_dict_pre_hooks.items()):
        target = getattr(hook, "hook", hook)
        if isinstance(target, _SpectralNormLoadStateDictPreHook) and target.fn.name == name:
            del module._load_state_dict_pre_hooks[k]
            break
    return module
