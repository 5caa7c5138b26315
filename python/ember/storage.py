"""ember.UntypedStorage, ember.TypedStorage and the legacy ember.FloatStorage-style classes.

Ember's C++ core has no storage object visible to Python, so a storage here is a 1-D uint8 tensor
that views the bytes of a tensor's storage (offset 0, stride 1). Every read and write goes through
that view, so a storage and the tensors on the same memory see each other's writes, as in PyTorch.
"""
import sys
import warnings
import weakref

from . import _C
from ._C import _ops
from ._conj import _stored
from ._functional import frombuffer as _frombuffer

__all__ = ["StorageBase", "UntypedStorage", "TypedStorage"]

_LEGACY_NAMES = {
    _C.float32: "FloatStorage", _C.float64: "DoubleStorage", _C.float16: "HalfStorage",
    _C.bfloat16: "BFloat16Storage", _C.int64: "LongStorage", _C.int32: "IntStorage", _C.int16: "ShortStorage",
    _C.int8: "CharStorage", _C.uint8: "ByteStorage", _C.bool: "BoolStorage",
    _C.complex64: "ComplexFloatStorage", _C.complex128: "ComplexDoubleStorage",
}

# torch warns about TypedStorage once per process unless a test asks for every time
_typed_storage_warning = {"always": False, "warned": False}


def _set_always_warn_typed_storage_removal(always_warn):
    _typed_storage_warning["always"] = bool(always_warn)


def _get_always_warn_typed_storage_removal():
    return _typed_storage_warning["always"]


def _reset_warn_typed_storage_removal():
    _typed_storage_warning["warned"] = False


def _warn_typed_storage_removal(stacklevel=2):
    if _typed_storage_warning["always"] or not _typed_storage_warning["warned"]:
        warnings.warn(
            "TypedStorage is deprecated. It will be removed in the future and UntypedStorage will be the only "
            "storage class. This should only matter to you if you are using storages directly.  To access "
            "UntypedStorage directly, use tensor.untyped_storage() instead of tensor.storage()",
            UserWarning, stacklevel=stacklevel + 1)
        _typed_storage_warning["warned"] = True


def _whole_storage_bytes(t):
    """A uint8 view of all of t's storage: offset 0, one element per byte, whatever t's layout."""
    t = _stored(t.detach())  # the bytes as stored (a conjugate view's hold the conjugates)
    nbytes, itemsize = t._storage_nbytes(), t.element_size()
    # a contiguous 1-D alias in t's own dtype can always be reinterpreted as bytes
    whole = t.as_strided((nbytes // itemsize,), (1,), 0).view(_C.uint8)
    if whole.numel() != nbytes:  # a byte tail that no element of t's dtype covers
        whole = whole.as_strided((nbytes,), (1,), 0)
    return whole


def _is_int(x):
    return not isinstance(x, bool) and hasattr(type(x), "__index__")


def _bytes_from_buffer(buffer, byte_order, count, offset, dtype):
    """The bytes of `count` elements of dtype read from buffer at `offset`, in native byte order."""
    if byte_order not in ("native", "little", "big"):
        raise ValueError(f"byte_order must be 'native', 'little' or 'big', got {byte_order!r}")
    data = memoryview(buffer).cast("B")
    itemsize = _C._ops.empty((0,), dtype=dtype).element_size()
    if offset < 0 or offset > len(data):
        raise ValueError(f"offset must be non-negative and no greater than buffer length ({len(data)}), "
                         f"but got {offset}")
    available = len(data) - offset
    if count < 0:
        if available % itemsize:
            raise ValueError(f"buffer size ({available}) must be a multiple of element size ({itemsize})")
        count = available // itemsize
    elif count * itemsize > available:
        raise ValueError(f"requested buffer length ({count} * {itemsize} bytes) exceeds actual buffer length "
                         f"({available} bytes)")
    raw = bytes(data[offset:offset + count * itemsize])
    if byte_order != "native" and byte_order != sys.byteorder and itemsize > 1:
        raw = b"".join(raw[i:i + itemsize][::-1] for i in range(0, len(raw), itemsize))
    return raw


def _tensor_from_bytes(raw):
    if not raw:
        return _ops.empty((0,), dtype=_C.uint8)
    return _frombuffer(bytearray(raw), dtype=_C.uint8).clone()


class _Copies:
    """copy, deepcopy (one clone per storage in a memo) and sys.getsizeof of both storage kinds."""
    __slots__ = ()

    def __sizeof__(self):
        return super().__sizeof__() + self.nbytes()

    def __copy__(self):
        return self.clone()

    def __deepcopy__(self, memo):
        memo = {} if memo is None else memo
        if id(self) not in memo:
            memo[id(self)] = self.clone()
        return memo[id(self)]


class _Conversions:
    """double(), float(), ... of both storage kinds: each a typed copy through the class's own _to."""
    __slots__ = ()

    def double(self): return self._to(_C.float64)  # noqa: E704
    def float(self): return self._to(_C.float32)  # noqa: E704
    def half(self): return self._to(_C.float16)  # noqa: E704
    def bfloat16(self): return self._to(_C.bfloat16)  # noqa: E704
    def long(self): return self._to(_C.int64)  # noqa: E704
    def int(self): return self._to(_C.int32)  # noqa: E704
    def short(self): return self._to(_C.int16)  # noqa: E704
    def char(self): return self._to(_C.int8)  # noqa: E704
    def byte(self): return self._to(_C.uint8)  # noqa: E704
    def bool(self): return self._to(_C.bool)  # noqa: E704


class StorageBase:
    """The root of ember.UntypedStorage (as torch.StorageBase is of torch.UntypedStorage)."""

    __slots__ = ()


class UntypedStorage(_Copies, _Conversions, StorageBase):
    """Bytes on a device; the memory under every tensor (`tensor.untyped_storage()`)."""

    __slots__ = ("_base", "_length", "__weakref__")
    is_sparse = False
    is_sparse_csr = False

    def __init__(self, *args, device=None):
        if len(args) > 1:
            raise TypeError(f"ember.UntypedStorage() takes at most 1 positional argument ({len(args)} given): "
                            "expected (), (int size) or (Sequence data)")
        if args and isinstance(args[0], _C.TensorBase):
            raise RuntimeError(f"ember.UntypedStorage(): Expected a sequence type, but got {type(args[0]).__name__}")
        if not args:
            data = _ops.empty((0,), dtype=_C.uint8, device=device)
        elif _is_int(args[0]):
            size = int(args[0].__index__())
            if size < 0:
                raise RuntimeError(f"ember.UntypedStorage(): size must be non-negative, got {size}")
            data = _ops.empty((size,), dtype=_C.uint8, device=device)
        else:
            values = args[0]
            if isinstance(values, (bytes, bytearray)) or not hasattr(values, "__len__"):
                raise TypeError(f"ember.UntypedStorage(): expected an int size or a sequence of ints, "
                                f"got {type(values).__name__}")
            for v in values:
                if not _is_int(v):
                    raise RuntimeError(f"ember.UntypedStorage(): tried to construct a storage from a sequence "
                                       f"({type(values).__name__}), but one of the items was of type "
                                       f"{type(v).__name__} instead of int")
            # bytes wrap modulo 256, as an int64 -> uint8 conversion does
            data = _ops.tensor([int(v) & 0xFF for v in values], dtype=_C.uint8, device=device)
        self._base, self._length = data, None

    @classmethod
    def _wrap(cls, byte_tensor, whole=True):
        """A storage over byte_tensor (1-D uint8): all of its storage, or just its elements (a slice)."""
        self = object.__new__(cls)
        self._base, self._length = byte_tensor, None if whole else byte_tensor.numel()
        return self

    def _bytes(self):
        """The 1-D uint8 tensor holding exactly this storage's bytes (it follows a resized storage)."""
        b = self._base
        if self._length is None and b.numel() != b._storage_nbytes():
            b = self._base = b.as_strided((b._storage_nbytes(),), (1,), 0)
        return b

    # ---- sizes and placement
    def nbytes(self):
        return self._bytes().numel()

    def size(self):
        return self.nbytes()

    def __len__(self):
        return self.nbytes()

    def element_size(self):
        return 1

    def data_ptr(self):
        return self._bytes().data_ptr()

    @property
    def device(self):
        return self._base.device

    def get_device(self):
        return self.device.index

    @property
    def is_cuda(self):
        return self.device.type == "cuda"

    @property
    def filename(self):
        return None  # storages from files (from_file) are not supported

    def resizable(self):
        return self._length is None

    def is_pinned(self, device="cuda"):
        return False

    def pin_memory(self, device="cuda"):
        return UntypedStorage._wrap(self._bytes().pin_memory())

    def is_shared(self):
        return self._base.is_shared()

    def share_memory_(self):
        """Move the memory into shared memory in place: tensors on this storage follow."""
        self._base.share_memory_()
        _remember(self)  # the memory moved: tensors on it must still answer this object
        return self

    def untyped(self):
        return self

    def type(self, dtype=None, non_blocking=False):
        if dtype is None:
            return "ember.storage.UntypedStorage"
        return TypedStorage._wrap(self, _C.uint8).type(dtype, non_blocking)

    # ---- element access
    def _index(self, idx):
        if isinstance(idx, bool) or not _is_int(idx):
            raise TypeError(f"can't index a ember.UntypedStorage with {type(idx).__name__}")
        n, i = self.nbytes(), int(idx.__index__())
        if not -n <= i < n:
            raise IndexError(f"index {i} out of range for storage of size {n}")
        return i + n if i < 0 else i

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            start, stop, step = idx.indices(self.nbytes())
            if step != 1:
                raise RuntimeError(f"Trying to slice with a step of {step}, but only a step of 1 is supported")
            b = self._bytes()
            # the slice aliases this storage's memory but cannot grow it
            return UntypedStorage._wrap(b.as_strided((max(stop - start, 0),), (1,), b.storage_offset() + start),
                                        whole=False)
        return int(self._bytes()[self._index(idx)].item())

    def __setitem__(self, idx, value):
        if isinstance(value, bool) or not _is_int(value):
            raise RuntimeError(f"can only set storage content with a int types, but got {type(value).__name__} "
                               "instead")
        if isinstance(idx, slice):
            start, stop, step = idx.indices(self.nbytes())
            self._bytes()[start:stop:step].fill_(int(value) & 0xFF)
        else:
            self._bytes()[self._index(idx)] = int(value) & 0xFF

    def __iter__(self):
        return iter(self.tolist())

    def tolist(self):
        return self._bytes().tolist()

    def fill_(self, value):
        if isinstance(value, bool) or not _is_int(value):
            raise RuntimeError(f"fill_ expects int, but got {type(value).__name__}")
        self._bytes().fill_(int(value) & 0xFF)
        return self

    def copy_(self, src, non_blocking=None):
        if isinstance(src, TypedStorage):
            src = src._untyped_storage
        if not isinstance(src, UntypedStorage):
            raise TypeError(f"copy_(): argument 'src' (position 1) must be Storage, not {type(src).__name__}")
        if src.nbytes() != self.nbytes():
            raise RuntimeError(f"size does not match, self was {self.nbytes()} bytes but src was "
                               f"{src.nbytes()} bytes")
        self._bytes().copy_(src._bytes())
        return self

    def clone(self):
        return UntypedStorage._wrap(self._bytes().clone())

    def new(self):
        return UntypedStorage(device=self.device)

    def cpu(self):
        return self if self.device.type == "cpu" else UntypedStorage._wrap(self._bytes().cpu())

    def cuda(self, device=None, non_blocking=False):
        return UntypedStorage._wrap(self._bytes().cuda(device, non_blocking))

    def to(self, *, device, non_blocking=False):
        moved = self._bytes().to(device, non_blocking=non_blocking)
        return self if moved.device == self.device else UntypedStorage._wrap(moved)

    def resize_(self, size):
        if not _is_int(size):
            raise TypeError(f"resize_(): argument 'size' must be int, not {type(size).__name__}")
        size = int(size)
        if self._length is not None:
            raise RuntimeError("Trying to resize storage that is not resizable")
        if size < 0:
            raise RuntimeError(f"resize_(): size must be non-negative, got {size}")
        if size < self.nbytes():
            # Ember's core only ever grows a storage in place (Tensor.resize_ keeps the allocation)
            raise RuntimeError(f"resize_(): shrinking a storage ({self.nbytes()} -> {size} bytes) is not "
                               "supported by Ember")
        b = self._bytes()
        b.resize_(size)  # grows the shared storage in place: every tensor on it sees the new memory
        self._base = b
        _remember(self)
        return self

    def byteswap(self, dtype):
        """Reverse the bytes of every dtype element in place."""
        itemsize = _ops.empty((0,), dtype=dtype).element_size()
        if itemsize > 1:
            b = self._bytes()
            if b.numel() % itemsize:
                raise RuntimeError(f"byteswap(): storage of {b.numel()} bytes is not a multiple of {itemsize}")
            b.copy_(b.view(-1, itemsize).flip(1).reshape(-1))

    @staticmethod
    def from_buffer(buffer, byte_order="native", count=-1, offset=0, *, dtype=None):
        return UntypedStorage._wrap(_tensor_from_bytes(
            _bytes_from_buffer(buffer, byte_order, count, offset, dtype or _C.uint8)))

    # ---- typed reinterpretations (values converted byte by byte, as torch)
    def _to(self, dtype):
        return TypedStorage._wrap(self, _C.uint8)._to(dtype)

    # ---- Python protocols (== and hash are identity, as torch's)
    def __str__(self):
        body = " " + "\n ".join(str(v) for v in self.tolist())
        return f"{body}\n[ember.storage.UntypedStorage(device={self.device}) of size {len(self)}]"

    __repr__ = __str__

    def __reduce__(self):
        return _rebuild_untyped_storage, (self._bytes().cpu().numpy().tobytes(),)


def _rebuild_untyped_storage(raw):
    return UntypedStorage._wrap(_tensor_from_bytes(raw))


def _rebuild_typed_storage(raw, dtype_name):
    return TypedStorage._wrap(_rebuild_untyped_storage(raw), getattr(_C, dtype_name))


def _dtype_name(dtype):
    return str(dtype).rsplit(".", 1)[-1]


class TypedStorage(_Copies, _Conversions):
    """Deprecated in torch: an UntypedStorage read as elements of one dtype (what tensor.storage() gives)."""

    is_sparse = False

    def __init__(self, *args, device=None, dtype=None, wrap_storage=None, _internal=False):
        if not _internal:
            _warn_typed_storage_removal()
        if wrap_storage is not None:
            if args:
                raise RuntimeError("TypedStorage(): no positional arguments are allowed with 'wrap_storage'")
            if dtype is None:
                raise RuntimeError("TypedStorage(): argument 'dtype' must be specified with 'wrap_storage'")
            if not isinstance(wrap_storage, UntypedStorage):
                raise TypeError(f"TypedStorage(): argument 'wrap_storage' must be UntypedStorage, "
                                f"not {type(wrap_storage).__name__}")
            if device is not None and _C.device(device) != wrap_storage.device:
                raise RuntimeError(f"TypedStorage(): device {device} does not match the device of "
                                   f"'wrap_storage', {wrap_storage.device}")
            self._untyped_storage, self.dtype = wrap_storage, dtype
            return
        dtype = _C.get_default_dtype() if dtype is None else dtype
        if not isinstance(dtype, _C.dtype):
            raise TypeError(f"TypedStorage(): argument 'dtype' must be ember.dtype, not {type(dtype).__name__}")
        if len(args) > 1:
            raise RuntimeError("TypedStorage(): expected (), (int size) or (Sequence data), "
                               f"got {len(args)} positional arguments")
        if not args:
            data = _ops.empty((0,), dtype=dtype, device=device)
        elif _is_int(args[0]):
            size = int(args[0].__index__())
            if size < 0:
                raise RuntimeError(f"TypedStorage(): size must be non-negative, got {size}")
            data = _ops.empty((size,), dtype=dtype, device=device)
        elif isinstance(args[0], (str, bytes, bytearray)) or not hasattr(args[0], "__iter__"):
            raise TypeError(f"TypedStorage(): expected an int size or a sequence, got {type(args[0]).__name__}")
        else:
            values = list(args[0])
            for v in values:
                if isinstance(v, (str, bytes, list, tuple)):  # a storage is flat: one number per element
                    raise TypeError(f"must be real number, not {type(v).__name__}")
            data = _ops.tensor(values, dtype=dtype, device=device) if values else \
                _ops.empty((0,), dtype=dtype, device=device)
        self._untyped_storage, self.dtype = UntypedStorage._wrap(_whole_storage_bytes(data)), dtype

    @classmethod
    def _wrap(cls, untyped, dtype):
        self = object.__new__(TypedStorage)
        self._untyped_storage, self.dtype = untyped, dtype
        return self

    def _new_wrapped_storage(self, untyped):
        return TypedStorage._wrap(untyped, self.dtype)

    def _elements(self):
        """This storage as a 1-D tensor of its dtype, aliasing its memory."""
        b = self._untyped_storage._bytes()
        itemsize = self.element_size()
        n = b.numel() // itemsize
        return b.as_strided((n * itemsize,), (1,), b.storage_offset()).view(self.dtype)

    # ---- sizes and placement
    def element_size(self):
        return _ops.empty((0,), dtype=self.dtype).element_size()

    def nbytes(self):
        return self._untyped_storage.nbytes()

    def size(self):
        return self.nbytes() // self.element_size()

    def __len__(self):
        return self.size()

    def data_ptr(self):
        return self._untyped_storage.data_ptr()

    @property
    def device(self):
        return self._untyped_storage.device

    @property
    def _dtype(self):
        return self.dtype

    def get_device(self):
        return self._untyped_storage.get_device()

    @property
    def is_cuda(self):
        return self.device.type == "cuda"

    @property
    def filename(self):
        return None

    def resizable(self):
        return self._untyped_storage.resizable()

    def untyped(self):
        return self._untyped_storage

    def is_pinned(self, device="cuda"):
        return False

    def pin_memory(self, device="cuda"):
        return self._new_wrapped_storage(self._untyped_storage.pin_memory(device))

    def is_shared(self):
        return self._untyped_storage.is_shared()

    def share_memory_(self):
        self._untyped_storage.share_memory_()
        return self

    def pickle_storage_type(self):
        return _LEGACY_NAMES[self.dtype]

    _pickle_storage_type = pickle_storage_type

    def _get_legacy_storage_class(self):
        return _LEGACY_CLASSES[_LEGACY_NAMES[self.dtype]]

    def type(self, dtype=None, non_blocking=False):
        if dtype is None:
            return f"ember.{_LEGACY_NAMES[self.dtype]}"
        if isinstance(dtype, str):
            name = dtype.rsplit(".", 1)[-1]
            if name not in _LEGACY_CLASSES:
                raise ValueError(f"invalid storage type {dtype!r}")
            target = _LEGACY_CLASSES[name].dtype
        elif isinstance(dtype, _C.dtype):
            target = dtype
        elif isinstance(dtype, type) and issubclass(dtype, UntypedStorage):
            return self._untyped_storage
        elif isinstance(dtype, type) and isinstance(getattr(dtype, "dtype", None), _C.dtype):
            target = dtype.dtype
        else:
            raise TypeError(f"type(): expected a storage type name or class, got {type(dtype).__name__}")
        return self._to(target)

    # ---- element access
    def _index(self, idx):
        if isinstance(idx, bool):
            raise TypeError(f"can't index a {type(self)} with {type(idx)}")
        if not _is_int(idx):
            raise RuntimeError(f"can't index a {type(self)} with {type(idx)}")
        n, i = self.size(), int(idx.__index__())
        if not -n <= i < n:
            raise IndexError(f"index {i} out of range for storage of size {n}")
        return i + n if i < 0 else i

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            raise RuntimeError("slices are only supported in UntypedStorage.__getitem__")
        return self._elements()[self._index(idx)].item()

    def __setitem__(self, idx, value):
        if isinstance(value, (str, bytes)) or value is None:
            raise TypeError(f"can't assign a {type(value).__name__} to a ember.{_LEGACY_NAMES[self.dtype][:-7]}"
                            "Tensor")
        if isinstance(value, (UntypedStorage, TypedStorage)):
            raise RuntimeError(f"can't assign a storage to an element of a {type(self).__name__}")
        elements = self._elements()
        if isinstance(idx, slice):
            elements[idx] = value
        else:
            elements[self._index(idx)] = value

    def __iter__(self):
        return iter(self.tolist())

    def tolist(self):
        return self._elements().tolist()

    def fill_(self, value):
        if isinstance(value, (str, bytes)) or value is None:
            raise TypeError(f"can't assign a {type(value).__name__} to a ember.{_LEGACY_NAMES[self.dtype][:-7]}"
                            "Tensor")
        self._elements().fill_(value)
        return self

    def copy_(self, source, non_blocking=None):
        """Copy source's bytes (not its values: a FloatStorage from an IntStorage keeps the bit patterns)."""
        self._untyped_storage.copy_(source._untyped_storage if isinstance(source, TypedStorage) else source)
        return self

    def clone(self):
        return self._new_wrapped_storage(self._untyped_storage.clone())

    def cpu(self):
        return self if self.device.type == "cpu" else self._new_wrapped_storage(self._untyped_storage.cpu())

    def cuda(self, device=None, non_blocking=False):
        return self._new_wrapped_storage(self._untyped_storage.cuda(device, non_blocking))

    def to(self, *, device, non_blocking=False):
        moved = self._untyped_storage.to(device=device, non_blocking=non_blocking)
        return self if moved is self._untyped_storage else self._new_wrapped_storage(moved)

    def resize_(self, size):
        if not _is_int(size):
            raise TypeError(f"resize_(): argument 'size' must be int, not {type(size).__name__}")
        self._untyped_storage.resize_(int(size) * self.element_size())

    @classmethod
    def from_buffer(cls, buffer, byte_order="native", count=-1, offset=0, *, dtype=None, device=None):
        legacy = getattr(cls, "dtype", None)
        if isinstance(legacy, _C.dtype):
            if dtype is not None:
                raise RuntimeError(f"from_buffer: 'dtype' can only be specified in UntypedStorage.from_buffer "
                                   f"and TypedStorage.from_buffer, not ember.{cls.__name__}")
            dtype = legacy
        elif dtype is None:
            dtype = _C.get_default_dtype()
        untyped = UntypedStorage.from_buffer(buffer, byte_order, count, offset, dtype=dtype)
        return TypedStorage._wrap(untyped if device is None else untyped.to(device=device), dtype)

    # ---- conversions (values converted, as Tensor.to)
    def _to(self, dtype):
        if dtype == self.dtype:
            return self
        converted = self._elements().to(dtype)
        return TypedStorage._wrap(UntypedStorage._wrap(_whole_storage_bytes(converted)), dtype)

    # torch's warning-free spellings, which code written against torch's internals calls
    _size = size
    _nbytes = nbytes
    _element_size = element_size
    _data_ptr = data_ptr
    _is_shared = is_shared
    _share_memory_ = share_memory_
    _resize_ = resize_
    _getitem = __getitem__
    _setitem = __setitem__

    # ---- Python protocols (== and hash are identity, as torch's)
    def __str__(self):
        body = " " + "\n ".join(str(v) for v in self.tolist())
        return (f"{body}\n[ember.storage.TypedStorage(dtype={self.dtype}, device={self.device}) "
                f"of size {len(self)}]")

    __repr__ = __str__

    def __reduce__(self):
        # legacy storages unpickle as plain TypedStorage, as in torch
        return _rebuild_typed_storage, (self._untyped_storage._bytes().cpu().numpy().tobytes(),
                                        _dtype_name(self.dtype))


class _LegacyStorageMeta(type):
    """ember.FloatStorage & co. (and ember.cuda.FloatStorage & co.): constructors of TypedStorage with a fixed
    dtype and device type, and tests of both for isinstance."""

    def __instancecheck__(cls, obj):
        if type(obj) is TypedStorage:
            return obj.dtype == cls.dtype and obj.device.type == cls._device_type
        return issubclass(type(obj), cls)

    def __call__(cls, *args, wrap_storage=None, device=None, **kwargs):
        qualname = f"{cls.__module__}.{cls.__name__}"
        if kwargs:
            name = next(iter(kwargs))
            raise RuntimeError(f"{qualname}(): keyword argument '{name}' cannot be specified")
        if device is None:
            device = None if cls._device_type == "cpu" else cls._device_type
        elif _C.device(device).type != cls._device_type:
            raise RuntimeError(f"{qualname}(): expected device type {cls._device_type}, got {device}")
        if isinstance(wrap_storage, UntypedStorage) and wrap_storage.device.type != cls._device_type:
            raise RuntimeError(f"{qualname}(): Device of 'wrap_storage' must be {cls._device_type}, but got "
                               f"{wrap_storage.device.type}")
        _warn_typed_storage_removal()
        return TypedStorage(*args, dtype=cls.dtype, device=device, wrap_storage=wrap_storage, _internal=True)


def _legacy_classes(device_type, module):
    return {name: _LegacyStorageMeta(name, (TypedStorage,),
                                     {"dtype": dtype, "_device_type": device_type, "__module__": module,
                                      "__doc__": f"A TypedStorage of {dtype} on the {device_type.upper()} (legacy class)."})
            for dtype, name in _LEGACY_NAMES.items()}


_LEGACY_CLASSES = _legacy_classes("cpu", "ember")
_CUDA_LEGACY_CLASSES = _legacy_classes("cuda", "ember.cuda")  # ember.cuda exports these
globals().update(_LEGACY_CLASSES)
__all__ += list(_LEGACY_CLASSES)


def legacy_storage_class(dtype):
    """ember.FloatStorage for ember.float32, ...: what Tensor.storage_type() answers."""
    return _LEGACY_CLASSES[_LEGACY_NAMES[dtype]]


# ---- A tensor's UntypedStorage, cached per storage so that (as in torch)
# t.untyped_storage() is t.untyped_storage() and views of t answer the same object.
_storage_cache = weakref.WeakValueDictionary()


def _remember(storage):
    """Answer `storage` for tensors on its memory from now on (after it moved or was first made)."""
    ptr = storage._base._storage_ptr()
    if ptr and storage._length is None:
        _storage_cache[ptr] = storage


def untyped_storage_of(self):
    """tensor.untyped_storage(): the one UntypedStorage object on the tensor's memory."""
    if self.is_sparse:
        raise NotImplementedError("Cannot access storage of a sparse COO tensor (its data is ._indices() and "
                                  "._values())")
    ptr, nbytes = self._storage_ptr(), self._storage_nbytes()
    if ptr == 0:  # empty storages share the null address: no identity to key on
        return UntypedStorage._wrap(_whole_storage_bytes(self))
    cached = _storage_cache.get(ptr)
    # a live cached storage keeps its memory alive, so no other storage can have its address;
    # the check catches one whose memory moved since (a grown storage)
    if cached is not None and cached._base._storage_ptr() == ptr and cached.nbytes() == nbytes:
        return cached
    storage = UntypedStorage._wrap(_whole_storage_bytes(self))
    _remember(storage)
    return storage
