"""The last torch.nn names, checked against torch 2.13 on the same inputs: nn.grad (conv input / weight
gradients), nn.attention (SDPBackend, sdpa_kernel and scaled_dot_product_attention's "no kernel" errors,
SDPAParams, the flash-attention registry), nn.common_types, nn.factory_kwargs, and
LinearCrossEntropyOptions with linear_cross_entropy's chunked path (values and gradients)."""
import dataclasses
import logging
import warnings

import numpy as np
import pytest

import ember
import ember.nn as nn
import ember.nn.functional as F

torch = pytest.importorskip("torch")
import torch.nn.attention as tattention  # noqa: E402
import torch.nn.functional as TF  # noqa: E402
from torch.nn import grad as tgrad  # noqa: E402

from ember.nn import attention as eattention  # noqa: E402
from ember.nn import grad as egrad  # noqa: E402


def t2e(t):
    out = ember.from_numpy(t.detach().numpy().copy())
    return out.requires_grad_(True) if t.requires_grad else out


def close(a, b, atol=1e-10, rtol=1e-7):
    a = a.detach().numpy() if isinstance(a, ember.Tensor) else np.asarray(a)
    b = b.detach().numpy()
    assert a.shape == b.shape, (a.shape, b.shape)
    np.testing.assert_allclose(a, b, atol=atol, rtol=rtol)


# ---------------------------------------------------------------- nn.grad

_CONV_CASES = [
    dict(),
    dict(stride=2),
    dict(padding=1),
    dict(stride=2, padding=2, dilation=2),
    dict(stride=(1, 2, 3), padding=(0, 1, 2), dilation=(2, 1, 1), groups=2),
]


def _per_dim(kw, n):
    """Tuple-valued settings cut to n spatial dims."""
    return {k: (v[:n] if isinstance(v, tuple) else v) for k, v in kw.items()}


@pytest.mark.parametrize("n", [1, 2, 3])
@pytest.mark.parametrize("case", range(len(_CONV_CASES)))
def test_conv_grad_matches_torch(n, case):
    kw = _per_dim(_CONV_CASES[case], n)
    groups = kw.get("groups", 1)
    g = torch.Generator().manual_seed(10 * n + case)
    x = torch.randn(2, 4, *([7] * n), generator=g, dtype=torch.float64)
    w = torch.randn(6, 4 // groups, *([3] * n), generator=g, dtype=torch.float64)
    conv = getattr(TF, f"conv{n}d")
    go = torch.randn(conv(x, w, **kw).shape, generator=g, dtype=torch.float64)
    t_in = getattr(tgrad, f"conv{n}d_input")(x.shape, w, go, **kw)
    e_in = getattr(egrad, f"conv{n}d_input")(x.shape, t2e(w), t2e(go), **kw)
    close(e_in, t_in)
    assert e_in.dtype == ember.float64
    t_w = getattr(tgrad, f"conv{n}d_weight")(x, w.shape, go, **kw)
    e_w = getattr(egrad, f"conv{n}d_weight")(t2e(x), w.shape, t2e(go), **kw)
    close(e_w, t_w)


def test_conv_grad_input_size_not_reached_by_stride():
    # an input length the strided conv does not cover fully: the uncovered tail gets zero gradient
    x = torch.randn(1, 2, 8, dtype=torch.float64)
    w = torch.randn(3, 2, 3, dtype=torch.float64)
    go = torch.randn(TF.conv1d(x, w, stride=2).shape, dtype=torch.float64)
    close(egrad.conv1d_input(x.shape, t2e(w), t2e(go), stride=2), tgrad.conv1d_input(x.shape, w, go, stride=2))


def test_conv_grad_is_differentiable():
    x = torch.randn(2, 2, 5, 5, dtype=torch.float64, requires_grad=True)
    w = torch.randn(3, 2, 3, 3, dtype=torch.float64, requires_grad=True)
    go = torch.randn(2, 3, 3, 3, dtype=torch.float64)
    xe, we = t2e(x), t2e(w)
    t_gi = tgrad.conv2d_input(x.shape, w, go)
    e_gi = egrad.conv2d_input(tuple(x.shape), we, t2e(go))
    assert e_gi.requires_grad
    close(ember.autograd.grad((e_gi ** 2).sum(), we)[0], torch.autograd.grad((t_gi ** 2).sum(), w)[0])
    t_gw = tgrad.conv2d_weight(x, w.shape, go)
    e_gw = egrad.conv2d_weight(xe, tuple(w.shape), t2e(go))
    close(ember.autograd.grad((e_gw ** 2).sum(), xe)[0], torch.autograd.grad((t_gw ** 2).sum(), x)[0])
    assert not egrad.conv2d_input(tuple(x.shape), t2e(w.detach()), t2e(go)).requires_grad


def test_conv_grad_bad_input():
    w = torch.randn(4, 2, 3)
    go = torch.randn(2, 4, 5)
    for size in [(2, 3, 7), (2, 2, 20)]:  # wrong channels; a size whose output is not grad_output's
        with pytest.raises(RuntimeError):
            tgrad.conv1d_input(size, w, go)
        with pytest.raises(RuntimeError):
            egrad.conv1d_input(size, t2e(w), t2e(go))
    with pytest.raises(RuntimeError):
        egrad.conv1d_weight(t2e(torch.randn(2, 2, 7)), (4, 1, 3), t2e(go))


# ---------------------------------------------------------------- nn.attention

def test_sdp_backend_members():
    assert {k: int(v) for k, v in eattention.SDPBackend.__members__.items()} == \
        {k: int(v) for k, v in tattention.SDPBackend.__members__.items()}
    assert repr(eattention.SDPBackend.MATH) == repr(tattention.SDPBackend.MATH)
    assert str(eattention.SDPBackend.FLASH_ATTENTION) == str(tattention.SDPBackend.FLASH_ATTENTION)
    assert eattention.SDPBackend.MATH.name == "MATH" and eattention.SDPBackend.MATH.value == 0
    assert sorted(eattention.__all__) == sorted(tattention.__all__)
    assert eattention.WARN_FOR_UNFUSED_KERNELS is False


def _names(backends):
    return [b.name for b in backends]


@pytest.mark.parametrize("bad", [(tattention.SDPBackend.MATH,), "math", 0, None])
def test_sdpa_kernel_rejects_what_torch_rejects(bad):
    ebad = tuple(eattention.SDPBackend[b.name] for b in bad) if isinstance(bad, tuple) else bad
    with pytest.raises(AssertionError) as te:
        with tattention.sdpa_kernel(bad):
            pass
    with pytest.raises(AssertionError) as ee:
        with eattention.sdpa_kernel(ebad):
            pass
    assert str(ee.value) == str(te.value)


def test_sdpa_kernel_records_and_restores():
    E, T = eattention.SDPBackend, tattention.SDPBackend
    assert _names(eattention._cur_sdpa_kernel_backends(True)) == _names(tattention._cur_sdpa_kernel_backends(True))
    with eattention.sdpa_kernel([E.MATH, E.CUDNN_ATTENTION, E.MATH], set_priority=True) as ectx, \
            tattention.sdpa_kernel([T.MATH, T.CUDNN_ATTENTION, T.MATH], set_priority=True) as tctx:
        assert ectx == tctx == {}
        assert _names(eattention._cur_sdpa_kernel_backends(True)) == \
            _names(tattention._cur_sdpa_kernel_backends(True))
        with eattention.sdpa_kernel(E.FLASH_ATTENTION), tattention.sdpa_kernel(T.FLASH_ATTENTION):
            assert _names(eattention._cur_sdpa_kernel_backends()) == _names(tattention._cur_sdpa_kernel_backends())
        assert _names(eattention._cur_sdpa_kernel_backends()) == _names(tattention._cur_sdpa_kernel_backends())
    assert _names(eattention._cur_sdpa_kernel_backends(True)) == _names(tattention._cur_sdpa_kernel_backends(True))
    assert len(eattention._cur_sdpa_kernel_backends()) == 5


@pytest.mark.parametrize("backends", [["CUDNN_ATTENTION"], ["FLASH_ATTENTION"], [],
                                      ["OVERRIDEABLE", "EFFICIENT_ATTENTION"], ["ERROR"]])
def test_sdpa_without_math_raises_torchs_error(backends):
    q = torch.randn(2, 3, 4)
    with pytest.raises(RuntimeError) as te, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with tattention.sdpa_kernel([getattr(tattention.SDPBackend, b) for b in backends]):
            TF.scaled_dot_product_attention(q, q, q)
    with pytest.raises(RuntimeError) as ee, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with eattention.sdpa_kernel([getattr(eattention.SDPBackend, b) for b in backends]):
            F.scaled_dot_product_attention(t2e(q), t2e(q), t2e(q))
    assert str(ee.value) == str(te.value)
    # the error left the selection as it was: sdpa runs again
    F.scaled_dot_product_attention(t2e(q), t2e(q), t2e(q))


def test_sdpa_with_math_enabled_matches_torch():
    g = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(2, 2, 5, 4, generator=g, dtype=torch.float64) for _ in range(3))
    with tattention.sdpa_kernel([tattention.SDPBackend.MATH]):
        ref = TF.scaled_dot_product_attention(q, k, v, is_causal=True)
    with eattention.sdpa_kernel([eattention.SDPBackend.MATH, eattention.SDPBackend.CUDNN_ATTENTION]):
        out = F.scaled_dot_product_attention(t2e(q), t2e(k), t2e(v), is_causal=True)
    close(out, ref)


def test_sdpa_params_and_can_use():
    from torch.backends.cuda import SDPAParams as TParams, can_use_efficient_attention, can_use_flash_attention
    q = torch.randn(2, 3, 4, 5)
    tp = TParams(q, q, q, None, 0.5, True, False)
    eq = t2e(q)
    ep = eattention.SDPAParams(eq, eq, eq, None, 0.5, True, False)
    assert ep.query is eq and ep.key is eq and ep.value is eq and ep.attn_mask is None
    assert (ep.dropout, ep.is_causal, ep.enable_gqa) == (tp.dropout, tp.is_causal, tp.enable_gqa)
    with pytest.raises(AttributeError):
        tp.dropout = 0.1
    with pytest.raises(AttributeError):
        ep.dropout = 0.1
    with pytest.raises(TypeError):
        TParams(q, q, q, None, 0.0, False)
    with pytest.raises(TypeError):
        eattention.SDPAParams(eq, eq, eq, None, 0.0, False)
    with pytest.raises(TypeError):
        eattention.SDPAParams(eq, eq, "v", None, 0.0, False, False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # torch's CPU build answers False without warning, even with debug
        for debug in (False, True):
            assert eattention.can_use_flash_attention(ep, debug) == can_use_flash_attention(tp, debug) is False
            assert eattention.can_use_efficient_attention(ep, debug) == can_use_efficient_attention(tp, debug)
    with pytest.raises(TypeError):
        can_use_flash_attention(3)
    with pytest.raises(TypeError):
        eattention.can_use_flash_attention(3)


@pytest.fixture
def clean_registry():
    saved = dict(eattention._flash_attention_impls)
    yield
    eattention._flash_attention_impls.clear()
    eattention._flash_attention_impls.update(saved)
    eattention._flash_attention_active = None


def test_flash_attention_registry(clean_registry, caplog):
    calls = []

    class Handle:
        def remove(self):
            calls.append("removed")

    assert eattention.current_flash_attention_impl() is None
    eattention.register_flash_attention_impl("ZZ", register_fn=lambda: calls.append("zz") or Handle())
    eattention.register_flash_attention_impl("AA", register_fn=lambda: calls.append("aa"))
    assert eattention.list_flash_attention_impls() == ["AA", "ZZ"]  # sorted; Ember ships none of its own
    eattention.activate_flash_attention_impl("ZZ")
    assert calls == ["zz"] and eattention.current_flash_attention_impl() == "ZZ"
    eattention.activate_flash_attention_impl("AA")  # restores ZZ first; AA returns no handle
    assert calls == ["zz", "removed", "aa"] and eattention.current_flash_attention_impl() is None
    with pytest.raises(ValueError, match=r"Unknown flash attention impl 'nope'\. Available implementations: "):
        eattention.activate_flash_attention_impl("nope")
    with caplog.at_level(logging.WARNING):
        eattention.restore_flash_attention_impl()
    assert "no custom impl was activated" in caplog.text
    with pytest.raises(ValueError):
        tattention.activate_flash_attention_impl("nope")


# ---------------------------------------------------------------- nn.common_types, nn.factory_kwargs

def test_common_types_match_torch():
    import torch.nn.common_types as tct
    import ember.nn.common_types as ect
    names = [n for n in vars(tct) if n.startswith("_") and n.endswith("_t")]
    assert names and all(hasattr(ect, n) for n in names)
    for n in names:
        if "tensor" in n or "indices" in n or "scalar" in n:
            continue  # aliases over Tensor / the TypeVar: the same shape, other objects
        assert getattr(ect, n) == getattr(tct, n), n
    assert ect._size_2_t == int | tuple[int, int]
    assert ect._maybe_indices_t == ember.Tensor | tuple[ember.Tensor, ember.Tensor]


@pytest.mark.parametrize("kwargs", [None, {}, {"device": "cpu"}, {"dtype": "D", "memory_format": "M"},
                                    {"device": "cpu", "factory_kwargs": {"dtype": "D"}},
                                    {"factory_kwargs": {"anything": 1}}])
def test_factory_kwargs(kwargs):
    before = None if kwargs is None else dict(kwargs)
    assert nn.factory_kwargs(kwargs) == torch.nn.factory_kwargs(kwargs)
    assert kwargs == before


@pytest.mark.parametrize("kwargs", [{"foo": 1, "device": "cpu"}, {"dtype": 1, "factory_kwargs": {"dtype": 2}}])
def test_factory_kwargs_errors(kwargs):
    with pytest.raises(TypeError) as te:
        torch.nn.factory_kwargs(kwargs)
    with pytest.raises(TypeError) as ee:
        nn.factory_kwargs(kwargs)
    assert str(ee.value) == str(te.value)


# ---------------------------------------------------------------- LinearCrossEntropyOptions

def test_options_defaults_and_frozen():
    assert repr(nn.LinearCrossEntropyOptions()) == repr(torch.nn.LinearCrossEntropyOptions())
    assert [f.name for f in dataclasses.fields(nn.LinearCrossEntropyOptions)] == \
        [f.name for f in dataclasses.fields(torch.nn.LinearCrossEntropyOptions)]
    with pytest.raises(dataclasses.FrozenInstanceError):
        nn.LinearCrossEntropyOptions().batch_chunk_size = 3


@pytest.mark.parametrize("kwargs", [dict(acc_policy="x"), dict(chunking_method="aspect"),
                                    dict(chunking_method="aspect_ratio:0"), dict(chunking_method="aspect_ratio:a"),
                                    dict(batch_chunk_size=0), dict(batch_chunk_size=2.0), dict(acc_dtype="int64")])
def test_options_validation(kwargs):
    tkw = dict(kwargs, acc_dtype=torch.int64) if "acc_dtype" in kwargs else kwargs
    ekw = dict(kwargs, acc_dtype=ember.int64) if "acc_dtype" in kwargs else kwargs
    with pytest.raises(ValueError):
        torch.nn.LinearCrossEntropyOptions(**tkw)
    with pytest.raises(ValueError):
        nn.LinearCrossEntropyOptions(**ekw)


@pytest.mark.parametrize("kwargs", [dict(), dict(batch_chunk_size=5), dict(chunking_method="aspect_ratio"),
                                    dict(chunking_method="aspect_ratio:4"), dict(chunking_method=None),
                                    dict(acc_policy="balanced", batch_chunk_size=1000)])
@pytest.mark.parametrize("shape", [(100, 8, 50), (7, 16, 1000), (64, 64, 64)])
def test_options_adjust(kwargs, shape):
    n, f, c = shape
    for dt in ("float32", "bfloat16"):
        t = torch.nn.LinearCrossEntropyOptions(**kwargs)._adjust(n, f, c, getattr(torch, dt), torch.device("cpu"))
        e = nn.LinearCrossEntropyOptions(**kwargs)._adjust(n, f, c, getattr(ember, dt), ember.device("cpu"))
        assert (e.batch_chunk_size, e.chunking_method, e.acc_policy, str(e.acc_dtype).split(".")[-1]) == \
            (t.batch_chunk_size, t.chunking_method, t.acc_policy, str(t.acc_dtype).split(".")[-1])
    with pytest.raises(ValueError):
        torch.nn.LinearCrossEntropyOptions(batch_chunk_size=3, chunking_method="aspect_ratio")._adjust(
            100, 8, 50, torch.float32, torch.device("cpu"))
    with pytest.raises(ValueError):
        nn.LinearCrossEntropyOptions(batch_chunk_size=3, chunking_method="aspect_ratio")._adjust(
            100, 8, 50, ember.float32, ember.device("cpu"))


def _lce_pair(reduction, chunk, weighted, bias, targets, g):
    """(Ember's chunked loss, torch's chunked loss, Ember's params, torch's params, Ember's reference-path loss)."""
    x = torch.randn(len(targets), 5, generator=g, dtype=torch.float64, requires_grad=True)
    w = torch.randn(9, 5, generator=g, dtype=torch.float64, requires_grad=True)
    b = torch.randn(9, generator=g, dtype=torch.float64, requires_grad=True) if bias else None
    cw = torch.rand(9, generator=g, dtype=torch.float64) if weighted else None
    t = torch.tensor(targets)
    kw = dict(reduction=reduction, ignore_index=-1)
    ref = TF.linear_cross_entropy(x, w, t, linear_bias=b, weight=cw, **kw,
                                  options=torch.nn.LinearCrossEntropyOptions(batch_chunk_size=chunk))
    xe, we, be = t2e(x), t2e(w), (t2e(b) if bias else None)
    ekw = dict(kw, linear_bias=be, weight=None if cw is None else t2e(cw))
    out = F.linear_cross_entropy(xe, we, t2e(t), **ekw, options=nn.LinearCrossEntropyOptions(batch_chunk_size=chunk))
    plain = F.linear_cross_entropy(xe, we, t2e(t), **ekw)
    params_t = [x, w] + ([b] if bias else [])
    params_e = [xe, we] + ([be] if bias else [])
    return out, ref, params_e, params_t, plain


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("chunk", [1, 3, None])
@pytest.mark.parametrize("weighted", [False, True])
def test_chunked_values_and_grads(reduction, chunk, weighted):
    g = torch.Generator().manual_seed(len(reduction) * 10 + (chunk or 0) + 100 * weighted)
    out, ref, pe, pt, plain = _lce_pair(reduction, chunk, weighted, True, [0, 8, -1, 3, 3, 7, 1], g)
    assert out.dtype == ember.float64 and tuple(out.shape) == tuple(ref.shape)
    close(out, ref)
    go = torch.randn(ref.shape, generator=g, dtype=torch.float64)
    chunked_grads = ember.autograd.grad(out, pe, t2e(go))
    for a, b in zip(chunked_grads, torch.autograd.grad(ref, pt, go)):
        close(a, b)
    # the chunked path gives what the reference path (options=None) gives, gradients included
    close(out, torch.tensor(plain.detach().numpy()))
    for a, b in zip(chunked_grads, ember.autograd.grad(plain, pe, t2e(go))):
        close(a, torch.tensor(b.numpy()))


def test_chunked_without_bias_and_grad_of_one_input():
    g = torch.Generator().manual_seed(3)
    out, ref, pe, pt, _ = _lce_pair("mean", 2, False, False, [1, 2, 3, 4, 5], g)
    close(out, ref)
    close(ember.autograd.grad(out, pe[1])[0], torch.autograd.grad(ref, pt[1])[0])


def test_chunked_never_materializes_full_logits(monkeypatch):
    from ember.nn import _linear_cross_entropy_chunked as chunked
    seen = []
    real_matmul = chunked._ops.matmul

    class Spy:
        def __getattr__(self, name):
            return getattr(ember._C._ops, name)

        @staticmethod
        def matmul(a, b):
            out = real_matmul(a, b)
            seen.append(tuple(out.shape))
            return out

    monkeypatch.setattr(chunked, "_ops", Spy())
    x = ember.randn(40, 8, requires_grad=True)
    w = ember.randn(100, 8, requires_grad=True)
    t = ember.randint(0, 100, (40,))
    for reduction in ("mean", "none"):
        seen.clear()
        loss = F.linear_cross_entropy(x, w, t, reduction=reduction,
                                      options=nn.LinearCrossEntropyOptions(batch_chunk_size=16))
        loss.sum().backward()
        logits = [s for s in seen if s[-1] == 100]
        assert logits and max(s[0] for s in logits) == 16  # chunks of at most 16 rows, never (40, 100)
    ref = F.linear_cross_entropy(x, w, t)
    close(F.linear_cross_entropy(x, w, t, options=nn.LinearCrossEntropyOptions(batch_chunk_size=16)),
          torch.tensor(ref.detach().numpy()), atol=1e-5, rtol=1e-5)


def test_chunked_edge_cases():
    g = torch.Generator().manual_seed(1)
    x = torch.randn(4, 3, generator=g, dtype=torch.float64)
    w = torch.randn(6, 3, generator=g, dtype=torch.float64)
    to = torch.nn.LinearCrossEntropyOptions()
    eo = nn.LinearCrossEntropyOptions()
    # unbatched
    close(F.linear_cross_entropy(t2e(x[0]), t2e(w), t2e(torch.tensor(2)), options=eo),
          TF.linear_cross_entropy(x[0], w, torch.tensor(2), options=to))
    # every row ignored: mean is nan, as torch's
    all_ignored = torch.full((4,), -100)
    assert np.isnan(F.linear_cross_entropy(t2e(x), t2e(w), t2e(all_ignored), options=eo).item())
    assert np.isnan(TF.linear_cross_entropy(x, w, all_ignored, options=to).item())
    # empty batch
    e = F.linear_cross_entropy(t2e(x[:0]), t2e(w), t2e(torch.zeros(0, dtype=torch.int64)), options=eo,
                               reduction="none")
    assert tuple(e.shape) == (0,)
    # a target out of range
    bad = torch.tensor([1, 2, 6, 0])
    with pytest.raises(RuntimeError) as te:
        TF.linear_cross_entropy(x, w, bad, options=to)
    with pytest.raises(RuntimeError) as ee:
        F.linear_cross_entropy(t2e(x), t2e(w), t2e(bad), options=eo)
    assert str(ee.value) == str(te.value)
    # an acc_dtype the input cannot take
    with pytest.raises(RuntimeError, match="supports float32 acc_dtype with float16/bfloat16 inputs"):
        TF.linear_cross_entropy(x, w, bad.clamp(max=5), options=torch.nn.LinearCrossEntropyOptions(
            acc_dtype=torch.float32))
    with pytest.raises(RuntimeError, match="supports float32 acc_dtype with float16/bfloat16 inputs"):
        F.linear_cross_entropy(t2e(x), t2e(w), t2e(bad.clamp(max=5)), options=nn.LinearCrossEntropyOptions(
            acc_dtype=ember.float32))


def test_chunked_second_backward():
    x = ember.randn(5, 3, requires_grad=True)
    w = ember.randn(4, 3)
    t = ember.tensor([0, 1, 2, 3, 0])
    loss = F.linear_cross_entropy(x, w, t, options=nn.LinearCrossEntropyOptions())
    loss.backward(retain_graph=True)
    with pytest.raises(RuntimeError, match="chunked backward called twice"):
        loss.backward()
    x.grad = None
    loss = F.linear_cross_entropy(x, w, t, options=nn.LinearCrossEntropyOptions(allow_retain_graph=True))
    loss.backward(retain_graph=True)
    first = x.grad.clone()
    loss.backward()
    close(x.grad, torch.tensor(2 * first.numpy()), atol=1e-6, rtol=1e-6)


def test_chunked_low_precision_accumulates_in_float32():
    g = torch.Generator().manual_seed(2)
    x = torch.randn(16, 8, generator=g).bfloat16().requires_grad_()
    w = torch.randn(32, 8, generator=g).bfloat16().requires_grad_()
    t = torch.randint(0, 32, (16,), generator=g)
    ref = TF.linear_cross_entropy(x, w, t, options=torch.nn.LinearCrossEntropyOptions())
    xe = ember.from_numpy(x.detach().float().numpy()).bfloat16().requires_grad_()
    we = ember.from_numpy(w.detach().float().numpy()).bfloat16().requires_grad_()
    out = F.linear_cross_entropy(xe, we, t2e(t), options=nn.LinearCrossEntropyOptions())
    assert out.dtype == ember.bfloat16
    np.testing.assert_allclose(out.float().item(), ref.float().item(), rtol=1e-2)
    ref.backward()
    out.backward()
    assert xe.grad.dtype == ember.bfloat16
    np.testing.assert_allclose(xe.grad.float().numpy(), x.grad.float().numpy(), atol=2e-2, rtol=2e-2)


@pytest.mark.filterwarnings("ignore:reduction='elementwise_mean' is deprecated")
@pytest.mark.parametrize("case", ["label_smoothing", "out_features", "reduction"])
def test_unchunkable_falls_back_with_warning(case):
    g = torch.Generator().manual_seed(4)
    x = torch.randn(4, 3, generator=g, dtype=torch.float64)
    w = torch.randn(5, 3, generator=g, dtype=torch.float64)
    t = torch.tensor([0, 1, 2, 4])
    kw = {}
    if case == "label_smoothing":
        kw = dict(label_smoothing=0.2)
    elif case == "out_features":
        w = torch.randn(5, 2, 3, generator=g, dtype=torch.float64)
        t = torch.tensor([[0, 1], [2, 4], [3, 3], [1, 0]])
    else:
        kw = dict(reduction="elementwise_mean")
    with pytest.warns(UserWarning, match="``options`` ignored"):
        ref = TF.linear_cross_entropy(x, w, t, options=torch.nn.LinearCrossEntropyOptions(), **kw)
    with pytest.warns(UserWarning, match="``options`` ignored"):
        out = F.linear_cross_entropy(t2e(x), t2e(w), t2e(t), options=nn.LinearCrossEntropyOptions(), **kw)
    close(out, ref)


def test_linear_cross_entropy_loss_module_with_options():
    tm = torch.nn.LinearCrossEntropyLoss(6, 11, bias=True, dtype=torch.float64,
                                         options=torch.nn.LinearCrossEntropyOptions(batch_chunk_size=4))
    em = nn.LinearCrossEntropyLoss(6, 11, bias=True, dtype=ember.float64,
                                   options=nn.LinearCrossEntropyOptions(batch_chunk_size=4))
    em.load_state_dict({k: t2e(v) for k, v in tm.state_dict().items()})
    x = torch.randn(10, 6, dtype=torch.float64)
    t = torch.randint(0, 11, (10,))
    ref, out = tm(x, t), em(t2e(x), t2e(t))
    close(out, ref)
    ref.backward()
    out.backward()
    close(em.linear.weight.grad, tm.linear.weight.grad)
    close(em.linear.bias.grad, tm.linear.bias.grad)


@pytest.mark.parametrize("case", ["weight_size", "weight_2d", "short_target", "2d_target", "0d_target",
                                  "unbatched_1", "unbatched_2"])
def test_chunked_bad_shapes_raise_the_reference_paths_errors(case):
    x = torch.randn(5, 4, dtype=torch.float64)
    w = torch.randn(6, 4, dtype=torch.float64)
    t = torch.tensor([0, 5, 2, 3, 1])
    kw = {}
    if case == "weight_size":
        kw = dict(weight=torch.rand(5, dtype=torch.float64))
    elif case == "weight_2d":
        kw = dict(weight=torch.rand(6, 1, dtype=torch.float64))
    elif case == "short_target":
        t = t[:3]
    elif case == "2d_target":
        t = t.view(5, 1)
    elif case == "0d_target":
        t = t[0]
    elif case == "unbatched_1":
        x, t = x[0], t[:1]
    else:
        x, t = x[0], t[:2]
    ekw = {k: t2e(v) for k, v in kw.items()}
    try:
        ref = TF.linear_cross_entropy(x, w, t, **kw)  # the reference path: the errors torch means
    except Exception as e:  # noqa: BLE001
        with pytest.raises(type(e)) as ee:
            F.linear_cross_entropy(t2e(x), t2e(w), t2e(t), options=nn.LinearCrossEntropyOptions(), **ekw)
        assert str(ee.value) == str(e)
    else:
        close(F.linear_cross_entropy(t2e(x), t2e(w), t2e(t), options=nn.LinearCrossEntropyOptions(), **ekw), ref)


def test_functional_exposes_grad():
    assert F.grad is egrad and TF.grad is tgrad


def test_batch_norm_of_an_empty_batch():
    """An empty batch in training gives an empty output and zero parameter gradients, and leaves the
    running statistics alone, as torch's; one value per channel still raises."""
    res = {}
    for lib in (ember, torch):
        x = lib.zeros(0, 3, 4, requires_grad=True)
        rm, rv = lib.full((3,), 0.5), lib.full((3,), 2.0)
        w, b = lib.ones(3, requires_grad=True), lib.zeros(3, requires_grad=True)
        y = lib.nn.functional.batch_norm(x, rm, rv, w, b, training=True)
        y.sum().backward()
        res[lib] = (tuple(y.shape), rm.tolist(), rv.tolist(), w.grad.tolist(), b.grad.tolist(), tuple(x.grad.shape))
        with pytest.raises(ValueError, match="Expected more than 1 value per channel"):
            lib.nn.functional.batch_norm(lib.zeros(1, 3), rm, rv, training=True)
    assert res[ember] == res[torch]
