"""ember.compile: trace on the first call per input signature, replay the (fused) graph after.

A signature is the nesting and non-tensor arguments of the call, each tensor's dtype, rank and
requires_grad, grad mode and the module's training flag. Shapes are part of it only when the trace
read a shape into Python (the graph is then static-shaped). A call with no usable graph runs
eagerly while being recorded, so the first call of each signature is exactly eager execution.
What cannot be recorded (backward() inside the function, explicit Generators, tensors reaching ops
by untracked paths, graphs that both guard on values and mutate state) runs eagerly for good."""
import functools
import json
import weakref

from .. import _C
from ..nn.modules.module import Module
from ._graph import flatten, input_names, mutates, record, rebuild

_jit = _C._jit
CACHE_SIZE_LIMIT = 8  # graphs per signature (torch._dynamo.config.cache_size_limit)
# ember.compiler's controls: the stance every compiled function follows, and every one made (for reset)
STANCE = ["default"]
COMPILED = weakref.WeakSet()
_EAGER = object()


def _fuse(cgraph):
    fused = getattr(cgraph, "fused", None)
    return fused() if fused is not None else cgraph


class _Entry:
    __slots__ = ("graph", "shapes", "spec", "state_ids")

    def __init__(self, graph, shapes, state_ids):
        self.graph = graph
        self.shapes = shapes  # None: any shape
        self.spec = graph.output_spec
        self.state_ids = state_ids


class CompiledFunction:
    """The callable ember.compile returns for a function (and uses for a module's forward)."""

    def __init__(self, fn, module=None, fullgraph=False, disable=False, dynamic=None):
        self._fn = fn
        self._dynamic = dynamic  # False: one graph per input shape (torch's dynamic=False)
        self._module = module
        self._fullgraph = fullgraph
        self._disable = disable
        self._cache = {}
        self.stats = {"traces": 0, "graph_calls": 0, "eager_calls": 0}
        self.eager_reasons = []
        functools.update_wrapper(self, fn, updated=())
        COMPILED.add(self)

    def _state_ids(self):
        if self._module is None:
            return ()
        return tuple(id(t) for t in self._module.parameters()) + tuple(id(b) for b in self._module.buffers())

    def __call__(self, *args, **kwargs):
        if self._disable or _jit.tracing():  # inside another trace: just record what runs
            return self._fn(*args, **kwargs)
        stance = STANCE[0]
        if stance == "force_eager":
            return self._fn(*args, **kwargs)
        leaves, structure = flatten((args, kwargs))
        key = (structure, tuple((t.dtype, t.dim(), t.requires_grad) for t in leaves), _C.is_grad_enabled(),
               self._module.training if self._module is not None else None,
               tuple(tuple(t.shape) for t in leaves) if self._dynamic is False else None)
        try:
            hash(key)
        except TypeError:  # an unhashable non-tensor argument: nothing to key a graph on
            return self._eager(args, kwargs, "unhashable non-tensor argument")
        entries = self._cache.setdefault(key, [])
        state = self._state_ids()
        shapes = None
        for e in entries:
            if e is _EAGER:
                self.stats["eager_calls"] += 1
                return self._fn(*args, **kwargs)
            if e.state_ids != state:
                continue  # parameters were replaced (.to(), assignment): that graph holds the old ones
            if e.shapes is not None:
                if shapes is None:
                    shapes = tuple(tuple(t.shape) for t in leaves)
                if e.shapes != shapes:
                    continue
            try:
                outs = e.graph.run(leaves)
            except RuntimeError as err:
                if str(err).startswith("ember.jit: guard failed"):
                    continue  # another branch of data-dependent control flow
                raise
            self.stats["graph_calls"] += 1
            return rebuild(e.spec, outs)
        if len(entries) >= CACHE_SIZE_LIMIT:
            return self._eager(args, kwargs, f"more than {CACHE_SIZE_LIMIT} graphs for one signature")
        if self.stats["traces"] and stance != "default":  # a recompile under a stance that forbids it
            if stance == "fail_on_recompile":
                raise RuntimeError(f"Detected recompile when ember.compile stance is 'fail_on_recompile' "
                                   f"({getattr(self._fn, '__qualname__', self._fn)})")
            return self._fn(*args, **kwargs)
        return self._trace(args, kwargs, leaves, entries, state)

    def _eager(self, args, kwargs, why):
        if why not in self.eager_reasons:
            self.eager_reasons.append(why)
        self.stats["eager_calls"] += 1
        return self._fn(*args, **kwargs)

    def _trace(self, args, kwargs, leaves, entries, state):
        names = input_names(self._fn, len(leaves)) if not kwargs and len(leaves) == len(args) else \
            [f"input{k}" for k in range(len(leaves))]
        cgraph, out, reason = record(lambda: self._fn(*args, **kwargs), leaves, names, self._module,
                                     strict=self._fullgraph)
        if cgraph is None:  # the call ran eagerly and completed; only its recording is unusable
            entries.append(_EAGER)
            self.eager_reasons.append(reason)
            return out
        self.stats["traces"] += 1
        if cgraph.has_guards and mutates(json.loads(cgraph.to_json())):
            # a failed guard mid-graph would leave half-applied mutations: keep this one eager
            entries.append(_EAGER)
            self.eager_reasons.append("data-dependent control flow in a function that mutates state")
            return out
        shapes = tuple(tuple(t.shape) for t in leaves) if cgraph.static_shapes else None
        entries.append(_Entry(_fuse(cgraph), shapes, state))
        return out


class OptimizedModule(Module):
    """What ember.compile(module) returns: calls go through the compiled forward; the original
    module is `_orig_mod` (so state_dict keys carry the `_orig_mod.` prefix, as PyTorch's do)."""

    def __init__(self, mod, compiled):
        super().__init__()
        self._orig_mod = mod
        object.__setattr__(self, "_compiled", compiled)

    def forward(self, *args, **kwargs):
        return self._compiled(*args, **kwargs)

    def __getattr__(self, name):
        try:
            return super().__getattr__(name)
        except AttributeError:
            return getattr(self._modules["_orig_mod"], name)


def compile(model=None, *, fullgraph=False, dynamic=None, backend="inductor", mode=None, options=None,
            disable=False):
    """torch.compile's signature. `backend` and `mode` name PyTorch's compilers; Ember has one (trace +
    fusion), used whatever they say. dynamic=False keys graphs on input shapes too; otherwise a graph
    serves every shape its ops accept (unless the trace read a shape). Returns a callable (for a
    function) or an OptimizedModule."""
    if model is None:
        return lambda m: compile(m, fullgraph=fullgraph, dynamic=dynamic, backend=backend, mode=mode,
                                 options=options, disable=disable)
    if not callable(model):
        raise RuntimeError(f"ember.compile: expected a callable or an nn.Module, got {type(model).__name__}")
    if isinstance(model, Module):
        return OptimizedModule(model, CompiledFunction(model, model, fullgraph, disable, dynamic))
    owner = getattr(model, "__self__", None)
    return CompiledFunction(model, owner if isinstance(owner, Module) else None, fullgraph, disable, dynamic)
