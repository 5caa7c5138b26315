"""The restricted unpickler of ``ember.load(weights_only=True)`` and the allowlist it obeys.

It interprets pickle opcodes itself instead of subclassing pickle.Unpickler, so nothing outside the
allowlist is imported, called or built: torch's rebuild functions (mapped to Ember's, which check
every storage size, offset and shape), containers, numbers, strings, dtypes, and what the user adds
with ``add_safe_globals`` / ``safe_globals`` (exported by ``ember.serialization``, as in torch).
The rebuild functions and the torch-name mapping are shared with ``weights_only=False`` loading.
"""
import _compat_pickle
import collections
import contextlib
import pickle
import struct

from . import _C
from ._conj import _with_bits
from ._tensor import Size, Tensor
from .nn.parameter import Parameter
from .sparse import _from_parts

_MAX_DIMS = 64
_INT64_MAX = 2 ** 63 - 1

# torch's names of the storage classes and dtypes a checkpoint names (ember.save writes them too)
_STORAGE_NAMES = {
    _C.float32: "FloatStorage", _C.float64: "DoubleStorage", _C.float16: "HalfStorage",
    _C.bfloat16: "BFloat16Storage", _C.int64: "LongStorage", _C.int32: "IntStorage",
    _C.int16: "ShortStorage", _C.int8: "CharStorage", _C.uint8: "ByteStorage", _C.bool: "BoolStorage",
    _C.complex64: "ComplexFloatStorage", _C.complex128: "ComplexDoubleStorage",
}
_DTYPE_NAMES = {d: str(d).rsplit(".", 1)[-1] for d in _STORAGE_NAMES}  # float32, ...


# ------------------------------------------------------------------ safe globals
_user_globals = {}


def _global_name(obj):
    return f"{getattr(obj, '__module__', None)}.{getattr(obj, '__qualname__', getattr(obj, '__name__', obj))}"


def add_safe_globals(safe_globals):
    """Allow ``ember.load`` (weights_only) to build these classes/functions: objects, or (object, "module.name")."""
    for g in safe_globals:
        if isinstance(g, tuple):
            if len(g) != 2 or not isinstance(g[1], str):
                raise ValueError(f"expected (object, 'module.name'), got {g!r}")
            _user_globals[g[1]] = g[0]
        else:
            _user_globals[_global_name(g)] = g


def get_safe_globals():
    return list(_user_globals.values())


def clear_safe_globals():
    _user_globals.clear()


class safe_globals(contextlib.ContextDecorator):
    """Context manager: add_safe_globals for the duration of the block."""

    def __init__(self, safe_globals):
        self.safe_globals = safe_globals

    def __enter__(self):
        self._saved = dict(_user_globals)
        add_safe_globals(self.safe_globals)

    def __exit__(self, *exc):
        _user_globals.clear()
        _user_globals.update(self._saved)


# ------------------------------------------------------------------ loading: rebuild functions
class _StorageType:
    """torch.FloatStorage & co. in a checkpoint: only names a dtype."""

    def __init__(self, dtype):
        self.dtype = dtype

    def __repr__(self):
        return f"torch.{_STORAGE_NAMES[self.dtype]}"


class _LoadedStorage:
    __slots__ = ("data", "dtype", "numel")

    def __init__(self, data, dtype, numel):
        self.data, self.dtype, self.numel = data, dtype, numel


def _check_int(x, what):
    if type(x) is not int or not 0 <= x <= _INT64_MAX:
        raise pickle.UnpicklingError(f"invalid {what} {x!r}")
    return x


def _rebuild_tensor(storage, storage_offset, size, stride):
    if not isinstance(storage, _LoadedStorage):
        raise pickle.UnpicklingError(f"expected a storage, got {type(storage).__name__}")
    _check_int(storage_offset, "storage offset")
    if not isinstance(size, tuple) or not isinstance(stride, tuple) or len(size) != len(stride) \
            or len(size) > _MAX_DIMS:
        raise pickle.UnpicklingError(f"invalid tensor size {size!r} / stride {stride!r}")
    numel, extent = 1, 1
    for s, st in zip(size, stride):
        numel *= _check_int(s, "size")
        extent += (s - 1) * _check_int(st, "stride") if s else 0
    if numel > _INT64_MAX:
        raise pickle.UnpicklingError(f"tensor of size {list(size)} has too many elements")
    if numel and storage_offset + extent > storage.numel:
        raise pickle.UnpicklingError(
            f"tensor of size {list(size)}, stride {list(stride)} and offset {storage_offset} is out of bounds for "
            f"its storage of {storage.numel} elements")
    return storage.data.as_strided(size, stride, storage_offset if numel else 0)


def _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad=False, backward_hooks=None,
                       metadata=None):
    t = _rebuild_tensor(storage, storage_offset, size, stride)
    if metadata is not None and not isinstance(metadata, dict):
        raise pickle.UnpicklingError(f"invalid tensor metadata {type(metadata).__name__}")
    if metadata:  # torch's conjugate and negative bits
        t = _with_bits(t, metadata.get("conj"), metadata.get("neg"))
    if requires_grad:
        t.requires_grad_(bool(requires_grad))
    return t


def _rebuild_tensor_v3(storage, storage_offset, size, stride, requires_grad, backward_hooks, dtype, metadata=None):
    """torch's form for dtypes without a legacy storage class: an untyped storage plus the dtype."""
    if not isinstance(storage, _LoadedStorage) or not isinstance(dtype, _C.dtype):
        raise pickle.UnpicklingError("invalid _rebuild_tensor_v3 arguments")
    isz = _C._ops.empty(0, dtype=dtype).element_size()
    raw = storage.data.view(_C.uint8) if storage.data.dtype is not _C.uint8 else storage.data
    nbytes = raw.numel()
    if nbytes % isz:
        raise pickle.UnpicklingError(f"a storage of {nbytes} bytes cannot hold {dtype} elements")
    typed = _LoadedStorage(raw.view(dtype) if nbytes else _C._ops.empty(0, dtype=dtype), dtype, nbytes // isz)
    return _rebuild_tensor_v2(typed, storage_offset, size, stride, requires_grad, backward_hooks, metadata)


def _rebuild_parameter(data, requires_grad, backward_hooks=None):
    if not isinstance(data, _C.TensorBase):
        raise pickle.UnpicklingError(f"Parameter data must be a tensor, got {type(data).__name__}")
    return Parameter(data, bool(requires_grad))


def _set_state(obj, state):
    if state is None:
        return obj
    slots = None
    if isinstance(state, tuple) and len(state) == 2:
        state, slots = state
    for d in (state, slots):
        if d:
            if not isinstance(d, dict):
                raise pickle.UnpicklingError(f"invalid object state {type(d).__name__}")
            for k, v in d.items():
                setattr(obj, k, v)
    return obj


def _rebuild_parameter_with_state(data, requires_grad, backward_hooks, state):
    return _set_state(_rebuild_parameter(data, requires_grad, backward_hooks), state)


def _rebuild_from_type_v2(func, new_type, args, state):
    if func not in (_rebuild_tensor_v2, _rebuild_tensor, _rebuild_parameter) or not isinstance(args, tuple):
        raise pickle.UnpicklingError(f"unsupported tensor rebuild function {func!r}")
    ret = func(*args)
    if new_type is Parameter and not isinstance(ret, Parameter):
        ret = Parameter(ret, ret.requires_grad)
    elif new_type not in (Parameter, Tensor):
        raise pickle.UnpicklingError(f"unsupported tensor type {new_type!r}")
    return _set_state(ret, state)


def _get_layout(name):
    """torch.serialization._get_layout: the layout object torch pickles by name."""
    from ._utils import sparse_coo, strided
    layouts = {"torch.strided": strided, "torch.sparse_coo": sparse_coo}
    if name not in layouts:
        raise pickle.UnpicklingError(f"unsupported tensor layout {name!r} (Ember has strided and sparse_coo)")
    return layouts[name]


def _rebuild_sparse_tensor(layout, data):
    """torch._utils._rebuild_sparse_tensor: a sparse COO tensor from (indices, values, size[, coalesced]),
    checked (an index outside size raises instead of being read later)."""
    from ._utils import sparse_coo
    if layout is not sparse_coo or not isinstance(data, tuple) or len(data) not in (3, 4):
        raise pickle.UnpicklingError(f"unsupported sparse tensor layout {layout!r}")
    indices, values, size = data[:3]
    coalesced = data[3] if len(data) == 4 else None
    if not isinstance(indices, Tensor) or not isinstance(values, Tensor):
        raise pickle.UnpicklingError("a sparse tensor's indices and values must be tensors")
    return _from_parts(indices, values, size, coalesced)


def _safe_bytearray(*args):
    if args and not isinstance(args[0], (bytes, str)):  # bytearray(n) would allocate n bytes
        raise pickle.UnpicklingError("bytearray may only be built from bytes")
    return bytearray(*args)


def _safe_encode(obj, encoding="utf-8", errors="strict"):
    # protocol 2 writes bytes as _codecs.encode(str, "latin1"); other codecs are not needed
    if not isinstance(obj, str) or encoding not in ("latin1", "latin-1", "utf-8", "utf8", "ascii"):
        raise pickle.UnpicklingError("_codecs.encode may only encode str as latin1/utf-8/ascii")
    return obj.encode(encoding, errors)


def _torch_globals():
    """The globals a checkpoint may name, mapped to what builds them in Ember."""
    g = {
        "collections.OrderedDict": collections.OrderedDict, "collections.Counter": collections.Counter,
        "builtins.set": set, "builtins.frozenset": frozenset, "builtins.complex": complex,
        "builtins.bytearray": _safe_bytearray, "_codecs.encode": _safe_encode,
        "torch._utils._rebuild_tensor": _rebuild_tensor, "torch._utils._rebuild_tensor_v2": _rebuild_tensor_v2,
        "torch._utils._rebuild_tensor_v3": _rebuild_tensor_v3, "torch.storage.UntypedStorage": _StorageType(_C.uint8),
        "torch._utils._rebuild_parameter": _rebuild_parameter,
        "torch._utils._rebuild_parameter_with_state": _rebuild_parameter_with_state,
        "torch._tensor._rebuild_from_type_v2": _rebuild_from_type_v2,
        "torch._utils._rebuild_sparse_tensor": _rebuild_sparse_tensor, "torch.serialization._get_layout": _get_layout,
        "torch.nn.parameter.Parameter": Parameter, "torch.Tensor": Tensor, "torch.Size": Size,
        "torch.device": _C.device,
    }
    for d, name in _STORAGE_NAMES.items():
        g[f"torch.{name}"] = _StorageType(d)
        g[f"torch.{_DTYPE_NAMES[d]}"] = d
    return g


_GLOBALS = None


def _globals():
    global _GLOBALS
    if _GLOBALS is None:
        _GLOBALS = _torch_globals()
    return _GLOBALS


# ------------------------------------------------------------------ loading: the restricted unpickler
class _WeightsOnlyUnpickler:
    """Interprets pickle opcodes itself, so nothing outside the allowlist is imported, called or built,
    and the memo is a dict (a huge memo index costs nothing)."""

    def __init__(self, data, persistent_load, encoding="bytes"):
        self.data, self.pos, self.persistent_load, self.encoding = data, 0, persistent_load, encoding
        allowed = dict(_globals())
        allowed.update(_user_globals)
        self.allowed = allowed
        # torch.Tensor is allowed as a value (a rebuild's type), never called: Tensor(n) would allocate n elements
        self.callables = {id(v) for v in allowed.values() if v is not Tensor}

    def read(self, n):
        if n < 0 or self.pos + n > len(self.data):
            raise pickle.UnpicklingError("pickle data was truncated")
        b = self.data[self.pos:self.pos + n]
        self.pos += n
        return b

    def readline(self):
        end = self.data.find(b"\n", self.pos)
        if end < 0:
            raise pickle.UnpicklingError("pickle data was truncated")
        line = self.data[self.pos:end]
        self.pos = end + 1
        return line

    def _global(self, module, name):
        if (module, name) in _compat_pickle.NAME_MAPPING:  # Python 2 names, as protocol 2 writes them
            module, name = _compat_pickle.NAME_MAPPING[(module, name)]
        module = _compat_pickle.IMPORT_MAPPING.get(module, module)
        full = f"{module}.{name}"
        if full in self.allowed:
            return self.allowed[full]
        _check_torch_dtype(module, name)
        raise pickle.UnpicklingError(
            f"Unsupported global: GLOBAL {full} was not an allowed global by default. Please use "
            f"`ember.serialization.add_safe_globals([{name}])` or the `ember.serialization.safe_globals([{name}])` "
            "context manager to allowlist it if you trust it, or load with weights_only=False if you trust the file.")

    def _check_callable(self, f, what):
        if id(f) not in self.callables:
            raise pickle.UnpicklingError(f"Trying to {what} {f!r}, which is not an allowed global")

    def _pop_mark(self):
        items = self.stack
        self.stack = self.metastack.pop()
        return items

    def load(self):
        self.stack, self.metastack, memo = [], [], {}
        read, unpack = self.read, struct.unpack
        while True:
            op = read(1)[0]
            stack = self.stack
            if op == 0x80:  # PROTO
                read(1)
            elif op == 0x95:  # FRAME
                read(8)
            elif op == 0x2E:  # STOP
                if len(stack) != 1 or self.metastack:
                    raise pickle.UnpicklingError("malformed pickle: stack not empty at STOP")
                return stack[0]
            elif op == 0x28:  # MARK
                self.metastack.append(stack)
                self.stack = []
            elif op == 0x30:  # POP
                stack.pop() if stack else self._pop_mark()
            elif op == 0x31:  # POP_MARK
                self._pop_mark()
            elif op == 0x32:  # DUP
                stack.append(stack[-1])
            elif op == 0x4E:  # NONE
                stack.append(None)
            elif op == 0x88:
                stack.append(True)
            elif op == 0x89:
                stack.append(False)
            elif op == 0x4A:  # BININT
                stack.append(unpack("<i", read(4))[0])
            elif op == 0x4B:  # BININT1
                stack.append(read(1)[0])
            elif op == 0x4D:  # BININT2
                stack.append(unpack("<H", read(2))[0])
            elif op == 0x8A:  # LONG1
                stack.append(int.from_bytes(read(read(1)[0]), "little", signed=True))
            elif op == 0x8B:  # LONG4
                n = unpack("<i", read(4))[0]
                if n > 1024:
                    raise pickle.UnpicklingError("LONG4 integer too large")
                stack.append(int.from_bytes(read(n), "little", signed=True))
            elif op == 0x47:  # BINFLOAT
                stack.append(unpack(">d", read(8))[0])
            elif op in (0x58, 0x8C, 0x8D):  # BINUNICODE, SHORT_BINUNICODE, BINUNICODE8
                n = read(1)[0] if op == 0x8C else unpack("<I" if op == 0x58 else "<Q", read(4 if op == 0x58 else 8))[0]
                stack.append(str(read(n), "utf-8", "surrogatepass"))
            elif op in (0x42, 0x43, 0x8E, 0x96):  # BINBYTES, SHORT_BINBYTES, BINBYTES8, BYTEARRAY8
                n = read(1)[0] if op == 0x43 else unpack("<I" if op == 0x42 else "<Q", read(4 if op == 0x42 else 8))[0]
                b = read(n)
                stack.append(bytearray(b) if op == 0x96 else bytes(b))
            elif op in (0x55, 0x54):  # SHORT_BINSTRING, BINSTRING (Python 2 str)
                n = read(1)[0] if op == 0x55 else unpack("<i", read(4))[0]
                b = bytes(read(n))
                stack.append(b if self.encoding == "bytes" else b.decode(self.encoding, "strict"))
            elif op == 0x29:  # EMPTY_TUPLE
                stack.append(())
            elif op == 0x74:  # TUPLE
                self._pop_mark()
                self.stack.append(tuple(stack))
            elif op in (0x85, 0x86, 0x87):  # TUPLE1..3
                n = op - 0x84
                if len(stack) < n:
                    raise pickle.UnpicklingError("malformed pickle: stack underflow")
                stack[-n:] = [tuple(stack[-n:])]
            elif op == 0x5D:  # EMPTY_LIST
                stack.append([])
            elif op == 0x7D:  # EMPTY_DICT
                stack.append({})
            elif op == 0x8F:  # EMPTY_SET
                stack.append(set())
            elif op == 0x61:  # APPEND
                item = stack.pop()
                self._target(list, "append to").append(item)
            elif op == 0x65:  # APPENDS
                self._pop_mark()
                self._target(list, "append to").extend(stack)
            elif op == 0x73:  # SETITEM
                v, k = stack.pop(), stack.pop()
                self._target(dict, "set items of")[k] = v
            elif op == 0x75:  # SETITEMS
                self._pop_mark()
                if len(stack) % 2:
                    raise pickle.UnpicklingError("malformed pickle: odd number of items in SETITEMS")
                d = self._target(dict, "set items of")
                for i in range(0, len(stack), 2):
                    d[stack[i]] = stack[i + 1]
            elif op == 0x90:  # ADDITEMS
                self._pop_mark()
                self._target(set, "add items to").update(stack)
            elif op == 0x91:  # FROZENSET
                self._pop_mark()
                self.stack.append(frozenset(stack))
            elif op == 0x63:  # GLOBAL
                module = self.readline().decode("utf-8")
                stack.append(self._global(module, self.readline().decode("utf-8")))
            elif op == 0x93:  # STACK_GLOBAL
                name, module = stack.pop(), stack.pop()
                if not isinstance(name, str) or not isinstance(module, str):
                    raise pickle.UnpicklingError("STACK_GLOBAL requires str")
                stack.append(self._global(module, name))
            elif op == 0x52:  # REDUCE
                args = stack.pop()
                func = stack[-1]
                self._check_callable(func, "call")
                if not isinstance(args, tuple):
                    raise pickle.UnpicklingError("REDUCE arguments must be a tuple")
                stack[-1] = func(*args)
            elif op in (0x81, 0x92):  # NEWOBJ, NEWOBJ_EX
                kwargs = stack.pop() if op == 0x92 else {}
                args, cls = stack.pop(), stack.pop()
                self._check_callable(cls, "create an instance of")
                if not isinstance(cls, type) or not isinstance(args, tuple) or not isinstance(kwargs, dict):
                    raise pickle.UnpicklingError(f"cannot create an instance of {cls!r}")
                stack.append(Parameter(*args, **kwargs) if cls is Parameter else cls.__new__(cls, *args, **kwargs))
            elif op == 0x62:  # BUILD
                state = stack.pop()
                self._build(stack[-1], state)
            elif op == 0x51:  # BINPERSID
                stack.append(self.persistent_load(stack.pop()))
            elif op in (0x68, 0x6A):  # BINGET, LONG_BINGET
                i = read(1)[0] if op == 0x68 else unpack("<I", read(4))[0]
                if i not in memo:
                    raise pickle.UnpicklingError(f"memo value {i} not found")
                stack.append(memo[i])
            elif op in (0x71, 0x72):  # BINPUT, LONG_BINPUT
                i = read(1)[0] if op == 0x71 else unpack("<I", read(4))[0]
                memo[i] = stack[-1]
            elif op == 0x94:  # MEMOIZE
                memo[len(memo)] = stack[-1]
            else:
                raise pickle.UnpicklingError(f"unsupported pickle opcode {bytes([op])!r} at offset {self.pos - 1}")

    _TARGETS = {list: (list,), dict: (dict, collections.OrderedDict, collections.Counter), set: (set,)}

    def _target(self, kind, what):
        obj = self.stack[-1]
        if type(obj) not in self._TARGETS[kind]:
            raise pickle.UnpicklingError(f"cannot {what} a {type(obj).__name__}")
        return obj

    def _build(self, inst, state):
        if type(inst) is collections.OrderedDict:  # a state_dict's _metadata
            if not isinstance(state, dict):
                raise pickle.UnpicklingError("invalid OrderedDict state")
            inst.__dict__.update(state)
        elif isinstance(inst, (_C.TensorBase, Parameter)) or id(type(inst)) in self.callables:
            setstate = getattr(inst, "__setstate__", None)
            if setstate is not None and not isinstance(inst, _C.TensorBase):
                setstate(state)
            else:
                _set_state(inst, state)
        else:
            raise pickle.UnpicklingError(f"cannot build a {type(inst).__name__}, which is not an allowed global")


def _check_torch_dtype(module, name):
    """A torch dtype or storage class Ember does not have gets a clear error, not an allowlist hint."""
    if module == "torch" and (name.endswith("Storage") or name.startswith(
            ("complex", "float8", "float4", "uint", "int", "qint", "quint", "bits"))):
        have = ", ".join(_DTYPE_NAMES.values())
        raise pickle.UnpicklingError(f"the checkpoint uses torch.{name}, a dtype Ember does not have (it has {have})")
