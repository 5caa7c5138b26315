"""ember.nn: Module semantics, Parameter, containers, init, layers, nn.utils (torch as the oracle
where it is installed; those tests skip cleanly without it)."""
import copy
import importlib
import math
import warnings
from collections import OrderedDict

import numpy as np
import pytest

import ember
from cuda_absent import raises_no_gpu
import ember.nn as nn


@pytest.fixture
def torch():
    return pytest.importorskip("torch")


def _F():
    try:
        return importlib.import_module("ember.nn.functional")
    except ImportError:
        return importlib.import_module("ember.nn._functional_core")


def needs_F(*names):
    """Skip unless ember.nn.functional (or its core) provides every function in `names`."""
    F = _F()
    missing = [n for n in names if not hasattr(F, n)]
    if missing:
        pytest.skip(f"ember.nn.functional lacks {missing} (written in parallel)")


def t2e(t):
    return ember.from_numpy(t.detach().numpy().copy())


def e2n(t):
    return t.detach().numpy()


class Net(nn.Module):
    """A module built from ember ops only (independent of nn.functional)."""

    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(ember.ones(3, 2))
        self.b = nn.Parameter(ember.zeros(2))
        self.register_buffer("count", ember.zeros(()))
        self.register_buffer("scratch", ember.ones(2), persistent=False)
        self.sub = Affine()

    def forward(self, x):
        return self.sub(x @ self.w + self.b)


class Affine(nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = nn.Parameter(ember.full((2,), 2.0))

    def forward(self, x):
        return x * self.scale


# ---------------------------------------------------------------- Parameter
def test_parameter_basics():
    data = ember.arange(4.0)
    p = nn.Parameter(data)
    assert isinstance(p, ember.Tensor) and isinstance(p, nn.Parameter)
    assert p.requires_grad and p.is_leaf and p.grad_fn is None
    data.add_(1)  # shares storage
    assert p.tolist() == [1.0, 2.0, 3.0, 4.0]
    assert not nn.Parameter(ember.ones(2), requires_grad=False).requires_grad
    with ember.no_grad():
        assert nn.Parameter(ember.ones(1)).requires_grad
    assert repr(nn.Parameter(ember.tensor([1.0, 2.0]))) == \
        "Parameter containing:\ntensor([1., 2.], requires_grad=True)"
    e = nn.Parameter()
    assert e.shape == (0,)
    q = copy.deepcopy(p)
    assert isinstance(q, nn.Parameter) and q.tolist() == p.tolist() and q.data_ptr() != p.data_ptr()
    (p * 2).sum().backward()
    assert p.grad.tolist() == [2.0] * 4


def test_buffer_marker():
    m = nn.Module()
    m.a = nn.Buffer(ember.ones(2))
    m.b = nn.Buffer(ember.zeros(1), persistent=False)
    assert set(dict(m.named_buffers())) == {"a", "b"}
    assert list(m.state_dict()) == ["a"]
    assert isinstance(m.a, nn.Buffer) and not isinstance(ember.ones(1), nn.Buffer)


# ---------------------------------------------------------------- registration
def test_registration_and_attributes():
    m = Net()
    assert [n for n, _ in m.named_parameters()] == ["w", "b", "sub.scale"]
    assert [n for n, _ in m.named_buffers()] == ["count", "scratch"]
    assert [n for n, _ in m.named_children()] == ["sub"]
    assert [n for n, _ in m.named_modules()] == ["", "sub"]
    assert [n for n, _ in m.named_parameters(prefix="net", recurse=False)] == ["net.w", "net.b"]
    assert len(list(m.parameters(recurse=False))) == 2
    # assigning a Parameter moves a name from plain attributes to _parameters
    m.extra = 3
    m.extra = nn.Parameter(ember.ones(1))
    assert "extra" in m._parameters and "extra" not in m.__dict__
    with pytest.raises(TypeError, match="cannot assign 'ember.FloatTensor' as parameter 'w'"):
        m.w = ember.ones(3, 2)
    m.w = None
    assert m.w is None and "w" in m._parameters
    assert [n for n, _ in m.named_parameters()] == ["b", "extra", "sub.scale"]
    m.count = ember.ones(())  # a tensor assigned to a buffer name stays a buffer
    assert m._buffers["count"].item() == 1.0
    with pytest.raises(TypeError, match="as child module 'sub'"):
        m.sub = 5
    del m.sub
    assert "sub" not in m._modules
    with pytest.raises(AttributeError, match="'Net' object has no attribute 'sub'"):
        m.sub
    del m.extra, m.count
    assert "extra" not in m._parameters and "count" not in m._buffers
    assert "scale" not in dir(m) and "b" in dir(m) and "scratch" in dir(m) and "forward" in dir(m)


def test_registration_errors():
    m = nn.Module()
    with pytest.raises(KeyError, match=r'buffer name can.*contain "\."'):
        m.register_buffer("a.b", ember.ones(1))
    with pytest.raises(KeyError, match="empty string"):
        m.register_parameter("", None)
    with pytest.raises(TypeError, match="cannot assign 'ember.FloatTensor' object to parameter 'p'"):
        m.register_parameter("p", ember.ones(1))
    with pytest.raises(TypeError, match="buffer 'x'"):
        m.register_buffer("x", 3)
    m.attr = 1
    with pytest.raises(KeyError, match="attribute 'attr' already exists"):
        m.register_buffer("attr", ember.ones(1))
    with pytest.raises(TypeError, match="is not a Module subclass"):
        m.add_module("x", 3)
    with pytest.raises(ValueError, match="Cannot assign non-leaf Tensor"):
        m.register_parameter("nl", _nonleaf_param())

    class Early(nn.Module):
        def __init__(self):
            self.w = nn.Parameter(ember.ones(1))

    with pytest.raises(AttributeError, match="cannot assign parameters before Module.__init__"):
        Early()
    with pytest.raises(TypeError, match="unexpected keyword argument 'foo'"):
        nn.Module(foo=1)
    m.register_module("child", nn.Identity())
    m.add_module("none", None)
    assert list(m._modules) == ["child", "none"] and [n for n, _ in m.named_children()] == ["child"]


def _nonleaf_param():
    # a Parameter with history: an in-place op with an input that requires grad
    p = nn.Parameter(ember.ones(2), requires_grad=False)
    p.mul_(ember.ones(2, requires_grad=True))
    assert p.grad_fn is not None
    return p


def test_shared_parameters_and_duplicates():
    m = nn.Module()
    shared = Affine()
    m.a = shared
    m.b = shared
    m.c = nn.Module()
    m.c.p = shared.scale
    assert [n for n, _ in m.named_modules()] == ["", "a", "c"]
    assert [n for n, _ in m.named_modules(remove_duplicate=False)] == ["", "a", "b", "c"]
    assert [n for n, _ in m.named_parameters()] == ["a.scale"]
    assert [n for n, _ in m.named_parameters(remove_duplicate=False)] == ["a.scale", "b.scale", "c.p"]
    assert len(list(m.children())) == 2
    assert list(m.state_dict()) == ["a.scale", "b.scale", "c.p"]


def test_get_submodule_parameter_buffer():
    m = Net()
    assert m.get_submodule("") is m and m.get_submodule("sub") is m.sub
    assert m.get_parameter("sub.scale") is m.sub.scale
    assert m.get_buffer("count") is m.count
    with pytest.raises(AttributeError, match="Net has no attribute `nope`"):
        m.get_submodule("nope")
    with pytest.raises(AttributeError, match="`w` is not an nn.Module"):
        m.get_submodule("w.x")
    with pytest.raises(AttributeError, match="`count` is not an nn.Parameter"):
        m.get_parameter("count")
    with pytest.raises(AttributeError, match="`w` is not a buffer"):
        m.get_buffer("w")
    m.set_submodule("sub", nn.Identity())
    assert isinstance(m.sub, nn.Identity)


# ---------------------------------------------------------------- modes, grads, conversions
def test_train_eval_requires_grad_zero_grad():
    m = Net()
    assert m.training and m.sub.training
    assert m.eval() is m and not m.sub.training
    m.train()
    assert m.sub.training
    with pytest.raises(ValueError, match="training mode is expected to be boolean"):
        m.train(1)
    m(ember.ones(4, 3)).sum().backward()
    assert m.w.grad is not None
    m.zero_grad(set_to_none=False)
    assert m.w.grad.tolist() == [[0.0, 0.0]] * 3
    m.zero_grad()
    assert m.w.grad is None
    m.requires_grad_(False)
    assert not any(p.requires_grad for p in m.parameters())


def test_to_and_dtype_conversions():
    m = Net()
    m(ember.ones(1, 3)).sum().backward()
    w = m.w
    m.double()
    assert m.w is w and m.w.dtype is ember.float64 and m.w.grad.dtype is ember.float64
    assert m.count.dtype is ember.float64
    m.to(ember.float32)
    assert m.w.dtype is ember.float32
    m.half()
    assert m.sub.scale.dtype is ember.float16
    m.float()
    m.register_buffer("idx", ember.arange(3))
    m.to(dtype=ember.float64)
    assert m.idx.dtype is ember.int64  # integer tensors keep their dtype
    m.to("cpu")
    m.to(ember.ones(1, dtype=ember.float32))
    assert m.w.dtype is ember.float32
    with pytest.raises(TypeError, match="only accepts floating point"):
        m.to(ember.int32)
    if not ember.cuda.is_available():
        with raises_no_gpu():
            m.to("cuda")
    assert m.apply(lambda mod: setattr(mod, "visited", True)) is m
    assert m.visited and m.sub.visited


# ---------------------------------------------------------------- state dict
def test_state_dict_layout():
    m = Net()
    sd = m.state_dict()
    assert isinstance(sd, OrderedDict)
    assert list(sd) == ["w", "b", "count", "sub.scale"]
    assert not sd["w"].requires_grad and sd["w"].data_ptr() == m.w.data_ptr()
    assert sd._metadata == OrderedDict([("", {"version": 1}), ("sub", {"version": 1})])
    assert m.state_dict(keep_vars=True)["w"] is m.w
    assert list(m.state_dict(prefix="net.")) == ["net.w", "net.b", "net.count", "net.sub.scale"]
    with pytest.warns(FutureWarning, match="Positional args"):
        m.state_dict(None, "p.")


def test_load_state_dict():
    m, m2 = Net(), Net()
    with ember.no_grad():
        m2.w.mul_(3)
    res = m.load_state_dict(m2.state_dict())
    assert repr(res) == "<All keys matched successfully>" and res.missing_keys == []
    assert m.w.tolist() == [[3.0, 3.0]] * 3
    sd = m2.state_dict()
    del sd["b"]
    sd["extra"] = ember.ones(1)
    sd["sub.junk"] = ember.ones(1)
    with pytest.raises(RuntimeError) as ei:
        m.load_state_dict(sd)
    assert str(ei.value) == ('Error(s) in loading state_dict for Net:\n\tMissing key(s) in state_dict: "b". \n\t'
                             'Unexpected key(s) in state_dict: "extra", "sub.junk". ')
    res = m.load_state_dict(sd, strict=False)
    assert res.missing_keys == ["b"] and res.unexpected_keys == ["extra", "sub.junk"]
    assert res == (["b"], ["extra", "sub.junk"])
    bad = m2.state_dict()
    bad["w"] = ember.ones(2, 3)
    with pytest.raises(RuntimeError, match=r"size mismatch for w: copying a param with shape ember.Size\(\[2, 3\]\) "
                                           r"from checkpoint, the shape in current model is ember.Size\(\[3, 2\]\)"):
        m.load_state_dict(bad)
    with pytest.raises(TypeError, match="Expected state_dict to be dict-like"):
        m.load_state_dict([1])
    # assign=True keeps the loaded tensors (as Parameters)
    new = {k: v.clone() for k, v in m2.state_dict().items()}
    m.load_state_dict(new, assign=True)
    assert isinstance(m.w, nn.Parameter) and m.w.data_ptr() == new["w"].data_ptr() and m.w.requires_grad


def test_state_dict_hooks():
    m = Net()
    calls = []
    m.register_state_dict_pre_hook(lambda mod, prefix, keep_vars: calls.append(("pre", prefix)))
    h = m.register_state_dict_post_hook(lambda mod, sd, prefix, meta: calls.append(("post", len(sd))))
    m.register_load_state_dict_post_hook(lambda mod, keys: calls.append(("load", tuple(keys.missing_keys))))
    m.register_load_state_dict_pre_hook(lambda mod, sd, prefix, *a: calls.append(("loadpre", prefix)))
    sd = m.state_dict()
    h.remove()
    m.state_dict()
    m.load_state_dict(sd)
    assert calls == [("pre", ""), ("post", 4), ("pre", ""), ("loadpre", ""), ("load", ())]


def test_state_dict_interchange_with_torch(torch):
    """Same architecture: identical keys, shapes and _metadata; a torch state_dict loads into the
    ember model (tensors converted) and back."""
    def build(lib):
        return lib.nn.Sequential(OrderedDict([
            ("conv", lib.nn.Conv2d(3, 4, 3, padding=1)), ("bn", lib.nn.BatchNorm2d(4)), ("act", lib.nn.ReLU()),
            ("flat", lib.nn.Flatten()), ("fc", lib.nn.Linear(4 * 5 * 5, 10)), ("ln", lib.nn.LayerNorm(10)),
            ("heads", lib.nn.ModuleList([lib.nn.Linear(10, 2), lib.nn.Linear(10, 3, bias=False)])),
        ]))
    e, t = build(ember), build(torch)
    esd, tsd = e.state_dict(), t.state_dict()
    assert list(esd) == list(tsd)
    assert [tuple(v.shape) for v in esd.values()] == [tuple(v.shape) for v in tsd.values()]
    assert esd._metadata == tsd._metadata
    assert esd["bn.num_batches_tracked"].dtype is ember.int64
    conv = OrderedDict((k, t2e(v)) for k, v in tsd.items())
    conv._metadata = tsd._metadata
    assert repr(e.load_state_dict(conv)) == "<All keys matched successfully>"
    assert np.array_equal(e2n(e.fc.weight), tsd["fc.weight"].numpy())
    back = OrderedDict((k, torch.from_numpy(v.numpy().copy())) for k, v in esd.items())
    back._metadata = esd._metadata
    t.load_state_dict(back)


# ---------------------------------------------------------------- hooks
def test_forward_hooks():
    m = Affine()
    log = []
    h1 = m.register_forward_pre_hook(lambda mod, args: log.append("pre1"))
    m.register_forward_pre_hook(lambda mod, args: log.append("pre0"), prepend=True)
    m.register_forward_pre_hook(lambda mod, args: (args[0] + 1,))
    m.register_forward_hook(lambda mod, args, out: out * 10)
    m.register_forward_hook(lambda mod, args, kwargs, out: log.append(("kw", sorted(kwargs))), with_kwargs=True)
    out = m(ember.ones(2))
    assert out.tolist() == [40.0, 40.0] and log == ["pre0", "pre1", ("kw", [])]
    h1.remove()
    log.clear()
    m(ember.ones(2))
    assert log == ["pre0", ("kw", [])]

    class K(nn.Module):
        def forward(self, x, *, scale=1.0):
            return x * scale

    k = K()
    k.register_forward_pre_hook(lambda mod, args, kwargs: (args, {"scale": 3.0}), with_kwargs=True)
    assert k(ember.ones(1)).item() == 3.0
    k2 = K()
    k2.register_forward_pre_hook(lambda mod, args, kwargs: 5, with_kwargs=True)
    with pytest.raises(RuntimeError, match="forward pre-hook must return None or a tuple"):
        k2(ember.ones(1))

    class Boom(nn.Module):
        def forward(self, x):
            raise ValueError("boom")

    b = Boom()
    seen = []
    b.register_forward_hook(lambda mod, args, out: seen.append(out), always_call=True)
    with pytest.raises(ValueError, match="boom"):
        b(ember.ones(1))
    assert seen == [None]


def test_global_forward_hooks():
    seen = []
    h = nn.register_module_forward_pre_hook(lambda mod, args: seen.append(type(mod).__name__))
    try:
        Net()(ember.ones(1, 3))
    finally:
        h.remove()
    Net()(ember.ones(1, 3))
    assert seen == ["Net", "Affine"]


def test_full_backward_hooks_match_torch(torch):
    def build(lib):
        class M(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.w = lib.nn.Parameter(lib.tensor([[1.0, 2.0], [3.0, 4.0]]))

            def forward(self, x, y):
                return x @ self.w * y, (x * 2).sum()
        return M()

    def run(lib):
        m = build(lib)
        log = []
        lst = lambda gs: [None if g is None else g.tolist() for g in gs]  # noqa: E731
        m.register_full_backward_pre_hook(lambda mod, go: log.append(("pre", lst(go))))
        m.register_full_backward_hook(lambda mod, gi, go: log.append(("full", lst(gi), lst(go))))
        # a pre-hook may replace grad_output
        m.register_full_backward_pre_hook(lambda mod, go: (go[0] * 2, go[1]))
        x = lib.tensor([[1.0, 1.0]], requires_grad=True)
        a, b = m(x, lib.tensor(3.0))
        (a.sum() + b).backward()
        log.append(x.grad.tolist())
        log.append(m.w.grad.tolist())
        # the backward hook may replace grad_input
        m2 = build(lib)
        m2.register_full_backward_hook(lambda mod, gi, go: (gi[0] * 0 + 7, gi[1]))
        x2 = lib.tensor([[1.0, 1.0]], requires_grad=True)
        m2(x2, lib.tensor(1.0))[0].sum().backward()
        log.append(x2.grad.tolist())
        # no input requires grad: the hook fires with grad_input all None
        m3 = build(lib)
        m3.register_full_backward_hook(lambda mod, gi, go: log.append(("noin", gi, lst(go))))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            m3(lib.ones(1, 2), lib.tensor(1.0))[0].sum().backward()
        return log

    assert run(ember) == run(torch)


def test_backward_hook_mixing_errors():
    m = Affine()
    m.register_full_backward_hook(lambda *a: None)
    with pytest.raises(RuntimeError, match="Cannot use both regular backward hooks and full backward hooks"):
        m.register_backward_hook(lambda *a: None)


# ---------------------------------------------------------------- repr
def test_repr_format():
    m = Net()
    m.seq = nn.Sequential(nn.Identity(), Affine())
    assert repr(m) == ("Net(\n  (sub): Affine()\n  (seq): Sequential(\n    (0): Identity()\n    (1): Affine()\n  )\n)")

    class E(nn.Module):
        def extra_repr(self):
            return "a=1\nb=2"

    assert repr(E()) == "E(\n  a=1\n  b=2\n)"


LAYERS = [
    ("Identity", ()), ("Linear", (4, 3)), ("Linear", (4, 3, False)), ("Bilinear", (3, 4, 2)), ("Flatten", ()),
    ("Unflatten", (1, (2, 2))), ("Conv1d", (2, 3, 3)), ("Conv2d", (2, 4, (3, 2), 2, 1, 1, 2, False)),
    ("Conv2d", (2, 3, 3, 1, "same", 2, 1, True, "reflect")), ("Conv3d", (2, 3, 2)), ("ConvTranspose1d", (2, 3, 3, 2)),
    ("ConvTranspose2d", (2, 4, 3, 2, 1, 1, 2)), ("ConvTranspose3d", (2, 3, 2)), ("MaxPool1d", (2,)),
    ("MaxPool2d", (3, 2, 1, 1, True, True)), ("MaxPool3d", (2,)), ("AvgPool1d", (3, 2, 1)), ("AvgPool2d", (2,)),
    ("AvgPool3d", (2, 1, 0, True, False, 3)), ("AdaptiveAvgPool1d", (3,)), ("AdaptiveAvgPool2d", ((3, None),)),
    ("AdaptiveAvgPool3d", (2,)), ("AdaptiveMaxPool1d", (3,)), ("AdaptiveMaxPool2d", (3, True)),
    ("BatchNorm1d", (3,)), ("BatchNorm2d", (3, 1e-3, None, False)), ("BatchNorm3d", (3, 1e-5, 0.1, True, False)),
    ("LayerNorm", ((3, 4),)), ("LayerNorm", (5, 1e-6, False)), ("GroupNorm", (2, 4)), ("InstanceNorm1d", (3,)),
    ("InstanceNorm2d", (3, 1e-5, 0.1, True, True)), ("InstanceNorm3d", (2,)), ("RMSNorm", (4,)),
    ("RMSNorm", ([2, 3], 1e-6, False)), ("LocalResponseNorm", (2,)), ("Dropout", ()), ("Dropout1d", (0.2,)),
    ("Dropout2d", (0.3, True)), ("Dropout3d", ()), ("AlphaDropout", (0.1,)), ("FeatureAlphaDropout", ()),
    ("Embedding", (10, 3)), ("Embedding", (10, 3, 0, 1.0, 1.0, True, True)), ("EmbeddingBag", (10, 3)),
    ("EmbeddingBag", (10, 3, 2.0, 3.0, True, "sum", False, None, False, -1)), ("Upsample", (None, 2.0)),
    ("Upsample", ((4, 4), None, "bilinear")), ("UpsamplingNearest2d", (None, 2)), ("UpsamplingBilinear2d", (3,)),
    ("PixelShuffle", (2,)), ("PixelUnshuffle", (2,)), ("ZeroPad1d", (1,)), ("ZeroPad2d", (1,)), ("ZeroPad3d", (1,)),
    ("ConstantPad1d", (2, 3.5)), ("ConstantPad2d", ((1, 0, 2, 1), 0.0)), ("ConstantPad3d", (1, -1.0)),
    ("ReflectionPad1d", (2,)), ("ReflectionPad2d", ((1, 0, 2, 1),)), ("ReflectionPad3d", (1,)),
    ("ReplicationPad1d", (2,)), ("ReplicationPad2d", (1,)), ("ReplicationPad3d", (1,)), ("CircularPad2d", (1,)),
    ("Softmax", (1,)), ("Softmax", ()), ("LogSoftmax", (-1,)), ("Softmin", (0,)), ("Softmax2d", ()),
    ("ChannelShuffle", (2,)), ("CosineSimilarity", ()), ("PairwiseDistance", (1.0, 1e-5, True)),
    # activations
    ("Threshold", (0.1, 20)), ("Threshold", (0.1, 20, True)), ("ReLU", ()), ("ReLU", (True,)), ("RReLU", ()),
    ("Hardtanh", (-2.0, 2.0)), ("ReLU6", (True,)), ("Sigmoid", ()), ("Hardsigmoid", ()), ("Tanh", ()), ("SiLU", ()),
    ("Mish", (True,)), ("Hardswish", ()), ("ELU", (0.5,)), ("CELU", (1.0, True)), ("SELU", ()), ("GLU", ()),
    ("GELU", ()), ("GELU", ("tanh",)), ("Hardshrink", ()), ("LeakyReLU", (0.2, True)), ("LogSigmoid", ()),
    ("Softplus", (2.0, 10.0)), ("Softshrink", (0.3,)), ("PReLU", (3, 0.1)), ("Softsign", ()), ("Tanhshrink", ()),
    # losses
    ("L1Loss", ()), ("MSELoss", ()), ("CrossEntropyLoss", ()), ("NLLLoss", ()), ("BCELoss", ()),
    ("BCEWithLogitsLoss", ()), ("KLDivLoss", ()), ("SmoothL1Loss", ()), ("HuberLoss", ()), ("SoftMarginLoss", ()),
    ("PoissonNLLLoss", ()), ("GaussianNLLLoss", ()), ("HingeEmbeddingLoss", ()), ("MultiLabelMarginLoss", ()),
    ("MultiLabelSoftMarginLoss", ()), ("CosineEmbeddingLoss", ()), ("MarginRankingLoss", ()),
    ("MultiMarginLoss", ()), ("TripletMarginLoss", ()), ("TripletMarginWithDistanceLoss", ()), ("CTCLoss", ()),
]


@pytest.mark.parametrize("name,args", LAYERS, ids=[f"{n}{i}" for i, (n, _) in enumerate(LAYERS)])
def test_layer_repr_and_state_match_torch(torch, name, args):
    e, t = getattr(nn, name)(*args), getattr(torch.nn, name)(*args)
    assert repr(e) == repr(t)
    esd, tsd = e.state_dict(), t.state_dict()
    assert list(esd) == list(tsd)
    for k in esd:
        assert tuple(esd[k].shape) == tuple(tsd[k].shape), k
        assert str(esd[k].dtype)[6:] == str(tsd[k].dtype)[6:], k
    assert esd._metadata == tsd._metadata
    assert [n for n, _ in e.named_parameters()] == [n for n, _ in t.named_parameters()]
    assert [p.requires_grad for p in e.parameters()] == [p.requires_grad for p in t.parameters()]
    # deterministic initial values (ones, zeros, constants) are PyTorch's
    for (k, ev), tv in zip(e.state_dict().items(), tsd.values()):
        if tv.numel() and bool((tv == tv.flatten()[0]).all()) and tv.dtype != torch.float16:
            assert np.allclose(ev.numpy(), tv.numpy()), k


def test_loss_legacy_reduction():
    with pytest.warns(UserWarning, match="size_average and reduce args will be deprecated, please use "
                                         "reduction='sum' instead."):
        assert nn.MSELoss(size_average=False).reduction == "sum"
    with pytest.warns(UserWarning, match="reduction=.none."):
        assert nn.L1Loss(reduce=False).reduction == "none"
    w = ember.ones(3)
    assert nn.CrossEntropyLoss(weight=w).weight is w and "weight" in dict(nn.NLLLoss(w).named_buffers())


def test_layer_argument_errors():
    with pytest.raises(ValueError, match="in_channels must be divisible by groups"):
        nn.Conv2d(3, 4, 3, groups=2)
    with pytest.raises(ValueError, match="padding='same' is not supported for strided convolutions"):
        nn.Conv1d(2, 2, 3, stride=2, padding="same")
    with pytest.raises(ValueError, match="padding_mode must be one of"):
        nn.Conv2d(2, 2, 3, padding_mode="wrap")
    with pytest.raises(ValueError, match='Only "zeros" padding mode is supported for ConvTranspose2d'):
        nn.ConvTranspose2d(2, 2, 3, padding_mode="reflect")
    with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1, but got 1.5"):
        nn.Dropout(1.5)
    with pytest.raises(ValueError, match="num_channels must be divisible by num_groups"):
        nn.GroupNorm(3, 4)
    with pytest.raises(AssertionError, match="Padding_idx must be within num_embeddings"):
        nn.Embedding(3, 2, padding_idx=3)
    with pytest.raises(TypeError, match="unflattened_size must be a tuple of ints"):
        nn.Unflatten(1, 4)
    with pytest.raises(AssertionError, match="max_val must be greater than min_val"):
        nn.Hardtanh(1.0, -1.0)
    with pytest.raises(ValueError, match="expected 4D input"):
        nn.BatchNorm2d(3)(ember.ones(2, 3))


def test_embedding_from_pretrained_and_padding():
    w = ember.arange(12.0).reshape(4, 3)
    e = nn.Embedding.from_pretrained(w)
    assert not e.weight.requires_grad and e.weight.data_ptr() == w.data_ptr()
    assert nn.Embedding.from_pretrained(w, freeze=False).weight.requires_grad
    p = nn.Embedding(5, 2, padding_idx=-1)
    assert p.padding_idx == 4 and p.weight[4].tolist() == [0.0, 0.0]
    b = nn.EmbeddingBag.from_pretrained(w, mode="max")
    assert b.mode == "max" and not b.weight.requires_grad
    with pytest.raises(AssertionError, match="2-dimensional"):
        nn.Embedding.from_pretrained(ember.ones(3))


# ---------------------------------------------------------------- layer forward parity
def _copy_weights(e, t):
    sd = OrderedDict((k, t2e(v)) for k, v in t.state_dict().items())
    e.load_state_dict(sd)


FORWARD = [
    ("Linear", (4, 3), [(2, 4)], ["linear"]), ("Bilinear", (3, 4, 2), [(2, 3), (2, 4)], ["bilinear"]),
    ("Conv1d", (2, 3, 3), [(2, 2, 7)], ["conv1d"]), ("Conv2d", (2, 3, 3, 2, 1), [(2, 2, 7, 6)], ["conv2d"]),
    ("Conv2d", (2, 3, 3, 1, "same", 1, 1, True, "reflect"), [(2, 2, 7, 6)], ["conv2d", "pad"]),
    ("Conv3d", (2, 3, 2), [(1, 2, 4, 5, 3)], ["conv3d"]), ("ConvTranspose1d", (2, 3, 3, 2), [(2, 2, 5)],
                                                            ["conv_transpose1d"]),
    ("ConvTranspose2d", (2, 3, 3, 2, 1, 1), [(2, 2, 5, 4)], ["conv_transpose2d"]),
    ("ConvTranspose3d", (2, 3, 2), [(1, 2, 3, 4, 3)], ["conv_transpose3d"]),
    ("MaxPool2d", (3, 2, 1), [(2, 3, 8, 7)], ["max_pool2d"]), ("AvgPool1d", (3, 2, 1), [(2, 3, 8)], ["avg_pool1d"]),
    ("AvgPool3d", (2,), [(1, 2, 4, 4, 4)], ["avg_pool3d"]), ("AdaptiveAvgPool2d", ((3, 2),), [(2, 3, 8, 7)],
                                                             ["adaptive_avg_pool2d"]),
    ("AdaptiveMaxPool1d", (3,), [(2, 3, 8)], ["adaptive_max_pool1d"]),
    ("BatchNorm1d", (3,), [(4, 3)], ["batch_norm"]), ("BatchNorm2d", (3, 1e-5, None), [(4, 3, 2, 2)], ["batch_norm"]),
    ("LayerNorm", ((3, 4),), [(2, 3, 4)], ["layer_norm"]), ("GroupNorm", (2, 4), [(2, 4, 3)], ["group_norm"]),
    ("InstanceNorm1d", (3,), [(2, 3, 5)], ["instance_norm"]), ("InstanceNorm2d", (3, 1e-5, 0.1, True, True),
                                                               [(2, 3, 5, 4)], ["instance_norm"]),
    ("RMSNorm", (4,), [(2, 3, 4)], ["rms_norm"]), ("LocalResponseNorm", (2,), [(2, 4, 5)], ["local_response_norm"]),
    ("Softmax", (1,), [(2, 3)], ["softmax"]), ("LogSoftmax", (1,), [(2, 3)], ["log_softmax"]),
    ("PixelShuffle", (2,), [(1, 8, 3, 3)], ["pixel_shuffle"]), ("ReflectionPad2d", ((1, 0, 2, 1),), [(1, 2, 4, 4)],
                                                                  ["pad"]),
    ("ChannelShuffle", (2,), [(1, 4, 2, 2)], ["channel_shuffle"]), ("Upsample", (None, 2.0), [(1, 2, 3, 3)],
                                                                    ["interpolate"]),
    ("CosineSimilarity", (), [(3, 5), (3, 5)], ["cosine_similarity"]),
    ("PairwiseDistance", (), [(3, 5), (3, 5)], ["pairwise_distance"]),
    ("GELU", (), [(3, 4)], ["gelu"]), ("LeakyReLU", (0.2,), [(3, 4)], ["leaky_relu"]), ("ELU", (), [(3, 4)], ["elu"]),
    ("PReLU", (3,), [(2, 3, 4)], ["prelu"]), ("Softplus", (), [(3, 4)], ["softplus"]), ("SiLU", (), [(3, 4)], ["silu"]),
    ("Hardtanh", (), [(3, 4)], ["hardtanh"]), ("MSELoss", (), [(3, 4), (3, 4)], ["mse_loss"]),
    ("L1Loss", (), [(3, 4), (3, 4)], ["l1_loss"]),
]


@pytest.mark.parametrize("name,args,shapes,fns", FORWARD, ids=[f"{f[0]}{i}" for i, f in enumerate(FORWARD)])
def test_layer_forward_matches_torch(torch, name, args, shapes, fns):
    needs_F(*fns)
    rs = np.random.RandomState(0)
    e, t = getattr(nn, name)(*args), getattr(torch.nn, name)(*args)
    _copy_weights(e, t)
    xs = [rs.randn(*s).astype(np.float32) for s in shapes]
    ein = [ember.from_numpy(x).requires_grad_() for x in xs]
    tin = [torch.from_numpy(x).requires_grad_() for x in xs]
    eo, to = e(*ein), t(*tin)
    np.testing.assert_allclose(e2n(eo), to.detach().numpy(), rtol=1e-5, atol=1e-5)
    to.sum().backward()
    eo.sum().backward()  # batch/instance norm in training mode included: running-stat updates keep versions
    for a, b in zip(ein, tin):
        np.testing.assert_allclose(e2n(a.grad), b.grad.numpy(), rtol=1e-4, atol=1e-5)
    for (k, p), q in zip(e.named_parameters(), t.parameters()):
        np.testing.assert_allclose(e2n(p.grad), q.grad.numpy(), rtol=1e-4, atol=1e-5, err_msg=k)
    for (k, b), c in zip(e.named_buffers(), t.buffers()):  # running statistics
        np.testing.assert_allclose(e2n(b), c.numpy(), rtol=1e-5, atol=1e-6, err_msg=k)


def test_batchnorm_running_stats(torch):
    needs_F("batch_norm")
    for momentum in (0.1, None):
        e, t = nn.BatchNorm1d(3, momentum=momentum), torch.nn.BatchNorm1d(3, momentum=momentum)
        rs = np.random.RandomState(1)
        for _ in range(3):
            x = rs.randn(8, 3).astype(np.float32)
            e(ember.from_numpy(x))
            t(torch.from_numpy(x))
        assert e.num_batches_tracked.item() == 3
        np.testing.assert_allclose(e2n(e.running_mean), t.running_mean.numpy(), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(e2n(e.running_var), t.running_var.numpy(), rtol=1e-5, atol=1e-6)
        e.eval()
        t.eval()
        x = rs.randn(4, 3).astype(np.float32)
        np.testing.assert_allclose(e2n(e(ember.from_numpy(x))), t(torch.from_numpy(x)).detach().numpy(), rtol=1e-5,
                                   atol=1e-5)
    # track_running_stats=False normalizes with batch statistics in eval too
    b = nn.BatchNorm1d(2, track_running_stats=False).eval()
    out = b(ember.tensor([[1.0, 2.0], [3.0, 6.0]]))
    assert b.running_mean is None and abs(out.mean().item()) < 1e-6


def test_dropout_modes():
    needs_F("dropout")
    d = nn.Dropout(0.5)
    x = ember.ones(1000)
    assert d.eval()(x) is x or d.eval()(x).tolist() == x.tolist()
    y = d.train()(x)
    kept = (y != 0).sum().item()
    assert 350 < kept < 650 and set(y.tolist()) <= {0.0, 2.0}


# ---------------------------------------------------------------- init
def _stats(t):
    a = t.detach().numpy().astype(np.float64).ravel()
    return a.mean(), a.std(), a.min(), a.max()


def test_default_init_distributions(torch):
    """Same init distribution as PyTorch: U(-1/sqrt(fan_in), 1/sqrt(fan_in)) for Linear/Conv weights
    and biases (bounds and standard deviation, against torch's samples), N(0, 1) for Embedding."""
    ember.manual_seed(0)
    cases = ((nn.Linear(256, 300), torch.nn.Linear(256, 300), 256),
             (nn.Conv2d(16, 64, 3), torch.nn.Conv2d(16, 64, 3), 16 * 9),
             (nn.ConvTranspose1d(32, 16, 5), torch.nn.ConvTranspose1d(32, 16, 5), 16 * 5),
             (nn.Bilinear(20, 30, 40), torch.nn.Bilinear(20, 30, 40), 20))
    for e, t, fan_in in cases:
        bound = 1 / math.sqrt(fan_in)
        for (name, ep), tp in zip(e.named_parameters(), t.parameters()):
            em, es, emin, emax = _stats(ep)
            tm, ts, _, _ = _stats(tp)
            assert -bound <= emin and emax <= bound, name
            assert max(-emin, emax) > 0.8 * bound, name
            assert abs(es - bound / math.sqrt(3)) < 0.15 * bound and abs(es - ts) < 0.15 * bound, name
            assert abs(em) < 0.15 * bound, name
    m, s, _, _ = _stats(nn.Embedding(1000, 50).weight)
    assert abs(m) < 0.02 and abs(s - 1) < 0.02


def test_init_functions(torch):
    ember.manual_seed(1)
    init = nn.init
    for nl, p in (("linear", None), ("conv2d", None), ("sigmoid", None), ("tanh", None), ("relu", None),
                  ("leaky_relu", None), ("leaky_relu", 0.2), ("selu", None), ("conv_transpose3d", None)):
        assert init.calculate_gain(nl, p) == torch.nn.init.calculate_gain(nl, p)
    with pytest.raises(ValueError, match="Unsupported nonlinearity foo"):
        init.calculate_gain("foo")
    with pytest.raises(ValueError, match="negative_slope"):
        init.calculate_gain("leaky_relu", "x")
    for shape in ((5, 3), (4, 3, 2, 5), (7, 2, 3)):
        assert init._calculate_fan_in_and_fan_out(ember.empty(shape)) == \
            torch.nn.init._calculate_fan_in_and_fan_out(torch.empty(shape))
    with pytest.raises(ValueError, match="fewer than 2 dimensions"):
        init._calculate_fan_in_and_fan_out(ember.empty(3))
    w = ember.empty(400, 500)
    with pytest.raises(ValueError, match="Mode fan_avg not supported"):
        init.kaiming_uniform_(w, mode="fan_avg")
    checks = [
        (lambda: init.uniform_(w, -2, 3), 0.5, math.sqrt(25 / 12)),
        (lambda: init.normal_(w, 1.0, 0.5), 1.0, 0.5),
        (lambda: init.xavier_uniform_(w, gain=2.0), 0, 2 * math.sqrt(2 / 900)),
        (lambda: init.xavier_normal_(w), 0, math.sqrt(2 / 900)),
        (lambda: init.kaiming_uniform_(w, a=0.1, nonlinearity="leaky_relu"), 0, math.sqrt(2 / 1.01) / math.sqrt(500)),
        (lambda: init.kaiming_normal_(w, mode="fan_out", nonlinearity="relu"), 0, math.sqrt(2) / math.sqrt(400)),
    ]
    for fn, mean, std in checks:
        out = fn()
        assert out is w and not w.requires_grad
        m, s, _, _ = _stats(w)
        assert abs(m - mean) < 0.02 * max(std, 0.1) + 0.01 and abs(s - std) < 0.02 * std, (m, s, mean, std)
    t = init.trunc_normal_(ember.empty(100000), mean=0.5, std=1.0, a=-1.0, b=1.5)
    m, s, lo, hi = _stats(t)
    tt = torch.nn.init.trunc_normal_(torch.empty(100000), mean=0.5, std=1.0, a=-1.0, b=1.5)
    tm, ts, _, _ = _stats(tt)
    assert lo >= -1.0 and hi <= 1.5 and abs(m - tm) < 0.01 and abs(s - ts) < 0.01
    p = nn.Parameter(ember.empty(3, 3))
    init.constant_(p, 0.3)
    assert p.requires_grad and np.allclose(p.detach().numpy(), 0.3)
    assert init.ones_(ember.empty(2)).tolist() == [1.0, 1.0] and init.zeros_(ember.ones(2)).tolist() == [0.0, 0.0]
    assert np.array_equal(init.eye_(ember.empty(3, 4)).numpy(), torch.nn.init.eye_(torch.empty(3, 4)).numpy())
    for shape, groups in (((4, 2, 3), 1), ((6, 3, 3, 3), 2), ((2, 2, 3, 3, 3), 1)):
        assert np.array_equal(init.dirac_(ember.empty(shape), groups).numpy(),
                              torch.nn.init.dirac_(torch.empty(shape), groups).numpy())
    with pytest.raises(ValueError, match="Only tensors with 3, 4, or 5 dimensions"):
        init.dirac_(ember.empty(3, 3))
    for shape, gain in (((6, 4), 1.0), ((3, 8), 2.0), ((4, 2, 3), 0.5)):
        q = init.orthogonal_(ember.empty(shape), gain).numpy().reshape(shape[0], -1)
        r, c = q.shape
        gram = q @ q.T if r <= c else q.T @ q
        assert np.allclose(gram, gain ** 2 * np.eye(min(r, c)), atol=1e-5)
    s = init.sparse_(ember.empty(10, 6), 0.3)
    assert all(int((s[:, j] == 0).sum()) >= 3 for j in range(6))
    with pytest.warns(FutureWarning, match="nn.init.normal` is now deprecated"):
        init.normal(ember.empty(2))
    with pytest.warns(UserWarning, match="zero-element"):
        init.kaiming_uniform_(ember.empty(0, 3))


# ---------------------------------------------------------------- containers
def test_sequential():
    a, b, c = nn.Identity(), Affine(), nn.Identity()
    s = nn.Sequential(a, b)
    assert len(s) == 2 and s[0] is a and s[-1] is b and list(s) == [a, b]
    assert s(ember.ones(2)).tolist() == [2.0, 2.0]
    s.append(c)
    assert s[2] is c and isinstance(s[1:], nn.Sequential) and list(s[1:]) == [b, c]
    assert list(s[1:]._modules) == ["1", "2"]
    s.insert(0, Affine())
    assert list(s._modules) == ["0", "1", "2", "3"] and s[1] is a
    del s[0]
    assert list(s) == [a, b, c] and list(s._modules) == ["0", "1", "2"]
    s.extend([nn.Identity()])
    assert len(s) == 4
    assert s.pop(3) is not None and len(s) == 3
    s[0] = nn.ReLU()
    assert isinstance(s[0], nn.ReLU)
    with pytest.raises(IndexError, match="index 5 is out of range"):
        s[5]
    d = nn.Sequential(OrderedDict([("first", a), ("second", b)]))
    assert d.first is a and list(d._modules) == ["first", "second"]
    assert len(s + d) == 5 and len(d * 2) == 4 and len(2 * d) == 4
    with pytest.raises(ValueError, match="add operator supports only objects of Sequential class"):
        s + 1
    assert "0" not in dir(s)


def test_module_list_dict(torch):
    ml = nn.ModuleList([nn.Linear(2, 2) for _ in range(3)] + [nn.ReLU()])
    tl = torch.nn.ModuleList([torch.nn.Linear(2, 2) for _ in range(3)] + [torch.nn.ReLU()])
    assert repr(ml) == repr(tl)
    assert repr(nn.ModuleList()) == repr(torch.nn.ModuleList())
    assert len(ml) == 4 and isinstance(ml[1:3], nn.ModuleList) and len(list(ml.parameters())) == 6
    ml.insert(1, nn.Identity())
    assert isinstance(ml[1], nn.Identity) and len(ml) == 5
    del ml[1]
    assert list(ml._modules) == ["0", "1", "2", "3"]
    ml += [nn.Tanh()]
    assert isinstance(ml[-1], nn.Tanh)
    with pytest.raises(TypeError, match="ModuleList.extend should be called with an iterable"):
        ml.extend(nn.Tanh())
    with pytest.raises(NotImplementedError, match='missing the required "forward" function'):
        ml(ember.ones(1))
    md = nn.ModuleDict({"a": nn.ReLU(), "b": nn.Identity()})
    md["c"] = nn.Tanh()
    assert list(md) == ["a", "b", "c"] and "c" in md and len(md) == 3
    assert list(md.keys()) == ["a", "b", "c"] and md.pop("b") is not None and "b" not in md
    md.update([("d", nn.ReLU())])
    assert list(md) == ["a", "c", "d"]
    with pytest.raises(ValueError, match="has length 1; 2 is required"):
        md.update([("e",)])
    assert repr(md) == repr(torch.nn.ModuleDict({"a": torch.nn.ReLU(), "c": torch.nn.Tanh(), "d": torch.nn.ReLU()}))


def test_parameter_list_dict(torch):
    pl = nn.ParameterList([nn.Parameter(ember.ones(2, 3)), ember.zeros(4)])
    tpl = torch.nn.ParameterList([torch.nn.Parameter(torch.ones(2, 3)), torch.zeros(4)])
    assert isinstance(pl[1], nn.Parameter) and len(pl) == 2
    assert repr(pl) == repr(tpl).replace("torch.", "ember.")
    pl.append(ember.ones(1))
    assert len(list(pl.parameters())) == 3 and [n for n, _ in pl.named_parameters()] == ["0", "1", "2"]
    assert isinstance(pl[0:2], nn.ParameterList) and len(pl[0:2]) == 2
    with pytest.raises(RuntimeError, match="ParameterList should not be called"):
        pl(1)
    pd = nn.ParameterDict({"b": ember.ones(2), "a": nn.Parameter(ember.zeros(3))})
    tpd = torch.nn.ParameterDict({"b": torch.ones(2), "a": torch.nn.Parameter(torch.zeros(3))})
    assert list(pd) == ["a", "b"]  # a plain dict is sorted, as in PyTorch
    assert repr(pd) == repr(tpd).replace("torch.", "ember.")
    pd["c"] = ember.ones(1)
    assert isinstance(pd["c"], nn.Parameter) and "c" in pd and pd.get("zz", 5) == 5
    assert pd.pop("c") is not None and len(pd) == 2
    assert list((pd | nn.ParameterDict({"z": ember.ones(1)})).keys()) == ["a", "b", "z"]
    with pytest.raises(TypeError, match="not a string"):
        pd[1] = ember.ones(1)


# ---------------------------------------------------------------- nn.utils
def _grads(lib, seed):
    rs = np.random.RandomState(seed)
    ps = []
    for shape in ((3, 4), (5,), (2, 2)):
        p = lib.nn.Parameter(lib.tensor(rs.randn(*shape).astype(np.float32)))
        p.grad = lib.tensor(rs.randn(*shape).astype(np.float32) * 3)
        ps.append(p)
    return ps


def test_clip_grad_norm_matches_torch(torch):
    for norm_type in (2.0, 1, math.inf, 3.5):
        for max_norm in (0.5, 100.0):
            ep, tp = _grads(ember, 0), _grads(torch, 0)
            en = nn.utils.clip_grad_norm_(ep, max_norm, norm_type)
            tn = torch.nn.utils.clip_grad_norm_(tp, max_norm, norm_type)
            assert abs(en.item() - tn.item()) < 1e-4 * tn.item()
            for a, b in zip(ep, tp):
                np.testing.assert_allclose(e2n(a.grad), b.grad.numpy(), rtol=1e-5, atol=1e-6)
    p = nn.Parameter(ember.ones(2))
    p.grad = ember.tensor([float("nan"), 1.0])
    with pytest.raises(RuntimeError, match="The total norm of order 2.0 for gradients from `parameters` is non-finite"):
        nn.utils.clip_grad_norm_(p, 1.0, error_if_nonfinite=True)
    assert nn.utils.clip_grad_norm_([], 1.0).item() == 0.0
    with pytest.warns(UserWarning, match="empty generator"):
        nn.utils.clip_grad_norm_((q for q in []), 1.0)
    ep, tp = _grads(ember, 1), _grads(torch, 1)
    nn.utils.clip_grad_value_(ep, 0.7)
    torch.nn.utils.clip_grad_value_(tp, 0.7)
    for a, b in zip(ep, tp):
        assert np.array_equal(e2n(a.grad), b.grad.numpy())
    assert nn.utils.clip_grad_norm_(ep, 1.0, foreach=True).item() > 0


def test_parameters_vector_roundtrip():
    ps = [nn.Parameter(ember.ones(2, 3)), nn.Parameter(ember.zeros(4))]
    v = nn.utils.parameters_to_vector(ps)
    assert v.shape == (10,) and v.requires_grad
    nn.utils.vector_to_parameters(ember.arange(10.0), ps)
    assert ps[0].tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]] and ps[1].tolist() == [6.0, 7.0, 8.0, 9.0]
    with pytest.raises(TypeError, match="expected ember.Tensor, but got: list"):
        nn.utils.vector_to_parameters([1], ps)


def test_rnn_utils_match_torch(torch):
    rnn_e, rnn_t = nn.utils.rnn, torch.nn.utils.rnn
    rs = np.random.RandomState(0)
    seqs = [rs.randn(n, 2).astype(np.float32) for n in (3, 5, 2)]
    es, ts = [ember.from_numpy(s) for s in seqs], [torch.from_numpy(s) for s in seqs]
    for bf in (False, True):
        for side in ("right", "left"):
            a = rnn_e.pad_sequence(es, batch_first=bf, padding_value=-1.0, padding_side=side)
            b = rnn_t.pad_sequence(ts, batch_first=bf, padding_value=-1.0, padding_side=side)
            assert np.array_equal(e2n(a), b.numpy())
    padded_e, padded_t = rnn_e.pad_sequence(es), rnn_t.pad_sequence(ts)
    pe = rnn_e.pack_padded_sequence(padded_e, [3, 5, 2], enforce_sorted=False)
    pt = rnn_t.pack_padded_sequence(padded_t, [3, 5, 2], enforce_sorted=False)
    assert isinstance(pe, rnn_e.PackedSequence) and pe._fields == pt._fields
    for x, y in zip(pe, pt):
        assert np.array_equal(x.numpy(), y.numpy())
    for kw in ({}, {"batch_first": True, "padding_value": 9.0, "total_length": 7}):
        (oe, le), (ot, lt) = rnn_e.pad_packed_sequence(pe, **kw), rnn_t.pad_packed_sequence(pt, **kw)
        assert np.array_equal(e2n(oe), ot.numpy()) and le.tolist() == lt.tolist() and le.dtype is ember.int64
    se = rnn_e.pack_sequence([es[1], es[0], es[2]])
    st = rnn_t.pack_sequence([ts[1], ts[0], ts[2]])
    assert np.array_equal(e2n(se.data), st.data.numpy()) and se.batch_sizes.tolist() == st.batch_sizes.tolist()
    assert se.sorted_indices is None and se.unsorted_indices is None
    assert [x.tolist() for x in rnn_e.unpack_sequence(pe)] == [x.tolist() for x in rnn_t.unpack_sequence(pt)]
    with pytest.raises(RuntimeError, match="must be sorted in decreasing order"):
        rnn_e.pack_padded_sequence(padded_e, [3, 5, 2])
    with pytest.raises(ValueError, match="Expected total_length to be at least"):
        rnn_e.pad_packed_sequence(pe, total_length=2)
    # gradients flow through packing
    x = ember.from_numpy(rs.randn(4, 2, 3).astype(np.float32)).requires_grad_()
    rnn_e.pack_padded_sequence(x, [4, 2]).data.sum().backward()
    assert x.grad[:, 1].sum().item() == 6.0 and x.grad[:, 0].sum().item() == 12.0
    assert pe.double().data.dtype is ember.float64


ACTIVATIONS = [("Threshold", (0.1, 20.0)), ("ReLU", ()), ("Hardtanh", (-0.5, 0.5)), ("ReLU6", ()), ("Sigmoid", ()),
               ("Hardsigmoid", ()), ("Tanh", ()), ("SiLU", ()), ("Mish", ()), ("Hardswish", ()), ("ELU", (0.5,)),
               ("CELU", (0.7,)), ("SELU", ()), ("GLU", ()), ("GELU", ("tanh",)), ("Hardshrink", (0.3,)),
               ("LeakyReLU", (0.1,)), ("LogSigmoid", ()), ("Softplus", (2.0, 1.0)), ("Softshrink", ()),
               ("PReLU", ()), ("Softsign", ()), ("Tanhshrink", ()), ("Softmin", (1,)), ("Softmax2d", ()),
               ("RReLU", (0.1, 0.3))]


def test_activation_modules_match_torch(torch):
    rs = np.random.RandomState(0)
    x = rs.randn(2, 4, 3, 2).astype(np.float32)
    for name, args in ACTIVATIONS:
        e, t = getattr(nn, name)(*args).eval(), getattr(torch.nn, name)(*args).eval()
        _copy_weights(e, t)
        ex, tx = ember.from_numpy(x.copy()).requires_grad_(), torch.from_numpy(x.copy()).requires_grad_()
        eo, to = e(ex), t(tx)
        np.testing.assert_allclose(e2n(eo), to.detach().numpy(), rtol=1e-5, atol=1e-6, err_msg=name)
        eo.sum().backward()
        to.sum().backward()
        np.testing.assert_allclose(e2n(ex.grad), tx.grad.numpy(), rtol=1e-4, atol=1e-5, err_msg=name)
    # in-place variants write into their input
    y = ember.from_numpy(x.copy())
    assert nn.ReLU(inplace=True)(y) is y and float(y.min()) >= 0


def test_loss_modules_match_torch(torch):
    rs = np.random.RandomState(1)
    logits = rs.randn(6, 4).astype(np.float32)
    cls = rs.randint(0, 4, size=6)
    prob = 1 / (1 + np.exp(-rs.randn(6, 4).astype(np.float32)))
    a, b = rs.randn(6, 4).astype(np.float32), rs.randn(6, 4).astype(np.float32)
    sign = np.sign(rs.randn(6)).astype(np.float32)
    w = rs.rand(4).astype(np.float32) + 0.5
    cases = [
        ("CrossEntropyLoss", {}, [logits, cls]), ("CrossEntropyLoss", {"label_smoothing": 0.1}, [logits, cls]),
        ("CrossEntropyLoss", {"weight": w, "ignore_index": 2}, [logits, cls]),
        ("CrossEntropyLoss", {"reduction": "sum"}, [logits, prob / prob.sum(1, keepdims=True)]),
        ("NLLLoss", {"reduction": "none"}, [np.log(prob), cls]), ("MSELoss", {}, [a, b]),
        ("L1Loss", {"reduction": "sum"}, [a, b]), ("SmoothL1Loss", {"beta": 0.5}, [a, b]),
        ("HuberLoss", {"delta": 0.7}, [a, b]), ("BCELoss", {}, [prob, (b > 0).astype(np.float32)]),
        ("BCEWithLogitsLoss", {"pos_weight": w}, [a, (b > 0).astype(np.float32)]),
        ("KLDivLoss", {"reduction": "batchmean"}, [np.log(prob), prob]), ("SoftMarginLoss", {}, [a, np.sign(b)]),
        ("MultiLabelSoftMarginLoss", {}, [a, (b > 0).astype(np.float32)]), ("MultiMarginLoss", {}, [logits, cls]),
        ("CosineEmbeddingLoss", {"margin": 0.1}, [a, b, sign]), ("MarginRankingLoss", {"margin": 0.2},
                                                                  [a[:, 0], b[:, 0], sign]),
        ("HingeEmbeddingLoss", {}, [a, np.sign(b)]), ("TripletMarginLoss", {}, [a, b, a[::-1].copy()]),
        ("PoissonNLLLoss", {}, [a, prob]), ("GaussianNLLLoss", {}, [a, b, prob]),
    ]
    for name, kw, inputs in cases:
        ekw = {k: ember.from_numpy(v) if isinstance(v, np.ndarray) else v for k, v in kw.items()}
        tkw = {k: torch.from_numpy(v) if isinstance(v, np.ndarray) else v for k, v in kw.items()}
        e, t = getattr(nn, name)(**ekw), getattr(torch.nn, name)(**tkw)
        assert repr(e) == repr(t)
        ein = [ember.from_numpy(np.ascontiguousarray(v)) for v in inputs]
        tin = [torch.from_numpy(np.ascontiguousarray(v)) for v in inputs]
        ein[0].requires_grad_()
        tin[0].requires_grad_()
        eo, to = e(*ein), t(*tin)
        np.testing.assert_allclose(e2n(eo), to.detach().numpy(), rtol=1e-5, atol=1e-6, err_msg=name)
        eo.sum().backward()
        to.sum().backward()
        np.testing.assert_allclose(e2n(ein[0].grad), tin[0].grad.numpy(), rtol=1e-4, atol=1e-6, err_msg=name)


def test_embedding_modules_match_torch(torch):
    rs = np.random.RandomState(2)
    idx = rs.randint(0, 10, size=(3, 4))
    for e, t in ((nn.Embedding(10, 3, padding_idx=1), torch.nn.Embedding(10, 3, padding_idx=1)),
                 (nn.EmbeddingBag(10, 3, mode="sum"), torch.nn.EmbeddingBag(10, 3, mode="sum")),
                 (nn.EmbeddingBag(10, 3, mode="max"), torch.nn.EmbeddingBag(10, 3, mode="max"))):
        _copy_weights(e, t)
        eo, to = e(ember.from_numpy(idx)), t(torch.from_numpy(idx))
        np.testing.assert_allclose(e2n(eo), to.detach().numpy(), rtol=1e-6)
        eo.sum().backward()
        to.sum().backward()
        np.testing.assert_allclose(e2n(e.weight.grad), t.weight.grad.numpy(), rtol=1e-6)
    flat, offsets = rs.randint(0, 10, size=7), np.array([0, 3, 3])
    e, t = nn.EmbeddingBag(10, 2), torch.nn.EmbeddingBag(10, 2)
    _copy_weights(e, t)
    np.testing.assert_allclose(e2n(e(ember.from_numpy(flat), ember.from_numpy(offsets))),
                               t(torch.from_numpy(flat), torch.from_numpy(offsets)).detach().numpy(), rtol=1e-6)


def test_train_eval_modes_change_forward():
    d = nn.Sequential(nn.Dropout(0.5), nn.AlphaDropout(0.3), nn.Dropout2d(0.4))
    x = ember.ones(2, 3, 4, 4)
    assert d.eval()(x).tolist() == x.tolist()
    assert d.train()(x).tolist() != x.tolist()
