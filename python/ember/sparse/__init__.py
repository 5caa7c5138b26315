"""Sparse COO tensors (torch.sparse): ember.sparse_coo_tensor, Tensor.to_sparse / to_dense /
coalesce / _indices / _values, and the functions of this namespace. A sparse COO tensor stores
indices [sparse_dim, nnz] and values [nnz, *dense sizes] (csrc/ember/sparse/). Ops without a sparse
kernel raise NotImplementedError; autograd does not record through sparse tensors, but the dense
factor of mm(sparse, dense) gets its gradient, and embedding(sparse=True) gives sparse gradients."""
import contextlib

from .. import _C
from .._tensor import Tensor as _Tensor
from .._C import _ops

__all__ = ["sparse_coo_tensor", "mm", "addmm", "sum", "check_sparse_tensor_invariants"]


def sparse_coo_tensor(indices, values=None, size=None, *, dtype=None, device=None, pin_memory=False,
                      requires_grad=False, check_invariants=None, is_coalesced=None):
    """A sparse COO tensor with the given indices (sparse_dim x nnz) and values (nnz x dense sizes);
    size defaults to the smallest that holds every index. sparse_coo_tensor(size) is an empty one."""
    from .._utils import as_tensor
    if values is None:  # the sparse_coo_tensor(size) form: no entries, every dimension sparse
        size = list(indices)
        dtype = dtype if dtype is not None else _C.get_default_dtype()
        indices, values = _ops.zeros((len(size), 0), dtype=_C.int64), _ops.zeros((0,), dtype=dtype)
    if device is not None and _C.device(device).type != "cpu":
        from .._utils import _check_device_available
        _check_device_available(_C.device(device))
    if not isinstance(indices, _Tensor):
        indices = as_tensor(indices, dtype=_C.int64)
    values = as_tensor(values, dtype=dtype) if not isinstance(values, _Tensor) else (
        values.to(dtype) if dtype is not None else values)
    if indices.dim() != 2:
        raise RuntimeError(f"indices must be sparse_dim x nnz, but got: {list(indices.shape)}")
    if values.dim() == 0:
        raise RuntimeError("values must have at least one dimension (nnz), but got a 0-d tensor")
    if size is None:
        sparse_dim, nnz = indices.shape
        if nnz:
            top = indices.amax(1).tolist()
            sparse_sizes = [int(m) + 1 for m in top]
        else:
            sparse_sizes = [0] * sparse_dim
        size = sparse_sizes + list(values.shape[1:])
    out = _ops._sparse_coo_tensor(indices, values.detach() if requires_grad else values, list(size),
                                  is_coalesced=is_coalesced)
    if requires_grad:
        out.requires_grad_(True)  # raises: autograd does not record through sparse tensors
    return out


def _from_parts(indices, values, size, coalesced=None):
    """A sparse COO tensor rebuilt from its parts (pickles, checkpoints, other processes), checked: an
    index outside size raises here instead of being read later."""
    return _ops._sparse_coo_tensor(indices, values, list(size), is_coalesced=coalesced)


def mm(mat1, mat2, reduce="sum"):
    """sparse [n, m] @ strided [m, k]: a strided [n, k] (differentiable in mat2)."""
    if reduce != "sum":
        raise NotImplementedError(f"ember.sparse.mm: reduce={reduce!r} is not supported (only 'sum')")
    return _ops.mm(mat1, mat2)


def addmm(mat, mat1, mat2, *, beta=1.0, alpha=1.0):
    """beta * mat + alpha * (mat1 @ mat2) with a sparse mat1."""
    prod = _ops.mm(mat1, mat2)
    return mat * beta + prod * alpha if (beta != 1 or alpha != 1) else mat + prod


def sum(input, dim=None, dtype=None):
    """Sum of a sparse COO tensor's values: a 0-d tensor over all dims, else the sum over `dim`
    (sparse while some sparse dimension remains, strided once all are summed)."""
    if not input.is_sparse:
        raise RuntimeError("ember.sparse.sum expects a sparse COO tensor")
    if dim is None:
        return _ops.sum(input, dtype=dtype)
    return _ops.sum(input, [dim] if isinstance(dim, int) else list(dim), dtype=dtype)


class check_sparse_tensor_invariants(contextlib.ContextDecorator):
    """Context manager / decorator enabling invariant checks of sparse_coo_tensor. Ember always checks
    (an index out of range raises at construction), so this only records the setting."""
    _enabled = True

    def __init__(self, enable=True):
        self.state = enable
        self.saved_state = None

    @staticmethod
    def is_enabled():
        return check_sparse_tensor_invariants._enabled

    @staticmethod
    def enable():
        check_sparse_tensor_invariants._enabled = True

    @staticmethod
    def disable():
        check_sparse_tensor_invariants._enabled = False

    def __enter__(self):
        self.saved_state = check_sparse_tensor_invariants._enabled
        check_sparse_tensor_invariants._enabled = self.state
        return self

    def __exit__(self, *exc):
        check_sparse_tensor_invariants._enabled = self.saved_state
        return False
