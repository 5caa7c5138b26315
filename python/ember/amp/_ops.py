"""Autocast for the ops Ember writes in Python that PyTorch dispatches as one autocast op
(scaled_dot_product_attention, the 3-d pools, the reflection/replication pads, ...). `autocast_op`
gives such a function the cast policy that ops.yaml's `autocast:` key gives the C++ ops: inside an
enabled CPU autocast region its Tensor arguments are cast by the same rules (ember/autograd/autocast.h)
and its body runs with autocast suspended, as a PyTorch autocast kernel does. Outside a region the
cost is one call into the extension."""
import functools

from .. import _C
from .._tensor import Tensor

# autocast::Policy's values
_POLICIES = {"lower_precision_fp": 0, "fp32": 1, "promote": 2, "disabled": 3}


def _cast_arguments(policy, args, kwargs):
    """The call's Tensor arguments (top level, or in a list/tuple argument) cast in one batch, so
    that `promote` sees them all."""
    found = []

    def collect(v):
        if isinstance(v, Tensor):
            found.append(v)
        elif isinstance(v, (list, tuple)):
            for x in v:
                if isinstance(x, Tensor):
                    found.append(x)

    for v in args:
        collect(v)
    for v in kwargs.values():
        collect(v)
    if not found:
        return args, kwargs
    cast = iter(_C._autocast_cast(policy, found))

    def rebuild(v):
        if isinstance(v, Tensor):
            return next(cast)
        if isinstance(v, (list, tuple)) and any(isinstance(x, Tensor) for x in v):
            return type(v)(next(cast) if isinstance(x, Tensor) else x for x in v)
        return v

    return tuple(rebuild(v) for v in args), {k: rebuild(v) for k, v in kwargs.items()}


def run_autocast_op(policy, fn, *args, **kwargs):
    """fn(*args, **kwargs) as an autocast op of `policy` (call only while _C._autocast_cpu_active())."""
    code = _POLICIES[policy]
    if code != _POLICIES["disabled"]:
        args, kwargs = _cast_arguments(code, args, kwargs)
    _C._autocast_suspend()
    try:
        return fn(*args, **kwargs)
    finally:
        _C._autocast_resume()


def autocast_op(policy):
    """Decorator: the function is an autocast op of `policy` (lower_precision_fp, fp32, promote, disabled)."""
    assert policy in _POLICIES, policy

    def decorate(fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            if not _C._autocast_cpu_active():
                return fn(*args, **kwargs)
            return run_autocast_op(policy, fn, *args, **kwargs)
        return wrapper
    return decorate
