"""ember.autograd: reverse-mode automatic differentiation (the engine is C++; this is the API)."""
from ._engine import _as_list, backward, grad  # noqa: F401
from .anomaly_mode import detect_anomaly, is_anomaly_enabled, set_detect_anomaly  # noqa: F401
from .function import Function, FunctionCtx, InplaceFunction, NestedIOFunction, once_differentiable  # noqa: F401
from .grad_mode import (  # noqa: F401
    enable_grad, enforce_grad_layout_policy, inference_mode, is_grad_enabled, is_inference_mode_enabled, no_grad,
    set_grad_enabled, set_multithreading_enabled,
)
from .gradcheck import gradcheck, gradgradcheck  # noqa: F401
from . import forward_ad, functional, graph, profiler  # noqa: F401
from ..profiler._events import DeviceType  # noqa: F401


class Variable:
    """Deprecated wrapper kept for old code: Variable(t) returns t."""

    def __new__(cls, data, requires_grad=False):
        if requires_grad:
            data.requires_grad_(True)
        return data


def variable(*args, **kwargs):
    """The removed factory of old autograd code: points to ember.tensor."""
    raise RuntimeError("torch.autograd.variable(...) is deprecated, use torch.tensor(...) instead")
