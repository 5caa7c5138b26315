"""ember.Tensor: the Python class of every tensor. The C++ base (_C.TensorBase) holds the data and
the fast op methods; this class adds what is naturally Python: printing, iteration, NumPy/DLPack
interop, conversions."""
import numbers

from . import _C
from ._C import _ops
from . import _tensor_str
from ._functional import nonzero as _nonzero, unique as _unique, unique_consecutive as _unique_consecutive
from . import _utils
from ._utils import sparse_coo as _sparse_coo
from ._utils import strided as _strided
from ._utils import contiguous_format as _contiguous_format, preserve_format as _preserve_format


class Size(tuple):
    """The shape of a tensor: a tuple of ints, printed as ember.Size([...])."""

    def __repr__(self):
        return f"ember.Size({list(self)})"

    def numel(self):
        n = 1
        for s in self:
            n *= s
        return n

    def __getitem__(self, i):
        r = tuple.__getitem__(self, i)
        return Size(r) if isinstance(i, slice) else r

    def __add__(self, other):
        return Size(tuple.__add__(self, tuple(other)))

    def __reduce__(self):
        return (Size, (tuple(self),))


_C._set_size_class(Size)


class _RemovableHandle:
    def __init__(self, tensor, hook_id, remover=None):
        self.tensor, self.id, self._remover = tensor, hook_id, remover or _C._remove_hook

    def remove(self):
        if self.tensor is not None:
            self._remover(self.tensor, self.id)
            self.tensor = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


# Pickling, deep copy and shared memory are implemented by higher layers (ember.serialization,
# ember.multiprocessing), which install them here when imported; ember/__init__ imports both. The
# Tensor class never imports those layers, so they are free to import Tensor and nn.Parameter.
_LAYER_HOOKS = {"reduce_ex": None, "deepcopy": None, "share_memory": None}
_HOOK_PROVIDERS = {"reduce_ex": "ember.serialization", "deepcopy": "ember.serialization",
                   "share_memory": "ember.multiprocessing"}


def _install_layer_hook(name, fn):
    """Called by a higher layer at import: fn implements Tensor's `name` protocol."""
    if name not in _LAYER_HOOKS:
        raise KeyError(f"unknown Tensor layer hook {name!r}; expected one of {sorted(_LAYER_HOOKS)}")
    _LAYER_HOOKS[name] = fn


def _layer_hook(name):
    fn = _LAYER_HOOKS[name]
    if fn is None:
        raise RuntimeError(f"Tensor {name} needs {_HOOK_PROVIDERS[name]}, which has not been imported yet")
    return fn


class _NumpyBridge:
    """Holds a tensor alive while NumPy views its memory through __array_interface__."""

    __slots__ = ("tensor", "__array_interface__")

    def __init__(self, t):
        typestr, ptr, strides = _C._array_interface(t)
        self.tensor = t
        self.__array_interface__ = {
            "shape": tuple(t.shape), "typestr": typestr, "data": (ptr, False),
            "strides": strides, "version": 3,
        }


_TO_DEVICE = []  # the autograd Function, made on first use (ember.autograd imports this module)


def _to_device(t, device, dtype, copy, non_blocking=False):
    """t on another device (and dtype); the gradient flows back to t's device and dtype. non_blocking:
    a copy from pinned memory may still be running when this returns (the stream orders it)."""
    if not t.requires_grad:
        return _C._to_device(t, device, dtype, copy, non_blocking)
    if not _TO_DEVICE:
        from .autograd.function import Function

        class ToDevice(Function):
            @staticmethod
            def forward(ctx, x, device, dtype, copy, non_blocking):
                ctx.src = (x.device, x.dtype)
                return _C._to_device(x, device, dtype, copy, non_blocking)

            @staticmethod
            def backward(ctx, grad):
                return _C._to_device(grad, ctx.src[0], ctx.src[1], False), None, None, None, None

        _TO_DEVICE.append(ToDevice)
    return _TO_DEVICE[0].apply(t, device, dtype, copy, non_blocking)


def _tensor_self(name, obj):
    """obj, a tensor: a method of Tensor called on anything else raises as a C-level descriptor would."""
    if not isinstance(obj, _C.TensorBase):
        raise TypeError(f"descriptor '{name}' for 'ember._C.TensorBase' objects doesn't apply to a "
                        f"'{type(obj).__name__}' object")
    return obj


class Tensor(_C.TensorBase):
    """A multi-dimensional array with a dtype, a device and autograd support."""
    # NumPy defers binary operators to tensors (np.float64(2) + t is a Tensor), as with PyTorch
    __array_priority__ = 1000
    def __new__(cls, *args, **kwargs):
        # legacy constructor: Tensor(), Tensor(2, 3), Tensor([1, 2]), Tensor(other)
        if cls is not Tensor:
            return super().__new__(cls)
        if not args:
            return _ops.empty(0)
        if len(args) == 1 and not isinstance(args[0], numbers.Integral):
            data = args[0]
            if isinstance(data, _C.TensorBase):
                return _ops.alias(data)
            return _ops.tensor(data, dtype=_C.get_default_dtype())
        return _ops.empty(*args)

    def __init__(self, *args, **kwargs):
        pass

    # ---- autograd
    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        """Accumulate the gradient of this tensor into the .grad of the leaves it depends on."""
        from .autograd import backward
        backward(self, gradient, retain_graph, create_graph, inputs=inputs)

    @property
    def grad(self):
        """The gradient accumulated by backward(), or None."""
        g = self._grad
        if g is None and self.requires_grad and not self.is_leaf and not self.retains_grad:
            import warnings
            warnings.warn(
                "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad attribute "
                "won't be populated during autograd.backward(). If you indeed want the .grad field to be populated "
                "for a non-leaf Tensor, use .retain_grad() on the non-leaf Tensor.", UserWarning, stacklevel=2)
        return g

    @grad.setter
    def grad(self, value):
        self._grad = value

    @grad.deleter
    def grad(self):
        self._grad = None

    # Ember tensors are strided or sparse COO (is_sparse), on the CPU, CUDA (is_cuda) or meta (is_meta)
    # device: the other backends' flags that PyTorch programs test are False (dcgan checks is_xpu)
    is_xpu = is_mps = is_quantized = is_sparse_csr = is_mkldnn = is_nested = is_vulkan = \
        is_ipu = is_maia = is_mtia = property(lambda self: False, doc="False: Ember has no such backend or layout.")

    @property
    def data(self):
        """The tensor's data without autograd history (assignable)."""
        return _C._tensor_data(self)

    @data.setter
    def data(self, value):
        if not isinstance(value, _C.TensorBase):
            raise TypeError(f"Variable data has to be a tensor, but got {type(value).__name__}")
        _C._tensor_set_data(self, value)

    def detach(self):
        """A view of the same data cut off from the autograd graph."""
        return _C._detach(self)

    def detach_(self):
        """Cut this tensor off from the autograd graph, in place."""
        _C._detach_(self)
        return self

    def requires_grad_(self, requires_grad=True):
        """Set whether autograd records operations on this tensor, in place."""
        if requires_grad and not (self.is_floating_point() or self.is_complex()):
            raise RuntimeError("only Tensors of floating point dtype can require gradients")  # (torch's wording)
        self.requires_grad = requires_grad
        return self

    def retain_grad(self):
        """Keep .grad for this non-leaf tensor after backward."""
        _C._retain_grad(self)

    def register_hook(self, hook):
        """Register a function called with this tensor's gradient during backward."""
        if not self.requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        return _RemovableHandle(self, _C._register_hook(self, hook))

    def register_post_accumulate_grad_hook(self, hook):
        """hook(tensor) runs after the leaf's .grad has been accumulated by backward()."""
        return _RemovableHandle(self, _C._register_post_accumulate_grad_hook(self, hook),
                                _C._remove_post_accumulate_grad_hook)

    def is_inference(self):
        """False: Ember has no inference tensors (inference_mode makes ordinary ones)."""
        return False

    # ---- printing
    def __repr__(self, *, tensor_contents=None):
        if _C._jit.tracing():  # printing inside traced code is not part of the graph
            with _C._jit.NoTrace():
                return _tensor_str._str(self, tensor_contents=tensor_contents)
        return _tensor_str._str(self, tensor_contents=tensor_contents)

    def __format__(self, spec):
        if self.dim() == 0:
            return self.item().__format__(spec)
        return object.__format__(self, spec)

    # ---- Python protocols
    def __iter__(self):
        if self.dim() == 0:
            raise TypeError("iteration over a 0-d tensor")
        return iter(self.unbind(0))

    def __reversed__(self):
        return self.flip(0) if self.dim() > 0 else self

    def __contains__(self, element):
        if isinstance(element, (Tensor, numbers.Number)):
            return bool((self == element).any().item())
        raise RuntimeError(
            f"Tensor.__contains__ only supports Tensor or scalar, but you passed in a {type(element)}.")

    # Python 2's names of /, which torch.Tensor keeps (number / tensor as torch computes it)
    def __div__(self, other):
        return _tensor_self("__div__", self).__truediv__(other)

    def __rdiv__(self, other):
        return self.reciprocal() * other

    def __idiv__(self, other):
        return _tensor_self("__idiv__", self).__itruediv__(other)

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        r = _layer_hook("deepcopy")(self, memo)
        memo[id(self)] = r
        return r

    def __reduce_ex__(self, proto):
        # plain pickle: self-contained bytes + layout (ember.save writes torch's shared-storage format)
        return _layer_hook("reduce_ex")(self)

    # ---- shared memory (ember.multiprocessing)
    def share_memory_(self):
        """Move the storage into shared memory (in place; every view follows), so processes that
        inherit or receive this tensor see each other's writes. A no-op if already shared."""
        return _layer_hook("share_memory")(self)

    def is_shared(self):
        """True when the storage lives in shared memory."""
        return _C._shm_strategy_of(self) is not None

    # ---- interop
    def numpy(self, *, force=False):
        """A NumPy array sharing this tensor's memory."""
        if _C._jit.tracing():  # the values leave the graph: replay guards on them
            _C._jit.values_read(self, "Tensor.numpy()")
            with _C._jit.NoTrace():
                return self._numpy(force)
        return self._numpy(force)

    def _numpy(self, force):
        import numpy as np
        if self.is_sparse:
            raise TypeError("can't convert Sparse layout tensor to numpy. Use Tensor.to_dense() first.")
        if self.device.type != "cpu":
            raise TypeError(f"can't convert {self.device} device type tensor to numpy. Use Tensor.cpu() to copy the "
                            "tensor to host memory first.")
        if getattr(self, "requires_grad", False) and not force:
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead.")
        if self.dtype is _C.bfloat16:
            raise TypeError("Got unsupported ScalarType BFloat16")
        if self.is_conj() or self.is_neg():
            if force:  # as torch: force=True is t.detach().cpu().resolve_conj().resolve_neg().numpy()
                return self.detach().resolve_conj().resolve_neg()._numpy(force)
            bit, fix = ("conjugate", "resolve_conj") if self.is_conj() else ("negative", "resolve_neg")
            raise RuntimeError(f"Can't call numpy() on Tensor that has {bit} bit set. Use tensor.{fix}().numpy() "
                               "instead.")
        if self.numel() == 0:
            return np.empty(tuple(self.shape), dtype=_NP_DTYPES[self.dtype])
        return np.asarray(_NumpyBridge(self))

    def __array__(self, dtype=None, copy=None):
        # NumPy 2 passes copy=True for np.array(t): the result must then not share memory
        a = self.numpy()
        if dtype is not None:
            a = a.astype(dtype, copy=bool(copy))
        elif copy:
            a = a.copy()
        return a

    def __array_wrap__(self, array, context=None, return_scalar=False):
        # the result of a NumPy ufunc applied to a tensor comes back as a tensor
        import numpy as np
        return _C.from_numpy(np.ascontiguousarray(array) if array.ndim else np.array(array, ndmin=0, copy=True))

    def __dlpack__(self, stream=None, max_version=None, dl_device=None, copy=None):
        if self.is_conj() or self.is_neg():
            raise BufferError("Can't export tensors with the conjugate bit set" if self.is_conj() else
                              "Can't export tensors with the negative bit set")
        if dl_device is not None and tuple(dl_device) != (1, 0):
            raise BufferError(f"Ember tensors are on the CPU; cannot export to DLPack device {dl_device}")
        # a consumer asking for DLPack >= 1.0 gets a versioned capsule (NumPy then keeps it writable)
        versioned = max_version is not None and max_version[0] >= 1
        if copy:
            return _C._to_dlpack(self.clone(), versioned, True)
        return _C._to_dlpack(self, versioned, False)

    def __dlpack_device__(self):
        return (1, 0)  # kDLCPU, device 0

    # ---- conversions
    def to(self, *args, **kwargs):
        """Convert to a dtype and/or device (a copy only when something changes)."""
        dtype = kwargs.pop("dtype", None)
        device = kwargs.pop("device", None)
        copy = kwargs.pop("copy", False)
        non_blocking = bool(kwargs.pop("non_blocking", False))
        fmt = kwargs.pop("memory_format", None)
        if fmt is not None and fmt is not _preserve_format:
            # the conversion in the requested layout: a copy unless self already is in it (and nothing else changes)
            r = self.to(*args, dtype=dtype, device=device, copy=copy, non_blocking=non_blocking, **kwargs)
            return r if r.is_contiguous(memory_format=fmt) and not (copy and r is self) else r.clone(memory_format=fmt)
        if kwargs:
            raise TypeError(f"to() got an unexpected keyword argument '{next(iter(kwargs))}'")
        flags = []  # positional bools after the first argument: non_blocking, then copy
        for i, a in enumerate(args):
            if i > 0 and isinstance(a, bool):
                flags.append(a)
            elif i > 0 and not (i == 1 and isinstance(a, _C.dtype) and isinstance(args[0], (str, _C.device))):
                # to(device, dtype, ...) / to(dtype, ...) / to(other, ...): nothing else after the first
                raise TypeError(f"to() received an invalid combination of arguments - got "
                                f"({', '.join(type(x).__name__ for x in args)})")
            elif isinstance(a, _C.dtype):
                dtype = a
            elif isinstance(a, (str, _C.device)):
                device = a
            elif isinstance(a, _C.TensorBase):
                dtype, device = a.dtype, a.device
            elif isinstance(a, numbers.Integral) and not isinstance(a, bool):
                # an int is a device index of the accelerator, as in PyTorch
                if not _C._cuda_is_available():
                    raise RuntimeError("Cannot access accelerator device when none is available.")
                device = _C.device("cuda", int(a))
            elif isinstance(a, numbers.Number):
                # PyTorch reads a float or bool as to(other=tensor(number)): its dtype (a float is float64)
                dtype = _C.bool if isinstance(a, bool) else _C.float64
            elif a is None:
                pass
            else:
                raise TypeError(f"to() received an invalid combination of arguments - got ({type(a).__name__})")
        if flags:
            non_blocking = flags[0]
        if len(flags) > 1:
            copy = flags[1]
        if device is not None:
            d = device if isinstance(device, _C.device) else _C.device(device)
            here = self.device
            if d.type != here.type or (d.index is not None and d.index != here.index):
                return _to_device(self, d, dtype, copy, non_blocking)
        r = _ops._to_dtype(self, dtype if dtype is not None else self.dtype, copy)
        return self if r._is_same(self) else r  # nothing to do: the same object, as in PyTorch

    def contiguous(self, memory_format=None):
        """The tensor itself if contiguous (in the memory format), else a contiguous copy."""
        if memory_format is not None and memory_format is not _contiguous_format:
            if self.is_contiguous(memory_format=memory_format):
                return self
            if memory_format is _preserve_format:
                raise RuntimeError("preserve memory format is unsupported by the contiguous operator")
            return self.clone(memory_format=memory_format)
        r = _C.TensorBase.contiguous(self)
        return self if r._is_same(self) else r

    def cpu(self, memory_format=None):
        """The tensor on the CPU (itself when it is there already)."""
        return self if self.device.type == "cpu" else self.to("cpu")

    # torch.polygamma(n, x) takes the order first; the method form is x.polygamma(n)
    def polygamma(self, n):
        """Elementwise n-th derivative of the digamma function."""
        return _C._ops.polygamma(n, self)

    def polygamma_(self, n):
        """Elementwise n-th derivative of the digamma function, in place."""
        # the op's graph saves its input: compute from a copy so writing self leaves that intact
        return self.copy_(_C._ops.polygamma(n, self.clone() if self.requires_grad else self))

    def cuda(self, device=None, non_blocking=False, memory_format=None):
        """Copy to a CUDA device (raises on a build without CUDA)."""
        if isinstance(device, (str, _C.device)) and _C.device(device).type != "cuda":
            raise RuntimeError("Invalid device, must be cuda device")
        return self.to("cuda" if device is None else device, non_blocking=non_blocking)

    def pin_memory(self, device=None):
        """A copy in page-locked host memory (self when it is pinned already), so that copies to the GPU
        can run asynchronously (non_blocking=True); raises without a GPU, as PyTorch."""
        if not self.requires_grad:
            return _C._pin_memory(self)
        from .autograd.function import Function

        class PinMemory(Function):
            @staticmethod
            def forward(ctx, x):
                return _C._pin_memory(x)

            @staticmethod
            def backward(ctx, grad):
                return grad

        return self if _C._is_pinned(self) else PinMemory.apply(self)

    def is_pinned(self, device=None):
        """Whether the tensor's memory is page-locked (from pin_memory())."""
        return _C._is_pinned(self)

    def get_device(self):
        """The device index: -1 for CPU tensors."""
        d = self.device
        return -1 if d.type == "cpu" else (d.index if d.index is not None else 0)

    def record_stream(self, stream):
        """Mark the tensor's memory as used on `stream` too: the caching allocator does not reuse it
        before the work queued on that stream up to the tensor's release has finished."""
        if not self.is_cuda:
            raise RuntimeError(f"record_stream: expected a CUDA tensor, got one on {self.device}")
        _C._cuda_record_stream(self, stream.cuda_stream, stream.device_index)

    def type(self, dtype=None, non_blocking=False, **kwargs):
        """The type name as a string ("ember.cuda.FloatTensor"), or a conversion to the given type: a dtype,
        a legacy type (ember.cuda.LongTensor) or its name, which also names the device type."""
        if dtype is None:
            return ("ember." + ("cuda." if self.device.type == "cuda" else "") + ("sparse." if self.is_sparse else "")
                    + _TYPE_NAMES[self.dtype])
        device = None
        if isinstance(dtype, str):
            parts = dtype.split(".")
            if parts[0] not in ("ember", "torch") or parts[-1] not in _TYPE_NAMES_INV or len(parts) > 3 or (
                    len(parts) == 3 and parts[1] != "cuda"):
                raise ValueError(f"invalid type: '{dtype}'")
            device, dtype = ("cuda" if len(parts) == 3 else "cpu"), _TYPE_NAMES_INV[parts[-1]]
        elif hasattr(dtype, "device_type") and not isinstance(dtype, _C.dtype):  # a legacy type
            device, dtype = dtype.device_type, dtype.dtype
        if device is None or device == self.device.type:
            return self.to(dtype, non_blocking=non_blocking)
        return self.to(device, dtype, non_blocking=non_blocking)

    def type_as(self, other):
        """Convert to another tensor's dtype."""
        return self.to(other.dtype)

    def float(self, memory_format=_preserve_format):
        """Convert to float32."""
        return self.to(_C.float32, memory_format=memory_format)

    def double(self, memory_format=_preserve_format):
        """Convert to float64."""
        return self.to(_C.float64, memory_format=memory_format)

    def half(self, memory_format=_preserve_format):
        """Convert to float16."""
        return self.to(_C.float16, memory_format=memory_format)

    def bfloat16(self, memory_format=_preserve_format):
        """Convert to bfloat16."""
        return self.to(_C.bfloat16, memory_format=memory_format)

    def cfloat(self, memory_format=_preserve_format):
        """Convert to complex64."""
        return self.to(_C.complex64, memory_format=memory_format)

    def cdouble(self, memory_format=_preserve_format):
        """Convert to complex128."""
        return self.to(_C.complex128, memory_format=memory_format)

    def long(self, memory_format=_preserve_format):
        """Convert to int64."""
        return self.to(_C.int64, memory_format=memory_format)

    def int(self, memory_format=_preserve_format):
        """Convert to int32."""
        return self.to(_C.int32, memory_format=memory_format)

    def short(self, memory_format=_preserve_format):
        """Convert to int16."""
        return self.to(_C.int16, memory_format=memory_format)

    def char(self, memory_format=_preserve_format):
        """Convert to int8."""
        return self.to(_C.int8, memory_format=memory_format)

    def byte(self, memory_format=_preserve_format):
        """Convert to uint8."""
        return self.to(_C.uint8, memory_format=memory_format)

    def bool(self, memory_format=_preserve_format):
        """Convert to bool."""
        return self.to(_C.bool, memory_format=memory_format)

    def where(self, condition, y):
        """Elements of self where condition holds, else of y."""
        # ops.yaml's where(Tensor condition, Tensor self, Tensor other) has no `self` first, so no
        # generated method: Tensor.where(condition, y) is where(condition, self, y).
        return _ops.where(condition, self, y)

    def new_tensor(self, data, dtype=None, device=None, requires_grad=False):
        """A new tensor from data with this tensor's dtype and device by default."""
        return _ops.tensor(data, dtype=dtype or self.dtype, device=self.device if device is None else device,
                           requires_grad=requires_grad)

    def nonzero(self, *, as_tuple=False):
        """Indices of the non-zero elements: an (n, ndim) int64 tensor, or a tuple of ndim index tensors."""
        return _nonzero(self, as_tuple=as_tuple)

    def unique(self, sorted=True, return_inverse=False, return_counts=False, dim=None):
        """Sorted unique elements, with optional inverse indices and counts."""
        return _unique(self, sorted, return_inverse, return_counts, dim)

    def unique_consecutive(self, return_inverse=False, return_counts=False, dim=None):
        """Collapse runs of equal consecutive elements, with optional inverse indices and counts."""
        return _unique_consecutive(self, return_inverse, return_counts, dim)

    @property
    def layout(self):
        """The memory layout: ember.strided, or ember.sparse_coo for a sparse tensor."""
        return _sparse_coo if self.is_sparse else _strided

    def to_sparse(self, sparse_dim=None, *, layout=None, blocksize=None, dense_dim=None):
        """The sparse COO form: entries where the values are nonzero (over the first sparse_dim dims;
        the rest stay dense in each entry's value)."""
        if layout is not None and layout is not _strided and layout is not _sparse_coo:
            raise NotImplementedError(f"to_sparse: layout {layout} is not supported by Ember (only ember.sparse_coo)")
        if blocksize is not None:
            raise NotImplementedError("to_sparse: blocksize applies to the block sparse layouts, which Ember lacks")
        if dense_dim is not None:
            if sparse_dim is not None and sparse_dim + dense_dim != self.dim():
                raise RuntimeError(f"to_sparse: sparse_dim ({sparse_dim}) + dense_dim ({dense_dim}) must equal "
                                   f"the number of dimensions ({self.dim()})")
            sparse_dim = self.dim() - dense_dim
        return _C._ops._to_sparse_coo(self, sparse_dim)

    def to_sparse_coo(self):
        """The sparse COO form of this tensor (every dimension sparse)."""
        return self.to_sparse()


_C._set_tensor_class(Tensor)
_tensor_str._register_plain_class(Tensor)

_TYPE_NAMES = {
    _C.float32: "FloatTensor", _C.float64: "DoubleTensor", _C.float16: "HalfTensor",
    _C.bfloat16: "BFloat16Tensor", _C.int64: "LongTensor", _C.int32: "IntTensor",
    _C.int16: "ShortTensor", _C.int8: "CharTensor", _C.uint8: "ByteTensor", _C.bool: "BoolTensor",
    _C.complex64: "ComplexFloatTensor", _C.complex128: "ComplexDoubleTensor",
}
_TYPE_NAMES_INV = {n: d for d, n in _TYPE_NAMES.items()}


def _np_dtypes():
    try:
        import numpy as np
    except ImportError:
        return {}
    return {
        _C.float32: np.float32, _C.float64: np.float64, _C.float16: np.float16, _C.int64: np.int64,
        _C.int32: np.int32, _C.int16: np.int16, _C.int8: np.int8, _C.uint8: np.uint8, _C.bool: np.bool_,
        _C.complex64: np.complex64, _C.complex128: np.complex128,
    }


class _LazyNp(dict):
    def __missing__(self, key):
        self.update(_np_dtypes())
        return dict.__getitem__(self, key)


_NP_DTYPES = _LazyNp()
