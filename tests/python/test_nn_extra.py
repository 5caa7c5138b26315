"""nn additions checked against torch: nn.utils.parametrize / parametrizations, the hook-based
weight_norm / spectral_norm, conv/linear + batch-norm fusion, utils.checkpoint, and the extra
layers and functionals (fold, pooling variants, lazy modules, adaptive log-softmax, gumbel)."""
from collections import OrderedDict

import numpy as np
import pytest

import ember
import ember.nn as nn
import ember.nn.functional as F
from ember.nn.utils import parametrize


pytestmark = pytest.mark.filterwarnings("ignore:`torch.nn.utils.weight_norm` is deprecated:FutureWarning")


@pytest.fixture
def torch():
    return pytest.importorskip("torch")


def t2e(t):
    return ember.from_numpy(t.detach().numpy().copy())


def e2n(t):
    return t.detach().numpy()


def close(a, b, atol=1e-5, rtol=1e-4):
    a = e2n(a) if isinstance(a, ember.Tensor) else np.asarray(a)
    b = b.detach().numpy() if hasattr(b, "detach") else np.asarray(b)
    assert a.shape == b.shape, (a.shape, b.shape)
    np.testing.assert_allclose(a, b, atol=atol, rtol=rtol)


def load_from_torch(em, tm):
    """Copy a torch module's state_dict into the ember module (keys must match exactly)."""
    sd = OrderedDict((k, t2e(v)) for k, v in tm.state_dict().items())
    em.load_state_dict(sd)


def same_keys(em, tm):
    assert list(em.state_dict().keys()) == list(tm.state_dict().keys())


class ESym(nn.Module):
    def forward(self, X):
        return X.triu() + X.triu(1).transpose(-1, -2)


class EScale(nn.Module):
    """x * 2, with a right inverse."""

    def forward(self, X):
        return X * 2

    def right_inverse(self, X):
        return X / 2


def _tsym(torch):
    class TSym(torch.nn.Module):
        def forward(self, X):
            return X.triu() + X.triu(1).transpose(-1, -2)
    return TSym


def _tscale(torch):
    class TScale(torch.nn.Module):
        def forward(self, X):
            return X * 2

        def right_inverse(self, X):
            return X / 2
    return TScale


# ---------------------------------------------------------------- parametrize


def test_register_parametrization_layout_and_values(torch):
    tm = torch.nn.Linear(4, 4)
    em = nn.Linear(4, 4)
    load_from_torch(em, tm)
    torch.nn.utils.parametrize.register_parametrization(tm, "weight", _tsym(torch)())
    parametrize.register_parametrization(em, "weight", ESym())
    assert type(em).__name__ == "ParametrizedLinear" and isinstance(em, nn.Linear)
    assert parametrize.type_before_parametrizations(em) is nn.Linear
    same_keys(em, tm)
    assert isinstance(em.parametrizations.weight.original, nn.Parameter)
    assert "weight" not in em._parameters
    close(em.weight, tm.weight)
    x = np.random.randn(3, 4).astype(np.float32)
    ye, yt = em(ember.from_numpy(x)), tm(torch.from_numpy(x))
    close(ye, yt)
    ye.sum().backward()
    yt.sum().backward()
    close(em.parametrizations.weight.original.grad, tm.parametrizations.weight.original.grad)
    # state dicts interchange both ways
    em2 = parametrize.register_parametrization(nn.Linear(4, 4), "weight", ESym())
    load_from_torch(em2, tm)
    close(em2.weight, tm.weight)
    # a second nn.Linear keeps its own class: the property lives on the injected subclass
    assert type(nn.Linear(2, 2)) is nn.Linear and "weight" not in nn.Linear.__dict__


def test_parametrize_chain_right_inverse_and_setter(torch):
    tm = torch.nn.Linear(3, 3)
    em = nn.Linear(3, 3)
    load_from_torch(em, tm)
    for m, P, S in ((tm, torch.nn.utils.parametrize, _tscale(torch)), (em, parametrize, EScale)):
        P.register_parametrization(m, "weight", S())
        P.register_parametrization(m, "weight", S())
    same_keys(em, tm)
    # right_inverse ran at registration: the weight value is unchanged, original is W / 4
    close(em.weight, tm.weight)
    close(em.parametrizations.weight.original, tm.parametrizations.weight.original)
    orig = em.parametrizations.weight.original
    v = np.random.randn(3, 3).astype(np.float32)
    em.weight = ember.from_numpy(v)
    tm.weight = torch.from_numpy(v)
    assert em.parametrizations.weight.original is orig  # same Parameter, new data
    close(em.weight, tm.weight)
    close(orig, tm.parametrizations.weight.original)
    assert len(em.parametrizations.weight) == 2


def test_parametrize_buffers_and_setter_without_right_inverse():
    m = nn.Module()
    m.register_buffer("b", ember.randn(3, 3))
    parametrize.register_parametrization(m, "b", ESym())
    assert list(m.state_dict().keys()) == ["parametrizations.b.original"]
    assert not isinstance(m.parametrizations.b.original, nn.Parameter)
    with pytest.raises(RuntimeError, match="does not implement right_inverse"):
        m.b = ember.randn(3, 3)


def test_remove_parametrizations(torch):
    for leave in (True, False):
        tm = torch.nn.Linear(3, 3)
        em = nn.Linear(3, 3)
        load_from_torch(em, tm)
        torch.nn.utils.parametrize.register_parametrization(tm, "weight", _tsym(torch)())
        parametrize.register_parametrization(em, "weight", ESym())
        orig = em.parametrizations.weight.original
        torch.nn.utils.parametrize.remove_parametrizations(tm, "weight", leave_parametrized=leave)
        parametrize.remove_parametrizations(em, "weight", leave_parametrized=leave)
        assert type(em) is nn.Linear and not hasattr(em, "parametrizations")
        assert em.weight is orig and isinstance(em.weight, nn.Parameter)
        same_keys(em, tm)
        close(em.weight, tm.weight)
    with pytest.raises(ValueError, match="does not have a parametrization"):
        parametrize.remove_parametrizations(em, "weight")


def test_parametrize_two_tensors_and_is_parametrized():
    m = nn.Linear(3, 3)
    assert not parametrize.is_parametrized(m)
    parametrize.register_parametrization(m, "weight", ESym())
    parametrize.register_parametrization(m, "bias", EScale())
    assert parametrize.is_parametrized(m) and parametrize.is_parametrized(m, "bias")
    assert not parametrize.is_parametrized(m, "other")
    parametrize.remove_parametrizations(m, "weight")
    assert type(m).__name__ == "ParametrizedLinear"
    parametrize.remove_parametrizations(m, "bias")
    assert type(m) is nn.Linear


def test_parametrize_errors():
    m = nn.Linear(3, 4)
    with pytest.raises(ValueError, match="does not have a parameter, a buffer, or a parametrized element"):
        parametrize.register_parametrization(m, "nope", ESym())

    class Shrink(nn.Module):
        def forward(self, X):
            return X[:1]

    with pytest.raises(ValueError, match="may not change the shape"):
        parametrize.register_parametrization(m, "weight", Shrink())
    assert type(m) is nn.Linear and "weight" in m._parameters

    class ToDouble(nn.Module):
        def forward(self, X):
            return X.double()

    with pytest.raises(ValueError, match="may not change the dtype"):
        parametrize.register_parametrization(m, "weight", ToDouble())
    parametrize.register_parametrization(m, "weight", Shrink(), unsafe=True)
    assert m.weight.shape == (1, 3)
    import pickle
    with pytest.raises(RuntimeError, match="only supported through state_dict"):
        pickle.dumps(m)


def test_parametrize_cached_and_deepcopy():
    import copy
    calls = []

    class Count(nn.Module):
        def forward(self, X):
            calls.append(1)
            return X * 1

    m = parametrize.register_parametrization(nn.Linear(2, 2), "weight", Count())
    calls.clear()
    with parametrize.cached():
        a, b = m.weight, m.weight
        assert a is b and len(calls) == 1
    m.weight
    assert len(calls) == 2
    c = copy.deepcopy(m)
    assert type(c) is type(m) and c.parametrizations.weight.original is not m.parametrizations.weight.original
    np.testing.assert_array_equal(e2n(c.weight), e2n(m.weight))


def test_transfer_parametrizations_and_params():
    src = parametrize.register_parametrization(nn.Linear(3, 3), "weight", ESym())
    dst = nn.Linear(3, 3)
    parametrize.transfer_parametrizations_and_params(src, dst)
    assert parametrize.is_parametrized(dst, "weight")
    np.testing.assert_array_equal(e2n(dst.weight), e2n(src.weight))


# ---------------------------------------------------------------- weight_norm / spectral_norm


@pytest.mark.parametrize("dim", [0, 1, None, -1])
@pytest.mark.parametrize("kind", ["linear", "conv"])
def test_parametrizations_weight_norm(torch, dim, kind):
    torch.manual_seed(0)
    tm = torch.nn.Linear(5, 4) if kind == "linear" else torch.nn.Conv2d(2, 3, 3)
    em = nn.Linear(5, 4) if kind == "linear" else nn.Conv2d(2, 3, 3)
    load_from_torch(em, tm)
    torch.nn.utils.parametrizations.weight_norm(tm, dim=dim)
    nn.utils.parametrizations.weight_norm(em, dim=dim)
    same_keys(em, tm)
    for k, v in tm.state_dict().items():
        close(em.state_dict()[k], v)
    close(em.weight, tm.weight)
    x = torch.randn(2, 5) if kind == "linear" else torch.randn(2, 2, 6, 6)
    ye, yt = em(t2e(x)), tm(x)
    close(ye, yt)
    (ye * ye).sum().backward()
    (yt * yt).sum().backward()
    for i in (0, 1):
        close(getattr(em.parametrizations.weight, f"original{i}").grad,
              getattr(tm.parametrizations.weight, f"original{i}").grad, atol=1e-4)
    # remove keeps the current weight as a plain parameter
    nn.utils.parametrize.remove_parametrizations(em, "weight")
    torch.nn.utils.parametrize.remove_parametrizations(tm, "weight")
    same_keys(em, tm)
    close(em.weight, tm.weight)


def test_parametrizations_weight_norm_loads_old_state_dict(torch):
    tm = torch.nn.utils.weight_norm(torch.nn.Linear(3, 2))
    em = nn.utils.parametrizations.weight_norm(nn.Linear(3, 2))
    load_from_torch_sd = OrderedDict((k, t2e(v)) for k, v in tm.state_dict().items())
    assert set(load_from_torch_sd) == {"bias", "weight_g", "weight_v"}
    em.load_state_dict(load_from_torch_sd)
    close(em.weight, tm.weight)


def test_weight_norm_functional_gradcheck():
    from ember.nn.utils.parametrizations import _weight_norm
    v = ember.randn(3, 4, dtype=ember.float64, requires_grad=True)
    for dim in (0, 1, -1):
        g = ember.rand(((3, 1) if dim == 0 else (1, 4) if dim == 1 else ()), dtype=ember.float64) + 0.5
        g.requires_grad_(True)
        assert ember.autograd.gradcheck(lambda a, b: _weight_norm(a, b, dim), (v, g))
        assert ember.autograd.gradgradcheck(lambda a, b: _weight_norm(a, b, dim), (v, g))


@pytest.mark.parametrize("kind", ["linear", "conv", "convT"])
def test_parametrizations_spectral_norm(torch, kind):
    torch.manual_seed(1)
    make = {"linear": lambda M: M.Linear(6, 4), "conv": lambda M: M.Conv2d(2, 3, 3),
            "convT": lambda M: M.ConvTranspose2d(3, 2, 3)}[kind]
    tm, em = make(torch.nn), make(nn)
    torch.nn.utils.parametrizations.spectral_norm(tm)
    nn.utils.parametrizations.spectral_norm(em)
    same_keys(em, tm)
    assert em.parametrizations.weight[0]._u.shape == tuple(tm.parametrizations.weight[0]._u.shape)
    load_from_torch(em, tm)  # same u, v, W: the power iterations then agree exactly
    x = torch.randn(2, 6) if kind == "linear" else torch.randn(2, 2 if kind == "conv" else 3, 5, 5)
    for training in (True, True, False):
        tm.train(training)
        em.train(training)
        ye, yt = em(t2e(x)), tm(x)
        close(ye, yt, atol=1e-4)
        close(em.parametrizations.weight[0]._u, tm.parametrizations.weight[0]._u, atol=1e-4)
        close(em.parametrizations.weight[0]._v, tm.parametrizations.weight[0]._v, atol=1e-4)
    ye.sum().backward()
    yt.sum().backward()
    close(em.parametrizations.weight.original.grad, tm.parametrizations.weight.original.grad, atol=1e-4)
    # the top singular value of the parametrized weight is ~1 after enough iterations
    em.train()
    for _ in range(30):
        w = em.weight
    w2 = e2n(w).reshape(w.shape[0], -1) if kind != "convT" else np.moveaxis(e2n(w), 1, 0).reshape(w.shape[1], -1)
    assert abs(np.linalg.svd(w2, compute_uv=False)[0] - 1) < 1e-3


def test_parametrizations_spectral_norm_gradcheck_and_errors():
    from ember.nn.utils.parametrizations import _SpectralNorm
    w = ember.randn(4, 3, dtype=ember.float64, requires_grad=True)
    sn = _SpectralNorm(w.detach(), dim=0).double().eval()
    assert ember.autograd.gradcheck(sn, (w,))
    assert ember.autograd.gradgradcheck(sn, (w,))
    with pytest.raises(ValueError, match="n_power_iterations"):
        nn.utils.parametrizations.spectral_norm(nn.Linear(2, 2), n_power_iterations=0)
    with pytest.raises(ValueError, match="has no parameter or buffer"):
        nn.utils.parametrizations.spectral_norm(nn.Linear(2, 2), name="nope")
    v = ember.randn(5, dtype=ember.float64)  # 1-d: plain normalisation
    m = nn.Module()
    m.w = nn.Parameter(v)
    nn.utils.parametrizations.spectral_norm(m, "w")
    np.testing.assert_allclose(e2n(m.w), e2n(v) / np.linalg.norm(e2n(v)), rtol=1e-12)


@pytest.mark.parametrize("dim", [0, 1, None])
def test_old_weight_norm(torch, dim):
    tm = torch.nn.Conv1d(2, 3, 2)
    em = nn.Conv1d(2, 3, 2)
    load_from_torch(em, tm)
    torch.nn.utils.weight_norm(tm, dim=dim)
    nn.utils.weight_norm(em, dim=dim)
    same_keys(em, tm)
    for k, v in tm.state_dict().items():
        close(em.state_dict()[k], v)
    x = torch.randn(2, 2, 5)
    ye, yt = em(t2e(x)), tm(x)
    close(ye, yt)
    ye.pow(2).sum().backward()
    yt.pow(2).sum().backward()
    close(em.weight_g.grad, tm.weight_g.grad, atol=1e-4)
    close(em.weight_v.grad, tm.weight_v.grad, atol=1e-4)
    with pytest.warns(FutureWarning, match="deprecated in favor of"):
        nn.utils.weight_norm(nn.Linear(2, 2))
    with pytest.raises(RuntimeError, match="Cannot register two weight_norm hooks"):
        nn.utils.weight_norm(em, dim=dim)
    with ember.no_grad():
        em.weight_g.mul_(2)
    with torch.no_grad():
        tm.weight_g.mul_(2)
    nn.utils.remove_weight_norm(em)
    torch.nn.utils.remove_weight_norm(tm)
    assert list(em.state_dict().keys()) == ["bias", "weight"]
    close(em.weight, tm.weight)
    with pytest.raises(ValueError, match="weight_norm of 'weight' not found"):
        nn.utils.remove_weight_norm(em)


def test_old_spectral_norm(torch):
    torch.manual_seed(2)
    tm = torch.nn.utils.spectral_norm(torch.nn.Linear(5, 4))
    em = nn.utils.spectral_norm(nn.Linear(5, 4))
    same_keys(em, tm)
    assert em.state_dict()._metadata[""]["spectral_norm"] == {"weight.version": 1}
    load_from_torch(em, tm)
    x = torch.randn(3, 5)
    for training in (True, True, False):
        tm.train(training)
        em.train(training)
        close(em(t2e(x)), tm(x), atol=1e-4)
        close(em.weight_u, tm.weight_u, atol=1e-4)
        close(em.weight_v, tm.weight_v, atol=1e-4)
    em.train()
    loss_e = em(t2e(x)).sum()
    loss_t = tm.train()(x).sum()
    loss_e.backward()
    loss_t.backward()
    close(em.weight_orig.grad, tm.weight_orig.grad, atol=1e-4)
    with pytest.raises(RuntimeError, match="Cannot register two spectral_norm hooks"):
        nn.utils.spectral_norm(em)
    nn.utils.remove_spectral_norm(em)
    torch.nn.utils.remove_spectral_norm(tm)
    same_keys(em, tm)
    close(em.weight, tm.weight, atol=1e-4)
    assert "spectral_norm" not in em.state_dict()._metadata[""]
    with pytest.raises(ValueError, match="spectral_norm of 'weight' not found"):
        nn.utils.remove_spectral_norm(em)
    # ConvTranspose normalises along dim 1
    ct = nn.utils.spectral_norm(nn.ConvTranspose2d(3, 2, 2))
    assert ct.weight_u.shape == (2,) and ct.weight_v.shape == (12,)


# ---------------------------------------------------------------- fusion


@pytest.mark.parametrize("transpose", [False, True])
def test_fuse_conv_bn(torch, transpose):
    tc = torch.nn.ConvTranspose2d(3, 4, 3) if transpose else torch.nn.Conv2d(3, 4, 3)
    tb = torch.nn.BatchNorm2d(4)
    tb.running_mean.uniform_(-1, 1)
    tb.running_var.uniform_(0.5, 2)
    tb.weight.data.uniform_(0.5, 2)
    tb.bias.data.uniform_(-1, 1)
    ec = nn.ConvTranspose2d(3, 4, 3) if transpose else nn.Conv2d(3, 4, 3)
    eb = nn.BatchNorm2d(4)
    load_from_torch(ec, tc)
    load_from_torch(eb, tb)
    for m in (tc, tb, ec, eb):
        m.eval()
    fe = nn.utils.fuse_conv_bn_eval(ec, eb, transpose=transpose)
    ft = torch.nn.utils.fuse_conv_bn_eval(tc, tb, transpose=transpose)
    assert isinstance(fe.weight, nn.Parameter) and fe is not ec
    close(fe.weight, ft.weight)
    close(fe.bias, ft.bias)
    x = torch.randn(2, 3, 6, 6)
    close(fe(t2e(x)), eb(ec(t2e(x))), atol=1e-4)
    with pytest.raises(AssertionError, match="Fusion only for eval"):
        nn.utils.fuse_conv_bn_eval(ec.train(), eb)
    w, b = nn.utils.fuse_conv_bn_weights(ec.weight, None, eb.running_mean, eb.running_var, eb.eps, None, None,
                                         transpose)
    wt, bt = torch.nn.utils.fuse_conv_bn_weights(tc.weight, None, tb.running_mean, tb.running_var, tb.eps, None,
                                                 None, transpose)
    close(w, wt)
    close(b, bt)


def test_fuse_linear_bn(torch):
    tl, tb = torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4)
    tb.running_mean.uniform_(-1, 1)
    tb.running_var.uniform_(0.5, 2)
    el, eb = nn.Linear(3, 4), nn.BatchNorm1d(4)
    load_from_torch(el, tl)
    load_from_torch(eb, tb)
    for m in (tl, tb, el, eb):
        m.eval()
    fe, ft = nn.utils.fuse_linear_bn_eval(el, eb), torch.nn.utils.fuse_linear_bn_eval(tl, tb)
    close(fe.weight, ft.weight)
    close(fe.bias, ft.bias)
    x = torch.randn(5, 3)
    close(fe(t2e(x)), eb(el(t2e(x))), atol=1e-5)
    with pytest.raises(AssertionError, match="To fuse"):
        nn.utils.fuse_linear_bn_eval(nn.Linear(3, 5).eval(), eb)


# ---------------------------------------------------------------- utils.checkpoint

from ember.utils.checkpoint import CheckpointError, checkpoint, checkpoint_sequential  # noqa: E402


def _dropout_net():
    ember.manual_seed(0)
    return nn.Sequential(nn.Linear(4, 16), nn.Dropout(0.5), nn.Tanh(), nn.Linear(16, 16), nn.Dropout(0.3),
                         nn.Linear(16, 3))


def _grads(m, x):
    return [e2n(p.grad).copy() for p in m.parameters()] + ([e2n(x.grad).copy()] if x.grad is not None else [])


@pytest.mark.parametrize("use_reentrant", [True, False])
def test_checkpoint_matches_plain_backward_with_dropout(use_reentrant):
    m = _dropout_net()
    x = ember.randn(6, 4, requires_grad=True)
    state = ember.get_rng_state()
    y = m(x)
    (y * y).sum().backward()
    ref = _grads(m, x)
    after_plain = ember.get_rng_state()
    m.zero_grad()
    x.grad = None
    ember.set_rng_state(state)
    yc = checkpoint(m, x, use_reentrant=use_reentrant)
    np.testing.assert_array_equal(e2n(yc), e2n(y))
    (yc * yc).sum().backward()
    for a, b in zip(_grads(m, x), ref):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)
    # the recompute replays the saved state and puts the outer one back: no extra draws are consumed
    np.testing.assert_array_equal(e2n(ember.get_rng_state()), e2n(after_plain))


@pytest.mark.parametrize("use_reentrant", [True, False])
def test_checkpoint_without_rng_preservation_draws_new_masks(use_reentrant):
    m = _dropout_net()
    x = ember.randn(64, 4, requires_grad=True)
    state = ember.get_rng_state()
    m(x).sum().backward()
    ref = _grads(m, x)
    m.zero_grad()
    x.grad = None
    ember.set_rng_state(state)
    checkpoint(m, x, use_reentrant=use_reentrant, preserve_rng_state=False).sum().backward()
    assert any(not np.allclose(a, b) for a, b in zip(_grads(m, x), ref))


def test_checkpoint_non_reentrant_kwargs_nested_and_parameters_only():
    def f(a, b=None, *, scale=1.0, pair=None):
        return {"out": (a * b).sin() * scale + pair[0] * pair[1], "n": 3, "t": (a.cos(), a.argmax())}

    a, b, c, d = (ember.randn(4, dtype=ember.float64, requires_grad=True) for _ in range(4))
    out = checkpoint(f, a, b=b, scale=2.0, pair=[c, d], use_reentrant=False)
    assert out["n"] == 3 and not out["t"][1].requires_grad
    (out["out"].sum() + out["t"][0].sum()).backward()
    na, nb, nc, nd = (e2n(t) for t in (a, b, c, d))
    np.testing.assert_allclose(e2n(a.grad), 2 * np.cos(na * nb) * nb - np.sin(na), rtol=1e-12)
    np.testing.assert_allclose(e2n(b.grad), 2 * np.cos(na * nb) * na, rtol=1e-12)
    np.testing.assert_allclose(e2n(c.grad), nd, rtol=1e-12)
    # no input requires grad: the segment's parameters still get theirs (reentrant: warning, none)
    lin = nn.Linear(3, 2)
    x = ember.randn(5, 3)
    checkpoint(lin, x, use_reentrant=False).sum().backward()
    np.testing.assert_allclose(e2n(lin.weight.grad), np.tile(e2n(x).sum(0), (2, 1)), rtol=1e-5)
    lin.zero_grad()
    with pytest.warns(UserWarning, match="None of the inputs have requires_grad=True"):
        y = checkpoint(lin, x, use_reentrant=True)
    assert not y.requires_grad
    # no grad anywhere: plain output
    with ember.no_grad():
        assert not checkpoint(lin, x, use_reentrant=False).requires_grad


def test_checkpoint_argument_errors_and_warnings():
    x = ember.randn(3, requires_grad=True)
    with pytest.raises(ValueError, match="Unexpected keyword arguments: k"):
        checkpoint(lambda a, k=1: a * k, x, k=2, use_reentrant=True)
    with pytest.raises(ValueError, match="context_fn"):
        checkpoint(lambda a: a * 2, x, use_reentrant=True, debug=True)
    with pytest.warns(UserWarning, match="use_reentrant parameter should be passed explicitly"):
        checkpoint(lambda a: a * 2, x)
    with pytest.raises(ValueError, match="determinism_check"):
        checkpoint(lambda a: a * 2, x, use_reentrant=False, determinism_check="bogus")
    calls = []

    def changing(a):
        calls.append(1)
        return a[: len(calls)] * 2

    y = checkpoint(changing, ember.randn(4, requires_grad=True), use_reentrant=False)
    with pytest.raises(CheckpointError, match="different metadata"):
        y.sum().backward()


def test_checkpoint_context_fn_and_autograd_grad():
    entered = []

    class Ctx:
        def __init__(self, tag):
            self.tag = tag

        def __enter__(self):
            entered.append(self.tag)

        def __exit__(self, *exc):
            return False

    x = ember.randn(3, dtype=ember.float64, requires_grad=True)
    y = checkpoint(lambda a: a.exp(), x, use_reentrant=False, context_fn=lambda: (Ctx("fwd"), Ctx("re")))
    (g,) = ember.autograd.grad(y.sum(), x)
    np.testing.assert_allclose(e2n(g), np.exp(e2n(x)), rtol=1e-12)
    assert entered == ["fwd", "re"]


@pytest.mark.parametrize("use_reentrant", [True, False])
def test_checkpoint_gradcheck(use_reentrant):
    w = ember.randn(3, 3, dtype=ember.float64)

    def seg(a, b):
        return (a @ w).tanh() * b.sigmoid(), a.sum()

    a = ember.randn(2, 3, dtype=ember.float64, requires_grad=True)
    b = ember.randn(2, 3, dtype=ember.float64, requires_grad=True)
    assert ember.autograd.gradcheck(lambda a, b: checkpoint(seg, a, b, use_reentrant=use_reentrant), (a, b))


@pytest.mark.parametrize("use_reentrant", [True, False])
def test_checkpoint_sequential(use_reentrant):
    m = _dropout_net()
    x = ember.randn(5, 4, requires_grad=True)
    state = ember.get_rng_state()
    m(x).pow(2).sum().backward()
    ref = _grads(m, x)
    for segments in (1, 2, 3, 6):
        m.zero_grad()
        x.grad = None
        ember.set_rng_state(state)
        checkpoint_sequential(m, segments, x, use_reentrant=use_reentrant).pow(2).sum().backward()
        for a, b in zip(_grads(m, x), ref):
            np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)
    with pytest.raises(ValueError, match="Unexpected keyword arguments"):
        checkpoint_sequential(m, 2, x, use_reentrant=use_reentrant, foo=1)
