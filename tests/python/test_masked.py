"""ember.masked (torch.masked's reductions and normalizations on strided tensors) against torch 2.13:
values, dtypes, fully masked-out slices, broadcast masks, gradients and errors."""
import math

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")


def pair(a):
    return ember.tensor(a), torch.tensor(a)


def same(e, t, rtol=1e-6, atol=1e-6):
    assert str(e.dtype).split(".")[-1] == str(t.dtype).split(".")[-1], (e.dtype, t.dtype)
    assert tuple(e.shape) == tuple(t.shape), (e.shape, t.shape)
    np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), rtol=rtol, atol=atol, equal_nan=True)


RNG = np.random.default_rng(0)
X = RNG.standard_normal((3, 4, 5))
MASK = RNG.random((3, 4, 5)) > 0.4
MASK[1, 2, :] = False  # a fully masked-out slice along the last dim
MASK[:, 0, 0] = False  # ... and along the first
ROW_MASK = np.array([True, False, True, True, False])  # broadcasts to (3, 4, 5)

REDUCTIONS = ["sum", "prod", "amax", "amin", "mean", "logsumexp", "norm", "var", "std"]


@pytest.mark.parametrize("op", REDUCTIONS)
@pytest.mark.parametrize("dim", [None, 0, -1, (0, 2), ()])
@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("mask", ["full", "row", None])
def test_reductions(op, dim, keepdim, mask):
    ex, tx = pair(X)
    m = {"full": MASK, "row": ROW_MASK, None: None}[mask]
    kw = dict(dim=dim, keepdim=keepdim)
    ek, tk = dict(kw), dict(kw)
    if m is not None:
        ek["mask"], tk["mask"] = pair(m)
    same(getattr(ember.masked, op)(ex, **ek), getattr(torch.masked, op)(tx, **tk))


@pytest.mark.parametrize("op", ["softmax", "log_softmax", "softmin", "cumsum", "cumprod", "argmax", "argmin",
                                "median"])
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_along_one_dim(op, dim):
    ex, tx = pair(X)
    em, tm = pair(MASK)
    same(getattr(ember.masked, op)(ex, dim, mask=em), getattr(torch.masked, op)(tx, dim, mask=tm))
    same(getattr(ember.masked, op)(ex, dim), getattr(torch.masked, op)(tx, dim))


def test_normalize_and_logaddexp():
    ex, tx = pair(X)
    em, tm = pair(MASK)
    for ord in (1, 2, math.inf):
        same(ember.masked.normalize(ex, ord, 1, mask=em), torch.masked.normalize(tx, ord, 1, mask=tm))
    ey, ty = pair(X[::-1].copy())
    same(ember.masked.logaddexp(ex, ey, input_mask=em, other_mask=em[0]),
         torch.masked.logaddexp(tx, ty, input_mask=tm, other_mask=tm[0]))


@pytest.mark.parametrize("dtype", ["int32", "int64", "uint8", "bool"])
def test_integer_inputs(dtype):
    a = (RNG.integers(0, 3, size=(4, 5))).astype(dtype)
    ex, tx = pair(a)
    em, tm = pair(MASK[0])
    for op in ("sum", "prod", "amax", "amin", "argmax", "argmin"):
        if dtype == "bool" and op in ("amax", "amin", "argmax", "argmin"):
            with pytest.raises(NotImplementedError):  # no identity for bool, as torch
                getattr(ember.masked, op)(ex, 1, mask=em)
            continue
        same(getattr(ember.masked, op)(ex, 1, mask=em), getattr(torch.masked, op)(tx, 1, mask=tm))
    if dtype != "bool":
        same(ember.masked.var(ex, 1, mask=em), torch.masked.var(tx, 1, mask=tm))


def test_median_of_integers_refuses_fully_masked_rows():
    ex = ember.tensor([[1, 2], [3, 4]])
    with pytest.raises(ValueError, match="fully masked out"):
        ember.masked.median(ex, 1, mask=ember.tensor([[True, False], [False, False]]))


def test_complex_sum_mean_var():
    z = X[0] + 1j * X[1]
    ez, tz = pair(z)
    em, tm = pair(MASK[0])
    for op in ("sum", "mean", "var", "std", "logsumexp"):
        same(getattr(ember.masked, op)(ez, 1, mask=em), getattr(torch.masked, op)(tz, 1, mask=tm))


def test_gradients_match_torch():
    em, tm = pair(MASK)
    for op, args in (("sum", (1,)), ("mean", (1,)), ("softmax", (2,)), ("log_softmax", (2,)), ("var", (0,)),
                     ("norm", (2.0, 1)), ("amax", (2,)), ("prod", (0,)), ("cumsum", (1,)), ("logsumexp", (1,))):
        ex = ember.tensor(X).requires_grad_()
        tx = torch.tensor(X).requires_grad_()
        e = getattr(ember.masked, op)(ex, *args, mask=em)
        t = getattr(torch.masked, op)(tx, *args, mask=tm)
        w = RNG.standard_normal(tuple(t.shape))
        fin_e, fin_t = e.isfinite(), t.isfinite()  # (fully masked slices give nan/inf: left out of the loss)
        (ember.where(fin_e, e, 0) * ember.tensor(w)).sum().backward()
        (torch.where(fin_t, t, 0) * torch.tensor(w)).sum().backward()
        same(ex.grad, tx.grad, rtol=1e-9, atol=1e-9)


def test_errors():
    ex = ember.tensor(X)
    with pytest.raises(RuntimeError, match="appears multiple times"):
        ember.masked.sum(ex, (0, 0))
    with pytest.raises(IndexError, match="Dimension out of range"):
        ember.masked.sum(ex, 3)
    with pytest.raises(IndexError, match="broadcastable mask"):
        ember.masked.sum(ex, 0, mask=ember.ones(2, 3, 4, 5, dtype=ember.bool))
    with pytest.raises(ValueError, match="Could not infer output dtype"):
        ember.masked.mean(ember.tensor([1, 2]))
    with pytest.raises(ValueError, match="expects strided"):
        ember.masked.sum(ember.tensor([[0.0, 1.0]]).to_sparse())


def test_names_match_torch():
    assert set(ember.masked.__all__) >= set(torch.masked.__all__) - {"MaskedTensor", "masked_tensor",
                                                                    "as_masked_tensor", "is_masked_tensor"}
