"""Sparse COO tensors: construction, conversion, coalescing, the ops with sparse kernels, printing,
sparse gradients of embedding(sparse=True) / EmbeddingBag, and the optimizers that take them (SGD,
Adagrad, SparseAdam) against torch; every other op refuses a sparse argument with
NotImplementedError instead of reading storage a sparse tensor doesn't have."""
import copy
import pickle

import numpy as np
import pytest

import ember
from parity import get_torch

RS = np.random.RandomState(0)


def both(fn):
    """fn(lib) for ember and torch."""
    return fn(ember), fn(get_torch())


def dense_np(t):
    return (t.to_dense() if t.is_sparse else t).detach().numpy()


def close(a, b, tol=1e-6):
    np.testing.assert_allclose(dense_np(a), dense_np(b), rtol=tol, atol=tol)


def coo(lib, indices, values, size=None, **kw):
    args = (lib.tensor(indices), lib.tensor(np.asarray(values))) + ((size,) if size is not None else ())
    return lib.sparse_coo_tensor(*args, **kw)


IDX = [[0, 1, 1, 0, 2], [2, 0, 2, 2, 1]]  # (0, 2) appears twice
VAL = np.array([1.5, -2.0, 3.0, 0.25, 4.0], dtype=np.float32)


# ---------------------------------------------------------------- construction and metadata
@pytest.mark.parametrize("size", [None, (3, 3), (4, 5)])
def test_construction_metadata_and_to_dense(size):
    e, t = both(lambda lib: coo(lib, IDX, VAL, size))
    assert e.is_sparse and e.layout is ember.sparse_coo and str(e.layout) == "ember.sparse_coo"
    assert tuple(e.shape) == tuple(t.shape)
    assert (e.sparse_dim(), e.dense_dim(), e._nnz(), e.is_coalesced()) == \
        (t.sparse_dim(), t.dense_dim(), t._nnz(), t.is_coalesced())
    assert str(e.dtype).split(".")[1] == str(t.dtype).split(".")[1]
    close(e, t)
    np.testing.assert_array_equal(e._indices().numpy(), t._indices().numpy())


def test_hybrid_tensor_with_dense_dims():
    vals = RS.randn(3, 2, 4).astype(np.float64)
    e, t = both(lambda lib: coo(lib, [[0, 3, 0]], vals, (5, 2, 4)))
    assert (e.sparse_dim(), e.dense_dim()) == (t.sparse_dim(), t.dense_dim()) == (1, 2)
    close(e, t)
    close(e.coalesce(), t.coalesce())
    close(e * 3, t * 3)


def test_coalesce_sums_duplicates_and_sorts():
    e, t = both(lambda lib: coo(lib, IDX, VAL, (3, 3)).coalesce())
    assert e.is_coalesced() and e._nnz() == t._nnz() == 4
    np.testing.assert_array_equal(e.indices().numpy(), t.indices().numpy())
    np.testing.assert_allclose(e.values().numpy(), t.values().numpy())
    unc = coo(ember, IDX, VAL, (3, 3))
    with pytest.raises(RuntimeError, match="uncoalesced"):
        unc.values()
    with pytest.raises(RuntimeError, match="uncoalesced"):
        unc.indices()


def test_size_only_form():
    e, t = both(lambda lib: lib.sparse_coo_tensor((2, 3), dtype=lib.float64))
    assert e._nnz() == 0 and tuple(e.shape) == (2, 3) and (e.sparse_dim(), e.dense_dim()) == (2, 0)
    assert repr(e) == repr(t).replace("torch.", "ember.")


def test_empty_and_zero_nnz():
    e, t = both(lambda lib: lib.sparse_coo_tensor(lib.zeros(2, 0, dtype=lib.int64), lib.zeros(0), (3, 4)))
    assert e._nnz() == 0 and e.coalesce()._nnz() == 0
    close(e, t)
    assert repr(e) == repr(t).replace("torch", "ember")


def test_to_sparse_of_0d_and_bad_sparse_dim():
    for v in (2.5, 0.0):
        e, t = both(lambda lib: lib.tensor(v).to_sparse())
        assert (e.sparse_dim(), e._nnz()) == (t.sparse_dim(), t._nnz())
        close(e, t)
    for lib in (ember, get_torch()):
        with pytest.raises(RuntimeError, match="sparse_dim argument must be in >0"):
            lib.ones(2, 2).to_sparse(0)
        with pytest.raises(RuntimeError, match="dtype argument is not supported"):
            lib.ones(2, 2).to_sparse().to_dense(lib.float64)


@pytest.mark.parametrize("sparse_dim", [None, 1, 2])
def test_to_sparse_round_trip(sparse_dim):
    x = RS.randn(3, 4).astype(np.float32)
    x[x < 0.3] = 0
    e, t = both(lambda lib: lib.tensor(x).to_sparse(sparse_dim) if sparse_dim is not None
                else lib.tensor(x).to_sparse())
    assert (e.sparse_dim(), e._nnz()) == (t.sparse_dim(), t._nnz())
    np.testing.assert_array_equal(e._indices().numpy(), t._indices().numpy())
    close(e, t)


def test_bad_construction_raises():
    with pytest.raises(RuntimeError, match="size is inconsistent with indices"):
        coo(ember, [[0, 5]], [1.0, 2.0], (3,))
    with pytest.raises(RuntimeError, match="negative index"):
        coo(ember, [[0, -1]], [1.0, 2.0], (3,))
    with pytest.raises(RuntimeError, match="same nnz"):
        coo(ember, [[0, 1]], [1.0, 2.0, 3.0], (3,))
    with pytest.raises(RuntimeError, match="sparse_dim x nnz"):
        ember.sparse_coo_tensor(ember.tensor([0, 1]), ember.tensor([1.0, 2.0]), (3,))
    with pytest.raises(NotImplementedError):
        coo(ember, [[0, 1]], [1.0, 2.0], (3,), requires_grad=True)


# ---------------------------------------------------------------- ops with sparse kernels
@pytest.mark.parametrize("op", [
    lambda lib, s, d: s + s,
    lambda lib, s, d: d + s,
    lambda lib, s, d: lib.add(d, s, alpha=2.5),
    lambda lib, s, d: s - s * 2,
    lambda lib, s, d: -s,
    lambda lib, s, d: s * 3,
    lambda lib, s, d: 2 * s,
    lambda lib, s, d: s / 4,
    lambda lib, s, d: s * d,
    lambda lib, s, d: d * s,
    lambda lib, s, d: s * s,
    lambda lib, s, d: s.clone(),
    lambda lib, s, d: s.detach(),
    lambda lib, s, d: s.to(lib.float64),
    lambda lib, s, d: s.double(),
    lambda lib, s, d: s.sum(),
    lambda lib, s, d: lib.mm(s, d.t()),
    lambda lib, s, d: s @ d[0],
    lambda lib, s, d: lib.sparse.mm(s, d.t()),
    lambda lib, s, d: lib.sparse.sum(s, 0),
    lambda lib, s, d: lib.sparse.sum(s),
    lambda lib, s, d: d.sparse_mask(s.coalesce()),
    lambda lib, s, d: d.to_dense(lib.float64),
])
def test_sparse_ops_match_torch(op):
    d = RS.randn(3, 3).astype(np.float32)
    e, t = both(lambda lib: op(lib, coo(lib, IDX, VAL, (3, 3)), lib.tensor(d)))
    assert e.is_sparse == t.is_sparse
    assert str(e.dtype).split(".")[1] == str(t.dtype).split(".")[1]
    close(e, t, 1e-5)


_VALUES_OPS = ["abs", "sqrt", "sin", "tan", "asin", "atan", "sinh", "tanh", "asinh", "atanh", "expm1", "log1p",
               "floor", "ceil", "trunc", "frac", "sign", "sgn", "erf", "erfinv", "relu", "square", "nan_to_num",
               "deg2rad", "rad2deg", "signbit", "isnan", "isinf", "neg"]


@pytest.mark.parametrize("name", _VALUES_OPS)
def test_zero_preserving_unary_ops_on_values_match_torch(name):
    vals = np.array([[-0.5, 0.25], [0.75, -0.125], [0.5, np.nan], [0.125, 0.625]], np.float32)
    idx = [[0, 2, 0, 3]]  # (0) twice: the op sees the summed, coalesced value
    e, t = both(lambda lib: getattr(lib, name)(coo(lib, idx, vals, (5, 2))))
    assert e.is_sparse and t.is_sparse and e._nnz() == t._nnz()
    assert str(e.dtype).split(".")[1] == str(t.dtype).split(".")[1]
    np.testing.assert_allclose(dense_np(e).astype(np.float64), dense_np(t).astype(np.float64), rtol=1e-6, equal_nan=True)
    if name not in ("signbit", "isnan", "isinf", "square", "neg"):
        def inplace(lib):
            s = coo(lib, idx, vals, (5, 2)).coalesce()
            getattr(s, name + "_")()
            return s
        close(*both(inplace), 1e-6) if name != "nan_to_num" else None
        with pytest.raises(RuntimeError, match="requires coalesced input"):
            getattr(coo(ember, idx, vals, (5, 2)), name + "_")()


def test_pow_norm_copy_on_sparse_match_torch():
    vals = np.array([[-1.5, 2.0], [3.0, -4.0], [0.25, 1.0]], np.float32)
    for fn in (lambda lib, s: s ** 2, lambda lib, s: s.abs().pow(0.5), lambda lib, s: s.norm(),
               lambda lib, s: s.norm(1), lambda lib, s: lib.norm(s),
               lambda lib, s: lib.sparse_coo_tensor(lib.tensor([[1]]), lib.ones(1, 2), (4, 2)).copy_(s)):
        e, t = both(lambda lib: fn(lib, coo(lib, [[0, 2, 0]], vals, (4, 2))))
        assert e.is_sparse == t.is_sparse
        close(e, t, 1e-6)
    for lib in (ember, get_torch()):
        s = coo(lib, [[0, 2, 0]], vals, (4, 2))
        with pytest.raises(RuntimeError):
            s.pow(0)
        with pytest.raises(RuntimeError):
            s.pow(lib.ones(4, 2))
        with pytest.raises(RuntimeError):
            s.norm(dim=0)


@pytest.mark.parametrize("dims,keepdim", [(0, False), (1, False), ((0, 1), False), (1, True), ((0, 2), False),
                                          (2, False), (-1, True), ((1, 2), False)])
def test_sum_over_dims_matches_torch(dims, keepdim):
    vals = np.random.RandomState(0).randn(5, 4).astype(np.float32)
    e, t = both(lambda lib: coo(lib, [[0, 1, 1, 0, 2], [2, 0, 2, 2, 1]], vals, (3, 3, 4)).sum(dims, keepdim=keepdim))
    assert e.is_sparse == t.is_sparse and tuple(e.shape) == tuple(t.shape)
    if e.is_sparse and not keepdim:  # (with keepdim torch turns a reduced dense dim into a sparse one)
        assert e.is_coalesced() == t.is_coalesced() and e._nnz() == t._nnz()
    close(e, t, 1e-5)


def test_zeros_like_empty_like_new_zeros_stay_sparse():
    for fn in (lambda lib, s: lib.zeros_like(s), lambda lib, s: lib.empty_like(s),
               lambda lib, s: lib.zeros_like(s, dtype=lib.float64), lambda lib, s: s.new_zeros(2, 2)):
        e, t = both(lambda lib: fn(lib, coo(lib, [[0, 2]], np.ones((2, 3), np.float32), (4, 3))))
        assert e.is_sparse and t.is_sparse
        assert (e.sparse_dim(), e.dense_dim(), e._nnz(), tuple(e.shape)) == \
            (t.sparse_dim(), t.dense_dim(), t._nnz(), tuple(t.shape))
        assert str(e.dtype).split(".")[1] == str(t.dtype).split(".")[1]
    with pytest.raises(RuntimeError, match="nbytes is not defined for sparse"):
        coo(ember, [[0]], [1.0], (2,)).nbytes


def test_inplace_ops():
    def run(lib):
        d = lib.tensor(np.arange(9, dtype=np.float32).reshape(3, 3))
        s = coo(lib, IDX, VAL, (3, 3))
        d.add_(s, alpha=-1)
        d.sub_(s)
        s2 = s.clone()
        s2.mul_(2).add_(s).div_(3)
        s3 = s.clone().zero_()
        return d, s2, s3
    for a, b in zip(*both(run)):
        close(a, b)
    s = coo(ember, IDX, VAL, (3, 3))
    v = s._version
    s.mul_(2)
    assert s._version > v


def test_errors_match_torch():
    s = coo(ember, IDX, VAL, (3, 3))
    with pytest.raises(RuntimeError, match=r"add\(sparse, dense\) is not supported"):
        s + ember.ones(3, 3)
    with pytest.raises(TypeError, match="to numpy"):
        s.numpy()
    with pytest.raises(RuntimeError, match="is_coalesced expected sparse"):
        ember.ones(2).is_coalesced()
    assert ember.ones(2, 3).sparse_dim() == 0 and ember.ones(2, 3).dense_dim() == 2


@pytest.mark.parametrize("op", [
    lambda s: s.exp(), lambda s: s.view(9), lambda s: s.reshape(9), lambda s: s.t(), lambda s: s[0],
    lambda s: s.cumsum(0), lambda s: ember.cat([s, s]), lambda s: s.log(), lambda s: s.mean(),
    lambda s: s.contiguous() + 1, lambda s: ember.add(s, s, out=ember.empty(3, 3)), lambda s: s.data_ptr(),
    lambda s: s.item(), lambda s: s.tolist(), lambda s: s.as_strided((2,), (1,)), lambda s: s.fill_(1),
    lambda s: ember.angle(s), lambda s: ember.ones(3, 3).copy_(s), lambda s: s.untyped_storage(),
    lambda s: s.storage(),
])
def test_ops_without_sparse_kernel_refuse_cleanly(op):
    """No op reads the storage a sparse tensor doesn't have: each raises (never crashes)."""
    s = coo(ember, IDX, VAL, (3, 3))
    with pytest.raises((NotImplementedError, RuntimeError)):
        op(s)


def test_printing_matches_torch():
    for make in (lambda lib: coo(lib, IDX, VAL, (3, 3)),
                 lambda lib: coo(lib, [[0, 2]], np.ones((2, 3), np.float64), (4, 3)),
                 lambda lib: coo(lib, IDX, np.arange(5), (3, 3)).coalesce()):
        e, t = both(make)
        assert repr(e) == repr(t).replace("torch.", "ember.")


def test_pickle_and_deepcopy():
    s = coo(ember, IDX, VAL, (3, 3))
    for r in (pickle.loads(pickle.dumps(s)), copy.deepcopy(s)):
        assert r.is_sparse and r._nnz() == s._nnz()
        close(r, s)


# ---------------------------------------------------------------- sparse gradients
def _embedding_grads(lib, weight_np, idx_np, **kw):
    w = lib.tensor(weight_np, requires_grad=True)
    out = lib.nn.functional.embedding(lib.tensor(idx_np), w, sparse=True, **kw)
    (out * lib.arange(out.numel(), dtype=out.dtype).reshape(out.shape)).sum().backward()
    return w.grad


@pytest.mark.parametrize("padding_idx", [None, 2])
def test_embedding_sparse_grad_matches_torch(padding_idx):
    W = RS.randn(6, 4)
    idx = np.array([[0, 2, 2], [5, 0, 1]])
    e, t = both(lambda lib: _embedding_grads(lib, W, idx, padding_idx=padding_idx))
    assert e.is_sparse and t.is_sparse and e._nnz() == t._nnz()
    np.testing.assert_array_equal(e._indices().numpy(), t._indices().numpy())
    close(e, t)
    # and equals the dense gradient
    dense = _embedding_grads(ember, W, idx, padding_idx=padding_idx)
    w = ember.tensor(W, requires_grad=True)
    ember.nn.functional.embedding(ember.tensor(idx), w, padding_idx=padding_idx).mul(
        ember.arange(24, dtype=ember.float64).reshape(2, 3, 4)).sum().backward()
    close(dense, w.grad)


def test_embedding_sparse_grad_accumulates_like_torch():
    def run(lib):
        w = lib.nn.Parameter(lib.ones(5, 2))
        i = lib.tensor([1, 3])
        lib.nn.functional.embedding(i, w, sparse=True).sum().backward()
        lib.nn.functional.embedding(i, w, sparse=True).sum().backward()  # sparse + sparse: sparse
        g1 = w.grad.clone()
        (lib.nn.functional.embedding(i, w, sparse=True).sum() + w.sum()).backward()  # dense joins: dense
        g2 = w.grad
        w.grad = None
        lib.nn.functional.embedding(i, w * 2, sparse=True).sum().backward()  # through a non-leaf
        return g1, g2, w.grad
    (e1, e2, e3), (t1, t2, t3) = both(run)
    assert e1.is_sparse and t1.is_sparse and not e2.is_sparse and not t2.is_sparse
    for a, b in ((e1, t1), (e2, t2), (e3, t3)):
        close(a, b)


def test_embedding_sparse_scale_grad_by_freq_raises():
    w = ember.ones(5, 2, requires_grad=True)
    out = ember.nn.functional.embedding(ember.tensor([1, 1]), w, sparse=True, scale_grad_by_freq=True)
    with pytest.raises(RuntimeError, match="scale_grad_by_freq not supported with sparse gradients"):
        out.sum().backward()


def test_embedding_bag_sparse_grad_matches_torch():
    W = RS.randn(6, 3)

    def run(lib):
        bag = lib.nn.EmbeddingBag(6, 3, mode="mean", sparse=True)
        with lib.no_grad():
            bag.weight.copy_(lib.tensor(W))
        bag(lib.tensor([0, 2, 2, 5, 1]), lib.tensor([0, 2])).pow(2).sum().backward()
        return bag.weight.grad
    e, t = both(run)
    assert e.is_sparse and t.is_sparse
    close(e, t)


def test_mm_sparse_dense_gradient():
    d = RS.randn(3, 2)

    def run(lib):
        x = lib.tensor(d, requires_grad=True)
        s = coo(lib, IDX, VAL.astype(np.float64), (3, 3))
        lib.sparse.mm(s, x).pow(2).sum().backward()
        return x.grad
    close(*both(run))


# ---------------------------------------------------------------- optimizers
def _train(lib, optname, kw, bag=False, padding_idx=None, steps=4):
    W = np.random.RandomState(0).randn(7, 3).astype(np.float32)
    emb = (lib.nn.EmbeddingBag(7, 3, sparse=True, mode="sum") if bag
           else lib.nn.Embedding(7, 3, sparse=True, padding_idx=padding_idx))
    with lib.no_grad():
        emb.weight.copy_(lib.tensor(W))
    opt = getattr(lib.optim, optname)(emb.parameters(), **kw)
    rs = np.random.RandomState(1)
    for _ in range(steps):
        opt.zero_grad()
        out = emb(lib.tensor(rs.randint(0, 7, size=(4, 3))))
        (out.pow(2).sum() + out.sum()).backward()
        opt.step()
    return emb.weight.detach(), opt


@pytest.mark.parametrize("optname,kw", [
    ("SparseAdam", dict(lr=0.1)),
    ("SparseAdam", dict(lr=0.05, betas=(0.8, 0.9), eps=1e-6, maximize=True)),
    ("SGD", dict(lr=0.1)),
    ("SGD", dict(lr=0.1, momentum=0.9, dampening=0.1)),
    ("SGD", dict(lr=0.05, momentum=0.9, nesterov=True)),
    ("Adagrad", dict(lr=0.1)),
    ("Adagrad", dict(lr=0.1, lr_decay=0.1, maximize=True, initial_accumulator_value=0.5)),
])
@pytest.mark.parametrize("extra", [dict(), dict(padding_idx=2), dict(bag=True)])
def test_optimizers_with_sparse_gradients_match_torch(optname, kw, extra):
    (e, eo), (t, to) = both(lambda lib: _train(lib, optname, kw, **extra))
    close(e, t, 2e-5)
    if optname == "SparseAdam":
        est, tst = eo.state_dict()["state"][0], to.state_dict()["state"][0]
        assert est["step"] == tst["step"]
        close(est["exp_avg"], tst["exp_avg"], 2e-5)


@pytest.mark.parametrize("optname,kw", [(name, {}) for name in ("Adam", "AdamW", "RMSprop", "Adadelta", "Adamax",
                                                                   "NAdam", "RAdam", "ASGD", "Rprop")]
                         + [("SGD", dict(lr=0.1, weight_decay=0.1)), ("Adagrad", dict(weight_decay=0.1))])
def test_optimizers_refuse_sparse_gradients_they_cannot_take(optname, kw):
    """Dense-only optimizers, and weight decay (sparse + dense) in SGD and Adagrad: torch's errors."""
    def run(lib):
        emb = lib.nn.Embedding(5, 2, sparse=True)
        opt = getattr(lib.optim, optname)(emb.parameters(), **kw)
        emb(lib.tensor([1, 2])).sum().backward()
        with pytest.raises(RuntimeError) as info:
            opt.step()
        return str(info.value)
    e, t = both(run)
    assert e == t


def test_sparse_adam_errors_match_torch():
    def run(lib):
        msgs = []
        emb = lib.nn.Embedding(5, 2)
        emb(lib.tensor([1])).sum().backward()
        for make in (lambda: lib.optim.SparseAdam(emb.parameters()).step(),
                     lambda: lib.optim.SparseAdam(emb.parameters(), lr=-1),
                     lambda: lib.optim.SparseAdam(emb.parameters(), betas=(1.0, 0.9)),
                     lambda: lib.optim.SparseAdam(emb.parameters(), eps=-1)):
            with pytest.raises((RuntimeError, ValueError)) as info:
                make()
            msgs.append((info.type.__name__, str(info.value)))
        opt = lib.optim.SparseAdam(emb.parameters())
        msgs.append(sorted(opt.defaults.items()))
        return msgs
    e, t = both(run)
    assert e == t


def test_zero_grad_set_to_none_false_keeps_sparse_grad_zeroed():
    emb = ember.nn.Embedding(5, 2, sparse=True)
    opt = ember.optim.SparseAdam(emb.parameters())
    emb(ember.tensor([1, 3])).sum().backward()
    opt.zero_grad(set_to_none=False)
    assert emb.weight.grad.is_sparse and emb.weight.grad._nnz() == 0
    emb(ember.tensor([4])).sum().backward()
    opt.step()  # the zeroed grad accumulates the new rows
    assert emb.weight.grad._nnz() == 1


def test_lbfgs_takes_sparse_gradients():
    emb = ember.nn.Embedding(5, 2, sparse=True)
    opt = ember.optim.LBFGS(emb.parameters(), max_iter=3)

    def closure():
        opt.zero_grad()
        loss = emb(ember.tensor([1, 3])).pow(2).sum()
        loss.backward()
        return loss
    first = closure().item()
    opt.step(closure)
    assert closure().item() < first


def test_save_load_round_trip_and_torch_interop(tmp_path):
    """A sparse tensor in a checkpoint (SGD's momentum buffer of a sparse embedding) is written in
    torch's form: torch reads Ember's file and Ember reads torch's."""
    torch = get_torch()
    emb = ember.nn.Embedding(6, 2, sparse=True)
    opt = ember.optim.SGD(emb.parameters(), lr=0.1, momentum=0.9)
    emb(ember.tensor([1, 4, 1])).sum().backward()
    opt.step()
    buf = opt.state_dict()["state"][0]["momentum_buffer"]
    assert buf.is_sparse
    ember.save({"opt": opt.state_dict(), "s": buf}, tmp_path / "e.pt")
    for weights_only in (True, False):
        back = ember.load(tmp_path / "e.pt", weights_only=weights_only)
        assert back["s"].is_sparse and back["s"].is_coalesced() == buf.is_coalesced()
        close(back["s"], buf)
    t = torch.load(tmp_path / "e.pt", weights_only=True)
    assert t["s"].layout == torch.sparse_coo
    np.testing.assert_allclose(t["s"].to_dense().numpy(), dense_np(buf))
    ts = torch.sparse_coo_tensor(torch.tensor([[0, 2, 0]]), torch.randn(3, 2), (4, 2))
    torch.save({"s": ts}, tmp_path / "t.pt")
    e = ember.load(tmp_path / "t.pt")["s"]
    assert e.is_sparse and e._nnz() == 3
    np.testing.assert_allclose(dense_np(e), ts.to_dense().numpy())
    opt2 = ember.optim.SGD(emb.parameters(), lr=0.1, momentum=0.9)
    opt2.load_state_dict(ember.load(tmp_path / "e.pt")["opt"])
    assert opt2.state[emb.weight]["momentum_buffer"].is_sparse


def test_grad_scaler_unscales_sparse_gradients_like_torch():
    """GradScaler on an embedding with sparse gradients: unscaled through the values, an inf among
    them skips the step, as torch's."""
    W = np.random.RandomState(0).randn(6, 3).astype(np.float32)

    def run(lib, poison):
        emb = lib.nn.Embedding(6, 3, sparse=True)
        with lib.no_grad():
            emb.weight.copy_(lib.tensor(W))
        opt = lib.optim.SGD(emb.parameters(), lr=0.1)
        scaler = lib.amp.GradScaler("cpu", init_scale=1024.0)
        out = emb(lib.tensor([1, 4, 1]))
        loss = out.pow(2).sum() * (float("inf") if poison else 1.0)
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        return emb.weight.detach().numpy(), scaler.get_scale()
    for poison in (False, True):
        (we, se), (wt, st) = run(ember, poison), run(get_torch(), poison)
        np.testing.assert_allclose(we, wt, rtol=1e-6)
        assert se == st


def _child_reads_sparse(q, r):
    s = q.get()
    r.put((s.is_sparse, s.to_dense().tolist()))


def test_sent_to_another_process_and_type_name():
    import ember.multiprocessing as mp
    s = coo(ember, [[0, 2]], [1.0, 2.0], (3,))
    ctx = mp.get_context("spawn")
    q, r = ctx.Queue(), ctx.Queue()
    p = ctx.Process(target=_child_reads_sparse, args=(q, r))
    p.start()
    q.put(s)
    assert r.get(timeout=60) == (True, [1.0, 0.0, 2.0])
    p.join()
    with pytest.raises(NotImplementedError):
        s.share_memory_()
    assert s.type() == "ember.sparse.DoubleTensor"  # coo() makes float64 values from a list of floats


def test_review_fixes_match_torch():
    """A sparse out= is refused before anything is resized; rounded division sums duplicates first;
    in-place ops refuse a result dtype they cannot hold; in-place ops reach a detach()ed alias's
    original; Module.double() converts a sparse gradient."""
    for lib in (ember, get_torch()):
        o = coo(lib, [[0, 1, 1], [2, 0, 2]], [3.0, 4.0, 5.0], (2, 3))
        before = dense_np(o).copy()
        for call in (lambda: lib.sum(lib.ones(7, 7), 0, out=o), lambda: lib.abs(lib.ones(7, 7), out=o)):
            with pytest.raises((RuntimeError, NotImplementedError)):
                call()
        assert tuple(o.shape) == (2, 3) and o.is_sparse
        np.testing.assert_array_equal(dense_np(o), before)
        s_int = lib.sparse_coo_tensor(lib.tensor([[0, 1], [2, 0]]), lib.tensor([3, -4], dtype=lib.int32), (2, 3))
        with pytest.raises(RuntimeError):
            s_int.clone().mul_(1.5)
        with pytest.raises(RuntimeError):
            s_int.clone().add_(s_int.to(lib.float32))
    e, t = both(lambda lib: lib.div(lib.sparse_coo_tensor(lib.tensor([[0, 1, 1, 0], [2, 0, 2, 2]]),
                                                          lib.tensor([3, -4, 5, 1], dtype=lib.int32), (2, 3)),
                                    2, rounding_mode="floor"))
    close(e, t)

    def alias(lib):
        s = coo(lib, [[0, 2]], [1.0, -2.0], (3,))
        s.detach().neg_()
        s.detach().div_(2)
        return s
    close(*both(alias))

    def to_double(lib):
        m = lib.nn.Embedding(4, 2, sparse=True)
        m(lib.tensor([1, 3])).sum().backward()
        m.double()
        return m.weight.grad
    (e, t) = both(to_double)
    assert e.is_sparse and t.is_sparse and str(e.dtype).endswith("float64") and str(t.dtype).endswith("float64")
