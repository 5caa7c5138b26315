"""ember.svd_lowrank / ember.pca_lowrank against torch's. The random streams differ, so the factors are
not bitwise torch's: the tests check what holds for any range sample (exact reconstruction of a
matrix of rank <= q, singular values equal to torch.linalg.svdvals', orthonormal factors, torch's
shapes and dtypes and errors, gradients equal to torch's where they do not depend on the sample)."""
import inspect

import numpy as np
import pytest

import ember
from parity import get_torch

TOL = {"float32": 1e-5, "float64": 1e-10}


def _low_rank(m, n, rank, batch=(), dtype="float64", seed=0):
    """A (*batch, m, n) matrix of exact rank `rank`, as NumPy, scaled to entries of order 1."""
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(batch + (m, rank)) @ rng.standard_normal(batch + (rank, n)) / np.sqrt(max(rank, 1))
    return a.astype(dtype)


def _check_factors(U, S, V, target, dtype):
    """U diag(S) V^T == target (rank <= q), S == its q largest singular values, U and V orthonormal."""
    torch = get_torch()
    tol = TOL[dtype]
    u, s, v = U.numpy(), S.numpy(), V.numpy()
    scale = max(1.0, np.abs(target).max())
    np.testing.assert_allclose(u @ (s[..., :, None] * np.swapaxes(v, -1, -2)), target, atol=tol * scale * 10)
    k = s.shape[-1]
    ref = torch.linalg.svdvals(torch.from_numpy(target.astype("float64"))).numpy()[..., :k]
    np.testing.assert_allclose(s, ref, atol=tol * scale * 10)
    eye = np.eye(k)
    # columns that belong to a zero singular value are still orthonormal (QR and SVD give unit vectors)
    np.testing.assert_allclose(np.swapaxes(u, -1, -2) @ u, np.broadcast_to(eye, u.shape[:-2] + (k, k)), atol=tol * 10)
    np.testing.assert_allclose(np.swapaxes(v, -1, -2) @ v, np.broadcast_to(eye, v.shape[:-2] + (k, k)), atol=tol * 10)


SHAPES = [  # (m, n, rank, q, batch)
    (20, 10, 3, 6, ()), (10, 20, 3, 6, ()), (12, 12, 6, 6, ()), (30, 8, 1, 2, ()), (8, 5, 5, 6, ()),
    (5, 8, 5, 10, ()), (9, 7, 2, 3, (2,)), (7, 9, 4, 4, (2, 3)), (16, 16, 0, 3, ()), (6, 4, 2, 0, ()),
]


@pytest.mark.parametrize("m,n,rank,q,batch", SHAPES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("niter", [0, 2, None])
def test_svd_lowrank_reconstructs_low_rank(m, n, rank, q, batch, dtype, niter):
    torch = get_torch()
    a = _low_rank(m, n, rank, batch, dtype)
    U, S, V = ember.svd_lowrank(ember.tensor(a), q=q, niter=niter)
    tU, tS, tV = torch.svd_lowrank(torch.from_numpy(a), q=q, niter=niter)
    for e, t in zip((U, S, V), (tU, tS, tV)):
        assert tuple(e.shape) == tuple(t.shape) and str(e.dtype)[6:] == str(t.dtype)[6:]
    if q >= rank:
        _check_factors(U, S, V, a, dtype)


@pytest.mark.parametrize("m,n,rank,q,batch", SHAPES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_svd_lowrank_with_M(m, n, rank, q, batch, dtype):
    """With M, it factors A - M; M broadcasts to A's shape (here a row vector and a full matrix)."""
    torch = get_torch()
    low = _low_rank(m, n, rank, batch, dtype)
    row = np.random.default_rng(1).standard_normal(n).astype(dtype)
    for M in (row, np.broadcast_to(row, low.shape).copy()):
        U, S, V = ember.svd_lowrank(ember.tensor(low + M), q=q, M=ember.tensor(M))
        tU, _, _ = torch.svd_lowrank(torch.from_numpy(low + M), q=q, M=torch.from_numpy(M))
        assert tuple(U.shape) == tuple(tU.shape)
        if q >= rank:
            _check_factors(U, S, V, low, dtype)


@pytest.mark.parametrize("m,n,rank,batch", [(30, 8, 2, ()), (8, 30, 3, ()), (12, 10, 4, (3,)), (9, 9, 0, ())])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("q", [None, 4, 6])
def test_pca_lowrank_centers(m, n, rank, batch, dtype, q):
    torch = get_torch()
    # data of rank `rank` around a mean far from 0: centering removes the mean, rank stays <= rank
    a = _low_rank(m, n, rank, batch, dtype) + np.arange(n, dtype=dtype) * 3
    U, S, V = ember.pca_lowrank(ember.tensor(a), q=q)
    tU, tS, tV = torch.pca_lowrank(torch.from_numpy(a), q=q)
    for e, t in zip((U, S, V), (tU, tS, tV)):
        assert tuple(e.shape) == tuple(t.shape) and str(e.dtype)[6:] == str(t.dtype)[6:]
    assert S.shape[-1] == (min(6, m, n) if q is None else q)
    _check_factors(U, S, V, a - a.mean(axis=-2, keepdims=True), dtype)
    # center=False is svd_lowrank
    U, S, V = ember.pca_lowrank(ember.tensor(a), q=q, center=False)
    ref = torch.linalg.svdvals(torch.from_numpy(a.astype("float64"))).numpy()[..., :S.shape[-1]]
    np.testing.assert_allclose(S.numpy()[..., :1], ref[..., :1], rtol=TOL[dtype] * 10)


def test_power_iterations_sharpen_a_full_rank_sample():
    """On a full-rank matrix with a fast-decaying spectrum, niter power iterations bring the leading
    singular values to torch.linalg.svdvals'."""
    torch = get_torch()
    rng = np.random.default_rng(5)
    u, _ = np.linalg.qr(rng.standard_normal((60, 40)))
    v, _ = np.linalg.qr(rng.standard_normal((40, 40)))
    a = (u * 0.5 ** np.arange(40)) @ v.T
    ember.manual_seed(0)
    S = ember.svd_lowrank(ember.tensor(a), q=8, niter=4)[1].numpy()
    np.testing.assert_allclose(S[:4], torch.linalg.svdvals(torch.from_numpy(a)).numpy()[:4], rtol=1e-8)


def test_follows_manual_seed():
    a = ember.tensor(_low_rank(9, 7, 5))
    ember.manual_seed(3)
    first = ember.svd_lowrank(a, q=2, niter=0)
    ember.manual_seed(3)
    again = ember.svd_lowrank(a, q=2, niter=0)
    assert all(ember.equal(x, y) for x, y in zip(first, again))
    other = ember.svd_lowrank(a, q=2, niter=0)  # the stream moved on: another sample
    assert not ember.equal(first[0], other[0])


@pytest.mark.parametrize("shape", [(5, 4), (4, 5)])
def test_sparse_input(shape):
    """A sparse COO matrix gives what its dense copy gives (the same random sample, so the same factors)."""
    i = ember.tensor([[0, 1, 2, 3, 3], [1, 0, 3, 2, 0]])
    i = i if shape[0] > shape[1] else i.flip(0)
    sp = ember.sparse_coo_tensor(i, ember.tensor([1.0, 2.0, 3.0, 4.0, -1.0], dtype=ember.float64), shape)
    dense = sp.to_dense()
    for fn, kw in ((ember.svd_lowrank, {}), (ember.pca_lowrank, {}), (ember.pca_lowrank, {"center": False})):
        ember.manual_seed(7)
        got = fn(sp, q=4, **kw)
        ember.manual_seed(7)
        want = fn(dense, q=4, **kw)
        for g, w in zip(got, want):
            np.testing.assert_allclose(g.numpy(), w.numpy(), atol=1e-12)


def test_gradcheck():
    a = ember.tensor(_low_rank(7, 5, 2)).requires_grad_()

    def svd_fn(A):
        ember.manual_seed(1)  # the same sample at every evaluation: a smooth function of A
        U, S, V = ember.svd_lowrank(A, q=2)
        return U @ ember.diag_embed(S) @ V.mT, S

    def pca_fn(A):
        ember.manual_seed(1)
        U, S, V = ember.pca_lowrank(A, q=2)
        return U @ ember.diag_embed(S) @ V.mT, S

    def wide_fn(A):
        ember.manual_seed(1)
        return ember.svd_lowrank(A.mT, q=2, niter=1)

    for fn in (svd_fn, pca_fn, wide_fn):
        assert ember.autograd.gradcheck(fn, (a,))


@pytest.mark.parametrize("center", [True, False])
def test_singular_value_gradient_matches_torch(center):
    """For a matrix of exact rank q, dS_i/dA = u_i v_i^T does not depend on the random sample."""
    torch = get_torch()
    a = _low_rank(8, 6, 3, (2,))
    w = np.array([1.0, 2.0, 3.0])
    e = ember.tensor(a).requires_grad_()
    (ember.pca_lowrank(e, q=3, center=center)[1] * ember.tensor(w)).sum().backward()
    t = torch.from_numpy(a).requires_grad_()
    (torch.pca_lowrank(t, q=3, center=center)[1] * torch.from_numpy(w)).sum().backward()
    np.testing.assert_allclose(e.grad.numpy(), t.grad.numpy(), atol=1e-10)


def _errors_like_torch(fn_name, make_args, kwargs):
    torch = get_torch()
    with pytest.raises(Exception) as t_err:
        getattr(torch, fn_name)(*make_args(torch), **kwargs)
    # torch's kind of error, or the standard kind it derives from (torch's NotImplementedError for
    # float16 QR is a RuntimeError)
    kind = next(k for k in (TypeError, ValueError, AttributeError, RuntimeError) if isinstance(t_err.value, k))
    with pytest.raises(kind):
        getattr(ember, fn_name)(*make_args(ember), **kwargs)


def _mat(*shape, dtype="float32"):
    return lambda lib: (lib.ones(*shape, dtype=getattr(lib, dtype)),)


BAD = [
    ("svd_lowrank", _mat(5), {}),
    ("svd_lowrank", _mat(5, 4, dtype="int64"), {}),
    ("svd_lowrank", _mat(5, 4, dtype="float16"), {"q": 2}),
    ("svd_lowrank", _mat(5, 4, dtype="bfloat16"), {"q": 2}),
    ("svd_lowrank", _mat(5, 4), {"q": -1}),
    ("svd_lowrank", _mat(5, 4), {"q": 2.0}),
    ("svd_lowrank", lambda lib: (lib.ones(5, 4), 2, 2, lib.ones(3)), {}),  # M does not broadcast
    ("svd_lowrank", lambda lib: ([[1.0, 2.0], [3.0, 4.0]],), {}),  # not a tensor
    ("pca_lowrank", _mat(5), {}),
    ("pca_lowrank", _mat(5, 4, dtype="int64"), {}),
    ("pca_lowrank", _mat(5, 4), {"q": 5}),
    ("pca_lowrank", _mat(5, 4), {"q": -1}),
    ("pca_lowrank", _mat(5, 4), {"q": 2.5}),
    ("pca_lowrank", _mat(5, 4), {"niter": -1}),
    ("pca_lowrank", _mat(5, 4), {"niter": None}),
]


@pytest.mark.parametrize("fn_name,make_args,kwargs", BAD, ids=[f"{b[0]}-{i}" for i, b in enumerate(BAD)])
def test_errors_match_torch(fn_name, make_args, kwargs):
    _errors_like_torch(fn_name, make_args, kwargs)


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_complex_input(dtype):
    # a rank-2 complex matrix is recovered exactly (complex QR and SVD underneath)
    ember.manual_seed(0)
    d = getattr(ember, dtype)
    A = ember.randn(6, 2, dtype=d) @ ember.randn(2, 5, dtype=d)
    U, S, V = ember.svd_lowrank(A, q=3)
    assert U.dtype == d and V.dtype == d and S.dtype == (ember.float32 if dtype == "complex64" else ember.float64)
    tol = 1e-4 if dtype == "complex64" else 1e-10
    assert float((U * S.to(d).unsqueeze(-2) @ V.mH - A).abs().max()) < tol * float(A.abs().max())


def test_defaults():
    torch = get_torch()
    for name in ("svd_lowrank", "pca_lowrank"):
        e, t = inspect.signature(getattr(ember, name)), inspect.signature(getattr(torch, name))
        assert [(p.name, p.default) for p in e.parameters.values()] == \
               [(p.name, p.default) for p in t.parameters.values()]
    a = ember.tensor(_low_rank(10, 9, 9))
    assert ember.svd_lowrank(a)[1].shape == (6,)  # q=6
    assert ember.pca_lowrank(a[:4])[1].shape == (4,)  # q = min(6, m, n)
