"""ember.save / ember.load in PyTorch's zip checkpoint format, without torch.

A checkpoint is a zip archive (records stored uncompressed) under one top-level folder:
``data.pkl`` (a pickle whose tensors are ``torch._utils._rebuild_tensor_v2`` calls on persistent-id
storages), ``data/<key>`` (each storage's raw little-endian bytes, aligned to 64 bytes in the file so
that it can be memory-mapped), ``version``, ``byteorder`` and a few small bookkeeping records.

Loading is safe by default: a restricted unpickler builds only allowlisted types (as torch's
``weights_only=True``) and checks every storage size, offset and shape against the records before
touching memory. Anything malformed raises RuntimeError (container) or pickle.UnpicklingError
(pickle) naming the file.
"""
import collections
import contextlib
import copy
import io
import mmap as _mmap
import os
import pickle
import struct
import sys
import uuid
import zipfile
import zlib

import numpy as np

from . import _C
from . import _tensor
from ._conj import _stored, _with_bits
from ._tensor import Size
from ._utils import layout as _layout
from .sparse import _from_parts
from .autograd.grad_mode import no_grad
from .nn.parameter import Parameter
# the weights-only unpickler and its allowlist live in their own module; the allowlist API is
# ember.serialization's, as in torch
from ._weights_only_unpickler import (  # noqa: F401
    _DTYPE_NAMES, _STORAGE_NAMES, _LoadedStorage, _StorageType, _WeightsOnlyUnpickler, _check_int,
    _check_torch_dtype, _globals, _rebuild_from_type_v2, _rebuild_parameter, _rebuild_parameter_with_state,
    _rebuild_tensor, _rebuild_tensor_v2, _rebuild_tensor_v3, add_safe_globals, clear_safe_globals,
    get_safe_globals, safe_globals,
)

__all__ = ["save", "load", "add_safe_globals", "get_safe_globals", "clear_safe_globals", "safe_globals"]

DEFAULT_PROTOCOL = 2
_ALIGN = 64
_ZIP64_LIMIT = 0xFFFFFFFF  # sizes/offsets from here on need zip64 fields (a module constant so tests can force it)
_ZIP64_COUNT = 0xFFFF
# torch's spelling of a legacy (pre-zip) checkpoint: a pickled magic number comes first
_LEGACY_MAGIC = b"\x80\x02\x8a\x0al\xfc\x9cF\xf9 j\xa8P\x19"


# ------------------------------------------------------------------ saving
class _Global:
    """Pickles as GLOBAL module.name without importing the module (torch need not be installed)."""
    _cache = {}

    def __new__(cls, module, name):
        key = (module, name)
        if key not in cls._cache:
            obj = super().__new__(cls)
            obj.module, obj.name = module, name
            cls._cache[key] = obj
        return cls._cache[key]

    def __call__(self, *args):  # pickle's save_reduce insists on a callable
        raise TypeError(f"{self.module}.{self.name} is a pickle reference, not callable")


class _StorageRef:
    __slots__ = ("key", "dtype", "numel", "flat")

    def __init__(self, key, dtype, numel, flat):
        self.key, self.dtype, self.numel, self.flat = key, dtype, numel, flat


def _hooks():
    return collections.OrderedDict()


class _Pickler(pickle._Pickler):
    """The pure-Python pickler, so that torch's globals can be written by name."""
    dispatch = pickle._Pickler.dispatch.copy()

    def __init__(self, file, protocol):
        super().__init__(file, protocol, fix_imports=False)
        self.storages = {}  # (storage pointer, nbytes) or id -> _StorageRef

    def _save_global_ref(self, obj):
        self.write(pickle.GLOBAL + f"{obj.module}\n{obj.name}\n".encode("utf-8"))
        self.memoize(obj)

    dispatch[_Global] = _save_global_ref

    def _save_dtype(self, obj):
        self.save(_Global("torch", _DTYPE_NAMES[obj]))
        self.memoize(obj)

    dispatch[_C.dtype] = _save_dtype

    def persistent_id(self, obj):
        if isinstance(obj, _StorageRef):
            # the location torch records: where the storage lives ("cpu", "cuda:0"); load puts it back there
            return ("storage", _Global("torch", _STORAGE_NAMES[obj.dtype]), obj.key, str(obj.flat.device), obj.numel)
        return None

    def _storage(self, t):
        nbytes, isz = t._storage_nbytes(), t.element_size()
        key = (t._storage_ptr(), nbytes) if nbytes else id(t)
        ref = self.storages.get(key)
        if ref is None:
            numel = nbytes // isz
            flat = _stored(t.detach()).as_strided((numel,), (1,), 0)
            ref = self.storages[key] = _StorageRef(str(len(self.storages)), t.dtype, numel, flat)
        elif ref.dtype != t.dtype:
            raise RuntimeError("Cannot save multiple tensors or storages that view the same data as different types")
        return ref

    def reducer_override(self, obj):
        if isinstance(obj, _C.TensorBase) and obj.is_sparse:  # torch's form: layout, (indices, values, size, coalesced)
            return (_Global("torch._utils", "_rebuild_sparse_tensor"),
                    (obj.layout, (obj._indices(), obj._values(), Size(obj.shape), obj.is_coalesced())))
        if isinstance(obj, _layout):
            return (_Global("torch.serialization", "_get_layout"), ("torch." + obj.name,))
        if isinstance(obj, _C.TensorBase):
            if isinstance(obj, Parameter):
                return (_Global("torch._utils", "_rebuild_parameter"), (obj.detach(), obj.requires_grad, _hooks()))
            # torch's metadata argument carries the bits: {'conj': True}, {'neg': True}
            bits = {k: True for k, on in (("conj", obj.is_conj()), ("neg", obj.is_neg())) if on}
            return (_Global("torch._utils", "_rebuild_tensor_v2"),
                    (self._storage(obj), obj.storage_offset(), tuple(obj.shape), tuple(obj.stride()),
                     obj.requires_grad, _hooks()) + ((bits,) if bits else ()))
        if isinstance(obj, Size):
            return (_Global("torch", "Size"), (tuple(obj),))
        if isinstance(obj, _C.device):
            return (_Global("torch", "device"), (str(obj),))
        return NotImplemented


class _ZipWriter:
    """Writes stored (uncompressed) zip records, each record's data aligned to 64 bytes; zip64 as needed."""

    def __init__(self, f, prefix):
        self.f, self.prefix, self.pos, self.entries = f, prefix, 0, []

    def _write(self, b):
        self.f.write(b)
        self.pos += len(b)

    def write_record(self, name, data):
        data = memoryview(data).cast("B")
        name_b = f"{self.prefix}/{name}".encode("utf-8")
        size, crc, offset = len(data), zlib.crc32(data), self.pos
        big = size >= _ZIP64_LIMIT
        extra = struct.pack("<HHQQ", 1, 16, size, size) if big else b""
        # pad with an "FB" extra field so that the data starts on a 64-byte boundary
        pad = -(offset + 30 + len(name_b) + len(extra) + 4) % _ALIGN
        extra += struct.pack("<HH", 0x4246, pad) + b"Z" * pad
        small = 0xFFFFFFFF if big else size
        self._write(struct.pack("<IHHHHHIIIHH", 0x04034B50, 45 if big else 20, 0x800, 0, 0, 0x21, crc, small, small,
                                len(name_b), len(extra)) + name_b + extra)
        self._write(data)
        self.entries.append((name_b, crc, size, offset))

    def finish(self):
        cd_start = self.pos
        for name_b, crc, size, offset in self.entries:
            z64 = b""
            if size >= _ZIP64_LIMIT:
                z64 += struct.pack("<QQ", size, size)
            if offset >= _ZIP64_LIMIT:
                z64 += struct.pack("<Q", offset)
            extra = struct.pack("<HH", 1, len(z64)) + z64 if z64 else b""
            s32 = 0xFFFFFFFF if size >= _ZIP64_LIMIT else size
            o32 = 0xFFFFFFFF if offset >= _ZIP64_LIMIT else offset
            ver = 45 if z64 else 20
            self._write(struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, ver, ver, 0x800, 0, 0, 0x21, crc, s32, s32,
                                    len(name_b), len(extra), 0, 0, 0, 0, o32) + name_b + extra)
        cd_size, n = self.pos - cd_start, len(self.entries)
        if n >= _ZIP64_COUNT or cd_size >= _ZIP64_LIMIT or cd_start >= _ZIP64_LIMIT:
            eocd64 = self.pos
            self._write(struct.pack("<IQHHIIQQQQ", 0x06064B50, 44, 45, 45, 0, 0, n, n, cd_size, cd_start))
            self._write(struct.pack("<IIQI", 0x07064B50, 0, eocd64, 1))
        self._write(struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, min(n, 0xFFFF), min(n, 0xFFFF),
                                min(cd_size, 0xFFFFFFFF), min(cd_start, 0xFFFFFFFF), 0))


def _storage_bytes(flat):
    """A NumPy uint8 view (no copy when contiguous and on the CPU) of a flat tensor's bytes."""
    flat = flat.contiguous().cpu()
    if flat.dtype is not _C.uint8:
        flat = flat.view(_C.uint8) if flat.numel() else _C._ops.empty(0, dtype=_C.uint8)
    return flat.numpy()


def _write_checkpoint(obj, f, prefix, protocol):
    buf = io.BytesIO()
    p = _Pickler(buf, protocol)
    p.dump(obj)
    w = _ZipWriter(f, prefix)
    w.write_record("data.pkl", buf.getbuffer())
    w.write_record(".format_version", b"1")
    w.write_record(".storage_alignment", str(_ALIGN).encode())
    w.write_record("byteorder", sys.byteorder.encode())
    for ref in p.storages.values():
        w.write_record(f"data/{ref.key}", _storage_bytes(ref.flat))
    w.write_record("version", b"3\n")
    w.write_record(".data/serialization_id", str(uuid.uuid4().int).zfill(40).encode())
    w.finish()


def _archive_prefix(path):
    stem = os.path.splitext(os.path.basename(path))[0]
    return stem if stem and stem.isprintable() and "/" not in stem else "archive"


def save(obj, f, pickle_module=pickle, pickle_protocol=DEFAULT_PROTOCOL, _use_new_zipfile_serialization=True,
         _disable_byteorder_record=False):
    """Save ``obj`` (nested containers of tensors, numbers, strings, ...) to a path or a binary file object.

    A path is written atomically: to a temporary file in the same folder, then renamed over the
    target, so a crash mid-save leaves any previous checkpoint intact."""
    if not _use_new_zipfile_serialization:
        raise RuntimeError("ember.save writes only the zip checkpoint format (_use_new_zipfile_serialization=True)")
    if pickle_module is not pickle:
        raise RuntimeError("ember.save supports only the standard pickle module")
    if not isinstance(pickle_protocol, int) or not 2 <= pickle_protocol <= pickle.HIGHEST_PROTOCOL:
        raise ValueError(f"pickle_protocol must be an int between 2 and {pickle.HIGHEST_PROTOCOL}, "
                         f"got {pickle_protocol!r}")
    if isinstance(f, (str, bytes, os.PathLike)):
        _save_atomic(obj, os.fsdecode(f), pickle_protocol)
    elif hasattr(f, "write"):
        _write_checkpoint(obj, f, "archive", pickle_protocol)
        if hasattr(f, "flush"):
            f.flush()
    else:
        raise AttributeError(f"expected a file path or a writable binary file object, got {type(f).__name__}")


def _save_atomic(obj, path, protocol):
    prefix = _archive_prefix(path)
    if os.path.islink(path):  # replace the file the link points to, not the link
        path = os.path.realpath(path)
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise RuntimeError(f"Parent directory {folder} does not exist.")
    tmp = os.path.join(folder, f".{os.path.basename(path)}.{uuid.uuid4().hex}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)  # the umask applies, as for open()
    try:
        with contextlib.suppress(FileNotFoundError):  # an overwritten checkpoint keeps its permissions
            os.chmod(fd, os.stat(path).st_mode & 0o7777)
        with os.fdopen(fd, "wb") as fh:
            _write_checkpoint(obj, fh, prefix, protocol)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.remove(tmp)
        raise
    with contextlib.suppress(OSError):  # make the rename itself durable
        dfd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)


class _FullUnpickler(pickle.Unpickler):
    """weights_only=False: any global may be imported; torch's names map to Ember's."""

    def __init__(self, file, persistent_load, **kwargs):
        super().__init__(file, **kwargs)
        self._pl = persistent_load

    def persistent_load(self, pid):
        return self._pl(pid)

    def find_class(self, module, name):
        g = _globals().get(f"{module}.{name}")
        if g is None:
            _check_torch_dtype(module, name)
        return g if g is not None else super().find_class(module, name)


# ------------------------------------------------------------------ loading: the archive
class _Archive:
    """Central directory of a checkpoint zip; records are read by offset with every bound checked."""

    def __init__(self, f, name, size):
        self.f, self.name, self.size = f, name, size
        try:
            z = zipfile.ZipFile(f)
            infos = z.infolist()
        except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, ValueError, struct.error, OverflowError, EOFError,
                UnicodeDecodeError, KeyError, NotImplementedError, IndexError, TypeError) as e:
            raise RuntimeError(f"{name}: not a valid checkpoint zip archive ({e})") from None
        pkl = [i for i in infos if i.filename.endswith("/data.pkl") and i.filename.count("/") == 1]
        if not pkl:
            raise RuntimeError(f"{name}: not a checkpoint: the archive has no data.pkl record")
        self.prefix = pkl[0].filename[:-len("data.pkl")]
        self.records = {i.filename[len(self.prefix):]: i for i in infos if i.filename.startswith(self.prefix)}

    def locate(self, record):
        """(data offset, size, crc) of a record, checked against the file."""
        info = self.records.get(record)
        if info is None:
            raise RuntimeError(f"{self.name}: record {record!r} is missing from the archive")
        if info.compress_type != zipfile.ZIP_STORED or info.compress_size != info.file_size:
            raise RuntimeError(f"{self.name}: record {record!r} is compressed; checkpoints store records uncompressed")
        off = info.header_offset
        if not 0 <= off <= self.size - 30:
            raise RuntimeError(f"{self.name}: record {record!r} lies outside the file")
        self.f.seek(off)
        h = self.f.read(30)
        if len(h) != 30 or h[:4] != b"PK\x03\x04":
            raise RuntimeError(f"{self.name}: bad local header for record {record!r}")
        nlen, elen = struct.unpack("<HH", h[26:30])
        start = off + 30 + nlen + elen
        if start + info.file_size > self.size:
            raise RuntimeError(f"{self.name}: record {record!r} of {info.file_size} bytes runs past the end of "
                               "the file")
        return start, info.file_size, info.CRC

    def read(self, record, out=None):
        start, size, crc = self.locate(record)
        self.f.seek(start)
        if out is None:
            data = self.f.read(size)
            got = len(data)
        else:
            data = out
            got = self.f.readinto(out) if size else 0
        if got != size:
            raise RuntimeError(f"{self.name}: record {record!r} is truncated")
        if zlib.crc32(data) != crc:
            raise RuntimeError(f"{self.name}: checksum mismatch in record {record!r} (the file is corrupt)")
        return data


class _LocationError(RuntimeError):
    """A storage's device is not one Ember has (as torch's error on a CPU-only build)."""


def _resolve_location(map_location, location, storage):
    """The storage after map_location: on the CPU, or on a GPU when one is there."""
    if callable(map_location) and not isinstance(map_location, (str, _C.device)):
        result = map_location(storage, location)
        if result is not None:
            if not isinstance(result, _C.TensorBase):
                raise RuntimeError(f"map_location returned {type(result).__name__}, expected a storage tensor")
            return result
        map_location = None
    if isinstance(map_location, dict):
        map_location = map_location.get(location, location)
    target = location if map_location is None else str(map_location)
    if target.split(":")[0] == "cuda" and _C._cuda_is_available():
        return storage.to(target)
    if target.split(":")[0] != "cpu":
        if map_location is None:
            raise _LocationError(
                f"Attempting to deserialize object on a {target} device but Ember was built without support for it. "
                "Please use ember.load with map_location='cpu' to map your storages to the CPU.")
        raise _LocationError(f"Ember was built without {target} support; use map_location='cpu'")
    return storage


def _load_archive(arch, fname, map_location, weights_only, mm, pickle_module, pickle_load_args):
    loaded = {}

    def persistent_load(pid):
        if not (isinstance(pid, tuple) and len(pid) == 5 and pid[0] in ("storage", b"storage")):
            raise pickle.UnpicklingError(f"unsupported persistent id {pid!r}")
        _, stype, key, location, numel = pid
        if not isinstance(stype, _StorageType) or not isinstance(key, str) or not isinstance(location, str):
            raise pickle.UnpicklingError(f"invalid storage reference {pid!r}")
        _check_int(numel, "storage size")
        dtype, isz = stype.dtype, _C._ops.empty(0, dtype=stype.dtype).element_size()
        if key not in loaded:
            record = f"data/{key}"
            start, size, _ = arch.locate(record)
            if size != numel * isz:
                raise pickle.UnpicklingError(f"storage {key} holds {size} bytes, but the pickle asks for {numel} "
                                             f"elements of {dtype}")
            if mm is not None and start % _ALIGN == 0:
                buf = np.frombuffer(mm, dtype=np.uint8, count=size, offset=start)
            else:
                buf = np.empty(size, dtype=np.uint8)
                arch.read(record, buf)
            raw = _C.from_numpy(buf)
            loaded[key] = _resolve_location(map_location, location, raw)
        raw = loaded[key]
        nbytes = raw.numel() * raw.element_size()
        if nbytes != numel * isz:
            raise pickle.UnpicklingError(f"storage {key} is used with {numel} elements of {dtype} but holds "
                                         f"{nbytes} bytes")
        raw = raw.view(_C.uint8) if raw.dtype is not _C.uint8 else raw
        return _LoadedStorage(raw.view(dtype) if numel else _C._ops.empty(0, dtype=dtype), dtype, numel)

    if "byteorder" in arch.records:
        order = arch.read("byteorder")
        if order != sys.byteorder.encode():
            raise RuntimeError(f"{fname}: the checkpoint's byte order is {order[:16]!r}; ember.load reads only "
                               f"{sys.byteorder}-endian checkpoints")
    data = arch.read("data.pkl")
    try:
        if weights_only:
            return _WeightsOnlyUnpickler(data, persistent_load, pickle_load_args.get("encoding", "bytes")).load()
        return _FullUnpickler(io.BytesIO(data), persistent_load, **pickle_load_args).load()
    except pickle.UnpicklingError as e:
        raise pickle.UnpicklingError(f"Weights only load of {fname} failed: {e}" if weights_only
                                     else f"{fname}: {e}") from None
    except RuntimeError as e:
        if isinstance(e, _LocationError):
            raise _LocationError(f"{fname}: {e}") from None
        if str(e).startswith(fname):  # already a clear message about the archive
            raise
        raise pickle.UnpicklingError(f"{fname}: {e}") from None
    except (IndexError, KeyError, TypeError, ValueError, AttributeError, struct.error, UnicodeDecodeError,
            OverflowError, RecursionError, EOFError, ImportError) as e:
        if not weights_only and not isinstance(e, (IndexError, struct.error)):
            raise
        raise pickle.UnpicklingError(f"{fname}: malformed checkpoint pickle ({type(e).__name__}: {e})") from None


def load(f, map_location=None, pickle_module=None, *, weights_only=None, mmap=None, **pickle_load_args):
    """Load what ``ember.save`` or ``torch.save`` wrote, from a path or a binary file object.

    weights_only (default True) builds only tensors, containers, numbers, strings and allowlisted
    globals; mmap=True maps the storages from the file instead of reading them."""
    if weights_only is None:
        weights_only = pickle_module is None
    if weights_only and pickle_module is not None:
        raise RuntimeError("Can not safely load weights when explicit pickle_module is specified")
    if weights_only and set(pickle_load_args) - {"encoding"}:
        raise RuntimeError(f"unsupported arguments for a weights_only load: {sorted(pickle_load_args)}")
    if pickle_module is not None and pickle_module is not pickle:
        raise RuntimeError("ember.load supports only the standard pickle module")
    opened = isinstance(f, (str, bytes, os.PathLike))
    fname = os.fsdecode(f) if opened else getattr(f, "name", "<file object>")
    fh = open(fname, "rb") if opened else f
    try:
        if not opened and not (hasattr(fh, "seekable") and fh.seekable()):
            fh = io.BytesIO(fh.read())
        start = fh.tell()
        if start:  # an archive further into a file object: view it from where it starts
            fh = io.BytesIO(fh.read())
        head = fh.read(len(_LEGACY_MAGIC))
        fh.seek(0, os.SEEK_END)
        size = fh.tell()
        fh.seek(0)
        if head[:4] != b"PK\x03\x04":
            if head == _LEGACY_MAGIC:
                raise RuntimeError(f"{fname}: this is a legacy (pre-1.6, non-zip) torch.save checkpoint, which "
                                   "ember.load does not read; re-save it with torch.save in the default zip format")
            raise pickle.UnpicklingError(f"{fname}: not a checkpoint (invalid load key {head[:1]!r}); "
                                         "ember.load reads the zip format of ember.save/torch.save")
        mm = None
        if mmap:
            if not hasattr(fh, "fileno"):
                raise ValueError("mmap=True requires a file path or a real file object")
            try:
                fileno = fh.fileno()
            except (OSError, io.UnsupportedOperation):
                raise ValueError("mmap=True requires a file path or a real file object") from None
            mm = _mmap.mmap(fileno, 0, access=_mmap.ACCESS_COPY)  # private: writes to tensors stay in memory
        arch = _Archive(fh, fname, size)
        return _load_archive(arch, fname, map_location, weights_only, mm, pickle_module, pickle_load_args)
    finally:
        if opened:
            fh.close()


# ------------------------------------------------------------------ plain pickle / copy of a tensor
def _tensor_reduce(t):
    """Tensor.__reduce_ex__: the bytes of the storage span the tensor covers, its layout and attributes."""
    if t.is_sparse:
        return (_from_parts, (t._indices(), t._values(), tuple(t.shape), t.is_coalesced()), t.__dict__ or None)
    size, stride = tuple(t.shape), tuple(t.stride())
    extent = 1 + sum((s - 1) * st for s, st in zip(size, stride)) if t.numel() else 0
    # the stored bytes travel, and the conjugate/negative bits beside them
    span = _stored(t.detach()).as_strided((extent,), (1,), t.storage_offset())
    data = _storage_bytes(span).tobytes()
    args = (data, t.dtype, size, stride, t.requires_grad) + ((t.is_conj(), t.is_neg()) if t.is_conj() or t.is_neg() else ())
    return (_rebuild_from_bytes, args, t.__dict__ or None)


def _rebuild_from_bytes(data, dtype, size, stride, requires_grad, conj=False, neg=False):
    raw = _C.from_numpy(np.frombuffer(data, dtype=np.uint8).copy())
    flat = raw.view(dtype) if len(data) else _C._ops.empty(0, dtype=dtype)
    t = _with_bits(flat.as_strided(size, stride, 0), conj, neg)
    return t.requires_grad_(requires_grad) if requires_grad else t


def _deepcopy_tensor(t, memo):
    """copy.deepcopy of a leaf tensor, as torch: tensors copied together keep sharing storage; grad and
    attributes are copied too."""
    if not t.is_leaf:
        raise RuntimeError("Only Tensors created explicitly by the user (graph leaves) support the deepcopy "
                           "protocol at the moment.")
    if t.is_sparse:  # a sparse COO tensor never requires grad: its indices and values say it all
        r = _from_parts(copy.deepcopy(t._indices(), memo), copy.deepcopy(t._values(), memo), tuple(t.shape),
                        t.is_coalesced())
        for k, v in t.__dict__.items():
            setattr(r, k, copy.deepcopy(v, memo))
        return r
    # tensors of one storage share it in the copy; a meta storage has no address: its identity decides
    key = ("ember.storage", _C._shm_storage_key(t) if t.is_meta else t._storage_ptr(), t._storage_nbytes())
    with no_grad():
        flat = memo.get(key) if t._storage_nbytes() else None
        if flat is None or flat.dtype != t.dtype:
            flat = t.detach().as_strided((t._storage_nbytes() // t.element_size(),), (1,), 0).clone()
            if t._storage_nbytes():
                memo[key] = flat
        r = flat.as_strided(tuple(t.shape), t.stride(), t.storage_offset() if t.numel() else 0)
    if t.requires_grad:
        r.requires_grad_(True)
        if t.grad is not None:
            r.grad = copy.deepcopy(t.grad, memo)
    for k, v in t.__dict__.items():
        setattr(r, k, copy.deepcopy(v, memo))
    return r


# Tensor's pickling and deep copy are these functions: installed from here because the Tensor layer
# does not import the layers above it
_tensor._install_layer_hook("reduce_ex", _tensor_reduce)
_tensor._install_layer_hook("deepcopy", _deepcopy_tensor)
