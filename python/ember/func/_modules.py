"""Modules under the function transforms: functional_call, stack_module_state (ensembles for vmap),
replace_all_batch_norm_modules_; and functionalize / debug_unwrap, whose eager meaning is simple in
Ember, which has no functional or wrapper tensors."""
import functools
from collections.abc import Sequence

from .. import _C
from .._C import _ops
from ..nn.modules.batchnorm import _BatchNorm
from ..nn.utils.stateless import _functional_call
from ._pytree import tree_flatten, tree_unflatten


def functional_call(module, parameter_and_buffer_dicts, args=None, kwargs=None, *, tie_weights=True, strict=False):
    """module(*args, **kwargs) with its parameters and buffers replaced, for this call only, by the tensors
    in `parameter_and_buffer_dicts` (a dict by name, or a sequence of dicts with distinct names).
    tie_weights: a value given for one of several tied names serves them all; strict: the names must be
    exactly the module's."""
    if isinstance(parameter_and_buffer_dicts, dict):
        merged = parameter_and_buffer_dicts
    elif isinstance(parameter_and_buffer_dicts, Sequence):
        if not all(isinstance(d, dict) for d in parameter_and_buffer_dicts):
            raise ValueError("Expected all elements of parameter_and_buffer_dicts to be dictionaries")
        counts = {}
        for d in parameter_and_buffer_dicts:
            for k in d:
                counts[k] = counts.get(k, 0) + 1
        repeated = [k for k, n in counts.items() if n > 1]
        if repeated:
            raise ValueError(f"{repeated} appeared in multiple dictionaries; behavior of functional call is ambiguous")
        merged = {k: v for d in parameter_and_buffer_dicts for k, v in d.items()}
    else:
        raise ValueError("Expected parameter_and_buffer_dicts to be a dict, or a list/tuple of dicts, but got "
                         f"{type(parameter_and_buffer_dicts)}")
    return _functional_call(module, merged, args, kwargs, tie_weights=tie_weights, strict=strict)


def _stacked_leaf(tensors, name):
    needs = [t.requires_grad for t in tensors]
    if any(needs) and not all(needs):
        raise RuntimeError(f"Expected {name} from each model to have the same .requires_grad")
    stacked = _ops.stack(list(tensors), 0)
    if all(needs):  # a new leaf an optimizer can update, unrelated to the models' own parameters
        stacked = stacked.detach().requires_grad_()
    return stacked


def stack_module_state(models):
    """(params, buffers): every parameter and buffer of `models` (same class, same train/eval mode),
    stacked along a new first dimension and keyed by name, ready for vmap over functional_call."""
    if len(models) == 0:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if not (all(m.training for m in models) or not any(m.training for m in models)):
        raise RuntimeError("stack_module_state: Expected all models to have the same training/eval mode.")
    if not all(type(m) is type(models[0]) for m in models):
        raise RuntimeError("stack_module_state: Expected all models to be of the same class.")
    all_params = [dict(m.named_parameters()) for m in models]
    all_buffers = [dict(m.named_buffers()) for m in models]
    params = {k: _stacked_leaf([p[k] for p in all_params], k) for k in all_params[0]}
    buffers = {k: _stacked_leaf([b[k] for b in all_buffers], k) for k in all_buffers[0]}
    return params, buffers


def replace_all_batch_norm_modules_(root):
    """In place: every batch-norm module under `root` stops tracking running statistics (they are set to
    None), so it normalizes with batch statistics, which vmap over samples needs. Returns root."""
    for module in root.modules():
        if isinstance(module, _BatchNorm) and module.track_running_stats:
            module.running_mean = None
            module.running_var = None
            module.num_batches_tracked = None
            module.track_running_stats = False
    return root


def functionalize(func, *, remove="mutations"):
    """Returns func run without mutating its inputs in place: it works on copies of the tensor arguments,
    and the inputs it mutated are then updated with one copy each. remove='mutations_and_views' also
    returns outputs that alias nothing; with 'mutations' a view of an unmutated input stays one. In eager
    Ember the values are exactly func's."""
    if remove not in ("mutations", "mutations_and_views"):
        raise RuntimeError(f"functionalize(f, remove='mutations'): received invalid argument for remove={remove}. "
                           "Valid options are:\n     remove='mutations': all inplace and out= operators will be "
                           "removed from the program, and replaced with their out-of-place equivalents.\n     "
                           "remove='mutations_and_views': In addition to the above, all aliasing operators {view} "
                           "will be replaced with their non-aliasing counterparts, {view}_copy.\n")

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        flat, spec = tree_flatten((args, kwargs))
        originals = [x for x in flat if isinstance(x, _C.TensorBase)]
        copies = [x.clone() for x in originals]
        versions = [c._version for c in copies]
        it = iter(copies)
        call_args, call_kwargs = tree_unflatten([next(it) if isinstance(x, _C.TensorBase) else x for x in flat], spec)
        out = func(*call_args, **call_kwargs)
        mutated = [copy._version != version for copy, version in zip(copies, versions)]
        for orig, copy, changed in zip(originals, copies, mutated):
            if changed:
                orig.copy_(copy)
        flat_out, out_spec = tree_flatten(out)
        if remove == "mutations_and_views":
            flat_out = [o.clone() if isinstance(o, _C.TensorBase) else o for o in flat_out]
        else:
            flat_out = [_view_of_original(o, originals, copies, mutated) for o in flat_out]
        return tree_unflatten(flat_out, out_spec)
    return wrapper


def _view_of_original(out, originals, copies, mutated):
    """With remove='mutations', an output that is a view of an input func left unmutated stays a view of
    that input (as torch's regenerated views are); anything else is returned as computed."""
    if not isinstance(out, _C.TensorBase):
        return out
    for orig, copy, changed in zip(originals, copies, mutated):
        if (not changed and out._storage_ptr() == copy._storage_ptr() != 0 and orig.is_contiguous()
                and copy.is_contiguous()):
            return orig.as_strided(tuple(out.shape), out.stride(), orig.storage_offset() + out.storage_offset())
    return out


def debug_unwrap(tensor, *, recurse=True):
    """The plain tensor under transform wrappers. Ember's transforms never wrap tensors, so this is the
    tensor itself."""
    return tensor
