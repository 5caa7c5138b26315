"""backward() and grad(): the Python entry points of the C++ autograd engine (re-exported by
ember.autograd; in their own module so that autograd's submodules can use them without importing
the package that imports them)."""
from .. import _C


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
