"""The NN functions torch has at its top level (torch.avg_pool1d, torch.lstm_cell, torch.lstm,
torch.native_dropout, torch.batch_norm_stats, ...) against torch 2.13: values, dtypes, shapes, error
types and gradients."""
import numpy as np
import pytest

import ember
from parity import assert_same

torch = pytest.importorskip("torch")

from namespace_parity import arr, same, same_grads  # noqa: E402  (after the torch skip)


# ---------------------------------------------------------------- NN functions at top level

XN = arr(2, 3, 9)


@pytest.mark.parametrize("call", [
    lambda lib, x: lib.adaptive_avg_pool1d(x, 4),
    lambda lib, x: lib.adaptive_max_pool1d(x, 4),
    lambda lib, x: lib.adaptive_max_pool1d(x, (2,)),
    lambda lib, x: lib.avg_pool1d(x, 2),
    lambda lib, x: lib.avg_pool1d(x, 3, (), 1, True, False),
    lambda lib, x: lib.avg_pool1d(x, 2, 1),
    lambda lib, x: lib.max_pool1d_with_indices(x, 2),
    lambda lib, x: lib.max_pool1d_with_indices(x, 3, 2, 1, 1, True),
    lambda lib, x: lib.constant_pad_nd(x, (1, 2), 3.0),
    lambda lib, x: lib.constant_pad_nd(x, [1, -2, 0, 1]),
    lambda lib, x: lib.pixel_shuffle(x.reshape(2, 9, 3, 1), 3),
    lambda lib, x: lib.pixel_unshuffle(x.reshape(2, 3, 3, 3), 3),
    lambda lib, x: lib.pdist(x[0]),
    lambda lib, x: lib.pdist(x[1], 1.5),
])
def test_nn_aliases_values_and_gradients_match_torch(call):
    same_grads(call, XN)


@pytest.mark.parametrize("call", [
    lambda lib, x: lib.constant_pad_nd(x, [1, 2, 3]),
    lambda lib, x: lib.constant_pad_nd(x, [1] * 8),
    lambda lib, x: lib.grid_sampler_2d(x.reshape(1, 2, 3, 9), lib.zeros(1, 2, 2, 2, 3, dtype=x.dtype), 0, 0, False),
    lambda lib, x: lib.grid_sampler_3d(x.reshape(1, 2, 3, 9), lib.zeros(1, 2, 2, 2, dtype=x.dtype), 0, 0, False),
    lambda lib, x: lib.grid_sampler_3d(x.reshape(1, 2, 3, 3, 3), lib.zeros(1, 2, 2, 2, 3, dtype=x.dtype), 2, 0,
                                       False),
    lambda lib, x: lib.rnn_tanh_cell(x[0, :, :4], x[0, :, :4], lib.ones(4, 5, dtype=x.dtype),
                                     lib.ones(4, 4, dtype=x.dtype)),
    lambda lib, x: lib.lstm_cell(x[0, :, :3], (x[0, :, :4],), lib.ones(16, 3, dtype=x.dtype),
                                 lib.ones(16, 4, dtype=x.dtype)),
    lambda lib, x: lib.native_group_norm(x, None, None, 2, 3, 4, 3, 1e-5),
    lambda lib, x: lib.native_dropout(x, 1.5, True),
    lambda lib, x: lib.native_dropout(lib.ones(4, dtype=lib.int64), 0.5, True),
])
def test_nn_alias_errors_match_torch(call):
    same(lambda lib: call(lib, lib.tensor(XN)))


def test_grid_sampler_and_affine_grid_generator_match_torch():
    theta = np.array([[[0.9, 0.2, 0.1], [-0.1, 1.1, 0.05]]])
    img = arr(1, 2, 4, 5)
    grid = arr(1, 3, 3, 2, low=-1.1, high=1.1)
    for mode in (0, 1, 2):
        for pad in (0, 1, 2):
            for align in (False, True):
                same_grads(lambda lib, i, g: lib.grid_sampler(i, g, mode, pad, align), img, grid)
    same_grads(lambda lib, i, g: lib.grid_sampler_2d(i, g, 0, 0, True), img, grid)
    same_grads(lambda lib, i, g: lib.grid_sampler_3d(i, g, 0, 1, False), arr(1, 2, 3, 4, 5),
               arr(1, 2, 2, 3, 3, low=-1, high=1))
    for align in (False, True):
        same_grads(lambda lib, t: lib.affine_grid_generator(t, [1, 1, 3, 4], align), theta)
    same(lambda lib: lib.affine_grid_generator(lib.zeros(0, 2, 3, dtype=lib.float64), [0, 5, 0, 0], True))
    same(lambda lib: lib.affine_grid_generator(lib.zeros(1, 2, 3, dtype=lib.float64), [1, 5, 0, 3], True))


def test_rnn_cells_match_torch():
    x, h, c = arr(3, 4), arr(3, 5), arr(3, 5)
    w_ih1, w_hh1, b1, b2 = arr(5, 4), arr(5, 5), arr(5), arr(5)
    same_grads(lambda lib, *a: lib.rnn_tanh_cell(*a), x, h, w_ih1, w_hh1, b1, b2)
    same_grads(lambda lib, *a: lib.rnn_relu_cell(*a), x, h, w_ih1, w_hh1, b1, b2)
    same_grads(lambda lib, *a: lib.rnn_tanh_cell(*a), x, h, w_ih1, w_hh1)
    same_grads(lambda lib, *a: lib.gru_cell(*a), x, h, arr(15, 4), arr(15, 5), arr(15), arr(15))
    same_grads(lambda lib, *a: lib.gru_cell(*a), x, h, arr(15, 4), arr(15, 5))
    same_grads(lambda lib, x, h, c, *w: lib.lstm_cell(x, [h, c], *w), x, h, c, arr(20, 4), arr(20, 5), arr(20),
               arr(20))
    same_grads(lambda lib, x, h, c, *w: lib.lstm_cell(x, (h, c), *w), x, h, c, arr(20, 4), arr(20, 5))


def test_native_channel_shuffle_matches_torch():
    x = arr(2, 9, 3)
    same(lambda lib: lib.native_channel_shuffle(lib.tensor(x), 3))
    # torch has no derivative for the native form; Ember's is channel_shuffle's
    same_grads(lambda lib, t: lib.native_channel_shuffle(t, 3) if lib is ember else
               lib.nn.functional.channel_shuffle(t, 3), x)


def test_bilinear_and_conv_tbc_match_torch():
    same_grads(lambda lib, a, b, w, bias: lib.bilinear(a, b, w, bias), arr(3, 4), arr(3, 5), arr(2, 4, 5), arr(2))
    same_grads(lambda lib, x, w, b: lib.conv_tbc(x, w, b, 1), arr(7, 2, 3), arr(3, 3, 4), arr(4))


def test_native_dropout_matches_torch():
    same(lambda lib: lib.native_dropout(lib.tensor(XN), 0.5, False))
    same(lambda lib: lib.native_dropout(lib.tensor(XN), 0.0, True))
    same(lambda lib: lib.native_dropout(lib.tensor(XN), 1.0, True))
    for train in (True, None):
        x = ember.tensor(np.abs(XN) + 1, requires_grad=True)
        out, mask = ember.native_dropout(x, 0.25, train)
        assert mask.dtype == ember.bool and out.shape == x.shape
        keep = mask.numpy()
        assert 0 < keep.mean() < 1
        np.testing.assert_allclose(out.detach().numpy(), np.where(keep, (np.abs(XN) + 1) / 0.75, 0.0), rtol=1e-12)
        out.sum().backward()
        np.testing.assert_allclose(x.grad.numpy(), keep / 0.75, rtol=1e-12)


def test_native_group_norm_matches_group_norm():
    x, w, b = arr(2, 6, 5), arr(6), arr(6)
    out, mean, rstd = ember.native_group_norm(ember.tensor(x), ember.tensor(w), ember.tensor(b), 2, 6, 5, 3, 1e-5)
    tout, tmean, trstd = torch.native_group_norm(torch.tensor(x), torch.tensor(w), torch.tensor(b), 2, 6, 5, 3, 1e-5)
    assert_same((out, mean, rstd), (tout, tmean, trstd))
    same_grads(lambda lib, x, w, b: lib.native_group_norm(x, w, b, 2, 6, 5, 3, 1e-5)[0], x, w, b)


def test_native_norm_is_the_dense_norm():
    x = arr(3, 4)
    # torch has this kernel for sparse tensors only; compare with the dense norm
    assert_same(ember.native_norm(ember.tensor(x)), torch.tensor(x).norm())
    assert_same(ember.native_norm(ember.tensor(x), 1, [1], True, None), torch.tensor(x).norm(1, 1, True))
    assert_same(ember.native_norm(ember.tensor(x, dtype=ember.float32), None, [0], False, ember.float64),
                torch.tensor(x, dtype=torch.float32).to(torch.float64).norm(2, 0))


def test_batch_norm_stat_helpers_reproduce_batch_norm():
    """batch_norm_stats/gather/elemt make batch norm's training forward; backward_reduce/elemt its
    input, weight and bias gradients (compared with torch's batch_norm autograd)."""
    x, w, b, gy = arr(6, 3, 4), arr(3), arr(3), arr(6, 3, 4)
    t_x, t_w, t_b = (torch.tensor(a, requires_grad=True) for a in (x, w, b))
    t_rm, t_rv = torch.zeros(3, dtype=torch.float64), torch.ones(3, dtype=torch.float64)
    t_y = torch.nn.functional.batch_norm(t_x, t_rm, t_rv, t_w, t_b, training=True, momentum=0.1, eps=1e-5)
    t_y.backward(torch.tensor(gy))

    ex = ember.tensor(x)
    halves = [ex[:2], ex[2:]]  # two "devices" with 2 and 4 samples
    stats = [ember.batch_norm_stats(h, 1e-5) for h in halves]
    rm, rv = ember.zeros(3, dtype=ember.float64), ember.ones(3, dtype=ember.float64)
    mean, invstd = ember.batch_norm_gather_stats_with_counts(
        ex, ember.stack([s[0] for s in stats]), ember.stack([s[1] for s in stats]), rm, rv, 0.1, 1e-5,
        ember.tensor([2.0 * 4, 4.0 * 4], dtype=ember.float64))
    y = ember.batch_norm_elemt(ex, ember.tensor(w), ember.tensor(b), mean, invstd, 1e-5)
    assert_same(y, t_y.detach())
    assert_same((rm, rv), (t_rm, t_rv))
    sum_dy, sum_dy_xmu, gw, gb = ember.batch_norm_backward_reduce(ember.tensor(gy), ex, mean, invstd,
                                                                  ember.tensor(w), True, True, True)
    assert_same((gw, gb), (t_w.grad, t_b.grad))
    gx = ember.batch_norm_backward_elemt(ember.tensor(gy), ex, mean, invstd, ember.tensor(w), sum_dy, sum_dy_xmu,
                                         ember.tensor([8, 16], dtype=ember.int32))
    assert_same(gx, t_x.grad)
    assert ember.batch_norm_backward_reduce(ember.tensor(gy), ex, mean, invstd, None, False, False, False) == \
        (None, None, None, None)
    # equal-count form
    rm2, rv2 = ember.zeros(3, dtype=ember.float64), ember.ones(3, dtype=ember.float64)
    halves = [ex[:3], ex[3:]]
    stats = [ember.batch_norm_stats(h, 1e-5) for h in halves]
    m2, i2 = ember.batch_norm_gather_stats(ex, ember.stack([s[0] for s in stats]), ember.stack([s[1] for s in stats]),
                                           rm2, rv2, 0.1, 1e-5, 12)
    assert_same((m2, i2), (torch.tensor(mean.numpy()), torch.tensor(invstd.numpy())))
    assert_same((rm2, rv2), (t_rm, t_rv))


def test_batch_norm_update_stats_matches_torch():
    x = arr(5, 3, 2)

    def call(lib):
        rm, rv = lib.zeros(3, dtype=lib.float64), lib.ones(3, dtype=lib.float64)
        mean, var = lib.batch_norm_update_stats(lib.tensor(x), rm, rv, 0.3)
        return mean, var, rm, rv
    same(call)


def _rnn_params(lib, params):
    return [lib.tensor(p, requires_grad=True) for p in params]


@pytest.mark.parametrize("mode, module", [("rnn_tanh", "RNN"), ("rnn_relu", "RNN"), ("gru", "GRU"),
                                          ("lstm", "LSTM")])
@pytest.mark.parametrize("bidirectional, batch_first", [(False, False), (True, True)])
def test_whole_recurrences_match_torch(mode, module, bidirectional, batch_first):
    kw = {"nonlinearity": "relu"} if mode == "rnn_relu" else {}
    ref = getattr(torch.nn, module)(3, 4, num_layers=2, bidirectional=bidirectional, batch_first=batch_first,
                                    **kw).double()
    params = [p.detach().numpy() for p in ref._flat_weights]
    x = arr(2, 5, 3) if batch_first else arr(5, 2, 3)
    layers = 2 * (2 if bidirectional else 1)
    h, c = arr(layers, 2, 4), arr(layers, 2, 4)

    def call(lib, x, h, c, *ps):
        hx = [h, c] if mode == "lstm" else h
        return getattr(lib, mode)(x, hx, list(ps), True, 2, 0.0, False, bidirectional, batch_first)
    same_grads(call, x, h, c, *params)


@pytest.mark.parametrize("mode, module", [("gru", "GRU"), ("lstm", "LSTM")])
def test_packed_recurrences_match_torch(mode, module):
    ref = getattr(torch.nn, module)(3, 4, bidirectional=True, bias=False).double()
    params = [p.detach().numpy() for p in ref._flat_weights]
    seqs = [arr(5, 3), arr(3, 3), arr(2, 3)]
    packed = torch.nn.utils.rnn.pack_sequence([torch.tensor(s) for s in seqs])
    data, sizes = packed.data.numpy(), packed.batch_sizes.numpy()
    h = arr(2, 3, 4)

    def call(lib, d, h, *ps):
        hx = [h, h * 0.5] if mode == "lstm" else h
        return getattr(lib, mode)(d, lib.tensor(sizes), hx, list(ps), False, 1, 0.0, False, True)
    same_grads(call, data, h, *params)
