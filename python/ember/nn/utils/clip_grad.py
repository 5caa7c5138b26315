"""Gradient clipping: by total norm (clip_grad_norm_) or by value (clip_grad_value_)."""
import functools
import math
import types
import warnings

from ... import _C
from ...autograd.grad_mode import no_grad

__all__ = ["clip_grad_norm", "clip_grad_norm_", "clip_grad_value_", "get_total_norm", "clip_grads_with_norm_"]


def _no_grad(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        with no_grad():
            return fn(*args, **kwargs)
    return wrapper


def _as_list(tensors):
    return [tensors] if isinstance(tensors, _C.TensorBase) else list(tensors)


def _vector_norm(t, p):
    """The p-norm of all elements of t (p may be inf / -inf / 0), as a 0-d tensor."""
    t = t.reshape(-1)
    if p == math.inf:
        return t.abs().amax() if t.numel() else _C._ops.zeros((), dtype=t.dtype, device=t.device)
    if p == -math.inf:
        return t.abs().amin()
    if p == 0:
        return (t != 0).sum().to(t.dtype)
    return _C._ops.norm(t, p)


@_no_grad
def get_total_norm(tensors, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """The norm of the norms of `tensors` (the norm of their concatenation)."""
    tensors = _as_list(tensors)
    norm_type = float(norm_type)
    if not tensors:
        return _C._ops.tensor(0.0)
    norms = [_vector_norm(t, norm_type) for t in tensors]
    dtypes = {n.dtype for n in norms}
    if len(dtypes) > 1:
        norms = [n.to(_C.float32 if _C.float64 not in dtypes else _C.float64) for n in norms]
    total = _vector_norm(_C._ops.stack(norms), norm_type)
    if error_if_nonfinite and bool(total.isnan() | total.isinf()):
        raise RuntimeError(f"The total norm of order {norm_type} for gradients from `parameters` is non-finite, so "
                           "it cannot be clipped. To disable this error and scale the gradients by the non-finite "
                           "norm anyway, set `error_if_nonfinite=False`")
    return total


@_no_grad
def clip_grads_with_norm_(parameters, max_norm, total_norm, foreach=None):
    """Scale the gradients by min(1, max_norm / (total_norm + 1e-6))."""
    grads = [p.grad for p in _as_list(parameters) if p.grad is not None]
    if not grads:
        return
    coef = (float(max_norm) / (total_norm + 1e-6)).clamp(max=1.0)
    for g in grads:
        g.mul_(coef.to(g.dtype))


@_no_grad
def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """Rescale the gradients of `parameters` in place so that their total norm (of order
    norm_type, inf included) is at most max_norm; returns the total norm before clipping."""
    if isinstance(parameters, _C.TensorBase):
        parameters = [parameters]
    else:
        is_generator = isinstance(parameters, types.GeneratorType)
        parameters = list(parameters)
        if is_generator and not parameters:
            warnings.warn("`parameters` is an empty generator, no gradient clipping will occur.", stacklevel=3)
    grads = [p.grad for p in parameters if p.grad is not None]
    total = get_total_norm(grads, norm_type, error_if_nonfinite, foreach)
    clip_grads_with_norm_(parameters, max_norm, total, foreach)
    return total


def clip_grad_norm(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """Deprecated spelling of clip_grad_norm_."""
    warnings.warn("`torch.nn.utils.clip_grad_norm` is now deprecated in favor of "
                  "`torch.nn.utils.clip_grad_norm_`.", FutureWarning, stacklevel=2)
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


@_no_grad
def clip_grad_value_(parameters, clip_value, foreach=None):
    """Clamp the gradients of `parameters` in place to [-clip_value, clip_value]."""
    clip_value = float(clip_value)
    for p in _as_list(parameters):
        g = p.grad
        if g is not None:
            g.clamp_(min=-clip_value, max=clip_value)
