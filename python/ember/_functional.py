"""Top-level functions whose Python signatures differ from their op schemas (like torch.functional)."""
import warnings

from . import _C
from ._C import _ops
from ._flags import is_warn_always_enabled


def einsum(equation, *operands):
    """einsum("ij,jk->ik", a, b) or einsum("ij,jk", [a, b])."""
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = operands[0]
    return _ops._einsum(equation, list(operands))


def tensordot(a, b, dims=2, out=None):
    """Contract two tensors over the given dimensions (or the last/first `dims` ones)."""
    if isinstance(dims, int):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        da, db = list(range(a.dim() - dims, a.dim())), list(range(dims))
    elif isinstance(dims, _C.TensorBase):
        if dims.numel() == 1:
            return tensordot(a, b, int(dims.item()))
        da, db = dims[0].tolist(), dims[1].tolist()
    else:
        da, db = dims
        da = [da] if isinstance(da, int) else list(da)
        db = [db] if isinstance(db, int) else list(db)
    r = _ops._tensordot(a, b, da, db)
    if out is not None:
        out.resize_as_(r) if hasattr(out, "resize_as_") else None
        out.copy_(r)
        return out
    return r


def _pack(out, inv, cnt, return_inverse, return_counts):
    res = (out,) + ((inv,) if return_inverse else ()) + ((cnt,) if return_counts else ())
    return res[0] if len(res) == 1 else res


def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):
    """Sorted unique elements, with optional inverse indices and counts."""
    if dim is None:
        out, inv, cnt = _ops._unique2(input, sorted, return_inverse, return_counts)
    else:
        out, inv, cnt = _ops._unique_dim(input, dim, sorted, return_inverse, return_counts)
    return _pack(out, inv, cnt, return_inverse, return_counts)


def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):
    """Collapse runs of equal consecutive elements, with optional inverse indices and counts."""
    out, inv, cnt = _ops._unique_consecutive(input, return_inverse, return_counts, dim)
    return _pack(out, inv, cnt, return_inverse, return_counts)


_meshgrid_warned = False


def meshgrid(*tensors, indexing=None):
    """meshgrid(x, y, ..., indexing='ij'|'xy') or meshgrid([x, y, ...]); a tuple of expanded views."""
    global _meshgrid_warned
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tensors[0]
    if indexing is None and (not _meshgrid_warned or is_warn_always_enabled()):
        _meshgrid_warned = True
        warnings.warn("torch.meshgrid: in an upcoming release, it will be required to pass the indexing argument.",
                      UserWarning, stacklevel=2)
    return _ops._meshgrid(list(tensors), indexing=indexing)


def cartesian_prod(*tensors):
    """Cartesian product of 1-D tensors, one row per combination."""
    return _ops._cartesian_prod(list(tensors))


def nonzero(input, *, out=None, as_tuple=False):
    """The indices of the non-zero elements: an [n, ndim] tensor, or with as_tuple=True one 1-D
    tensor per dim (NumPy's form; a 0-d input counts as 1-d)."""
    if as_tuple:
        if out is not None:
            raise TypeError("nonzero(): as_tuple=True does not take an out= tensor")
        return _ops._nonzero_numpy(input)
    r = _ops.nonzero(input)
    if out is None:
        return r
    if out.dtype != r.dtype:
        raise RuntimeError(f"nonzero: Expected out tensor to have scalar type Long but got scalar type {out.dtype}")
    return _ops.cat([r], out=out)  # resizes out


def split(tensor, split_size_or_sections, dim=0):
    """torch.split: Tensor.split(split_size_or_sections, dim) under the function's argument names."""
    return tensor.split(split_size_or_sections, dim)


def frombuffer(buffer, *, dtype, count=-1, offset=0, requires_grad=False):
    """A 1-D tensor over an object's buffer (bytes, bytearray, array.array, mmap, ...), sharing its
    memory: writes to either are seen by the other. `offset` is in bytes, `count` in elements."""
    import numpy as np
    try:
        view = memoryview(buffer)
    except TypeError:
        raise ValueError("object does not implement Python buffer protocol.") from None
    length, size = view.nbytes, dtype.itemsize
    if length == 0 or count == 0:
        raise ValueError(f"both buffer length ({length}) and count ({count}) must not be 0")
    if not 0 <= offset < length:
        raise ValueError(f"offset ({offset} bytes) must be non-negative and no greater than buffer length "
                         f"({length} bytes) minus 1")
    if count < 0:
        if (length - offset) % size != 0:
            raise ValueError(f"buffer length ({length - offset} bytes) after offset ({offset} bytes) must be a "
                             f"multiple of element size ({size})")
        count = (length - offset) // size
    elif offset + count * size > length:
        raise ValueError(f"requested buffer length ({count} * {size} bytes) after offset ({offset} bytes) must not "
                         f"be greater than actual buffer length ({length} bytes)")
    if view.readonly:
        warnings.warn("The given buffer is not writable, and Ember does not support non-writable tensors. This "
                      "means you can write to the underlying (supposedly non-writable) buffer using the tensor. "
                      "You may want to copy the buffer to protect its data or make it writable before converting "
                      "it to a tensor.", UserWarning, stacklevel=2)
    raw = np.frombuffer(view.cast("B"), dtype=np.uint8, count=count * size, offset=offset)  # read-only stays so
    t = _C.from_numpy(raw).view(dtype)  # bytes reinterpreted in place: every dtype, bfloat16 included
    if requires_grad:
        t.requires_grad_(True)
    return t


def adjoint(input):
    """The conjugate transpose of the last two dims (a transpose: Ember has no complex dtypes)."""
    return input.adjoint()
