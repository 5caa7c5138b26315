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
