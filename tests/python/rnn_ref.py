"""The fused LSTM / GRU cell ops of Ember and, for torch, the same step written with its pointwise ops
(shared by opdb_nn.py and test_autograd_ops.py)."""
import ember


def lstm_cell(lib, gates, cx):
    """ember._C._ops._lstm_cell; torch: the same LSTM step written with its pointwise ops."""
    if lib is ember:
        return ember._C._ops._lstm_cell(gates, cx)
    i, f, g, o = gates.chunk(4, 1)
    c = f.sigmoid() * cx + i.sigmoid() * g.tanh()
    return o.sigmoid() * c.tanh(), c


def gru_cell(lib, gi, gh, hx):
    if lib is ember:
        return ember._C._ops._gru_cell(gi, gh, hx)
    ir, iz, in_ = gi.chunk(3, 1)
    hr, hz, hn = gh.chunk(3, 1)
    r, z = (ir + hr).sigmoid(), (iz + hz).sigmoid()
    n = (in_ + r * hn).tanh()
    return (1 - z) * n + z * hx


def lstm_seq(lib, xw, h0, c0, w_hh, reverse=False):
    """ember._C._ops._lstm_seq (a whole LSTM layer direction over projected inputs xw [T, B, 4H]);
    torch: the same recurrence step by step. Returns (hs, cs, gate activations), all in time order."""
    if lib is ember:
        return ember._C._ops._lstm_seq(xw, h0, c0, w_hh, reverse)
    hs, cs, gs = [None] * xw.shape[0], [None] * xw.shape[0], [None] * xw.shape[0]
    h, c = h0, c0
    order = range(xw.shape[0] - 1, -1, -1) if reverse else range(xw.shape[0])
    for t in order:
        pre = xw[t] + h @ w_hh.t()
        i, f, g, o = pre.chunk(4, 1)
        gs[t] = lib.cat([i.sigmoid(), f.sigmoid(), g.tanh(), o.sigmoid()], 1)
        h, c = lstm_cell(lib, pre, c)
        hs[t], cs[t] = h, c
    return lib.stack(hs), lib.stack(cs), lib.stack(gs)
