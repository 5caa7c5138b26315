"""ember.autograd: reverse-mode automatic differentiation (the engine is C++; this is the API)."""
from .. import _C
from .anomaly_mode import detect_anomaly, is_anomaly_enabled, set_detect_anomaly  # noqa: F401
from .function import Function, FunctionCtx, InplaceFunction, NestedIOFunction, once_differentiable  # noqa: F401
from .grad_mode import (  # noqa: F401
    enable_grad, inference_mode, is_grad_enabled, is_inference_mode_enabled, no_grad, set_grad_enabled,
)
from .gradcheck import gradcheck, gradgradcheck  # noqa: F401
from . import forward_ad, functional, graph, profiler  # noqa: F401


def _as_list(x):
    if x is None:
        return []
    if isinstance(x, _C.TensorBase):
        return [x]
    return list(x)


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, grad_variables=None, inputs=None):
    """Accumulate into .grad of the leaves the gradients of `tensors` (seeded with grad_tensors)."""
    if grad_variables is not None:
        grad_tensors = grad_variables
    tensors = _as_list(tensors)
    grads = _as_list(grad_tensors)
    if grads and len(grads) != len(tensors):
        raise RuntimeError(f"grad_tensors should have the same length as tensors ({len(grads)} vs {len(tensors)})")
    if inputs is not None:
        if len(_as_list(inputs)) == 0:
            raise RuntimeError("`inputs` argument to `backward()` cannot be empty.")
        for t in _as_list(inputs):
            if not t.requires_grad:
                raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
    _C._run_backward(tensors, grads, retain_graph, create_graph, _as_list(inputs))


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False, only_inputs=True,
         allow_unused=None, is_grads_batched=False, materialize_grads=False):
    """Gradients of `outputs` with respect to `inputs`, returned (not accumulated into .grad)."""
    if is_grads_batched:
        raise NotImplementedError("is_grads_batched=True is not supported by Ember yet")
    outputs = _as_list(outputs)
    inputs_l = _as_list(inputs)
    if not inputs_l:
        raise RuntimeError("`inputs` argument to `grad()` cannot be empty.")
    grads = _as_list(grad_outputs)
    if allow_unused is None:
        allow_unused = materialize_grads
    if materialize_grads and allow_unused is False:
        raise ValueError("Expected allow_unused to be True or not passed when materialize_grads=True, "
                         "but got: allow_unused=False.")
    result = _C._grad(outputs, inputs_l, grads, retain_graph, create_graph, allow_unused)
    if materialize_grads:
        from .._C._ops import zeros_like
        result = tuple(r if r is not None else zeros_like(i) for r, i in zip(result, inputs_l))
    return result


class Variable:
    """Deprecated wrapper kept for old code: Variable(t) returns t."""

    def __new__(cls, data, requires_grad=False):
        if requires_grad:
            data.requires_grad_(True)
        return data
