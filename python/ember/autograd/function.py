"""Custom differentiable operations in Python: subclass Function, write forward(ctx, ...) and
backward(ctx, *grads), call Fn.apply(...). The graph node is a C++ PyNode that calls back here."""
import functools

from .. import _C
from .grad_mode import no_grad


class FunctionCtx:
    """The ctx object a custom Function's forward and backward share."""
    def save_for_backward(self, *tensors):
        for t in tensors:
            if t is not None and not isinstance(t, _C.TensorBase):
                raise TypeError("save_for_backward can only save variables, but argument "
                                f"{tensors.index(t)} is of type {type(t).__name__}")
        self._to_save = tensors

    def save_for_forward(self, *tensors):
        self._to_save_forward = tensors

    def mark_dirty(self, *args):
        self._dirty = args

    def mark_non_differentiable(self, *args):
        self._non_differentiable = args

    def set_materialize_grads(self, value):
        self._materialize = bool(value)

    @property
    def saved_tensors(self):
        node = getattr(self, "_node", None)
        if node is None:
            return getattr(self, "_to_save", ())
        return node._saved_tensors()

    def _run_backward(self, grads):
        fn = self._fn_cls
        if getattr(fn.backward, "_once_differentiable", False):
            with no_grad():
                return fn.backward(self, *grads)
        return fn.backward(self, *grads)


class _FunctionMeta(type):
    def __init__(cls, name, bases, attrs):
        super().__init__(name, bases, attrs)
        cls._backward_name = name + "Backward"


class Function(metaclass=_FunctionMeta):
    """Base class of custom autograd operations (used through the classmethod `apply`)."""

    def __init__(self, *args, **kwargs):
        pass

    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise NotImplementedError("You must implement the forward function for custom autograd.Function.")

    @staticmethod
    def setup_context(ctx, inputs, output):
        raise NotImplementedError("setup_context is not overridden.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError("You must implement either the backward or vjp method for your custom "
                                  "autograd.Function to use it with backward mode AD.")

    vjp = backward

    @classmethod
    def apply(cls, *args, **kwargs):
        ctx = FunctionCtx()
        ctx._fn_cls = cls
        ctx.needs_input_grad = tuple(isinstance(a, _C.TensorBase) and a.requires_grad for a in args)
        uses_setup = cls.setup_context is not Function.setup_context
        with no_grad():
            if uses_setup:
                out = cls.forward(*args, **kwargs)
            else:
                out = cls.forward(ctx, *args, **kwargs)
        if uses_setup:
            cls.setup_context(ctx, args, out)
        is_tuple = isinstance(out, tuple)
        outs = out if is_tuple else (out,)
        if not (_C.is_grad_enabled() and any(ctx.needs_input_grad)):
            return out
        for t in getattr(ctx, "_dirty", None) or ():
            if isinstance(t, _C.TensorBase) and t.is_leaf and t.requires_grad:
                raise RuntimeError("a leaf Variable that requires grad has been used in an in-place operation.")
        if _C._jit.tracing():  # a graph would differentiate the recorded forward ops, not this backward
            _C._jit.untraceable(f"custom autograd.Function '{cls.__name__}' records a backward that a graph "
                                "cannot hold")
        inputs = [a if isinstance(a, _C.TensorBase) else None for a in args]
        new = _C._function_record(ctx, cls._backward_name, inputs, tuple(outs), getattr(ctx, "_dirty", None),
                                  getattr(ctx, "_non_differentiable", None), getattr(ctx, "_to_save", None),
                                  getattr(ctx, "_materialize", True))
        return new if is_tuple else new[0]


def once_differentiable(fn):
    """Mark a backward as not differentiable itself: it runs under no_grad."""
    @functools.wraps(fn)
    def wrapper(ctx, *args):
        with no_grad():
            return fn(ctx, *args)
    wrapper._once_differentiable = True
    return wrapper


class InplaceFunction(Function):
    """A custom Function base class that may modify its inputs in place."""
    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace


class NestedIOFunction(Function):
    """A custom Function base class whose inputs and outputs may be nested."""
    pass
