"""ember.amp against torch.amp 2.13 on the CPU: the autocast ops' output dtypes and values, the ops
left alone, nesting, the decorator, the weight cache, gradients through the casts, custom_fwd /
custom_bwd, the torch.* state functions, and GradScaler trajectories (with injected inf/NaN) and its
state_dict."""
import pickle
import threading
import warnings

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")

LIBS = {"ember": ember, "torch": torch}
BF16_TOL = dict(rtol=2e-2, atol=2e-2)


def _np(shape, seed, low=None, high=None):
    rng = np.random.default_rng(seed)
    if low is not None:
        return rng.uniform(low, high, shape)
    return rng.standard_normal(shape)


def _pair(array, dtype="float32"):
    array = np.asarray(array)
    return (ember.tensor(array.tolist(), dtype=getattr(ember, dtype)),
            torch.tensor(array, dtype=getattr(torch, dtype)))


def _dtype_name(t):
    return str(t.dtype).split(".")[-1]


def _to_np(t):
    return t.detach().float().numpy() if _dtype_name(t) in ("bfloat16", "float16") else t.detach().numpy()


def _outputs(r):
    return list(r) if isinstance(r, (tuple, list)) else [r]


# ---------------------------------------------------------------- the ops of PyTorch's CPU lists
# (name, call(m, *inputs), input specs): spec = (shape, dtype) or (shape, dtype, low, high) or a
# ready array; dtype 'long' inputs hold class indices / lengths. `values`: the output indices whose
# values are compared (all by default); the dtypes of every output are compared.
def _F(m):
    return m.nn.functional


LOWER_PRECISION_OPS = [
    ("mm", lambda m, a, b: m.mm(a, b), [((4, 5), "float32"), ((5, 3), "float32")]),
    ("bmm", lambda m, a, b: m.bmm(a, b), [((2, 4, 5), "float32"), ((2, 5, 3), "float32")]),
    ("matmul", lambda m, a, b: m.matmul(a, b), [((2, 4, 5), "float32"), ((5, 3), "float32")]),
    ("addmm", lambda m, c, a, b: m.addmm(c, a, b, beta=0.5, alpha=2.0),
     [((4, 3), "float32"), ((4, 5), "float32"), ((5, 3), "float32")]),
    ("baddbmm", lambda m, c, a, b: m.baddbmm(c, a, b),
     [((2, 4, 3), "float32"), ((2, 4, 5), "float32"), ((2, 5, 3), "float32")]),
    ("addbmm", lambda m, c, a, b: m.addbmm(c, a, b),
     [((4, 3), "float32"), ((2, 4, 5), "float32"), ((2, 5, 3), "float32")]),
    ("linear", lambda m, x, w, b: _F(m).linear(x, w, b), [((3, 5), "float32"), ((4, 5), "float32"), ((4,), "float32")]),
    ("conv1d", lambda m, x, w, b: _F(m).conv1d(x, w, b, padding=1),
     [((2, 3, 7), "float32"), ((4, 3, 3), "float32"), ((4,), "float32")]),
    ("conv1d.padding", lambda m, x, w, b: _F(m).conv1d(x, w, b, padding="same"),
     [((2, 3, 7), "float32"), ((4, 3, 3), "float32"), ((4,), "float32")]),
    ("conv2d", lambda m, x, w, b: _F(m).conv2d(x, w, b, stride=2),
     [((2, 3, 6, 6), "float32"), ((4, 3, 3, 3), "float32"), ((4,), "float32")]),
    ("conv2d.padding", lambda m, x, w: _F(m).conv2d(x, w, padding="valid"),
     [((2, 3, 6, 6), "float32"), ((4, 3, 3, 3), "float32")]),
    ("conv3d", lambda m, x, w: _F(m).conv3d(x, w), [((1, 2, 4, 4, 4), "float32"), ((3, 2, 2, 2, 2), "float32")]),
    ("conv3d.padding", lambda m, x, w: _F(m).conv3d(x, w, padding="same"),
     [((1, 2, 4, 4, 4), "float32"), ((3, 2, 3, 3, 3), "float32")]),
    ("conv_transpose1d", lambda m, x, w: _F(m).conv_transpose1d(x, w, stride=2),
     [((2, 3, 5), "float32"), ((3, 4, 3), "float32")]),
    ("conv_transpose2d", lambda m, x, w, b: _F(m).conv_transpose2d(x, w, b),
     [((2, 3, 4, 4), "float32"), ((3, 2, 3, 3), "float32"), ((2,), "float32")]),
    ("conv_transpose3d", lambda m, x, w: _F(m).conv_transpose3d(x, w),
     [((1, 2, 3, 3, 3), "float32"), ((2, 2, 2, 2, 2), "float32")]),
    ("prelu", lambda m, x, w: _F(m).prelu(x, w), [((2, 3, 4), "float32"), ((3,), "float32")]),
    # written in Python by Ember, one autocast op in PyTorch
    ("scaled_dot_product_attention", lambda m, q, k, v: _F(m).scaled_dot_product_attention(q, k, v, is_causal=True),
     [((1, 2, 3, 4), "float32"), ((1, 2, 3, 4), "float32"), ((1, 2, 3, 4), "float32")]),
    # PyTorch's CPU LSTM (mkldnn_rnn_layer) runs in bfloat16, states included; Ember's _lstm_seq likewise
    ("_lstm_seq", lambda m, x: _lstm(m, x)[0], [((2, 5, 4), "float32")]),
    ("_lstm_seq (h_n, c_n)", lambda m, x: _lstm(m, x)[1][1], [((2, 5, 4), "float32")]),
    ("conv_tbc", lambda m, x, w, b: _F(m).conv_tbc(x, w, b, 1), [((5, 2, 3), "float32"), ((3, 3, 4), "float32"),
                                                            ((4,), "float32")]),
]

def _wc(m, x):
    """A well-conditioned matrix from x: 2I + 0.1 x (its lower part is positive definite)."""
    return x * 0.1 + m.eye(x.shape[-1], dtype=x.dtype) * 2


FP32_OPS = [
    ("prod", lambda m, x: m.prod(x), [((3, 4), "bfloat16", 0.5, 1.5)]),
    ("prod.dim_int", lambda m, x: m.prod(x, 1), [((3, 4), "bfloat16", 0.5, 1.5)]),
    ("cdist", lambda m, a, b: m.cdist(a, b), [((4, 3), "bfloat16"), ((5, 3), "bfloat16")]),
    ("trace", lambda m, x: m.trace(x), [((4, 4), "bfloat16")]),
    # linear algebra (well conditioned: 2I + 0.1 x; the factorisations read only what they need)
    ("linalg_cholesky_ex", lambda m, x: m.linalg.cholesky_ex(_wc(m, x))[0], [((3, 3), "bfloat16")]),
    ("cholesky", lambda m, x: m.cholesky(_wc(m, x)), [((3, 3), "bfloat16")]),
    ("cholesky_solve", lambda m, x, b: m.cholesky_solve(b, _wc(m, x).tril()), [((3, 3), "bfloat16"), ((3, 2), "bfloat16")]),
    ("cholesky_inverse", lambda m, x: m.cholesky_inverse(_wc(m, x).tril()), [((3, 3), "bfloat16")]),
    ("inverse", lambda m, x: m.inverse(_wc(m, x)), [((3, 3), "bfloat16")]),
    ("pinverse", lambda m, x: m.pinverse(x), [((3, 4), "float32")]),
    ("qr", lambda m, x: m.qr(x)[1].abs(), [((4, 3), "bfloat16")]),
    ("svd", lambda m, x: m.svd(x)[1], [((4, 3), "bfloat16")]),
    ("geqrf", lambda m, x: m.geqrf(x)[0].abs(), [((4, 3), "bfloat16")]),
    ("linalg_householder_product", lambda m, a, t: m.linalg.householder_product(a, t),
     [((4, 3), "bfloat16"), ((3,), "bfloat16")]),
    ("orgqr", lambda m, a, t: m.orgqr(a, t), [((4, 3), "bfloat16"), ((3,), "bfloat16")]),
    ("ormqr", lambda m, a, t, c: m.ormqr(a, t, c), [((4, 3), "bfloat16"), ((3,), "bfloat16"), ((4, 2), "bfloat16")]),
    ("lu_solve", lambda m, x, b: m.lu_solve(b, *m.linalg.lu_factor(_wc(m, x))), [((3, 3), "float32"), ((3, 2), "bfloat16")]),
    ("triangular_solve", lambda m, x, b: m.triangular_solve(b, _wc(m, x).triu())[0],
     [((3, 3), "bfloat16"), ((3, 2), "bfloat16")]),
    ("quantile", lambda m, x: m.quantile(x, m.tensor([0.25, 0.5]), dim=1), [((3, 6), "float32")]),
    ("quantile.scalar", lambda m, x: m.quantile(x, 0.3), [((3, 6), "bfloat16")]),
    ("nanquantile", lambda m, x: m.nanquantile(x, m.tensor([0.75]), dim=0), [((3, 6), "float32")]),
    ("nanquantile.scalar", lambda m, x: m.nanquantile(x, 0.5, dim=1), [((3, 6), "bfloat16")]),
    ("max_pool3d", lambda m, x: _F(m).max_pool3d(x, 2), [((1, 2, 4, 4, 4), "bfloat16")]),
    ("linalg_eig", lambda m, x: m.linalg.eigvals(_wc(m, x)).abs(), [((3, 3), "bfloat16")]),
    ("view_as_complex", lambda m, x: m.view_as_real(m.view_as_complex(x) * 2), [((3, 2), "bfloat16")]),
    ("polar", lambda m, a, b: m.view_as_real(m.polar(a, b)), [((3,), "bfloat16"), ((3,), "bfloat16")]),
    ("grid_sampler", lambda m, x, g: _F(m).grid_sample(x, g, align_corners=False),
     [((1, 2, 4, 4), "bfloat16"), ((1, 3, 3, 2), "bfloat16", -1, 1)]),
    ("mse_loss", lambda m, x, y: _F(m).mse_loss(x, y), [((4, 5), "bfloat16"), ((4, 5), "bfloat16")]),
    ("l1_loss", lambda m, x, y: _F(m).l1_loss(x, y), [((4, 5), "bfloat16"), ((4, 5), "bfloat16")]),
    ("smooth_l1_loss", lambda m, x, y: _F(m).smooth_l1_loss(x, y), [((4, 5), "bfloat16"), ((4, 5), "bfloat16")]),
    ("huber_loss", lambda m, x, y: _F(m).huber_loss(x, y, delta=0.5), [((4, 5), "bfloat16"), ((4, 5), "bfloat16")]),
    ("soft_margin_loss", lambda m, x, y: _F(m).soft_margin_loss(x, y), [((4, 5), "bfloat16"), ((4, 5), "bfloat16")]),
    ("kl_div", lambda m, x, y: _F(m).kl_div(x, y, reduction="batchmean"),
     [((4, 5), "bfloat16"), ((4, 5), "bfloat16", 0.1, 1)]),
    ("binary_cross_entropy", lambda m, x, y: _F(m).binary_cross_entropy(x, y),
     [((4, 5), "bfloat16", 0.05, 0.95), ((4, 5), "bfloat16", 0, 1)]),
    ("binary_cross_entropy_with_logits", lambda m, x, y: _F(m).binary_cross_entropy_with_logits(x, y),
     [((4, 5), "bfloat16"), ((4, 5), "bfloat16", 0, 1)]),
    ("poisson_nll_loss", lambda m, x, y: _F(m).poisson_nll_loss(x, y),
     [((4, 5), "bfloat16"), ((4, 5), "bfloat16", 0, 3)]),
    ("margin_ranking_loss", lambda m, a, b, y: _F(m).margin_ranking_loss(a, b, y.sign()),
     [((6,), "bfloat16"), ((6,), "bfloat16"), ((6,), "bfloat16")]),
    ("hinge_embedding_loss", lambda m, x, y: _F(m).hinge_embedding_loss(x, y.sign()),
     [((6,), "bfloat16"), ((6,), "bfloat16")]),
    ("cosine_embedding_loss", lambda m, a, b, y: _F(m).cosine_embedding_loss(a, b, y.sign()),
     [((4, 5), "bfloat16"), ((4, 5), "bfloat16"), ((4,), "bfloat16")]),
    ("triplet_margin_loss", lambda m, a, p, n: _F(m).triplet_margin_loss(a, p, n),
     [((4, 5), "bfloat16"), ((4, 5), "bfloat16"), ((4, 5), "bfloat16")]),
    ("multi_margin_loss", lambda m, x, y: _F(m).multi_margin_loss(x, y),
     [((4, 5), "bfloat16"), (np.array([0, 3, 4, 1]), "long")]),
    ("nll_loss", lambda m, x, y: _F(m).nll_loss(x, y), [((4, 5), "bfloat16"), (np.array([0, 3, 4, 1]), "long")]),
    ("nll_loss (4-D)", lambda m, x, y: _F(m).nll_loss(x, y),
     [((2, 3, 2, 2), "bfloat16"), (np.array([[[0, 1], [2, 0]], [[1, 1], [0, 2]]]), "long")]),
    ("cross_entropy_loss", lambda m, x, y: _F(m).cross_entropy(x, y, label_smoothing=0.1),
     [((4, 5), "bfloat16"), (np.array([0, 3, 4, 1]), "long")]),
    ("ctc_loss", lambda m, lp, t, il, tl: _F(m).ctc_loss(lp, t, il, tl),
     [((6, 2, 4), "bfloat16"), (np.array([[1, 2], [3, 1]]), "long"), (np.array([6, 5]), "long"),
      (np.array([2, 1]), "long")]),
    ("linalg_inv", lambda m, a: m.linalg.inv(a + 4 * m.eye(3)), [((3, 3), "bfloat16")]),
    ("linalg_solve", lambda m, a, b: m.linalg.solve(a + 4 * m.eye(3), b), [((3, 3), "bfloat16"), ((3, 2), "bfloat16")]),
    ("linalg_cholesky", lambda m, a: m.linalg.cholesky(a @ a.mT + m.eye(3)), [((3, 3), "float32")]),
    ("linalg_eigh", lambda m, a: m.linalg.eigh(a + a.mT), [((3, 3), "bfloat16")], [0]),
    ("linalg_svd", lambda m, a: m.linalg.svd(a), [((4, 3), "bfloat16")], [1]),
    ("linalg_qr", lambda m, a: m.linalg.qr(a), [((4, 3), "bfloat16")], []),
    # written in Python by Ember, one autocast op in PyTorch
    ("avg_pool3d", lambda m, x: _F(m).avg_pool3d(x, 2), [((1, 2, 4, 4, 4), "bfloat16")]),
    ("adaptive_avg_pool3d", lambda m, x: _F(m).adaptive_avg_pool3d(x, 2), [((1, 2, 5, 5, 5), "bfloat16")]),
    ("adaptive_max_pool3d", lambda m, x: _F(m).adaptive_max_pool3d(x, 2), [((1, 2, 5, 5, 5), "bfloat16")]),
    ("max_unpool2d", lambda m, x: _F(m).max_unpool2d(*_F(m).max_pool2d(x, 2, return_indices=True), 2),
     [((1, 2, 4, 4), "bfloat16")]),
    ("max_unpool3d", lambda m, x: _F(m).max_unpool3d(*_F(m).max_pool3d(x, 2, return_indices=True), 2),
     [((1, 1, 4, 4, 4), "bfloat16")]),
    ("pad (reflect 2-d)", lambda m, x: _F(m).pad(x, (1, 1, 2, 0), mode="reflect"), [((1, 2, 4, 4), "bfloat16")]),
    ("pad (replicate 3-d)", lambda m, x: _F(m).pad(x, (1, 1, 1, 0, 0, 1), mode="replicate"),
     [((1, 1, 3, 3, 3), "bfloat16")]),
    ("multilabel_margin_loss", lambda m, x, y: _F(m).multilabel_margin_loss(x, y),
     [((2, 4), "bfloat16"), (np.array([[3, 0, -1, 1], [1, 2, 3, -1]]), "long")]),
    ("fractional_max_pool2d", lambda m, x, r: _F(m).fractional_max_pool2d(x, 2, output_size=3, _random_samples=r),
     [((1, 2, 6, 6), "bfloat16"), ((1, 2, 2), "bfloat16", 0, 1)]),
]

def _module(m, build, seed=0):
    """A module of `m` whose parameters hold the same values in ember and torch."""
    mod = build(m)
    with m.no_grad():
        for k, p in enumerate(mod.parameters()):
            p.copy_(m.tensor((0.3 * _np(tuple(p.shape), seed + 100 + k)).tolist()))
    return mod


def _lstm(m, x):
    return _module(m, lambda m: m.nn.LSTM(4, 3, num_layers=2, bidirectional=True, batch_first=True))(x)


def _lstm_grads_in_region(m, x):
    """The LSTM's weight gradients taken inside the region: its backward op stays out of autocast."""
    mod = _module(m, lambda m: m.nn.LSTM(4, 3, batch_first=True))
    return m.autograd.grad(mod(x)[0].float().pow(2).sum(), list(mod.parameters()))


PROMOTE_OPS = [
    ("cat", lambda m, a, b: m.cat([a, b]), [((2, 3), "bfloat16"), ((2, 3), "float32")]),
    ("cat (all bf16)", lambda m, a, b: m.cat([a, b], 1), [((2, 3), "bfloat16"), ((2, 3), "bfloat16")]),
    ("cat (float64)", lambda m, a, b: m.cat([a, b]), [((2, 3), "float64"), ((2, 3), "bfloat16")]),
    ("stack", lambda m, a, b: m.stack([a, b]), [((2, 3), "float32"), ((2, 3), "bfloat16")]),
    ("index_copy", lambda m, a, i, s: a.index_copy(0, i, s),
     [((4, 3), "bfloat16"), (np.array([2, 0]), "long"), ((2, 3), "float32")]),
    # Ember's fused recurrent cells (bfloat16 gates from the autocast linears, float32 state): PyTorch's
    # LSTMCell, GRUCell and GRU return float32
    ("_lstm_cell", lambda m, x, h, c: _module(m, lambda m: m.nn.LSTMCell(4, 3))(x, (h, c)),
     [((2, 4), "float32"), ((2, 3), "float32"), ((2, 3), "float32")]),
    ("_gru_cell", lambda m, x, h: _module(m, lambda m: m.nn.GRUCell(4, 3))(x, h), [((2, 4), "float32"), ((2, 3), "float32")]),
    ("GRU", lambda m, x: _module(m, lambda m: m.nn.GRU(4, 3, batch_first=True))(x), [((2, 5, 4), "float32")]),
]

# ops outside the lists: they run in their inputs' dtype (torch's fallthrough), also when Ember builds
# them from listed ops
UNLISTED_OPS = [
    ("add", lambda m, a, b: a + b, [((3, 4), "float32"), ((3, 4), "bfloat16")]),
    ("relu", lambda m, x: m.relu(x), [((3, 4), "float32")]),
    ("softmax", lambda m, x: m.softmax(x, 1), [((3, 4), "bfloat16")]),
    ("log_softmax", lambda m, x: _F(m).log_softmax(x, 1), [((3, 4), "float32")]),
    ("layer_norm", lambda m, x: _F(m).layer_norm(x, (4,)), [((3, 4), "bfloat16")]),
    ("sum", lambda m, x: x.sum(), [((3, 4), "bfloat16")]),
    ("mean", lambda m, x: x.mean(), [((3, 4), "float32")]),
    ("gelu", lambda m, x: _F(m).gelu(x), [((3, 4), "float32")]),
    ("mv", lambda m, a, v: m.mv(a, v), [((3, 4), "float32"), ((4,), "float32")]),
    ("dot", lambda m, a, b: m.dot(a, b), [((4,), "float32"), ((4,), "float32")]),
    ("vdot", lambda m, a, b: m.vdot(a, b), [((4,), "float32"), ((4,), "float32")]),
    ("adaptive_avg_pool2d", lambda m, x: _F(m).adaptive_avg_pool2d(x, 3), [((1, 2, 5, 5), "float32")]),
    ("max_pool3d (indices)", lambda m, x: _F(m).max_pool3d(x, 2, return_indices=True),
     [((1, 2, 4, 4, 4), "bfloat16")]),
    ("pad (reflect 3-d)", lambda m, x: _F(m).pad(x, (1, 1, 1, 0, 0, 1), mode="reflect"),
     [((1, 1, 3, 3, 3), "bfloat16")]),
    ("pad (circular)", lambda m, x: _F(m).pad(x, (1, 1), mode="circular"), [((1, 2, 4), "bfloat16")]),
    ("_lstm_seq_backward", _lstm_grads_in_region, [((2, 5, 4), "float32")]),
    ("addmv", lambda m, c, a, v: m.addmv(c, a, v), [((3,), "float32"), ((3, 4), "float32"), ((4,), "float32")]),
    ("outer", lambda m, a, b: m.outer(a, b), [((3,), "float32"), ((4,), "float32")]),
    ("convolution", lambda m, x, w: m.convolution(x, w, None, [1], [0], [1], False, [0], 1),
     [((2, 3, 7), "float32"), ((4, 3, 3), "float32")]),
    ("bilinear", lambda m, a, b, w: _F(m).bilinear(a, b, w), [((3, 4), "float32"), ((3, 5), "float32"),
                                                              ((2, 4, 5), "float32")]),
    ("einsum", lambda m, a, b: m.einsum("ij,jk->ik", a, b), [((3, 4), "float32"), ((4, 5), "float32")]),
    ("tensordot", lambda m, a, b: m.tensordot(a, b, dims=1), [((3, 4), "float32"), ((4, 5), "float32")]),
    ("tensordot (all dims)", lambda m, a, b: m.tensordot(a, b, dims=2), [((3, 4), "float32"), ((3, 4), "float32")]),
    ("inner (1-d)", lambda m, a, b: m.inner(a, b), [((4,), "float32"), ((4,), "float32")]),
    ("inner (2-d)", lambda m, a, b: m.inner(a, b), [((3, 4), "float32"), ((2, 4), "float32")]),
    ("avg_pool2d", lambda m, x: _F(m).avg_pool2d(x, 2), [((1, 2, 4, 4), "bfloat16")]),
    ("batch_norm", lambda m, x: _F(m).batch_norm(x, None, None, training=True), [((4, 3), "bfloat16")]),
]


def _make_inputs(specs, seed=0):
    e_in, t_in = [], []
    for k, spec in enumerate(specs):
        if isinstance(spec[0], np.ndarray):
            array, dtype = spec
            e, t = ember.tensor(array.tolist(), dtype=ember.int64), torch.tensor(array, dtype=torch.int64)
        else:
            shape, dtype, *rng = spec
            array = _np(shape, seed + k, *rng)
            if dtype in ("bfloat16", "float16"):  # the same rounded values on both sides
                t = torch.tensor(array, dtype=torch.float32).to(getattr(torch, dtype))
                e = ember.tensor(array.tolist(), dtype=ember.float32).to(getattr(ember, dtype))
            else:
                e, t = _pair(array, dtype)
        e_in.append(e)
        t_in.append(t)
    return e_in, t_in


def _run_both(fn, specs, e_kwargs=None, t_kwargs=None, seed=0):
    e_in, t_in = _make_inputs(specs, seed)
    with ember.autocast("cpu", **(e_kwargs or {})):
        e_out = fn(ember, *e_in)
    with torch.autocast("cpu", **(t_kwargs or {})):
        t_out = fn(torch, *t_in)
    return _outputs(e_out), _outputs(t_out)


def _oracle_run(name, fn, specs, *autocast_kwargs):
    """_run_both, skipping where the oracle cannot run here: torch's reduced-precision CPU LSTM is a
    oneDNN primitive that needs AVX-512 (BF16)."""
    try:
        return _run_both(fn, specs, *autocast_kwargs)
    except RuntimeError as err:
        if name.startswith("_lstm_seq") and "could not create a primitive descriptor" in str(err):
            pytest.skip("PyTorch's reduced-precision CPU LSTM needs a oneDNN primitive this CPU lacks")
        raise


def _check(entry, tol):
    name, fn, specs, *values = entry
    e_out, t_out = _oracle_run(name, fn, specs)
    assert len(e_out) == len(t_out), name
    assert [_dtype_name(x) for x in e_out] == [_dtype_name(x) for x in t_out], name
    for i in (values[0] if values else range(len(t_out))):
        np.testing.assert_allclose(_to_np(e_out[i]), _to_np(t_out[i]), err_msg=name, **tol)


@pytest.mark.parametrize("entry", LOWER_PRECISION_OPS, ids=[e[0] for e in LOWER_PRECISION_OPS])
@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_lower_precision_ops_match_torch(entry, dtype):
    if dtype == "float16" and entry[0].startswith("_lstm_seq"):
        pytest.skip("PyTorch's CPU LSTM under float16 autocast needs a oneDNN primitive this CPU may lack")
    e_out, t_out = _oracle_run(entry[0], entry[1], entry[2], {"dtype": getattr(ember, dtype)},
                               {"dtype": getattr(torch, dtype)})
    assert _dtype_name(e_out[0]) == _dtype_name(t_out[0]) == dtype, entry[0]
    tol = BF16_TOL if dtype == "bfloat16" else dict(rtol=5e-3, atol=5e-3)
    np.testing.assert_allclose(_to_np(e_out[0]), _to_np(t_out[0]), err_msg=entry[0], **tol)


@pytest.mark.parametrize("entry", FP32_OPS, ids=[e[0] for e in FP32_OPS])
def test_fp32_ops_match_torch(entry):
    _check(entry, dict(rtol=1e-4, atol=1e-4))


@pytest.mark.parametrize("entry", PROMOTE_OPS, ids=[e[0] for e in PROMOTE_OPS])
def test_promote_ops_match_torch(entry):
    # the recurrent cells run their bfloat16-rounded gates through float32 math: bfloat16 precision
    _check(entry, BF16_TOL if entry[0][0] in "_G" else dict(rtol=0, atol=0))


@pytest.mark.parametrize("entry", UNLISTED_OPS, ids=[e[0] for e in UNLISTED_OPS])
def test_unlisted_ops_keep_their_dtype(entry):
    # PyTorch's bilinear returns float32 computed through its bfloat16 bmm: compare at bfloat16 precision
    reduced = entry[0] in ("bilinear", "_lstm_seq_backward") or any(spec[1] == "bfloat16" for spec in entry[2])
    _check(entry, BF16_TOL if reduced else dict(rtol=1e-5, atol=1e-5))


def _autocast_keyed_ops():
    import yaml
    import pathlib
    root = pathlib.Path(__file__).resolve().parents[2]
    return {e["func"].split("(")[0]: e["autocast"] for e in yaml.safe_load(open(root / "ops.yaml")) if "autocast" in e}


def test_every_autocast_key_is_checked_against_torch():
    """Each ops.yaml entry with an autocast key has a parity case above, under its policy."""
    tables = {"lower_precision_fp": LOWER_PRECISION_OPS, "fp32": FP32_OPS, "promote": PROMOTE_OPS,
              "disabled": UNLISTED_OPS}
    keyed = _autocast_keyed_ops()
    assert keyed, "no op carries an autocast key"
    aliases = {"nll_loss_nd": "nll_loss (4-D)", "ctc_loss.IntList": "ctc_loss", "adaptive_avg_pool_nd": "adaptive_avg_pool2d"}
    for op, policy in keyed.items():
        names = {e[0] for e in tables[policy]}
        assert op in names or aliases.get(op) in names, f"{op} ({policy}) has no parity case"


# PyTorch 2.13's CPU autocast lists (aten/src/ATen/autocast_mode.cpp), by op name
TORCH_CPU_LOWER_PRECISION = """conv1d conv2d conv3d bmm mm linalg_vecdot baddbmm addmm addbmm linear _convolution matmul
    conv_tbc mkldnn_rnn_layer conv_transpose1d conv_transpose2d conv_transpose3d prelu scaled_dot_product_attention
    _native_multi_head_attention""".split()
TORCH_CPU_FP32 = """avg_pool3d binary_cross_entropy grid_sampler polar prod quantile nanquantile stft cdist trace
    view_as_complex cholesky cholesky_inverse cholesky_solve inverse lu_solve orgqr ormqr pinverse max_pool3d max_unpool2d
    max_unpool3d adaptive_avg_pool3d reflection_pad1d reflection_pad2d replication_pad1d replication_pad2d
    replication_pad3d mse_loss cosine_embedding_loss nll_loss nll_loss2d hinge_embedding_loss poisson_nll_loss
    smooth_l1_loss cross_entropy_loss l1_loss huber_loss margin_ranking_loss soft_margin_loss triplet_margin_loss
    multi_margin_loss ctc_loss kl_div multilabel_margin_loss binary_cross_entropy_with_logits fft_fft fft_ifft fft_fft2
    fft_ifft2 fft_fftn fft_ifftn fft_rfft fft_irfft fft_rfft2 fft_irfft2 fft_rfftn fft_irfftn fft_hfft fft_ihfft
    linalg_cond linalg_matrix_rank linalg_solve linalg_cholesky linalg_svdvals linalg_eigvals linalg_eigvalsh linalg_inv
    linalg_householder_product linalg_tensorinv linalg_tensorsolve fake_quantize_per_tensor_affine geqrf _lu_with_info
    qr svd triangular_solve fractional_max_pool2d fractional_max_pool3d adaptive_max_pool3d linalg_qr
    linalg_cholesky_ex linalg_svd linalg_eig linalg_eigh linalg_lstsq linalg_inv_ex""".split()
TORCH_CPU_PROMOTE = ["stack", "cat", "index_copy"]


def test_ops_of_torch_lists_carry_the_autocast_key():
    """An ops.yaml op that PyTorch's CPU autocast lists name has that policy (ops added later included)."""
    import pathlib
    import yaml
    root = pathlib.Path(__file__).resolve().parents[2]
    policies = {**{n: "lower_precision_fp" for n in TORCH_CPU_LOWER_PRECISION}, **{n: "fp32" for n in TORCH_CPU_FP32},
                **{n: "promote" for n in TORCH_CPU_PROMOTE}}
    wrong = []
    for entry in yaml.safe_load(open(root / "ops.yaml")):
        base = entry["func"].split("(")[0].split(".")[0]
        if base in policies and entry.get("autocast") != policies[base]:
            wrong.append((entry["func"].split("(")[0], entry.get("autocast"), policies[base]))
    assert not wrong, f"(op, autocast key, PyTorch's policy): {wrong}"


def test_float64_inputs_are_left_alone():
    for lib in (ember, torch):
        a = lib.ones(3, 3, dtype=lib.float64)
        with lib.autocast("cpu"):
            assert lib.mm(a, a).dtype == lib.float64
            assert lib.nn.functional.mse_loss(a, a).dtype == lib.float64


def test_mixed_16_bit_types_raise_as_torch():
    for lib in (ember, torch):
        with lib.autocast("cpu"):
            with pytest.raises(RuntimeError, match="prioritize"):
                lib.cat([lib.ones(2, dtype=lib.bfloat16), lib.ones(2, dtype=lib.float16)])
            # the failure left the region working
            assert lib.mm(lib.ones(2, 2), lib.ones(2, 2)).dtype == lib.bfloat16


# ---------------------------------------------------------------- regions: nesting, decorator, state
def _state(lib):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return (lib.is_autocast_enabled("cpu"), lib.get_autocast_dtype("cpu"), lib.is_autocast_cache_enabled(),
                lib.is_autocast_cpu_enabled(), lib.get_autocast_cpu_dtype())


def _dtypes_in_nested_regions(lib):
    a = lib.ones(2, 2)
    seen = [lib.mm(a, a).dtype, _state(lib)]
    with lib.autocast("cpu"):
        seen += [lib.mm(a, a).dtype, _state(lib)]
        with lib.autocast("cpu", enabled=False):
            seen += [lib.mm(a, a).dtype, _state(lib)]
            with lib.autocast("cpu", dtype=lib.float16, cache_enabled=False):
                seen += [lib.mm(a, a).dtype, _state(lib)]
            seen += [lib.mm(a, a).dtype, _state(lib)]
        seen += [lib.mm(a, a).dtype, _state(lib)]
    seen += [lib.mm(a, a).dtype, _state(lib)]
    return [str(x).replace("torch.", "").replace("ember.", "") for x in seen]


def test_nested_regions_match_torch():
    assert _dtypes_in_nested_regions(ember) == _dtypes_in_nested_regions(torch)


def test_state_is_restored_after_an_exception():
    for lib in (ember, torch):
        before = _state(lib)
        with pytest.raises(ValueError):
            with lib.autocast("cpu", dtype=lib.float16):
                raise ValueError("inside")
        assert _state(lib) == before


def test_decorator_and_outputs_used_outside():
    def make(lib):
        @lib.autocast("cpu")
        def f(a, b):
            return lib.mm(a, b), lib.is_autocast_enabled("cpu")
        return f

    for lib in (ember, torch):
        a = lib.ones(2, 2)
        r, inside = make(lib)(a, a)
        assert inside and r.dtype == lib.bfloat16 and not lib.is_autocast_enabled("cpu")
        # a bfloat16 result meets float32 outside the region: ordinary type promotion
        assert (r + a).dtype == lib.float32 and lib.mm(r.float(), a).dtype == lib.float32
    with pytest.raises(TypeError, match="requires a callable"):
        ember.autocast("cpu")(3)


def test_unsupported_dtype_and_device_type():
    for lib in (ember, torch):
        with pytest.warns(UserWarning, match="target dtype is not supported"):
            ac = lib.autocast("cpu", dtype=lib.float32)
        with ac:
            assert not lib.is_autocast_enabled("cpu")
            assert lib.mm(lib.ones(2, 2), lib.ones(2, 2)).dtype == lib.float32
        with pytest.warns(UserWarning, match="CUDA is not available"):
            assert lib.autocast("cuda")._enabled is False
        with pytest.raises(ValueError, match="device_type"):
            lib.autocast(lib.device("cpu"))
        with pytest.raises(RuntimeError):
            lib.autocast("meta")
        with pytest.raises(RuntimeError):
            lib.autocast("nonsense")


def test_state_functions_match_torch():
    calls = [
        lambda m: m.get_autocast_dtype("cpu"), lambda m: m.get_autocast_dtype("cuda:1"),
        lambda m: m.get_autocast_dtype("xla"), lambda m: m.get_autocast_dtype("hpu"),
        lambda m: m.get_autocast_dtype("mps"), lambda m: m.is_autocast_enabled(),
        lambda m: m.is_autocast_enabled("cpu"), lambda m: m.is_autocast_enabled("ipu"),
        lambda m: m.amp.is_autocast_available("cpu"), lambda m: m.amp.is_autocast_available("cuda"),
        lambda m: m.amp.is_autocast_available("meta"), lambda m: m.amp.is_autocast_available("cpu:0"),
        lambda m: m.get_autocast_gpu_dtype(), lambda m: m.get_autocast_ipu_dtype(),
        lambda m: m.get_autocast_xla_dtype(), lambda m: m.is_autocast_xla_enabled(),
        lambda m: m.is_autocast_ipu_enabled(), lambda m: m.is_autocast_cache_enabled(),
        lambda m: m.get_autocast_dtype("foo"), lambda m: m.get_autocast_dtype(3),
        lambda m: m.get_autocast_dtype("cpu:x"), lambda m: m.is_autocast_enabled("lazy"),
        lambda m: m.is_autocast_enabled(m.device("cpu")), lambda m: m.set_autocast_enabled("cpu", 1),
        lambda m: m.set_autocast_enabled("cpu", True, 3), lambda m: m.set_autocast_dtype("cpu", 3),
        lambda m: m.set_autocast_cache_enabled(1), lambda m: m.amp.is_autocast_available(3),
        lambda m: m.autocast_increment_nesting(1), lambda m: m.clear_autocast_cache(1),
    ]
    for i, call in enumerate(calls):
        results = {}
        for name, lib in LIBS.items():
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                try:
                    results[name] = ("ok", str(call(lib)).replace("torch.", "").replace("ember.", ""))
                except Exception as exc:  # noqa: BLE001 - the error type is what is compared
                    results[name] = ("raised", type(exc).__name__)
        assert results["ember"] == results["torch"], (i, results)


def test_setters_and_deprecated_spellings():
    for lib in (ember, torch):
        lib.set_autocast_dtype("cpu", lib.float16)
        lib.set_autocast_enabled("cpu", True)
        try:
            assert lib.mm(lib.ones(2, 2), lib.ones(2, 2)).dtype == lib.float16
        finally:
            lib.set_autocast_enabled("cpu", False)
            lib.set_autocast_dtype("cpu", lib.bfloat16)
        with pytest.warns(DeprecationWarning, match="is deprecated"):
            lib.set_autocast_cpu_enabled(False)
        with pytest.warns(DeprecationWarning, match=r"get_autocast_dtype\('cpu'\)"):
            assert lib.get_autocast_cpu_dtype() == lib.bfloat16
        lib.set_autocast_enabled(True)  # the one-argument form: CUDA's flag
        assert lib.is_autocast_enabled() and lib.is_autocast_enabled("cuda") and not lib.is_autocast_enabled("cpu")
        lib.set_autocast_enabled(False)
        assert [lib.autocast_increment_nesting(), lib.autocast_increment_nesting(),
                lib.autocast_decrement_nesting(), lib.autocast_decrement_nesting()] == [1, 2, 1, 0]


def test_cpu_amp_spellings_warn_and_work():
    for lib in (ember, torch):
        with pytest.warns(FutureWarning, match="torch.cpu.amp.autocast"):
            ac = lib.cpu.amp.autocast()
        assert isinstance(ac, lib.amp.autocast)
        with ac:
            assert lib.mm(lib.ones(2, 2), lib.ones(2, 2)).dtype == lib.bfloat16
        with pytest.warns(FutureWarning, match="torch.cpu.amp.GradScaler"):
            gs = lib.cpu.amp.GradScaler(init_scale=8.0)
        assert gs.is_enabled() and gs.get_scale() == 8.0
    # torch.cuda.amp stays off without CUDA
    with pytest.warns(UserWarning, match="CUDA is not available"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            assert ember.cuda.amp.GradScaler().is_enabled() is False


def test_state_is_thread_local():
    seen = []
    with ember.autocast("cpu"):
        t = threading.Thread(target=lambda: seen.append(
            (ember.is_autocast_enabled("cpu"), ember.mm(ember.ones(2, 2), ember.ones(2, 2)).dtype)))
        t.start()
        t.join()
    assert seen == [(False, ember.float32)]


# ---------------------------------------------------------------- weight cache and gradients
def _stale_weight_outputs(lib, cache_enabled):
    w = lib.ones(2, 2, requires_grad=True)
    x = lib.ones(2, 2)
    with lib.autocast("cpu", cache_enabled=cache_enabled):
        first = lib.mm(x, w)
        with lib.no_grad():
            w.add_(1.0)
        second = lib.mm(x, w)
        with lib.autocast("cpu", cache_enabled=False):
            uncached = lib.mm(x, w)
        third = lib.mm(x, w)
    after = lib.mm(x, w)
    return [float(t.detach().float().sum()) for t in (first, second, uncached, third, after)]


@pytest.mark.parametrize("cache_enabled", [True, False])
def test_weight_cache_matches_torch(cache_enabled):
    assert _stale_weight_outputs(ember, cache_enabled) == _stale_weight_outputs(torch, cache_enabled)


class _Net:
    @staticmethod
    def build(lib):
        lib.manual_seed(0)
        net = lib.nn.Sequential(lib.nn.Conv2d(2, 4, 3), lib.nn.ReLU(), lib.nn.Flatten(), lib.nn.Linear(4 * 4 * 4, 3))
        return net


def _twin_nets():
    e, t = _Net.build(ember), _Net.build(torch)
    with ember.no_grad():
        for pe, pt in zip(e.parameters(), t.parameters()):
            pe.copy_(ember.tensor(pt.detach().numpy().tolist()))
    return e, t


def test_training_step_gradients_match_torch():
    e_net, t_net = _twin_nets()
    x_e, x_t = _pair(_np((2, 2, 6, 6), 1))
    y = np.array([0, 2])
    results = {}
    for name, lib, net, x in (("ember", ember, e_net, x_e), ("torch", torch, t_net, x_t)):
        with lib.autocast("cpu"):
            logits = net(x)
            loss = lib.nn.functional.cross_entropy(logits, lib.tensor(y.tolist()))
        loss.backward()
        results[name] = (_dtype_name(logits), _dtype_name(loss), _to_np(loss),
                         [(_dtype_name(p.grad), _to_np(p.grad)) for p in net.parameters()])
    e, t = results["ember"], results["torch"]
    assert e[:2] == t[:2] == ("bfloat16", "float32")
    np.testing.assert_allclose(e[2], t[2], **BF16_TOL)
    for (ed, eg), (td, tg) in zip(e[3], t[3]):
        assert ed == td == "float32"
        np.testing.assert_allclose(eg, tg, rtol=5e-2, atol=5e-2)


def test_bfloat16_parameters_get_bfloat16_gradients():
    for lib in (ember, torch):
        w = lib.ones(3, 3, dtype=lib.bfloat16, requires_grad=True)
        x = lib.ones(2, 3, requires_grad=True)
        with lib.autocast("cpu"):
            out = lib.mm(x, w)
        out.float().sum().backward()
        assert w.grad.dtype == lib.bfloat16 and x.grad.dtype == lib.float32
        assert float(w.grad.float().sum()) == 18.0 and float(x.grad.sum()) == 18.0


# ---------------------------------------------------------------- custom_fwd / custom_bwd
def _custom_function(lib, cast_inputs):
    class Scale(lib.autograd.Function):
        @staticmethod
        @lib.amp.custom_fwd(device_type="cpu", cast_inputs=cast_inputs)
        def forward(ctx, a, b):
            ctx.save_for_backward(a, b)
            ctx.seen = (str(a.dtype), lib.is_autocast_enabled("cpu"))
            return lib.mm(a, b)

        @staticmethod
        @lib.amp.custom_bwd(device_type="cpu")
        def backward(ctx, grad):
            a, b = ctx.saved_tensors
            ctx.seen_bwd = lib.is_autocast_enabled("cpu")
            return lib.mm(grad, b.t()), lib.mm(a.t(), grad)
    return Scale


@pytest.mark.parametrize("cast_inputs", [None, "float32"])
def test_custom_fwd_bwd_match_torch(cast_inputs):
    record = {}
    for name, lib in LIBS.items():
        fn = _custom_function(lib, None if cast_inputs is None else getattr(lib, cast_inputs))
        a = lib.ones(2, 3, requires_grad=True)
        b = lib.ones(3, 2, dtype=lib.bfloat16, requires_grad=True)
        with lib.autocast("cpu"):
            out = fn.apply(a, b)
        ctx = out.grad_fn
        out.float().sum().backward()
        record[name] = (str(out.dtype), str(a.grad.dtype), str(b.grad.dtype), float(a.grad.float().sum()))
        record[name] = tuple(s.replace("torch.", "").replace("ember.", "") if isinstance(s, str) else s
                             for s in record[name])
        del ctx
    assert record["ember"] == record["torch"]
    with pytest.raises(ValueError, match="device_type"):
        ember.amp.custom_fwd(device_type=3)


# ---------------------------------------------------------------- GradScaler
def _scaler_run(lib, steps=12, bad_steps=(2, 3, 7), growth_interval=3, explicit_unscale=False):
    lib.manual_seed(0)
    w = lib.nn.Parameter(lib.tensor([[0.5, -0.25], [0.75, 1.0]]))
    opt = lib.optim.SGD([w], lr=0.1, momentum=0.9)
    scaler = lib.amp.GradScaler("cpu", init_scale=2.0**10, growth_factor=2.0, backoff_factor=0.5,
                                growth_interval=growth_interval)
    x = lib.tensor([[1.0, 2.0], [3.0, -1.0]])
    trace = []
    for step in range(steps):
        opt.zero_grad()
        with lib.autocast("cpu"):
            loss = lib.mm(x, w).float().pow(2).mean()
        scaler.scale(loss).backward()
        if step in bad_steps:  # an overflowed gradient: inf, or NaN every other time
            with lib.no_grad():
                w.grad[0, 0] = float("inf") if step % 2 else float("nan")
        if explicit_unscale:
            scaler.unscale_(opt)
        scaler.step(opt)
        scaler.update()
        trace.append((scaler.get_scale(), scaler._get_growth_tracker(), w.detach().numpy().round(5).tolist()))
    return trace, scaler.state_dict()


@pytest.mark.parametrize("explicit_unscale", [False, True])
def test_grad_scaler_trajectory_with_injected_overflow(explicit_unscale):
    e_trace, e_state = _scaler_run(ember, explicit_unscale=explicit_unscale)
    t_trace, t_state = _scaler_run(torch, explicit_unscale=explicit_unscale)
    assert [s[:2] for s in e_trace] == [s[:2] for s in t_trace]
    for (_, _, ew), (_, _, tw) in zip(e_trace, t_trace):
        np.testing.assert_allclose(ew, tw, rtol=1e-3, atol=1e-4)
    assert e_state == t_state


def test_grad_scaler_scale_structures_and_errors():
    for lib in (ember, torch):
        scaler = lib.amp.GradScaler("cpu", init_scale=4.0)
        assert scaler.get_scale() == 4.0 and scaler.state_dict()["scale"] == 4.0
        out = scaler.scale([lib.ones(2), (lib.ones(1, dtype=lib.float64), lib.ones(3))])
        assert isinstance(out, list) and isinstance(out[1], tuple)
        assert float(out[0].sum()) == 8.0 and out[1][0].dtype == lib.float64
        with pytest.raises(ValueError, match="outputs must be a Tensor"):
            scaler.scale([1.0])
        w = lib.nn.Parameter(lib.ones(2))
        opt = lib.optim.SGD([w], lr=1.0)
        (scaler.scale((w * w).sum())).backward()
        scaler.unscale_(opt)
        np.testing.assert_allclose(_to_np(w.grad), [2.0, 2.0])
        with pytest.raises(RuntimeError, match="already been called"):
            scaler.unscale_(opt)
        scaler.step(opt)
        with pytest.raises(RuntimeError, match="step\\(\\) has already been called"):
            scaler.step(opt)
        with pytest.raises(RuntimeError, match="Closure use"):
            scaler.step(opt, closure=lambda: 0)
        scaler.update(16.0)
        assert scaler.get_scale() == 16.0
        with pytest.raises(AssertionError, match="growth factor"):
            lib.amp.GradScaler("cpu", growth_factor=1.0)
        with pytest.raises(AssertionError, match="_scale is None"):
            lib.amp.GradScaler("cpu").step(opt)
        w16 = lib.nn.Parameter(lib.ones(2, dtype=lib.float16))
        opt16 = lib.optim.SGD([w16], lr=1.0)
        w16.grad = lib.ones(2, dtype=lib.float16)
        with pytest.raises(ValueError, match="FP16 gradients"):
            scaler.unscale_(opt16)


def test_grad_scaler_state_dict_round_trip_and_pickle():
    e_trace, e_state = _scaler_run(ember, steps=5)
    for lib in (ember, torch):
        fresh = lib.amp.GradScaler("cpu")
        fresh.load_state_dict(dict(e_state))
        assert fresh.state_dict() == e_state
        clone = pickle.loads(pickle.dumps(fresh))
        assert clone.state_dict() == e_state
        with pytest.raises(RuntimeError, match="source state dict is empty"):
            fresh.load_state_dict({})
        disabled = lib.amp.GradScaler("cpu", enabled=False)
        assert disabled.state_dict() == {} and disabled.get_scale() == 1.0
        t = lib.ones(2)
        assert disabled.scale(t) is t
    with pytest.warns(UserWarning, match="CUDA is not available"):
        assert ember.amp.GradScaler().is_enabled() is False


def test_amp_scale_ops_match_torch():
    for lib in (ember, torch):
        grads = [lib.tensor([2.0, 4.0]), lib.tensor([8.0, float("inf")], dtype=lib.bfloat16)]
        found = lib.zeros(())
        lib._amp_foreach_non_finite_check_and_unscale_(grads, found, lib.full((), 0.5))
        assert float(found) == 1.0 and grads[0].tolist() == [1.0, 2.0] and grads[1].float().tolist()[0] == 4.0
        scale, tracker = lib.full((), 8.0), lib.full((), 1, dtype=lib.int32)
        lib._amp_update_scale_(scale, tracker, lib.zeros(()), 2.0, 0.5, 2)
        assert (float(scale), int(tracker)) == (16.0, 0)
        lib._amp_update_scale_(scale, tracker, lib.ones(()), 2.0, 0.5, 2)
        assert (float(scale), int(tracker)) == (8.0, 0)
        big = lib.full((), 3e38)
        lib._amp_update_scale_(big, lib.full((), 0, dtype=lib.int32), lib.zeros(()), 2.0, 0.5, 1)
        assert float(big) == pytest.approx(3e38)  # growth that would overflow is skipped


def test_bfloat16_products_match_torch():
    """bfloat16 mm/bmm/matmul (what autocast runs) round once from a float32 accumulation, as PyTorch's;
    contiguous, transposed and batched operands."""
    ea, ta = _make_inputs([((96, 80), "bfloat16")], 5)
    eb, tb = _make_inputs([((80, 72), "bfloat16")], 6)
    cases = [lambda m, x, y: m.mm(x, y), lambda m, x, y: m.mm(y.t(), x.t()),
             lambda m, x, y: m.matmul(x.reshape(4, 24, 80), y), lambda m, x, y: m.bmm(x.reshape(2, 48, 80),
                                                                                      y.expand(2, 80, 72))]
    for fn in cases:
        e, t = fn(ember, ea[0], eb[0]), fn(torch, ta[0], tb[0])
        assert _dtype_name(e) == _dtype_name(t) == "bfloat16"
        np.testing.assert_allclose(_to_np(e), _to_np(t), rtol=8e-3, atol=1e-2)


def test_batched_bfloat16_products_on_threads():
    """bmm runs its matrices on several threads at once: each product keeps its own scratch space."""
    for seed in range(20):
        a, b = _np((8, 24, 40), seed), _np((8, 40, 16), seed + 50)
        ea = ember.tensor(a.tolist()).bfloat16()
        eb = ember.tensor(b.tolist()).bfloat16()
        ref = ember.bmm(ea.float(), eb.float())
        np.testing.assert_allclose(_to_np(ember.bmm(ea, eb)), _to_np(ref), rtol=1e-2, atol=5e-2)
