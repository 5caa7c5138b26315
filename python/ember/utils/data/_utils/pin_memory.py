"""pin_memory=True: each batch's tensors moved into page-locked host memory, so that
`batch.to("cuda", non_blocking=True)` can overlap the copy with compute. Done in the iterating
process, on whatever structure collate_fn built (tensors in mappings, namedtuples, sequences, or
objects with their own pin_memory())."""
import collections.abc

from .... import _C


def pin_memory(data):
    if isinstance(data, _C.TensorBase):
        return data.pin_memory()
    if isinstance(data, (str, bytes)):
        return data
    if isinstance(data, collections.abc.Mapping):
        pinned = {k: pin_memory(v) for k, v in data.items()}
        try:
            return type(data)(pinned)
        except TypeError:  # a mapping type that cannot be built from a dict
            return pinned
    if isinstance(data, tuple) and hasattr(data, "_fields"):  # namedtuple
        return type(data)(*(pin_memory(v) for v in data))
    if isinstance(data, tuple):
        return tuple(pin_memory(v) for v in data)
    if isinstance(data, collections.abc.Sequence):
        pinned = [pin_memory(v) for v in data]
        try:
            return type(data)(pinned)
        except TypeError:
            return pinned
    if hasattr(data, "pin_memory"):
        return data.pin_memory()
    return data
