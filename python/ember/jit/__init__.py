"""ember.jit: record eager code as a graph (`trace`), run it, save it, and load it again in
Python or in C++ (`ember::jit::load`) without the Python code that made it.

A trace runs the function once on example inputs and records every op it executes. Like
PyTorch's, it does not see Python control flow; unlike PyTorch's, a replay never answers with
something the trace baked in: reading a tensor's values into Python (item(), bool(), tolist(),
numpy()) records a guard that raises if they differ at replay, and reading an input-dependent
shape (size(), shape, numel(), len()) restricts the graph to the traced input shapes. Graphs that
never read shapes run on other batch sizes."""
import io
import os
import tempfile
import warnings

from .. import _C
from ..nn.modules.module import Module
from ..nn.parameter import Parameter
from ._compile import CompiledFunction, OptimizedModule, compile  # noqa: F401
from ._graph import GraphView, flatten, graph_text, input_names, is_pure, record, rebuild, named_state

__all__ = ["trace", "trace_module", "save", "load", "TracedModule", "ScriptModule", "ScriptFunction", "TracerWarning",
           "TracingCheckError", "Error", "is_tracing", "is_scripting", "ignore", "unused", "script", "freeze",
           "optimize_for_inference", "annotate", "script_if_tracing", "export", "interface", "Attribute", "fork",
           "wait", "Future", "set_fusion_strategy", "enable_onednn_fusion", "onednn_fusion_enabled", "strict_fusion"]

_jit = _C._jit


class TracerWarning(Warning):
    """The trace holds something that ties it to the example inputs (a shape or value read in Python)."""


class Error(RuntimeError):
    """Error raised by a scripted or traced program."""
    pass


class TracingCheckError(Error):
    """Replaying the trace on its example inputs did not reproduce the eager result."""


def is_tracing():
    """True while a jit trace is recording."""
    return _jit.tracing()


def is_scripting():
    """True while compiling with script (never in eager code)."""
    return False


def ignore(drop=False, **kwargs):
    """Decorator kept for source compatibility: traced code runs such functions as they are."""
    if callable(drop):
        return drop
    return lambda fn: fn


def unused(fn):
    """Decorator marking a method the compiler skips (returns it unchanged)."""
    return fn


# ---- names TorchScript programs use that mean something in eager code (PyTorch's eager behaviour)
def annotate(the_type, the_value):
    """A type hint for the TorchScript compiler; in eager code, the value itself."""
    return the_value


def script_if_tracing(fn):
    """PyTorch scripts fn when a trace reaches it; Ember has no script compiler: fn runs (and is
    recorded op by op, with guards for what it reads) like any traced code."""
    return fn


def export(fn):
    """Decorator marking a module method for scripting (returns it unchanged)."""
    return fn


def interface(obj):
    """Decorator for an interface class (returns it unchanged)."""
    return obj


class Attribute:
    """jit.Attribute(value, type): in eager code, the value."""

    def __new__(cls, value, type=None):  # noqa: A002
        return value


class Future:
    """What jit.fork returns: here the call has already run (eager code runs it synchronously)."""

    def __init__(self, value):
        self._value = value

    def wait(self):
        return self._value

    def value(self):
        return self._value

    def done(self):
        return True


def fork(func, *args, **kwargs):
    """Run a function now and return its result as a completed Future."""
    return Future(func(*args, **kwargs))


def wait(future):
    """Wait for a Future and return its value."""
    return future.wait()


_fusion = {"strategy": [("STATIC", 2), ("DYNAMIC", 10)], "onednn": False}


def set_fusion_strategy(strategy):
    """Kept for TorchScript programs; ember.compile's fusion does not depend on it. Returns the old one."""
    old, _fusion["strategy"] = _fusion["strategy"], list(strategy)
    return old


def enable_onednn_fusion(enabled):
    """Record whether oneDNN graph fusion is requested (Ember's fuser decides for itself)."""
    _fusion["onednn"] = bool(enabled)


def onednn_fusion_enabled():
    """Whether oneDNN graph fusion is requested."""
    return _fusion["onednn"]


class strict_fusion:
    """TorchScript's assertion that a region fuses; eager code (and Ember's traces) do not check it."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def script(obj, *args, **kwargs):
    """TorchScript compilation: raises NotImplementedError pointing to ember.jit.trace and ember.compile."""
    raise NotImplementedError(
        "ember.jit.script: Ember has no TorchScript compiler; record the model with ember.jit.trace(model, "
        "example_inputs) (Python control flow is resolved at trace time, guarded) or use ember.compile")


class TracedModule(Module):
    """A recorded graph as a module: calling it runs the graph. Parameters are the traced module's own
    tensors (so training them, or load_state_dict, changes what the graph computes); state_dict names
    are the traced module's."""

    def __init__(self, cgraph, structure, module=None):
        super().__init__()
        object.__setattr__(self, "_c", cgraph)
        object.__setattr__(self, "_structure", structure)
        if module is not None:
            # the same parameter/buffer/submodule objects: names and storage are shared
            self._parameters = module._parameters
            self._buffers = module._buffers
            self._modules = module._modules
            self.training = module.training

    # ---- running
    def forward(self, *args, **kwargs):
        if kwargs:
            raise TypeError("a traced graph takes its inputs positionally, as they were traced")
        leaves, structure = flatten(args)
        if self._structure is not None and structure != self._structure:
            raise RuntimeError(
                "ember.jit: this call's non-tensor arguments or nesting differ from the traced ones "
                f"(traced: {self._structure}, got: {structure}); they are baked into the graph: trace again")
        return rebuild(self._c.output_spec, self._c.run(leaves))

    def _apply(self, fn, recurse=True):
        r = super()._apply(fn, recurse)
        self._c.rebind_params(named_state(self))  # .to()/.double() made new tensors: the graph follows
        return r

    # ---- looking at it
    @property
    def graph(self):
        return GraphView(self._c)

    def graph_json(self):
        """The graph as the dict of csrc/ember/jit/README.md (what ember.onnx.export reads)."""
        return self.graph.json()

    def named_tensors(self):
        """{name: tensor} for the graph's parameters and captured constants."""
        return self._c.named_tensors()

    @property
    def inlined_graph(self):
        return self.graph

    @property
    def code(self):
        return str(self.graph)

    def save(self, f, _extra_files=None):
        save(self, f, _extra_files)


ScriptModule = TracedModule
ScriptFunction = TracedModule


def _check_trace(traced, leaves, eager_out, tol):
    from .._comparison import allclose
    from .._tensor import Tensor
    replay = traced._c.run(leaves)
    ref, _ = flatten(eager_out)
    for k, (a, b) in enumerate(zip(replay, ref)):
        if not isinstance(b, Tensor) or a.shape != b.shape or a.dtype != b.dtype or not allclose(
                a.detach(), b.detach(), rtol=tol, atol=tol, equal_nan=True):
            raise TracingCheckError(
                f"ember.jit.trace: output {k} of the replayed graph differs from the eager result on the example "
                "inputs (check_trace=True)")


def trace(func, example_inputs=None, optimize=None, check_trace=True, check_inputs=None, check_tolerance=1e-05,
          strict=True, _force_outplace=False, _module_class=None, _compilation_unit=None, example_kwarg_inputs=None,
          _store_inputs=True):
    """Records func(*example_inputs) (an nn.Module's forward, or a function) as a graph module."""
    if example_kwarg_inputs is not None:
        raise NotImplementedError("ember.jit.trace: example_kwarg_inputs is not supported; pass inputs positionally")
    if example_inputs is None:
        raise TypeError("ember.jit.trace() missing required argument 'example_inputs'")
    from .._tensor import Tensor
    args = (example_inputs,) if isinstance(example_inputs, Tensor) else tuple(example_inputs)
    module = func if isinstance(func, Module) else getattr(func, "__self__", None)
    module = module if isinstance(module, Module) else None
    leaves, structure = flatten(args)
    target = func.forward if isinstance(func, Module) else func
    names = input_names(target, len(leaves)) if len(leaves) == len(args) else [f"input{k}" for k in range(len(leaves))]
    cgraph, out, _ = record(lambda: func(*args), leaves, names, module)
    traced = TracedModule(cgraph, structure, module)
    if cgraph.static_shapes:
        warnings.warn("ember.jit.trace: the traced code read an input-dependent shape into Python; the graph "
                      "only accepts the traced input shapes", TracerWarning, stacklevel=2)
    if cgraph.has_guards:
        warnings.warn("ember.jit.trace: the traced code read tensor values into Python (item(), bool(), ...); "
                      "the graph raises if those values differ at replay", TracerWarning, stacklevel=2)
    if check_trace and is_pure(traced.graph.json()):
        _check_trace(traced, leaves, out, check_tolerance)
    return traced


def trace_module(mod, inputs, **kwargs):
    """torch.jit.trace_module: {method name: example inputs}; Ember traces `forward`."""
    if set(inputs) != {"forward"}:
        raise NotImplementedError("ember.jit.trace_module: only the 'forward' method can be traced")
    return trace(mod, inputs["forward"], **kwargs)


def freeze(mod, preserved_attrs=None, optimize_numerics=True):
    """The module itself: a traced Ember module has no scripted attributes to inline."""
    return mod


def optimize_for_inference(mod, other_methods=None):
    """The module itself: Ember's traced graphs are optimized when they run."""
    return mod


def save(m, f, _extra_files=None):
    """Writes a traced module: graph + parameters in one safetensors file (see csrc/ember/jit/README.md)."""
    if not isinstance(m, TracedModule):
        raise TypeError(f"ember.jit.save: expected a traced module (ember.jit.trace), got {type(m).__name__}")
    if isinstance(f, (str, os.PathLike)):
        m._c.save(os.fspath(f))
        return
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "graph.pt")
        m._c.save(path)
        with open(path, "rb") as src:
            f.write(src.read())


def _module_tree(named, param_names):
    """An nn.Module holding `named` tensors under their dotted names (Parameters where they were)."""
    root = Module()
    for name, t in named.items():
        *path, leaf = name.split(".")
        mod = root
        for part in path:
            if part not in mod._modules:
                mod._modules[part] = Module()
            mod = mod._modules[part]
        if name in param_names:
            mod._parameters[leaf] = Parameter(t.detach(), requires_grad=t.requires_grad)
        else:
            mod._buffers[leaf] = t
    return root


def load(f, map_location=None, _extra_files=None):
    """Reads a graph written by ember.jit.save (or ember::jit::save). Never runs code from the file."""
    if map_location is not None and str(map_location) not in ("cpu", "cpu:0"):
        raise RuntimeError(f"ember.jit.load: map_location={map_location!r} is not available (CPU only)")
    if isinstance(f, (str, os.PathLike)):
        cgraph = _jit.load(os.fspath(f))
    else:
        data = f.read()
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "graph.pt")
            with open(path, "wb") as dst:
                dst.write(data)
            cgraph = _jit.load(path)
    names = cgraph.param_names()
    named = {k: v for k, v in cgraph.named_tensors().items() if k in set(names)}
    holder = _module_tree(named, {k for k, v in named.items() if v.requires_grad})
    traced = TracedModule(cgraph, None, holder)  # inputs: the graph's tensors, positionally
    cgraph.rebind_params(named_state(traced))
    return traced
