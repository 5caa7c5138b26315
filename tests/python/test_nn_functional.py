"""ember.nn.functional against torch.nn.functional: values, dtypes, shapes and gradients on the same
random inputs (float32 and float64), reductions, weights, ignore_index, edge cases and error types;
plus ember.autograd.gradcheck / gradgradcheck in float64 for every differentiable function.

The parity tests need torch (skipped without it); the gradchecks and behavioural tests do not."""
import warnings

import numpy as np
import pytest

import ember
import ember.nn.functional as F
from ember.autograd import gradcheck, gradgradcheck

try:
    import torch
    import torch.nn.functional as TF
except ImportError:  # pragma: no cover
    torch = TF = None

needs_torch = pytest.mark.skipif(torch is None, reason="the parity tests compare with torch")
pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")

DTYPES = ["float32", "float64"]
TOL = {"float32": dict(rtol=3e-5, atol=3e-6), "float64": dict(rtol=1e-9, atol=1e-11)}


# ---------------------------------------------------------------- helpers

def rng(seed=0):
    return np.random.default_rng(seed)


def E(a, requires_grad=False):
    t = ember.from_numpy(np.array(a, copy=True, order="C"))
    return t.requires_grad_() if requires_grad else t


def T(a, requires_grad=False):
    t = torch.from_numpy(np.array(a, copy=True, order="C"))
    return t.requires_grad_() if requires_grad else t


def npy(t):
    if isinstance(t, ember.Tensor):
        return t.detach().numpy()
    return t.detach().numpy()


def assert_same(e, t, rtol, atol, what="output"):
    assert isinstance(e, ember.Tensor), f"{what}: expected a tensor, got {type(e)}"
    assert tuple(e.shape) == tuple(t.shape), f"{what}: shape {tuple(e.shape)} != torch {tuple(t.shape)}"
    assert str(e.dtype).split(".")[-1] == str(t.dtype).split(".")[-1], f"{what}: dtype {e.dtype} != {t.dtype}"
    np.testing.assert_allclose(npy(e), npy(t), rtol=rtol, atol=atol, equal_nan=True, err_msg=what)


def convert(v, lib, grad_keys, key):
    if isinstance(v, np.ndarray):
        return (E if lib == "e" else T)(v, requires_grad=key in grad_keys)
    if isinstance(v, (list, tuple)) and v and all(isinstance(x, np.ndarray) for x in v):
        return type(v)(convert(x, lib, (), None) for x in v)
    return v


def parity(name, args, kwargs=None, grad=(), dtype="float64", tol=None, efn=None, tfn=None, gtol=None):
    """Run F.<name> and TF.<name> on the same numpy inputs; compare outputs and, for the inputs
    named in `grad` (positions or kwarg names), the gradients of sum(out * random)."""
    kwargs = kwargs or {}
    tol = tol or TOL[dtype]
    gtol = gtol or {k: v * 10 for k, v in tol.items()}
    efn = efn or getattr(F, name)
    tfn = tfn or getattr(TF, name)
    e_args = [convert(a, "e", grad, i) for i, a in enumerate(args)]
    t_args = [convert(a, "t", grad, i) for i, a in enumerate(args)]
    e_kw = {k: convert(v, "e", grad, k) for k, v in kwargs.items()}
    t_kw = {k: convert(v, "t", grad, k) for k, v in kwargs.items()}
    eo, to = efn(*e_args, **e_kw), tfn(*t_args, **t_kw)
    assert_same(eo, to, what=f"{name} output", **tol)
    if grad:
        go = rng(99).standard_normal(tuple(to.shape)).astype(npy(to).dtype)
        (eo * E(go)).sum().backward()
        (to * T(go)).sum().backward()
        for k in grad:
            ea, ta = (e_args[k], t_args[k]) if isinstance(k, int) else (e_kw[k], t_kw[k])
            if ta.grad is None:
                assert ea.grad is None or not np.any(npy(ea.grad)), f"{name}: grad of {k} should be None"
                continue
            assert ea.grad is not None, f"{name}: no gradient for {k}"
            assert_same(ea.grad, ta.grad, what=f"{name} grad of {k}", **gtol)
    return eo, to


def randn(shape, dtype="float64", seed=0, scale=1.0):
    return (rng(seed).standard_normal(shape) * scale).astype(dtype)


def uniform(shape, lo, hi, dtype="float64", seed=0):
    return rng(seed).uniform(lo, hi, shape).astype(dtype)


def check_grads(fn, *inputs, gg=True, **kw):
    """gradcheck (and gradgradcheck) in float64."""
    assert gradcheck(fn, inputs, **kw)
    if gg:
        assert gradgradcheck(fn, inputs, **kw)


def G(a):
    return E(np.asarray(a, dtype="float64"), requires_grad=True)


# ---------------------------------------------------------------- activations

KINKS = [0.0, -3.0, 3.0, 6.0, 0.5, -0.5, 1.0, -1.0, 0.3, 20.0, -20.0, 100.0, -100.0, 2.5, -2.0, 5.0]


def activation_input(dtype, seed=0):
    x = randn((4, 6), dtype, seed, scale=3.0)
    x.reshape(-1)[: len(KINKS)] = KINKS
    return x


ACTIVATIONS = [
    ("relu", {}), ("relu6", {}), ("leaky_relu", {}), ("leaky_relu", {"negative_slope": 0.2}),
    ("leaky_relu", {"negative_slope": -0.5}), ("elu", {}), ("elu", {"alpha": 0.5}), ("selu", {}), ("celu", {}),
    ("celu", {"alpha": 2.0}), ("gelu", {}), ("gelu", {"approximate": "tanh"}), ("silu", {}), ("mish", {}),
    ("hardtanh", {}), ("hardtanh", {"min_val": -2.0, "max_val": 0.5}), ("hardsigmoid", {}), ("hardswish", {}),
    ("softplus", {}), ("softplus", {"beta": 2, "threshold": 5}), ("softsign", {}), ("softshrink", {}),
    ("softshrink", {"lambd": 1.0}), ("hardshrink", {}), ("hardshrink", {"lambd": 1.0}), ("tanhshrink", {}),
    ("threshold", {"threshold": 0.3, "value": -2.0}), ("logsigmoid", {}), ("glu", {}), ("glu", {"dim": 0}),
    ("rrelu", {}), ("rrelu", {"lower": 0.1, "upper": 0.5}), ("sigmoid", {}), ("tanh", {}),
]


@needs_torch
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name,kwargs", ACTIVATIONS, ids=[f"{n}-{i}" for i, (n, _) in enumerate(ACTIVATIONS)])
def test_activation_parity(name, kwargs, dtype):
    x = activation_input(dtype)
    # torch's hardsigmoid backward multiplies by the float constant 1.0f / 6 even in double
    gtol = dict(rtol=1e-7, atol=1e-9) if (name, dtype) == ("hardsigmoid", "float64") else None
    parity(name, [x], kwargs, grad=(0,), dtype=dtype, gtol=gtol)


INPLACE = ["relu", "relu6", "leaky_relu", "elu", "selu", "celu", "silu", "mish", "hardtanh", "hardsigmoid",
           "hardswish", "threshold", "rrelu"]


@needs_torch
@pytest.mark.parametrize("name", INPLACE)
def test_activation_inplace(name):
    x = activation_input("float64", seed=1)
    kw = {"threshold": 0.3, "value": -2.0} if name == "threshold" else {}
    ex, tx = E(x), T(x)
    er = getattr(F, name)(ex, inplace=True, **kw)
    tr = getattr(TF, name)(tx, inplace=True, **kw)
    assert er is ex
    assert_same(ex, tx, **TOL["float64"])
    # through a non-leaf: the gradient reaches the leaf
    el, tl = E(x, True), T(x, True)
    ey, ty = el * 1.0, tl * 1.0
    getattr(F, name)(ey, inplace=True, **kw)
    getattr(TF, name)(ty, inplace=True, **kw)
    go = randn(x.shape, seed=5)
    (ey * E(go)).sum().backward()
    (ty * T(go)).sum().backward()
    # torch's hardsigmoid backward multiplies by the float constant 1.0f / 6 even in double
    tol = dict(rtol=1e-7, atol=1e-9) if name in ("hardsigmoid", "hardswish") else TOL["float64"]
    assert_same(el.grad, tl.grad, **tol)
    del tr


def test_inplace_functions_and_namespaces():
    # where PyTorch puts each name
    for n in ["selu", "selu_", "celu", "celu_", "threshold", "threshold_", "rrelu", "rrelu_", "prelu",
              "hardshrink", "dropout", "dropout_", "alpha_dropout", "feature_alpha_dropout", "feature_dropout",
              "embedding", "embedding_bag", "group_norm", "instance_norm", "rms_norm", "kl_div",
              "binary_cross_entropy_with_logits", "cosine_similarity", "pairwise_distance", "ctc_loss",
              "margin_ranking_loss", "hinge_embedding_loss", "cosine_embedding_loss", "triplet_margin_loss",
              "poisson_nll_loss", "embedding_renorm_"]:
        assert hasattr(ember, n), n
    for n in ["relu6", "leaky_relu", "elu", "gelu", "silu", "mish", "hardtanh", "softplus", "softshrink", "glu",
              "log_sigmoid", "one_hot", "nll_loss", "mse_loss", "l1_loss", "cross_entropy_loss", "hardswish"]:
        assert not hasattr(ember, n), n
        assert hasattr(ember._C._nn, n), n
    assert hasattr(ember.Tensor, "hardshrink") and hasattr(ember.Tensor, "prelu")
    assert not hasattr(ember.Tensor, "selu")
    x = ember.randn(5)
    assert ember.selu_(x) is x and ember.threshold_(x, 0.0, 1.0) is x
    assert ember._C._nn.relu6_(x) is x and F.hardtanh_(x) is x and F.leaky_relu_(x) is x


def test_activation_errors():
    li = ember.ones(3, dtype=ember.int64)
    for f in [F.elu, F.leaky_relu, F.gelu, F.silu, F.mish, F.softplus, F.hardsigmoid, F.hardswish, F.logsigmoid,
              F.selu, F.rrelu]:
        with pytest.raises(NotImplementedError):
            f(li)
    assert F.hardtanh(li).dtype is ember.int64 and F.relu6(li).dtype is ember.int64
    assert F.threshold(ember.arange(5), 2, 10).tolist() == [10, 10, 10, 3, 4]
    assert F.softsign(li).dtype is ember.float32
    with pytest.raises(RuntimeError, match="approximate argument must be either none or tanh"):
        F.gelu(ember.ones(3), approximate="foo")
    with pytest.raises(RuntimeError, match="Halving dimension must be even"):
        F.glu(ember.ones(3, 5))
    with pytest.raises(RuntimeError, match="glu does not support scalars"):
        F.glu(ember.tensor(1.0))
    with pytest.raises(RuntimeError, match="alpha cannot be 0 for CELU"):
        F.celu(ember.ones(3), alpha=0.0)
    with pytest.raises(RuntimeError, match="lambda must be in range"):
        F.softshrink(ember.ones(3), -1.0)
    with pytest.raises(ValueError, match="min_val cannot be greater than max_val"):
        F.hardtanh(ember.ones(3), 2.0, 1.0)
    with pytest.raises(RuntimeError, match="Lower bound should be less than or equal to the upper bound"):
        F.rrelu(ember.ones(3), 0.5, 0.1, training=True)
    with pytest.raises(RuntimeError, match="Mismatch of parameter numbers and input channel size"):
        F.prelu(ember.randn(2, 4), ember.randn(3))
    with pytest.raises(RuntimeError, match="Expected `weight` to be a scalar or 1D tensor"):
        F.prelu(ember.randn(2, 4), ember.randn(4, 1))
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        F.elu(ember.randn(3, requires_grad=True), inplace=True)


@needs_torch
@pytest.mark.parametrize("dtype", DTYPES)
def test_prelu_parity(dtype):
    x = activation_input(dtype).reshape(2, 3, 4)
    parity("prelu", [x, uniform((3,), -0.5, 0.5, dtype)], grad=(0, 1), dtype=dtype)
    parity("prelu", [x, np.array([0.25], dtype)], grad=(0, 1), dtype=dtype)
    parity("prelu", [x, np.array(0.25, dtype)], grad=(0, 1), dtype=dtype)
    parity("prelu", [randn((5,), dtype), np.array([0.1], dtype)], grad=(0, 1), dtype=dtype)
    parity("prelu", [np.array(-1.5, dtype), np.array([0.1], dtype)], grad=(0, 1), dtype=dtype)


def test_rrelu_training():
    ember.manual_seed(0)
    x = ember.randn(2000, dtype=ember.float64)
    y = F.rrelu(x, 0.1, 0.3, training=True)
    neg = x < 0
    slopes = (y[neg] / x[neg])
    assert float(slopes.min()) >= 0.1 and float(slopes.max()) <= 0.3
    assert abs(float(slopes.mean()) - 0.2) < 0.01
    assert ember.equal(y[~neg], x[~neg]) if hasattr(ember, "equal") else bool((y[~neg] == x[~neg]).all())
    ember.manual_seed(0)
    x2 = ember.randn(2000, dtype=ember.float64)
    assert bool((F.rrelu(x2, 0.1, 0.3, training=True) == y).all())
    # the gradient is the sampled slope
    xg = x.clone().requires_grad_()
    ember.manual_seed(1)
    yg = F.rrelu(xg, 0.1, 0.3, training=True)
    yg.sum().backward()
    assert bool(((xg.grad * x - yg.detach()).abs() < 1e-12).all())
    # in place, in training
    z = x.clone()
    assert F.rrelu(z, training=True, inplace=True) is z and bool((z[~neg] == x[~neg]).all())


@pytest.mark.parametrize("name,kwargs", [(n, k) for n, k in ACTIVATIONS if n != "rrelu"])
def test_activation_gradcheck(name, kwargs):
    # away from the kinks, where the finite differences are meaningful
    x = randn((2, 4), seed=3, scale=2.0)
    x = np.where(np.abs(x) < 0.1, 0.7, x)
    for kink in (0.3, 0.5, 1.0, -1.0, 3.0, -3.0, 2.5):
        x = np.where(np.abs(x - kink) < 0.05, x + 0.2, x)
    check_grads(lambda t: getattr(F, name)(t, **kwargs), G(x))


def test_prelu_rrelu_gradcheck():
    x = np.array([[-1.3, 0.4, 2.0], [0.7, -0.2, -2.5]])
    check_grads(F.prelu, G(x), G([0.2, -0.3, 0.5]))
    check_grads(lambda t: F.rrelu(t, 0.1, 0.3, training=False), G(x))


def test_activation_forward_ad():
    import ember.autograd.forward_ad as fwAD
    x = ember.randn(6, dtype=ember.float64)
    v = ember.randn(6, dtype=ember.float64)
    for f in [F.elu, F.gelu, F.silu, F.mish, F.softplus, F.hardswish, F.logsigmoid, F.leaky_relu, F.hardtanh,
              F.softshrink, lambda t: F.threshold(t, 0.1, 2.0)]:
        with fwAD.dual_level():
            out = f(fwAD.make_dual(x, v))
            tangent = fwAD.unpack_dual(out).tangent
        xg = x.clone().requires_grad_()
        (g,) = ember.autograd.grad(f(xg).sum(), xg)
        assert bool(((tangent - g * v).abs() < 1e-10).all())


# ---------------------------------------------------------------- normalization

@needs_torch
@pytest.mark.parametrize("dtype", DTYPES)
def test_group_norm_parity(dtype):
    x = randn((2, 6, 5), dtype, 1)
    w, b = randn((6,), dtype, 2), randn((6,), dtype, 3)
    parity("group_norm", [x, 3], grad=(0,), dtype=dtype)
    parity("group_norm", [x, 2, w, b], grad=(0, 2, 3), dtype=dtype)
    parity("group_norm", [randn((3, 4, 2, 3), dtype, 4), 4], {"weight": w[:4], "eps": 1e-3},
           grad=(0, "weight"), dtype=dtype)
    parity("group_norm", [randn((2, 6, 2), dtype, 4), 6], grad=(0,), dtype=dtype)


@needs_torch
@pytest.mark.parametrize("dtype", DTYPES)
def test_instance_norm_parity(dtype):
    x = randn((2, 3, 5), dtype, 1)
    w, b = randn((3,), dtype, 2), randn((3,), dtype, 3)
    parity("instance_norm", [x], grad=(0,), dtype=dtype)
    parity("instance_norm", [randn((2, 3, 4, 4), dtype, 5)], {"weight": w, "bias": b},
           grad=(0, "weight", "bias"), dtype=dtype)
    # running stats: updated in place like torch's
    rm, rv = randn((3,), dtype, 6), uniform((3,), 0.5, 2.0, dtype, 7)
    erm, erv, trm, trv = E(rm), E(rv), T(rm), T(rv)
    eo = F.instance_norm(E(x), erm, erv, momentum=0.3)
    to = TF.instance_norm(T(x), trm, trv, momentum=0.3)
    assert_same(eo, to, **TOL[dtype])
    assert_same(erm, trm, **TOL[dtype])
    assert_same(erv, trv, **TOL[dtype])
    # evaluation with the running stats
    parity("instance_norm", [x], {"running_mean": rm, "running_var": rv, "use_input_stats": False, "weight": w},
           grad=(0, "weight"), dtype=dtype)


@needs_torch
@pytest.mark.parametrize("dtype", DTYPES)
def test_rms_norm_parity(dtype):
    x = randn((3, 4, 5), dtype, 1)
    parity("rms_norm", [x, [5]], grad=(0,), dtype=dtype)
    parity("rms_norm", [x, (4, 5)], {"weight": randn((4, 5), dtype, 2), "eps": 1e-3}, grad=(0, "weight"), dtype=dtype)


@needs_torch
@pytest.mark.parametrize("dtype", DTYPES)
def test_local_response_norm_parity(dtype):
    parity("local_response_norm", [randn((2, 6, 5), dtype, 1), 3], grad=(0,), dtype=dtype)
    parity("local_response_norm", [randn((2, 6, 3, 3), dtype, 2), 2], {"alpha": 0.1, "beta": 0.5, "k": 2.0},
           grad=(0,), dtype=dtype)
    parity("local_response_norm", [randn((1, 4, 2, 2, 2), dtype, 3), 5], grad=(0,), dtype=dtype)


@needs_torch
@pytest.mark.parametrize("dtype", DTYPES)
def test_normalize_parity(dtype):
    x = randn((3, 4), dtype, 1)
    x[1] = 0.0
    for kw in [{}, {"p": 1.0}, {"p": 3.0, "dim": 0}, {"dim": -1, "eps": 0.5}]:
        parity("normalize", [x], kw, grad=(0,), dtype=dtype)
    out = E(np.zeros((3, 4), dtype))
    assert F.normalize(E(x), out=out) is out
    assert_same(out, TF.normalize(T(x)), **TOL[dtype])


def test_normalization_errors():
    with pytest.raises(RuntimeError, match="divisible by num_groups"):
        F.group_norm(ember.randn(2, 6, 3), 4)
    with pytest.raises(RuntimeError, match="Expected at least 2 dimensions"):
        F.group_norm(ember.randn(6), 3)
    with pytest.raises(RuntimeError, match="Expected weight to be a vector of size equal to the number of channels"):
        F.group_norm(ember.randn(2, 6, 3), 3, ember.ones(5))
    with pytest.raises(ValueError, match="Expected more than 1 value per channel"):
        F.group_norm(ember.randn(1, 6), 6)
    with pytest.raises(ValueError, match="Expected more than 1 spatial element"):
        F.instance_norm(ember.randn(2, 3, 1))
    with pytest.raises(RuntimeError, match="Expected running_mean and running_var to be defined"):
        F.instance_norm(ember.randn(2, 3, 4), use_input_stats=False)
    with pytest.raises(RuntimeError, match=r"Given normalized_shape=\[4\], expected input with shape \[\*4\]"):
        F.rms_norm(ember.randn(2, 3), [4])
    with pytest.raises(RuntimeError, match="Expected weight to be of same shape as normalized_shape"):
        F.rms_norm(ember.randn(2, 3), [3], ember.ones(4))
    with pytest.raises(ValueError, match="Expected 3D or higher dimensionality"):
        F.local_response_norm(ember.randn(2, 3), 2)
    with pytest.raises(RuntimeError, match="Expected a floating point"):
        F.normalize(ember.ones(2, 3, dtype=ember.int64))


def test_normalization_gradcheck():
    x = randn((2, 4, 3), seed=1)
    check_grads(lambda t, w, b: F.group_norm(t, 2, w, b), G(x), G([1.0, 2.0, -1.0, 0.5]), G([0.1, 0.2, 0.3, 0.4]))
    check_grads(lambda t, w: F.instance_norm(t, weight=w), G(x[:, :2]), G([1.5, -0.5]))
    check_grads(lambda t, w: F.rms_norm(t, [3], w), G(x), G([1.0, 2.0, 0.5]))
    check_grads(lambda t: F.local_response_norm(t, 3, alpha=0.5, k=1.0), G(x))
    check_grads(lambda t: F.normalize(t, p=2.0, dim=1), G(x))
    check_grads(lambda t: F.normalize(t, p=3.0, dim=-1), G(x))


# ---------------------------------------------------------------- dropout

def test_dropout_behaviour():
    x = ember.randn(100, 50, dtype=ember.float64)
    assert F.dropout(x, 0.3, training=False).equal(x) if hasattr(x, "equal") else True
    assert bool((F.dropout(x, 0.3, training=False) == x).all())
    assert bool((F.dropout(x, 0.0) == x).all())
    assert bool((F.dropout(x, 1.0) == 0).all())
    ember.manual_seed(123)
    y = F.dropout(x, 0.3)
    kept = y != 0
    frac = 1 - float(kept.double().mean())
    assert abs(frac - 0.3) < 0.02
    assert bool(((y[kept] - x[kept] / 0.7).abs() < 1e-12).all())
    ember.manual_seed(123)
    assert bool((F.dropout(x, 0.3) == y).all())  # reproducible
    # gradient: the same mask, scaled
    xg = x.clone().requires_grad_()
    ember.manual_seed(7)
    yg = F.dropout(xg, 0.4)
    yg.sum().backward()
    m = (yg != 0).double() / 0.6
    assert bool(((xg.grad - m).abs() < 1e-12).all())
    # in place
    z = x.clone()
    ember.manual_seed(123)
    assert F.dropout(z, 0.3, inplace=True) is z and bool((z == y).all())
    for p in (-0.1, 1.5):
        for f in (F.dropout, F.alpha_dropout, F.feature_alpha_dropout, F.dropout1d, F.dropout2d, F.dropout3d):
            with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1"):
                f(x, p)
    with pytest.raises(RuntimeError, match="dropout probability"):
        ember.dropout(x, 1.5, True)


def test_feature_dropout_behaviour():
    ember.manual_seed(0)
    x = ember.randn(20, 30, 8, dtype=ember.float64) + 5
    for f, shape in [(F.dropout1d, (20, 30, 8)), (F.dropout2d, (20, 30, 2, 4)), (F.dropout3d, (20, 30, 2, 2, 2))]:
        y = f(x.reshape(shape), 0.5).reshape(20, 30, 8)
        zero_ch = (y == 0).all(2)
        assert bool((zero_ch | (y != 0).all(2)).all())  # whole channels
        assert abs(float(zero_ch.double().mean()) - 0.5) < 0.06
    y = F.dropout1d(x[0], 0.5)  # unbatched (C, L)
    assert tuple(y.shape) == (30, 8)
    with pytest.raises(RuntimeError, match="dropout1d: Expected 2D or 3D input"):
        F.dropout1d(ember.ones(2, 2, 2, 2))
    with pytest.warns(UserWarning, match="dropout2d: Received a 5-D input"):
        F.dropout2d(ember.ones(2, 2, 2, 2, 2))
    with pytest.raises(RuntimeError, match="Feature dropout requires at least 2 dimensions"):
        ember.feature_dropout(ember.ones(3), 0.5, True)
    z = x.clone()
    assert F.dropout2d(z.reshape(20, 30, 2, 4), 0.5, inplace=True) is not None and bool((z == 0).any())


def test_alpha_dropout_behaviour():
    ember.manual_seed(1)
    x = ember.randn(200000, dtype=ember.float64)
    assert bool((F.alpha_dropout(x, 0.2) == x).all())  # training defaults to False
    y = F.alpha_dropout(x, 0.2, training=True)
    assert abs(float(y.mean())) < 0.02 and abs(float(y.std()) - 1) < 0.02
    a = 1 / np.sqrt((1.7580993408473766 ** 2 * 0.2 + 1) * 0.8)
    dropped = float(((y + 1.7580993408473766 * a * 0.8).abs() < 1e-12).double().mean())
    assert abs(dropped - 0.2) < 0.01
    xf = ember.randn(400, 50, 4, dtype=ember.float64)
    yf = F.feature_alpha_dropout(xf, 0.3, training=True)
    same = (yf == yf[:, :, :1]).all(2)
    assert abs(float(same.double().mean()) - 0.3) < 0.03
    z = x.clone()
    assert F.alpha_dropout(z, 0.2, training=True, inplace=True) is z


def test_dropout_gradcheck():
    x = G(randn((3, 4), seed=2))
    for f in (lambda t: F.dropout(t, 0.5), lambda t: F.alpha_dropout(t, 0.5, True),
              lambda t: F.feature_alpha_dropout(t, 0.5, True), lambda t: F.dropout1d(t, 0.5)):
        def seeded(t, f=f):
            ember.manual_seed(3)
            return f(t)
        check_grads(seeded, x)


# ---------------------------------------------------------------- embeddings

@needs_torch
@pytest.mark.parametrize("dtype", DTYPES)
def test_embedding_parity(dtype):
    w = randn((10, 4), dtype, 1)
    idx = np.array([[1, 3, 3, 0], [9, 3, 2, 1]])
    parity("embedding", [idx, w], grad=(1,), dtype=dtype)
    parity("embedding", [idx, w], {"padding_idx": 3}, grad=(1,), dtype=dtype)
    parity("embedding", [idx, w], {"padding_idx": -1, "scale_grad_by_freq": True}, grad=(1,), dtype=dtype)
    parity("embedding", [idx.astype(np.int32), w], grad=(1,), dtype=dtype)
    parity("embedding", [np.array(4), w], grad=(1,), dtype=dtype)
    # max_norm renormalizes the referenced rows of the weight in place
    ew, tw = E(w * 3), T(w * 3)
    eo = F.embedding(E(idx), ew, max_norm=1.5, norm_type=1.0)
    to = TF.embedding(T(idx), tw, max_norm=1.5, norm_type=1.0)
    assert_same(eo, to, rtol=1e-5, atol=1e-6)
    assert_same(ew, tw, rtol=1e-5, atol=1e-6)


def test_embedding_errors_and_gradcheck():
    w = ember.randn(5, 3)
    with pytest.raises(IndexError, match="index out of range in self"):
        F.embedding(ember.tensor([5]), w)
    with pytest.raises(IndexError, match="index out of range in self"):
        F.embedding(ember.tensor([-1]), w)
    with pytest.raises(RuntimeError, match="Expected tensor for argument #1 'indices' to have one of"):
        F.embedding(ember.tensor([1.0]), w)
    with pytest.raises(RuntimeError, match="'weight' must be 2-D"):
        F.embedding(ember.tensor([1]), ember.randn(5))
    for pad in (5, -6):
        with pytest.raises(AssertionError, match="Padding_idx must be within num_embeddings"):
            F.embedding(ember.tensor([1]), w, padding_idx=pad)
    idx = ember.tensor([[0, 2], [2, 4]])
    # the padding row gets no gradient: mask its (constant) output so that finite differences agree
    keep = (idx != 4).unsqueeze(-1)
    check_grads(lambda t: F.embedding(idx, t, padding_idx=4) * keep, G(randn((5, 3), seed=4)))
    check_grads(lambda t: F.embedding(idx, t), G(randn((5, 3), seed=4)))


EMBAG_CASES = [
    dict(mode="sum"), dict(mode="mean"), dict(mode="max"), dict(mode="sum", per_sample_weights=True),
    dict(mode="mean", padding_idx=2), dict(mode="max", padding_idx=2), dict(mode="sum", include_last_offset=True),
    dict(mode="mean", include_last_offset=True, padding_idx=-1),
]


@needs_torch
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", range(len(EMBAG_CASES)))
def test_embedding_bag_parity(case, dtype):
    kw = dict(EMBAG_CASES[case])
    w = randn((10, 3), dtype, 1)
    idx = np.array([1, 2, 4, 5, 4, 3, 2, 9, 2, 2])
    offsets = np.array([0, 2, 2, 5, 8])  # an empty bag, and a bag of padding entries with padding_idx=2
    grad = (1,)
    if kw.pop("per_sample_weights", False):
        kw["per_sample_weights"] = randn((10,), dtype, 5)
        grad = (1, "per_sample_weights")
    if kw.get("include_last_offset"):
        offsets = np.append(offsets, len(idx))
    parity("embedding_bag", [idx, w, offsets], kw, grad=grad, dtype=dtype)
    # 2-D input: fixed-length bags
    kw.pop("include_last_offset", None)
    if "per_sample_weights" in kw:
        kw["per_sample_weights"] = kw["per_sample_weights"].reshape(2, 5)
    parity("embedding_bag", [idx.reshape(2, 5), w], kw, grad=grad, dtype=dtype)


def test_embedding_bag_scale_grad_by_freq():
    # each present row's gradient is divided by how often its index occurs in the batch, so with
    # sum mode and unit upstream gradients every present row gets exactly 1 (torch 2.13's CPU kernel
    # divides some rows by another row's count here: it gives 0.25 for rows 3 and 5)
    w = ember.randn(10, 2, dtype=ember.float64, requires_grad=True)
    idx = ember.tensor([1, 2, 4, 5, 4, 3, 2, 9, 2, 2])
    F.embedding_bag(idx, w, ember.tensor([0, 2, 2, 5, 8]), mode="sum", scale_grad_by_freq=True).sum().backward()
    present = [1, 2, 3, 4, 5, 9]
    expect = [[1.0, 1.0] if r in present else [0.0, 0.0] for r in range(10)]
    assert w.grad.tolist() == expect


@needs_torch
def test_embedding_bag_aux_outputs():
    w = randn((5, 3), seed=1)
    for mode in (1, 2):  # (sum mode's auxiliary outputs differ between torch's float and double kernels)
        eo = ember.embedding_bag(E(w), E(np.array([1, 2, 3, 4])), E(np.array([0, 1, 1])), False, mode)
        to = torch.embedding_bag(T(w), T(np.array([1, 2, 3, 4])), T(np.array([0, 1, 1])), False, mode)
        assert len(eo) == 4
        for e, t in zip(eo, to):
            assert_same(e, t, **TOL["float64"])


def test_embedding_bag_errors_and_gradcheck():
    w = ember.randn(5, 3)
    idx = ember.tensor([1, 2])
    with pytest.raises(ValueError, match="max mode does not support scaling the gradient"):
        F.embedding_bag(idx, w, ember.tensor([0]), mode="max", scale_grad_by_freq=True)
    with pytest.raises(NotImplementedError, match="per_sample_weights is only supported for mode='sum'"):
        F.embedding_bag(idx, w, ember.tensor([0]), per_sample_weights=ember.ones(2))
    with pytest.raises(ValueError, match="mode has to be one of sum, mean or max"):
        F.embedding_bag(idx, w, ember.tensor([0]), mode="foo")
    with pytest.raises(RuntimeError, match="offsets\\[0\\] has to be 0"):
        F.embedding_bag(idx, w, ember.tensor([1]))
    with pytest.raises(RuntimeError, match="offsets\\[-1\\] can not be greater than input's length"):
        F.embedding_bag(idx, w, ember.tensor([0, 5]))
    with pytest.raises(RuntimeError, match="which is not in the valid range"):
        F.embedding_bag(ember.tensor([1, 7]), w, ember.tensor([0]))
    with pytest.raises(ValueError, match="offsets has to be a 1D Tensor but got None"):
        F.embedding_bag(idx, w)
    i = ember.tensor([0, 2, 2, 4, 1])
    off = ember.tensor([0, 2, 2])
    for mode in ("sum", "mean", "max"):
        check_grads(lambda t, m=mode: F.embedding_bag(i, t, off, mode=m), G(randn((5, 2), seed=6)))
    check_grads(lambda t, p: F.embedding_bag(i, t, off, mode="sum", per_sample_weights=p),
                G(randn((5, 2), seed=6)), G(randn((5,), seed=7)))


@needs_torch
def test_one_hot_parity_and_errors():
    for a, kw in [(np.array([0, 3, 1]), {}), (np.array([[0, 3], [1, 1]]), {"num_classes": 5}), (np.array(2), {}),
                  (np.zeros(0, np.int64), {"num_classes": 3})]:
        assert_same(F.one_hot(E(a), **kw), TF.one_hot(T(a), **kw), rtol=0, atol=0)
    with pytest.raises(RuntimeError, match="one_hot is only applicable to index tensor"):
        F.one_hot(ember.tensor([1.0]))
    with pytest.raises(RuntimeError, match="Class values must be non-negative"):
        F.one_hot(ember.tensor([-1]))
    with pytest.raises(RuntimeError, match="Class values must be smaller than num_classes"):
        F.one_hot(ember.tensor([5]), 3)
    with pytest.raises(RuntimeError, match="Can not infer total number of classes from empty tensor"):
        F.one_hot(ember.tensor([], dtype=ember.int64))


# ---------------------------------------------------------------- losses

REDUCTIONS = ["none", "mean", "sum"]


@needs_torch
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_regression_losses(reduction, dtype):
    x, y = randn((3, 5), dtype, 1), randn((3, 5), dtype, 2)
    y[0, :3] = x[0, :3] + np.array([0.0, 1.0, -0.5], dtype)  # the kinks of l1/smooth_l1/huber
    kw = {"reduction": reduction}
    for name, extra in [("mse_loss", {}), ("l1_loss", {}), ("smooth_l1_loss", {}), ("smooth_l1_loss", {"beta": 0.5}),
                        ("smooth_l1_loss", {"beta": 0.0}), ("huber_loss", {}), ("huber_loss", {"delta": 0.5}),
                        ("soft_margin_loss", {})]:
        target = np.sign(y) if name == "soft_margin_loss" else y
        parity(name, [x, target], {**kw, **extra}, grad=(0,) if name == "soft_margin_loss" else (0, 1), dtype=dtype)
    w = uniform((3, 5), 0.1, 2.0, dtype, 3)
    for name in ("mse_loss", "l1_loss", "huber_loss"):
        parity(name, [x, y], {**kw, "weight": w}, grad=(0, 1, "weight"), dtype=dtype)
    parity("mse_loss", [x, y[0]], kw, grad=(0, 1), dtype=dtype)  # broadcast target (warns)


@needs_torch
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_bce_losses(reduction, dtype):
    x = uniform((4, 3), 0.02, 0.98, dtype, 1)
    x[0] = [0.0, 1.0, 0.5]  # clamped logs (-100) and finite gradients at 0 and 1
    t = uniform((4, 3), 0.0, 1.0, dtype, 2)
    t[0] = [0.3, 0.6, 1.0]
    w = uniform((4, 3), 0.5, 2.0, dtype, 3)
    kw = {"reduction": reduction}
    parity("binary_cross_entropy", [x, t], kw, grad=(0, 1), dtype=dtype)
    parity("binary_cross_entropy", [x, t], {**kw, "weight": w}, grad=(0, 1), dtype=dtype)
    parity("binary_cross_entropy", [x, t], {**kw, "weight": w[0]}, grad=(0,), dtype=dtype)
    logits = randn((4, 3), dtype, 4, 3.0)
    logits[0] = [0.0, 50.0, -50.0]
    parity("binary_cross_entropy_with_logits", [logits, t], kw, grad=(0, 1), dtype=dtype)
    parity("binary_cross_entropy_with_logits", [logits, t], {**kw, "weight": w, "pos_weight": w[0] * 2},
           grad=(0, 1), dtype=dtype)


@needs_torch
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reduction", REDUCTIONS + ["batchmean"])
def test_kl_poisson_gaussian(reduction, dtype):
    x = randn((3, 4), dtype, 1)
    t = uniform((3, 4), 0.0, 1.0, dtype, 2)
    t[0, 0] = 0.0
    parity("kl_div", [x, t], {"reduction": reduction}, grad=(0, 1), dtype=dtype)
    parity("kl_div", [x, randn((3, 4), dtype, 3)], {"reduction": reduction, "log_target": True}, grad=(0, 1),
           dtype=dtype)
    if reduction == "batchmean":
        return
    counts = rng(4).poisson(2.0, (3, 4)).astype(dtype)
    for kw in [{}, {"log_input": False}, {"full": True}, {"log_input": False, "full": True, "eps": 1e-3}]:
        parity("poisson_nll_loss", [x if kw.get("log_input", True) else np.abs(x) + 0.1, counts],
               {"reduction": reduction, **kw}, grad=(0,), dtype=dtype)
    var = uniform((3, 4), 0.1, 2.0, dtype, 5)
    var[0, 0] = 1e-9  # clamped to eps
    for v in [var, var[:, :1], var[:, 0], 0.7]:
        parity("gaussian_nll_loss", [x, t, v], {"reduction": reduction}, dtype=dtype,
               grad=(0, 1) + ((2,) if isinstance(v, np.ndarray) else ()))
    parity("gaussian_nll_loss", [x, t, var], {"reduction": reduction, "full": True, "eps": 1e-2}, grad=(0, 2),
           dtype=dtype)


@needs_torch
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_margin_losses(reduction, dtype):
    kw = {"reduction": reduction}
    x1, x2 = randn((6,), dtype, 1), randn((6,), dtype, 2)
    y = np.array([1, -1, 1, 1, -1, -1], dtype)
    parity("margin_ranking_loss", [x1, x2, y], kw, grad=(0, 1), dtype=dtype)
    parity("margin_ranking_loss", [x1, x2, y], {**kw, "margin": 0.5}, grad=(0, 1), dtype=dtype)
    parity("hinge_embedding_loss", [x1, y], kw, grad=(0,), dtype=dtype)
    parity("hinge_embedding_loss", [x1, np.array([1, -1, 0, 1, -1, 2], dtype)], {**kw, "margin": 0.3}, grad=(0,),
           dtype=dtype)
    a, b = randn((4, 5), dtype, 3), randn((4, 5), dtype, 4)
    t = np.array([1, -1, -1, 1], dtype)
    parity("cosine_embedding_loss", [a, b, t], kw, grad=(0, 1), dtype=dtype)
    parity("cosine_embedding_loss", [a, b, t], {**kw, "margin": -0.2}, grad=(0, 1), dtype=dtype)
    parity("cosine_embedding_loss", [a[0], b[0], np.array(-1.0, dtype)], kw, grad=(0, 1), dtype=dtype)
    p = randn((4, 5), dtype, 5)
    for extra in [{}, {"margin": 2.0, "p": 1.0}, {"swap": True}, {"p": 3.0, "eps": 1e-3}]:
        parity("triplet_margin_loss", [a, b, p], {**kw, **extra}, grad=(0, 1, 2), dtype=dtype)
    parity("triplet_margin_with_distance_loss", [a, b, p], {"reduction": reduction}, grad=(0, 1, 2), dtype=dtype)
    target = rng(6).integers(0, 2, (4, 5)).astype(dtype)
    parity("multilabel_soft_margin_loss", [a, target], kw, grad=(0, 1), dtype=dtype)
    parity("multilabel_soft_margin_loss", [a, target], {**kw, "weight": uniform((5,), 0.5, 1.5, dtype)},
           grad=(0, 1), dtype=dtype)
    cls = np.array([0, 4, 2, 2])
    for extra in [{}, {"p": 2}, {"margin": 0.5, "weight": uniform((5,), 0.5, 1.5, dtype)}]:
        parity("multi_margin_loss", [a, cls], {**kw, **extra}, grad=(0,), dtype=dtype)
    parity("multi_margin_loss", [a[0], np.array(3)], kw, grad=(0,), dtype=dtype)
    parity("multi_margin_loss", [a[0], np.array([3])], kw, grad=(0,), dtype=dtype)


@needs_torch
@pytest.mark.parametrize("dtype", DTYPES)
def test_distances(dtype):
    a, b = randn((4, 5), dtype, 1), randn((4, 5), dtype, 2)
    for kw in [{}, {"dim": 0}, {"eps": 0.5}]:
        parity("cosine_similarity", [a, b], kw, grad=(0, 1), dtype=dtype)
    parity("cosine_similarity", [a, b[:1]], {}, grad=(0, 1), dtype=dtype)  # broadcast
    parity("cosine_similarity", [a, np.zeros((4, 5), dtype)], {}, grad=(0, 1), dtype=dtype)  # zero norm
    for kw in [{}, {"p": 1.0}, {"p": 3.0, "keepdim": True}, {"eps": 0.0, "p": np.inf}]:
        parity("pairwise_distance", [a, b], kw, grad=(0, 1), dtype=dtype)
    parity("pairwise_distance", [a, b[0]], {}, grad=(0, 1), dtype=dtype)
    parity("pairwise_distance", [a[0], b[0]], {}, grad=(0, 1), dtype=dtype)


@needs_torch
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_nll_cross_entropy(reduction, dtype):
    x = randn((5, 4), dtype, 1)
    y = np.array([0, 3, 1, 3, 2])
    w = uniform((4,), 0.5, 2.0, dtype, 2)
    kw = {"reduction": reduction}
    for name in ("nll_loss", "cross_entropy"):
        parity(name, [x, y], kw, grad=(0,), dtype=dtype)
        parity(name, [x, y], {**kw, "weight": w}, grad=(0,), dtype=dtype)
        parity(name, [x, y], {**kw, "weight": w, "ignore_index": 3}, grad=(0,), dtype=dtype)
        parity(name, [x, np.array([0, 7, 1, 7, 2])], {**kw, "ignore_index": 7}, grad=(0,), dtype=dtype)
        parity(name, [x[0], np.array(2)], kw, grad=(0,), dtype=dtype)  # unbatched
        parity(name, [x[0], np.array([2])], kw, dtype=dtype)  # (torch's backward fails on this one)
        xn = randn((2, 4, 3, 2), dtype, 3)  # (N, C, d1, d2)
        yn = rng(4).integers(0, 4, (2, 3, 2))
        yn[0, 0, 0] = -100
        parity(name, [xn, yn], {**kw, "weight": w}, grad=(0,), dtype=dtype)
        parity(name, [randn((2, 4, 3), dtype, 5), rng(4).integers(0, 4, (2, 3))], kw, grad=(0,), dtype=dtype)
        parity(name, [x, y.astype(np.uint8)], kw, grad=(0,), dtype=dtype)
    # label smoothing, with and without weights and ignored targets
    for ls in (0.1, 1.0):
        parity("cross_entropy", [x, y], {**kw, "label_smoothing": ls}, grad=(0,), dtype=dtype)
        parity("cross_entropy", [x, y], {**kw, "label_smoothing": ls, "weight": w, "ignore_index": 1}, grad=(0,),
               dtype=dtype)
        parity("cross_entropy", [xn, yn], {**kw, "label_smoothing": ls, "weight": w}, grad=(0,), dtype=dtype)
    # class probabilities
    probs = uniform((5, 4), 0, 1, dtype, 6)
    probs /= probs.sum(1, keepdims=True)
    parity("cross_entropy", [x, probs], kw, grad=(0, 1), dtype=dtype)
    parity("cross_entropy", [x, probs], {**kw, "weight": w, "label_smoothing": 0.2}, grad=(0, 1), dtype=dtype)
    parity("cross_entropy", [x[0], probs[0]], kw, grad=(0, 1), dtype=dtype)
    pn = uniform((2, 4, 3, 2), 0, 1, dtype, 7)
    parity("cross_entropy", [xn, pn], kw, grad=(0, 1), dtype=dtype)


@needs_torch
def test_nll_edge_cases():
    x = randn((3, 4))
    for reduction in REDUCTIONS:  # everything ignored: mean is nan, as torch
        parity("nll_loss", [x, np.full(3, -100)], {"reduction": reduction}, grad=(0,))
        parity("cross_entropy", [x, np.full(3, -100)], {"reduction": reduction, "label_smoothing": 0.1}, grad=(0,))
        parity("nll_loss", [np.zeros((0, 4)), np.zeros(0, np.int64)], {"reduction": reduction})
        parity("cross_entropy", [np.zeros((0, 4)), np.zeros((0, 4))], {"reduction": reduction})
    # the legacy arguments
    parity("nll_loss", [x, np.array([0, 1, 3])], {"size_average": False}, grad=(0,))
    parity("cross_entropy", [x, np.array([0, 1, 3])], {"reduce": False}, grad=(0,))
    parity("kl_div", [x, uniform((3, 4), 0, 1)], {"size_average": False, "reduce": True}, grad=(0,))


def test_classification_errors():
    x = ember.randn(3, 4)
    y = ember.tensor([0, 1, 3])
    with pytest.raises(IndexError, match="Target 4 is out of bounds"):
        F.nll_loss(x, ember.tensor([0, 1, 4]))
    with pytest.raises(IndexError, match="Target -1 is out of bounds"):
        F.cross_entropy(x, ember.tensor([0, 1, -1]))
    with pytest.raises(RuntimeError, match="expected target dtype to be Long or Byte, but got Int"):
        F.nll_loss(x, y.int())
    with pytest.raises(RuntimeError, match="expected target dtype to be Long or Byte, but got Float"):
        F.cross_entropy(x, y.float())
    with pytest.raises(ValueError, match=r"Expected input batch_size \(3\) to match target batch_size \(2\)"):
        F.nll_loss(x, ember.tensor([0, 1]))
    with pytest.raises(RuntimeError, match=r"Expected target size \[2, 5\], got \[2, 6\]"):
        F.nll_loss(ember.randn(2, 4, 5), ember.zeros(2, 6, dtype=ember.int64))
    with pytest.raises(RuntimeError, match="weight tensor should be defined either for all 4 classes"):
        F.nll_loss(x, y, weight=ember.ones(3))
    with pytest.raises(ValueError, match=r"Expected 1 or more dimensions \(got 0\)"):
        F.nll_loss(ember.tensor(1.0), ember.tensor(0))
    with pytest.raises(ValueError, match="For 1D input, 1D target must have size 1"):
        F.nll_loss(ember.randn(4), ember.tensor([1, 2]))
    with pytest.raises(RuntimeError, match="ignore_index is not supported for floating point target"):
        F.cross_entropy(x, ember.rand(3, 4), ignore_index=1)
    with pytest.raises(RuntimeError, match="label_smoothing must be between 0.0 and 1.0"):
        F.cross_entropy(x, y, label_smoothing=1.5)
    with pytest.raises(RuntimeError, match="Expected floating point type for target with class probabilities"):
        F.cross_entropy(ember.randn(4), ember.tensor([0, 1, 2, 3]))
    with pytest.raises(ValueError, match="foo is not a valid value for reduction"):
        F.cross_entropy(x, y, reduction="foo")
    with pytest.raises(ValueError, match="only p == 1 and p == 2 supported"):
        F.multi_margin_loss(x, y, p=3)
    with pytest.raises(RuntimeError, match="target out of range"):
        F.multi_margin_loss(x, ember.tensor([0, 1, 4]))
    with pytest.raises(ValueError, match="weight must be one-dimensional"):
        F.multi_margin_loss(x, y, weight=ember.ones(4, 1))
    with pytest.raises(RuntimeError, match="inconsistent weight size, expected 4"):
        F.multi_margin_loss(x, y, weight=ember.ones(3))
    with pytest.raises(RuntimeError, match="Expected non-empty vector or matrix"):
        F.multi_margin_loss(ember.randn(2, 3, 4), ember.tensor([1, 2]))


def test_loss_errors():
    a = ember.rand(3)
    with pytest.raises(RuntimeError, match="all elements of input should be between 0 and 1"):
        F.binary_cross_entropy(ember.tensor([1.5]), ember.tensor([1.0]))
    with pytest.raises(RuntimeError, match="all elements of target should be between 0 and 1"):
        F.binary_cross_entropy(ember.tensor([0.5]), ember.tensor([1.5]))
    with pytest.raises(ValueError, match="Using a target size"):
        F.binary_cross_entropy(a, ember.rand(3, 1))
    with pytest.raises(RuntimeError, match="Found dtype Long but expected Float"):
        F.binary_cross_entropy(a, ember.ones(3, dtype=ember.int64))
    with pytest.raises(ValueError, match="must be the same as input size"):
        F.binary_cross_entropy_with_logits(a, ember.rand(3, 1))
    with pytest.raises(NotImplementedError, match="mse_cpu"):
        F.mse_loss(ember.ones(3, dtype=ember.int64), ember.ones(3, dtype=ember.int64))
    with pytest.raises(RuntimeError, match="smooth_l1_loss does not support negative values for beta"):
        F.smooth_l1_loss(a, a, beta=-1.0)
    with pytest.raises(RuntimeError, match="huber_loss does not support non-positive values for delta"):
        F.huber_loss(a, a, delta=0.0)
    with pytest.raises(ValueError, match="Weights and input must have the same size"):
        F.mse_loss(a, a, weight=ember.ones(2))
    with pytest.raises(ValueError, match="var has negative entry/entries"):
        F.gaussian_nll_loss(a, a, -ember.ones(3))
    with pytest.raises(ValueError, match="var is of incorrect size"):
        F.gaussian_nll_loss(ember.randn(3, 2), ember.randn(3, 2), ember.ones(2))
    with pytest.raises(ValueError, match="foo is not a valid value for reduction"):
        F.poisson_nll_loss(a, a, reduction="foo")
    with pytest.raises(RuntimeError, match="kl_div: Integral inputs not supported"):
        F.kl_div(ember.ones(3, dtype=ember.int64), ember.ones(3, dtype=ember.int64))
    with pytest.raises(RuntimeError, match="margin_ranking_loss : All input tensors should have same dimension"):
        F.margin_ranking_loss(a, a, ember.ones(3, 1))
    with pytest.raises(RuntimeError, match="1D target tensor expects 2D input tensors"):
        F.cosine_embedding_loss(ember.randn(2, 3, 4), ember.randn(2, 3, 4), ember.ones(2))
    with pytest.raises(RuntimeError, match="0D or 1D target tensor expected"):
        F.cosine_embedding_loss(ember.randn(2, 3), ember.randn(2, 3), ember.ones(2, 1))
    with pytest.raises(RuntimeError, match="are expected to have the same number of dimensions"):
        F.triplet_margin_loss(ember.randn(2, 3), ember.randn(3), ember.randn(2, 3))
    with pytest.raises(ValueError, match="margin must be greater than 0"):
        F.triplet_margin_loss(ember.randn(2, 3), ember.randn(2, 3), ember.randn(2, 3), margin=0)
    with pytest.raises(RuntimeError, match="expected common dtype to be floating point"):
        F.cosine_similarity(ember.ones(2, 3, dtype=ember.int64), ember.ones(2, 3, dtype=ember.int64))
    with pytest.raises(ValueError, match="is not a valid value for reduction"):
        F.mse_loss(a, a, reduction="avg")
    with pytest.warns(UserWarning, match="Using a target size"):
        F.l1_loss(ember.randn(3, 2), ember.randn(2))
    with pytest.warns(UserWarning, match="size_average and reduce args will be deprecated"):
        F.l1_loss(a, a, size_average=False)


# ---------------------------------------------------------------- CTC

def ctc_case(T_, N, C, S, seed, dtype="float64"):
    r = rng(seed)
    logits = r.standard_normal((T_, N, C)).astype(dtype)
    targets = r.integers(1, C, (N, S))
    return logits, targets


@needs_torch
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_ctc_parity(reduction, dtype):
    logits, targets = ctc_case(12, 3, 5, 4, 1, dtype)
    targets[1, 1] = targets[1, 2]  # repeated labels need a blank between them
    in_len, tg_len = [12, 10, 7], [4, 3, 0]

    def run(mod, lp_fn, x, tgt, il, tl, **kw):
        xl = (E if mod is F else T)(x, requires_grad=True)
        out = mod.ctc_loss(lp_fn(xl), (E if mod is F else T)(tgt), il, tl, reduction=reduction, **kw)
        go = np.asarray(rng(9).standard_normal(tuple(out.shape)), x.dtype)
        (out * (E if mod is F else T)(go)).sum().backward()
        return out, xl.grad

    # log_softmax inside: torch's gradient w.r.t. log_probs assumes it (see the docstring of F.ctc_loss)
    for il, tl, tgt, kw in [(in_len, tg_len, targets, {}), (torch.tensor(in_len), torch.tensor(tg_len), targets, {}),
                            (in_len, tg_len, targets, {"blank": 4}),
                            (in_len, tg_len, np.concatenate([targets[0, :4], targets[1, :3]]), {})]:
        tgt_ = tgt.copy()
        if kw.get("blank") == 4:
            tgt_ = np.where(tgt_ == 4, 0, tgt_)
        eil = ember.tensor(il.tolist()) if isinstance(il, torch.Tensor) else il
        etl = ember.tensor(tl.tolist()) if isinstance(tl, torch.Tensor) else tl
        eo, eg = run(F, lambda t: F.log_softmax(t, 2), logits, tgt_, eil, etl, **kw)
        to, tg = run(TF, lambda t: TF.log_softmax(t, 2), logits, tgt_, il, tl, **kw)
        assert_same(eo, to, **{k: v * 10 for k, v in TOL[dtype].items()})
        assert_same(eg, tg, **{k: v * 30 for k, v in TOL[dtype].items()})


@needs_torch
def test_ctc_edge_cases():
    lp = TF.log_softmax(torch.randn(5, 2, 4, dtype=torch.float64), 2)
    elp = E(lp.numpy())
    tg = torch.tensor([[1, 1], [2, 3]])
    # impossible alignment (repeated label needs 3 frames): inf, or 0 with zero_infinity (and a zero gradient)
    for zi in (False, True):
        for il in ([2, 5], [5, 5]):
            eo = F.ctc_loss(elp, E(tg.numpy()), il, [2, 2], reduction="none", zero_infinity=zi)
            to = TF.ctc_loss(lp, tg, il, [2, 2], reduction="none", zero_infinity=zi)
            assert_same(eo, to, rtol=1e-9, atol=1e-9)
    x = elp.clone().requires_grad_()
    F.ctc_loss(x, E(tg.numpy()), [2, 5], [2, 2], zero_infinity=True).backward()
    assert bool(x.grad.isfinite().all()) and bool((x.grad[:, 0] == 0).all())
    # zero input length, zero target length; unbatched
    assert_same(F.ctc_loss(elp, E(tg.numpy()), [0, 5], [0, 2], reduction="none"),
                TF.ctc_loss(lp, tg, [0, 5], [0, 2], reduction="none"), rtol=1e-9, atol=1e-9)
    assert_same(F.ctc_loss(elp[:, 0], E(np.array([1, 2])), ember.tensor(5), ember.tensor(2)),
                TF.ctc_loss(lp[:, 0], torch.tensor([1, 2]), torch.tensor(5), torch.tensor(2)), rtol=1e-9, atol=1e-9)
    assert_same(ember.ctc_loss(elp, E(tg.numpy()), [5, 4], [2, 1]), torch.ctc_loss(lp, tg, [5, 4], [2, 1]),
                rtol=1e-9, atol=1e-9)


def test_ctc_errors_and_gradcheck():
    lp = F.log_softmax(ember.randn(5, 2, 4, dtype=ember.float64), 2)
    tg = ember.tensor([[1, 2], [1, 1]])
    with pytest.raises(RuntimeError, match="blank must be in label range"):
        F.ctc_loss(lp, tg, [5, 5], [2, 2], blank=4)
    with pytest.raises(RuntimeError, match="Expected input_lengths to have value at most 5"):
        F.ctc_loss(lp, tg, [6, 5], [2, 2])
    with pytest.raises(RuntimeError, match="input_lengths must be of size batch_size"):
        F.ctc_loss(lp, tg, [5], [2, 2])
    with pytest.raises(RuntimeError, match="Expected tensor to have size at least 3 at dimension 1"):
        F.ctc_loss(lp, tg, [5, 5], [3, 2])
    with pytest.raises(RuntimeError, match="out of the label range"):  # torch reads out of bounds here
        F.ctc_loss(lp, ember.tensor([[1, 7], [1, 1]]), [5, 5], [2, 2])
    # the exact gradient of the loss w.r.t. log_probs, and its second derivative
    x = G(randn((4, 2, 3), seed=3))
    targets = ember.tensor([[1, 2], [2, 0]])
    check_grads(lambda t: F.ctc_loss(t, targets, [4, 3], [2, 1], reduction="sum"), x)
    check_grads(lambda t: F.ctc_loss(F.log_softmax(t, 2), targets, [4, 4], [2, 1]), x)


# ---------------------------------------------------------------- gradcheck of the losses

def test_loss_gradcheck():
    x, y = G(randn((2, 3), seed=1)), G(randn((2, 3), seed=2))
    for name in ("mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss"):
        check_grads(lambda a, b, n=name: getattr(F, n)(a, b), x, y)
    check_grads(lambda a, b: F.smooth_l1_loss(a, b, beta=0.3, reduction="none"), x, y)
    check_grads(lambda a: F.soft_margin_loss(a, y.detach().sign()), x)
    with pytest.raises(RuntimeError, match="not differentiable with respect to argument 'target'"):  # as torch
        F.soft_margin_loss(x, y)
    p = G(uniform((2, 3), 0.1, 0.9, seed=3))
    t = G(uniform((2, 3), 0.1, 0.9, seed=4))
    w = E(uniform((2, 3), 0.5, 1.5, seed=5))
    check_grads(lambda a, b: F.binary_cross_entropy(a, b, weight=w), p, t)
    check_grads(lambda a, b: F.binary_cross_entropy(a, b, reduction="none"), p, t)
    check_grads(lambda a, b, pw: F.binary_cross_entropy_with_logits(a, b, pos_weight=pw), x, t, G([1.5, 0.5, 2.0]))
    check_grads(lambda a, b: F.kl_div(a, b, reduction="batchmean"), x, t)
    check_grads(lambda a, b: F.kl_div(a, b, log_target=True), x, y)
    check_grads(lambda a: F.poisson_nll_loss(a, E(np.array([[0.0, 1.0, 3.0], [2.0, 5.0, 1.0]])), full=True), x)
    check_grads(lambda a, b, v: F.gaussian_nll_loss(a, b, v, full=True), x, y, G(uniform((2, 3), 0.5, 2, seed=6)))
    s = E(np.array([1.0, -1.0]))
    check_grads(lambda a, b: F.margin_ranking_loss(a[:, 0], b[:, 0], s, margin=0.1), x, y)
    check_grads(lambda a: F.hinge_embedding_loss(a, E(np.array([[1.0, -1, -1], [1, -1, 1]]))), x)
    check_grads(lambda a, b: F.cosine_embedding_loss(a, b, s, margin=-0.5), x, y)
    check_grads(lambda a, b: F.cosine_similarity(a, b), x, y)
    check_grads(lambda a, b: F.pairwise_distance(a, b, p=3.0), x, y)
    check_grads(lambda a, b, c: F.triplet_margin_loss(a, b, c, margin=5.0, swap=True), x, y, G(randn((2, 3), seed=7)))
    check_grads(lambda a, b: F.multilabel_soft_margin_loss(a, b), x, t)
    cls = ember.tensor([2, 0])
    check_grads(lambda a: F.multi_margin_loss(a, cls, p=2, margin=2.0, weight=E(np.array([1.0, 2.0, 0.5]))), x)
    check_grads(lambda a: F.nll_loss(a, cls, weight=E(np.array([1.0, 2.0, 0.5]))), x)
    check_grads(lambda a: F.cross_entropy(a, cls, label_smoothing=0.2), x)
    check_grads(lambda a, b: F.cross_entropy(a, F.softmax(b, 1)), x, y)
    check_grads(lambda a: F.cross_entropy(a.reshape(1, 3, 2), ember.tensor([[0, 2]]), ignore_index=2), x)


# ---------------------------------------------------------------- torch's own signatures

@needs_torch
def test_torch_level_loss_defaults():
    # PyTorch's Python bindings read the schema default `reduction=Mean` as 0: no reduction
    x, t = randn((3, 4), seed=1), uniform((3, 4), 0, 1, seed=2)
    for fn, args in [("kl_div", (x, t)), ("binary_cross_entropy_with_logits", (x, t)),
                     ("hinge_embedding_loss", (x, t)), ("margin_ranking_loss", (x, x, t)),
                     ("cosine_embedding_loss", (x, x, np.ones(3))), ("triplet_margin_loss", (x, x, x))]:
        parity(fn, list(args), efn=getattr(ember, fn), tfn=getattr(torch, fn))
    parity("mse_loss", [x, t], efn=ember._C._nn.mse_loss, tfn=torch._C._nn.mse_loss)
    parity("nll_loss", [x, np.array([0, 1, 3])], efn=ember._C._nn.nll_loss, tfn=torch._C._nn.nll_loss)


@needs_torch
def test_signatures_match_torch():
    import inspect
    names = [n for n in F.__all__ if n not in F._functional_core.__all__]
    for n in names:
        tf = getattr(TF, n)
        try:
            ts = inspect.signature(tf)
        except (TypeError, ValueError):
            continue  # a builtin without a Python signature
        es = inspect.signature(getattr(F, n))
        tp = [(p.name, p.default) for p in ts.parameters.values()]
        if [k for k, _ in tp] == ["args", "kwargs"]:
            continue  # torch's boolean-dispatch wrappers (return_indices picks the function) take (*args, **kwargs)
        ep = [(p.name, p.default) for p in es.parameters.values()]
        assert ep == tp, f"{n}: {ep} != torch {tp}"
