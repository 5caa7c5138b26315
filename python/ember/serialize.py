"""Archives written by Ember's C++ API (torch::save / serialize::OutputArchive; the format is
documented in csrc/ember/serialize/archive.h), read and written from Python.

An archive is a safetensors file. Tensors are stored under dotted keys (a module's state_dict names,
"state.0.exp_avg" for an optimizer); scalars live in the "__metadata__" strings as "<tag>:<text>"
(f: float, i: int, b: bool, s: str), next to "__format__": "ember.archive" and "__version__": "1".

    state = ember.serialize.load_archive("model.pt")   # {"fc.weight": tensor, ...}
    model.load_state_dict(state)
    ember.serialize.save_archive({"w": t, "lr": 0.1}, "from_python.pt")
"""
import os

from . import _C
from .safetensors import SafetensorError, safe_open, save_file

__all__ = ["load_archive", "save_archive"]

_FORMAT, _VERSION = "ember.archive", "1"
_RESERVED = ("__format__", "__version__", "__buffers__", "__metadata__")


def _parse_scalar(key, text):
    tag, sep, body = text.partition(":")
    try:
        if sep and tag == "f":
            return float(body)
        if sep and tag == "i":
            return int(body)
        if sep and tag == "b" and body in ("true", "false"):
            return body == "true"
        if sep and tag == "s":
            return body
    except ValueError:
        pass
    raise RuntimeError(f"corrupt archive: value {key!r} is not a tagged scalar: {text!r}")


def load_archive(path):
    """Every entry of an archive as a flat dict {dotted key: Tensor, float, int, bool or str}, sorted
    by key. A plain safetensors file loads too (tensors only)."""
    path = os.fspath(path)
    try:
        with safe_open(path, framework="pt") as f:
            metadata = f.metadata() or {}
            out = {k: f.get_tensor(k) for k in f.keys()}
    except SafetensorError as e:
        raise RuntimeError(f"{path}: not a readable archive: {e}") from e
    fmt = metadata.get("__format__")
    if fmt is not None:
        if fmt != _FORMAT:
            raise RuntimeError(f"{path}: unknown archive format {fmt!r}")
        if metadata.get("__version__") != _VERSION:
            raise RuntimeError(f"{path}: unsupported archive version {metadata.get('__version__')!r}")
        for k, v in metadata.items():
            if k not in _RESERVED:
                out[k] = _parse_scalar(k, v)
    return dict(sorted(out.items()))


def _format_scalar(key, value):
    if isinstance(value, bool):
        return "b:true" if value else "b:false"
    if isinstance(value, int):
        return f"i:{value}"
    if isinstance(value, float):
        return f"f:{value!r}"
    if isinstance(value, str):
        return f"s:{value}"
    raise TypeError(f"archive value {key!r} must be a Tensor, float, int, bool or str, got {type(value).__name__}")


def save_archive(entries, path):
    """Write a flat dict {dotted key: Tensor or scalar} as an archive the C++ InputArchive reads
    (atomically: a temporary file renamed over the target)."""
    tensors, metadata = {}, {"__format__": _FORMAT, "__version__": _VERSION}
    for key, value in entries.items():
        if not isinstance(key, str) or not key or "\n" in key or key in _RESERVED:
            raise ValueError(f"invalid archive key {key!r}")
        if isinstance(value, _C.TensorBase):
            tensors[key] = value.detach()
        else:
            metadata[key] = _format_scalar(key, value)
    save_file(tensors, path, metadata)
