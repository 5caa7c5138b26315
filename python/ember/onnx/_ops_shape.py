"""ONNX forms of the view and shape ops, joins and splits, indexing, casts and creation ops.

Sizes a node names (view's size, expand's size) are literals of the traced program and are kept;
sizes the op derives from its input (flatten, unflatten, *_as) are read at run time with Shape, so
dynamic axes flow through them."""
import numpy as np

from ._builder import DTYPES, INT64_MAX, INT64_MIN, norm_dim, symbolic


def _x(g, n, k=0):
    return g.t(n.args[k])


@symbolic("contiguous", "alias", "clone", "prim::detach")
def _identity(g, n):
    return g.op("Identity", _x(g, n))


@symbolic("to_dtype")
def _to_dtype(g, n):
    x = n.args[0]
    return g.op("Identity", g.t(x)) if x.dtype == n.out.dtype else g.cast(g.t(x), n.out.dtype)


def _reshape(g, x, shape):
    shape = list(shape)
    return g.op("Reshape", x, g.ints(shape), allowzero=1 if 0 in shape else None)


@symbolic("view", "reshape")
def _view(g, n):
    return _reshape(g, _x(g, n), n.args[1])


@symbolic("view_as", "reshape_as")
def _view_as(g, n):
    return g.op("Reshape", _x(g, n), g.shape_of(_x(g, n, 1)))


def _splice_shape(g, x, rank, start, end, middle):
    """Shape(x)[:start] ++ middle ++ Shape(x)[end:], read at run time."""
    parts = []
    if start > 0:
        parts.append(g.shape_of(x, end=start))
    parts.append(g.ints(middle))
    if end < rank:
        parts.append(g.shape_of(x, start=end))
    return parts[0] if len(parts) == 1 else g.op("Concat", *parts, axis=0)


@symbolic("flatten")
def _flatten(g, n):
    x, start, end = n.args
    if x.rank == 0:
        return _reshape(g, g.t(x), [1])
    start, end = norm_dim(start, x.rank), norm_dim(end, x.rank)
    if start == end:
        return g.op("Identity", g.t(x))
    if start == 0 and end == x.rank - 1:
        return _reshape(g, g.t(x), [-1])
    if end == x.rank - 1 and start == 1:
        return g.op("Flatten", g.t(x), axis=1)
    return g.op("Reshape", g.t(x), _splice_shape(g, g.t(x), x.rank, start, end + 1, [-1]))


@symbolic("unflatten")
def _unflatten(g, n):
    x, dim, sizes = n.args
    d = norm_dim(dim, x.rank)
    return g.op("Reshape", g.t(x), _splice_shape(g, g.t(x), x.rank, d, d + 1, sizes))


@symbolic("permute")
def _permute(g, n):
    x, dims = n.args
    return g.op("Transpose", g.t(x), perm=[norm_dim(d, x.rank) for d in dims])


def _swap(rank, a, b):
    perm = list(range(rank))
    perm[a], perm[b] = perm[b], perm[a]
    return perm


@symbolic("transpose")
def _transpose(g, n):
    x, a, b = n.args
    if x.rank < 2:
        return g.op("Identity", g.t(x))
    return g.op("Transpose", g.t(x), perm=_swap(x.rank, norm_dim(a, x.rank), norm_dim(b, x.rank)))


@symbolic("t")
def _t(g, n):
    x = n.args[0]
    return g.op("Transpose", g.t(x), perm=[1, 0]) if x.rank == 2 else g.op("Identity", g.t(x))


@symbolic("movedim")
def _movedim(g, n):
    x, src, dst = n.args
    src = [norm_dim(d, x.rank) for d in (src if isinstance(src, list) else [src])]
    dst = [norm_dim(d, x.rank) for d in (dst if isinstance(dst, list) else [dst])]
    perm = [-1] * x.rank
    for s, d in zip(src, dst):
        perm[d] = s
    rest = iter(d for d in range(x.rank) if d not in src)
    perm = [p if p >= 0 else next(rest) for p in perm]
    return g.op("Transpose", g.t(x), perm=perm)


@symbolic("expand")
def _expand(g, n):
    x, size = n.args
    # -1 keeps the input's size; Expand broadcasts, so a 1 there does the same
    return g.op("Expand", g.t(x), g.ints([1 if s == -1 else s for s in size]))


@symbolic("expand_as")
def _expand_as(g, n):
    return g.op("Expand", _x(g, n), g.shape_of(_x(g, n, 1)))


@symbolic("squeeze")
def _squeeze(g, n):
    x, dim = n.args
    if dim is None:
        axes = [k for k, s in enumerate(x.shape) if s == 1]
    else:
        dims = dim if isinstance(dim, list) else [dim]
        axes = sorted({norm_dim(d, x.rank) for d in dims if x.rank and x.shape[norm_dim(d, x.rank)] == 1})
    return g.op("Squeeze", g.t(x), g.ints(axes)) if axes else g.op("Identity", g.t(x))


@symbolic("unsqueeze")
def _unsqueeze(g, n):
    x, dim = n.args
    return g.op("Unsqueeze", g.t(x), g.ints([norm_dim(dim, x.rank + 1)]))


def _slice(g, x, dim, start, end, step=1):
    return g.op("Slice", x, g.ints([start]), g.ints([end]), g.ints([dim]), g.ints([step]))


@symbolic("slice")
def _slice_op(g, n):
    x, dim, start, end, step = n.args
    start = 0 if start is None else start
    end = INT64_MAX if end is None else end
    return _slice(g, g.t(x), norm_dim(dim, x.rank), start, end, step)


@symbolic("narrow")
def _narrow(g, n):
    x, dim, start, length = n.args
    end = start + length
    if start < 0 and end >= 0:  # a negative start counts from the end, and so does its end
        end = INT64_MAX
    return _slice(g, g.t(x), norm_dim(dim, x.rank), start, end)


@symbolic("select")
def _select(g, n):
    x, dim, index = n.args
    last = g.last_step.get(g.name_of(x))
    if last is not None and norm_dim(dim, x.rank) == 0 and index % last[1] == last[0]:
        return g.op("Identity", last[2])  # a recurrence's final state, which ONNX gives on its own
    return g.op("Gather", g.t(x), g.const(index, "int64"), axis=norm_dim(dim, x.rank))


def _split_by_outputs(g, n, x, dim, sizes=None):
    """Split along dim into the pieces the trace made (their sizes are in the output shapes)."""
    d = norm_dim(dim, x.rank)
    sizes = sizes or [v.shape[d] for v in n.outputs]
    if len(sizes) == 1:
        return [g.op("Identity", g.t(x))]
    return g.op("Split", g.t(x), g.ints(sizes), axis=d, outputs=len(sizes))


@symbolic("split", "split.sizes", "chunk", "tensor_split.sections", "tensor_split.indices")
def _split(g, n):
    return _split_by_outputs(g, n, n.args[0], n.args[2])


@symbolic("unbind")
def _unbind(g, n):
    x, dim = n.args
    d = norm_dim(dim, x.rank)
    pieces = _split_by_outputs(g, n, x, dim, [1] * x.shape[d])
    return [g.op("Squeeze", p, g.ints([d])) for p in pieces]


@symbolic("cat")
def _cat(g, n):
    tensors, dim = n.args
    # torch skips 1-D empty tensors in cat; ONNX Concat needs equal ranks
    keep = [v for v in tensors if not (v.rank == 1 and v.shape[0] == 0)] or tensors[:1]
    return g.op("Concat", *[g.t(v, n.out.dtype) for v in keep], axis=norm_dim(dim, n.out.rank))


@symbolic("stack")
def _stack(g, n):
    tensors, dim = n.args
    d = norm_dim(dim, n.out.rank)
    parts = [g.op("Unsqueeze", g.t(v, n.out.dtype), g.ints([d])) for v in tensors]
    return g.op("Concat", *parts, axis=d)


@symbolic("flip")
def _flip(g, n):
    x, dims = n.args
    axes = [norm_dim(d, x.rank) for d in dims]
    k = len(axes)
    return g.op("Slice", g.t(x), g.ints([-1] * k), g.ints([INT64_MIN] * k), g.ints(axes), g.ints([-1] * k))


@symbolic("tril", "triu")
def _trilu(g, n):
    return g.op("Trilu", _x(g, n), g.const(n.args[1], "int64"), upper=int(n.op == "triu"))


@symbolic("repeat", "tile")
def _repeat(g, n):
    x, reps = n.args
    reps = list(reps)
    name = g.t(x)
    if n.op == "tile" and len(reps) < x.rank:
        reps = [1] * (x.rank - len(reps)) + reps
    if len(reps) > x.rank:  # new leading dims of size 1 first
        name = g.op("Unsqueeze", name, g.ints(range(len(reps) - x.rank)))
    return g.op("Tile", name, g.ints(reps))


@symbolic("roll")
def _roll(g, n):
    x, shifts, dims = n.args
    name = g.t(x)
    if not dims:  # roll the flattened tensor, then restore the shape
        flat = _reshape(g, name, [-1])
        rolled = _roll_axis(g, flat, int(np.prod(x.shape)), shifts[0], 0)
        return g.op("Reshape", rolled, g.shape_of(name))
    for s, d in zip(shifts, dims):
        d = norm_dim(d, x.rank)
        name = _roll_axis(g, name, x.shape[d], s, d)
    return name


def _roll_axis(g, name, size, shift, dim):
    shift = shift % size if size else 0
    if shift == 0:
        return g.op("Identity", name)
    tail = _slice(g, name, dim, size - shift, INT64_MAX)
    head = _slice(g, name, dim, 0, size - shift)
    return g.op("Concat", tail, head, axis=dim)


# ---- indexing
@symbolic("index_select")
def _index_select(g, n):
    x, dim, index = n.args
    return g.op("Gather", g.t(x), g.t(index, "int64"), axis=norm_dim(dim, x.rank))


@symbolic("gather", "take_along_dim")
def _gather(g, n):
    x, dim, index = n.args[:3]
    if n.op == "take_along_dim":
        index, dim = dim, index
        if dim is None:
            raise g.unsupported("take_along_dim without dim")
    return g.op("GatherElements", g.t(x), g.t(index, "int64"), axis=norm_dim(dim, x.rank))


@symbolic("index")
def _index(g, n):
    x, indices = n.args
    if len(indices) == 1 and indices[0].dtype not in ("bool", "uint8"):
        return g.op("Gather", g.t(x), g.t(indices[0], "int64"), axis=0)
    raise g.unsupported("only indexing the first dim by one integer tensor has an ONNX form here "
                        "(boolean masks give data-dependent shapes)")


@symbolic("pad")
def _pad(g, n):
    x, pad, mode, value = n.args
    k = len(pad) // 2
    begins, ends = [0] * x.rank, [0] * x.rank
    for i in range(k):  # torch lists (begin, end) pairs from the last dim backwards
        begins[x.rank - 1 - i], ends[x.rank - 1 - i] = pad[2 * i], pad[2 * i + 1]
    onnx_mode = {"constant": "constant", "reflect": "reflect", "replicate": "edge", "circular": "wrap"}.get(mode)
    if onnx_mode is None:
        raise g.unsupported(f"padding mode {mode!r}")
    if onnx_mode == "wrap" and g.opset < 19:
        raise g.unsupported("circular padding", since=19)
    fill = g.scalar(value or 0.0, x.dtype) if onnx_mode == "constant" else None
    return g.op("Pad", g.t(x), g.ints(begins + ends), fill, mode=onnx_mode)


# ---- creation (sizes are literals of the traced program)
def _fill(g, n, value):
    shape = n.out.shape
    return g.op("Expand", g.scalar(value, n.out.dtype), g.ints(shape))


@symbolic("zeros", "empty", "new_zeros", "new_empty")
def _zeros(g, n):
    return _fill(g, n, 0)


@symbolic("ones", "new_ones")
def _ones(g, n):
    return _fill(g, n, 1)


@symbolic("full", "new_full")
def _full(g, n):
    return _fill(g, n, n.args[2] if n.op == "new_full" else n.args[1])


@symbolic("zeros_like", "empty_like", "ones_like", "full_like")
def _fill_like(g, n):
    value = {"zeros_like": 0, "empty_like": 0, "ones_like": 1}.get(n.op)
    if value is None:
        value = n.args[1]
    return g.op("Expand", g.scalar(value, n.out.dtype), g.shape_of(_x(g, n)))


@symbolic("arange", "arange.end")
def _arange(g, n):
    start, end, step = (0, n.args[0], 1) if n.op == "arange.end" else n.args[:3]
    if end is None:
        start, end = 0, start
    count = n.out.shape[0]  # the traced length: torch's own rounding of (end - start) / step
    values = np.asarray(start, np.float64) + np.arange(count, dtype=np.float64) * step
    return g.const(values.astype(DTYPES[n.out.dtype][1]), n.out.dtype)


@symbolic("eye")
def _eye(g, n):
    rows, cols = n.out.shape
    return g.const(np.eye(rows, cols), n.out.dtype)
