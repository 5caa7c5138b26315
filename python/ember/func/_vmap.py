"""vmap: the function applied to each slice of the batched inputs, results stacked at out_dims.

Ember has no batching rules, so this is the loop torch's vmap is specified to be equivalent to; it
composes with itself and with the autodiff transforms (per-sample gradients: vmap(grad(f))), and
stacking is differentiable, so grad of vmap works too. What a loop cannot see, and torch rejects:
.item() or data-dependent control flow on a batched tensor (here they simply run per sample) and in-place
writes of batched values into unbatched tensors (here each sample's write lands in turn).
An output with out_dims None must not vary over the batch: here, it must not be a view of a mapped input
and every sample must return equal values (torch knows from its batched tensors, so it also rejects
a batched value that happens to be constant).
randomness: 'different' is the loop itself; 'same' replays the default generator's state for every
sample; 'error' compares the default generator's state around each call, so a random op drawing from
it raises (one drawing from an explicit Generator object is not seen).
"""
import functools

from .. import _C
from .._C import _ops
from ._pytree import broadcast_prefix, tree_flatten, tree_unflatten

_RANDOMNESS = ("error", "different", "same")


def _check_randomness(randomness):
    if randomness not in _RANDOMNESS:
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or 'same'. Got {randomness}")


class _RandomnessGuard:
    """Around one call of the mapped function: raise in 'error' mode if it drew random numbers."""

    def __init__(self, randomness):
        self.randomness = randomness

    def __enter__(self):
        if self.randomness == "error":
            self.state = _C.default_generator.get_state()
        return self

    def __exit__(self, exc_type, *exc):
        if self.randomness == "error" and exc_type is None:
            now = _C.default_generator.get_state()
            if not bool((now == self.state).all()):
                _C.default_generator.set_state(self.state)
                raise RuntimeError("vmap: called random operation while in randomness error mode. Please either use "
                                   "the 'same' or 'different' randomness flags on vmap or perform the randomness "
                                   "operation out of vmap")
        return False


def _name(func):
    return getattr(func, "__name__", repr(func))


def vmap(func, in_dims=0, out_dims=0, randomness="error", *, chunk_size=None):
    """Returns a function that maps `func` over dimension `in_dims` of its inputs (an int, or a tuple
    nested like the positional arguments, None for an argument not mapped) and stacks the results at
    `out_dims`. Keyword arguments are passed unmapped to every call."""
    _check_randomness(randomness)
    if not (chunk_size is None or chunk_size > 0):
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got {chunk_size})")

    @functools.wraps(func)
    def wrapped(*args, **kwargs):
        return _vmap_call(func, in_dims, out_dims, randomness, args, kwargs)
    return wrapped


def _flat_in_dims(func, in_dims, args):
    where = f"vmap({_name(func)}, in_dims={in_dims}, ...)(<inputs>)"
    if not isinstance(in_dims, (int, tuple)):
        raise ValueError(f"{where}: expected `in_dims` to be int or a (potentially nested) tuple matching the "
                         f"structure of inputs, got: {type(in_dims)}.")
    if not args:
        raise ValueError(f"vmap({_name(func)})(<inputs>): got no inputs. Maybe you forgot to add inputs, or you are "
                         "trying to vmap over a function with no inputs. The latter is unsupported.")
    flat_args, args_spec = tree_flatten(args)
    flat_dims = broadcast_prefix(in_dims, args_spec)
    if flat_dims is None:
        raise ValueError(f"{where}: in_dims is not compatible with the structure of `inputs`. in_dims has structure "
                         f"{tree_flatten(in_dims)[1]} but inputs has structure {args_spec}.")
    sizes = []
    for i, (arg, dim) in enumerate(zip(flat_args, flat_dims)):
        if dim is None:
            continue
        if not isinstance(dim, int):
            raise ValueError(f"{where}: Got in_dim={dim} for an input but in_dim must be either an integer dimension "
                             "or None.")
        if isinstance(dim, bool):  # torch fails the same way, indexing sizes with a bool
            raise TypeError("size(): argument 'dim' (position 1) must be int, not bool")
        if not isinstance(arg, _C.TensorBase):
            raise ValueError(f"{where}: Got in_dim={dim} for an input but the input is of type {type(arg)}. We cannot "
                             "vmap over non-Tensor arguments, please use None as the respective in_dim")
        rank = arg.dim()
        if not -rank <= dim < rank:
            raise ValueError(f"{where}: Got in_dim={dim} for some input, but that input is a Tensor of dimensionality "
                             f"{rank} so expected in_dim to satisfy -{rank} <= in_dim < {rank}.")
        flat_dims[i] = dim % rank
        sizes.append(arg.shape[dim])
    if not sizes:
        raise ValueError("vmap: Expected at least one Tensor to vmap over")
    if any(s != sizes[0] for s in sizes):
        raise ValueError("vmap: Expected all tensors to have the same size in the mapped dimension, got sizes "
                         f"{sizes} for the mapped dimension")
    return flat_args, args_spec, flat_dims, sizes[0]


def _sample(flat_args, flat_dims, i):
    """The i-th slice of every mapped argument (None i: a zero-filled stand-in for an empty batch)."""
    out = []
    for arg, dim in zip(flat_args, flat_dims):
        if dim is None:
            out.append(arg)
        elif i is None:
            shape = tuple(arg.shape[:dim]) + tuple(arg.shape[dim + 1:])
            out.append(_ops.zeros(shape, dtype=arg.dtype, device=arg.device))
        else:
            out.append(arg.select(dim, i))
    return out


def _vmap_call(func, in_dims, out_dims, randomness, args, kwargs):
    flat_args, args_spec, flat_dims, size = _flat_in_dims(func, in_dims, args)
    start = _C.default_generator.get_state() if randomness == "same" else None
    results = []
    # An empty batch still runs func once, on zeros shaped like one sample, to learn the output shapes.
    for i in (range(size) if size else [None]):
        if start is not None:
            _C.default_generator.set_state(start)
        with _RandomnessGuard(randomness):
            results.append(func(*tree_unflatten(_sample(flat_args, flat_dims, i), args_spec), **kwargs))
    mapped = {a._storage_ptr() for a, d in zip(flat_args, flat_dims) if d is not None} - {0}  # 0: no memory
    return _stack_outputs(func, results, out_dims, size, mapped)


def _stack_outputs(func, results, out_dims, size, mapped_storages):
    flats = [tree_flatten(r) for r in results]
    out_spec = flats[0][1]
    if any(spec != out_spec for _, spec in flats):
        raise ValueError(f"vmap({_name(func)}, ...): `{_name(func)}` returned outputs of different structures for "
                         "different samples; every sample must return the same structure")
    if not (out_dims is None or isinstance(out_dims, (int, tuple, list))):
        raise ValueError(f"vmap({_name(func)}, ..., out_dims={out_dims}): `out_dims` must be an int, None or a python "
                         "collection of ints representing where in the outputs the vmapped dimension should appear.")
    if isinstance(out_dims, tuple) and len(out_dims) == 1 and out_spec.is_leaf():
        out_dims = out_dims[0]  # torch reads (d,) for a single output as d
    flat_out_dims = broadcast_prefix(out_dims, out_spec)
    if flat_out_dims is None:
        raise ValueError(f"vmap({_name(func)}, ..., out_dims={out_dims})(<inputs>): out_dims is not compatible with "
                         f"the structure of `outputs`. out_dims has structure {tree_flatten(out_dims)[1]} but outputs "
                         f"has structure {out_spec}.")
    stacked = []
    for j, dim in enumerate(flat_out_dims):
        per_sample = [leaves[j] for leaves, _ in flats]
        first = per_sample[0]
        if dim is None:
            stacked.append(_unmapped(func, first, per_sample, mapped_storages))
            continue
        if not isinstance(first, _C.TensorBase):
            raise ValueError(f"vmap({_name(func)}, ...): `{_name(func)}` must only return Tensors, got type "
                             f"{type(first)}. Did you mean to set out_dims= to None for output?")
        out = _ops.stack(per_sample, int(dim))
        stacked.append(out if size else out.narrow(dim, 0, 0))
    return tree_unflatten(stacked, out_spec)


def _unmapped(func, first, per_sample, mapped_storages):
    """An output with out_dim None: it must not vary over the batch. Without batched tensors to tell,
    an output counts as unmapped when it is no view of a mapped input and every sample returned the
    same object or equal values."""
    if not isinstance(first, _C.TensorBase):
        return first
    if first._storage_ptr() in mapped_storages:
        raise ValueError(f"vmap({_name(func)}, ...): `{_name(func)}` can not return a BatchedTensor when out_dim "
                         "is None")
    for other in per_sample[1:]:
        same = other is first or other._is_same(first) or (
            isinstance(other, _C.TensorBase) and other.shape == first.shape and other.dtype == first.dtype
            and bool((other == first).all()))
        if not same:
            raise ValueError(f"vmap({_name(func)}, ...): `{_name(func)}` can not return a BatchedTensor when out_dim "
                             "is None")
    return first
