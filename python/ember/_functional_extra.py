"""torch.* functions written in Python on Ember's ops: atleast_1d/2d/3d, broadcast_tensors, block_diag,
unravel_index, histogram and histogramdd, nonzero_static, chain_matmul,
norm_except_dim, frobenius_norm and gradient."""
import collections
import math
import warnings

from . import _C
from ._C import _ops
from ._tensor import Tensor
from ._utils import is_nonzero as _is_nonzero

histogram_result = collections.namedtuple("histogram", ["hist", "bin_edges"], module="ember.return_types")
histogram_result._out_type = collections.namedtuple("histogram_out", ["hist", "bin_edges"], module="ember.return_types")
histogram_result.__doc__ = "Named tuple (hist, bin_edges) returned by histogram."
histogram_result._out_type.__doc__ = "Named tuple (hist, bin_edges) returned by histogram with out=."
histogramdd_result = collections.namedtuple("histogramdd", ["hist", "bin_edges"], module="ember.return_types")
histogramdd_result.__doc__ = "Named tuple (hist, bin_edges) returned by histogramdd."


def _tensors_arg(fn, tensors):
    """f(a, b, ...) or f([a, b, ...]): the tuple of tensors, each checked."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    for t in tensors:
        if not isinstance(t, _C.TensorBase):
            raise TypeError(f"{fn}(): expected Tensor as element of argument 'tensors', but got {type(t).__name__}")
    return tensors


def _atleast(fn, rank, reshape, tensors):
    single = len(tensors) == 1 and isinstance(tensors[0], _C.TensorBase)
    result = tuple(t if t.dim() >= rank else reshape(t) for t in _tensors_arg(fn, tensors))
    return result[0] if single else result


def atleast_1d(*tensors):
    """Each tensor with 0 dims as a 1-element 1-d view; one tensor in, one out, else a tuple."""
    return _atleast("atleast_1d", 1, lambda t: t.reshape(1), tensors)


def atleast_2d(*tensors):
    """Each tensor with fewer than 2 dims viewed as 2-d: () -> (1, 1), (n) -> (1, n)."""
    return _atleast("atleast_2d", 2, lambda t: t.reshape(1, -1) if t.dim() == 1 else t.reshape(1, 1), tensors)


def atleast_3d(*tensors):
    """A 0-d or 1-d tensor (n) becomes (1, n, 1) and a 2-d one (m, n) becomes (m, n, 1), as NumPy."""
    def to3(t):
        if t.dim() == 2:
            return t.unsqueeze(-1)
        return t.reshape(1, -1, 1) if t.dim() == 1 else t.reshape(1, 1, 1)
    return _atleast("atleast_3d", 3, to3, tensors)


def _broadcast_shape(shapes):
    out = []
    for shape in shapes:
        for i, s in enumerate(reversed(shape)):
            if i == len(out):
                out.append(s)
            elif out[i] == 1:
                out[i] = s
            elif s != 1 and s != out[i]:
                raise RuntimeError(f"The size of tensor a ({out[i]}) must match the size of tensor b ({s}) at "
                                   f"non-singleton dimension {len(shape) - 1 - i}")
    return tuple(reversed(out))


def broadcast_tensors(*tensors):
    """Expanded views of the tensors, all to their common broadcast shape."""
    for i, t in enumerate(tensors):
        if not isinstance(t, _C.TensorBase):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got {type(t).__name__}")
    shape = _broadcast_shape([tuple(t.shape) for t in tensors])
    return tuple(t if tuple(t.shape) == shape else t.expand(*shape) for t in tensors)


def _result_dtype(tensors):
    """torch.result_type over many tensors: tensors with dims decide unless a 0-d one is of a higher
    category (bool < integer < floating)."""
    dims = [t.dtype for t in tensors if t.dim() > 0]
    zeros = [t.dtype for t in tensors if t.dim() == 0]
    fold = lambda ds: ds[0] if len(ds) == 1 else _C.promote_types(fold(ds[:-1]), ds[-1])  # noqa: E731
    if not dims or not zeros:
        return fold(dims or zeros)
    return _C.result_type(_ops.empty((1,), dtype=fold(dims)), _ops.empty((), dtype=fold(zeros)))


def block_diag(*tensors):
    """The tensors (0-d as 1x1, 1-d as one row) placed along the diagonal of a zero matrix."""
    for i, t in enumerate(tensors):
        if not isinstance(t, _C.TensorBase):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got {type(t).__name__}")
        if t.dim() > 2:
            raise RuntimeError(f"torch.block_diag: Input tensors must have 2 or fewer dimensions. Input {i} has "
                               f"{t.dim()} dimensions")
    if not tensors:
        return _ops.empty((1, 0))
    dtype = _result_dtype(tensors)
    blocks = [t.reshape(1, -1) if t.dim() < 2 else t for t in tensors]
    width = sum(b.shape[1] for b in blocks)
    rows, col = [], 0
    for b in blocks:
        r, c = b.shape
        # zeros left and right of the block, then the rows stacked: all differentiable in the blocks
        rows.append(_ops.cat([_ops.zeros((r, col), dtype=dtype, device=b.device), b.to(dtype),
                              _ops.zeros((r, width - col - c), dtype=dtype, device=b.device)], 1))
        col += c
    return _ops.cat(rows, 0)


def unravel_index(indices, shape):
    """The coordinates, one int64 tensor per dim of `shape`, of flat (row-major) indices; indices
    wrap modulo the size as in PyTorch (no bounds check)."""
    if not isinstance(indices, _C.TensorBase):
        indices = _ops.tensor(indices)
    if indices.is_floating_point() or indices.dtype == _C.bool:
        raise TypeError(f"expected 'indices' to be integer dtype, but got {indices.dtype}")
    if isinstance(shape, int):
        shape = (shape,)
    for s in shape:
        if not isinstance(s, int) or isinstance(s, bool):
            raise TypeError(f"expected 'shape' sequence to only contain ints, but got {type(s)}")
    shape = tuple(shape)
    if any(s < 0 for s in shape):
        raise ValueError(f"'shape' cannot have negative values, but got {shape}")
    if 0 in shape:
        raise RuntimeError("ZeroDivisionError")
    coords, stride = [], 1
    for s in reversed(shape):
        coords.append(_ops.remainder(_ops.floor_divide(indices.to(_C.int64), stride), s))
        stride *= s
    return tuple(reversed(coords))


def _check_hist_input(input, weight):
    if not input.is_floating_point() or input.dtype in (_C.float16, _C.bfloat16):
        name = {_C.float16: "Half", _C.bfloat16: "BFloat16"}.get(input.dtype, _TYPE_NAMES.get(input.dtype))
        raise NotImplementedError(f'"histogramdd" not implemented for \'{name}\'')
    if weight is not None and weight.dtype != input.dtype:
        raise RuntimeError("torch.histogramdd: if weight tensor is provided, input tensor and weight tensor should "
                           f"have the same dtype, but got input({_C_NAMES[input.dtype]}), and "
                           f"weight({_C_NAMES.get(weight.dtype, weight.dtype)})")


_TYPE_NAMES = {_C.int64: "Long", _C.int32: "Int", _C.int16: "Short", _C.int8: "Char", _C.uint8: "Byte",
               _C.bool: "Bool"}
_FLOAT_NAMES = {_C.float32: "Float", _C.float64: "Double", _C.float16: "Half", _C.bfloat16: "BFloat16"}
_C_NAMES = {_C.float32: "float", _C.float64: "double", _C.float16: "c10::Half", _C.bfloat16: "c10::BFloat16",
            _C.int64: "long int", _C.int32: "int", _C.int16: "short int", _C.int8: "signed char",
            _C.uint8: "unsigned char", _C.bool: "bool"}


def _fmt(v):
    return f"{v:g}"


def _edges(points, dim, bins, lo_hi, dtype):
    """Evenly spaced edges for one dim: over lo_hi, else the data's [min, max] ([0, 1] when empty),
    widened by 0.5 each way when the two ends meet."""
    if bins <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension {dim}")
    if lo_hi is not None:
        lo, hi = float(lo_hi[0]), float(lo_hi[1])
    elif points.numel() == 0:
        lo, hi = 0.0, 1.0
    else:
        lo, hi = float(points.min()), float(points.max())
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise RuntimeError(f"torch.histogramdd: dimension {dim}'s range [{_fmt(lo)}, {_fmt(hi)}] is not finite")
    if lo > hi:
        raise RuntimeError(f"torch.histogramdd: min should not exceed max, but got min {_fmt(lo)} max {_fmt(hi)} "
                           f"for dimension {dim}")
    if lo == hi:
        lo, hi = lo - 0.5, hi + 0.5
    return _ops.linspace(lo, hi, bins + 1, dtype=dtype)


def _bin_index(points, edges):
    """Each point's bin in `edges` (right edge of the last bin inclusive) and whether it falls inside."""
    nbins = edges.numel() - 1
    idx = _ops.searchsorted(edges, points, right=True) - 1
    idx = _ops.where(points == edges[-1], nbins - 1, idx)
    inside = (points >= edges[0]) & (points <= edges[-1])
    return idx.clamp(0, max(nbins - 1, 0)), inside


def _histogramdd(input, bins, range, weight, density):
    """The shared core: input (..., D) points, bins a list of D ints or D edge tensors."""
    d = input.shape[-1]
    points = input.reshape(-1, d).detach()
    if weight is not None:
        if tuple(weight.shape) != tuple(input.shape[:-1]):
            raise RuntimeError("torch.histogramdd: if weight tensor is provided it should have the same shape as the "
                               "input tensor excluding its innermost dimension, but got input with shape "
                               f"{list(input.shape)} and weight with shape {list(weight.shape)}")
        weight = weight.reshape(-1).detach()
    if range is not None and len(range) != 2 * d:
        raise RuntimeError(f"torch.histogramdd: for a {d}-dimensional histogram range should have {2 * d} elements, "
                           f"but got {len(range)}")
    edges = []
    for i, b in enumerate(bins):
        if isinstance(b, _C.TensorBase):
            if b.dim() != 1:
                raise RuntimeError(f"torch.histogramdd: bins tensor should have one dimension, but got {b.dim()} "
                                   f"dimensions in the bins tensor for dimension {i}")
            if b.numel() < 1:
                raise RuntimeError(f"torch.histogramdd: bins tensor should have at least 1 element, but got "
                                   f"{b.numel()} elements in the bins tensor for dimension {i}")
            edges.append(b.detach().to(input.dtype))
        else:
            edges.append(_edges(points[:, i], i, b, None if range is None else range[2 * i:2 * i + 2], input.dtype))
    sizes = [e.numel() - 1 for e in edges]
    flat = _ops.zeros((points.shape[0],), dtype=_C.int64, device=points.device)
    keep = _ops.ones((points.shape[0],), dtype=_C.bool, device=points.device)
    for i, e in enumerate(edges):
        idx, inside = _bin_index(points[:, i].contiguous(), e)
        flat = flat * sizes[i] + idx
        keep = keep & inside
    values = _ops.ones((points.shape[0],), dtype=input.dtype, device=points.device) if weight is None else weight
    total = math.prod(sizes)
    hist = _ops.zeros((total,), dtype=input.dtype, device=input.device)
    if total:
        hist = hist.index_add(0, flat.masked_select(keep), values.masked_select(keep))
    hist = hist.reshape(sizes)
    if density:
        # divide by the total and by each bin's volume (the product of its widths along every dim)
        hist = hist / hist.sum()
        for i, e in enumerate(edges):
            shape = [1] * d
            shape[i] = sizes[i]
            hist = hist / (e[1:] - e[:-1]).reshape(shape)
    return hist, edges


def _write_pair(out, hist, edges):
    if len(out) != 2:
        raise TypeError("histogram(): out= expects a tuple of 2 tensors (hist, bin_edges)")
    for o, r in zip(out, (hist, edges)):
        _ops.where(_ops.tensor(True, device="cpu"), r, r, out=o)  # resizes o
    return histogram_result._out_type(*out)


def histogram(input, bins=100, *, range=None, weight=None, density=False, out=None):
    """(hist, bin_edges) of the flattened input: `bins` equal bins over `range` (default: the data's
    [min, max]) or the edges given as a 1-d tensor; the last bin includes its right edge. With
    `weight` each element adds its weight; with `density` the histogram integrates to 1."""
    _check_hist_input(input, weight)
    if weight is not None and tuple(weight.shape) != tuple(input.shape):
        raise RuntimeError("torch.histogramdd: if weight tensor is provided it should have the same shape as the "
                           f"input tensor excluding its innermost dimension, but got input with shape "
                           f"{list(input.reshape(-1, 1).shape)} and weight with shape {list(weight.shape)}")
    if not isinstance(bins, _C.TensorBase):
        if not isinstance(bins, int) or isinstance(bins, bool):
            raise TypeError(f"histogram(): argument 'bins' must be int or Tensor, not {type(bins).__name__}")
    elif range is not None:
        raise TypeError("histogram(): argument 'range' is not accepted with a Tensor of bin edges")
    hist, edges = _histogramdd(input.reshape(-1, 1), [bins], range,
                               None if weight is None else weight.reshape(-1), density)
    if out is not None:
        return _write_pair(out, hist, edges[0])
    return histogram_result(hist, edges[0])


def histogramdd(input, bins, *, range=None, weight=None, density=False):
    """The D-dimensional histogram of the points input[..., :D]: bins is an int (for every dim), D
    ints, or D 1-d tensors of edges; range is [min_0, max_0, min_1, max_1, ...]."""
    _check_hist_input(input, weight)
    if input.dim() < 2:
        raise RuntimeError("torch.histogramdd: input tensor should have at least 2 dimensions")
    d = input.shape[-1]
    if isinstance(bins, int):
        bins = [bins] * d
    else:
        bins = list(bins)
        if len(bins) != d:
            raise RuntimeError("histogramdd: The size of bins must be equal to the innermost dimension of the input.")
    hist, edges = _histogramdd(input, bins, range, weight, density)
    return histogramdd_result(hist, tuple(edges))


def nonzero_static(input, *, size, fill_value=-1):
    """nonzero() with a fixed number of rows: the first `size` indices, padded with fill_value."""
    if not isinstance(size, int) or size < 0:
        raise RuntimeError("nonzero_static: 'size' must be an non-negative integer")
    found = _ops.nonzero(input)[:size]
    pad = size - found.shape[0]
    if pad == 0:
        return found
    return _ops.cat([found, _ops.full((pad, input.dim()), fill_value, dtype=_C.int64, device=input.device)])


def chain_matmul(*matrices, out=None):
    """The product of the 2-D matrices (deprecated in PyTorch for linalg.multi_dot)."""
    warnings.warn("torch.chain_matmul is deprecated and will be removed in a future PyTorch release. Use "
                  "torch.linalg.multi_dot instead, which accepts a list of two or more tensors rather than multiple "
                  "parameters.", UserWarning, stacklevel=2)
    if not matrices:
        raise RuntimeError("chain_matmul(): Expected one or more matrices")
    for m in matrices:
        if m.dim() != 2:
            raise RuntimeError(f"Tensor dimension is {m.dim()}, expected 2 instead.")
    result = matrices[0] if len(matrices) > 1 else matrices[0].clone()
    for i, m in enumerate(matrices[1:], 1):
        if result.shape[1] != m.shape[0]:
            raise RuntimeError(f"multi_dot(): tensors {i - 1} and {i} with shapes {list(matrices[i - 1].shape)} "
                               f"and {list(m.shape)} cannot be multiplied")
        result = _ops.mm(result, m)
    if out is not None:
        return _ops.where(_ops.tensor(True, device="cpu"), result, result, out=out)
    return result


def norm_except_dim(v, pow=2, dim=0):
    """The pow-norm over every dim but `dim` (kept, size 1 elsewhere); dim=-1: the norm of all of v.
    (weight_norm's g.)"""
    if dim == -1:
        return v.norm(pow)
    others = [d for d in range(v.dim()) if d != dim]
    return v.norm(pow, others, True) if others else v.abs() if pow != 0 else (v != 0).to(v.dtype)


def frobenius_norm(input, dim, keepdim=False):
    """sqrt(sum(input^2)) over dim (at most 2 dims); deprecated in PyTorch for linalg.vector_norm."""
    dim = [dim] if isinstance(dim, int) else list(dim)
    if len(dim) > 2:
        raise RuntimeError(f"Expected at most 2 dimensions, but got {len(dim)} dimensions instead.")
    warnings.warn("at::frobenius_norm is deprecated and it is just left for JIT compatibility. It will be removed in "
                  "a future PyTorch release. Please use `linalg.vector_norm(A, 2., dim, keepdim)` instead",
                  UserWarning, stacklevel=2)
    return input.norm(2, dim, keepdim)


def _gradient_spacing(input, spacing, dims):
    """One spacing per dim: a number (uniform) or a 1-d tensor of coordinates."""
    if spacing is None:
        return [1.0] * len(dims)
    if isinstance(spacing, (list, tuple)):
        if len(spacing) != len(dims):
            raise RuntimeError("torch.gradient expected spacing to be unspecified, a scalar or it's spacing and dim "
                               f"arguments to have the same length, but got a spacing argument of length "
                               f"{len(spacing)} and a dim argument of length {len(dims)}.")
        for s, d in zip(spacing, dims):
            if isinstance(s, _C.TensorBase) and (s.dim() != 1 or s.shape[0] != input.shape[d]):
                raise RuntimeError(f"torch.gradient expected each tensor to be on the same device and to have as "
                                   f"many elements as the input's dim {d}, but got a spacing tensor of shape "
                                   f"{list(s.shape)} for a dim of size {input.shape[d]}")
        return list(spacing)
    if isinstance(spacing, _C.TensorBase):
        raise TypeError("gradient(): argument 'spacing' must be a number or a sequence of numbers or 1-d tensors, "
                        "not Tensor")
    return [spacing] * len(dims)


def gradient(input, *, spacing=1, dim=None, edge_order=1):
    """Estimates d input / d x_dim by central differences inside and one-sided ones (of order
    edge_order, 1 or 2) at the ends, one tensor per dim; spacing is the step, per-dim steps or
    per-dim coordinates (then second-order accurate on uneven grids, as NumPy's gradient)."""
    if edge_order not in (1, 2):
        raise RuntimeError("torch.gradient only supports edge_order=1 and edge_order=2.")
    dims = list(range(input.dim())) if dim is None else [dim] if isinstance(dim, int) else list(dim)
    for d in dims:
        if input.dim() and not -input.dim() <= d < input.dim():
            raise IndexError(f"Dimension out of range (expected to be in range of [{-input.dim()}, "
                             f"{input.dim() - 1}], but got {d})")
    dims = [d % input.dim() if input.dim() else d for d in dims]
    for d in dims:
        if dims.count(d) > 1:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
    steps = _gradient_spacing(input, spacing, dims)
    for d in dims:
        if input.shape[d] < edge_order + 1:
            raise RuntimeError("torch.gradient expected each dimension size to be at least edge_order+1")
    x = input if input.is_floating_point() or input.is_complex() else input.to(_C.get_default_dtype())
    return tuple(_gradient_along(x, d, s, edge_order) for d, s in zip(dims, steps))


def _gradient_along(f, d, step, edge_order):
    n = f.shape[d]
    part = lambda start, length: f.narrow(d, start, length)  # noqa: E731
    shape = [1] * f.dim()
    shape[d] = -1
    if isinstance(step, _C.TensorBase):
        x = step.to(f.dtype)
        h = x[1:] - x[:-1]
        hs, hd = h[:-1].reshape(shape), h[1:].reshape(shape)  # spacing before and after each inner point
        inner = (-hd / (hs * (hd + hs)) * part(0, n - 2) + (hd - hs) / (hd * hs) * part(1, n - 2)
                 + hs / (hd * (hd + hs)) * part(2, n - 2))
        h_first, h_last = h[0], h[-1]
        if edge_order == 1:
            first = (part(1, 1) - part(0, 1)) / h_first
            last = (part(n - 1, 1) - part(n - 2, 1)) / h_last
        else:
            h1, h2 = h[0], h[1]
            first = (-(2 * h1 + h2) / (h1 * (h1 + h2)) * part(0, 1) + (h1 + h2) / (h1 * h2) * part(1, 1)
                     - h1 / (h2 * (h1 + h2)) * part(2, 1))
            h1, h2 = h[-2], h[-1]
            last = (h2 / (h1 * (h1 + h2)) * part(n - 3, 1) - (h1 + h2) / (h1 * h2) * part(n - 2, 1)
                    + (2 * h2 + h1) / (h2 * (h1 + h2)) * part(n - 1, 1))
    else:
        inner = (part(2, n - 2) - part(0, n - 2)) / (2 * step)
        if edge_order == 1:
            first = (part(1, 1) - part(0, 1)) / step
            last = (part(n - 1, 1) - part(n - 2, 1)) / step
        else:
            first = (-1.5 * part(0, 1) + 2 * part(1, 1) - 0.5 * part(2, 1)) / step
            last = (0.5 * part(n - 3, 1) - 2 * part(n - 2, 1) + 1.5 * part(n - 1, 1)) / step
    return _ops.cat([first, inner, last], d)


def cond(pred, true_fn, false_fn, operands=()):
    """true_fn(*operands) if pred else false_fn(*operands); pred is a bool, a number or a one-element
    tensor. (PyTorch traces both branches when compiling; run eagerly, it is this branch.)"""
    if isinstance(pred, _C.TensorBase):
        if pred.numel() != 1:
            raise RuntimeError(f"Expected pred to be bool or single-element tensor, but got {pred}.")
        pred = bool(pred.item())
    return true_fn(*operands) if pred else false_fn(*operands)


def _new_empty_strided(self, size, stride, *, dtype=None, layout=None, device=None, pin_memory=False,
                       requires_grad=False):
    """Uninitialized tensor with given sizes and strides and this tensor's dtype and device."""
    from ._creation import empty_strided
    return empty_strided(size, stride, dtype=dtype or self.dtype, device=device, requires_grad=requires_grad)


def _histogram_method(self, bins=100, *, range=None, weight=None, density=False):
    """Histogram of the values with counts and bin edges."""
    return histogram(self, bins, range=range, weight=weight, density=density)


Tensor.histogram = _histogram_method
Tensor.nonzero_static = nonzero_static
Tensor.new_empty_strided = _new_empty_strided
def _is_same_size(self, other):
    """True when the other tensor has the same shape."""
    return tuple(self.shape) == tuple(other.shape)


def _is_nonzero_method(self):
    """Truth value of a one-element tensor (raises for other sizes)."""
    return _is_nonzero(self)


def _is_distributed(self):
    """False: no tensor is sharded by the legacy THD backend."""
    return False


Tensor.is_same_size = _is_same_size
Tensor.is_nonzero = _is_nonzero_method
Tensor.is_distributed = _is_distributed

def vander(x, N=None, increasing=False):
    """The Vandermonde matrix of the 1-D x: columns x^(N-1) ... x^0 (x^0 ... x^(N-1) when increasing)."""
    if x.dim() != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    n = x.shape[0] if N is None else N
    if n < 0:
        raise RuntimeError("N must be non-negative.")
    from . import linalg
    if n < 2:  # linalg.vander wants N >= 2: the 0 / 1 column cases directly, in its dtype
        dtype = linalg.vander(x[:0], N=2).dtype
        return _ops.ones((x.shape[0], n), dtype=dtype, device=x.device)
    v = linalg.vander(x, N=n)
    return v if increasing else v.flip(-1)


def nuclear_norm(input, dim=None, keepdim=False, *, out=None):
    """Sum of singular values over dims (default the last two): linalg.matrix_norm(input, 'nuc', ...)."""
    if isinstance(dim, bool):  # nuclear_norm(input, keepdim) form
        dim, keepdim = None, dim
    from . import linalg
    return linalg.matrix_norm(input, "nuc", dim=(-2, -1) if dim is None else tuple(dim), keepdim=keepdim, out=out)


def _to_dense(self, dtype=None, *, masked_grad=None):
    """A strided copy of a sparse COO tensor; a strided tensor is itself already (or cast to dtype)."""
    if self.is_sparse:
        return _ops._to_dense(self, dtype, masked_grad)
    return self if dtype is None or dtype == self.dtype else self.to(dtype)


Tensor.to_dense = _to_dense
Tensor.name = property(lambda self: None, doc="None: Ember has no named tensors, so every tensor is unnamed.")

__all__ = [
    "vander", "nuclear_norm",
    "atleast_1d", "atleast_2d", "atleast_3d", "broadcast_tensors", "block_diag", "unravel_index", "histogram",
    "histogramdd", "nonzero_static", "chain_matmul", "norm_except_dim", "frobenius_norm",
    "gradient", "cond",
]


def _assert(condition, message):
    """Python's assert as a function: AssertionError(message) unless `condition` holds; a tensor-like
    condition (torch.fx's Proxy) takes the call through __torch_function__, so it can be traced."""
    if type(condition) is not Tensor and hasattr(type(condition), "__torch_function__"):
        result = type(condition).__torch_function__(_assert, (type(condition),), (condition, message), {})
        if result is not NotImplemented:
            return result
    if not condition:
        raise AssertionError(message)
