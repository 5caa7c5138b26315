"""Recording a Python callable into a graph (the C++ tracer does the recording; this file handles
Python's side: nested inputs and outputs, parameters by name, and readable printing)."""
import inspect
import json

from .. import _C
from .._tensor import Tensor

_jit = _C._jit

# Ops that draw random numbers: a trace containing them is not compared against eager code.
RANDOM_OPS = {"bernoulli", "bernoulli.p", "bernoulli_", "bernoulli_.float", "dropout", "feature_dropout",
              "alpha_dropout", "feature_alpha_dropout", "rand", "rand_like", "randn", "randn_like", "randint",
              "randint.low", "randperm", "uniform_", "normal_", "random_", "random_.to", "exponential_",
              "multinomial", "poisson", "rrelu", "normal.Tensor_Tensor", "normal.Tensor_float", "normal.float_Tensor",
              "normal.float_float"}


def flatten(obj):
    """Tensor leaves of nested tuples/lists/dicts, and a structure to rebuild it. Other leaves are
    kept in the structure (they are part of the call's signature)."""
    leaves = []
    return leaves, _flatten_into(obj, leaves)


# Module-level recursion, not a nested closure: a recursive closure is a reference cycle, and the
# tensors it reaches would wait for the cyclic GC instead of being freed at once.
def _flatten_into(o, leaves):
    if isinstance(o, Tensor):
        leaves.append(o)
        return ("T",)
    if isinstance(o, (tuple, list)):
        return (type(o).__name__, tuple(_flatten_into(x, leaves) for x in o))
    if isinstance(o, dict):
        return ("dict", tuple((k, _flatten_into(v, leaves)) for k, v in o.items()))
    return ("C", o)


def _same_structure(a, b):
    try:
        return a == b
    except Exception:  # a leaf whose == is not a bool (numpy arrays): compare identity
        return a is b


def output_spec(out, tracer):
    if isinstance(out, Tensor):
        return tracer.value_of(out)
    if isinstance(out, (tuple, list)):
        return ("tuple" if isinstance(out, tuple) else "list", [output_spec(o, tracer) for o in out])
    raise RuntimeError(
        f"ember.jit.trace: the traced function returned a {type(out).__name__}; only tensors and "
        "(nested) tuples/lists of tensors can be graph outputs")


def rebuild(spec, leaves):
    """Nested outputs from the flat leaves the C++ interpreter returns, as the spec nests them."""
    if isinstance(spec, int):  # the common case: one tensor
        return leaves[0]
    return _rebuild(spec, iter(leaves))


def _rebuild(s, it):
    if isinstance(s, int):
        return next(it)
    kind, items = s
    built = [_rebuild(x, it) for x in items]
    return tuple(built) if kind == "tuple" else built


def input_names(fn, n):
    """Names for a traced graph's n inputs: fn's positional parameter names, else input0, input1, ..."""
    try:
        params = [p.name for p in inspect.signature(fn).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        params = []
    return params[:n] if len(params) >= n else [f"input{k}" for k in range(n)]


def named_state(module):
    """Parameters and buffers by their state_dict names (tied tensors keep the first name)."""
    named = {}
    if module is None:
        return named
    for name, p in module.named_parameters():
        named.setdefault(name, p)
    for name, b in module.named_buffers():
        if b is not None:
            named.setdefault(name, b)
    return named


def record(call, leaves, names, module=None, strict=True):
    """Runs call() eagerly while recording it; `leaves` are the tensors it receives as inputs.
    Returns (graph, eager output). When the code did something a graph cannot hold, raises
    RuntimeError (strict) or returns (None, output) with the reason in the third place."""
    tracer = _jit.Tracer()
    try:
        for t, name in zip(leaves, names):
            tracer.add_input(t, name)
        for name, t in named_state(module).items():
            tracer.add_param(name, t)
        out = call()
        reason = tracer.poisoned
        if reason and not strict:
            return None, out, "ember.jit.trace: cannot trace this function: " + reason
        try:
            graph = tracer.finish(output_spec(out, tracer))
        except RuntimeError as err:
            if strict:
                raise
            return None, out, str(err)
    finally:
        tracer.abort()
    return graph, out, None


def is_pure(doc):
    """No node mutates anything and none draws random numbers: replaying cannot differ from eager."""
    for n in doc["nodes"]:
        base = n["op"].split(".")[0]
        if n["variant"] != "functional" or base.endswith("_") or n["op"] in RANDOM_OPS:
            return False
    return True


def mutates(doc):
    return any(n["variant"] != "functional" or n["op"].split(".")[0].endswith("_") for n in doc["nodes"])


# ---------------------------------------------------------------- printing
def _fmt_arg(a):
    (k, v), = a.items()
    if k == "value":
        return f"%{v}"
    if k == "values":
        return "[" + ", ".join(f"%{x}" for x in v) + "]"
    if k == "none":
        return "None"
    if k == "options":
        return "{" + ", ".join(f"{kk}={vv}" for kk, vv in v.items()) + "}"
    return repr(v) if k == "str" else str(v)


def graph_text(doc, indent=""):
    """The graph as readable text: one line per node, %N values."""
    ins = ", ".join(f"%{i['value']} : {i['dtype']}{i['shape']} ({i['name']})" for i in doc["inputs"])
    lines = [f"{indent}graph({ins}):"]
    for p in doc["params"]:
        v = doc["values"][p["value"]]
        lines.append(f"{indent}  %{p['value']} : {v['dtype']}{v['shape']} = param[{p['name']}]")
    for c in doc["constants"]:
        v = doc["values"][c["value"]]
        lines.append(f"{indent}  %{c['value']} : {v['dtype']}{v['shape']} = constant[{c['name']}]")
    for n in doc["nodes"]:
        outs = ", ".join(f"%{o}" for o in n["outputs"])
        name = n["op"] + ("_" if n["variant"] == "inplace" else ".out" if n["variant"] == "out" else "")
        lhs = f"{outs} = " if outs else ""
        lines.append(f"{indent}  {lhs}{name}({', '.join(_fmt_arg(a) for a in n['args'])})")
        if "subgraph" in n:
            lines.append(graph_text(n["subgraph"], indent + "    "))

    def out(o):
        (k, v), = o.items()
        return f"%{v}" if k == "value" else ("(" if k == "tuple" else "[") + ", ".join(out(x) for x in v) + (
            ")" if k == "tuple" else "]")

    lines.append(f"{indent}  return {out(doc['output'])}")
    return "\n".join(lines)


class GraphView:
    """What `traced.graph` shows: the recorded graph, printable, with its JSON form and nodes."""

    def __init__(self, cgraph):
        self._c = cgraph

    def json(self):
        return json.loads(self._c.to_json())

    def nodes(self):
        return [n["op"] for n in self.json()["nodes"]]

    def __str__(self):
        return graph_text(self.json())

    __repr__ = __str__
