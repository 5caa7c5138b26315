"""Top-level functions whose Python signatures differ from their op schemas (like torch.functional)."""
import warnings

from . import _C
from ._C import _ops


def einsum(equation, *operands):
    """einsum("ij,jk->ik", a, b) or einsum("ij,jk", [a, b])."""
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = operands[0]
    return _ops._einsum(equation, list(operands))


def tensordot(a, b, dims=2, out=None):
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
    if dim is None:
        out, inv, cnt = _ops._unique2(input, sorted, return_inverse, return_counts)
    else:
        out, inv, cnt = _ops._unique_dim(input, dim, sorted, return_inverse, return_counts)
    return _pack(out, inv, cnt, return_inverse, return_counts)


def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):
    out, inv, cnt = _ops._unique_consecutive(input, return_inverse, return_counts, dim)
    return _pack(out, inv, cnt, return_inverse, return_counts)


_meshgrid_warned = False


def meshgrid(*tensors, indexing=None):
    """meshgrid(x, y, ..., indexing='ij'|'xy') or meshgrid([x, y, ...]); a tuple of expanded views."""
    global _meshgrid_warned
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tensors[0]
    if indexing is None and not _meshgrid_warned:
        _meshgrid_warned = True
        warnings.warn("torch.meshgrid: in an upcoming release, it will be required to pass the indexing argument.",
                      UserWarning, stacklevel=2)
    return _ops._meshgrid(list(tensors), indexing=indexing)


def cartesian_prod(*tensors):
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
