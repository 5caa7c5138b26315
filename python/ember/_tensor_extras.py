"""Small torch names on tensors: the in-place functional form ember.detach_,
slice_inverse, the element-wise Python callbacks Tensor.apply_/map_/map2_, and the deprecated
non-inplace Tensor.resize/resize_as."""
import numbers

from . import _C
from ._C import _ops
from ._tensor import Tensor
from ._utils import contiguous_format, memory_format

__all__ = ["detach_", "slice_inverse"]


def _check_tensor(fn, name, position, value):
    if not isinstance(value, _C.TensorBase):
        raise TypeError(f"{fn}(): argument '{name}' (position {position}) must be Tensor, not {type(value).__name__}")


def _check_int(fn, name, position, value, optional=False):
    if value is None and optional:
        return
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{fn}(): argument '{name}' (position {position}) must be int, not {type(value).__name__}")


def detach_(input):
    """input.detach_(): input leaves the autograd graph, in place."""
    _check_tensor("detach_", "input", 1, input)
    return input.detach_()


def slice_inverse(input, src, dim=0, start=None, end=None, step=1):
    """The tensor that slicing would have produced input from: input's memory seen with src's sizes,
    strides and offset (input must view enough of that memory). dim/start/end/step describe the
    slice and do not change the result."""
    _check_tensor("slice_inverse", "input", 1, input)
    _check_tensor("slice_inverse", "src", 2, src)
    _check_int("slice_inverse", "dim", 3, dim)
    _check_int("slice_inverse", "start", 4, start, optional=True)
    _check_int("slice_inverse", "end", 5, end, optional=True)
    _check_int("slice_inverse", "step", 6, step)
    return input.as_strided(tuple(src.shape), tuple(src.stride()), src.storage_offset())


def _elementwise_callback(name, self, fn, others):
    """self[i] = fn(self[i], *(o[i] for o in others)), element by element in Python (CPU only, as torch)."""
    if self.requires_grad:
        raise RuntimeError(f"Can't call {name}() on Variable that requires grad. Use var.detach().{name}() instead.")
    if self.device.type != "cpu":
        raise TypeError(f"{name}() is only implemented on CPU tensors")
    shape = tuple(self.shape)
    columns = [self.reshape(-1).tolist()]
    for other in others:
        columns.append(_ops.broadcast_to(other, shape).reshape(-1).tolist())
    results = []
    for args in zip(*columns):
        value = fn(*args)
        if not isinstance(value, numbers.Number):
            raise TypeError(f"must be real number, not {type(value).__name__}")
        results.append(value)
    if results:
        self.copy_(_ops.tensor(results, dtype=self.dtype).reshape(shape))
    return self


def _apply_(self, callable):
    """Apply a Python function to every element, in place (slow: for tests and small tensors)."""
    return _elementwise_callback("apply_", self, callable, ())


def _map_(self, tensor, callable):
    """self[i] = callable(self[i], tensor[i]) with tensor broadcast to self, in place."""
    _check_tensor("map_", "tensor", 1, tensor)
    return _elementwise_callback("map_", self, callable, (tensor,))


def _map2_(self, x, y, callable):
    """self[i] = callable(self[i], x[i], y[i]) with x and y broadcast to self, in place."""
    _check_tensor("map2_", "x", 1, x)
    _check_tensor("map2_", "y", 2, y)
    return _elementwise_callback("map2_", self, callable, (x, y))


def _slice_inverse_method(self, src, dim=0, start=None, end=None, step=1):
    """Scatter this slice's values into a copy of a base tensor at the slice's place."""
    return slice_inverse(self, src, dim, start, end, step)


def _resize(self, *sizes):
    """Deprecated non-inplace resize: a reshape that must keep the number of elements (differentiable)."""
    import warnings
    warnings.warn("non-inplace resize is deprecated", UserWarning, stacklevel=2)
    return _resize_keeping_numel(self, sizes)


def _resize_as(self, tensor):
    """Resize in place to another tensor's shape (the deprecated spelling of resize_as_)."""
    import warnings
    warnings.warn("non-inplace resize_as is deprecated", UserWarning, stacklevel=2)
    _check_tensor("resize_as", "tensor", 1, tensor)
    return _resize_keeping_numel(self, tuple(tensor.shape))


def _resize_keeping_numel(self, sizes):
    if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)):
        sizes = tuple(sizes[0])
    for s in sizes:
        if isinstance(s, bool) or not isinstance(s, numbers.Integral):
            raise TypeError(f"resize(): sizes must be ints, got {type(s).__name__}")
    numel = 1
    for s in sizes:
        numel *= int(s)
    if numel != self.numel():
        shape = "x".join(str(int(s)) for s in sizes)
        have = "x".join(str(s) for s in self.shape)
        raise RuntimeError(f"requested resize to {shape} ({numel} elements in total), but the given tensor has a "
                           f"size of {have} ({self.numel()} elements). autograd's resize can only change the shape "
                           "of a given tensor, while preserving the number of elements. ")
    return self.contiguous().view(tuple(int(s) for s in sizes))


def _is_row_major(shape, strides, order):
    """Dense in the given dim order (innermost first), size-1 dims ignored: torch's contiguity rule."""
    expected = 1
    for d in order:
        if shape[d] == 1:
            continue
        if strides[d] != expected:
            return False
        expected *= shape[d]
    return True


def _stride_order(shape, strides, a, b):
    """+1: dim a is inside dim b in memory (move it inward); -1: outside; 0: no stride tells them apart."""
    sa, sb = strides[a], strides[b]
    if sa == 0 or sb == 0:
        return 0

    def at_least(x, y):  # x >= y for sizes/strides, with divisibility as torch's symbolic rule
        return True if y == 0 else False if x == 0 else x >= y or x % y == 0

    if sa == sb:
        return 0 if at_least(shape[b], shape[a]) else 1
    if at_least(sb, sa):
        return -1
    return 1 if at_least(sa, sb) else 0


def _dim_order(self, *, ambiguity_check=False):
    """The dims from outermost to innermost in memory (experimental in torch)."""
    if not isinstance(ambiguity_check, bool):
        if not isinstance(ambiguity_check, list) or \
                not all(isinstance(f, memory_format) for f in ambiguity_check):
            raise TypeError("The ambiguity_check argument must be a bool or a list of memory formats.")
    shape, strides, ndim = tuple(self.shape), tuple(self.stride()), self.dim()
    contiguous = self.numel() < 2 or _is_row_major(shape, strides, range(ndim - 1, -1, -1))
    channels_last = ndim == 4 and _is_row_major(shape, strides, (1, 3, 2, 0))
    check = ambiguity_check if isinstance(ambiguity_check, bool) else True
    if check:
        several_orders = any(a == b for a, b in zip(strides, strides[1:])) or 1 in shape
        formats = ambiguity_check if isinstance(ambiguity_check, list) else []
        matching = sum(1 for f in formats if (contiguous if f is contiguous_format
                                              else self.is_contiguous(memory_format=f)))
        if several_orders and matching != 1:
            raise RuntimeError("The tensor does not have unique dim order, or cannot map to exact one of the given "
                               "memory formats.")
    if ndim < 2:
        return tuple(range(ndim))
    if contiguous and not channels_last:
        return tuple(range(ndim))
    if channels_last and not contiguous:
        return (0, *range(2, ndim), 1)
    # insertion sort from the innermost dim outward; ties keep their place
    perm = list(range(ndim - 1, -1, -1))
    for i in range(1, ndim):
        j = i
        for k in range(i - 1, -1, -1):
            order = _stride_order(shape, strides, perm[k], perm[j])
            if order > 0:
                perm[k], perm[j] = perm[j], perm[k]
                j = k
            elif order < 0:
                break
    if ambiguity_check and any(_stride_order(shape, strides, perm[i], perm[i + 1]) != -1 for i in range(ndim - 1)):
        raise RuntimeError("The tensor does not have unique dim order.")
    return tuple(reversed(perm))


def _const_data_ptr(self):
    """Address of the first element, for read-only use."""
    # the address of the first element, read-only by contract (torch's distinction is for its COW storages)
    return self.data_ptr()


Tensor.slice_inverse = _slice_inverse_method
Tensor.apply_ = _apply_
Tensor.map_ = _map_
Tensor.map2_ = _map2_
Tensor.const_data_ptr = _const_data_ptr
Tensor.dim_order = _dim_order
Tensor.resize = _resize
Tensor.resize_as = _resize_as


def _as_subclass(self, cls):
    """This tensor's data as an instance of cls (a subclass of Tensor): an alias in the autograd graph."""
    if not isinstance(cls, type) or not issubclass(cls, _C.TensorBase):
        raise TypeError(f"as_subclass(): argument 'cls' must be a subclass of Tensor, not {cls!r}")
    r = _ops.alias(self)
    if type(r) is not cls:
        r.__class__ = cls
    return r


def _output_nr(self):
    return _C._output_nr(self)


def _module_load(self, other, assign=False):
    """How load_state_dict maps a state-dict value `other` onto this parameter or buffer: other detached
    (assign=True), else this tensor with other's values copied in, detached."""
    if assign:
        return other.detach()
    prev = _C.is_grad_enabled()
    _C._set_grad_enabled(False)
    try:
        return self.copy_(other).detach()
    finally:
        _C._set_grad_enabled(prev)


Tensor.as_subclass = _as_subclass
Tensor.output_nr = property(_output_nr, doc="Which output of its grad_fn this tensor is (0 for leaves).")
Tensor.module_load = _module_load
