"""functional_call: run a module with some of its parameters/buffers replaced by given tensors
(the module is restored afterwards)."""
import contextlib
import warnings

from ... import _C

__all__ = ["functional_call"]


def _untie(module, tensors):
    """``tensors`` extended to every name tied (the same tensor) to a given name; two different
    values for one tied tensor are an error."""
    named = dict(module.named_parameters(remove_duplicate=False))
    named.update(module.named_buffers(remove_duplicate=False))
    groups = {}
    for name, t in named.items():
        groups.setdefault(id(t), set()).add(name)
    tied = {n: names for names in groups.values() if len(names) > 1 for n in names}
    out = dict(tensors)
    for name in tensors:
        names = tied.get(name)
        if names is None:
            continue
        given = names & set(tensors)
        if len(given) > 1 and len({id(tensors[n]) for n in given}) != 1:
            raise ValueError(f"functional_call got multiple values for keys {sorted(given)}, which are tied. "
                             "Consider using tie_weights=False")
        for n in names:
            out.setdefault(n, tensors[name])
    return out


def _owner(module, name):
    *path, attr = name.split(".")
    for p in path:
        module = getattr(module, p)
    return module, attr


@contextlib.contextmanager
def _reparametrize_module(module, tensors, tie_weights=False, strict=False):
    if tie_weights:
        tensors = _untie(module, tensors)
    if strict:
        names = {n for n, _ in module.named_parameters(remove_duplicate=False)}
        names |= {n for n, _ in module.named_buffers(remove_duplicate=False)}
        missing = sorted(names - set(tensors))
        unexpected = sorted(set(tensors) - names)
        if missing or unexpected:
            msgs = []
            if unexpected:
                msgs.append("Unexpected key(s): {}.".format(", ".join(map(repr, unexpected))))
            if missing:
                msgs.append("Missing key(s): {}.".format(", ".join(map(repr, missing))))
            raise RuntimeError("Error(s) in reparametrizing for {}:\n\t{}".format(module._get_name(),
                                                                                 "\n\t".join(msgs)))
    saved = []  # (owner, attr, where, old)
    try:
        for name, t in tensors.items():
            owner, attr = _owner(module, name)
            if attr in owner._parameters:
                saved.append((owner, attr, "p", owner._parameters[attr]))
                owner._parameters[attr] = t  # stored as given: no Parameter wrapping, gradients flow to t
            elif attr in owner._buffers:
                saved.append((owner, attr, "b", owner._buffers[attr]))
                owner._buffers[attr] = t
            else:
                saved.append((owner, attr, "a", owner.__dict__.get(attr, _MISSING)))
                object.__setattr__(owner, attr, t)
        yield
    finally:
        for owner, attr, where, old in reversed(saved):
            if where == "p":
                owner._parameters[attr] = old
            elif where == "b":
                owner._buffers[attr] = old
            elif old is _MISSING:
                owner.__dict__.pop(attr, None)
            else:
                object.__setattr__(owner, attr, old)


_MISSING = object()


def functional_call(module, parameters_and_buffers, args=None, kwargs=None, *, tie_weights=True, strict=False):
    """module(*args, **kwargs) with the named parameters/buffers replaced by the given tensors
    (a dict, or a tuple/list of dicts). tie_weights: a value given for one of several tied names
    serves them all. strict: the names must be exactly the module's."""
    warnings.warn("`torch.nn.utils.stateless.functional_call` is deprecated as of PyTorch 2.0 and will be removed "
                  "in a future version of PyTorch. Please use `torch.func.functional_call` instead which is a "
                  "drop-in replacement.", FutureWarning, stacklevel=2)
    return _functional_call(module, parameters_and_buffers, args, kwargs, tie_weights=tie_weights, strict=strict)


def _functional_call(module, parameters_and_buffers, args=None, kwargs=None, *, tie_weights=True, strict=False):
    """functional_call without the deprecation warning (ember.func.functional_call's body)."""
    if isinstance(parameters_and_buffers, (list, tuple)):
        merged = {}
        for d in parameters_and_buffers:
            dup = set(d) & set(merged)
            if dup:
                raise ValueError(f"{sorted(dup)} appeared in multiple dictionaries; behavior of functional call is "
                                 "ambiguous")
            merged.update(d)
        parameters_and_buffers = merged
    for name, t in parameters_and_buffers.items():
        if not isinstance(t, _C.TensorBase):
            raise TypeError(f"expected a Tensor for '{name}', got {type(t).__name__}")
    if kwargs is None:
        kwargs = {}
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    with _reparametrize_module(module, parameters_and_buffers, tie_weights=tie_weights, strict=strict):
        return module(*args, **kwargs)
