"""ember.onnx.export: traced graphs -> ONNX, checked with onnx.checker and run with onnxruntime
against Ember's own outputs."""
import io
import math

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

import ember  # noqa: E402
import ember.nn as nn  # noqa: E402
import ember.nn.functional as F  # noqa: E402
import ember.onnx  # noqa: E402
from ember.onnx import _builder, errors  # noqa: E402


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
