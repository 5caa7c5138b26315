"""default_collate (batch samples into tensors) and default_convert (samples without batching)."""
import collections.abc
import copy
import re
import sys

from .... import _C
from ...._utils import as_tensor

__all__ = ["default_collate", "default_convert", "collate", "default_collate_fn_map"]

_np_str_obj_array_pattern = re.compile(r"[SaUO]")

default_collate_err_msg_format = ("default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; "
                                  "found {}")


def _is_numpy(x):
    return type(x).__module__ == "numpy"


def _is_ndarray(x):
    return _is_numpy(x) and type(x).__name__ in ("ndarray", "memmap")


def default_convert(data):
    """Convert NumPy arrays (and numbers inside containers) to tensors, keeping the structure."""
    if isinstance(data, _C.TensorBase):
        return data
    if _is_numpy(data) and type(data).__name__ not in ("str_", "string_", "bytes_"):
        if _is_ndarray(data) and _np_str_obj_array_pattern.search(data.dtype.str) is not None:
            return data
        return as_tensor(data)
    if isinstance(data, collections.abc.Mapping):
        try:
            if isinstance(data, collections.abc.MutableMapping):
                clone = copy.copy(data)
                clone.update({k: default_convert(data[k]) for k in data})
                return clone
            return type(data)({k: default_convert(data[k]) for k in data})
        except TypeError:
            return {k: default_convert(data[k]) for k in data}
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        try:
            if isinstance(data, collections.abc.MutableSequence):
                clone = copy.copy(data)
                for i, d in enumerate(data):
                    clone[i] = default_convert(d)
                return clone
            return type(data)([default_convert(d) for d in data])
        except TypeError:
            return [default_convert(d) for d in data]
    return data


def collate_tensor_fn(batch, *, collate_fn_map=None):
    elem = batch[0]
    from . import worker
    if (worker.get_worker_info() is not None and not elem.requires_grad
            and all(b.dtype == elem.dtype for b in batch)):
        # in a worker, stack straight into shared memory: sending the batch then copies nothing
        from ....multiprocessing import get_sharing_strategy
        out = _C._shm_empty(get_sharing_strategy(), elem.dtype, [len(batch), *elem.shape])
        return _C._ops.stack(list(batch), 0, out=out)
    return _C._ops.stack(list(batch), 0)


def collate_numpy_array_fn(batch, *, collate_fn_map=None):
    elem = batch[0]
    if _np_str_obj_array_pattern.search(elem.dtype.str) is not None:
        raise TypeError(default_collate_err_msg_format.format(elem.dtype))
    return collate([as_tensor(b) for b in batch], collate_fn_map=collate_fn_map)


def collate_numpy_scalar_fn(batch, *, collate_fn_map=None):
    import numpy as np
    return as_tensor(np.asarray(batch))


def collate_float_fn(batch, *, collate_fn_map=None):
    return _C._ops.tensor(list(batch), dtype=_C.float64)


def collate_int_fn(batch, *, collate_fn_map=None):
    return _C._ops.tensor(list(batch))


def collate_str_fn(batch, *, collate_fn_map=None):
    return batch


default_collate_fn_map = {_C.TensorBase: collate_tensor_fn}
default_collate_fn_map[float] = collate_float_fn
default_collate_fn_map[int] = collate_int_fn
default_collate_fn_map[str] = collate_str_fn
default_collate_fn_map[bytes] = collate_str_fn


def _add_numpy_entries():
    """NumPy handlers join default_collate_fn_map once NumPy is imported (a batch holding NumPy
    objects implies it is), keeping `import ember` free of the NumPy import; they come right
    after the tensor entry, as in PyTorch's map."""
    np = sys.modules.get("numpy")
    if np is None or np.ndarray in default_collate_fn_map:
        return
    items = list(default_collate_fn_map.items())
    default_collate_fn_map.clear()
    default_collate_fn_map[items[0][0]] = items[0][1]
    default_collate_fn_map[np.ndarray] = collate_numpy_array_fn
    default_collate_fn_map[(np.bool_, np.number, np.object_)] = collate_numpy_scalar_fn
    default_collate_fn_map.update(items[1:])


def collate(batch, *, collate_fn_map=None):
    """Collate a list of samples by the type of the first: a function of collate_fn_map for its
    type (or a base type), else recursively through mappings, namedtuples and sequences."""
    elem = batch[0]
    elem_type = type(elem)
    if collate_fn_map is default_collate_fn_map:
        _add_numpy_entries()
    if collate_fn_map is not None:
        if elem_type in collate_fn_map:
            return collate_fn_map[elem_type](batch, collate_fn_map=collate_fn_map)
        for t in collate_fn_map:
            if isinstance(elem, t):
                return collate_fn_map[t](batch, collate_fn_map=collate_fn_map)
    if isinstance(elem, collections.abc.Mapping):
        try:
            if isinstance(elem, collections.abc.MutableMapping):
                clone = copy.copy(elem)
                clone.update({k: collate([d[k] for d in batch], collate_fn_map=collate_fn_map) for k in elem})
                return clone
            return elem_type({k: collate([d[k] for d in batch], collate_fn_map=collate_fn_map) for k in elem})
        except TypeError:
            return {k: collate([d[k] for d in batch], collate_fn_map=collate_fn_map) for k in elem}
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):
        return elem_type(*(collate(samples, collate_fn_map=collate_fn_map) for samples in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        it = iter(batch)
        size = len(next(it))
        if not all(len(e) == size for e in it):
            raise RuntimeError("each element in list of batch should be of equal size")
        transposed = list(zip(*batch))
        if isinstance(elem, tuple):
            return [collate(samples, collate_fn_map=collate_fn_map) for samples in transposed]
        try:
            if isinstance(elem, collections.abc.MutableSequence):
                clone = copy.copy(elem)
                for i, samples in enumerate(transposed):
                    clone[i] = collate(samples, collate_fn_map=collate_fn_map)
                return clone
            return elem_type([collate(samples, collate_fn_map=collate_fn_map) for samples in transposed])
        except TypeError:
            return [collate(samples, collate_fn_map=collate_fn_map) for samples in transposed]
    raise TypeError(default_collate_err_msg_format.format(elem_type))


def default_collate(batch):
    """Stack a list of samples into a batch: tensors are stacked (new dim 0), NumPy arrays become
    tensors, Python floats a float64 tensor, ints an int64 tensor, strings stay a list; dicts,
    namedtuples, tuples and lists are collated field by field (tuples become lists)."""
    return collate(batch, collate_fn_map=default_collate_fn_map)
