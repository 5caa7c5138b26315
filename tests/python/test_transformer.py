"""MultiheadAttention, scaled_dot_product_attention and the Transformer modules against PyTorch:
torch's weights loaded into Ember, outputs and all gradients compared, masks of every kind."""
import numpy as np
import pytest

import ember
import ember.nn as enn
import ember.nn.functional as EF

from parity import get_torch


def arr(shape, seed):
    return np.random.default_rng(seed).standard_normal(shape)


def both(a, dtype="float64", grad=True):
    torch = get_torch()
    t = torch.from_numpy(a).to(getattr(torch, dtype))
    e = ember.from_numpy(a).to(getattr(ember, dtype))
    if grad:
        t.requires_grad_()
        e.requires_grad_()
    return t, e


def mask_pair(a):
    torch = get_torch()
    return torch.from_numpy(a), ember.from_numpy(a)


def close(e, t, tol, what=""):
    assert tuple(e.shape) == tuple(t.shape), (what, e.shape, t.shape)
    np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), rtol=tol, atol=tol, err_msg=what)


def pair(ctor, dtype="float64"):
    torch = get_torch()
    torch.manual_seed(0)
    tm = ctor(torch.nn).to(getattr(torch, dtype))
    em = ctor(enn).to(getattr(ember, dtype))
    em.load_state_dict({k: ember.from_numpy(v.detach().numpy().copy()) for k, v in tm.state_dict().items()})
    return tm, em


def compare(tm, em, t_args, e_args, leaves, tol, t_kw=None, e_kw=None, select=None):
    """Forward both; compare every tensor output; backprop a fixed random cotangent of the first
    output; compare parameter and input gradients."""
    torch = get_torch()
    t_out, e_out = tm(*t_args, **(t_kw or {})), em(*e_args, **(e_kw or {}))
    t_list = list(t_out) if isinstance(t_out, tuple) else [t_out]
    e_list = list(e_out) if isinstance(e_out, tuple) else [e_out]
    for i, (a, b) in enumerate(zip(e_list, t_list)):
        assert (a is None) == (b is None), i
        if b is not None:
            close(a, b, tol, f"output {i}")
    w = arr(tuple(t_list[0].shape), 99)
    (t_list[0] * torch.from_numpy(w).to(t_list[0].dtype)).sum().backward()
    (e_list[0] * ember.from_numpy(w).to(e_list[0].dtype)).sum().backward()
    for (n, tp), (n2, ep) in zip(tm.named_parameters(), em.named_parameters()):
        assert n == n2
        if tp.grad is None:
            assert ep.grad is None or np.allclose(ep.grad.numpy(), 0), n
        else:
            close(ep.grad, tp.grad, tol * 10, f"grad of {n}")
    for tl, el in leaves:
        close(el.grad, tl.grad, tol * 10, "input grad")


# ---------------------------------------------------------------- scaled_dot_product_attention

def _sdpa_cases():
    mb = np.random.default_rng(3).random((3, 5)) > 0.3
    mb[1] = False  # a fully masked row: zeros, as torch
    return [dict(), dict(is_causal=True), dict(scale=0.3), dict(attn_mask=("bool", mb)),
            dict(attn_mask=("float", arr((3, 5), 4))), dict(attn_mask=("float", arr((2, 1, 3, 5), 5)))]


@pytest.mark.parametrize("case", range(6))
@pytest.mark.parametrize("dtype,tol", [("float64", 1e-10), ("float32", 1e-5)])
def test_sdpa(case, dtype, tol):
    torch = get_torch()
    kw = dict(_sdpa_cases()[case])
    tq, eq = both(arr((2, 4, 3, 6), 0), dtype)
    tk, ek = both(arr((2, 4, 5, 6), 1), dtype)
    tv, ev = both(arr((2, 4, 5, 7), 2), dtype)
    tkw, ekw = dict(kw), dict(kw)
    if "attn_mask" in kw:
        kind, m = kw["attn_mask"]
        tm_, em_ = mask_pair(m)
        if kind == "float":
            tm_, em_ = tm_.to(tq.dtype), em_.to(eq.dtype)
        tkw["attn_mask"], ekw["attn_mask"] = tm_, em_
    to = torch.nn.functional.scaled_dot_product_attention(tq, tk, tv, **tkw)
    eo = EF.scaled_dot_product_attention(eq, ek, ev, **ekw)
    close(eo, to, tol)
    w = arr(tuple(to.shape), 9)
    (to * torch.from_numpy(w).to(to.dtype)).sum().backward()
    (eo * ember.from_numpy(w).to(eo.dtype)).sum().backward()
    for a, b in [(eq, tq), (ek, tk), (ev, tv)]:
        close(a.grad, b.grad, tol * 10)


def test_sdpa_gqa_dropout_and_errors():
    torch = get_torch()
    tq, eq = both(arr((1, 4, 3, 4), 0), grad=False)
    tk, ek = both(arr((1, 2, 5, 4), 1), grad=False)
    close(EF.scaled_dot_product_attention(eq, ek, ek, enable_gqa=True),
          torch.nn.functional.scaled_dot_product_attention(tq, tk, tk, enable_gqa=True), 1e-10)
    with pytest.raises(RuntimeError):
        EF.scaled_dot_product_attention(eq, ek, ek)
    with pytest.raises(RuntimeError, match="Explicit attn_mask should not be set when is_causal=True"):
        EF.scaled_dot_product_attention(eq, eq, eq, attn_mask=ember.ones(3, 3, dtype=ember.bool), is_causal=True)
    # dropout: rows still sum to the attention over the kept weights, scaled by 1 / (1 - p)
    ember.manual_seed(0)
    v = ember.ones(1, 1, 5, 1, dtype=ember.float64)
    out = EF.scaled_dot_product_attention(eq[:, :1], ek[:, :1], v, dropout_p=0.5)
    vals = out.numpy().ravel()
    assert np.all(vals >= 0) and np.all(vals <= 2 + 1e-12) and not np.allclose(vals, 1)


# ---------------------------------------------------------------- MultiheadAttention

MHA_CONFIGS = [
    dict(),
    dict(bias=False),
    dict(add_bias_kv=True),
    dict(add_zero_attn=True),
    dict(add_bias_kv=True, add_zero_attn=True),
    dict(kdim=3, vdim=5),
    dict(batch_first=True),
    dict(kdim=3, vdim=3, batch_first=True, add_bias_kv=True),
]


@pytest.mark.parametrize("cfg", range(len(MHA_CONFIGS)))
@pytest.mark.parametrize("need_weights,average", [(True, True), (True, False), (False, True)])
@pytest.mark.parametrize("masks", ["none", "bool", "float", "3d"])
def test_mha(cfg, need_weights, average, masks):
    kw = MHA_CONFIGS[cfg]
    E, H, L, S, N = 8, 2, 3, 4, 2
    tm, em = pair(lambda nn: nn.MultiheadAttention(E, H, **kw))
    bf = kw.get("batch_first", False)
    kdim, vdim = kw.get("kdim", E), kw.get("vdim", E)
    shape = (lambda d, n: (N, n, d) if bf else (n, N, d))
    tq, eq = both(arr(shape(E, L), 0))
    tk, ek = both(arr(shape(kdim, S), 1))
    tv, ev = both(arr(shape(vdim, S), 2))
    t_kw = dict(need_weights=need_weights, average_attn_weights=average)
    e_kw = dict(t_kw)
    if masks != "none":
        kpm = np.zeros((N, S), bool)
        kpm[0, -1] = True
        if masks == "bool":
            am = np.triu(np.ones((L, S), bool), 2)
        elif masks == "float":
            am, kpm = arr((L, S), 5) * 0.5, np.where(kpm, -1e9, 0.0)
        else:
            am = np.random.default_rng(6).random((N * H, L, S)) > 0.8
            am[:, :, 0] = False
        t_kw["attn_mask"], e_kw["attn_mask"] = mask_pair(am)
        t_kw["key_padding_mask"], e_kw["key_padding_mask"] = mask_pair(kpm)
    compare(tm, em, (tq, tk, tv), (eq, ek, ev), [(tq, eq), (tk, ek), (tv, ev)], 1e-9, t_kw, e_kw)


@pytest.mark.parametrize("need_weights", [True, False])
def test_mha_self_attention_unbatched_causal_float32(need_weights):
    torch = get_torch()
    tm, em = pair(lambda nn: nn.MultiheadAttention(8, 4), "float32")
    tx, ex = both(arr((5, 8), 0), "float32")
    tmask = torch.nn.Transformer.generate_square_subsequent_mask(5)
    emask = enn.Transformer.generate_square_subsequent_mask(5)
    close(emask, tmask, 0)
    compare(tm, em, (tx, tx, tx), (ex, ex, ex), [(tx, ex)], 2e-5,
            dict(attn_mask=tmask, is_causal=True, need_weights=need_weights),
            dict(attn_mask=emask, is_causal=True, need_weights=need_weights))


def test_mha_structure_and_errors():
    torch = get_torch()
    for kw in MHA_CONFIGS + [dict(bias=False, add_bias_kv=True, kdim=2)]:
        tm = torch.nn.MultiheadAttention(8, 2, **kw)
        em = enn.MultiheadAttention(8, 2, **kw)
        assert [(n, tuple(p.shape)) for n, p in tm.named_parameters()] == \
               [(n, tuple(p.shape)) for n, p in em.named_parameters()]
        assert list(tm.state_dict()) == list(em.state_dict())
        assert repr(tm) == repr(em)
    for args in [(5, 3), (4, 0), (0, 1)]:
        with pytest.raises(Exception) as te:
            torch.nn.MultiheadAttention(*args)
        with pytest.raises(type(te.value)):
            enn.MultiheadAttention(*args)
    tm, em = pair(lambda nn: nn.MultiheadAttention(4, 2))
    bad = [
        lambda L: (L.randn(3, 2, 5, dtype=L.float64),) * 3,  # wrong embed dim
        lambda L: (L.randn(3, 2, 4, dtype=L.float64), L.randn(3, 4, dtype=L.float64), L.randn(3, 4, dtype=L.float64)),
        lambda L: (L.randn(3, 2, 4, dtype=L.float64),) * 3 + (None, True, L.zeros(2, 2, dtype=L.bool)),
        lambda L: (L.randn(3, 2, 4, dtype=L.float64),) * 3 + (None, True, L.zeros(5, 3, 3, dtype=L.bool)),
        lambda L: (L.randn(3, 2, 4, dtype=L.float64),) * 3 + (None, True, None, True, True),  # causal, no mask
        lambda L: (L.randn(3, 2, 4, dtype=L.float64),) * 3 + (L.zeros(2, 2, dtype=L.bool),),
    ]
    for make in bad:
        with pytest.raises(Exception) as te:
            tm(*make(torch))
        with pytest.raises(type(te.value)):
            em(*make(ember))


def test_mha_gradcheck():
    m = enn.MultiheadAttention(4, 2, add_bias_kv=True).double()
    q = ember.randn(3, 2, 4, dtype=ember.float64, requires_grad=True)
    k = ember.randn(2, 2, 4, dtype=ember.float64, requires_grad=True)
    mask = ember.tensor([[False, True], [False, False], [True, False]])

    def f(q, k, *params):  # gradcheck perturbs the parameters in place, so m sees them
        out, w = m(q, k, k, attn_mask=mask)
        return out, w

    assert ember.autograd.gradcheck(f, (q, k, *m.parameters()))


def test_functional_mha_matches_torch():
    torch = get_torch()
    tm, em = pair(lambda nn: nn.MultiheadAttention(6, 3, add_zero_attn=True))
    tx, ex = both(arr((4, 2, 6), 0), grad=False)
    targs = [p for p in (tm.in_proj_weight, tm.in_proj_bias, None, None, True, 0.0, tm.out_proj.weight,
                         tm.out_proj.bias)]
    eargs = [p for p in (em.in_proj_weight, em.in_proj_bias, None, None, True, 0.0, em.out_proj.weight,
                         em.out_proj.bias)]
    to, tw = torch.nn.functional.multi_head_attention_forward(tx, tx, tx, 6, 3, *targs, training=False)
    eo, ew = EF.multi_head_attention_forward(ex, ex, ex, 6, 3, *eargs, training=False)
    close(eo, to, 1e-10)
    close(ew, tw, 1e-10)


# ---------------------------------------------------------------- Transformer layers


@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("activation", ["relu", "gelu"])
def test_encoder_layer_and_encoder(norm_first, batch_first, activation):
    torch = get_torch()
    kw = dict(dim_feedforward=16, dropout=0.0, activation=activation, batch_first=batch_first, norm_first=norm_first)
    tm, em = pair(lambda nn: nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, **kw), 2, norm=nn.LayerNorm(8),
                                                   enable_nested_tensor=False))
    shape = (2, 5, 8) if batch_first else (5, 2, 8)
    tx, ex = both(arr(shape, 0))
    kpm = np.zeros((2, 5), bool)
    kpm[1, 3:] = True
    tk, ek = mask_pair(kpm)
    tmask = torch.nn.Transformer.generate_square_subsequent_mask(5, dtype=torch.float64)
    emask = enn.Transformer.generate_square_subsequent_mask(5, dtype=ember.float64)
    compare(tm, em, (tx,), (ex,), [(tx, ex)], 1e-9, dict(mask=tmask, src_key_padding_mask=tk),
            dict(mask=emask, src_key_padding_mask=ek))
    tm.zero_grad()
    em.zero_grad()
    tx.grad, ex.grad = None, None
    compare(tm, em, (tx,), (ex,), [(tx, ex)], 1e-9, dict(mask=tmask, is_causal=True), dict(mask=emask, is_causal=True))


@pytest.mark.parametrize("norm_first", [False, True])
def test_decoder_and_transformer(norm_first):
    torch = get_torch()
    tm, em = pair(lambda nn: nn.Transformer(8, 2, 2, 2, 16, dropout=0.0, norm_first=norm_first))
    ts, es = both(arr((6, 2, 8), 0))
    tt, et = both(arr((4, 2, 8), 1))
    tmask = torch.nn.Transformer.generate_square_subsequent_mask(4, dtype=torch.float64)
    emask = enn.Transformer.generate_square_subsequent_mask(4, dtype=ember.float64)
    kpm = np.zeros((2, 6), bool)
    kpm[0, 4:] = True
    tk, ek = mask_pair(kpm)
    mm = np.zeros((4, 6), bool)
    mm[0, 5] = True
    tmm, emm = mask_pair(mm)
    compare(tm, em, (ts, tt), (es, et), [(ts, es), (tt, et)], 1e-9,
            dict(tgt_mask=tmask, src_key_padding_mask=tk, memory_key_padding_mask=tk, memory_mask=tmm),
            dict(tgt_mask=emask, src_key_padding_mask=ek, memory_key_padding_mask=ek, memory_mask=emm))


def test_decoder_layer_batch_first_float32_callable_activation():
    torch = get_torch()
    tm, em = pair(lambda nn: nn.TransformerDecoder(nn.TransformerDecoderLayer(
        8, 4, 16, 0.0, activation=nn.functional.gelu if nn is torch.nn else enn.functional.gelu, batch_first=True,
        bias=False), 2), "float32")
    tt, et = both(arr((2, 3, 8), 0), "float32")
    tmem, emem = both(arr((2, 5, 8), 1), "float32")
    compare(tm, em, (tt, tmem), (et, emem), [(tt, et), (tmem, emem)], 3e-5,
            dict(tgt_is_causal=True, tgt_mask=torch.nn.Transformer.generate_square_subsequent_mask(3)),
            dict(tgt_is_causal=True, tgt_mask=enn.Transformer.generate_square_subsequent_mask(3)))


def test_transformer_structure_and_errors():
    torch = get_torch()
    tm = torch.nn.Transformer(8, 2, 1, 1, 16)
    em = enn.Transformer(8, 2, 1, 1, 16)
    assert [(n, tuple(p.shape)) for n, p in tm.named_parameters()] == \
           [(n, tuple(p.shape)) for n, p in em.named_parameters()]
    assert repr(tm) == repr(em)
    for name, p in em.named_parameters():  # xavier_uniform for matrices
        if p.dim() > 1:
            bound = np.sqrt(6 / (p.shape[0] + p.shape[1]))
            assert np.all(np.abs(p.detach().numpy()) <= bound), name
    enc = enn.TransformerEncoder(enn.TransformerEncoderLayer(8, 2), 2, enable_nested_tensor=True)
    assert len(enc.layers) == 2 and enc.layers[0] is not enc.layers[1]
    with pytest.raises(RuntimeError, match="activation should be relu/gelu"):
        enn.TransformerEncoderLayer(8, 2, activation="tanh")
    for make in [lambda L: (L.randn(3, 2, 8), L.randn(3, 3, 8)), lambda L: (L.randn(3, 2, 8), L.randn(3, 2, 6))]:
        with pytest.raises(RuntimeError) as te:
            tm(*make(torch))
        with pytest.raises(RuntimeError) as ee:
            em(*make(ember))
        assert str(ee.value) == str(te.value)
    m = enn.Transformer.generate_square_subsequent_mask(3)
    assert m.dtype == ember.float32
    assert m.tolist() == [[0.0, float("-inf"), float("-inf")], [0.0, 0.0, float("-inf")], [0.0, 0.0, 0.0]]


def test_dropout_train_vs_eval():
    m = enn.Transformer(8, 2, 1, 1, 16, dropout=0.3)
    src, tgt = ember.randn(5, 2, 8), ember.randn(3, 2, 8)
    m.eval()
    a, b = m(src, tgt), m(src, tgt)
    np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())
    m.train()
    ember.manual_seed(0)
    c = m(src, tgt)
    ember.manual_seed(1)
    d = m(src, tgt)
    assert not np.allclose(c.detach().numpy(), d.detach().numpy())
    d.sum().backward()
    assert all(p.grad is not None for p in m.parameters())
    mha = enn.MultiheadAttention(8, 2, dropout=0.5)
    x = ember.randn(4, 2, 8)
    _, w = mha(x, x, x)
    rows = w.detach().numpy().sum(-1)  # dropped-out weights, averaged over heads: rows no longer sum to 1
    assert not np.allclose(rows, 1.0)
    mha.eval()
    _, w = mha(x, x, x)
    np.testing.assert_allclose(w.detach().numpy().sum(-1), 1.0, rtol=1e-5)
