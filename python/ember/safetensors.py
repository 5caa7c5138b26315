"""safetensors files: an 8-byte little-endian header length, a JSON header mapping each name to
{dtype, shape, data_offsets} (plus an optional "__metadata__" of strings), then the raw
little-endian tensor bytes. Loading validates the header against the file before touching data."""
import json
import mmap
import os

import numpy as np

from . import _C

_DTYPES = {
    "F64": (_C.float64, np.float64), "F32": (_C.float32, np.float32), "F16": (_C.float16, np.float16),
    "BF16": (_C.bfloat16, np.int16), "I64": (_C.int64, np.int64), "I32": (_C.int32, np.int32),
    "I16": (_C.int16, np.int16), "I8": (_C.int8, np.int8), "U8": (_C.uint8, np.uint8), "BOOL": (_C.bool, np.bool_),
    "C64": (_C.complex64, np.complex64),
}
_NAMES = {d: name for name, (d, _) in _DTYPES.items()}
_MAX_HEADER = 100 * 1024 * 1024


class SafetensorError(ValueError):
    pass


def _tensor_bytes(t):
    t = t.detach().contiguous() if hasattr(t, "detach") else t.contiguous()
    t = t.resolve_conj().resolve_neg()  # the file holds values (it has no conjugate or negative bit)
    if t.dtype is _C.bfloat16:
        return t.view(_C.int16).numpy().tobytes()
    return t.numpy().tobytes()


def save(tensors, metadata=None):
    """Serialize a dict of tensors to bytes."""
    if metadata is not None and not all(isinstance(k, str) and isinstance(v, str) for k, v in metadata.items()):
        raise ValueError("metadata must be a dict of str to str")
    header, chunks, offset = {}, [], 0
    for name in sorted(tensors):  # deterministic order
        t = tensors[name]
        if not isinstance(name, str):
            raise ValueError(f"tensor names must be str, got {type(name).__name__}")
        if not isinstance(t, _C.TensorBase):
            raise ValueError(f"Key `{name}` is invalid, expected ember.Tensor but received {type(t).__name__}")
        if t.dtype not in _NAMES:  # the format has no complex128
            raise ValueError(f"Key `{name}`: safetensors has no dtype for {t.dtype}")
        data = _tensor_bytes(t)
        header[name] = {"dtype": _NAMES[t.dtype], "shape": list(t.shape), "data_offsets": [offset, offset + len(data)]}
        chunks.append(data)
        offset += len(data)
    if metadata:
        header["__metadata__"] = dict(metadata)
    h = json.dumps(header, separators=(",", ":")).encode("utf-8")
    h += b" " * (-len(h) % 8)  # align the data to 8 bytes
    return len(h).to_bytes(8, "little") + h + b"".join(chunks)


def save_file(tensors, filename, metadata=None):
    """Write atomically: a temporary file in the same folder, then rename over the target."""
    data = save(tensors, metadata)
    filename = os.fspath(filename)
    tmp = f"{filename}.tmp.{os.getpid()}"
    try:
        with open(tmp, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, filename)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def _no_duplicates(pairs):
    d = dict(pairs)
    if len(d) != len(pairs):
        raise ValueError("a name appears twice in the header")
    return d


def _parse_header(buf, what):
    if len(buf) < 8:
        raise SafetensorError(f"{what}: file too small to be a safetensors file")
    n = int.from_bytes(buf[:8], "little")
    if n > _MAX_HEADER or 8 + n > len(buf):
        raise SafetensorError(f"{what}: invalid header length {n}")
    raw = bytes(buf[8:8 + n])
    if not raw.startswith(b"{"):
        raise SafetensorError(f"{what}: the header must start with a JSON object")
    try:
        header = json.loads(raw.decode("utf-8"), object_pairs_hook=_no_duplicates)
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as e:
        raise SafetensorError(f"{what}: invalid JSON header ({e})") from None
    except ValueError as e:
        raise SafetensorError(f"{what}: {e}") from None
    if not isinstance(header, dict):
        raise SafetensorError(f"{what}: header is not a JSON object")
    metadata = header.pop("__metadata__", None)
    if metadata is not None and not (isinstance(metadata, dict) and
                                     all(isinstance(v, str) for v in metadata.values())):
        raise SafetensorError(f"{what}: __metadata__ must be an object of strings")
    data_len = len(buf) - 8 - n
    spans = []
    for name, info in header.items():
        try:
            dtype, shape, (begin, end) = info["dtype"], info["shape"], info["data_offsets"]
        except (KeyError, TypeError, ValueError):
            raise SafetensorError(f"{what}: malformed entry for tensor {name!r}") from None
        if dtype not in _DTYPES:
            raise SafetensorError(f"{what}: unsupported dtype {dtype!r} for tensor {name!r}")
        if not (isinstance(shape, list) and all(type(s) is int and s >= 0 for s in shape)):
            raise SafetensorError(f"{what}: invalid shape {shape!r} for tensor {name!r}")
        if not (type(begin) is int and type(end) is int and 0 <= begin <= end <= data_len):
            raise SafetensorError(f"{what}: data offsets {[begin, end]} of {name!r} are outside the file")
        count = 1
        for s in shape:
            count *= s
        if count * np.dtype(_DTYPES[dtype][1]).itemsize != end - begin:
            raise SafetensorError(f"{what}: tensor {name!r} of shape {shape} and dtype {dtype} does not match its "
                                  f"{end - begin} bytes")
        spans.append((begin, end, name))
    # the spec: data regions may not overlap and must cover the buffer without holes (no polyglot files)
    spans.sort()
    pos = 0
    for b, e, name in spans:
        if b == e:
            continue
        if b < pos:
            raise SafetensorError(f"{what}: tensor {name!r} overlaps another tensor")
        if b > pos:
            raise SafetensorError(f"{what}: the data buffer has a hole before tensor {name!r}")
        pos = e
    if pos != data_len:
        raise SafetensorError(f"{what}: the data buffer has {data_len - pos} bytes no tensor uses")
    return header, metadata, 8 + n


def _make(buf, start, info):
    dtype, np_dtype = _DTYPES[info["dtype"]]
    b, e = info["data_offsets"]
    arr = np.frombuffer(buf, dtype=np_dtype, count=(e - b) // np.dtype(np_dtype).itemsize, offset=start + b)
    t = _C.from_numpy(arr.reshape(info["shape"]).copy())
    return t.view(dtype) if dtype is _C.bfloat16 else t


def load(data):
    """Deserialize bytes produced by save()."""
    header, _, start = _parse_header(memoryview(data), "safetensors bytes")
    return {name: _make(data, start, info) for name, info in header.items()}


def load_file(filename, device="cpu"):
    with safe_open(filename, framework="pt", device=device) as f:
        return {k: f.get_tensor(k) for k in f.keys()}


class safe_open:
    """Lazy access through mmap: only the tensors asked for are read."""

    def __init__(self, filename, framework="pt", device="cpu"):
        if str(device) != "cpu":
            raise RuntimeError("Ember was built without CUDA support")
        self.filename = os.fspath(filename)
        self._file = open(self.filename, "rb")
        size = os.fstat(self._file.fileno()).st_size
        self._mm = mmap.mmap(self._file.fileno(), 0, access=mmap.ACCESS_READ) if size else b""
        self._header, self._metadata, self._start = _parse_header(memoryview(self._mm), self.filename)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        if hasattr(self._mm, "close"):
            self._mm.close()
        self._file.close()

    def keys(self):
        return list(self._header.keys())

    def metadata(self):
        return self._metadata

    def get_tensor(self, name):
        if name not in self._header:
            raise KeyError(f"tensor {name!r} not found in {self.filename}")
        return _make(self._mm, self._start, self._header[name])
