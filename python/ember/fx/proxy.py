"""fx Proxy: the stand-in value that records operations into a Graph during symbolic tracing
(torch.fx.proxy)."""
import collections
import dis
import enum
import inspect
import operator
from bisect import bisect_left

import ember

from .graph import Graph, magic_methods, reflectable_magic_methods
from .node import Node, base_types, map_aggregate

__all__ = ["TracerBase", "GraphAppendingTracer", "TraceError", "Proxy", "Attribute", "ParameterProxy", "Scope",
           "ScopeContextManager"]


class Scope:
    """The module path and type of the module whose code is being traced."""

    def __init__(self, module_path, module_type):
        self.module_path = module_path
        self.module_type = module_type


class ScopeContextManager:
    """Context manager that swaps a Scope's fields for the duration of a module call."""

    def __init__(self, scope, current_scope):
        self._prev_scope = Scope(scope.module_path, scope.module_type)
        scope.module_path = current_scope.module_path
        scope.module_type = current_scope.module_type
        self._scope = scope

    def __enter__(self):
        return self._scope

    def __exit__(self, *args):
        self._scope.module_path = self._prev_scope.module_path
        self._scope.module_type = self._prev_scope.module_type


class TraceError(ValueError):
    """Raised when a traced program does something a Proxy cannot record (e.g. control flow on its value)."""


class TracerBase:
    """The part of a tracer that Proxies need: creating nodes and proxies, lowering arguments."""

    graph: Graph
    record_stack_traces = False
    check_mutable_operations = False
    trace_asserts = False
    proxy_buffer_attributes = False
    traced_func_name = "forward"

    def create_node(self, kind, target, args, kwargs, name=None, type_expr=None):
        """Inserts a Node into the graph; override to check or modify the nodes created."""
        node = self.graph.create_node(kind, target, args, kwargs, name, type_expr)
        scope = getattr(self, "scope", None)
        if scope is not None and hasattr(self, "node_name_to_scope"):
            self.node_name_to_scope[node.name] = (scope.module_path, scope.module_type)
        module_stack = getattr(self, "module_stack", None)
        if module_stack:
            node.meta["nn_module_stack"] = collections.OrderedDict(module_stack)
        return node

    def proxy(self, node):
        """Wraps `node` in a Proxy of this tracer."""
        return Proxy(node, self)

    def create_proxy(self, kind, target, args, kwargs, name=None, type_expr=None, proxy_factory_fn=None):
        """Creates a Node from lowered args/kwargs and returns it wrapped in a Proxy."""
        args_ = self.create_arg(args)
        kwargs_ = self.create_arg(kwargs)
        if not isinstance(args_, tuple) or not isinstance(kwargs_, dict):
            raise AssertionError("create_proxy needs a tuple of args and a dict of kwargs")
        node = self.create_node(kind, target, args_, kwargs_, name, type_expr)
        return self.proxy(node) if not proxy_factory_fn else proxy_factory_fn(node)

    def create_arg(self, a):
        """Lowers a value seen during tracing into an Argument a Node can hold (Proxies become Nodes)."""
        if isinstance(a, Proxy):
            return a.node
        if hasattr(a, "__fx_create_arg__"):
            return a.__fx_create_arg__(self)
        if isinstance(a, tuple):
            if hasattr(a, "_fields"):
                return type(a)(*[self.create_arg(elem) for elem in a])
            return type(a)([self.create_arg(elem) for elem in a])
        if isinstance(a, list):
            return [self.create_arg(elem) for elem in a]
        if isinstance(a, dict):
            r = {}
            for k, v in a.items():
                k = self.create_arg(k)
                if isinstance(k, Node) or (isinstance(k, (tuple, list)) and any(isinstance(x, Node) for x in k)):
                    raise RuntimeError(f"Keys for dictionaries used as an argument cannot contain a Node. Got key: {k}")
                r[k] = self.create_arg(v)
            return r
        if isinstance(a, slice):
            return slice(self.create_arg(a.start), self.create_arg(a.stop), self.create_arg(a.step))
        if isinstance(a, range):
            return range(self.create_arg(a.start), self.create_arg(a.stop), self.create_arg(a.step))
        if isinstance(a, (*base_types, enum.Enum)) or a is None or a is ...:
            return a
        raise NotImplementedError(f"argument of type: {type(a)}")

    def to_bool(self, obj):
        """Called when a Proxy is converted to bool (control flow); raises TraceError by default."""
        raise TraceError("symbolically traced variables cannot be used as inputs to control flow")

    def iter(self, obj):
        """Called when a Proxy is iterated; raises TraceError by default."""
        raise TraceError("Proxy object cannot be iterated. This can be attempted when the Proxy is used in a loop "
                         "or as a *args or **kwargs function argument. See the torch.fx docs on pytorch.org for a "
                         "more detailed explanation of what types of control flow can be traced, and check out "
                         "the Proxy docstring for help troubleshooting Proxy iteration errors")

    def keys(self, obj):
        """Called when `**proxy` asks for keys(); records a call to `keys`."""
        return Attribute(obj, "keys")()


class GraphAppendingTracer(TracerBase):
    """A tracer that appends to an existing Graph: lets Proxies built on its Nodes record operations."""

    def __init__(self, graph):
        super().__init__()
        self.graph = graph
        self.scope = Scope("", None)
        self.module_stack = collections.OrderedDict()
        self.node_name_to_scope = {}


def _find_tracer(cls, args, kwargs):
    tracers = {}

    def visit(a):
        if isinstance(a, cls):
            tracers[a.tracer] = None
        return a

    map_aggregate(args, visit)
    map_aggregate(kwargs, visit)
    return tracers


def _is_tensor_method(fn):
    name = getattr(fn, "__name__", None)
    return name is not None and getattr(ember.Tensor, name, None) is fn


class Proxy:
    """A Node wrapper that flows through a program during tracing and records each operation it touches."""

    def __init__(self, node, tracer=None):
        if tracer is None:
            tracer = GraphAppendingTracer(node.graph)
        self.tracer = tracer
        self.node = node

    def __repr__(self):
        return f"Proxy({self.node.name})"

    def __getattr__(self, k):
        return Attribute(self, k)

    def __getstate__(self):
        return self.__dict__

    def __setstate__(self, d):
        self.__dict__ = d

    def __deepcopy__(self, memo):
        import copy
        new = Proxy.__new__(type(self))
        for k, v in self.__dict__.items():
            try:
                new.__dict__[k] = copy.deepcopy(v, memo)
            except Exception:
                new.__dict__[k] = copy.copy(v)
        return new

    def __call__(self, *args, **kwargs):
        return self.tracer.create_proxy("call_method", "__call__", (self,) + args, kwargs)

    def __iter__(self):
        frame = inspect.currentframe()
        calling_frame = frame.f_back
        insts = list(dis.get_instructions(calling_frame.f_code))
        idx = bisect_left(insts, calling_frame.f_lasti, key=lambda x: x.offset)
        if idx < len(insts) and insts[idx].opname == "UNPACK_SEQUENCE":
            return (self[i] for i in range(insts[idx].argval))
        return self.tracer.iter(self)

    def __abs__(self):
        return self.tracer.create_proxy("call_function", operator.abs, (self,), {})

    def __bool__(self):
        return self.tracer.to_bool(self)

    def keys(self):
        """Called by `**proxy`: records a call to keys()."""
        return self.tracer.keys(self)

    def __len__(self):
        raise RuntimeError("'len' is not supported in symbolic tracing by default. If you want this call to be "
                           "recorded, please call torch.fx.wrap('len') at module scope")

    @classmethod
    def __torch_function__(cls, orig_method, types, args=None, kwargs=None):
        args = args if args else ()
        kwargs = kwargs if kwargs else {}
        tracers = _find_tracer(cls, args, kwargs)
        if len(tracers) > 1:
            raise RuntimeError(f"Found multiple different tracers {list(tracers.keys())} while trying to trace "
                               f"operations {orig_method}")
        tracer = next(iter(tracers))
        if _is_tensor_method(orig_method):
            return tracer.create_proxy("call_method", orig_method.__name__, args, kwargs)
        return tracer.create_proxy("call_function", orig_method, args, kwargs,
                                   name=tracer.graph._target_to_str(orig_method.__name__))


class Attribute(Proxy):
    """The Proxy for `proxy.attr`: a call_method when called, else a getattr call_function node."""

    def __init__(self, root, attr):
        self.root = root
        self.attr = attr
        self.tracer = root.tracer
        self._node = None

    @property
    def node(self):
        """The getattr Node, created on first use."""
        if self._node is None:
            self._node = self.tracer.create_proxy("call_function", getattr, (self.root, self.attr), {}).node
        return self._node

    def __call__(self, *args, **kwargs):
        return self.tracer.create_proxy("call_method", self.attr, (self.root,) + args, kwargs)


class ParameterProxy(Proxy):
    """A Proxy for a module parameter whose shape, size(), dim() and numel() answer with real values."""

    def __init__(self, tracer, node, name, param):
        super().__init__(node, tracer)
        self.param = param
        self.name = name

    def __repr__(self):
        return f"ParameterProxy({self.name})"

    @property
    def shape(self):
        """The parameter's shape."""
        return self.param.shape

    def size(self, *args):
        """The parameter's size."""
        return self.param.size(*args)

    def dim(self):
        """The parameter's number of dimensions."""
        return self.param.dim()

    @property
    def ndim(self):
        """The parameter's number of dimensions."""
        return self.param.ndim

    def numel(self):
        """The parameter's number of elements."""
        return self.param.numel()

    def nelement(self):
        """The parameter's number of elements."""
        return self.param.nelement()


def _define_magic(method):
    def impl(*args, **kwargs):
        tracer = args[0].tracer
        return tracer.create_proxy("call_function", getattr(operator, method), args, kwargs)
    impl.__name__ = method
    setattr(Proxy, f"__{method.strip('_')}__", impl)


def _define_reflectable(orig_method_name):
    method_name = f"__r{orig_method_name.strip('_')}__"

    def impl(self, rhs):
        return self.tracer.create_proxy("call_function", getattr(operator, orig_method_name), (rhs, self), {})
    impl.__name__ = method_name
    impl.__qualname__ = method_name
    setattr(Proxy, method_name, impl)


for _m in magic_methods:
    _define_magic(_m)
for _m in reflectable_magic_methods:
    _define_reflectable(_m)
