"""fx Graph: the ordered list of Nodes of a traced program, its editing API and its Python codegen
(torch.fx.graph)."""
import builtins
import copy
import enum
import inspect
import keyword
import math
import re
import warnings
from dataclasses import dataclass
from typing import Any, Dict, Optional

import ember

from .node import Node, _get_qualified_name, _type_repr, map_arg

__all__ = ["Graph", "CodeGen", "PythonCode"]

_illegal_names = {k: object() for k in keyword.kwlist}
_illegal_names.update(builtins.__dict__)  # a generated name never shadows a builtin

# names generated code may use without defining them: (import statement, object)
_custom_builtins = {}


def _register_custom_builtin(name, import_str, obj):
    _custom_builtins[name] = (import_str, obj)
    _illegal_names[name] = obj


_register_custom_builtin("inf", "from math import inf", math.inf)
_register_custom_builtin("nan", "from math import nan", math.nan)
_register_custom_builtin("NoneType", "NoneType = type(None)", type(None))
_register_custom_builtin("ember", "import ember", ember)
_register_custom_builtin("device", "from ember import device", ember.device)


def _is_magic(x):
    return x.startswith("__") and x.endswith("__")


_snake_case_re = re.compile(r"(?<=[a-z])([A-Z])")


def _snake_case(s):
    return _snake_case_re.sub(r"_\1", s).lower()


_illegal_char_regex = re.compile("[^0-9a-zA-Z_]+")
_name_regex = re.compile(r"^([a-zA-Z_][0-9a-zA-Z_]*?)(?:_(\d+))?$")


def _is_from_ember(obj):
    module_name = getattr(obj, "__module__", None)
    if module_name is not None:
        return module_name == "ember" or module_name.startswith("ember.")
    name = getattr(obj, "__name__", None)
    if name is not None and name != "ember":
        for guess in (ember, ember.nn.functional):
            if getattr(guess, name, None) is obj:
                return True
    return False


class _Namespace:
    """Unique Python identifiers for objects: one name per object, no duplicates, no shadowed builtins."""

    def __init__(self):
        self._obj_to_name = {}
        self._used_names = set()
        self._base_count = {}

    def create_name(self, candidate, obj):
        if obj is not None and obj in self._obj_to_name:
            return self._obj_to_name[obj]
        match = _name_regex.match(candidate)
        if match is None:
            candidate = _illegal_char_regex.sub("_", candidate)
            if not candidate:
                candidate = "_unnamed"
            if candidate[0].isdigit():
                candidate = f"_{candidate}"
            match = _name_regex.match(candidate)
        base, num = match.group(1, 2)
        if num is None or candidate in self._used_names:
            num = self._base_count.get(base, 0)
            if _illegal_names.get(candidate, obj) is not obj:
                num += 1
                candidate = f"{base}_{num}"
        else:
            num = int(num)
        while candidate in self._used_names:
            num += 1
            candidate = f"{base}_{num}"
        self._used_names.add(candidate)
        self._base_count[base] = num
        if obj is not None:
            self._obj_to_name[obj] = candidate
        return candidate

    def associate_name_with_obj(self, name, obj):
        maybe_existing = self._obj_to_name.setdefault(obj, name)
        if maybe_existing is not name:
            raise AssertionError("obj is already associated")

    def _rename_object(self, obj, name):
        self._obj_to_name[obj] = name
        self._used_names.add(name)


@dataclass
class PythonCode:
    """The source of a generated `forward` and the globals it needs to be exec'd."""

    src: str
    globals: Dict[str, Any]
    _lineno_map: Optional[Dict[int, Optional[int]]] = None


def _format_target(base, target):
    r = base
    for e in target.split("."):
        r = f'getattr({r}, "{e}")' if not e.isidentifier() else f"{r}.{e}"
    return r


reflectable_magic_methods = {
    "add": "{} + {}", "sub": "{} - {}", "mul": "{} * {}", "floordiv": "{} // {}", "truediv": "{} / {}",
    "div": "{} / {}", "mod": "{} % {}", "pow": "{} ** {}", "lshift": "{} << {}", "rshift": "{} >> {}",
    "and_": "{} & {}", "or_": "{} | {}", "xor": "{} ^ {}", "getitem": "{}[{}]", "matmul": "{} @ {}",
}
magic_methods = {
    "eq": "{} == {}", "ne": "{} != {}", "lt": "{} < {}", "gt": "{} > {}", "le": "{} <= {}", "ge": "{} >= {}",
    "pos": "+{}", "neg": "-{}", "invert": "~{}", **reflectable_magic_methods,
}
inplace_methods = {
    "iadd": "{} += {}", "iand": "{} &= {}", "ifloordiv": "{} //= {}", "ilshift": "{} <<= {}", "imod": "{} %= {}",
    "imul": "{} *= {}", "imatmul": "{} @= {}", "ior": "{} |= {}", "ipow": "{} **= {}", "irshift": "{} >>= {}",
    "isub": "{} -= {}", "itruediv": "{} /= {}", "ixor": "{} ^= {}", "setitem": "{}[{}] = {}",
}


class CodeGen:
    """Turns a Graph into the Python source of a `forward` function; subclass to change the calling convention."""

    def __init__(self):
        self._body_transformer = None
        self._func_name = "forward"

    def gen_fn_def(self, free_vars, maybe_return_annotation):
        """The `def forward(self, ...):` line for the given free variables."""
        if len(free_vars) == 0 or free_vars[0] != "self":
            free_vars.insert(0, "self")
        return f"def {self._func_name}({', '.join(free_vars)}){maybe_return_annotation}:"

    def generate_output(self, output_args):
        """The `return ...` statement for the graph's output value."""
        return f"return {repr(output_args)}"

    def process_inputs(self, *args):
        """Transforms the inputs the way the generated code expects them (identity by default)."""
        return args

    def process_outputs(self, outputs):
        """Transforms the graph's outputs the way the generated code returns them (identity by default)."""
        return outputs

    def additional_globals(self):
        """Extra (name, object) globals the generated code needs."""
        return []

    def _gen_python_code(self, nodes, root_module, namespace, *, verbose=False):
        free_vars = []
        body = []
        globals_ = {}
        wrapped_fns = {}
        maybe_return_annotation = [""]

        def add_global(name_hint, obj):
            if _is_from_ember(obj) and obj != ember.device:
                return _get_qualified_name(obj)
            global_name = namespace.create_name(name_hint, obj)
            if global_name in globals_:
                if globals_[global_name] is not obj:
                    raise AssertionError(f"global name {global_name} is already bound to another object")
                return global_name
            globals_[global_name] = obj
            return global_name

        for name, (_, obj) in _custom_builtins.items():
            add_global(name, obj)

        def type_repr(o):
            if o == ():
                return "()"
            typename = _type_repr(o)
            origin = getattr(o, "__origin__", None)
            if origin is not None:
                origin_typename = add_global(_type_repr(origin), origin)
                args = getattr(o, "__args__", ())
                if args:
                    return f"{origin_typename}[{','.join(type_repr(a) for a in args)}]"
                return origin_typename
            return add_global(typename, o)

        def _get_repr(arg):
            if isinstance(arg, Node):
                return repr(arg)
            if isinstance(arg, tuple) and hasattr(arg, "_fields"):
                global_name = add_global(_get_qualified_name(type(arg)), type(arg))
                return f"{global_name}{repr(tuple(arg))}"
            if isinstance(arg, enum.Enum):
                cls = arg.__class__
                return f"{add_global(cls.__name__, cls)}.{arg.name}"
            if isinstance(arg, ember.Tensor):
                size = list(arg.size())
                dtype = str(arg.dtype).split(".")[-1]
                return f"ember.Tensor(size={size}, dtype={dtype})"
            if isinstance(arg, tuple):
                if len(arg) == 1:
                    return f"({_get_repr(arg[0])},)"
                return "(" + ", ".join(_get_repr(a) for a in arg) + ")"
            if isinstance(arg, list):
                return "[" + ", ".join(_get_repr(a) for a in arg) + "]"
            if isinstance(arg, slice):
                return f"slice({_get_repr(arg.start)}, {_get_repr(arg.stop)}, {_get_repr(arg.step)})"
            return repr(arg)

        def _format_args(args, kwargs):
            res = [_get_repr(a) for a in args]
            res.extend(f"{k} = {_get_repr(v)}" for k, v in kwargs.items())
            return ", ".join(res)

        node_to_last_use = {}
        user_to_last_uses = {}

        def register_last_uses(n, user):
            if n not in node_to_last_use:
                node_to_last_use[n] = user
                user_to_last_uses.setdefault(user, []).append(n)

        for node in reversed(nodes):
            for input_node in node._input_nodes:
                register_last_uses(input_node, node)

        def delete_unused_values(user):
            if user.op == "placeholder":
                return
            if user.op == "output":
                body.append("\n")
                return
            to_delete = list(user_to_last_uses.get(user, []))
            if len(user.users) == 0:
                to_delete.append(user)
            if to_delete:
                body.append(";  " + " = ".join([repr(n) for n in to_delete] + ["None"]) + "\n")
            else:
                body.append("\n")

        def emit_node(node):
            maybe_type_annotation = "" if node.type is None else f" : {type_repr(node.type)}"
            if node.op == "placeholder":
                maybe_default_arg = "" if not node.args else f" = {_get_repr(node.args[0])}"
                free_vars.append(f"{node.target}{maybe_type_annotation}{maybe_default_arg}")
                raw_name = node.target.replace("*", "")
                if raw_name != repr(node):
                    body.append(f"{repr(node)} = {raw_name}\n")
                return
            if node.op == "call_method":
                body.append(f"{repr(node)}{maybe_type_annotation} = "
                            f"{_format_target(_get_repr(node.args[0]), node.target)}"
                            f"({_format_args(node.args[1:], node.kwargs)})")
                return
            if node.op == "call_function":
                target = node.target
                if getattr(target, "__module__", "") == "_operator" and target.__name__ in magic_methods:
                    body.append(f"{repr(node)}{maybe_type_annotation} = "
                                f"{magic_methods[target.__name__].format(*(_get_repr(a) for a in node.args))}")
                    return
                if getattr(target, "__module__", "") == "_operator" and target.__name__ in inplace_methods:
                    body.append(f"{inplace_methods[target.__name__].format(*(_get_repr(a) for a in node.args))};  "
                                f"{repr(node)}{maybe_type_annotation} = {_get_repr(node.args[0])}")
                    return
                global_name = add_global(_get_qualified_name(target), target)
                if global_name == "getattr" and isinstance(node.args, tuple) and len(node.args) == 2 \
                        and isinstance(node.args[1], str) and node.args[1].isidentifier():
                    body.append(f"{repr(node)}{maybe_type_annotation} = "
                                f"{_format_target(_get_repr(node.args[0]), node.args[1])}")
                    return
                body.append(f"{repr(node)}{maybe_type_annotation} = {global_name}"
                            f"({_format_args(node.args, node.kwargs)})")
                if node.meta.get("is_wrapped", False):
                    wrapped_fns.setdefault(global_name)
                return
            if node.op == "call_module":
                body.append(f"{repr(node)}{maybe_type_annotation} = "
                            f"{_format_target(root_module, node.target)}({_format_args(node.args, node.kwargs)})")
                return
            if node.op == "get_attr":
                body.append(f"{repr(node)}{maybe_type_annotation} = {_format_target(root_module, node.target)}")
                return
            if node.op == "output":
                if node.type is not None:
                    maybe_return_annotation[0] = f" -> {type_repr(node.type)}"
                body.append(self.generate_output(node.args[0]))
                return
            raise NotImplementedError(f"node: {node.op} {node.target}")

        for node in nodes:
            emit_node(node)
            delete_unused_values(node)

        if len(body) == 0:
            body.append("pass\n")
        if wrapped_fns:
            wrap_stmts = "\n".join(f'ember.fx._symbolic_trace.wrap("{name}")' for name in wrapped_fns)
        else:
            wrap_stmts = ""
        if self._body_transformer:
            body = self._body_transformer(body)
        for name, value in self.additional_globals():
            add_global(name, value)
        prologue = self.gen_fn_def(free_vars, maybe_return_annotation[0])
        code = "".join(body).lstrip("\n")
        code = "\n".join("    " + line for line in code.split("\n"))
        fn_code = f"""
{wrap_stmts}

{prologue}
{code}"""
        return PythonCode(fn_code, globals_)


class _InsertPoint:
    def __init__(self, graph, new_insert):
        self.graph = graph
        self.orig_insert, graph._insert = graph._insert, new_insert

    def __enter__(self):
        pass

    def __exit__(self, type, value, tb):
        self.graph._insert = self.orig_insert


class _node_list:
    def __init__(self, graph, direction="_next"):
        self.graph = graph
        self.direction = direction

    def __len__(self):
        return self.graph._len

    def __iter__(self):
        root = self.graph._root
        cur = getattr(root, self.direction)
        while cur is not root:
            if not cur._erased:
                yield cur
            cur = getattr(cur, self.direction)

    def __reversed__(self):
        return _node_list(self.graph, "_next" if self.direction == "_prev" else "_prev")


class Graph:
    """The IR of fx: a doubly linked list of Nodes (placeholders, operations, one output) plus codegen."""

    def __init__(self, owning_module=None, tracer_cls=None, tracer_extras=None):
        self._root = Node(self, "", "root", "", (), {})
        self._used_names = {}
        self._insert = self._root.prepend
        self._len = 0
        self._graph_namespace = _Namespace()
        self._owning_module = owning_module
        self._tracer_cls = tracer_cls
        self._tracer_extras = tracer_extras
        self._codegen = CodeGen()
        self._co_fields = {}

    @property
    def owning_module(self):
        """The GraphModule this graph belongs to (None if it has none)."""
        return self._owning_module

    @owning_module.setter
    def owning_module(self, mod):
        self._owning_module = mod

    @property
    def nodes(self):
        """The Nodes of this graph in order (a live view; reversed() walks it backwards)."""
        return _node_list(self)

    def find_nodes(self, *, op, target=None, sort=True):
        """The Nodes with the given op (and target, if given), in graph order."""
        return [n for n in self.nodes if n.op == op and (target is None or n.target == target)]

    def graph_copy(self, g, val_map, return_output_node=False):
        """Copies the nodes of graph `g` into this one (val_map maps g's nodes to the copies); returns
        the copied output value."""
        for node in g.nodes:
            if node in val_map:
                continue
            if node.op == "output":
                rv = map_arg(node.args[0], lambda n: val_map[n])
                return (rv, node) if return_output_node else rv
            val_map[node] = self.node_copy(node, lambda n: val_map[n])
        return None

    def __deepcopy__(self, memo=None):
        memo = memo if memo else {}
        g = Graph(tracer_cls=self._tracer_cls)
        output_vals = g.graph_copy(self, val_map=memo, return_output_node=True)
        g._codegen = copy.deepcopy(self._codegen)
        if output_vals is not None:
            output_val, old_output_node = output_vals
            new_output_node = g.output(output_val, type_expr=getattr(old_output_node, "type", None))
            new_output_node.meta = copy.copy(old_output_node.meta)
        return g

    def create_node(self, op, target, args=None, kwargs=None, name=None, type_expr=None):
        """Creates a Node with a unique name derived from `name` or the target, at the insert point."""
        args = () if args is None else args
        kwargs = {} if kwargs is None else kwargs
        if not isinstance(args, tuple):
            raise AssertionError("args must be a tuple")
        if not isinstance(kwargs, dict):
            raise AssertionError("kwargs must be a dict")
        candidate = name if name is not None else self._target_to_str(target)
        name = self._graph_namespace.create_name(candidate, None)
        n = Node(self, name, op, target, args, kwargs, type_expr)
        self._graph_namespace.associate_name_with_obj(name, n)
        self._insert(n)
        self._len += 1
        return n

    def process_inputs(self, *args):
        """The codegen's input transformation."""
        return self._codegen.process_inputs(*args)

    def process_outputs(self, out):
        """The codegen's output transformation."""
        return self._codegen.process_outputs(out)

    def erase_node(self, to_erase):
        """Removes a Node that has no users from the graph (RuntimeError if it still has users)."""
        if len(to_erase.users) > 0:
            raise RuntimeError(f"Tried to erase Node {to_erase} but it still had {len(to_erase.users)} "
                               f"users in the graph: {to_erase.users}!")
        if to_erase.graph is not self:
            raise RuntimeError(f"Attempting to remove {to_erase} from wrong graph!")
        if to_erase._erased:
            warnings.warn(f"erase_node({to_erase}) on an already erased node")
            return
        to_erase._remove_from_list()
        to_erase._erased = True
        self._len -= 1
        # drop it from its inputs' users
        to_erase.args = map_arg(to_erase.args, lambda n: None)
        to_erase.kwargs = map_arg(to_erase.kwargs, lambda n: None)

    def inserting_before(self, n=None):
        """Context manager: nodes created inside go just before `n` (the graph's start if None)."""
        if n is None:
            return self.inserting_after(self._root)
        if n.graph is not self:
            raise AssertionError("Node to insert before is not in graph.")
        return _InsertPoint(self, n.prepend)

    def inserting_after(self, n=None):
        """Context manager: nodes created inside go just after `n` (the graph's end if None)."""
        if n is None:
            return self.inserting_before(self._root)
        if n.graph is not self:
            raise AssertionError("Node to insert after is not in graph.")
        return _InsertPoint(self, n.append)

    def placeholder(self, name, type_expr=None, default_value=inspect.Signature.empty):
        """Adds a placeholder Node: an input of the function, optionally with a default value."""
        args = () if default_value is inspect.Signature.empty else (default_value,)
        return self.create_node("placeholder", name, args=args, type_expr=type_expr)

    def get_attr(self, qualified_name, type_expr=None):
        """Adds a get_attr Node that fetches a parameter, buffer or attribute of the root module."""
        mod = self.owning_module
        if mod is not None and isinstance(mod, ember.nn.Module):
            m = mod
            for atom in qualified_name.split("."):
                if not hasattr(m, atom):
                    warnings.warn("Attempted to insert a get_attr Node with no underlying reference in the "
                                  f"owning GraphModule! Call GraphModule.add_submodule to add the necessary "
                                  f"submodule, GraphModule.add_parameter to add the necessary Parameter, or "
                                  f"nn.Module.register_buffer to add the necessary buffer")
                    break
                m = getattr(m, atom)
        return self.create_node("get_attr", qualified_name, type_expr=type_expr)

    def call_module(self, module_name, args=None, kwargs=None, type_expr=None):
        """Adds a call_module Node calling the submodule at `module_name`."""
        return self.create_node("call_module", module_name, args, kwargs, type_expr=type_expr)

    def call_method(self, method_name, args=None, kwargs=None, type_expr=None):
        """Adds a call_method Node calling method `method_name` of args[0]."""
        return self.create_node("call_method", method_name, args, kwargs, type_expr=type_expr)

    def call_function(self, the_function, args=None, kwargs=None, type_expr=None, name=None):
        """Adds a call_function Node calling `the_function`."""
        return self.create_node("call_function", the_function, args, kwargs, name=name, type_expr=type_expr)

    def node_copy(self, node, arg_transform=lambda x: x):
        """Copies `node` (from any graph) into this one, mapping its Node arguments through arg_transform."""
        args = map_arg(node.args, arg_transform)
        kwargs = map_arg(node.kwargs, arg_transform)
        result_node = self.create_node(node.op, node.target, args, kwargs, node.name, node.type)
        result_node.meta = copy.copy(node.meta)
        return result_node

    def output(self, result, type_expr=None):
        """Adds the output Node, whose argument is the function's return value."""
        return self.create_node(op="output", target="output", args=(result,), type_expr=type_expr)

    def _target_to_str(self, target):
        if callable(target):
            op = target.__name__
        else:
            op = target
            if _is_magic(op):
                op = op[2:-2]
        return _snake_case(op)

    def python_code(self, root_module, *, verbose=False):
        """The Python source (and globals) of a `forward` that runs this graph; root_module names the module."""
        namespace = _Namespace()

        def node_repr(n):
            return namespace.create_name(n.name, n)

        orig = {}
        for node in self.nodes:
            orig[node] = node._repr_fn
            node._repr_fn = node_repr
        try:
            return self._codegen._gen_python_code(self.nodes, root_module, namespace, verbose=verbose)
        finally:
            for node, fn in orig.items():
                node._repr_fn = fn

    def __str__(self):
        placeholder_names = []
        maybe_return_typename = [""]
        node_strs = [node.format_node(placeholder_names) for node in self.nodes]
        s = f"graph({', '.join(placeholder_names)}){maybe_return_typename[0]}:"
        for node_str in node_strs:
            if node_str:
                s += "\n    " + node_str
        return s

    def print_tabular(self):
        """Prints the nodes as a table (opcode, name, target, args, kwargs); needs the `tabulate` package."""
        try:
            from tabulate import tabulate
        except ImportError:
            print("`print_tabular` relies on the library `tabulate`, which could not be found on this machine. "
                  "Run `pip install tabulate` to install the library.")
            raise
        node_specs = [[n.op, n.name, n.target, n.args, n.kwargs] for n in self.nodes]
        print(tabulate(node_specs, headers=["opcode", "name", "target", "args", "kwargs"]))

    def lint(self):
        """Checks the graph is well formed (inputs defined before use, unique names, valid targets)."""
        seen_names = set()
        seen_values = set()

        def check_arg(arg, n=None):
            context_str = f" of Node '{n}' " if n else " "
            if arg.graph is not self:
                raise RuntimeError(f"Argument '{arg}'{context_str}does not belong to this Graph, but was used as "
                                   "an argument! If you are copying nodes from another graph, make sure to use "
                                   f"``arg_transform`` on node_copy() to remap values\n{self}")
            if arg not in seen_values:
                raise RuntimeError(f"Argument '{arg}'{context_str}was used before it has been defined! Please "
                                   f"check that Nodes in the graph are topologically ordered\n{self}")

        for node in self.nodes:
            if node.op not in ("placeholder", "call_method", "call_module", "call_function", "get_attr", "output"):
                raise RuntimeError(f"Node {node} had unknown opcode {node.op}!")
            if node.graph is not self:
                raise RuntimeError(f"Node '{node}' does not belong to this Graph!")
            map_arg(node.args, lambda arg: check_arg(arg, node))
            map_arg(node.kwargs, lambda arg: check_arg(arg, node))
            seen_values.add(node)
            if node.name in seen_names:
                raise RuntimeError(f"Node redefined name {node.name}!")
            seen_names.add(node.name)

        if self.owning_module:
            for node in self.nodes:
                if node.op == "call_function":
                    if not callable(node.target):
                        raise ValueError(f"Node {node} target {node.target} has type {type(node.target)} but a "
                                         "Callable is expected")
                elif not isinstance(node.target, str):
                    raise ValueError(f"Node {node} target {node.target} has type {type(node.target)} but a str "
                                     "is expected")
                if node.op in ("get_attr", "call_module"):
                    atoms = node.target.split(".")
                    m_itr = self.owning_module
                    for i, atom in enumerate(atoms):
                        new_m_itr = getattr(m_itr, atom, None)
                        seen_qualname = ".".join(atoms[:i])
                        if new_m_itr is None:
                            raise RuntimeError(f"Node {node} target {node.target} references nonexistent "
                                               f"attribute {atom} of {seen_qualname}")
                        if node.op == "call_module" and not isinstance(new_m_itr, ember.nn.Module):
                            raise RuntimeError(f"Node {node} target {node.target} {atom} of {seen_qualname} "
                                               "does not reference an nn.Module")
                        m_itr = new_m_itr

    def eliminate_dead_code(self, is_impure_node=None):
        """Erases the nodes whose values are never used and that have no side effects; True if any went."""
        self.lint()
        changed = False
        for node in reversed(self.nodes):
            impure = is_impure_node(node) if is_impure_node is not None else node.is_impure()
            if not impure and len(node.users) == 0:
                self.erase_node(node)
                changed = True
        return changed

    def set_codegen(self, codegen):
        """Uses `codegen` (a CodeGen) to generate this graph's Python code."""
        self._codegen = codegen
