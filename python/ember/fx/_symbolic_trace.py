"""Symbolic tracing: Tracer runs a module's forward on Proxies to build a Graph; symbolic_trace and wrap
(torch.fx._symbolic_trace)."""
import builtins
import collections
import functools
import inspect
import math
import types
import warnings

import ember

from .graph import Graph
from .graph_module import GraphModule
from .node import Node, base_types, map_aggregate
from .proxy import ParameterProxy, Proxy, Scope, ScopeContextManager, TracerBase

__all__ = ["Tracer", "symbolic_trace", "wrap", "PH", "PHBase", "is_fx_tracing"]

HAS_VARSTUFF = inspect.CO_VARARGS | inspect.CO_VARKEYWORDS

_is_fx_tracing_flag = False


def is_fx_tracing():
    """Whether symbolic tracing is in progress."""
    return _is_fx_tracing_flag


class PHBase:
    """Object representing an input placeholder to `concrete_args`."""

    def __repr__(self):
        return "PH"


PH = PHBase()

# functions registered with wrap(): (id of the globals dict, name) -> globals dict
_wrapped_fns_to_patch = {}
_wrapped_methods_to_patch = []

# Python-level functions of ember and ember.nn.functional that C++'s __torch_function__ hand-off does not
# cover: patched during tracing so that a call with a Proxy argument records a call_function node
_NOT_AUTOWRAPPED = {"is_tensor", "is_storage", "is_floating_point", "is_complex", "is_nonzero", "numel",
                    "set_default_dtype", "get_default_dtype", "manual_seed", "seed", "initial_seed", "save", "load",
                    "set_printoptions", "compile", "typename", "is_grad_enabled", "set_rng_state", "get_rng_state",
                    "use_deterministic_algorithms", "set_float32_matmul_precision", "get_float32_matmul_precision",
                    "set_grad_enabled", "no_grad", "enable_grad", "inference_mode", "result_type", "promote_types",
                    "can_cast", "is_autocast_enabled", "set_autocast_enabled"}


def _ember_function_namespaces():
    return (ember, ember.nn.functional)


def _ember_autowrap_targets():
    out = []
    for ns in _ember_function_namespaces():
        for name, value in list(vars(ns).items()):
            if name.startswith("_") or name in _NOT_AUTOWRAPPED or not isinstance(value, types.FunctionType):
                continue
            mod = getattr(value, "__module__", "") or ""
            if mod == "ember" or mod.startswith("ember."):
                out.append((ns, name, value))
    return out


def _find_proxy(*objects_to_search):
    proxy = None

    def find(x):
        nonlocal proxy
        if isinstance(x, Proxy):
            proxy = x
        return x

    map_aggregate(objects_to_search, find)
    return proxy


def _create_wrapped_func(orig_fn, mark_wrapped=True):
    @functools.wraps(orig_fn)
    def wrapped(*args, **kwargs):
        proxy = _find_proxy(args, kwargs)
        if proxy is not None:
            return_proxy = proxy.tracer.create_proxy("call_function", orig_fn, args, kwargs)
            if mark_wrapped:
                return_proxy.node.meta["is_wrapped"] = True
            return return_proxy
        return orig_fn(*args, **kwargs)
    wrapped.__fx_orig__ = orig_fn
    return wrapped


class _Patcher:
    """Records attribute patches and undoes them (in reverse order) on exit."""

    def __init__(self):
        self.patches_made = []
        self.visited = set()

    def patch(self, frame_dict, name, new_fn, deduplicate=True):
        new_fn._fx_already_patched = deduplicate
        if name not in frame_dict and hasattr(builtins, name):
            self.patches_made.append(("del", frame_dict, name, None))
        elif getattr(frame_dict[name], "_fx_already_patched", False):
            return
        else:
            self.patches_made.append(("set", frame_dict, name, frame_dict[name]))
        frame_dict[name] = new_fn

    def patch_method(self, cls, name, new_fn, deduplicate=True):
        new_fn._fx_already_patched = deduplicate
        orig_fn = getattr(cls, name)
        if getattr(orig_fn, "_fx_already_patched", False):
            return
        self.patches_made.append(("attr", cls, name, cls.__dict__.get(name, _MISSING)))
        setattr(cls, name, new_fn)

    def visit_once(self, thing):
        idx = id(thing)
        if idx in self.visited:
            return False
        self.visited.add(idx)
        return True

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        while self.patches_made:
            kind, where, name, orig = self.patches_made.pop()
            if kind == "del":
                where.pop(name, None)
            elif kind == "code":
                _trampoline_codes.discard(where.__code__)
                where.__code__ = orig
            elif kind == "set":
                where[name] = orig
            elif orig is _MISSING:
                delattr(where, name)
            else:
                setattr(where, name, orig)
        self.visited.clear()


_MISSING = object()


# Tensor operators whose right operand may be a Proxy (`buffer * x`, `table[x.size(0)]`): recorded as the
# call_method torch.fx records (Tensor.__torch_function__ does that in torch), not as the reflected operator
_TENSOR_OPERATOR_METHODS = {
    "__add__": "add", "__sub__": "sub", "__mul__": "mul", "__truediv__": "div", "__floordiv__": "__floordiv__",
    "__mod__": "remainder", "__pow__": "pow", "__matmul__": "matmul", "__and__": "__and__", "__or__": "__or__",
    "__xor__": "__xor__", "__lshift__": "__lshift__", "__rshift__": "__rshift__", "__eq__": "eq", "__ne__": "ne",
    "__lt__": "lt", "__le__": "le", "__gt__": "gt", "__ge__": "ge", "__getitem__": "__getitem__",
    "__iadd__": "add_", "__isub__": "sub_", "__imul__": "mul_", "__itruediv__": "div_",
}


def _create_tensor_operator(orig_fn, method_name):
    def wrapped(self, *args):
        proxy = _find_proxy(args)
        if proxy is not None:
            return proxy.tracer.create_proxy("call_method", method_name, (self,) + args, {})
        return orig_fn(self, *args)
    wrapped.__name__ = orig_fn.__name__
    return wrapped


def _patch_tensor_operators(patcher):
    for dunder, method_name in _TENSOR_OPERATOR_METHODS.items():
        orig_fn = getattr(ember.Tensor, dunder, None)
        if orig_fn is not None:
            patcher.patch_method(ember.Tensor, dunder, _create_tensor_operator(orig_fn, method_name),
                                 deduplicate=False)
    for name in _TENSOR_PYTHON_METHODS:
        fn = vars(ember.Tensor).get(name)
        if isinstance(fn, types.FunctionType):
            _patch_function_code(patcher, fn, method_name=name)


# Ember's Python-level functions are also reached through references the namespace patches miss
# (`self.act = F.gelu`, `functools.partial(F.softmax, dim=-1)`, `from ember.nn.functional import relu` in a
# helper module, a dict of activations). torch's own functions record themselves there (they check for
# __torch_function__), so during tracing each such function's code is swapped for a trampoline that records
# a call with a Proxy argument and runs a copy of the original otherwise. The trampoline holds its dispatcher
# as a code constant, so a call already inside it when tracing ends still completes.
_DISPATCH_MARK = "__ember_fx_autowrap_dispatch__"
_trampoline_codes = set()
_trampoline_cache = {}  # id(fn) -> (fn, its trampoline code)


def _autowrap_dispatch(fn, orig, args, kwargs):
    proxy = _find_proxy(args, kwargs)
    if proxy is not None:
        return proxy.tracer.create_proxy("call_function", fn, args, kwargs)
    return orig(*args, **kwargs)


def _method_dispatch(name, orig, args, kwargs):
    proxy = _find_proxy(args[1:], kwargs)
    if proxy is not None:
        return proxy.tracer.create_proxy("call_method", name, args, kwargs)
    return orig(*args, **kwargs)


# Python-level Tensor methods that torch implements in C (so `buffer.to(x.dtype)`, `mask.type_as(x)` record a
# call_method there): with a Proxy argument they record the same call_method here
_TENSOR_PYTHON_METHODS = ("to", "type_as", "isclose", "allclose", "equal", "is_same_size", "split_with_sizes",
                          "unsafe_split", "unsafe_chunk", "unsafe_split_with_sizes", "histogram", "resize_as",
                          "slice_inverse", "polygamma", "to_dense", "narrow_copy", "as_strided_scatter",
                          "new_empty_strided")


def _make_trampoline_code(fn, method_name=None):
    orig = types.FunctionType(fn.__code__, fn.__globals__, fn.__name__, fn.__defaults__, None)
    orig.__kwdefaults__ = fn.__kwdefaults__
    orig.__dict__.update(fn.__dict__)
    src = f"def _trampoline(*args, **kwargs):\n    return ({_DISPATCH_MARK!r})(args, kwargs)\n"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SyntaxWarning)
        module_code = compile(src, f"<ember.fx autowrap of {fn.__qualname__}>", "exec")
    code = next(c for c in module_code.co_consts if isinstance(c, types.CodeType))
    dispatch = functools.partial(_autowrap_dispatch, fn, orig) if method_name is None \
        else functools.partial(_method_dispatch, method_name, orig)
    code = code.replace(co_consts=tuple(dispatch if c == _DISPATCH_MARK else c for c in code.co_consts),
                        co_name=fn.__code__.co_name)
    if hasattr(code, "co_qualname"):
        code = code.replace(co_qualname=fn.__code__.co_qualname)
    return code


def _patch_function_code(patcher, fn, method_name=None):
    """Swaps fn's code for a recording trampoline until the patcher exits (functions without a closure only);
    with method_name, a call with a Proxy argument records that call_method."""
    co = fn.__code__
    if co in _trampoline_codes or fn.__closure__ is not None or co.co_flags & (inspect.CO_GENERATOR
                                                                               | inspect.CO_COROUTINE):
        return
    cached = _trampoline_cache.get(id(fn))
    if cached is None or cached[0] is not fn or cached[2] is not co:
        cached = _trampoline_cache[id(fn)] = (fn, _make_trampoline_code(fn, method_name), co)
    _trampoline_codes.add(cached[1])
    patcher.patches_made.append(("code", fn, None, co))
    fn.__code__ = cached[1]


def _patch_wrapped_functions(patcher):
    for (_, name), frame_dict in _wrapped_fns_to_patch.copy().items():
        if name not in frame_dict and hasattr(builtins, name):
            orig_fn = getattr(builtins, name)
        else:
            orig_fn = frame_dict[name]
        patcher.patch(frame_dict, name, _create_wrapped_func(orig_fn))


def _autowrap_check(patcher, frame_dict, function_ids):
    """Patches the functions of `frame_dict` whose ids are in `function_ids` (once per dict)."""
    if patcher.visit_once(frame_dict):
        for name, value in list(frame_dict.items()):
            if not name.startswith("_") and callable(value) and id(value) in function_ids:
                patcher.patch(frame_dict, name, function_ids[id(value)](value))


def _patch_function(fn, nargs):
    """A copy of `fn` whose *args / **kwargs are plain positional parameters (each receives one Proxy)."""
    co = fn.__code__
    co_flags = co.co_flags & ~HAS_VARSTUFF
    new_code = co.replace(co_argcount=nargs, co_flags=co_flags, co_kwonlyargcount=0,
                          co_posonlyargcount=min(co.co_posonlyargcount, nargs))
    return types.FunctionType(new_code, fn.__globals__, fn.__name__, fn.__defaults__, fn.__closure__)


def _assert_is_none(value, msg):
    assert value is None, msg


class Tracer(TracerBase):
    """Symbolic tracer: runs a module's forward (or a function) on Proxies and records a Graph."""

    def __init__(self, autowrap_modules=(math,), autowrap_functions=(), param_shapes_constant=False):
        super().__init__()
        # id -> factory of the patched replacement, for every function to record instead of running
        self._autowrap_function_ids = {}
        for m in autowrap_modules:
            for name, value in m.__dict__.items():
                if not name.startswith("_") and callable(value):
                    self._autowrap_function_ids[id(value)] = _create_wrapped_func
        for f in autowrap_functions:
            self._autowrap_function_ids[id(f)] = _create_wrapped_func
        self._autowrap_search = list(autowrap_modules)
        self.param_shapes_constant = param_shapes_constant
        self.submodule_paths = None
        self.root_module_name = ""
        self.scope = Scope("", None)
        self.module_stack = collections.OrderedDict()
        self.num_calls = {}
        self.node_name_to_scope = {}

    def create_arg(self, a):
        """Lowers a value into an Argument: parameters, buffers and constant tensors become get_attr nodes."""
        if isinstance(a, ember.nn.Parameter):
            for n, p in self.root.named_parameters():
                if a is p:
                    return self.create_node("get_attr", n, (), {})
            raise NameError("parameter is not a member of this module")
        if isinstance(a, ember.Tensor):
            for n_, p_ in self.root.named_buffers():
                if a is p_:
                    return self.create_node("get_attr", n_, (), {})
        elif isinstance(a, ember.nn.Module):
            for n_, p_ in self.root.named_modules():
                if a is p_:
                    return self.create_node("get_attr", n_, (), {})
        if isinstance(a, tuple) and hasattr(a, "_fields"):
            args = tuple(self.create_arg(elem) for elem in a)
            return self.create_node("call_function", a.__class__, args, {})
        if isinstance(a, ember.Tensor):
            qualname = self.tensor_attrs.get(a)
            if not qualname:
                qualname = self.get_fresh_qualname("_tensor_constant")
                setattr(self.root, qualname, a)
            return self.create_node("get_attr", qualname, (), {})
        return super().create_arg(a)

    def get_fresh_qualname(self, prefix):
        """A name `prefix<i>` that the root module does not have yet."""
        i = 0
        while True:
            qualname = f"{prefix}{i}"
            if not hasattr(self.root, qualname):
                return qualname
            i += 1

    def is_leaf_module(self, m, module_qualified_name):
        """Whether `m` is recorded as one call_module node: ember.nn's own modules except Sequential."""
        return (m.__module__.startswith("ember.nn") or m.__module__.startswith("torch.nn")) \
            and not isinstance(m, ember.nn.Sequential)

    def path_of_module(self, mod):
        """The qualified name of submodule `mod` in the root (NameError if it is not installed)."""
        if self.submodule_paths:
            path = self.submodule_paths.get(mod)
            if path is None:
                raise NameError("module is not installed as a submodule")
            return path
        for n, p in self.root.named_modules():
            if mod is p:
                return n
        raise NameError("module is not installed as a submodule")

    def call_module(self, m, forward, args, kwargs):
        """Records a call_module node for a leaf module, else traces through its forward."""
        module_qualified_name = self.path_of_module(m)
        with ScopeContextManager(self.scope, Scope(module_qualified_name, type(m))) as _scope:
            num_calls = self.num_calls.get(module_qualified_name, 0)
            module_key = f"{_scope.module_path}@{num_calls}" if num_calls > 0 else _scope.module_path
            self.module_stack[module_key] = (module_qualified_name, _scope.module_type)
            self.num_calls[module_qualified_name] = num_calls + 1
            if not self.is_leaf_module(m, module_qualified_name):
                ret_val = forward(*args, **kwargs)
            else:
                ret_val = self.create_proxy("call_module", module_qualified_name, args, kwargs)
            self.module_stack.popitem(last=True)
        return ret_val

    def getattr(self, attr, attr_val, parameter_proxy_cache):
        """The value of `module.attr` during tracing: a get_attr Proxy for parameters (and buffers if
        proxy_buffer_attributes), else the value itself."""
        def maybe_get_proxy_for_attr(attr_val, collection_to_search, parameter_proxy_cache):
            for n, p in collection_to_search:
                if attr_val is p:
                    if n not in parameter_proxy_cache:
                        kwargs = {}
                        if "proxy_factory_fn" in inspect.signature(self.create_proxy).parameters:
                            kwargs["proxy_factory_fn"] = (
                                None if not self.param_shapes_constant
                                else lambda node: ParameterProxy(self, node, n, attr_val))
                        parameter_proxy_cache[n] = self.create_proxy("get_attr", n, (), {}, **kwargs)
                    return parameter_proxy_cache[n]
            return None

        if isinstance(attr_val, ember.nn.Parameter):
            maybe = maybe_get_proxy_for_attr(attr_val, self.root.named_parameters(), parameter_proxy_cache)
            if maybe is not None:
                return maybe
        if self.proxy_buffer_attributes and isinstance(attr_val, ember.Tensor):
            maybe = maybe_get_proxy_for_attr(attr_val, self.root.named_buffers(), parameter_proxy_cache)
            if maybe is not None:
                return maybe
        return attr_val

    def create_args_for_root(self, root_fn, is_module, concrete_args=None):
        """The placeholder Proxies (and concrete values) that root_fn is called with."""
        fn_for_analysis = inspect.unwrap(root_fn)
        co = fn_for_analysis.__code__
        total_args = co.co_argcount + co.co_kwonlyargcount
        names_iter = iter(co.co_varnames)
        args = []
        skip_arg_idx = 0
        if is_module:
            if total_args == 0:
                raise RuntimeError("``self`` argument cannot be part of *args expansion!")
            skip_arg_idx = 1
            next(names_iter)
            args.append(self.root)
        sig = inspect.signature(fn_for_analysis)

        def proxy_placeholder(name):
            if concrete_args is not None and name in concrete_args:
                cnt = 0

                def replace_ph(x):
                    nonlocal cnt
                    cnt += 1
                    param = sig.parameters[name]
                    default = () if param.default is inspect.Parameter.empty else (param.default,)
                    out = self.create_proxy("placeholder", f"{name}_{cnt}", default, {})
                    if isinstance(x, PHBase):
                        return out
                    if type(x) is bool or type(x) in base_types and type(x) != ember.Tensor:
                        self.create_proxy("call_function", ember._assert,
                                          (out == x, f"{name} has been specialized to have value {x} but got "
                                           "another value"), {})
                    elif x is None:
                        self.create_proxy("call_function", _assert_is_none,
                                          (out, f"{name} has been specialized to have value None but got "
                                           "another value"), {})
                    else:
                        warnings.warn(f"Was not able to add assertion to guarantee correct input {name} to "
                                      "specialized function. It is up to the user to make sure that your inputs "
                                      "match the inputs you specialized the function with.")
                    return x

                return _tree_map(replace_ph, concrete_args[name])
            if name[0] == "*":
                default = ()
            else:
                param = sig.parameters[name]
                default = () if param.default is inspect.Parameter.empty else (param.default,)
            return self.create_proxy("placeholder", name, default, {},
                                     type_expr=fn_for_analysis.__annotations__.get(name, None))

        arg_names = [next(names_iter) for _ in range(skip_arg_idx, total_args)]
        if isinstance(concrete_args, tuple):
            if len(arg_names) != len(concrete_args):
                raise RuntimeError(f"Tracing expected {len(arg_names)} arguments but got {len(concrete_args)} "
                                   "concrete arguments")
            concrete_args = dict(zip(arg_names, concrete_args))
        args.extend(proxy_placeholder(n) for n in arg_names)
        if co.co_kwonlyargcount > 0 or co.co_flags & HAS_VARSTUFF:
            if co.co_flags & inspect.CO_VARARGS:
                args.append(proxy_placeholder("*" + next(names_iter)))
            if co.co_flags & inspect.CO_VARKEYWORDS:
                args.append(proxy_placeholder("**" + next(names_iter)))
            root_fn = _patch_function(root_fn, len(args))
        return root_fn, args

    def trace(self, root, concrete_args=None):
        """Traces `root` (a Module or a function) and returns the recorded Graph."""
        global _is_fx_tracing_flag
        old_is_fx_tracing_flag = _is_fx_tracing_flag
        _is_fx_tracing_flag = True
        try:
            if isinstance(root, ember.nn.Module):
                self.root = root
                fn = type(root).forward
                self.submodule_paths = {mod: name for name, mod in root.named_modules()}
            else:
                self.root = ember.nn.Module()
                fn = root
            tracer_cls = getattr(self, "__class__", None)
            self.graph = Graph(tracer_cls=tracer_cls)
            self.tensor_attrs = {}

            def collect_tensor_attrs(m, prefix_atoms):
                for k, v in m.__dict__.items():
                    if isinstance(v, ember.Tensor):
                        self.tensor_attrs[v] = ".".join(prefix_atoms + [k])
                for k, v in m.named_children():
                    collect_tensor_attrs(v, prefix_atoms + [k])

            collect_tensor_attrs(self.root, [])
            fn_globals = getattr(inspect.unwrap(fn), "__globals__", {})
            fn, args = self.create_args_for_root(fn, isinstance(root, ember.nn.Module), concrete_args)

            parameter_proxy_cache = {}
            orig_getattr = ember.nn.Module.__getattr__
            orig_call = ember.nn.Module.__call__

            @functools.wraps(orig_getattr)
            def module_getattr_wrapper(mod, attr):
                attr_val = orig_getattr(mod, attr)
                return self.getattr(attr, attr_val, parameter_proxy_cache)

            @functools.wraps(orig_call)
            def module_call_wrapper(mod, *args, **kwargs):
                def forward(*args, **kwargs):
                    return orig_call(mod, *args, **kwargs)
                fwd = getattr(type(mod), "forward", None)
                _autowrap_check(patcher, getattr(inspect.unwrap(fwd), "__globals__", {}) if fwd else {},
                                self._autowrap_function_ids)
                return self.call_module(mod, forward, args, kwargs)

            ember_fns = _ember_autowrap_targets()
            for _, _, value in ember_fns:
                self._autowrap_function_ids.setdefault(id(value), _wrap_ember_fn)
            with _Patcher() as patcher:
                patcher.patch_method(ember.nn.Module, "__getattr__", module_getattr_wrapper, deduplicate=False)
                patcher.patch_method(ember.nn.Module, "__call__", module_call_wrapper, deduplicate=False)
                _patch_tensor_operators(patcher)
                for _, _, value in ember_fns:
                    _patch_function_code(patcher, value)
                _patch_wrapped_functions(patcher)
                for ns in _ember_function_namespaces():
                    _autowrap_check(patcher, ns.__dict__, self._autowrap_function_ids)
                _autowrap_check(patcher, fn_globals, self._autowrap_function_ids)
                for module in self._autowrap_search:
                    _autowrap_check(patcher, module.__dict__, self._autowrap_function_ids)
                self.create_node("output", "output", (self.create_arg(fn(*args)),), {},
                                 type_expr=fn.__annotations__.get("return", None))
            self.submodule_paths = None
        finally:
            _is_fx_tracing_flag = old_is_fx_tracing_flag
        return self.graph

    def __deepcopy__(self, memo):
        import copy
        new_tracer = Tracer.__new__(Tracer)
        for k, v in self.__dict__.items():
            new_obj = copy.copy(v) if k in {"_autowrap_function_ids"} else copy.deepcopy(v, memo)
            new_tracer.__dict__[k] = new_obj
        return new_tracer


def _wrap_ember_fn(fn):
    return _create_wrapped_func(fn, mark_wrapped=False)




def _tree_map(fn, tree):
    if isinstance(tree, (list, tuple)) and not hasattr(tree, "_fields"):
        return type(tree)(_tree_map(fn, x) for x in tree)
    if isinstance(tree, dict):
        return {k: _tree_map(fn, v) for k, v in tree.items()}
    return fn(tree)


def wrap(fn_or_name):
    """Registers a module-level function (or its name) so that tracing records calls to it as leaf
    call_function nodes instead of tracing through it; call at module scope. Returns its argument."""
    if not callable(fn_or_name) and not isinstance(fn_or_name, str):
        raise RuntimeError("Unsupported type for global function! Must be either a callable or string name")
    if callable(fn_or_name):
        fn_name = fn_or_name.__name__
    else:
        fn_name = fn_or_name
    currentframe = inspect.currentframe()
    f = currentframe.f_back
    if f.f_code.co_name != "<module>":
        raise NotImplementedError("wrap must be called at the top level of a module")
    _wrapped_fns_to_patch[(id(f.f_globals), fn_name)] = f.f_globals
    return fn_or_name


def symbolic_trace(root, concrete_args=None):
    """Traces a Module or function into a GraphModule whose graph records its operations."""
    tracer = Tracer()
    graph = tracer.trace(root, concrete_args)
    name = root.__class__.__name__ if isinstance(root, ember.nn.Module) else root.__name__
    return GraphModule(tracer.root, graph, name)


def _is_proxy_node(x):
    return isinstance(x, Node)
