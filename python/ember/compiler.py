"""ember.compiler: torch.compiler's controls over ember.compile (trace, fuse, replay).

Ember's compiler records a call while running it eagerly and replays the graph afterwards, so
`is_compiling()` is true exactly while a call is being recorded; `disable` makes a function's
callers run eagerly (replaying would skip its Python side effects); `set_stance` chooses between
compiled and eager execution; `reset` drops every recorded graph."""
import contextlib
import functools

from . import _C
from .jit import _compile

__all__ = ["compile", "reset", "allow_in_graph", "assume_constant_result", "disable", "set_stance",
           "cudagraph_mark_step_begin", "is_compiling", "is_dynamo_compiling"]

_jit = _C._jit
_STANCES = ("default", "force_eager", "eager_on_recompile", "fail_on_recompile")
_stance = _compile.STANCE  # shared with every compiled function


def compile(*args, **kwargs):
    """ember.compile (torch.compiler.compile is torch.compile)."""
    return _compile.compile(*args, **kwargs)


def is_compiling():
    """True while ember.compile records a call (the code is running to be traced)."""
    return bool(_jit.tracing())


def is_dynamo_compiling():
    """As is_compiling: Ember has one compiler."""
    return is_compiling()


def reset():
    """Forget every graph ember.compile recorded: the next call of each compiled function traces again."""
    for fn in list(_compile.COMPILED):
        fn._cache.clear()


def allow_in_graph(fn):
    """Ember records what a function's ops do whatever the function is: returned unchanged."""
    return fn


def assume_constant_result(fn):
    """Returned unchanged: Ember records the function's ops, so its result is recomputed on replay."""
    return fn


def disable(fn=None, recursive=True, *, reason=None):
    """A function that never runs inside a recorded graph: a compiled call that reaches it runs
    eagerly from then on (its Python side effects happen on every call). As a decorator, or
    disable(fn)."""
    if fn is None:
        return functools.partial(disable, recursive=recursive, reason=reason)
    why = "a function marked ember.compiler.disable ran" + (f" ({reason})" if reason else "")

    @functools.wraps(fn)
    def run_eagerly(*args, **kwargs):
        if _jit.tracing():
            _jit.untraceable(why)
        return fn(*args, **kwargs)
    run_eagerly._ember_compiler_disabled = True
    return run_eagerly


class _Stance(contextlib.ContextDecorator):
    def __init__(self, stance):
        self.stance, self.prev = stance, _stance[0]
        _stance[0] = stance  # set_stance(...) called plainly takes effect at once

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        _stance[0] = self.prev
        return False


def set_stance(stance="default", *, skip_guard_eval_unsafe=False, force_backend=None):
    """How compiled functions run: "default" (trace, replay), "force_eager" (always eagerly),
    "eager_on_recompile" (replay graphs already recorded, run eagerly instead of tracing anew),
    "fail_on_recompile" (raise instead of tracing anew). A function call, a context manager or a
    decorator, as in torch."""
    if stance not in _STANCES:
        raise RuntimeError(f"invalid stance {stance!r}: expected one of {', '.join(_STANCES)}")
    if force_backend is not None and stance != "default":
        raise RuntimeError("non-default stance cannot have force_backend set")
    return _Stance(stance)


def cudagraph_mark_step_begin():
    """Marks the start of a training step for CUDA-graph trees; Ember's compiler makes no CUDA graphs,
    so there is nothing to mark."""
