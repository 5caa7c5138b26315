"""Tensor's storage methods: untyped_storage(), storage(), storage_type(), is_set_to() and set_(),
on the storage classes of ember.storage."""
from . import _C
from ._C import _ops
from ._tensor import Tensor
from .storage import (_LEGACY_NAMES, TypedStorage, UntypedStorage, _is_int, _warn_typed_storage_removal,
                      legacy_storage_class, untyped_storage_of)


def _typed_storage(self):
    """tensor.storage() without the deprecation warning."""
    return TypedStorage._wrap(untyped_storage_of(self), self.dtype)


def _storage(self):
    """The tensor's typed storage."""
    _warn_typed_storage_removal(stacklevel=2)
    return _typed_storage(self)


def _storage_type(self):
    """The legacy storage class for this tensor's dtype."""
    return legacy_storage_class(self.dtype)


def _is_set_to(self, tensor):
    """Same storage, offset, sizes and strides: self and tensor are the same view of the same memory."""
    if not isinstance(tensor, _C.TensorBase):
        raise TypeError(f"is_set_to(): argument 'tensor' (position 1) must be Tensor, not {type(tensor).__name__}")
    if self._storage_ptr() != tensor._storage_ptr() or (self._storage_ptr() == 0 and not self._is_same(tensor)):
        return False
    return (self.storage_offset() == tensor.storage_offset() and tuple(self.shape) == tuple(tensor.shape)
            and tuple(self.stride()) == tuple(tensor.stride()))


# C names of the dtypes, as torch's set_ messages print them
_C_TYPE_NAMES = {
    _C.float32: "float", _C.float64: "double", _C.float16: "c10::Half", _C.bfloat16: "c10::BFloat16",
    _C.int64: "long int", _C.int32: "int", _C.int16: "short int", _C.int8: "signed char", _C.uint8: "unsigned char",
    _C.bool: "bool", _C.complex64: "c10::complex<float>", _C.complex128: "c10::complex<double>",
}


def _set_target(self, source, storage_offset, size, stride):
    """The tensor whose storage and layout set_ gives self."""
    if source is None:
        if storage_offset != 0 or size is not None or stride is not None:
            raise TypeError("set_(): storage_offset, size and stride need a source storage")
        return _ops.empty((0,), dtype=self.dtype, device=self.device)
    if isinstance(source, _C.TensorBase):
        if storage_offset != 0 or size is not None or stride is not None:
            raise TypeError("set_(): a source tensor takes no storage_offset, size or stride")
        if source.dtype != self.dtype:
            raise RuntimeError(f"Could not set tensor of type {_C_TYPE_NAMES[source.dtype]} to a tensor of type "
                               f"{_C_TYPE_NAMES[self.dtype]}")
        return source.detach()
    if isinstance(source, TypedStorage):
        if source.dtype != self.dtype:
            raise RuntimeError(f"Expected a Storage of type {_C_TYPE_NAMES[self.dtype]} or an UntypedStorage, but got "
                               f"type {_LEGACY_NAMES[source.dtype][:-len('Storage')]} for argument 1 'storage'")
        source = source._untyped_storage
    if not isinstance(source, UntypedStorage):
        raise TypeError(f"set_(): argument 'source' must be Tensor or Storage, not {type(source).__name__}")
    itemsize = self.element_size()
    if size is None:
        if storage_offset != 0 or stride is not None:
            raise TypeError("set_(): storage_offset and stride need a size")
        size = (source.nbytes() // itemsize,)
    if not _is_int(storage_offset):
        raise TypeError(f"set_(): argument 'storage_offset' must be int, not {type(storage_offset).__name__}")
    size = tuple(int(s) for s in size)
    if any(s < 0 for s in size):
        raise RuntimeError(f"set_(): negative dimension in size {list(size)}")
    if stride is None:
        stride, step = [], 1
        for s in reversed(size):
            stride.insert(0, step)
            step *= max(s, 1)
    stride = tuple(int(s) for s in stride)
    if len(stride) != len(size):
        raise RuntimeError(f"unequal size length ({len(size)}) and stride length ({len(stride)})")
    storage_offset = int(storage_offset)
    if storage_offset < 0:
        raise RuntimeError(f"Tensor: invalid storage offset {storage_offset}")
    span = 0 if 0 in size else 1 + sum((s - 1) * st for s, st in zip(size, stride))
    needed = (storage_offset + span) * itemsize
    if needed > source.nbytes():
        source.resize_(needed)  # as torch, set_ grows a storage too small for the new layout
    b = source._bytes()
    elements = b.as_strided(((b.numel() // itemsize) * itemsize,), (1,), b.storage_offset()).view(self.dtype)
    return elements.as_strided(size, stride, elements.storage_offset() + storage_offset)


def _set_(self, source=None, storage_offset=0, size=None, stride=None):
    """Make self a view of source (a tensor, or a storage with offset/size/stride), in place; tensors that
    were views of self keep the old memory."""
    if self.requires_grad:
        if self.is_leaf:
            raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")
        raise RuntimeError("set_(): the derivative of set_ is not implemented; detach the tensor first")
    _C._tensor_set_data(self, _set_target(self, source, storage_offset, size, stride))
    return self


Tensor.set_ = _set_
Tensor.untyped_storage = untyped_storage_of
Tensor.storage = _storage
Tensor._typed_storage = _typed_storage
Tensor.storage_type = _storage_type
Tensor.is_set_to = _is_set_to
