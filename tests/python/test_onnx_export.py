"""ember.onnx.export: models traced with ember.jit.trace, exported, checked with onnx.checker and
run with onnxruntime against Ember's own outputs; the export options and refusals. The op table
case by case: test_onnx_ops.py."""
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
from ember.onnx import errors  # noqa: E402


def leaves(out):
    """The tensors of a (nested) model output, in order."""
    if isinstance(out, (tuple, list)):
        return [t for item in out for t in leaves(item)]
    return [out]


def run_ort(model, *inputs):
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    feed = {i.name: x.numpy() for i, x in zip(sess.get_inputs(), inputs)}
    return sess.run(None, feed)


# ---------------------------------------------------------------- models, traced and exported end to end
def export_bytes(model, args, **kw):
    buf = io.BytesIO()
    ember.onnx.export(model, args, buf, **kw)
    proto = onnx.load_model_from_string(buf.getvalue())
    onnx.checker.check_model(proto)
    return proto


def assert_runs_like(proto, model, *inputs):
    with ember.no_grad():
        expected = model(*inputs)
    expected = list(expected) if isinstance(expected, (tuple, list)) else [expected]
    got = run_ort(proto, *inputs)
    assert len(got) == len(expected)
    for g_, e in zip(got, expected):
        assert list(g_.shape) == list(e.shape)
        np.testing.assert_allclose(g_, e.numpy(), rtol=1e-4, atol=1e-5)


def test_mlp_matches_onnxruntime_and_names_initializers_by_state_dict():
    ember.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 3))
    x = ember.randn(4, 8)
    proto = export_bytes(model, (x,), input_names=["x"])
    assert [i.name for i in proto.graph.initializer] == list(model.state_dict())
    assert [i.name for i in proto.graph.input] == ["x"] and [o.name for o in proto.graph.output] == ["output"]
    assert {n.op_type for n in proto.graph.node} == {"Gemm", "Relu"}
    assert proto.opset_import[0].version == ember.onnx.DEFAULT_OPSET == 18
    assert_runs_like(proto, model, x)


def fashion_mnist_cnn():
    """The model of examples/fashion_mnist.py."""
    return nn.Sequential(
        nn.Conv2d(1, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(64 * 7 * 7, 128), nn.ReLU(), nn.Dropout(0.25), nn.Linear(128, 10))


def test_fashion_mnist_cnn_with_a_dynamic_batch(tmp_path):
    ember.manual_seed(1)
    model = fashion_mnist_cnn()  # in training mode: export puts it in eval mode, then back
    path = tmp_path / "fashion.onnx"
    program = ember.onnx.export(model, (ember.randn(4, 1, 28, 28),), str(path), input_names=["images"],
                                output_names=["logits"], dynamic_axes={"images": {0: "batch"}, "logits": {0: "batch"}})
    assert model.training
    model.eval()
    proto = onnx.load(str(path))
    onnx.checker.check_model(proto)
    assert proto == program.model_proto
    assert [i.name for i in proto.graph.initializer] == list(model.state_dict())
    assert "Dropout" not in {n.op_type for n in proto.graph.node}
    dims = proto.graph.input[0].type.tensor_type.shape.dim
    assert [d.dim_param or d.dim_value for d in dims] == ["batch", 1, 28, 28]
    dims = proto.graph.output[0].type.tensor_type.shape.dim
    assert [d.dim_param or d.dim_value for d in dims] == ["batch", 10]
    for batch in (4, 7):  # exported with batch 4, run at 7 as well
        assert_runs_like(proto, model, ember.randn(batch, 1, 28, 28))


class ResidualBlock(nn.Module):
    def __init__(self, channels, classes):
        super().__init__()
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(channels)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(channels)
        self.head = nn.Linear(channels, classes)

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        out += x  # in place, as torchvision's blocks do
        out = F.relu(out)
        return self.head(ember.flatten(F.adaptive_avg_pool2d(out, 1), 1))


def test_residual_block_with_batch_norm_in_eval_mode():
    ember.manual_seed(2)
    model = ResidualBlock(8, 5)
    for bn in (model.bn1, model.bn2):  # non-trivial running statistics and affine parameters
        bn.running_mean.copy_(ember.randn(8) * 0.1)
        bn.running_var.copy_(ember.rand(8) + 0.5)
        bn.weight.data.copy_(ember.rand(8) + 0.5)
        bn.bias.data.copy_(ember.randn(8) * 0.1)
    model.eval()
    proto = export_bytes(model, (ember.randn(2, 8, 6, 6),), dynamic_axes={"x": [0]})
    assert "BatchNormalization" in {n.op_type for n in proto.graph.node}
    # as torch's exporter: num_batches_tracked, which no op reads, is left out
    assert [i.name for i in proto.graph.initializer] == [k for k in model.state_dict()
                                                          if not k.endswith("num_batches_tracked")]
    assert proto.graph.input[0].type.tensor_type.shape.dim[0].dim_param == "x_dynamic_axes_1"
    assert_runs_like(proto, model, ember.randn(3, 8, 6, 6))


class TransformerBlock(nn.Module):
    def __init__(self, dim=16, heads=4):
        super().__init__()
        self.heads, self.head_dim = heads, dim // heads
        self.ln1, self.ln2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.qkv, self.proj = nn.Linear(dim, 3 * dim), nn.Linear(dim, dim)
        self.fc1, self.fc2 = nn.Linear(dim, 4 * dim), nn.Linear(4 * dim, dim)

    def forward(self, x):
        q, k, v = self.qkv(self.ln1(x)).chunk(3, dim=-1)
        q, k, v = [t.unflatten(-1, (self.heads, -1)).transpose(1, 2) for t in (q, k, v)]
        att = ember.softmax(q @ k.transpose(-2, -1) / math.sqrt(self.head_dim), dim=-1)
        x = x + self.proj((att @ v).transpose(1, 2).flatten(2))
        return x + self.fc2(F.gelu(self.fc1(self.ln2(x))))


@pytest.mark.parametrize("opset", [17, 18, 20, 21])
def test_transformer_block(opset):
    ember.manual_seed(3)
    model = TransformerBlock()
    axes = {"x": {0: "batch", 1: "seq"}, "output": {0: "batch", 1: "seq"}}
    proto = export_bytes(model, (ember.randn(2, 5, 16),), opset_version=opset, dynamic_axes=axes)
    kinds = {n.op_type for n in proto.graph.node}
    assert {"LayerNormalization", "Softmax", "MatMul"} <= kinds
    assert ("Gelu" in kinds) == (opset >= 20)
    assert proto.opset_import[0].version == opset
    assert [i.name for i in proto.graph.initializer] == list(model.state_dict())
    for shape in ((2, 5, 16), (3, 9, 16)):  # other batch and sequence lengths run through the same model
        assert_runs_like(proto, model, ember.randn(*shape))


def test_embedding_model():
    ember.manual_seed(4)

    class Bag(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb, self.out = nn.Embedding(50, 12), nn.Linear(12, 4)

        def forward(self, tokens):
            return self.out(self.emb(tokens).mean(1))
    model = Bag()
    proto = export_bytes(model, ember.randint(0, 50, (3, 7)), dynamic_axes={"tokens": {0: "batch", 1: "length"}})
    assert "Gather" in {n.op_type for n in proto.graph.node}
    assert proto.graph.input[0].type.tensor_type.elem_type == onnx.TensorProto.INT64
    assert [i.name for i in proto.graph.initializer] == ["emb.weight", "out.weight", "out.bias"]
    assert_runs_like(proto, model, ember.randint(0, 50, (5, 2)))


def test_function_with_python_numbers_and_tuple_outputs():
    def f(x, y):
        return x * 2 + 1, (x.relu() / 3.0).sum(dim=1) - y.float().mean()
    x, y = ember.randn(2, 3), ember.randint(0, 9, (4,))
    proto = export_bytes(f, (x, y), output_names=["a", "b"])
    assert [i.name for i in proto.graph.input] == ["x", "y"] and [o.name for o in proto.graph.output] == ["a", "b"]
    assert not proto.graph.initializer
    assert_runs_like(proto, f, x, y)


def test_export_options():
    ember.manual_seed(5)
    model = nn.Sequential(nn.Linear(3, 4), nn.Dropout(0.5))
    x = ember.randn(2, 3)
    no_params = export_bytes(model, (x,), export_params=False)
    assert not no_params.graph.initializer
    assert [i.name for i in no_params.graph.input] == ["input", "0.weight", "0.bias"]
    kept = export_bytes(model, (x,), keep_initializers_as_inputs=True)
    assert [i.name for i in kept.graph.initializer] == ["0.weight", "0.bias"]
    assert [i.name for i in kept.graph.input] == ["input", "0.weight", "0.bias"]
    # training mode: dropout stays (as ONNX Dropout in training mode), and the module is left as it was
    model.eval()
    training = export_bytes(model, (x,), training=ember.onnx.TrainingMode.TRAINING)
    assert "Dropout" in {n.op_type for n in training.graph.node} and not model.training
    # an ONNXProgram runs with onnxruntime; verify=True compares it with the model
    program = ember.onnx.export(model, (x,), verify=True)
    assert isinstance(program, ember.onnx.ONNXProgram)
    np.testing.assert_allclose(program(x)[0].numpy(), model(x).detach().numpy(), rtol=1e-5, atol=1e-6)
    assert ember.onnx.export(model, (x,), io.BytesIO(), dynamo=False) is None


def test_is_in_onnx_export_during_export_only():
    seen = []

    class Probe(nn.Module):
        def forward(self, x):
            seen.append(ember.onnx.is_in_onnx_export())
            return x.sigmoid()
    assert not ember.onnx.is_in_onnx_export()
    export_bytes(Probe(), (ember.randn(2),))
    assert seen == [True] and not ember.onnx.is_in_onnx_export()


# ---------------------------------------------------------------- errors
def test_unsupported_op_names_the_op():
    with pytest.raises(errors.UnsupportedOperatorError, match="aten::nonzero"):
        export_bytes(lambda x: ember.nonzero(x), (ember.randn(6),))
    assert issubclass(errors.UnsupportedOperatorError, ember.onnx.OnnxExporterError)
    assert issubclass(ember.onnx.OnnxExporterError, RuntimeError)


def test_static_shapes_graph_refuses_dynamic_axes():
    ember.manual_seed(6)
    lin = nn.Linear(12, 2)

    def f(x):
        return lin(x.view(x.size(0), -1))
    x = ember.randn(4, 3, 4)
    with pytest.warns(Warning):
        with pytest.raises(errors.OnnxExporterError, match=r"dynamic_axes cannot be honoured.*read a tensor's shape"):
            export_bytes(f, (x,), dynamic_axes={"x": {0: "batch"}})
    with pytest.warns(Warning):  # without dynamic axes the traced shapes are exported as they are
        proto = export_bytes(f, (x,))
    assert_runs_like(proto, f, x)


def test_data_dependent_control_flow_is_refused():
    def f(x):
        return x * 2 if x.sum() > 0 else x
    with pytest.warns(Warning):
        with pytest.raises(errors.SymbolicValueError, match="read a tensor's values into Python"):
            export_bytes(f, (ember.ones(3),))


def test_bad_arguments():
    model, x = nn.Linear(2, 2), ember.randn(3, 2)
    with pytest.raises(ValueError, match="'y'"):
        export_bytes(model, (x,), dynamic_axes={"y": [0]})
    with pytest.raises(ValueError, match="axis 2"):
        export_bytes(model, (x,), dynamic_axes={"input": [2]})
    with pytest.raises(ValueError, match="2 input_names"):
        export_bytes(model, (x,), input_names=["a", "b"])
    with pytest.raises(ValueError, match="unique"):
        export_bytes(model, (x,), input_names=["same"], output_names=["same"])
    with pytest.raises(ValueError, match="opset_version 9"):
        export_bytes(model, (x,), opset_version=9)
    with pytest.raises(TypeError, match="binary file object"):
        ember.onnx.export(model, (x,), 42)


def test_training_batch_norm_and_pooling_indices_are_refused():
    model = nn.Sequential(nn.Conv2d(1, 2, 3), nn.BatchNorm2d(2))
    with pytest.raises(errors.UnsupportedOperatorError, match="eval mode"):
        export_bytes(model, (ember.randn(2, 1, 5, 5),), training=ember.onnx.TrainingMode.TRAINING)
    assert model.training
    pool = nn.MaxPool2d(2, return_indices=True)
    x = ember.randn(1, 2, 4, 4)
    with pytest.raises(errors.UnsupportedOperatorError, match="indices"):
        export_bytes(pool, (x,))
    values_only = nn.MaxPool2d(2)
    assert_runs_like(export_bytes(values_only, (x,)), values_only, x)


def test_dynamic_shapes_and_saving_options(tmp_path, capsys):
    ember.manual_seed(8)
    model = nn.Sequential(nn.Linear(3, 2), nn.Tanh())
    x = ember.randn(5, 3)
    program = ember.onnx.export(model, (x,), dynamic_shapes={"input": {0: "rows"}}, verbose=True)
    assert "Gemm" in capsys.readouterr().out
    dims = program.model_proto.graph.input[0].type.tensor_type.shape.dim
    assert [d.dim_param or d.dim_value for d in dims] == ["rows", 3]
    assert_runs_like(program.model_proto, model, ember.randn(2, 3))
    path = tmp_path / "bare.onnx"
    program.save(str(path), include_initializers=False)
    bare = onnx.load(str(path))
    assert not bare.graph.initializer and [i.name for i in bare.graph.input] == ["input", "0.weight", "0.bias"]
    with pytest.raises(ValueError, match="not both"):
        ember.onnx.export(model, (x,), dynamic_shapes={"input": {0: "rows"}}, dynamic_axes={"input": [0]})


def test_creation_ops_inside_a_trace():
    def f(x):
        return (x + x.new_ones(2, 3) * 2 + ember.arange(3) + ember.eye(2, 3) - ember.full((3,), 0.5)
                + ember.zeros_like(x) + ember.arange(1.0, 2.0, 0.25)[:3])
    x = ember.randn(2, 3)
    proto = export_bytes(f, (x,), dynamic_axes={"x": {0: "n"}})
    assert_runs_like(proto, f, x)


def test_in_place_ops():
    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(4, 4)

        def forward(self, x):
            y = self.lin(x)
            y += x          # in place on a value nothing else sees: exported as Add
            return F.relu(y, inplace=True)
    model, x = Block(), ember.randn(3, 4)
    assert_runs_like(export_bytes(model, (x,)), model, x)

    def through_a_view(x):
        y = x * 2
        y.view(-1).relu_()  # changes y through a view: y's graph value is stale afterwards
        return y
    with pytest.raises(errors.UnsupportedOperatorError, match=r"aten::relu_.*another view"):
        export_bytes(through_a_view, (ember.randn(2, 3),))


@pytest.mark.filterwarnings("ignore::Warning")  # nn.LSTM reads the input's sizes: a static-shaped trace
def test_lstm_bidirectional_two_layers_with_final_states():
    ember.manual_seed(9)
    model = nn.LSTM(5, 6, num_layers=2, bidirectional=True, batch_first=True)
    x = ember.randn(3, 4, 5)
    proto = export_bytes(model, (x,), output_names=["out", "h_n", "c_n"])
    assert sum(n.op_type == "LSTM" for n in proto.graph.node) == 4
    with ember.no_grad():
        out, (h, c) = model(x)
    got = run_ort(proto, x)
    for g_, e in zip(got, (out, h, c)):
        np.testing.assert_allclose(g_, e.numpy(), rtol=1e-4, atol=1e-5)
    # the traced shapes are baked in (nn.LSTM read them): dynamic axes are refused with the reason
    with pytest.raises(errors.OnnxExporterError, match="rnn.py"):
        export_bytes(model, (x,), dynamic_axes={"input": [0]})


@pytest.mark.filterwarnings("ignore::Warning")
@pytest.mark.parametrize("kind", ["GRU", "RNN", "LSTMCell", "GRUCell"])
def test_other_recurrent_modules(kind):
    ember.manual_seed(10)
    model = {"GRU": lambda: nn.GRU(5, 6, batch_first=True), "RNN": lambda: nn.RNN(5, 6, nonlinearity="relu"),
             "LSTMCell": lambda: nn.LSTMCell(5, 6), "GRUCell": lambda: nn.GRUCell(5, 6)}[kind]()
    x = ember.randn(3, 4, 5) if kind in ("GRU", "RNN") else ember.randn(3, 5)
    proto = export_bytes(model, (x,))
    with ember.no_grad():
        expected = model(x)
    expected = leaves(expected)
    got = run_ort(proto, x)
    assert len(got) == len(expected)
    for g_, e in zip(got, expected):
        np.testing.assert_allclose(g_, e.numpy(), rtol=1e-4, atol=1e-5)


@pytest.mark.filterwarnings("ignore::Warning")
@pytest.mark.parametrize("kw", [dict(scale_factor=2, mode="nearest"), dict(size=(7, 5), mode="nearest"),
                                dict(scale_factor=1.5, mode="nearest-exact"), dict(size=(9, 6), mode="bilinear"),
                                dict(scale_factor=2.5, mode="bilinear", align_corners=True),
                                dict(scale_factor=1.7, mode="bilinear"), dict(size=(8, 8), mode="bicubic")])
def test_interpolate(kw):
    x = ember.randn(2, 3, 4, 5)

    def f(t):
        return F.interpolate(t, **kw)
    assert_runs_like(export_bytes(f, (x,)), f, x)


MODULE_CASES = {
    "multihead_attention": (lambda: nn.MultiheadAttention(8, 2, batch_first=True), lambda: (ember.randn(2, 5, 8),) * 3),
    "encoder_layer_norm_first": (lambda: nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True,
                                                                    norm_first=True), lambda: (ember.randn(2, 5, 8),)),
    "decoder_layer": (lambda: nn.TransformerDecoderLayer(8, 2, 16, dropout=0.0, batch_first=True),
                      lambda: (ember.randn(2, 5, 8), ember.randn(2, 3, 8))),
    "conv1d_transpose1d": (lambda: nn.Sequential(nn.Conv1d(3, 4, 3, stride=2), nn.ConvTranspose1d(4, 2, 3, stride=2)),
                           lambda: (ember.randn(2, 3, 11),)),
    "norms_and_activations": (lambda: nn.Sequential(nn.GroupNorm(2, 4), nn.InstanceNorm2d(4, affine=True), nn.PReLU(),
                                                    nn.Mish(), nn.SiLU(), nn.Hardswish(), nn.GELU("tanh")),
                              lambda: (ember.randn(2, 4, 5, 5),)),
    "pixel_shuffle_upsample": (lambda: nn.Sequential(nn.PixelShuffle(2), nn.Upsample(scale_factor=2),
                                                     nn.AdaptiveAvgPool2d((2, 2)), nn.ChannelShuffle(2)),
                               lambda: (ember.randn(1, 16, 3, 3),)),
    "pool1d_unflatten": (lambda: nn.Sequential(nn.AvgPool1d(2), nn.MaxPool1d(2), nn.Flatten(),
                                               nn.Unflatten(1, (2, -1))), lambda: (ember.randn(2, 4, 8),)),
    "causal_sdpa": (lambda: (lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True)),
                    lambda: (ember.randn(2, 2, 5, 4),) * 3),
    "distances": (lambda: (lambda a, b: F.cosine_similarity(a, b, dim=-1) + F.pairwise_distance(a, b, p=3.0)),
                  lambda: (ember.randn(2, 3, 4), ember.randn(3, 4))),
    "indexing": (lambda: (lambda x: x[:, 1:3, ::2] * x[0, -1, ::2] + x[..., None, 0].sum()),
                 lambda: (ember.randn(3, 4, 5),)),
    "bilinear": (lambda: nn.Bilinear(3, 4, 2), lambda: (ember.randn(2, 3), ember.randn(2, 4))),
    "activations": (lambda: nn.Sequential(nn.GLU(), nn.Hardtanh(), nn.ReLU6(), nn.ELU(), nn.CELU(), nn.SELU(),
                                          nn.Softplus(), nn.LeakyReLU(0.1), nn.Tanhshrink(), nn.Threshold(0.1, 0.0),
                                          nn.Softmax(dim=1), nn.LogSoftmax(dim=-1), nn.Softmin(1)),
                    lambda: (ember.randn(2, 6),)),
    "loss_in_graph": (lambda: (lambda x, t: F.cross_entropy(x, t) + F.mse_loss(x.softmax(1), F.one_hot(t, 5).float())),
                      lambda: (ember.randn(4, 5), ember.tensor([1, 0, 4, 2]))),
}


@pytest.mark.filterwarnings("ignore::Warning")  # some modules read sizes: static-shaped traces
@pytest.mark.parametrize("case", sorted(MODULE_CASES))
def test_module_matches_onnxruntime(case):
    ember.manual_seed(11)
    make, inputs = MODULE_CASES[case]
    model, args = make(), inputs()
    if isinstance(model, nn.Module):
        model.eval()
    proto = export_bytes(model, args)
    with ember.no_grad():
        expected = leaves(model(*args))
    got = run_ort(proto, *args)
    assert len(got) == len(expected)
    for g_, e in zip(got, expected):
        np.testing.assert_allclose(g_, e.numpy(), rtol=1e-4, atol=1e-5)
