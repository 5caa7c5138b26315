"""Activation checkpointing: run a segment without keeping its intermediate tensors and recompute it
(with the same random state) when the backward pass reaches it.

Reentrant (use_reentrant=True): one node whose backward recomputes the segment and runs a nested
backward through it (gradients of the segment's parameters accumulate there). Non-reentrant: one
node whose inputs are the tensors of (args, kwargs) plus the grad-requiring tensors found through
the callable (module parameters, closures); its backward recomputes the segment and returns all
their gradients, so autograd.grad and double backward work; keyword arguments and nested
structures are accepted.
"""
import contextlib
import enum
import threading
import types
import warnings

from .. import _C
from .._random import get_rng_state, set_rng_state
from ..autograd.function import Function
from ..autograd.grad_mode import enable_grad, no_grad
from ..autograd.graph import _reached_leaves

__all__ = ["checkpoint", "checkpoint_sequential", "CheckpointError", "CheckpointFunction", "check_backward_validity",
           "detach_variable", "get_device_states", "set_device_states", "noop_context_fn", "set_checkpoint_early_stop",
           "DefaultDeviceType", "set_checkpoint_debug_enabled", "CheckpointPolicy", "SelectiveCheckpointContext",
           "create_selective_checkpoint_contexts", "SAC_IGNORED_OPS", "GraphExecGroup"]

_early_stop = True


@contextlib.contextmanager
def set_checkpoint_early_stop(enable):
    """Whether non-reentrant recomputation may stop once it has what backward needs. Ember always
    recomputes the whole segment (one node per segment), so this only records the setting."""
    global _early_stop
    prev, _early_stop = _early_stop, enable
    try:
        yield
    finally:
        _early_stop = prev


_checkpoint_debug_enabled = None


@contextlib.contextmanager
def set_checkpoint_debug_enabled(enabled):
    """Overrides checkpoint's ``debug`` argument inside the block (None defers to the argument).
    Ember's CheckpointError reports the forward and recomputed metadata either way, so the setting
    is only recorded."""
    global _checkpoint_debug_enabled
    prev, _checkpoint_debug_enabled = _checkpoint_debug_enabled, enabled
    try:
        yield
    finally:
        _checkpoint_debug_enabled = prev


class DefaultDeviceType:
    """The device type whose random states checkpoint saves when no argument names one: set_device_type
    sets it ("cuda" by default); unset, it is the accelerator's type, or "cpu" without one."""

    _default_device_type = None

    @staticmethod
    def set_device_type(device="cuda"):
        DefaultDeviceType._default_device_type = device

    @staticmethod
    def get_device_type():
        if not DefaultDeviceType._default_device_type:
            from .. import accelerator
            acc = accelerator.current_accelerator(True)
            DefaultDeviceType._default_device_type = acc.type if acc else "cpu"
        return DefaultDeviceType._default_device_type


def get_device_states(*args):
    """(device ids, random states) of the GPUs the arguments' tensors (nested in lists, tuples and dicts
    too) live on, as torch: the CPU's random state checkpoint keeps apart."""
    devices = []

    def visit(x):
        if isinstance(x, _C.TensorBase):
            if x.device.type == "cuda" and x.get_device() not in devices:
                devices.append(x.get_device())
        elif isinstance(x, (list, tuple)):
            for v in x:
                visit(v)
        elif isinstance(x, dict):
            for v in x.values():
                visit(v)

    visit(args)
    from .. import cuda
    return devices, [cuda.get_rng_state(d) for d in devices]


def set_device_states(devices, states, *, device_type=None):
    """Restore the random state of each device of ``device_type`` (default:
    DefaultDeviceType.get_device_type()) from ``states``, through ember.<device_type>'s device
    context and set_rng_state, as torch does (ember.cpu has no device context, as torch.cpu has
    none); a "meta" type has none to restore."""
    if device_type is None:
        device_type = DefaultDeviceType.get_device_type()
    if device_type == "meta":
        return
    from .. import cpu, cuda
    device_module = {"cpu": cpu, "cuda": cuda}.get(device_type)
    if device_module is None:
        raise AttributeError(f"module 'ember' has no attribute '{device_type}'")
    for device, state in zip(devices, states):
        with device_module.device(device):
            device_module.set_rng_state(state)


class CheckpointError(RuntimeError):
    """Raised when the recomputed forward does not match the original one."""


def noop_context_fn():
    """The default context_fn of checkpoint: two null contexts."""
    return contextlib.nullcontext(), contextlib.nullcontext()


def detach_variable(inputs):
    """Detached copies of a tuple's tensors, each keeping its requires_grad."""
    if not isinstance(inputs, tuple):
        raise RuntimeError(f"Only tuple of tensors is supported. Got Unsupported input type: {type(inputs).__name__}")
    out = []
    for inp in inputs:
        if not isinstance(inp, _C.TensorBase):
            out.append(inp)
            continue
        x = inp.detach()
        x.requires_grad = inp.requires_grad
        out.append(x)
    return tuple(out)


def check_backward_validity(inputs):
    """Warn when no input of a checkpointed function requires grad."""
    if not any(isinstance(inp, _C.TensorBase) and inp.requires_grad for inp in inputs):
        warnings.warn("None of the inputs have requires_grad=True. Gradients will be None")


# ---------------------------------------------------------------- nested structures

def _flatten(obj, leaves):
    """A spec of ``obj`` with its tensors replaced by their index in ``leaves``."""
    if isinstance(obj, _C.TensorBase):
        leaves.append(obj)
        return ("T", len(leaves) - 1)
    if isinstance(obj, (list, tuple)) and not hasattr(obj, "_fields"):
        return (type(obj), [_flatten(o, leaves) for o in obj])
    if isinstance(obj, tuple):  # namedtuple
        return ("N", type(obj), [_flatten(o, leaves) for o in obj])
    if isinstance(obj, dict):
        return (type(obj), [(k, _flatten(v, leaves)) for k, v in obj.items()])
    return ("C", obj)


def _unflatten(spec, leaves):
    kind = spec[0]
    if kind == "T":
        return leaves[spec[1]]
    if kind == "C":
        return spec[1]
    if kind == "N":
        return spec[1](*[_unflatten(s, leaves) for s in spec[2]])
    if issubclass(kind, dict):
        return kind((k, _unflatten(s, leaves)) for k, s in spec[1])
    return kind(_unflatten(s, leaves) for s in spec[1])


# ---------------------------------------------------------------- the recomputing node

class _RNGState:
    """The random state at the segment's forward (the CPU's, and each GPU's the inputs live on, whose
    samplers draw from their own generators); restored (then undone) around the recompute."""

    def __init__(self, preserve, args=()):
        self.state = get_rng_state() if preserve else None
        self.devices, self.device_states = get_device_states(*args) if preserve else ([], [])

    @contextlib.contextmanager
    def fork(self):
        if self.state is None:
            yield
            return
        from .. import cuda
        outer = get_rng_state()
        outer_devices = [cuda.get_rng_state(d) for d in self.devices]
        set_rng_state(self.state)
        for d, s in zip(self.devices, self.device_states):
            cuda.set_rng_state(s, d)
        try:
            yield
        finally:
            set_rng_state(outer)
            for d, s in zip(self.devices, outer_devices):
                cuda.set_rng_state(s, d)


class CheckpointFunction(Function):
    """The reentrant checkpoint node: apply(run_function, preserve_rng_state, *args)."""

    @staticmethod
    def forward(ctx, run_function, preserve_rng_state, *args):
        check_backward_validity(args)
        ctx.run_function = run_function
        ctx.rng = _RNGState(preserve_rng_state, args)
        ctx.inputs = [None if isinstance(a, _C.TensorBase) else a for a in args]
        ctx.tensor_indices = [i for i, a in enumerate(args) if isinstance(a, _C.TensorBase)]
        ctx.save_for_backward(*[a for a in args if isinstance(a, _C.TensorBase)])
        with no_grad():
            return run_function(*args)

    @staticmethod
    def backward(ctx, *grads):
        inputs = list(ctx.inputs)
        for i, t in zip(ctx.tensor_indices, ctx.saved_tensors):
            inputs[i] = t
        detached = detach_variable(tuple(inputs))
        with ctx.rng.fork(), enable_grad():
            outputs = ctx.run_function(*detached)
        if isinstance(outputs, _C.TensorBase):
            outputs = (outputs,)
        outs, gs = [], []
        for o, g in zip(outputs, grads):
            if isinstance(o, _C.TensorBase) and o.requires_grad and g is not None:
                outs.append(o)
                gs.append(g)
        if not outs:
            raise RuntimeError("none of output has requires_grad=True, this checkpoint() is not necessary")
        from ..autograd import backward
        backward(outs, gs)
        return (None, None) + tuple(d.grad if isinstance(d, _C.TensorBase) else None for d in detached)


class _NonReentrantCheckpoint(Function):
    """apply(state, *inputs, *params): ``inputs`` are the tensors of (args, kwargs), ``params`` the
    grad-requiring tensors the segment reaches through its callable (module parameters, closure
    tensors); outputs are the segment's output tensors. Backward recomputes the segment and returns
    the gradients of both, so autograd.grad, hooks and double backward see ordinary inputs."""

    @staticmethod
    def forward(ctx, state, *tensors):
        ctx.state = state
        ctx.save_for_backward(*tensors[:state.n_inputs])
        with no_grad(), state.forward_ctx:
            out = state.call(tensors[:state.n_inputs])
        leaves = []
        state.out_spec = _flatten(out, leaves)
        state.out_meta = [(t.shape, t.dtype) for t in leaves]
        ctx.mark_non_differentiable(*[t for t in leaves if not t.is_floating_point()])
        # an output that is an input would alias the input's autograd history
        return tuple(t.clone() if any(t is a for a in tensors) else t for t in leaves)

    @staticmethod
    def backward(ctx, *grads):
        state = ctx.state
        create_graph = _C.is_grad_enabled()
        group = _graph_exec_group.current
        kept = getattr(state, "recomputed", None)
        if group is not None and kept is not None and kept[0] is group:
            inputs, leaves = kept[1], kept[2]
        else:
            inputs, leaves = _recompute(state, tuple(ctx.saved_tensors), create_graph)
            if group is not None:
                state.recomputed = (group, inputs, leaves)
                group._segments.append(state)
        outs, gs = [], []
        for o, g in zip(leaves, grads):
            if o.requires_grad and g is not None:
                outs.append(o)
                gs.append(g)
        wanted = [t for t in inputs if t.requires_grad] + list(state.params)
        others = [] if create_graph or not outs else _other_leaves(outs, wanted)
        result = {}
        if outs and (wanted or others):
            from ..autograd import grad as _grad
            got = _grad(outs, wanted + others, gs, allow_unused=True, create_graph=create_graph,
                        retain_graph=True if group is not None else None)
            for t, g in zip(wanted, got):
                result[id(t)] = g
            # leaves the callable reached that the scan did not find: accumulate as backward would
            with no_grad():
                for t, g in zip(others, got[len(wanted):]):
                    if g is not None:
                        t.grad = g if t.grad is None else t.grad + g
        grads_in = tuple(result.get(id(t)) if t.requires_grad else None for t in inputs)
        return (None,) + grads_in + tuple(result.get(id(p)) for p in state.params)


def _recompute(state, saved, create_graph):
    """The segment run again on its saved inputs: (the inputs it ran on, its output tensors)."""
    # double backward needs the recomputation attached to the real inputs
    inputs = saved if create_graph else detach_variable(saved)
    with state.rng.fork(), enable_grad(), state.recompute_ctx:
        out = state.call(inputs)
    leaves = []
    _flatten(out, leaves)
    if state.determinism_check == "default":
        meta = [(t.shape, t.dtype) for t in leaves]
        if meta != state.out_meta:
            raise CheckpointError("torch.utils.checkpoint: Recomputed values for the following tensors have "
                                  f"different metadata than during the forward pass.\nforward: {state.out_meta}"
                                  f"\nrecompute: {meta}")
    return inputs, leaves


def _other_leaves(outs, known):
    """The grad-requiring leaf tensors the graph of ``outs`` reaches, other than ``known``."""
    found = []
    for var in _reached_leaves(o.grad_fn for o in outs if o.grad_fn is not None):
        if var.requires_grad and not any(var._is_same(k) for k in known) and not any(var._is_same(f) for f in found):
            found.append(var)
    return found


def _segment_tensors(fn, out, seen, depth=0):
    """Collect into ``out`` the grad-requiring tensors a callable uses: a Module's parameters, a bound
    method's object, functools.partial arguments, closure cells and the globals its code names."""
    from ..nn.modules.module import Module
    if depth > 4 or id(fn) in seen:
        return
    seen.add(id(fn))
    if isinstance(fn, _C.TensorBase):
        if fn.requires_grad and fn.is_leaf:
            out.append(fn)
        return
    if isinstance(fn, Module):
        out.extend(p for p in fn.parameters() if p.requires_grad)
        return
    if isinstance(fn, (list, tuple, set)):
        for f in fn:
            _segment_tensors(f, out, seen, depth + 1)
        return
    if isinstance(fn, dict):
        for f in fn.values():
            _segment_tensors(f, out, seen, depth + 1)
        return
    if isinstance(fn, types.MethodType):
        _segment_tensors(fn.__self__, out, seen, depth + 1)
        _segment_tensors(fn.__func__, out, seen, depth + 1)
        return
    func = getattr(fn, "func", None)  # functools.partial
    if func is not None and hasattr(fn, "args"):
        for f in (func, *fn.args, *getattr(fn, "keywords", {}).values()):
            _segment_tensors(f, out, seen, depth + 1)
        return
    if isinstance(fn, types.FunctionType):
        for cell in fn.__closure__ or ():
            try:
                _segment_tensors(cell.cell_contents, out, seen, depth + 1)
            except ValueError:  # empty cell
                pass
        g = fn.__globals__
        for name in fn.__code__.co_names:
            v = g.get(name)
            if v is not None and not isinstance(v, (types.ModuleType, type)):
                _segment_tensors(v, out, seen, depth + 1)
        return
    if not isinstance(fn, type) and callable(fn) and hasattr(fn, "__dict__"):
        for v in vars(fn).values():
            _segment_tensors(v, out, seen, depth + 1)


class _SegmentState:
    pass


class _GroupState(threading.local):
    current = None


_graph_exec_group = _GroupState()


class GraphExecGroup:
    """Backward calls inside one instance of this context recompute each non-reentrant checkpoint at
    most once: the first recomputation is kept (with its graph) for the later calls of the block,
    which must reach disjoint parts of the segment's outputs. Groups do not nest."""

    def __enter__(self):
        if _graph_exec_group.current is not None:
            raise RuntimeError(f"GraphExecGroup contexts cannot be nested. Already inside group "
                               f"{_graph_exec_group.current}")
        self._segments = []
        _graph_exec_group.current = self
        return self

    def __exit__(self, *exc):
        _graph_exec_group.current = None
        # the kept recomputations (and their graphs) are freed with the group
        for state in self._segments:
            state.recomputed = None
        self._segments = []

    @classmethod
    def _get_current_group(cls):
        return _graph_exec_group.current


class CheckpointPolicy(enum.Enum):
    """What selective checkpointing does with an op's output: save it in forward (MUST_/PREFER_SAVE),
    recompute it in backward (MUST_/PREFER_RECOMPUTE) or save it offloaded to the CPU
    (MUST_/PREFER_CPU_OFFLOAD). MUST_ forms are not to be overridden by compilers."""
    MUST_SAVE = 0
    PREFER_SAVE = 1
    MUST_RECOMPUTE = 2
    PREFER_RECOMPUTE = 3
    MUST_CPU_OFFLOAD = 4
    PREFER_CPU_OFFLOAD = 5


class SelectiveCheckpointContext:
    """What a selective-checkpoint policy function receives first: is_recompute (always False: the
    policy is consulted in forward only) and the op's output."""

    def __init__(self, *, is_recompute, op_output=None):
        self.is_recompute = is_recompute
        self.op_output = op_output


# ops whose outputs are metadata, never worth a policy decision; Ember has no op-overload objects,
# so no op can be named in a policy list and the set is empty
SAC_IGNORED_OPS = set()


class _SelectiveCheckpointMode:
    """One of the two contexts create_selective_checkpoint_contexts returns (forward, recompute).
    Ember's ops run in C++ with no per-op dispatch hook for Python, so the policy cannot be asked
    op by op: every op of the segment is recomputed, i.e. PREFER_RECOMPUTE throughout. Values and
    gradients are the same as under any policy; only the memory/compute trade-off differs."""

    def __init__(self, policy_fn, storage, allow_cache_entry_mutation=False):
        self.policy_fn = policy_fn
        self.storage = storage
        self.allow_cache_entry_mutation = allow_cache_entry_mutation

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def create_selective_checkpoint_contexts(policy_fn_or_list, allow_cache_entry_mutation=False):
    """The (forward, recompute) context pair for checkpoint(..., context_fn=...): a policy function
    policy(ctx, op, *args, **kwargs) -> CheckpointPolicy, or a list of ops to save. Lists must hold
    op overloads; Ember has none to offer, so only an empty list passes. See _SelectiveCheckpointMode
    for what the policy can change on Ember."""
    if isinstance(policy_fn_or_list, list):
        if policy_fn_or_list:
            op = policy_fn_or_list[0]
            raise ValueError(f"Expected op in `op_list` to be an OpOverload but got: {op} of type {type(op)}. ")

        def policy_fn(ctx, op, *args, **kwargs):
            # an empty save list: every op is recomputed
            return CheckpointPolicy.PREFER_RECOMPUTE
    elif callable(policy_fn_or_list):
        policy_fn = policy_fn_or_list
    else:
        raise TypeError("policy_fn_or_list must be either a function or a list of ops.")
    storage = {}
    return (_SelectiveCheckpointMode(policy_fn, storage),
            _SelectiveCheckpointMode(None, storage, allow_cache_entry_mutation))


def _checkpoint_without_reentrant(function, preserve, context_fn, determinism_check, args, kwargs):
    if determinism_check not in ("default", "none"):
        raise ValueError(f"determinism_check should be one of ['default', 'none'], but got {determinism_check}")
    tensors = []
    in_spec = _flatten((args, kwargs), tensors)
    forward_ctx, recompute_ctx = context_fn()
    state = _SegmentState()
    state.rng = _RNGState(preserve, tensors)
    state.forward_ctx, state.recompute_ctx = forward_ctx, recompute_ctx
    state.determinism_check = determinism_check
    state.n_inputs = len(tensors)

    def call(ts):
        a, kw = _unflatten(in_spec, list(ts))
        return function(*a, **kw)

    state.call = call
    params = []
    if _C.is_grad_enabled():
        _segment_tensors(function, params, set())
        ids = {id(t) for t in tensors}
        uniq = {}
        for p in params:
            if id(p) not in ids:
                uniq.setdefault(id(p), p)
        params = list(uniq.values())
    state.params = params
    outs = _NonReentrantCheckpoint.apply(state, *tensors, *params)
    if isinstance(outs, _C.TensorBase):
        outs = (outs,)
    return _unflatten(state.out_spec, list(outs))


def checkpoint(function, *args, use_reentrant=None, context_fn=noop_context_fn, determinism_check="default",
               debug=False, early_stop=True, **kwargs):
    """function(*args, **kwargs) without storing its intermediate results: they are recomputed in
    backward. preserve_rng_state (keyword, default True) replays the random state so dropout inside
    draws the same masks. use_reentrant must be given (None warns and means True); keyword
    arguments, context_fn and debug need use_reentrant=False."""
    if use_reentrant is None:
        warnings.warn("torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly. Starting "
                      "in PyTorch 2.9, calling checkpoint without use_reentrant will raise an exception. "
                      "use_reentrant=False is recommended, but if you need to preserve the current default behavior, "
                      "you can pass use_reentrant=True. Refer to docs for more details on the differences between "
                      "the two variants.", stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs and use_reentrant:
        raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))
    if use_reentrant:
        if context_fn is not noop_context_fn or debug is not False:
            raise ValueError("Passing `context_fn` or `debug` is only supported when use_reentrant=False.")
        return CheckpointFunction.apply(function, preserve, *args)
    return _checkpoint_without_reentrant(function, preserve, context_fn, determinism_check, args, kwargs)


def checkpoint_sequential(functions, segments, input, use_reentrant=None, **kwargs):
    """Run a Sequential (or list of modules/functions) in ``segments`` chunks, checkpointing every
    chunk but the last (which keeps its graph)."""
    if use_reentrant is None:
        warnings.warn("torch.utils.checkpoint.checkpoint_sequential: the use_reentrant parameter should be passed "
                      "explicitly. In version 2.9 we will raise an exception if use_reentrant is not passed. "
                      "use_reentrant=False is recommended, but if you need to preserve the current default "
                      "behavior, you can pass use_reentrant=True. Refer to docs for more details on the "
                      "differences between the two variants.")
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))
    from ..nn.modules.container import Sequential
    if isinstance(functions, Sequential):
        functions = list(functions.children())
    functions = list(functions)

    def run_function(start, end, functions):
        def forward(x):
            for j in range(start, end + 1):
                x = functions[j](x)
            return x
        return forward

    segment_size = len(functions) // segments
    end = -1
    for start in range(0, segment_size * (segments - 1), segment_size):
        end = start + segment_size - 1
        input = checkpoint(run_function(start, end, functions), input, use_reentrant=use_reentrant,
                           preserve_rng_state=preserve)
    return run_function(end + 1, len(functions) - 1, functions)(input)
