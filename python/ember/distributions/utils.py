"""Helpers shared by the distributions: broadcasting parameters, probs <-> logits, lazy attributes."""
import numbers
from functools import update_wrapper

import ember
import ember.nn.functional as F

__all__ = ["broadcast_all", "broadcast_shape", "clamp_probs", "lazy_property", "logits_to_probs",
           "probs_to_logits", "tril_matrix_to_vec", "vec_to_tril_matrix", "euler_constant"]

euler_constant = 0.57721566490153286060


def broadcast_shape(*shapes):
    """The broadcast of several shapes, torch.broadcast_shapes' rules; RuntimeError if incompatible."""
    ndim = max((len(s) for s in shapes), default=0)
    out = [1] * ndim
    for s in shapes:
        for i, n in enumerate(s, ndim - len(s)):
            n = int(n)
            if out[i] == 1:
                out[i] = n
            elif n != 1 and n != out[i]:
                raise RuntimeError(f"shape mismatch: objects cannot be broadcast to a single shape. "
                                   f"Mismatch is between {tuple(shapes[0])} and {tuple(s)}")
    return ember.Size(out)


def broadcast_all(*values):
    """Broadcast tensors and numbers together; numbers become tensors of the tensors' dtype."""
    if not all(isinstance(v, (ember.Tensor, numbers.Number)) for v in values):
        raise ValueError("Input arguments must all be instances of numbers.Number, ember.Tensor "
                         "or objects implementing __torch_function__.")
    tensors = [v for v in values if isinstance(v, ember.Tensor)]
    if not tensors:
        dtype = ember.get_default_dtype()
        return tuple(ember.tensor(float(v), dtype=dtype) for v in values)
    ref = tensors[0]
    values = [v if isinstance(v, ember.Tensor) else ref.new_tensor(v) for v in values]
    shape = broadcast_shape(*(v.shape for v in values))
    return tuple(v.expand(shape) for v in values)


def _batch_shape_of(given, broadcast):
    """Batch shape of a distribution made from the arguments `given`: () when all are plain numbers,
    else the shape they were broadcast to (`broadcast`, one of broadcast_all's results)."""
    if all(isinstance(v, numbers.Number) for v in given):
        return ember.Size()
    return broadcast.size()


def _standard_normal(shape, dtype, device=None):
    return ember.randn(ember.Size(shape), dtype=dtype)


def _sum_rightmost(value, dim):
    """Sum out the `dim` rightmost dimensions."""
    if dim == 0:
        return value
    return value.reshape(value.shape[:value.dim() - dim] + (-1,)).sum(-1)


def logits_to_probs(logits, is_binary=False):
    return ember.sigmoid(logits) if is_binary else F.softmax(logits, dim=-1)


def clamp_probs(probs):
    eps = ember.finfo(probs.dtype).eps
    return probs.clamp(min=eps, max=1 - eps)


def probs_to_logits(probs, is_binary=False):
    ps = clamp_probs(probs)
    if is_binary:
        return ember.log(ps) - ember.log1p(-ps)
    return ember.log(ps)


class lazy_property:
    """Computed on first access, then cached on the instance (a plain attribute shadows it)."""

    def __init__(self, wrapped):
        self.wrapped = wrapped
        update_wrapper(self, wrapped)

    def __get__(self, instance, obj_type=None):
        if instance is None:
            return _lazy_property_and_property(self.wrapped)
        with ember.enable_grad():
            value = self.wrapped(instance)
        setattr(instance, self.wrapped.__name__, value)
        return value


class _lazy_property_and_property(lazy_property, property):
    def __init__(self, wrapped):
        property.__init__(self, wrapped)


def tril_matrix_to_vec(mat, diag=0):
    n = mat.shape[-1]
    if not (-n <= diag < n):
        raise ValueError(f"diag ({diag}) provided is outside [{-n}, {n - 1}].")
    rows, cols = _tril_indices(n, diag)
    return mat[..., rows, cols]


def vec_to_tril_matrix(vec, diag=0):
    m = vec.shape[-1]
    n = 0
    while len(_tril_indices(n, diag)[0]) < m:
        n += 1
    rows, cols = _tril_indices(n, diag)
    if len(rows) != m:
        raise ValueError(f"The size of last dimension is {m} which cannot be expressed as the "
                         "lower triangular part of a square D x D matrix.")
    out = vec.new_zeros(tuple(vec.shape[:-1]) + (n * n,))
    flat = ember.tensor([r * n + c for r, c in zip(rows, cols)], dtype=ember.int64)
    out = out.index_copy(-1, flat, vec)
    return out.reshape(tuple(vec.shape[:-1]) + (n, n))


def _tril_indices(n, diag):
    rows, cols = [], []
    for r in range(n):
        for c in range(n):
            if c - r <= diag:
                rows.append(r)
                cols.append(c)
    return rows, cols


def broadcast_tensors(*tensors):
    shape = broadcast_shape(*(t.shape for t in tensors))
    return tuple(t.expand(shape) for t in tensors)


_NO_COUNT = object()


class _LazyProbsLogits:
    """`probs` and `logits` for distributions given one of them: the other is derived on first use.
    `_binary` picks sigmoid (Bernoulli-like) or softmax over the last dim (categorical)."""
    _binary = True

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=self._binary)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits, is_binary=self._binary)


class _ProbsLogitsMixin(_LazyProbsLogits):
    """_LazyProbsLogits that also keeps the given parameter as `_param` (for param_shape and _new)."""

    @property
    def param_shape(self):
        return self._param.size()

    def _new(self, *args, **kwargs):
        return self._param.new(*args, **kwargs)

    def _init_probs_or_logits(self, probs, logits, total_count=_NO_COUNT):
        """Store the given parameter (broadcast with `total_count` when there is one, which takes its
        dtype) and return the batch shape: () for a plain number, else the parameter's shape."""
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        name, given = ("probs", probs) if probs is not None else ("logits", logits)
        if total_count is _NO_COUNT:
            (param,) = broadcast_all(given)
            batch_shape = ember.Size() if isinstance(given, numbers.Number) else param.size()
        else:
            total_count, param = broadcast_all(total_count, given)
            self.total_count = total_count.type_as(param)
            batch_shape = param.size()
        setattr(self, name, param)
        self._param = param
        return batch_shape

    def _expand_probs_logits(self, new, shape):
        """Give `new` whichever of probs/logits this instance holds, expanded to `shape`."""
        if "probs" in self.__dict__:
            new.probs = self.probs.expand(shape)
            new._param = new.probs
        if "logits" in self.__dict__:
            new.logits = self.logits.expand(shape)
            new._param = new.logits
