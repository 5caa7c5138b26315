"""nn.RNN / LSTM / GRU and their cells against PyTorch: torch's weights loaded into Ember, then
outputs, final states and every parameter / input gradient compared (float64 and float32)."""
import numpy as np
import pytest

import ember
import ember.nn as enn
from ember.nn.utils import rnn as ernn

from parity import get_torch


def to_ember(t):
    return ember.from_numpy(t.detach().numpy().copy())


def copy_weights(tm, em):
    em.load_state_dict({k: to_ember(v) for k, v in tm.state_dict().items()})


def close(e, t, tol, what=""):
    np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), rtol=tol, atol=tol, err_msg=what)


def flat(out):
    """The tensors of an RNN output: (output, h) or (output, (h, c)), PackedSequence -> data."""
    o, h = out
    o = o.data if hasattr(o, "batch_sizes") else o
    return [o] + (list(h) if isinstance(h, tuple) else [h])


def run_pair(tm, em, make_inputs, tol):
    """Forward both, backprop the same random cotangents, compare outputs and all gradients."""
    torch = get_torch()
    t_in, e_in, leaves = make_inputs()
    t_out, e_out = flat(tm(*t_in)), flat(em(*e_in))
    assert len(t_out) == len(e_out)
    rng = np.random.default_rng(0)
    t_loss, e_loss = 0, 0
    for i, (a, b) in enumerate(zip(e_out, t_out)):
        assert tuple(a.shape) == tuple(b.shape), (i, a.shape, b.shape)
        close(a, b, tol, f"output {i}")
        w = rng.standard_normal(tuple(b.shape))
        t_loss = t_loss + (b * torch.from_numpy(w).to(b.dtype)).sum()
        e_loss = e_loss + (a * ember.from_numpy(w).to(a.dtype)).sum()
    t_loss.backward()
    e_loss.backward()
    for (n, tp), (n2, ep) in zip(tm.named_parameters(), em.named_parameters()):
        assert n == n2
        close(ep.grad, tp.grad, tol * 10, f"grad of {n}")
    for tl, el in leaves:
        close(el.grad, tl.grad, tol * 10, "input grad")


def pair(kind, *args, dtype="float64", **kw):
    torch = get_torch()
    torch.manual_seed(0)
    tm = getattr(torch.nn, kind)(*args, **kw).to(getattr(torch, dtype))
    em = getattr(enn, kind)(*args, **kw).to(getattr(ember, dtype))
    copy_weights(tm, em)
    return tm, em


def leaf(shape, dtype, seed):
    torch = get_torch()
    a = np.random.default_rng(seed).standard_normal(shape)
    t = torch.from_numpy(a).to(getattr(torch, dtype)).requires_grad_()
    e = ember.from_numpy(a).to(getattr(ember, dtype)).requires_grad_()
    return t, e


CONFIGS = [
    ("RNN", dict()),
    ("RNN", dict(nonlinearity="relu", num_layers=2, bidirectional=True)),
    ("RNN", dict(bias=False, batch_first=True)),
    ("LSTM", dict()),
    ("LSTM", dict(num_layers=2, bidirectional=True, batch_first=True)),
    ("LSTM", dict(proj_size=3)),
    ("LSTM", dict(proj_size=3, num_layers=2, bidirectional=True, bias=False)),
    ("GRU", dict()),
    ("GRU", dict(num_layers=3, bidirectional=True)),
    ("GRU", dict(bias=False, batch_first=True, num_layers=2)),
]


@pytest.mark.parametrize("dtype,tol", [("float64", 1e-10), ("float32", 2e-5)])
@pytest.mark.parametrize("kind,kw", CONFIGS)
@pytest.mark.parametrize("with_h0", [False, True])
def test_rnn_parity(kind, kw, dtype, tol, with_h0):
    tm, em = pair(kind, 5, 6, dtype=dtype, **kw)
    T, B = 4, 3
    dirs = 2 if kw.get("bidirectional") else 1
    L = kw.get("num_layers", 1) * dirs
    H = kw.get("proj_size", 0) or 6

    def make():
        shape = (B, T, 5) if kw.get("batch_first") else (T, B, 5)
        tx, ex = leaf(shape, dtype, 1)
        t_in, e_in, leaves = [tx], [ex], [(tx, ex)]
        if with_h0:
            th, eh = leaf((L, B, H), dtype, 2)
            leaves.append((th, eh))
            if kind == "LSTM":
                tc, ec = leaf((L, B, 6), dtype, 3)
                leaves.append((tc, ec))
                t_in.append((th, tc))
                e_in.append((eh, ec))
            else:
                t_in.append(th)
                e_in.append(eh)
        return t_in, e_in, leaves

    run_pair(tm, em, make, tol)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("kw", [dict(), dict(bidirectional=True, num_layers=2, batch_first=True)])
def test_lstm_parity_threaded_sizes(kw, threads):
    """Sizes where float32 LSTM layers split hidden units across threads (uneven last block: H = 72)."""
    tm, em = pair("LSTM", 7, 72, dtype="float32", **kw)
    T, B, L = 5, 40, 4 if kw.get("bidirectional") else 1
    old = ember.get_num_threads()
    ember.set_num_threads(threads)

    def make():
        tx, ex = leaf((B, T, 7) if kw.get("batch_first") else (T, B, 7), "float32", 1)
        th, eh = leaf((L, B, 72), "float32", 2)
        tc, ec = leaf((L, B, 72), "float32", 3)
        return [tx, (th, tc)], [ex, (eh, ec)], [(tx, ex), (th, eh), (tc, ec)]

    try:
        run_pair(tm, em, make, 1e-4)
    finally:
        ember.set_num_threads(old)


@pytest.mark.parametrize("kind,kw", [("LSTM", dict(bidirectional=True, num_layers=2)), ("GRU", dict()),
                                     ("RNN", dict(bidirectional=True)), ("LSTM", dict(proj_size=2, batch_first=True))])
def test_rnn_unbatched(kind, kw):
    tm, em = pair(kind, 3, 4, **kw)
    H = kw.get("proj_size", 0) or 4
    L = kw.get("num_layers", 1) * (2 if kw.get("bidirectional") else 1)

    def make():
        tx, ex = leaf((5, 3), "float64", 4)
        th, eh = leaf((L, H), "float64", 5)
        if kind == "LSTM":
            tc, ec = leaf((L, 4), "float64", 6)
            return [tx, (th, tc)], [ex, (eh, ec)], [(tx, ex), (th, eh), (tc, ec)]
        return [tx, th], [ex, eh], [(tx, ex), (th, eh)]

    run_pair(tm, em, make, 1e-10)


@pytest.mark.parametrize("kind,kw", [("LSTM", dict(bidirectional=True, num_layers=2)),
                                     ("GRU", dict(bidirectional=True)),
                                     ("RNN", dict()), ("LSTM", dict(proj_size=2, batch_first=True))])
@pytest.mark.parametrize("enforce_sorted", [True, False])
def test_rnn_packed(kind, kw, enforce_sorted):
    torch = get_torch()
    tm, em = pair(kind, 3, 4, **kw)
    lengths = [5, 4, 4, 2, 1] if enforce_sorted else [2, 5, 1, 4, 3]
    bf = kw.get("batch_first", False)

    def make():
        tx, ex = leaf((5, 5, 3), "float64", 7)
        tp = torch.nn.utils.rnn.pack_padded_sequence(tx, lengths, batch_first=bf, enforce_sorted=enforce_sorted)
        ep = ernn.pack_padded_sequence(ex, lengths, batch_first=bf, enforce_sorted=enforce_sorted)
        return [tp], [ep], [(tx, ex)]

    run_pair(tm, em, make, 1e-10)
    # the packed output pads back to the torch result and keeps the permutation
    tx, ex = make()[0][0], make()[1][0]
    to, _ = tm(tx)
    eo, _ = em(ex)
    assert eo.batch_sizes.tolist() == to.batch_sizes.tolist()
    tpad, tl = torch.nn.utils.rnn.pad_packed_sequence(to, batch_first=bf)
    epad, el = ernn.pad_packed_sequence(eo, batch_first=bf)
    close(epad, tpad, 1e-10)
    assert el.tolist() == tl.tolist()


def test_packed_with_h0():
    torch = get_torch()
    tm, em = pair("LSTM", 3, 4, bidirectional=True)
    lengths = [2, 5, 3]

    def make():
        tx, ex = leaf((5, 3, 3), "float64", 8)
        th, eh = leaf((2, 3, 4), "float64", 9)
        tc, ec = leaf((2, 3, 4), "float64", 10)
        tp = torch.nn.utils.rnn.pack_padded_sequence(tx, lengths, enforce_sorted=False)
        ep = ernn.pack_padded_sequence(ex, lengths, enforce_sorted=False)
        return [tp, (th, tc)], [ep, (eh, ec)], [(tx, ex), (th, eh), (tc, ec)]

    run_pair(tm, em, make, 1e-10)


@pytest.mark.parametrize("kind,kw", [("RNNCell", dict()), ("RNNCell", dict(nonlinearity="relu", bias=False)),
                                     ("LSTMCell", dict()), ("GRUCell", dict()), ("GRUCell", dict(bias=False))])
@pytest.mark.parametrize("batched", [True, False])
@pytest.mark.parametrize("with_h0", [True, False])
def test_cells(kind, kw, batched, with_h0):
    tm, em = pair(kind, 3, 4, **kw)
    shape = (2, 3) if batched else (3,)
    hshape = (2, 4) if batched else (4,)

    def make():
        tx, ex = leaf(shape, "float64", 11)
        if not with_h0:
            return [tx], [ex], [(tx, ex)]
        th, eh = leaf(hshape, "float64", 12)
        if kind == "LSTMCell":
            tc, ec = leaf(hshape, "float64", 13)
            return [tx, (th, tc)], [ex, (eh, ec)], [(tx, ex), (th, eh), (tc, ec)]
        return [tx, th], [ex, eh], [(tx, ex), (th, eh)]

    t_in, e_in, leaves = make()
    t_out, e_out = tm(*t_in), em(*e_in)
    t_out = list(t_out) if isinstance(t_out, tuple) else [t_out]
    e_out = list(e_out) if isinstance(e_out, tuple) else [e_out]
    for a, b in zip(e_out, t_out):
        close(a, b, 1e-10)
    sum(o.sum() * (i + 1) for i, o in enumerate(t_out)).backward()
    sum(o.sum() * (i + 1) for i, o in enumerate(e_out)).backward()
    for (n, tp), ep in zip(tm.named_parameters(), em.parameters()):
        close(ep.grad, tp.grad, 1e-9, n)
    for tl, el in leaves:
        close(el.grad, tl.grad, 1e-9)


def test_parameter_names_shapes_and_init():
    torch = get_torch()
    for kind, kw in CONFIGS + [("LSTMCell", {}), ("GRUCell", {}), ("RNNCell", {})]:
        tm = getattr(torch.nn, kind)(5, 6, **kw)
        em = getattr(enn, kind)(5, 6, **kw)
        assert [(n, tuple(p.shape)) for n, p in tm.named_parameters()] == \
               [(n, tuple(p.shape)) for n, p in em.named_parameters()]
        assert repr(em) == repr(tm)
        bound = 1 / np.sqrt(6)
        for p in em.parameters():
            a = p.detach().numpy()
            assert np.all(np.abs(a) <= bound)
            assert a.size < 30 or a.std() > bound / 4  # U(-b, b) has std b / sqrt(3)
    em = enn.LSTM(3, 4, num_layers=2, bidirectional=True)
    assert len(em.all_weights) == 4 and len(em._flat_weights) == 16
    em.flatten_parameters()


def test_dropout_between_layers():
    x = ember.randn(4, 2, 3)
    m = enn.GRU(3, 5, num_layers=3, dropout=0.5)
    m.eval()
    a, _ = m(x)
    b, _ = m(x)
    np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())
    m.train()
    ember.manual_seed(1)
    c, _ = m(x)
    ember.manual_seed(2)
    d, _ = m(x)
    assert not np.allclose(c.detach().numpy(), d.detach().numpy())
    with pytest.warns(UserWarning, match="dropout option adds dropout"):
        enn.LSTM(3, 4, dropout=0.3)


def test_errors_match_torch():
    torch = get_torch()
    cases = [
        ("LSTM", (3, 4), {}, lambda L: (L.randn(2, 3, 5),)),
        ("LSTM", (3, 4), {}, lambda L: (L.randn(3),)),
        ("GRU", (3, 4), {}, lambda L: (L.randn(1, 2, 3, 3),)),
        ("RNN", (3, 4), {}, lambda L: (L.randn(1, 2, 3, 3),)),
        ("LSTM", (3, 4), {}, lambda L: (L.randn(2, 3, 3), (L.zeros(1, 2, 4), L.zeros(1, 2, 4)))),
        ("LSTM", (3, 4), {}, lambda L: (L.randn(2, 3, 3), (L.zeros(1, 3, 4), L.zeros(1, 2, 4)))),
        ("LSTM", (3, 4), {}, lambda L: (L.randn(2, 3), (L.zeros(1, 3, 4), L.zeros(1, 3, 4)))),
        ("GRU", (3, 4), {}, lambda L: (L.randn(2, 3, 3), L.zeros(2, 4))),
        ("GRU", (3, 4), {"bidirectional": True}, lambda L: (L.randn(2, 3, 3), L.zeros(1, 3, 4))),
        ("LSTMCell", (3, 4), {}, lambda L: (L.randn(2, 5),)),
        ("LSTMCell", (3, 4), {}, lambda L: (L.randn(2, 3, 3),)),
        ("GRUCell", (3, 4), {}, lambda L: (L.randn(2, 3), L.zeros(3, 4))),
        ("RNNCell", (3, 4), {}, lambda L: (L.randn(2, 3), L.zeros(2, 5))),
        ("GRUCell", (3, 4), {}, lambda L: (L.randn(2, 3), L.zeros(2, 2, 4))),
        ("GRU", (3, 4), {}, lambda L: (L.randn(2, 3, 3, dtype=L.float64),)),
        ("LSTM", (3, 4), {}, lambda L: (L.randn(0, 3, 3),)),
        ("RNN", (3, 4), {}, lambda L: (L.randn(0, 3),)),
    ]
    for kind, args, kw, inputs in cases:
        with pytest.raises(Exception) as te:
            getattr(torch.nn, kind)(*args, **kw)(*inputs(torch))
        with pytest.raises(type(te.value)) as ee:
            getattr(enn, kind)(*args, **kw)(*inputs(ember))
        assert str(ee.value) == str(te.value).replace("torch.", "ember.")
    for ctor in [lambda nn: nn.RNN(3, 4, nonlinearity="foo"), lambda nn: nn.LSTM(3, 4, dropout=2),
                 lambda nn: nn.LSTM(3, 0), lambda nn: nn.LSTM(3, 4, num_layers=0),
                 lambda nn: nn.LSTM(3, 4, proj_size=4), lambda nn: nn.GRU(3, 4, proj_size=2),
                 lambda nn: nn.LSTM(3, 4.0)]:
        with pytest.raises(Exception) as te:
            ctor(torch.nn)
        with pytest.raises(type(te.value)):
            ctor(enn)


@pytest.mark.parametrize("kind", ["LSTM", "GRU", "RNN"])
def test_gradcheck(kind):
    m = getattr(enn, kind)(2, 3, bidirectional=True).double()
    x = ember.randn(3, 2, 2, dtype=ember.float64, requires_grad=True)
    params = list(m.parameters())

    def f(x, *ps):  # gradcheck perturbs the parameters in place, so m sees them
        return m(x)[0]

    assert ember.autograd.gradcheck(f, (x, *params))


@pytest.mark.parametrize("kind", ["LSTM", "GRU"])
def test_double_backward_matches_torch(kind):
    """A gradient penalty through the recurrence (create_graph=True), as torch computes it."""
    torch = get_torch()
    tm, em = pair(kind, 3, 4)
    tx, ex = leaf((5, 2, 3), "float64", 20)
    for lib, m, x in ((torch, tm, tx), (ember, em, ex)):
        out, _ = m(x)
        g, = lib.autograd.grad(out.pow(2).sum(), x, create_graph=True)
        (g * g).sum().backward()
    for (n, tp), ep in zip(tm.named_parameters(), em.parameters()):
        close(ep.grad, tp.grad, 1e-9, n)
