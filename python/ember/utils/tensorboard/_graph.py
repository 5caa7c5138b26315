"""add_graph: a module's forward recorded by Ember's tracer, as a TensorBoard GraphDef.

Nodes are the traced ops (aten::<op>), the inputs and outputs ("IO Node"), the parameters
(prim::GetAttr) and captured constants (prim::Constant). Each node is named under the scope of
the innermost module call that produced it, e.g. Net/Sequential[seq]/Linear[0]/linear.9, so
TensorBoard folds the graph along the module hierarchy as it does for torch's writer.

Scopes come from forward hooks: at the start and end of every module call the hook asks the
tracer for the id of a fresh marker tensor, which is the number of values recorded so far, so a
node belongs to the innermost call whose [start, end) id range holds its outputs.
"""
import json

from ... import _C
from ..._tensor import Tensor
from ...jit._graph import flatten, input_names, named_state, output_spec
from ...nn.modules.module import Module
from . import _proto

_jit = _C._jit


def _module_scopes(model):
    """{id(module): scope path} as torch names them: Net/Sequential[seq]/Linear[0]."""
    root = type(model).__name__
    scopes = {id(model): root}
    for name, module in model.named_modules():
        if name and id(module) not in scopes:
            parent, _, leaf = name.rpartition(".")
            parent_scope = scopes[id(model.get_submodule(parent))] if parent else root
            scopes[id(module)] = f"{parent_scope}/{type(module).__name__}[{leaf}]"
    return scopes


class _ScopeRecorder:
    """Forward hooks on every submodule that record (scope, first value id, end value id)."""

    def __init__(self, model, tracer):
        self._tracer = tracer
        self._scopes = _module_scopes(model)
        self._open = []
        self.calls = []
        self.marker_ids = set()
        self._markers = []  # kept alive: a freed marker's address could be reused by a real tensor
        self._handles = []
        for _, module in model.named_modules():
            self._handles.append(module.register_forward_pre_hook(self._enter))
            self._handles.append(module.register_forward_hook(self._exit))

    def _next_id(self):
        with _jit.NoTrace():
            marker = _C._ops.empty([0])
        self._markers.append(marker)
        value = self._tracer.value_of(marker)
        self.marker_ids.add(value)
        return value

    def _enter(self, module, args):
        self._open.append((self._scopes.get(id(module), type(module).__name__), self._next_id()))

    def _exit(self, module, args, output):
        scope, start = self._open.pop()
        self.calls.append((scope, start, self._next_id()))

    def remove(self):
        for handle in self._handles:
            handle.remove()

    def scope_of(self, value_id, default):
        best, best_start = default, -1
        for scope, start, end in self.calls:
            if start < value_id < end and start > best_start:
                best, best_start = scope, start
        return best


def _trace(model, args):
    leaves, _ = flatten(args)
    names = (input_names(model.forward, len(leaves)) if len(leaves) == len(args)
             else [f"input{k}" for k in range(len(leaves))])
    tracer = _jit.Tracer()
    recorder = None
    try:
        for tensor, name in zip(leaves, names):
            tracer.add_input(tensor, name)
        for name, tensor in named_state(model).items():
            tracer.add_param(name, tensor)
        recorder = _ScopeRecorder(model, tracer)
        out = model(*args)
        graph = tracer.finish(output_spec(out, tracer))
    finally:
        if recorder is not None:
            recorder.remove()
        tracer.abort()
    doc = graph.to_json()
    return (json.loads(doc) if isinstance(doc, str) else doc), graph, recorder


def _format_arg(arg):
    (kind, value), = arg.items()
    if kind == "options":
        return "{" + ", ".join(f"{k} : {v}" for k, v in value.items()) + "}"
    if kind == "none":
        return "None"
    return str(value)


def _attr(text, shapes=None):
    attrs = {"attr": _proto.attr_string(text)}
    if shapes is not None:
        attrs["_output_shapes"] = _proto.attr_shapes(shapes)
    return attrs


def graph(model, args, verbose=False):
    """(serialized GraphDef, serialized RunMetadata) for model(*args)."""
    if not isinstance(model, Module):
        raise TypeError(f"add_graph expects an nn.Module, got {type(model).__name__}")
    if args is None:
        raise TypeError("add_graph needs input_to_model: the graph is recorded by running the model")
    args = (args,) if isinstance(args, Tensor) else tuple(args)
    was_training = model.training
    model.train(False)
    try:
        doc, traced, recorder = _trace(model, args)
    finally:
        model.train(was_training)
    if verbose:
        print(json.dumps(doc, indent=1))

    root = type(model).__name__
    shapes = [v["shape"] for v in doc["values"]]
    producer = {}  # value id -> node name (with :k for a node's k-th output)
    nodes = []

    for entry in doc["inputs"]:
        name = "input/" + entry["name"]
        producer[entry["value"]] = name
        nodes.append(_proto.node_def(name, "IO Node", attrs=_attr("", [entry["shape"]])))

    scopes = _module_scopes(model)
    for entry in doc["params"]:
        owner, _, leaf = entry["name"].rpartition(".")
        scope = scopes.get(id(model.get_submodule(owner)), root) if owner else root
        name = f"{scope}/{leaf}"
        producer[entry["value"]] = name
        nodes.append(_proto.node_def(name, "prim::GetAttr",
                                     attrs=_attr(f"{{ name :  {leaf} }}", [shapes[entry["value"]]])))

    # constants (other than the scope markers) go in the scope of their first user
    constant_ids = {c["value"]: c["name"] for c in doc["constants"]
                    if c["value"] not in recorder.marker_ids}
    constant_values = traced.named_tensors()
    placed = set()

    for node in doc["nodes"]:
        outputs = node["outputs"]
        scope = recorder.scope_of(outputs[0], root) if outputs else root
        op = node["op"] + {"inplace": "_", "out": "_out"}.get(node["variant"], "")
        name = f"{scope}/{node['op'].split('.')[0]}.{outputs[0] if outputs else len(nodes)}"
        inputs, others = [], []
        for arg in node["args"]:
            ids = [arg["value"]] if "value" in arg else arg.get("values")
            if ids is None:
                others.append(_format_arg(arg))
                continue
            for value_id in ids:
                if value_id in constant_ids and value_id not in placed:
                    placed.add(value_id)
                    const_name = f"{scope}/constant.{value_id}"
                    producer[value_id] = const_name
                    tensor = constant_values.get(constant_ids[value_id])
                    text = (f"{{ value : {tensor.item()} }}"
                            if tensor is not None and tensor.numel() == 1 else "{}")
                    nodes.append(_proto.node_def(const_name, "prim::Constant",
                                                 attrs=_attr(text, [shapes[value_id]])))
                inputs.append(producer.get(value_id, f"{root}/value.{value_id}"))
        for k, value_id in enumerate(outputs):
            producer[value_id] = name if k == 0 else f"{name}:{k}"
        text = "{" + ", ".join(others) + "}"
        nodes.append(_proto.node_def(name, "aten::" + op, inputs=inputs,
                                     attrs=_attr(text, [shapes[v] for v in outputs])))

    for k, value_id in enumerate(_spec_values(doc["output"]), 1):
        nodes.append(_proto.node_def(f"output/output.{k}", "IO Node",
                                     inputs=[producer.get(value_id, f"{root}/value.{value_id}")],
                                     attrs=_attr("", [shapes[value_id]])))
    return _proto.graph_def(nodes), _proto.run_metadata("/device:CPU:0")


def _spec_values(spec):
    """Value ids of the graph's (possibly nested) output, in order."""
    if "value" in spec:
        return [spec["value"]]
    items = spec.get("tuple", spec.get("list", []))
    return [v for item in items for v in _spec_values(item)]


def onnx_graph(path):
    """Serialized GraphDef of an ONNX model file: graph inputs and outputs as Variable nodes
    (element type and shape), each op node named by its first output."""
    import onnx
    from onnx import helper

    model = onnx.load(path)
    nodes = []
    for value in list(model.graph.input) + list(model.graph.output):
        tensor_type = value.type.tensor_type
        dims = [d.dim_value for d in tensor_type.shape.dim]
        attrs = {"dtype": _proto.attr_type(tensor_type.elem_type), "shape": _proto.attr_shape(dims)}
        nodes.append(_proto.node_def(value.name, "Variable", attrs=attrs))
    for node in model.graph.node:
        params = ", ".join(f"{a.name} = {helper.get_attribute_value(a)}" for a in node.attribute)
        nodes.append(_proto.node_def(node.output[0], node.op_type, inputs=list(node.input),
                                     attrs={"parameters": _proto.attr_string(params)}))
    return _proto.graph_def(nodes)
