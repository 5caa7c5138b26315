"""nn.Parameter (a Tensor subclass that Modules register as a parameter) and nn.Buffer."""
from .. import _C
from .._tensor import Tensor

__all__ = ["Parameter", "Buffer"]


class Parameter(Tensor):
    """A Tensor that is a module parameter: assigning one to a Module attribute registers it.

    Parameter(data=None, requires_grad=True) shares ``data``'s storage (no copy); ``requires_grad``
    is True by default, even under no_grad.
    """

    def __new__(cls, data=None, requires_grad=True):
        if data is None:
            data = _C._ops.empty(0)
        if not isinstance(data, _C.TensorBase):
            raise TypeError(f"Parameter data must be a Tensor, got {type(data).__name__}")
        return Tensor._make_subclass(cls, data, requires_grad)

    def __init__(self, data=None, requires_grad=True):
        pass

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        result = type(self)(self.data.clone(), self.requires_grad)
        memo[id(self)] = result
        return result

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()

    def __reduce_ex__(self, proto):
        return (_rebuild_parameter, (self.detach().clone(), self.requires_grad))


def _rebuild_parameter(data, requires_grad):
    return Parameter(data, requires_grad)


class _BufferMeta(type):
    # isinstance(t, Buffer) is true for tensors made by Buffer(...) (plain tensors carrying a flag)
    def __instancecheck__(cls, instance):
        if cls is Buffer:
            return isinstance(instance, _C.TensorBase) and getattr(instance, "_is_buffer", False)
        return super().__instancecheck__(instance)


class Buffer(metaclass=_BufferMeta):
    """Marks a tensor as a buffer when assigned to a Module attribute: ``self.x = nn.Buffer(t)``
    is ``self.register_buffer("x", t, persistent)``."""

    def __new__(cls, data=None, *, persistent=True):
        if data is None:
            data = _C._ops.empty(0)
        t = data.detach().requires_grad_(data.requires_grad)
        t.persistent = persistent
        t._is_buffer = True
        return t
