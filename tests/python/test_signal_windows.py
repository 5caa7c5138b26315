"""ember.signal.windows against torch.signal.windows: values, dtypes, shapes, requires_grad, devices,
signatures and the errors for bad arguments, over every window, sym, lengths and parameters."""
import inspect
import itertools

import numpy as np
import pytest

import ember
import ember.signal.windows  # noqa: F401  (the import form must work, not only attribute access)
from parity import get_torch

NAMES = ["bartlett", "blackman", "cosine", "exponential", "gaussian", "general_cosine", "general_hamming",
         "hamming", "hann", "kaiser", "nuttall"]

# each window's own parameters: a few values per window (an empty dict: the defaults)
PARAMS = {
    "exponential": [{}, {"tau": 0.5}, {"tau": 3.0}],
    "gaussian": [{}, {"std": 0.3}, {"std": 7.0}],
    "kaiser": [{}, {"beta": 0.0}, {"beta": 2.5}, {"beta": 40.0}],
    "general_cosine": [{"a": [0.5, 0.5]}, {"a": [1.0]}, {"a": (0.4, 0.3, 0.2, 0.1)}],
    "general_hamming": [{}, {"alpha": 0.5}, {"alpha": 0.8}],
}
CASES = [(name, p) for name in NAMES for p in PARAMS.get(name, [{}])]
TOL = {"float32": dict(rtol=1e-5, atol=1e-6), "float64": dict(rtol=1e-12, atol=1e-14)}


def _windows(name):
    torch = get_torch()
    return getattr(torch.signal.windows, name), getattr(ember.signal.windows, name)


def _same(e, t, dtype):
    assert str(e.dtype).split(".")[-1] == dtype == str(t.dtype).split(".")[-1]
    assert tuple(e.shape) == tuple(t.shape)
    np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), **TOL[dtype])


@pytest.mark.parametrize("name,params", CASES, ids=[f"{n}-{i}" for n, p in CASES for i in [str(p)]])
@pytest.mark.parametrize("sym", [True, False])
@pytest.mark.parametrize("M", [0, 1, 2, 5, 16, 17])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_values_match_torch(name, params, sym, M, dtype):
    torch = get_torch()
    tw, ew = _windows(name)
    t = tw(M, sym=sym, dtype=getattr(torch, dtype), **params)
    e = ew(M, sym=sym, dtype=getattr(ember, dtype), **params)
    _same(e, t, dtype)


@pytest.mark.parametrize("center", [0.0, 3.0, 7.5, -2.0])
@pytest.mark.parametrize("tau", [1.0, 2.5])
def test_exponential_center(center, tau):
    torch = get_torch()
    t = torch.signal.windows.exponential(8, center=center, tau=tau, sym=False, dtype=torch.float64)
    e = ember.signal.windows.exponential(8, center=center, tau=tau, sym=False, dtype=ember.float64)
    _same(e, t, "float64")


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("default", ["float32", "float64"])
def test_default_dtype(name, default):
    kw = PARAMS.get(name, [{}])[0]
    before = ember.get_default_dtype()
    ember.set_default_dtype(getattr(ember, default))
    try:
        assert ember.signal.windows.__dict__[name](4, **kw).dtype == getattr(ember, default)
    finally:
        ember.set_default_dtype(before)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("M", [0, 1, 6])
def test_requires_grad_and_device_like_torch(name, M):
    torch = get_torch()
    tw, ew = _windows(name)
    kw = PARAMS.get(name, [{}])[0]
    t, e = tw(M, requires_grad=True, **kw), ew(M, requires_grad=True, **kw)
    # torch's windows are differentiable results of a grid that requires grad (not leaves) for M > 1
    assert (e.requires_grad, e.is_leaf) == (t.requires_grad, t.is_leaf)
    if not e.is_leaf:
        e.sum().backward()  # the graph is a real one
    assert not ew(M, **kw).requires_grad
    for device in ("cpu", ember.device("cpu")):
        assert ew(M, device=device, **kw).device.type == "cpu"
    m = ew(M, device="meta", **kw)
    assert m.device.type == "meta" and tuple(m.shape) == (M,)


@pytest.mark.skipif(not ember.cuda.is_available(), reason="no GPU")
@pytest.mark.parametrize("name", NAMES)
def test_on_gpu(name):
    kw = PARAMS.get(name, [{}])[0]
    w = ember.signal.windows.__dict__[name](7, device="cuda", dtype=ember.float64, **kw)
    assert w.device.type == "cuda"
    cpu = ember.signal.windows.__dict__[name](7, dtype=ember.float64, **kw)
    np.testing.assert_allclose(w.cpu().numpy(), cpu.numpy(), rtol=1e-12, atol=1e-14)


# (window, M, keyword arguments) that torch rejects; torch's error kind (and message) is the reference
BAD = [(name, -1, {}) for name in NAMES] + [
    (name, 5, kw) for name in ("hann", "kaiser", "bartlett", "blackman", "gaussian", "cosine", "exponential")
    for kw in ({"dtype": "float16"}, {"dtype": "int64"}, {"dtype": "complex64"}, {"layout": "sparse_coo"})
] + [
    ("hann", 0, {"dtype": "bfloat16"}),
    ("exponential", 5, {"tau": 0.0}), ("exponential", 5, {"tau": -1.0}),
    ("exponential", 5, {"center": 1.0}), ("exponential", 5, {"center": 1.0, "sym": True}),
    ("exponential", 0, {"tau": -1.0}),
    ("gaussian", 5, {"std": 0.0}), ("gaussian", 5, {"std": -2.0}), ("gaussian", 0, {"std": -2.0}),
    ("kaiser", 5, {"beta": -0.5}), ("kaiser", 1, {"beta": -0.5}),
    ("general_cosine", 5, {"a": []}), ("general_cosine", 5, {"a": 3.0}), ("general_cosine", 5, {}),
    ("hann", 2.5, {}), ("kaiser", 3.5, {}), ("hann", -0.5, {}), ("cosine", None, {}),
]
for _name in ("hann", "general_cosine"):  # -1 and bad dtypes are named after the window that checks them
    BAD.append((_name, -3, {"dtype": "float16"}))


def _resolve(lib, kw):
    out = dict(kw)
    for key in ("dtype", "layout"):
        if key in out:
            out[key] = getattr(lib, out[key])
    return out


@pytest.mark.parametrize("name,M,kw", BAD, ids=[f"{n}-{m}-{k}" for n, m, k in BAD])
def test_errors_match_torch(name, M, kw):
    torch = get_torch()
    tw, ew = _windows(name)
    with pytest.raises(Exception) as t_err:
        tw(M, **_resolve(torch, kw))
    with pytest.raises(type(t_err.value)) as e_err:
        ew(M, **_resolve(ember, kw))
    if isinstance(t_err.value, ValueError):  # torch's own checks: same words
        assert str(e_err.value).replace("ember.", "") == str(t_err.value).replace("torch.", "")


@pytest.mark.parametrize("name", NAMES)
def test_signature_matches_torch(name):
    tw, ew = _windows(name)
    tsig, esig = inspect.signature(tw), inspect.signature(ew)
    assert [(p.name, p.kind) for p in esig.parameters.values()] == [(p.name, p.kind) for p in tsig.parameters.values()]
    for p in esig.parameters.values():
        tdefault = tsig.parameters[p.name].default
        if p.name == "layout":
            assert p.default is ember.strided
        else:
            assert p.default == tdefault, p.name
    with pytest.raises(TypeError):  # sym is keyword-only
        ew(5, False)


def test_namespace():
    torch = get_torch()
    assert ember.signal.windows.__all__ == torch.signal.windows.__all__ == NAMES
    assert ember.signal.__all__ == ["windows"]
    assert ember.signal is __import__("ember.signal").signal
    from ember.signal.windows import hann
    assert hann is ember.signal.windows.hann
    assert ember.signal.windows.hann(5).tolist() == [0.0, 0.5, 1.0, 0.5, 0.0]


def test_keyword_M_and_integer_like_lengths():
    np.testing.assert_array_equal(ember.signal.windows.hann(M=4).numpy(), ember.signal.windows.hann(4).numpy())
    assert ember.signal.windows.bartlett(np.int64(3)).tolist() == [0.0, 1.0, 0.0]


@pytest.mark.parametrize("sym,M", itertools.product([True, False], [2, 5, 16]))
def test_windows_relations(sym, M):
    """Special cases agree: hamming = general_hamming(0.54), hann = general_cosine([0.5, 0.5]),
    gaussian peaks at 1 in the middle of an odd symmetric window."""
    w = ember.signal.windows
    kw = dict(sym=sym, dtype=ember.float64)
    np.testing.assert_allclose(w.hamming(M, **kw).numpy(), w.general_hamming(M, alpha=0.54, **kw).numpy())
    np.testing.assert_allclose(w.hann(M, **kw).numpy(), w.general_cosine(M, a=[0.5, 0.5], **kw).numpy())
    if sym and M % 2:
        assert w.gaussian(M, **kw)[M // 2].item() == 1.0
