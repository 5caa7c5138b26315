"""ember.onnx.export: traced graphs -> ONNX, checked with onnx.checker and run with onnxruntime
against Ember's own outputs."""
import io
import math
import os
import re

import numpy as np
import pytest
import yaml

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

import ember  # noqa: E402
import ember.nn as nn  # noqa: E402
import ember.nn.functional as F  # noqa: E402
import ember.onnx  # noqa: E402
from ember import _C  # noqa: E402
from ember.onnx import _builder, errors  # noqa: E402

_OPS_YAML = os.path.join(os.path.dirname(__file__), "..", "..", "ops.yaml")


def _schemas():
    """ops.yaml name -> (parameter names, keyword-only names, eager callable)."""
    table = {}
    with open(_OPS_YAML) as fh:
        entries = yaml.safe_load(fh)
    for entry in entries:
        func = entry["func"]
        name = func.split("(")[0]
        body = func[len(name) + 1:func.rindex(") ->")]
        params, kwonly, keyword = [], set(), False
        for tok in (t.strip() for t in re.split(r",\s*(?![^()]*\))", body)):
            if tok == "*":
                keyword = True
                continue
            pname = tok.split("=")[0].split()[-1]
            params.append(pname)
            if keyword:
                kwonly.add(pname)
        py = entry.get("python", name.split(".")[0])
        fn = None
        for mod in (_C._ops, _C._nn):
            for candidate in (py, "_" + py):
                fn = fn or getattr(mod, candidate, None)
        table[name] = (params, kwonly, fn or getattr(ember.Tensor, py.lstrip("_"), None))
    return table


SCHEMAS = _schemas()


# ---------------------------------------------------------------- a stand-in tracer
class H(int):
    """A value handle of the recorder."""


class D(str):
    """A ScalarType argument."""


class Recorder:
    """Writes a graph in the JSON form of csrc/ember/jit/README.md while running each op eagerly,
    so the exporter can be tested on exactly the args a trace records (schema order, defaults filled)."""

    def __init__(self):
        self.values, self.inputs, self.params, self.constants, self.nodes = [], [], [], [], []
        self.tensors, self.eager = {}, {}

    def _new(self, t):
        vid = H(len(self.values))
        self.values.append({"dtype": str(t.dtype).rsplit(".", 1)[-1], "shape": list(t.shape)})
        self.eager[vid] = t
        return vid

    def input(self, name, t):
        v = self._new(t)
        self.inputs.append({"value": v, "name": name, "dtype": self.values[v]["dtype"],
                            "shape": list(t.shape), "requires_grad": False})
        return v

    def params_of(self, module):
        return {name: self.param(name, t) for name, t in module.state_dict().items()}

    def param(self, name, t):
        v = self._new(t)
        self.params.append({"value": v, "name": name})
        self.tensors[name] = t
        return v

    def const(self, t):
        v = self._new(t)
        name = f"__constant_{len(self.constants)}"
        self.constants.append({"value": v, "name": name})
        self.tensors[name] = t
        return v

    def _arg(self, a):
        if a is None:
            return {"none": None}, None
        if isinstance(a, H):
            return {"value": int(a)}, self.eager[a]
        if isinstance(a, D):
            return {"dtype": str(a)}, getattr(ember, a)
        if isinstance(a, bool):
            return {"bool": a}, a
        if isinstance(a, int):
            return {"int": a}, a
        if isinstance(a, float):
            return {"float": a if math.isfinite(a) else str(a)}, a
        if isinstance(a, str):
            return {"str": a}, a
        if isinstance(a, list) and a and all(isinstance(x, H) for x in a):
            return {"values": [int(x) for x in a]}, [self.eager[x] for x in a]
        if isinstance(a, list):
            return {"ints": list(a)}, list(a)
        raise TypeError(a)

    def __call__(self, op, args, fn):
        """Record `op` with schema-ordered `args`; `fn` runs it eagerly on the same args."""
        encoded, eager = zip(*[self._arg(a) for a in args]) if args else ((), ())
        out = fn(*eager)
        outs = list(out) if isinstance(out, (tuple, list)) else [out]
        ids = [self._new(t) for t in outs]
        self.nodes.append({"op": op, "variant": "functional", "args": list(encoded), "outputs": [int(i) for i in ids]})
        return ids if isinstance(out, (tuple, list)) else ids[0]

    def op(self, name, *args):
        """Record ops.yaml op `name` with args in schema order, run eagerly by its binding."""
        params, kwonly, fn = SCHEMAS[name]
        assert len(args) == len(params), (name, params)

        def call(*eager):
            pos = [a for p, a in zip(params, eager) if p not in kwonly]
            kw = {p: a for p, a in zip(params, eager) if p in kwonly}
            return fn(*pos, **kw)
        return self(name, list(args), call)

    def graph(self, out, static_shapes=False):
        spec = {"tuple": [{"value": int(v)} for v in out]} if isinstance(out, (tuple, list)) else {"value": int(out)}
        return {"format": "ember.jit.graph", "version": 1, "num_values": len(self.values), "values": self.values,
                "inputs": self.inputs, "params": self.params, "constants": self.constants, "nodes": self.nodes,
                "output": spec, "static_shapes": static_shapes,
                "static_shapes_reason": "x.size(0) at model.py:3" if static_shapes else ""}


def to_onnx(rec, out, **kw):
    kw.setdefault("opset", ember.onnx.DEFAULT_OPSET)
    for key in ("input_names", "output_names", "dynamic_axes"):
        kw.setdefault(key, None)
    kw.setdefault("export_params", True)
    kw.setdefault("keep_initializers_as_inputs", False)
    model = _builder.convert(rec.graph(out, kw.pop("static_shapes", False)), rec.tensors,
                             producer_version=ember.__version__, **kw)
    _builder.check(model)
    return model


def run_ort(model, *inputs):
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    feed = {i.name: x.numpy() for i, x in zip(sess.get_inputs(), inputs)}
    return sess.run(None, feed)


def assert_matches(model, rec, out, inputs):
    got = run_ort(model, *[rec.eager[i] for i in inputs])
    outs = out if isinstance(out, (tuple, list)) else [out]
    assert len(got) == len(outs)
    for g_, o in zip(got, outs):
        expected = rec.eager[o]
        assert list(g_.shape) == list(expected.shape)
        np.testing.assert_allclose(g_, expected.float().numpy() if expected.dtype == ember.bfloat16 else
                                   expected.numpy(), rtol=1e-4, atol=1e-5)


# ---------------------------------------------------------------- models
def _linear(rec, x, p, prefix):
    return rec("linear", [x, p[prefix + ".weight"], p[prefix + ".bias"]], F.linear)


def record_mlp(batch=4):
    ember.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 3))
    rec = Recorder()
    x = rec.input("x", ember.randn(batch, 8))
    p = rec.params_of(model)
    h = rec("relu", [_linear(rec, x, p, "0")], ember.relu)
    return model, rec, x, _linear(rec, h, p, "2")


def test_mlp_matches_onnxruntime_and_names_initializers_by_state_dict():
    model, rec, x, out = record_mlp()
    proto = to_onnx(rec, out)
    assert [i.name for i in proto.graph.initializer] == list(model.state_dict())
    assert [i.name for i in proto.graph.input] == ["x"] and [o.name for o in proto.graph.output] == ["output"]
    assert {n.op_type for n in proto.graph.node} == {"Gemm", "Relu"}
    assert proto.opset_import[0].version == 18
    assert_matches(proto, rec, out, [x])


def record_fashion_cnn(batch):
    """The model of examples/fashion_mnist.py, in eval mode (dropout records nothing)."""
    ember.manual_seed(1)
    model = nn.Sequential(
        nn.Conv2d(1, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(64 * 7 * 7, 128), nn.ReLU(), nn.Dropout(0.25), nn.Linear(128, 10)).eval()
    rec = Recorder()
    x = rec.input("x", ember.randn(batch, 1, 28, 28))
    p = rec.params_of(model)
    h = x
    for k in (0, 3):
        h = rec("conv2d", [h, p[f"{k}.weight"], p[f"{k}.bias"], [1, 1], [1, 1], [1, 1], 1], F.conv2d)
        h = rec("relu", [h], ember.relu)
        h = rec("max_pool2d", [h, [2, 2], [], [0, 0], [1, 1], False],
                lambda t, k_, s, pad, d, c: F.max_pool2d(t, k_, s or None, pad, d, c))
    h = rec("flatten", [h, 1, -1], ember.flatten)
    h = rec("relu", [_linear(rec, h, p, "7")], ember.relu)
    h = rec("dropout", [h, 0.25, False], lambda t, pr, tr: F.dropout(t, pr, tr))
    return model, rec, x, _linear(rec, h, p, "10")


def test_fashion_mnist_cnn_with_a_dynamic_batch():
    model, rec, x, out = record_fashion_cnn(batch=4)
    proto = to_onnx(rec, out, input_names=["images"], output_names=["logits"],
                    dynamic_axes={"images": {0: "batch"}, "logits": {0: "batch"}})
    assert [i.name for i in proto.graph.initializer] == list(model.state_dict())
    dims = proto.graph.input[0].type.tensor_type.shape.dim
    assert [d.dim_param or d.dim_value for d in dims] == ["batch", 1, 28, 28]
    assert proto.graph.output[0].type.tensor_type.shape.dim[0].dim_param == "batch"
    assert_matches(proto, rec, out, [x])
    # the same ONNX model at batch 7 matches Ember's model at batch 7
    images = ember.randn(7, 1, 28, 28)
    with ember.no_grad():
        expected = model(images)
    got, = run_ort(proto, images)
    assert got.shape == (7, 10)
    np.testing.assert_allclose(got, expected.numpy(), rtol=1e-4, atol=1e-5)


def test_residual_block_with_batch_norm_in_eval_mode():
    ember.manual_seed(2)
    conv1, bn1 = nn.Conv2d(8, 8, 3, padding=1, bias=False), nn.BatchNorm2d(8)
    conv2, bn2 = nn.Conv2d(8, 8, 3, padding=1, bias=False), nn.BatchNorm2d(8)
    head = nn.Linear(8, 5)
    model = nn.ModuleDict({"conv1": conv1, "bn1": bn1, "conv2": conv2, "bn2": bn2, "head": head})
    for bn in (bn1, bn2):  # non-trivial running statistics and affine parameters
        bn.running_mean.copy_(ember.randn(8) * 0.1)
        bn.running_var.copy_(ember.rand(8) + 0.5)
        bn.weight.data.copy_(ember.rand(8) + 0.5)
        bn.bias.data.copy_(ember.randn(8) * 0.1)
    model.eval()
    rec = Recorder()
    x = rec.input("x", ember.randn(2, 8, 6, 6))
    p = rec.params_of(model)

    def conv_bn(h, conv, bn):
        h = rec.op("conv2d", h, p[f"{conv}.weight"], None, [1, 1], [1, 1], [1, 1], 1)
        return rec.op("batch_norm", h, p[f"{bn}.weight"], p[f"{bn}.bias"], p[f"{bn}.running_mean"],
                      p[f"{bn}.running_var"], False, 0.1, 1e-5, True)
    h = rec.op("relu", conv_bn(x, "conv1", "bn1"))
    h = rec.op("add", conv_bn(h, "conv2", "bn2"), x, 1)
    h = rec.op("relu", h)
    h = rec.op("adaptive_avg_pool_nd", h, [1, 1])
    h = rec.op("flatten", h, 1, -1)
    out = rec.op("linear", h, p["head.weight"], p["head.bias"])
    proto = to_onnx(rec, out, dynamic_axes={"x": [0]})
    assert "BatchNormalization" in {n.op_type for n in proto.graph.node}
    # torch's exporter leaves out num_batches_tracked, which no op reads
    assert [i.name for i in proto.graph.initializer] == [k for k in model.state_dict()
                                                          if not k.endswith("num_batches_tracked")]
    assert proto.graph.input[0].type.tensor_type.shape.dim[0].dim_param == "x_dynamic_axes_1"
    assert_matches(proto, rec, out, [x])


def record_transformer_block(batch=2, seq=5, dim=16, heads=4):
    ember.manual_seed(3)
    model = nn.ModuleDict({"ln1": nn.LayerNorm(dim), "qkv": nn.Linear(dim, 3 * dim), "proj": nn.Linear(dim, dim),
                           "ln2": nn.LayerNorm(dim), "fc1": nn.Linear(dim, 4 * dim), "fc2": nn.Linear(4 * dim, dim)})
    rec = Recorder()
    x = rec.input("x", ember.randn(batch, seq, dim))
    p = rec.params_of(model)
    hd = dim // heads
    h = rec.op("layer_norm", x, [dim], p["ln1.weight"], p["ln1.bias"], 1e-5, True)
    qkv = rec.op("linear", h, p["qkv.weight"], p["qkv.bias"])
    q, k, v = rec.op("split", qkv, dim, -1)
    q, k, v = [rec.op("transpose", rec.op("unflatten", t, -1, [heads, hd]), 1, 2) for t in (q, k, v)]
    att = rec.op("matmul", q, rec.op("transpose", k, -2, -1))
    att = rec.op("mul", att, rec.const(ember.tensor(1.0 / math.sqrt(hd), dtype=ember.float64)))
    att = rec.op("softmax", att, -1, None)
    y = rec.op("flatten", rec.op("transpose", rec.op("matmul", att, v), 1, 2), 2, -1)
    x1 = rec.op("add", x, rec.op("linear", y, p["proj.weight"], p["proj.bias"]), 1)
    h = rec.op("layer_norm", x1, [dim], p["ln2.weight"], p["ln2.bias"], 1e-5, True)
    h = rec.op("gelu", rec.op("linear", h, p["fc1.weight"], p["fc1.bias"]), "none")
    out = rec.op("add", x1, rec.op("linear", h, p["fc2.weight"], p["fc2.bias"]), 1)
    return model, rec, x, out


@pytest.mark.parametrize("opset", [17, 18, 20, 21])
def test_transformer_block(opset):
    model, rec, x, out = record_transformer_block()
    proto = to_onnx(rec, out, opset=opset, dynamic_axes={"x": {0: "batch", 1: "seq"}, "output": {0: "batch", 1: "seq"}})
    kinds = {n.op_type for n in proto.graph.node}
    assert {"LayerNormalization", "Softmax", "MatMul"} <= kinds
    assert ("Gelu" in kinds) == (opset >= 20)
    assert [i.name for i in proto.graph.initializer] == list(model.state_dict())
    assert_matches(proto, rec, out, [x])
    # other batch and sequence lengths run through the same model
    _, rec2, x2, out2 = record_transformer_block(batch=3, seq=9)
    got, = run_ort(proto, rec2.eager[x2])
    np.testing.assert_allclose(got, rec2.eager[out2].numpy(), rtol=1e-4, atol=1e-5)


def test_embedding_model():
    ember.manual_seed(4)
    model = nn.ModuleDict({"emb": nn.Embedding(50, 12), "out": nn.Linear(12, 4)})
    rec = Recorder()
    tokens = rec.input("tokens", ember.randint(0, 50, (3, 7)))
    p = rec.params_of(model)
    e = rec.op("embedding", p["emb.weight"], tokens, -1, False, False)
    pooled = rec.op("mean", e, [1], False, None)
    out = rec.op("linear", pooled, p["out.weight"], p["out.bias"])
    proto = to_onnx(rec, out, dynamic_axes={"tokens": {0: "batch", 1: "length"}})
    assert "Gather" in {n.op_type for n in proto.graph.node}
    assert proto.graph.input[0].type.tensor_type.elem_type == onnx.TensorProto.INT64
    assert_matches(proto, rec, out, [tokens])


# ---------------------------------------------------------------- errors
def test_unsupported_op_names_the_op():
    rec = Recorder()
    x = rec.input("x", ember.randn(6))
    out = rec.op("nonzero", x)
    with pytest.raises(errors.UnsupportedOperatorError, match="aten::nonzero"):
        to_onnx(rec, out)
    assert issubclass(errors.UnsupportedOperatorError, ember.onnx.OnnxExporterError)
    assert issubclass(ember.onnx.OnnxExporterError, RuntimeError)


def test_static_shapes_graph_refuses_dynamic_axes():
    _, rec, x, out = record_mlp()
    with pytest.raises(errors.OnnxExporterError, match=r"dynamic_axes cannot be honoured.*x\.size\(0\) at model\.py:3"):
        to_onnx(rec, out, static_shapes=True, dynamic_axes={"x": {0: "batch"}})
    # without dynamic axes the traced shapes are exported as they are
    proto = to_onnx(rec, out, static_shapes=True)
    assert_matches(proto, rec, out, [x])


def test_data_dependent_control_flow_is_refused():
    rec = Recorder()
    x = rec.input("x", ember.randn(3))
    s = rec.op("sum", x, None)
    expected = rec.const(ember.tensor(True))
    rec.nodes.append({"op": "prim::guard_values", "variant": "functional",
                      "args": [{"value": int(s)}, {"value": int(expected)}], "outputs": []})
    out = rec.op("relu", x)
    with pytest.raises(errors.SymbolicValueError, match="read a tensor's values into Python"):
        to_onnx(rec, out)


def test_bad_names_and_axes():
    _, rec, x, out = record_mlp()
    with pytest.raises(ValueError, match="'y'"):
        to_onnx(rec, out, dynamic_axes={"y": [0]})
    with pytest.raises(ValueError, match="axis 2"):
        to_onnx(rec, out, dynamic_axes={"x": [2]})
    with pytest.raises(ValueError, match="2 input_names"):
        to_onnx(rec, out, input_names=["a", "b"])
    with pytest.raises(ValueError, match="unique"):
        to_onnx(rec, out, input_names=["same"], output_names=["same"])


def test_training_batch_norm_and_max_pool_indices_are_refused():
    rec = Recorder()
    x = rec.input("x", ember.randn(2, 3, 4, 4))
    w = rec.param("w", ember.ones(3))
    out = rec.op("batch_norm", x, w, None, None, None, True, 0.1, 1e-5, True)
    with pytest.raises(errors.UnsupportedOperatorError, match="eval mode"):
        to_onnx(rec, out)
    rec = Recorder()
    x = rec.input("x", ember.randn(1, 2, 4, 4))
    values, indices = rec.op("max_pool_with_indices", x, [2, 2], [2, 2], [0, 0], [1, 1], False)
    proto = to_onnx(rec, values)  # the values alone export
    assert_matches(proto, rec, values, [x])
    with pytest.raises(errors.UnsupportedOperatorError, match="indices"):
        to_onnx(rec, [values, indices])
