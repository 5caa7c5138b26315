"""Forward-mode AD: dual tensors through elementwise ops, matmul, views and reductions, checked
against finite differences (and torch.func.jvp where torch is installed)."""
import pytest

import ember
import ember.autograd.forward_ad as fwAD

torch = None
try:
    import torch
except ImportError:
    pass

UNARY = ["exp", "log", "sin", "cos", "tanh", "sigmoid", "sqrt", "abs", "neg", "reciprocal", "erf", "expm1",
         "log1p", "atan", "asinh", "relu", "square"]


def _fd_jvp(fn, x, t, eps=1e-6):
    return (fn(x + t * eps) - fn(x - t * eps)) / (2 * eps)


def _tangent(fn, x, t):
    with fwAD.dual_level():
        y = fn(fwAD.make_dual(x, t))
        primal, tangent = fwAD.unpack_dual(y)
    return primal, tangent


@pytest.mark.parametrize("name", UNARY)
def test_unary_jvp_matches_finite_differences(name):
    ember.manual_seed(0)
    x = ember.rand(5, dtype=ember.float64) + 0.5  # positive: in every op's domain
    t = ember.randn(5, dtype=ember.float64)
    fn = getattr(ember, name)
    primal, tangent = _tangent(fn, x, t)
    assert ember.allclose(primal, fn(x)) if hasattr(ember, "allclose") else (primal - fn(x)).abs().max().item() < 1e-12
    assert (tangent - _fd_jvp(fn, x, t)).abs().max().item() < 1e-6


def test_binary_broadcast_and_scalars():
    ember.manual_seed(1)
    a = ember.rand(3, 4, dtype=ember.float64) + 0.5
    b = ember.rand(4, dtype=ember.float64) + 0.5
    ta, tb = ember.randn(3, 4, dtype=ember.float64), ember.randn(4, dtype=ember.float64)
    with fwAD.dual_level():
        da, db = fwAD.make_dual(a, ta), fwAD.make_dual(b, tb)
        y = (da * db + da / db - db ** 2) * 3 + 1
        _, tangent = fwAD.unpack_dual(y)
    expect = ta * b + a * tb + ta / b - a * tb / (b * b) - 2 * b * tb
    assert (tangent - expect * 3).abs().max().item() < 1e-12


def test_matmul_views_reductions():
    ember.manual_seed(2)
    W = ember.randn(4, 3, dtype=ember.float64)
    x = ember.randn(3, 2, dtype=ember.float64)
    t = ember.randn(3, 2, dtype=ember.float64)

    def f(v):
        return (W @ v).t().reshape(-1).sin().sum()

    _, tangent = _tangent(f, x, t)
    assert abs(tangent.item() - _fd_jvp(f, x, t).item()) < 1e-6


def test_tangent_gone_after_level_and_unpack_without_tangent():
    x = ember.ones(2, dtype=ember.float64)
    with fwAD.dual_level():
        d = fwAD.make_dual(x, ember.ones(2, dtype=ember.float64))
        y = d * 2
        assert fwAD.unpack_dual(ember.ones(2)).tangent is None
    assert fwAD.unpack_dual(y).tangent is None


def test_errors():
    x = ember.ones(2, dtype=ember.float64)
    with pytest.raises(RuntimeError):
        fwAD.make_dual(x, x)  # outside a dual level
    with fwAD.dual_level():
        with pytest.raises(RuntimeError):
            fwAD.make_dual(x, ember.ones(3, dtype=ember.float64))
        d = fwAD.make_dual(x.clone(), ember.ones(2, dtype=ember.float64))
        with pytest.raises(NotImplementedError):
            d.mul_(2)


@pytest.mark.skipif(torch is None, reason="torch not installed")
def test_matches_torch_func_jvp():
    import numpy as np
    rng = np.random.default_rng(0)
    xv, tv, wv = rng.standard_normal(3), rng.standard_normal(3), rng.standard_normal((4, 3))
    x, t, W = (ember.tensor(v.tolist(), dtype=ember.float64) for v in (xv, tv, wv))
    xt, tt, Wt = (torch.tensor(v, dtype=torch.float64) for v in (xv, tv, wv))
    _, ours = _tangent(lambda d: (W @ d).tanh() * d.sum() + d.exp().mean(), x, t)
    _, theirs = torch.func.jvp(lambda d: (Wt @ d).tanh() * d.sum() + d.exp().mean(), (xt,), (tt,))
    assert np.allclose(ours.tolist(), theirs.tolist(), rtol=1e-10, atol=1e-12)


def test_functional_jvp_vjp():
    x = ember.tensor([0.5, 1.5], dtype=ember.float64)
    v = ember.tensor([1.0, -2.0], dtype=ember.float64)
    out, jv = ember.autograd.functional.jvp(lambda a: a.exp() * a, x, v)
    expect = (x.exp() * x + x.exp()) * v
    assert (jv - expect).abs().max().item() < 1e-12
    out, vj = ember.autograd.functional.vjp(lambda a: a.exp() * a, x, v)
    assert (vj - expect).abs().max().item() < 1e-12
