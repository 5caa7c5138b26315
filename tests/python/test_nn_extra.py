"""nn additions checked against torch: nn.utils.parametrize / parametrizations, the hook-based
weight_norm / spectral_norm, conv/linear + batch-norm fusion, utils.checkpoint, and the extra
layers and functionals (fold, pooling variants, lazy modules, adaptive log-softmax, gumbel)."""
from collections import OrderedDict

import numpy as np
import pytest

import ember
import ember.nn as nn
import ember.nn.functional as F
from ember.nn.modules.lazy import LazyModuleMixin
from ember.nn.utils import parametrize


pytestmark = [pytest.mark.filterwarnings("ignore:`torch.nn.utils.weight_norm` is deprecated:FutureWarning"),
              pytest.mark.filterwarnings(
                  "ignore:`torch.nn.utils.stateless.functional_call` is deprecated:FutureWarning")]


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


@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (3, 5), (2, 4, 3)])
@pytest.mark.parametrize("omap", ["matrix_exp", "cayley", "householder"])
@pytest.mark.parametrize("triv", [True, False])
def test_parametrizations_orthogonal(torch, shape, omap, triv):
    torch.manual_seed(0)
    w0 = torch.randn(shape, dtype=torch.float64)
    tm, em = torch.nn.Module(), nn.Module()
    tm.weight = torch.nn.Parameter(w0.clone())
    em.weight = nn.Parameter(t2e(w0))
    torch.nn.utils.parametrizations.orthogonal(tm, orthogonal_map=omap, use_trivialization=triv)
    nn.utils.parametrizations.orthogonal(em, orthogonal_map=omap, use_trivialization=triv)
    same_keys(em, tm)
    # the initial weight is the orthogonal factor of w0 (or the map of w0 without trivialization)
    close(em.weight, tm.weight, atol=1e-10)
    load_from_torch(em, tm)
    r = torch.randn(shape, dtype=torch.float64)
    (tm.weight * r).sum().backward()
    (em.weight * t2e(r)).sum().backward()
    close(em.parametrizations.weight.original.grad, tm.parametrizations.weight.original.grad, atol=1e-10)
    w = e2n(em.weight)
    g = np.swapaxes(w, -1, -2) @ w if shape[-2] >= shape[-1] else w @ np.swapaxes(w, -1, -2)
    np.testing.assert_allclose(g, np.broadcast_to(np.eye(g.shape[-1]), g.shape), atol=1e-10)
    if triv or omap == "householder":
        # assigning an orthogonal matrix makes it the weight
        q = torch.linalg.qr(torch.randn(shape[:-2] + (max(shape[-2:]),) * 2, dtype=torch.float64))[0]
        q = q[..., :shape[-2], :shape[-1]]
        em.weight = t2e(q)
        close(em.weight, q, atol=1e-10)
    else:
        with pytest.raises(NotImplementedError, match="not possible to assign"):
            em.weight = em.weight.detach()


def test_orthogonal_helpers_gradcheck_and_errors(torch):
    from ember.nn.utils.parametrizations import _householder_product, _matrix_exp
    a = torch.randn(2, 4, 4, dtype=torch.float64) * 2
    close(_matrix_exp(t2e(a)), torch.matrix_exp(a), rtol=1e-10, atol=1e-12)
    close(_matrix_exp(t2e(a * 40)), torch.matrix_exp(a * 40), rtol=1e-8)
    x, tau = torch.randn(5, 3, dtype=torch.float64), torch.rand(3, dtype=torch.float64)
    close(_householder_product(t2e(x), t2e(tau)), torch.linalg.householder_product(x, tau), rtol=1e-10)
    ae = t2e(a[0] * 0.5).requires_grad_(True)
    assert ember.autograd.gradcheck(_matrix_exp, (ae,))
    assert ember.autograd.gradgradcheck(_matrix_exp, (ae,))
    xe, te = t2e(x).requires_grad_(True), t2e(tau).requires_grad_(True)
    assert ember.autograd.gradcheck(_householder_product, (xe, te))
    assert ember.autograd.gradgradcheck(_householder_product, (xe, te))
    with pytest.raises(ValueError, match="Expected a matrix or batch of matrices"):
        nn.utils.parametrizations.orthogonal(nn.Linear(3, 3), "bias")
    with pytest.raises(ValueError, match="orthogonal_map has to be one of"):
        nn.utils.parametrizations.orthogonal(nn.Linear(3, 3), orthogonal_map="qr")
    m = nn.utils.parametrizations.orthogonal(nn.Linear(3, 3))
    with pytest.raises(ValueError, match="Expected a matrix or batch of matrices of shape"):
        m.weight = ember.randn(2, 2)


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


def test_checkpoint_non_reentrant_is_an_ordinary_graph_node():
    lin = nn.Linear(3, 3).double()
    x = ember.randn(2, 3, dtype=ember.float64, requires_grad=True)
    y = checkpoint(lambda a: lin(a).tanh(), x, use_reentrant=False)
    (gx,) = ember.autograd.grad(y.sum(), x)
    # autograd.grad w.r.t. x leaves the layer's .grad alone
    assert lin.weight.grad is None
    ref = ember.autograd.grad(lin(x).tanh().sum(), x)[0]
    np.testing.assert_allclose(e2n(gx), e2n(ref), rtol=1e-12)
    gw = ember.autograd.grad(checkpoint(lin, x, use_reentrant=False).pow(2).sum(), lin.weight)[0]
    np.testing.assert_allclose(e2n(gw), e2n(ember.autograd.grad(lin(x).pow(2).sum(), lin.weight)[0]), rtol=1e-12)
    # a tensor reached only through a global-free closure the scan cannot see still gets its gradient
    holder = {"w": ember.randn(3, dtype=ember.float64, requires_grad=True)}

    class Opaque:
        def __call__(self, a, get=lambda: holder["w"]):
            return a * get()

    checkpoint(Opaque(), x, use_reentrant=False).sum().backward()
    np.testing.assert_allclose(e2n(holder["w"].grad), e2n(x).sum(0), rtol=1e-12)


def test_checkpoint_non_reentrant_gradgradcheck():
    w = ember.randn(3, 3, dtype=ember.float64, requires_grad=True)

    def seg(a):
        return (a @ w).tanh() * a.sin()

    a = ember.randn(2, 3, dtype=ember.float64, requires_grad=True)
    assert ember.autograd.gradgradcheck(lambda t, u: checkpoint(lambda z: (z @ u).tanh() * z.sin(), t,
                                                                use_reentrant=False), (a, w))
    assert ember.autograd.gradcheck(lambda t: checkpoint(seg, t, use_reentrant=False), (a,))


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


# ---------------------------------------------------------------- layers and functionals

def test_fold_unfold_modules(torch):
    x = torch.randn(2, 3, 7, 8)
    tu, eu = torch.nn.Unfold((2, 3), dilation=(1, 2), padding=1, stride=(2, 1)), \
        nn.Unfold((2, 3), dilation=(1, 2), padding=1, stride=(2, 1))
    cols = tu(x)
    close(eu(t2e(x)), cols)
    tf, ef = torch.nn.Fold((7, 8), (2, 3), dilation=(1, 2), padding=1, stride=(2, 1)), \
        nn.Fold((7, 8), (2, 3), dilation=(1, 2), padding=1, stride=(2, 1))
    close(ef(t2e(cols)), tf(cols))
    assert repr(ef) == repr(tf) and repr(eu) == repr(tu)


@pytest.mark.parametrize("n", [1, 2, 3])
def test_lp_pool(torch, n):
    shape = (2, 3) + (7, 6, 5)[:n]
    x = torch.rand(shape, dtype=torch.float64) + 0.1
    for p, k, s, ceil in ((2, 2, None, False), (3.0, 3, 2, True), (1.5, 2, 1, False)):
        tm = getattr(torch.nn, f"LPPool{n}d")(p, k, s, ceil)
        em = getattr(nn, f"LPPool{n}d")(p, k, s, ceil)
        assert repr(em) == repr(tm)
        xe = t2e(x).requires_grad_(True)
        xt = x.clone().requires_grad_(True)
        ye, yt = em(xe), tm(xt)
        close(ye, yt, rtol=1e-10)
        ye.sum().backward()
        yt.sum().backward()
        close(xe.grad, xt.grad, rtol=1e-8)
    xe = t2e(x[:1, :1]).requires_grad_(True)
    fn = getattr(F, f"lp_pool{n}d")
    assert ember.autograd.gradcheck(lambda a: fn(a, 2.0, 2), (xe,))
    assert ember.autograd.gradgradcheck(lambda a: fn(a, 3.0, 2, 1), (xe,))


@pytest.mark.parametrize("n", [1, 2, 3])
def test_max_unpool(torch, n):
    shape = (2, 3) + (8, 6, 4)[:n]
    x = torch.randn(shape, dtype=torch.float64)
    pool = getattr(torch.nn.functional, f"max_pool{n}d")
    y, idx = pool(x, 2, 2, return_indices=True)
    tm, em = getattr(torch.nn, f"MaxUnpool{n}d")(2, 2), getattr(nn, f"MaxUnpool{n}d")(2, 2)
    assert repr(em) == repr(tm)
    close(em(t2e(y), t2e(idx)), tm(y, idx))
    close(em(t2e(y), t2e(idx), output_size=shape), tm(y, idx, output_size=shape))
    ye = t2e(y).requires_grad_(True)
    fn = getattr(F, f"max_unpool{n}d")
    assert ember.autograd.gradcheck(lambda a: fn(a, t2e(idx), 2), (ye,))
    assert ember.autograd.gradgradcheck(lambda a: fn(a, t2e(idx), 2), (ye,))


def test_adaptive_max_pool3d(torch):
    x = torch.randn(2, 3, 5, 7, 6, dtype=torch.float64)
    for size in ((2, 3, 4), 3, (None, 2, 5)):
        v, i = torch.nn.functional.adaptive_max_pool3d(x, size, return_indices=True)
        ve, ie = F.adaptive_max_pool3d_with_indices(t2e(x), size)
        close(ve, v)
        np.testing.assert_array_equal(e2n(ie), i.numpy())
    close(nn.AdaptiveMaxPool3d((2, 2, 2))(t2e(x[0])), torch.nn.AdaptiveMaxPool3d((2, 2, 2))(x[0]))
    xe = t2e(x[:1, :2]).requires_grad_(True)
    assert ember.autograd.gradcheck(lambda a: F.adaptive_max_pool3d(a, (2, 3, 2)), (xe,))
    assert ember.autograd.gradgradcheck(lambda a: F.adaptive_max_pool3d(a, (2, 3, 2)), (xe,))


@pytest.mark.parametrize("n", [2, 3])
def test_fractional_max_pool_matches_torch(torch, n):
    torch.manual_seed(0)
    shape = (2, 3) + (11, 9, 8)[:n]
    x = torch.randn(shape, dtype=torch.float64)
    samples = torch.rand(2, 3, n, dtype=torch.float64)
    tf = getattr(torch.nn.functional, f"fractional_max_pool{n}d")
    ef = getattr(F, f"fractional_max_pool{n}d")
    for kw in (dict(kernel_size=2, output_size=(5, 4, 3)[:n]), dict(kernel_size=3, output_ratio=(0.5,) * n),
               dict(kernel_size=(2, 3, 2)[:n], output_size=1),
               dict(kernel_size=1, output_size=(11, 9) if n == 2 else (10, 8, 7))):
        vt, it = tf(x, return_indices=True, _random_samples=samples, **kw)
        ve, ie = ef(t2e(x), return_indices=True, _random_samples=t2e(samples), **kw)
        close(ve, vt, rtol=0, atol=0)
        np.testing.assert_array_equal(e2n(ie), it.numpy())
    # unbatched input, module form (the samples are a buffer, as torch registers them)
    cls_t, cls_e = getattr(torch.nn, f"FractionalMaxPool{n}d"), getattr(nn, f"FractionalMaxPool{n}d")
    mt = cls_t(2, output_ratio=0.6, return_indices=True, _random_samples=samples[:1])
    me = cls_e(2, output_ratio=0.6, return_indices=True, _random_samples=t2e(samples[:1]))
    same_keys(me, mt)
    (vt, it), (ve, ie) = mt(x[0]), me(t2e(x[0]))
    close(ve, vt, atol=0, rtol=0)
    np.testing.assert_array_equal(e2n(ie), it.numpy())
    xe = t2e(x[:1, :2]).requires_grad_(True)
    s = t2e(samples[:1, :2])
    assert ember.autograd.gradcheck(lambda a: ef(a, 2, output_size=(4, 3, 3)[:n], _random_samples=s), (xe,))
    assert ember.autograd.gradgradcheck(lambda a: ef(a, 2, output_size=(4, 3, 3)[:n], _random_samples=s), (xe,))


def test_fractional_max_pool_random_and_errors():
    x = ember.randn(2, 3, 10, 10)
    v, idx = F.fractional_max_pool2d(x, 3, output_size=5, return_indices=True)
    assert v.shape == (2, 3, 5, 5) and idx.dtype == ember.int64
    flat = e2n(x).reshape(2, 3, -1)
    np.testing.assert_array_equal(np.take_along_axis(flat, e2n(idx).reshape(2, 3, -1), 2), e2n(v).reshape(2, 3, -1))
    with pytest.raises(ValueError, match="requires specifying either"):
        F.fractional_max_pool2d(x, 2)
    with pytest.raises(ValueError, match="requires specifying either an output size, or a pooling ratio"):
        nn.FractionalMaxPool2d(2)
    with pytest.raises(ValueError, match="only one of output_size and output_ratio"):
        nn.FractionalMaxPool3d(2, output_size=3, output_ratio=0.5)
    with pytest.raises(ValueError, match="output_ratio must be between 0 and 1"):
        nn.FractionalMaxPool2d(2, output_ratio=1.5)
    with pytest.raises(RuntimeError, match="too large"):
        F.fractional_max_pool2d(x, 4, output_size=8)
    with pytest.raises(RuntimeError, match="too large"):
        F.fractional_max_pool3d(ember.randn(1, 1, 5, 5, 5), 1, output_size=5)


def test_adaptive_log_softmax_with_loss(torch):
    torch.manual_seed(0)
    kw = dict(div_value=2.0, head_bias=True)
    tm = torch.nn.AdaptiveLogSoftmaxWithLoss(16, 20, [4, 10, 15], **kw).double()
    em = nn.AdaptiveLogSoftmaxWithLoss(16, 20, [4, 10, 15], **kw).double()
    same_keys(em, tm)
    load_from_torch(em, tm)
    x = torch.randn(9, 16, dtype=torch.float64)
    t = torch.tensor([0, 5, 19, 12, 3, 11, 9, 15, 4])
    a, b = tm(x, t), em(t2e(x), t2e(t))
    assert type(b).__name__ == "_ASMoutput" and b._fields == ("output", "loss")
    close(b.output, a.output, rtol=1e-10)
    close(b.loss, a.loss, rtol=1e-10)
    a.loss.backward()
    b.loss.backward()
    for p, q in zip(em.parameters(), tm.parameters()):
        close(p.grad, q.grad, rtol=1e-8, atol=1e-12)
    close(em.log_prob(t2e(x)), tm.log_prob(x), rtol=1e-10)
    np.testing.assert_array_equal(e2n(em.predict(t2e(x))), tm.predict(x).numpy())
    close(em(t2e(x[0]), t2e(t[0])).output, tm(x[0], t[0]).output, rtol=1e-10)
    close(em.log_prob(t2e(x[0])), tm.log_prob(x[:1])[0], rtol=1e-10)
    # predict: rows whose head argmax is a cluster go through the tails
    with torch.no_grad():
        tm.head.bias[4:] += 10
    load_from_torch(em, tm)
    np.testing.assert_array_equal(e2n(em.predict(t2e(x))), tm.predict(x).numpy())
    xe = t2e(x[:4]).requires_grad_(True)
    assert ember.autograd.gradcheck(lambda a: em(a, t2e(t[:4])).output, (xe,))
    assert ember.autograd.gradgradcheck(lambda a: em(a, t2e(t[:4])).output, (xe,))
    assert ember.autograd.gradcheck(em.log_prob, (xe,))
    with pytest.raises(ValueError, match="cutoffs should be a sequence"):
        nn.AdaptiveLogSoftmaxWithLoss(8, 10, [5, 3])
    with pytest.raises(RuntimeError, match="Target values should be in"):
        em(t2e(x[:2]), ember.tensor([0, 20]))
    with pytest.raises(RuntimeError, match="same size in the batch dimension"):
        em(t2e(x[:2]), ember.tensor([0]))


@pytest.mark.parametrize("name,ctor,shape", [
    ("LazyLinear", (5,), (3, 7)), ("LazyConv1d", (4, 3), (2, 3, 9)), ("LazyConv2d", (4, 3), (2, 3, 6, 6)),
    ("LazyConv3d", (2, 2), (1, 3, 4, 4, 4)), ("LazyConvTranspose1d", (4, 3), (2, 3, 5)),
    ("LazyConvTranspose2d", (4, 3), (2, 3, 4, 4)), ("LazyConvTranspose3d", (2, 2), (1, 3, 3, 3, 3)),
    ("LazyBatchNorm1d", (), (4, 3)), ("LazyBatchNorm2d", (), (2, 3, 4, 4)), ("LazyBatchNorm3d", (), (2, 3, 2, 2, 2)),
    ("LazyInstanceNorm1d", (), (2, 3, 5)), ("LazyInstanceNorm2d", (), (2, 3, 4, 4)),
    ("LazyInstanceNorm3d", (), (2, 3, 2, 2, 2)), ("LazyConv2d", (4, 3), (3, 6, 6)),
])
def test_lazy_modules(torch, name, ctor, shape):
    tm, em = getattr(torch.nn, name)(*ctor), getattr(nn, name)(*ctor)
    assert isinstance(em, LazyModuleMixin)
    assert em.has_uninitialized_params()
    assert isinstance(em.weight, nn.UninitializedParameter)
    assert list(em.state_dict().keys()) == list(tm.state_dict().keys())
    x = torch.randn(shape)
    yt = tm(x)
    ye = em(t2e(x))
    assert type(em) is getattr(nn, name[4:]) and type(tm) is getattr(torch.nn, name[4:])
    assert not isinstance(em, LazyModuleMixin) and not hasattr(em, "_initialize_hook")
    assert repr(em) == repr(tm)
    assert list(em.state_dict().keys()) == list(tm.state_dict().keys())
    for k, v in tm.state_dict().items():
        assert tuple(em.state_dict()[k].shape) == tuple(v.shape), k
    assert type(em.weight) is nn.Parameter
    # with torch's parameters the outputs agree
    em2 = getattr(nn, name)(*ctor)
    em2(t2e(x))
    em2.load_state_dict(OrderedDict((k, t2e(v)) for k, v in tm.state_dict().items()))
    tm.eval()
    em2.eval()
    close(em2(t2e(x)), tm(x), atol=1e-5)
    assert tuple(ye.shape) == tuple(yt.shape)


def test_lazy_load_then_forward(torch):
    tm = torch.nn.Linear(4, 3)
    em = nn.LazyLinear(3)
    em.load_state_dict(OrderedDict((k, t2e(v)) for k, v in tm.state_dict().items()))
    assert type(em) is nn.LazyLinear and not em.has_uninitialized_params()
    x = torch.randn(2, 4)
    close(em(t2e(x)), tm(x))
    assert type(em) is nn.Linear and em.in_features == 4


def test_lazy_state_dicts_between_lazy_modules():
    import copy
    a, b = nn.LazyLinear(3), nn.LazyLinear(3)
    assert str(b.load_state_dict(a.state_dict())) == "<All keys matched successfully>"
    assert isinstance(b.weight, nn.UninitializedParameter)
    c = copy.deepcopy(a)
    assert type(c) is nn.LazyLinear and isinstance(c.weight, nn.UninitializedParameter)
    c(ember.randn(2, 4))
    assert type(c) is nn.Linear and type(a) is nn.LazyLinear
    with pytest.raises(RuntimeError, match="shape of an uninitialized parameter"):
        c.load_state_dict(a.state_dict())


def test_lazy_errors_and_dtype():
    m = nn.LazyLinear(3)
    with pytest.raises(ValueError, match="uninitialized parameter"):
        m.weight + 1
    with pytest.raises(RuntimeError, match="shape of an uninitialized parameter"):
        m.weight.shape
    m = nn.LazyLinear(3, bias=False).double()
    m(ember.randn(2, 4, dtype=ember.float64))
    assert m.weight.dtype == ember.float64 and m.bias is None and m.weight.shape == (3, 4)
    with pytest.raises(ValueError, match="in_channels must be divisible by groups"):
        nn.LazyConv2d(4, 3, groups=2)(ember.randn(1, 3, 5, 5))
    with pytest.raises(RuntimeError, match="Expected 3D \\(unbatched\\) or 4D \\(batched\\) input"):
        nn.LazyConv2d(4, 3)(ember.randn(5, 5))
    b = nn.LazyBatchNorm1d(affine=False)
    assert list(b.state_dict().keys()) == ["running_mean", "running_var", "num_batches_tracked"]
    b(ember.randn(4, 6))
    assert b.running_mean.shape == (6,) and type(b) is nn.BatchNorm1d


def test_gumbel_softmax():
    logits = ember.tensor([[1.0, 2.0, 0.5, -1.0]] * 4000)
    y = F.gumbel_softmax(logits, tau=0.5)
    np.testing.assert_allclose(e2n(y.sum(-1)), 1, rtol=1e-5)
    h = F.gumbel_softmax(logits, hard=True)
    assert set(np.unique(e2n(h))) <= {0.0, 1.0} and (e2n(h).sum(-1) == 1).all()
    # the argmax of logits + Gumbel noise is a sample of softmax(logits)
    freq = e2n(h).mean(0)
    p = np.exp([1.0, 2.0, 0.5, -1.0])
    np.testing.assert_allclose(freq, p / p.sum(), atol=0.03)
    # straight-through: the hard sample's gradient is the soft sample's (same noise)
    w = ember.randn(3, 5)
    lg = ember.randn(3, 5, requires_grad=True)
    ember.manual_seed(7)
    (F.gumbel_softmax(lg, tau=0.7, dim=1) * w).sum().backward()
    g_soft = e2n(lg.grad).copy()
    lg.grad = None
    ember.manual_seed(7)
    soft = F.gumbel_softmax(lg.detach(), tau=0.7, dim=1)
    ember.manual_seed(7)
    hard = F.gumbel_softmax(lg, tau=0.7, hard=True, dim=1)
    (hard * w).sum().backward()
    np.testing.assert_allclose(e2n(lg.grad), g_soft, rtol=1e-5, atol=1e-7)
    np.testing.assert_array_equal(e2n(hard).argmax(1), e2n(soft).argmax(1))
    with pytest.warns(UserWarning, match="`eps` parameter is deprecated"):
        F.gumbel_softmax(lg, eps=1e-5)
    x = ember.randn(2, 4, dtype=ember.float64, requires_grad=True)

    def fixed_noise(a, hard=False):
        ember.manual_seed(3)
        return F.gumbel_softmax(a, tau=0.8, hard=hard)

    assert ember.autograd.gradcheck(fixed_noise, (x,))
    assert ember.autograd.gradgradcheck(fixed_noise, (x,))


def test_pdist(torch):
    x = torch.randn(6, 4, dtype=torch.float64)
    for p in (2, 1, 0, 0.5, 3, float("inf")):
        close(F.pdist(t2e(x), p), torch.nn.functional.pdist(x, p), rtol=1e-10)
    assert F.pdist(ember.randn(1, 3)).shape == (0,)
    xe = t2e(x).requires_grad_(True)
    for p in (2, 1.5):
        assert ember.autograd.gradcheck(lambda a: F.pdist(a, p), (xe,))
        assert ember.autograd.gradgradcheck(lambda a: F.pdist(a, p), (xe,))
    with pytest.raises(RuntimeError, match="pdist only supports 2D tensors"):
        F.pdist(ember.randn(2, 2, 2))
    with pytest.raises(RuntimeError, match="non-negative p"):
        F.pdist(ember.randn(3, 2), -1)


def test_multilabel_margin_loss(torch):
    x = torch.randn(4, 5, dtype=torch.float64)
    y = torch.tensor([[3, 0, -1, 1, 2], [1, 2, 3, 4, 0], [-1, 1, 1, 1, 1], [4, 4, 2, -1, 0]])
    for r in ("none", "mean", "sum"):
        xe, xt = t2e(x).requires_grad_(True), x.clone().requires_grad_(True)
        le, lt = F.multilabel_margin_loss(xe, t2e(y), reduction=r), \
            torch.nn.functional.multilabel_margin_loss(xt, y, reduction=r)
        close(le, lt, rtol=1e-10)
        le.sum().backward()
        lt.sum().backward()
        close(xe.grad, xt.grad, rtol=1e-10)
    close(F.multilabel_margin_loss(t2e(x[0]), t2e(y[0])), torch.nn.functional.multilabel_margin_loss(x[0], y[0]))
    close(nn.MultiLabelMarginLoss()(t2e(x), t2e(y)), torch.nn.MultiLabelMarginLoss()(x, y))
    xe = t2e(x).requires_grad_(True)
    assert ember.autograd.gradcheck(lambda a: F.multilabel_margin_loss(a, t2e(y)), (xe,))
    assert ember.autograd.gradgradcheck(lambda a: F.multilabel_margin_loss(a, t2e(y)), (xe,))


def test_conv_tbc_and_channel_shuffle(torch):
    x, w, b = torch.randn(7, 2, 3, dtype=torch.float64), torch.randn(3, 3, 4, dtype=torch.float64), \
        torch.randn(4, dtype=torch.float64)
    for pad in (0, 1, 2):
        close(F.conv_tbc(t2e(x), t2e(w), t2e(b), pad), torch.conv_tbc(x, w, b, pad), rtol=1e-10)
    args = tuple(t2e(t).requires_grad_(True) for t in (x, w, b))
    assert ember.autograd.gradcheck(lambda a, c, d: F.conv_tbc(a, c, d, 1), args)
    assert ember.autograd.gradgradcheck(lambda a, c, d: F.conv_tbc(a, c, d, 1), args)
    z = torch.randn(2, 6, 3)
    close(F.native_channel_shuffle(t2e(z), 3), torch.nn.functional.native_channel_shuffle(z, 3))
    ze = t2e(z.double()).requires_grad_(True)
    assert ember.autograd.gradcheck(lambda a: F.native_channel_shuffle(a, 2), (ze,))


@pytest.mark.parametrize("out_features", [(), (4,), (2, 3)])
@pytest.mark.parametrize("kind", ["index", "prob"])
def test_linear_cross_entropy(torch, out_features, kind):
    torch.manual_seed(0)
    C, N, IN = 5, 6, 7
    x = torch.randn(N, IN, dtype=torch.float64)
    w = torch.randn(C, *out_features, IN, dtype=torch.float64)
    b = torch.randn(C, *out_features, dtype=torch.float64)
    cw = torch.rand(C, dtype=torch.float64)
    if kind == "index":
        t = torch.randint(0, C, (N, *out_features))
        t.view(-1)[0] = -100
    else:
        t = torch.randn(N, C, *out_features, dtype=torch.float64).softmax(1)
    for kw in (dict(), dict(weight=cw, reduction="sum"), dict(reduction="none", label_smoothing=0.2),
               dict(linear_bias=b)):
        kt = dict(kw)
        ke = {k: (t2e(v) if hasattr(v, "numpy") else v) for k, v in kw.items()}
        xe, we = t2e(x).requires_grad_(True), t2e(w).requires_grad_(True)
        xt, wt = x.clone().requires_grad_(True), w.clone().requires_grad_(True)
        le = F.linear_cross_entropy(xe, we, t2e(t), **ke)
        lt = torch.nn.functional.linear_cross_entropy(xt, wt, t, **kt)
        close(le, lt, rtol=1e-10)
        le.sum().backward()
        lt.sum().backward()
        close(xe.grad, xt.grad, rtol=1e-9, atol=1e-12)
        close(we.grad, wt.grad, rtol=1e-9, atol=1e-12)
    if not out_features and kind == "index":
        close(F.linear_cross_entropy(t2e(x[0]), t2e(w), t2e(t[1])),
              torch.nn.functional.linear_cross_entropy(x[0], w, t[1]), rtol=1e-10)
        xe = t2e(x[:2]).requires_grad_(True)
        assert ember.autograd.gradcheck(lambda a: F.linear_cross_entropy(a, t2e(w), t2e(t[:2])), (xe,))
        assert ember.autograd.gradgradcheck(lambda a: F.linear_cross_entropy(a, t2e(w), t2e(t[:2])), (xe,))
    tm = torch.nn.LinearCrossEntropyLoss(IN, C, out_features=out_features, bias=True).double()
    em = nn.LinearCrossEntropyLoss(IN, C, out_features=out_features, bias=True).double()
    same_keys(em, tm)
    load_from_torch(em, tm)
    assert repr(em) == repr(tm)
    close(em(t2e(x), t2e(t)), tm(x, t), rtol=1e-10)


def test_linear_cross_entropy_errors():
    with pytest.raises(RuntimeError, match="expected input with dimensionality 1 or 2"):
        F.linear_cross_entropy(ember.randn(2, 2, 3), ember.randn(4, 3), ember.tensor([0, 1]))
    with pytest.raises(RuntimeError, match="expected equal input and linear_weight last dimensions"):
        F.linear_cross_entropy(ember.randn(2, 3), ember.randn(4, 5), ember.tensor([0, 1]))
    with pytest.raises(RuntimeError, match="requires batched input"):
        F.linear_cross_entropy(ember.randn(3), ember.randn(4, 2, 3), ember.tensor([0, 1]))
    with pytest.raises(RuntimeError, match="ignore_index cannot be specified"):
        F.linear_cross_entropy(ember.randn(2, 3), ember.randn(4, 3), ember.rand(2, 4), ignore_index=1)


def test_checkpoint_early_stop_context():
    from ember.utils.checkpoint import set_checkpoint_early_stop
    x = ember.randn(3, dtype=ember.float64, requires_grad=True)
    with set_checkpoint_early_stop(False):
        y = checkpoint(lambda a: (a.sin(), a.cos()), x, use_reentrant=False)
    (y[0] + y[1]).sum().backward()
    np.testing.assert_allclose(e2n(x.grad), np.cos(e2n(x)) - np.sin(e2n(x)), rtol=1e-12)


# ---------------------------------------------------------------- stateless

def test_functional_call(torch):
    from ember.nn.utils.stateless import functional_call
    m = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4))
    x = ember.randn(5, 3)
    w = ember.randn(4, 3, requires_grad=True)
    rm = ember.full((4,), 2.0)
    with pytest.warns(FutureWarning, match="deprecated"):
        y = functional_call(m, {"0.weight": w, "1.running_mean": rm}, x)
    ref = F.batch_norm(F.linear(x, w, m[0].bias), rm, m[1].running_var, m[1].weight, m[1].bias, True)
    np.testing.assert_allclose(e2n(y), e2n(ref), rtol=1e-5, atol=1e-6)
    assert m[0].weight is not w and isinstance(m[0].weight, nn.Parameter)
    assert m[1].running_mean is not rm
    y.sum().backward()
    assert w.grad is not None and m[0].weight.grad is None
    # tied weights follow the given value; two different values for them are an error
    tied = nn.Module()
    tied.a = nn.Linear(2, 2, bias=False)
    tied.b = nn.Linear(2, 2, bias=False)
    tied.b.weight = tied.a.weight
    tied.forward = lambda z: tied.b(tied.a(z))
    z = ember.randn(1, 2)
    w2 = ember.randn(2, 2)
    with pytest.warns(FutureWarning):
        out = functional_call(tied, {"a.weight": w2}, (z,))
    np.testing.assert_allclose(e2n(out), e2n(z) @ e2n(w2).T @ e2n(w2).T, rtol=1e-5)
    with pytest.warns(FutureWarning), pytest.raises(ValueError, match="which are tied"):
        functional_call(tied, {"a.weight": w2, "b.weight": ember.randn(2, 2)}, (z,))
    lin = nn.Linear(2, 2)
    msg = "Unexpected key\\(s\\): 'foo'.\n\tMissing key\\(s\\): 'bias'"
    with pytest.warns(FutureWarning), pytest.raises(RuntimeError, match=msg):
        functional_call(lin, {"weight": ember.zeros(2, 2), "foo": ember.zeros(1)}, ember.ones(1, 2), strict=True)
    tl = torch.nn.Linear(2, 2)
    load_from_torch(lin, tl)
    with pytest.warns(FutureWarning):
        ye = functional_call(lin, {"weight": ember.zeros(2, 2)}, ember.ones(1, 2), kwargs=None)
    yt = torch.nn.utils.stateless.functional_call(tl, {"weight": torch.zeros(2, 2)}, torch.ones(1, 2))
    close(ye, yt)
