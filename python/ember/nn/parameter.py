"""nn.Parameter (a Tensor subclass that Modules register as a parameter) and nn.Buffer."""
from .. import _C
from .._tensor import Tensor

__all__ = ["Parameter", "Buffer", "UninitializedParameter", "UninitializedBuffer"]


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


class UninitializedTensorMixin:
    """A lazy module's placeholder tensor: no shape yet; ``materialize(shape)`` allocates it and turns it
    into ``cls_to_become`` (Parameter, or Tensor for buffers). Using it before then is an error."""

    cls_to_become = None

    def materialize(self, shape, device=None, dtype=None):
        if dtype is None:
            dtype = self.data.dtype
        if device is None:
            device = self.data.device
        self.data = _C._ops.empty(tuple(shape), dtype=dtype, device=device)
        self.__class__ = self.cls_to_become

    @property
    def shape(self):
        raise RuntimeError("Can't access the shape of an uninitialized parameter or buffer. This error usually "
                           "happens in `load_state_dict` when trying to load an uninitialized parameter into an "
                           "initialized one. Call `forward` to initialize the parameters before accessing their "
                           "attributes.")

    def share_memory_(self):
        raise RuntimeError("Can't share memory on an uninitialized parameter or buffer. Call `forward` to "
                           "initialize the parameters before calling `module.share_memory()`.")

    def __repr__(self):
        return f"<{self.__class__.__name__}>"

    def __reduce_ex__(self, proto):
        return (self.__class__, (self.requires_grad,))

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        result = type(self)(self.requires_grad, None, self.data.dtype)
        memo[id(self)] = result
        return result


def _uninitialized_op(name):
    def raiser(self, *args, **kwargs):
        raise ValueError(f"Attempted to use an uninitialized parameter in {name}. This error happens when you are "
                         "using a `LazyModule` or explicitly manipulating `torch.nn.parameter.UninitializedParameter` "
                         "objects. When using LazyModules Call `forward` with a dummy batch to initialize the "
                         "parameters before calling torch functions")
    return raiser


# arithmetic and common methods on a placeholder are errors (the tensor has no real shape yet)
for _name in ("__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__", "__truediv__", "__rtruediv__",
              "__matmul__", "__rmatmul__", "__neg__", "__pow__", "size", "dim", "numel", "view", "reshape",
              "sum", "mean", "t", "add", "mul", "sub", "div", "matmul", "copy_", "fill_", "zero_", "uniform_",
              "normal_", "item", "tolist", "numpy", "__getitem__", "__setitem__", "__len__", "__iter__"):
    setattr(UninitializedTensorMixin, _name, _uninitialized_op(_name))
del _name


class UninitializedParameter(UninitializedTensorMixin, Parameter):
    """A Parameter of a lazy module whose shape is set on the first forward."""

    cls_to_become = Parameter

    def __new__(cls, requires_grad=True, device=None, dtype=None):
        data = _C._ops.empty(0, dtype=dtype, device=device)
        return Tensor._make_subclass(cls, data, requires_grad)

    def __init__(self, requires_grad=True, device=None, dtype=None):
        pass


class UninitializedBuffer(UninitializedTensorMixin, Tensor):
    """A buffer of a lazy module whose shape is set on the first forward."""

    cls_to_become = Tensor

    def __new__(cls, requires_grad=False, device=None, dtype=None, persistent=True):
        data = _C._ops.empty(0, dtype=dtype, device=device)
        t = Tensor._make_subclass(cls, data, requires_grad)
        t.persistent = persistent
        t._is_buffer = True
        return t

    def __init__(self, requires_grad=False, device=None, dtype=None, persistent=True):
        pass


def is_lazy(param):
    """Whether ``param`` is an uninitialized (lazy) parameter or buffer."""
    return isinstance(param, UninitializedTensorMixin)
