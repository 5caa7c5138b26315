"""Traced graph (the JSON form of csrc/ember/jit/README.md) -> onnx.ModelProto.

The graph is a straight list of op calls in SSA form, so conversion is one pass: each node's
symbolic (the _ops_* modules, registered by op name in SYMBOLICS) emits ONNX nodes through a
GraphBuilder and returns the ONNX names of the node's outputs."""
import onnx
from onnx import helper

from . import _ops_math, _ops_nn, _ops_shape  # noqa: F401  (they register the symbolics)
from ._builder import SYMBOLICS, GraphBuilder, Node, Val, _to_numpy, onnx_type
from .errors import OnnxExporterError, SymbolicValueError, UnsupportedOperatorError


class _Scope:
    """One graph's value table: value id -> ONNX name (or a constant tensor, emitted on first use)."""

    def __init__(self, graph):
        self.values = graph.get("values", [])
        self.env = {}

    def val(self, vid):
        if not 0 <= vid < len(self.values):
            raise OnnxExporterError(f"the graph refers to value %{vid}, which it does not describe")
        info = self.values[vid]
        return Val(vid, info["dtype"], info.get("shape", []), self)


def _decode_arg(arg, scope):
    (kind, x), = arg.items()
    if kind == "none":
        return None
    if kind == "value":
        return scope.val(x)
    if kind == "values":
        return [scope.val(v) for v in x]
    if kind == "float":
        return float(x)  # also "inf", "-inf", "nan"
    if kind in ("int", "bool", "str", "dtype", "options", "memory_format"):
        return x
    if kind == "ints":
        return list(x)
    raise OnnxExporterError(f"unknown argument kind {kind!r} in the traced graph")


def _flatten_outputs(spec):
    if "value" in spec:
        return [spec["value"]]
    items = spec.get("tuple", spec.get("list"))
    if items is None:
        raise OnnxExporterError(f"unknown output form {spec!r} in the traced graph")
    return [v for item in items for v in _flatten_outputs(item)]


def convert(graph, tensors, *, opset, input_names, output_names, dynamic_axes, export_params,
            keep_initializers_as_inputs, producer_version):
    """Build the ModelProto of a traced graph. `tensors` maps every params/constants name to its tensor."""
    if graph.get("format") != "ember.jit.graph" or graph.get("version") != 1:
        raise OnnxExporterError(f"not a version-1 ember.jit graph (format={graph.get('format')!r}, "
                                f"version={graph.get('version')!r})")
    g = GraphBuilder(opset, tensors)
    scope = _Scope(graph)
    out_ids = _flatten_outputs(graph["output"])

    in_names = _pick_names([i["name"] for i in graph["inputs"]], input_names, "input")
    out_names = _pick_names(["output"] if len(out_ids) == 1 else [f"output_{k}" for k in range(len(out_ids))],
                            output_names, "output")
    axes = _dynamic_axes(dynamic_axes, graph, in_names, out_names, scope, out_ids)

    for spec, name in zip(graph["inputs"], in_names):
        g.reserve(name)
        scope.env[spec["value"]] = ("input", name)
    for name in out_names:
        g.reserve(name)
    for entry in graph.get("params", []):
        if entry["name"] not in tensors:
            raise OnnxExporterError(f"no tensor was given for parameter {entry['name']!r}")
        g.reserve(entry["name"])
        scope.env[entry["value"]] = ("param", entry["name"])
    for entry in graph.get("constants", []):
        if entry["name"] not in tensors:
            raise OnnxExporterError(f"no tensor was given for constant {entry['name']!r}")
        scope.env[entry["value"]] = ("const", tensors[entry["name"]])

    _convert_nodes(g, graph, scope, dict(zip(out_ids, out_names)))

    outputs_bound = set()
    for vid, name in zip(out_ids, out_names):
        v = scope.val(vid)
        if v.scope.env.get(vid) != ("node", name) or name in outputs_bound:
            g.op_name = "output"
            node = helper.make_node("Identity", [g.t(v)], [name], name=g.fresh("node_Identity"))
            g.nodes.append(node)
        outputs_bound.add(name)

    inputs = [_value_info(name, scope.val(spec["value"]), axes.get(name, {}))
              for spec, name in zip(graph["inputs"], in_names)]
    outputs = [_value_info(name, scope.val(vid), axes.get(name, {}), known=not axes)
               for vid, name in zip(out_ids, out_names)]
    initializers = []
    order = {entry["name"]: k for k, entry in enumerate(graph.get("params", []))}
    for name, tensor in sorted(g.used_params.items(), key=lambda item: order[item[0]]):  # state_dict order
        array = _to_numpy(tensor)
        dtype = str(tensor.dtype).rsplit(".", 1)[-1]
        if export_params:
            initializers.append(GraphBuilder._tensor_proto(array, dtype, name))
        if keep_initializers_as_inputs or not export_params:
            inputs.append(helper.make_tensor_value_info(name, onnx_type(dtype), list(array.shape)))

    onnx_graph = helper.make_graph(g.nodes, "main_graph", inputs, outputs, initializer=initializers)
    model = helper.make_model_gen_version(onnx_graph, opset_imports=[helper.make_opsetid("", opset)],
                                          producer_name="ember", producer_version=producer_version)
    if axes:
        _infer_output_dims(model)
    return model


def _infer_output_dims(model):
    """Fill the output sizes a dynamic graph leaves open with what ONNX shape inference derives
    (e.g. [batch, 10] rather than [batch, ?]); where it cannot, they stay unknown, which is valid."""
    try:
        inferred = onnx.shape_inference.infer_shapes(model)
    except (onnx.shape_inference.InferenceError, ValueError):
        return
    found = {o.name: o.type.tensor_type for o in inferred.graph.output}
    for out in model.graph.output:
        src = found.get(out.name)
        dims = out.type.tensor_type.shape.dim
        if src is None or not src.HasField("shape") or len(src.shape.dim) != len(dims):
            continue
        for d, s in zip(dims, src.shape.dim):
            if d.HasField("dim_param") or d.HasField("dim_value"):
                continue
            if s.HasField("dim_value"):
                d.dim_value = s.dim_value
            elif s.HasField("dim_param"):
                d.dim_param = s.dim_param


# Ops whose outputs may share memory with their first argument (as torch's views, or returning it).
VIEW_OPS = {"view", "view.dtype", "view_as", "reshape", "reshape_as", "flatten", "unflatten", "permute", "transpose",
            "movedim", "t", "expand", "expand_as", "squeeze", "unsqueeze", "narrow", "slice", "select", "unbind",
            "split", "split.sizes", "chunk", "tensor_split.indices", "tensor_split.sections", "as_strided",
            "diagonal", "unfold", "alias", "contiguous", "to_dtype", "prim::detach"}


class _Aliases:
    """Keeps the SSA reading of the graph honest about in-place ops. The tracer gives an in-place
    op's result a new value id, but the op also changes every view of the same memory, whose ids
    the graph keeps using. ONNX values are immutable, so such a later use would read the old data:
    it is refused (ids made stale by a mutation), never exported wrong."""

    def __init__(self):
        self.root, self.members, self.stale = {}, {}, {}

    def _add(self, vid, root):
        self.root[vid] = root
        self.members.setdefault(root, set()).add(vid)

    def check_use(self, vid, op, opset):
        if vid in self.stale:
            raise UnsupportedOperatorError(
                f"aten::{self.stale[vid]}", opset, None,
                f"it changed %{vid} through another view of the same memory before {op} reads it, and ONNX "
                "values cannot change in place: use the out-of-place op (e.g. x = x.relu() rather than "
                "x.view(...).relu_())")

    def record(self, op, mutated, args, outputs):
        """mutated: the tensors the node writes (in-place self, out= tensors), each paired with an output."""
        if mutated:
            for target, v in zip(mutated, outputs):
                root = self.root.get(target.id, target.id)
                for vid in self.members.get(root, {target.id}):
                    self.stale[vid] = op + "_"
                self.members[root] = set()
                self._add(v.id, root)
        elif op in VIEW_OPS and args and isinstance(args[0], Val):
            for v in outputs:
                self._add(v.id, self.root.get(args[0].id, args[0].id))
        else:
            for v in outputs:
                self._add(v.id, v.id)


def _convert_nodes(g, graph, scope, output_names):
    aliases = _Aliases()
    for spec in graph.get("inputs", []) + graph.get("params", []) + graph.get("constants", []):
        aliases.record("input", [], [], [scope.val(spec["value"])])
    for raw in graph["nodes"]:
        op = raw["op"]
        g.op_name = op
        for a in raw["args"]:
            for vid in a.get("values", [a["value"]] if "value" in a else []):
                aliases.check_use(vid, op, g.opset)
        if op == "prim::guard_values":
            raise SymbolicValueError(
                "the traced code read a tensor's values into Python (item(), bool(), tolist() or numpy()), "
                "so its control flow depends on data and the graph holds only the branch taken at trace "
                "time; ONNX export needs code whose ops do not depend on tensor values")
        outputs = [scope.val(v) for v in raw["outputs"]]
        args = [_decode_arg(a, scope) for a in raw["args"]]
        variant = raw.get("variant")
        mutated = args[:len(outputs)] if variant == "out" else args[:1] if variant == "inplace" else []
        if variant == "out":
            args = args[len(outputs):]
        aliases.record(op, [v for v in mutated if isinstance(v, Val)], args, outputs)
        if op == "prim::FusionGroup":
            names = _convert_fusion_group(g, raw["subgraph"], args)
        else:
            fn = SYMBOLICS.get(op)
            if fn is None:
                raise UnsupportedOperatorError(f"aten::{op}", g.opset, None,
                                               "Ember's exporter has no ONNX form for this op")
            g._produced = {}
            names = fn(g, Node(op, args, outputs))
        if isinstance(names, str):
            names = [names]
        if len(names) != len(outputs):
            raise OnnxExporterError(f"{op}: the exporter made {len(names)} outputs for {len(outputs)} values")
        for v, name in zip(outputs, names):
            wanted = output_names.get(v.id)
            if wanted and name in g._produced:
                # a graph output made by this node: give the node's output the output's name
                node, k = g._produced.pop(name)
                node.output[k] = wanted
                at = next(k for k in range(len(g.nodes) - 1, -1, -1) if g.nodes[k] is node)
                for later in g.nodes[at + 1:]:  # this node's own uses of it (LSTM cell: c)
                    for j, inp in enumerate(later.input):
                        if inp == name:
                            later.input[j] = wanted
                name = wanted
            scope.env[v.id] = ("node", name)
    for vid in output_names:
        aliases.check_use(vid, "the graph's output", g.opset)


def _convert_fusion_group(g, subgraph, args):
    sub = _Scope(subgraph)
    for spec, arg in zip(subgraph["inputs"], args):
        if not isinstance(arg, Val):
            raise OnnxExporterError(f"prim::FusionGroup: argument {arg!r} is not a tensor")
        sub.env[spec["value"]] = ("node", g.t(arg))
    _convert_nodes(g, subgraph, sub, {})
    return [g.t(sub.val(v)) for v in _flatten_outputs(subgraph["output"])]


def _pick_names(defaults, given, what):
    if given is None:
        return list(defaults)
    given = list(given)
    if len(given) > len(defaults):
        raise ValueError(f"{len(given)} {what}_names given for a graph with {len(defaults)} {what}s")
    names = given + list(defaults[len(given):])
    if len(set(names)) != len(names):
        raise ValueError(f"{what} names must be unique, got {names}")
    return names


def _dynamic_axes(dynamic_axes, graph, in_names, out_names, scope, out_ids):
    """dynamic_axes as torch takes it ({name: {axis: dim_name}} or {name: [axes]}) -> {name: {axis: dim_name}}."""
    if not dynamic_axes:
        return {}
    if graph.get("static_shapes"):
        raise OnnxExporterError(
            "dynamic_axes cannot be honoured: the traced code read a tensor's shape into Python "
            f"({graph.get('static_shapes_reason') or 'size(), shape, numel() or len()'}), so sizes may be baked "
            "into the graph and it is only valid for the traced shapes. Compute shapes with tensor ops "
            "(e.g. flatten(1) instead of view(x.size(0), -1)) or export without dynamic_axes")
    ranks = {name: len(scope.val(spec["value"]).shape) for spec, name in zip(graph["inputs"], in_names)}
    ranks.update({name: len(scope.val(vid).shape) for vid, name in zip(out_ids, out_names)})
    result = {}
    for key, spec in dynamic_axes.items():
        if key not in ranks:
            raise ValueError(f"dynamic_axes names {key!r}, which is none of the inputs {in_names} or outputs "
                             f"{out_names}")
        if isinstance(spec, dict):
            named = {int(a): str(n) for a, n in spec.items()}
        elif isinstance(spec, (list, tuple)):
            named = {int(a): f"{key}_dynamic_axes_{k + 1}" for k, a in enumerate(spec)}
        else:
            raise TypeError(f"dynamic_axes[{key!r}] must be a dict {{axis: name}} or a list of axes, "
                            f"got {type(spec).__name__}")
        rank = ranks[key]
        for a in named:
            if not -rank <= a < rank:
                raise ValueError(f"dynamic_axes[{key!r}] names axis {a}, but {key!r} has rank {rank}")
        result[key] = {a % rank: n for a, n in named.items()}
    return result


def _value_info(name, v, dyn, known=True):
    """A graph input/output type: named dims where dynamic; trace-time sizes elsewhere, except on
    outputs of a graph with dynamic axes (they may follow an input's size: _infer_output_dims)."""
    dims = [dyn[k] if k in dyn else (d if known else None) for k, d in enumerate(v.shape)]
    return helper.make_tensor_value_info(name, onnx_type(v.dtype), dims)


def check(model):
    if sum(len(t.raw_data) for t in model.graph.initializer) > 2 ** 31 - (1 << 24):
        return  # past protobuf's 2 GiB the checker cannot take the model in memory (saved with external data)
    try:
        onnx.checker.check_model(model)
    except onnx.checker.ValidationError as e:
        raise OnnxExporterError(f"the exported model does not pass onnx.checker: {e}") from e
