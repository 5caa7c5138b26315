"""fx Node: one operation of a Graph, and the helpers that walk Node arguments (torch.fx.node)."""
import builtins
import inspect
import operator
import types
from typing import Any, Callable, Dict, List, Optional, Tuple, Union

import ember

from .immutable_collections import immutable_dict, immutable_list

__all__ = ["Node", "map_arg", "map_aggregate", "has_side_effect", "Argument", "Target", "BaseArgumentTypes"]

BaseArgumentTypes = Union[str, int, float, bool, complex, ember.dtype, ember.Tensor, ember.device,
                          ember.memory_format, ember.layout]
base_types = (str, int, float, bool, complex, ember.dtype, ember.Tensor, ember.device, ember.memory_format,
              ember.layout)

Target = Union[Callable[..., Any], str]
Argument = Optional[Union[Tuple[Any, ...], List[Any], Dict[str, Any], slice, range, "Node", BaseArgumentTypes]]

_side_effectful_functions = {operator.setitem, ember._assert}
if hasattr(ember._C, "_set_grad_enabled"):
    _side_effectful_functions.add(ember._C._set_grad_enabled)

# functions that advance the global random state: impure whatever impure_random says, as torch's
_random_functions = {getattr(ember, _n) for _n in ("normal", "bernoulli", "randn_like", "rand", "poisson", "randperm",
                                                   "randint", "multinomial", "randint_like", "randn", "rand_like")
                     if hasattr(ember, _n)}


def has_side_effect(fn):
    """Marks `fn` as side-effectful so dead-code elimination keeps calls to it; returns fn."""
    _side_effectful_functions.add(fn)
    return fn


# the public namespaces searched (in order) for a function's user-facing qualified name
def _public_namespaces():
    return (("ember", ember), ("ember.nn.functional", ember.nn.functional), ("ember.linalg", ember.linalg),
            ("ember.special", ember.special), ("ember.fft", ember.fft))


def _find_module_of_method(fn):
    name = fn.__name__
    module = getattr(fn, "__module__", None)
    if module is None or module == "ember" or module.startswith(("ember._", "ember.nn.functional")) \
            or module.startswith("ember.nn._functional"):
        for ns_name, ns in _public_namespaces():
            if getattr(ns, name, None) is fn:
                return ns_name
    if module is not None:
        return module
    raise RuntimeError(f"cannot find module for {fn}")


def _get_qualified_name(func):
    """The dotted name that refers to `func` in generated code ('ember.add', 'operator.add', 'getattr')."""
    if getattr(builtins, func.__name__, None) is func:
        return func.__name__
    if isinstance(func, (types.MethodDescriptorType, types.WrapperDescriptorType)) \
            and func is getattr(ember.Tensor, func.__name__, None):
        return f"ember.Tensor.{func.__name__}"
    if getattr(func, "__module__", None) == "ember._tensor" \
            and getattr(func, "__qualname__", None) == f"Tensor.{func.__name__}":
        return f"ember.Tensor.{func.__name__}"
    name = func.__name__
    if name == "<lambda>":
        try:
            name = inspect.getsource(func).split("=")[0].strip()
        except Exception as e:
            raise RuntimeError("Unable to represent lambda") from e
    return f"{_find_module_of_method(func)}.{name}"


def _type_repr(obj):
    if isinstance(obj, type):
        if obj.__module__ == "builtins":
            return obj.__qualname__
        return f"{obj.__module__}.{obj.__qualname__}"
    if obj is ...:
        return "..."
    if isinstance(obj, types.FunctionType):
        return obj.__name__
    return repr(obj)


def _format_arg(arg, max_list_len=float("inf")):
    if isinstance(arg, list):
        items = ", ".join(_format_arg(a) for i, a in enumerate(arg) if i < max_list_len)
        more = "" if len(arg) < max_list_len + 1 else f", ...[total_len={len(arg)}]"
        return f"[{items}{more}]"
    if isinstance(arg, tuple):
        items = ", ".join(_format_arg(a) for i, a in enumerate(arg) if i < max_list_len)
        more = "" if len(arg) < max_list_len + 1 else f", ...[total_len={len(arg)}]"
        return f"({items}{',' if len(arg) == 1 else ''}{more})"
    if isinstance(arg, dict):
        return "{" + ", ".join(f"{k}: {_format_arg(v)}" for k, v in arg.items()) + "}"
    if isinstance(arg, Node):
        return "%" + str(arg)
    return str(arg)


class Node:
    """One operation in a Graph: its opcode, target, arguments, users and place in the node list."""

    def __init__(self, graph, name, op, target, args, kwargs, return_type=None):
        if op not in ("placeholder", "call_method", "call_module", "call_function", "get_attr", "output", "root"):
            raise ValueError(f"unknown Node op {op!r}")
        if op == "call_function" and not callable(target):
            raise ValueError(f"Node [graph = {graph}, name = '{name}'] target {target} has type "
                             f"{type(target)} "
                             "but a Callable is expected")
        if op in ("placeholder", "call_method", "call_module", "get_attr", "output") and not isinstance(target, str):
            raise ValueError(f"Node [graph = {graph}, name = '{name}'] target {target} has type "
                             f"{type(target)} but a str is expected")
        self.graph = graph
        self.name = name
        self.op = op
        self.target = target
        self._input_nodes = {}
        self._args = ()
        self._kwargs = {}
        self.__update_args_kwargs(args, kwargs)
        self.users = {}
        self.type = return_type
        self._prev = self
        self._next = self
        self._erased = False
        self._repr_fn = None
        self.meta = {}

    # ------------------------------------------------------------ list links
    @property
    def next(self):
        """The next Node in the graph's node list."""
        return self._next

    @property
    def prev(self):
        """The previous Node in the graph's node list."""
        return self._prev

    def prepend(self, x):
        """Inserts Node `x` just before this one in the node list (moving it if it is already there)."""
        if self is x:
            raise AssertionError("Cannot prepend self")
        if self.graph is not x.graph:
            raise AssertionError("Attempting to move a Node into a different Graph")
        x._remove_from_list()
        p = self._prev
        p._next, x._prev = x, p
        x._next, self._prev = self, x

    def append(self, x):
        """Inserts Node `x` just after this one in the node list (moving it if it is already there)."""
        self._next.prepend(x)

    def _remove_from_list(self):
        # the node keeps its own links, so an iteration standing on it can move on after it is erased
        p, n = self._prev, self._next
        p._next, n._prev = n, p

    # ------------------------------------------------------------ arguments
    @property
    def args(self):
        """The positional arguments of this Node (Nodes and constants); assigning updates the users."""
        return self._args

    @args.setter
    def args(self, a):
        self.__update_args_kwargs(a, self._kwargs)

    @property
    def kwargs(self):
        """The keyword arguments of this Node; assigning updates the users."""
        return self._kwargs

    @kwargs.setter
    def kwargs(self, k):
        self.__update_args_kwargs(self._args, k)

    @property
    def all_input_nodes(self):
        """The Nodes this Node reads, in the order they first appear in args and kwargs."""
        return list(self._input_nodes.keys())

    def update_arg(self, idx, arg):
        """Replaces positional argument `idx` with `arg`."""
        args = list(self.args)
        args[idx] = arg
        self.args = tuple(args)

    def insert_arg(self, idx, arg):
        """Inserts `arg` into the positional arguments at `idx`."""
        args = list(self.args)
        args.insert(idx, arg)
        self.args = tuple(args)

    def update_kwarg(self, key, arg):
        """Sets keyword argument `key` to `arg`."""
        self.kwargs = {**self.kwargs, key: arg}

    def __update_args_kwargs(self, new_args, new_kwargs):
        for old in self._input_nodes:
            old.users.pop(self, None)
        self._input_nodes = {}

        def collect(n):
            self._input_nodes.setdefault(n)
            return n

        self._args = map_aggregate(new_args, lambda a: collect(a) if isinstance(a, Node) else a)
        self._kwargs = map_aggregate(new_kwargs, lambda a: collect(a) if isinstance(a, Node) else a)
        for n in self._input_nodes:
            n.users.setdefault(self)

    @property
    def stack_trace(self):
        """The Python stack trace recorded when this Node was traced (None if not recorded)."""
        return self.meta.get("stack_trace", None)

    @stack_trace.setter
    def stack_trace(self, trace):
        self.meta["stack_trace"] = trace

    # ------------------------------------------------------------ printing
    def __repr__(self):
        if self._repr_fn:
            return self._repr_fn(self)
        return self.name

    @staticmethod
    def _pretty_print_target(target):
        if isinstance(target, str):
            return target
        if hasattr(target, "__module__"):
            name = getattr(target, "__name__", None)
            if name is None:
                return _get_qualified_name(target)
            if target.__module__ == "builtins":
                return f"builtins.{name}"
            if target.__module__ == "_operator":
                return f"operator.{name}"
        return _get_qualified_name(target)

    def format_node(self, placeholder_names=None, maybe_return_typename=None):
        """A descriptive one-line string of this Node, as in `print(graph)`."""
        if self.op == "placeholder":
            arg_str = self.target
            arg_str += arg_str + f": {_type_repr(self.type)}" if self.type else ""
            if placeholder_names:
                placeholder_names.append(arg_str)
                return None
            maybe_typename = f"{_type_repr(self.type)} " if self.type else ""
            default_val = "(default=" + str(self.args[0]) + ")" if self.args else ""
            return (f"%{self.name} : {maybe_typename}[num_users={len(self.users)}] = "
                    f"{self.op}[target={self.target}]{default_val}")
        if self.op == "get_attr":
            maybe_typename = f"{_type_repr(self.type)} " if self.type is not None else ""
            return (f"%{self.name} : {maybe_typename}[num_users={len(self.users)}] = "
                    f"{self.op}[target={self._pretty_print_target(self.target)}]")
        if self.op == "output":
            if self.type and maybe_return_typename:
                maybe_return_typename[0] = f" -> {_type_repr(self.type)}"
            return f"return {self.args[0]}"
        maybe_typename = f"{_type_repr(self.type)} " if self.type is not None else ""
        return (f"%{self.name} : {maybe_typename}[num_users={len(self.users)}] = "
                f"{self.op}[target={self._pretty_print_target(self.target)}]("
                f"args = {_format_arg(self.args)}, kwargs = {_format_arg(self.kwargs)})")

    # ------------------------------------------------------------ rewiring
    def replace_all_uses_with(self, replace_with, delete_user_cb=lambda user: True, *, propagate_meta=False):
        """Makes every user of this Node use `replace_with` instead; returns the users changed."""
        if propagate_meta:
            if len(replace_with.meta) != 0:
                raise AssertionError("Called node.replace_all_uses_with(replace_with, propagate_meta=True), "
                                     "but replace_with already has .meta keys")
            for k, v in self.meta.items():
                replace_with.meta[k] = v
        to_process = list(self.users)
        skipped = []
        for use_node in to_process:
            if not delete_user_cb(use_node):
                skipped.append(use_node)
                continue
            use_node._replace_input(self, replace_with)
        if len(self.users) - len(skipped) != 0:
            raise AssertionError(f"users of {self} not all replaced")
        return [n for n in to_process if n not in skipped]

    def _replace_input(self, old, new):
        def swap(n):
            return new if n is old else n
        self.__update_args_kwargs(map_arg(self._args, swap), map_arg(self._kwargs, swap))

    def replace_input_with(self, old_input, new_input):
        """Replaces every use of `old_input` in this Node's args and kwargs with `new_input`."""
        self._replace_input(old_input, new_input)

    def is_impure(self, impure_random=True):
        """Whether this Node has side effects (placeholders, output, side-effectful calls, in-place methods)."""
        if self.op in ("placeholder", "output"):
            return True
        if self.op == "call_function":
            try:
                return self.target in _side_effectful_functions or self.target in _random_functions
            except TypeError:  # an unhashable callable
                return False
        if self.op == "call_method":
            return isinstance(self.target, str) and self.target.endswith("_") and not self.target.endswith("__")
        if self.op == "call_module":
            if self.graph.owning_module is None:
                return False
            target_mod = self.graph.owning_module.get_submodule(self.target)
            return getattr(target_mod, "_is_impure", False)
        return False

    def __getstate__(self):
        return dict(self.__dict__)

    def __setstate__(self, state):
        self.__dict__.update(state)


def map_arg(a, fn):
    """Applies `fn` to every Node in the (nested) argument `a`, rebuilding the containers."""
    if not callable(fn):
        raise AssertionError("ember.fx.map_arg(a, fn): fn must be a callable")
    return map_aggregate(a, lambda x: fn(x) if isinstance(x, Node) else x)


def map_aggregate(a, fn):
    """Applies `fn` to every leaf value in the (nested tuples/lists/dicts/slices) argument `a`."""
    if isinstance(a, tuple):
        t = tuple(map_aggregate(elem, fn) for elem in a)
        return t if not hasattr(a, "_fields") else type(a)(*t)
    if isinstance(a, list):
        return immutable_list(map_aggregate(elem, fn) for elem in a)
    if isinstance(a, dict):
        return immutable_dict((k, map_aggregate(v, fn)) for k, v in a.items())
    if isinstance(a, slice):
        return slice(map_aggregate(a.start, fn), map_aggregate(a.stop, fn), map_aggregate(a.step, fn))
    return fn(a)
