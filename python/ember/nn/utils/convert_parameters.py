"""Flatten parameters into one vector and back."""
from ... import _C

__all__ = ["parameters_to_vector", "vector_to_parameters"]


def parameters_to_vector(parameters):
    """One 1-D tensor concatenating every parameter (a differentiable copy)."""
    return _C._ops.cat([p.view(-1) for p in parameters])


def vector_to_parameters(vec, parameters):
    """Make each parameter's data the matching slice of `vec` (views of vec, no copy)."""
    if not isinstance(vec, _C.TensorBase):
        from ..modules.module import _typename
        raise TypeError(f"expected ember.Tensor, but got: {_typename(vec)}")
    pointer = 0
    for param in parameters:
        n = param.numel()
        param.data = vec[pointer:pointer + n].view_as(param).data
        pointer += n
