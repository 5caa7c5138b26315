"""Conjugate views (Note [Conjugate views] in csrc/ember/core/tensor_impl.h): conj() of a complex tensor is a
view with the conjugate bit flipped, and the imaginary part of one a view with the negative bit, as in PyTorch. Checked against torch where it is installed; the
semantics (write-through, autograd, serialization) are also checked on their own."""
import io
import pickle

import numpy as np
import pytest

import ember

try:
    import torch
except ImportError:  # the parity checks skip, the rest runs
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="torch not installed")


def cx(shape=(3, 4), dtype=ember.complex128, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shape) + 1j * rng.standard_normal(shape)
    return ember.tensor(a, dtype=dtype)


def close(a, b):
    np.testing.assert_allclose(np.asarray(a.resolve_conj().detach()), np.asarray(b), rtol=1e-6, atol=1e-6)


def test_conj_is_a_view_with_the_bit():
    x = cx()
    y = x.conj()
    assert y.is_conj() and not x.is_conj() and ember.is_conj(y)
    assert y.data_ptr() == x.data_ptr()
    close(y, np.conj(x.numpy()))
    assert not y.conj().is_conj() and y.conj().data_ptr() == x.data_ptr()
    r = y.resolve_conj()
    assert not r.is_conj() and r.data_ptr() != x.data_ptr()
    assert x.resolve_conj() is x and ember.resolve_conj(x) is x
    real = ember.randn(3)
    assert real.conj() is real and not real.conj().is_conj()


def test_views_keep_the_bit_and_copies_drop_it():
    y = cx((2, 3, 4)).conj()
    for v in (y[0], y[:, 1:], y.transpose(0, 1), y.reshape(6, 4), y.view(6, 4),
              y.unsqueeze(0), y.unsqueeze(0).expand(2, 2, 3, 4), y.flatten(),
              y.permute(2, 0, 1), y.diagonal(0, 1, 2), y.narrow(2, 1, 2), y.unbind(0)[1], y.detach(),
              y.as_strided((2,), (1,)), y.contiguous(), y.to(ember.complex128), y.squeeze()):
        assert v.is_conj(), v.shape
    for c in (y.clone(), y + 0, y * 1, ember.cat([y, y]), y.to(ember.complex64), y.new_empty(2),
              ember.empty_like(y), y.transpose(0, 1).contiguous()):
        assert not c.is_conj()
    close(y.transpose(0, 1).contiguous(), np.conj(y.conj().numpy()).transpose(1, 0, 2))
    close(y.clone(), np.conj(y.conj().numpy()))


def test_numpy_force_resolves():
    x = cx()
    np.testing.assert_allclose(x.conj().numpy(force=True), np.conj(x.numpy()))


def test_values_through_ops():
    x = cx()
    y = x.conj()
    want = np.conj(x.numpy())
    close(y + 1, want + 1)
    close(y * y, want * want)
    close(y.exp(), np.exp(want))
    close(y @ x.t(), want @ x.numpy().T)
    close(ember.where(ember.ones(3, 4, dtype=ember.bool), y, x), want)
    np.testing.assert_allclose(y.abs().numpy(), np.abs(want))
    assert y.sum().item() == pytest.approx(want.sum())
    assert y[0, 0].item() == pytest.approx(want[0, 0])
    np.testing.assert_allclose(np.array(y.tolist()), want)
    np.testing.assert_allclose(y.real.numpy(), want.real)
    np.testing.assert_allclose(y.imag.resolve_neg().numpy(), want.imag)
    close(y.to(ember.complex64), want)
    assert repr(y) == repr(y.resolve_conj())


def test_writes_go_through_the_bit():
    x = cx()
    y = x.conj()
    y[0, 0] = 1 + 2j
    assert x[0, 0].item() == 1 - 2j
    y.mul_(2)
    assert x[0, 0].item() == 2 - 4j
    y.zero_()
    assert (x == 0).all()
    y.copy_(ember.full((3, 4), 3 + 1j, dtype=ember.complex128))
    assert (x == 3 - 1j).all()
    y.real = ember.ones(3, 4)
    y.imag = ember.full((3, 4), 5.0)
    assert (x == 1 - 5j).all()
    out = cx().conj()
    ember.add(ember.ones(3, 4, dtype=ember.complex128), 1j, out=out)
    close(out, np.full((3, 4), 1 + 1j))
    assert out.is_conj() and (out.conj() == 1 - 1j).all()


def test_refusals():
    y = cx().conj()
    with pytest.raises(RuntimeError, match="conjugate bit"):
        y.numpy()
    with pytest.raises(RuntimeError, match="view_as_real doesn't work on unresolved conjugated tensors"):
        ember.view_as_real(y)
    with pytest.raises(RuntimeError, match="conjugate view"):
        y.view(ember.float64)
    with pytest.raises(BufferError):
        y.__dlpack__()
    np.testing.assert_allclose(ember.view_as_real(y.resolve_conj()).numpy()[..., 1], -cx().numpy().imag)


def test_serialization_keeps_the_bit():
    x = cx()
    y = x.conj()
    buf = io.BytesIO()
    ember.save({"x": x, "y": y}, buf)
    buf.seek(0)
    d = ember.load(buf)
    assert d["y"].is_conj() and not d["x"].is_conj()
    assert d["y"].data_ptr() == d["x"].data_ptr()  # one storage, as saved
    close(d["y"], np.conj(x.numpy()))
    z = pickle.loads(pickle.dumps(y))
    assert z.is_conj()
    close(z, np.conj(x.numpy()))
    import copy
    c = copy.deepcopy(y)
    close(c, np.conj(x.numpy()))


def test_autograd_through_conj_views():
    x = cx((4,)).requires_grad_(True)
    w = cx((4,), seed=1)
    (x.conj() * w).sum().abs().backward()
    g1 = x.grad.resolve_conj().clone()
    x.grad = None
    (x.conj_physical() * w).sum().abs().backward()
    close(g1, x.grad.resolve_conj().numpy())
    # in-place through a conjugate view of a non-leaf: the base's history takes it
    a = cx((4,)).requires_grad_(True)
    b = a * 1
    v = b.conj()
    v.mul_(w)
    (b * b.conj()).real.sum().backward()
    want = (a.detach().conj() * w).conj()
    ga = a.grad.clone()
    a.grad = None
    b2 = (a.conj_physical() * w).conj_physical()
    (b2 * b2.conj_physical()).real.sum().backward()
    close(ga, a.grad.resolve_conj().numpy())
    close(b, want.resolve_conj().detach().numpy())


def test_gradcheck_conj():
    x = cx((3,)).requires_grad_(True)
    assert ember.autograd.gradcheck(lambda t: (t.conj() * t.conj()).conj(), (x,))
    assert ember.autograd.gradgradcheck(lambda t: t.conj() * t, (x,))

    def through_view_write(t):
        u = t * 1
        u.conj()[1:].mul_(2 + 1j)
        return u
    assert ember.autograd.gradcheck(through_view_write, (x,))


def test_mH_adjoint_are_conjugate_views():
    x = cx((3, 4))
    for v in (x.mH, x.H, x.adjoint(), ember.adjoint(x)):
        assert v.is_conj() and v.data_ptr() == x.data_ptr()
        close(v, np.conj(x.numpy()).T)
    r = ember.randn(3, 4)
    assert not r.mH.is_conj()


@needs_torch
def test_matches_torch():
    a = np.random.default_rng(3).standard_normal((3, 4)) + 1j * np.random.default_rng(4).standard_normal((3, 4))
    tx, ex = torch.tensor(a), ember.tensor(a)
    ty, ey = tx.conj(), ex.conj()
    for f in (lambda t, m: t.clone(), lambda t, m: t.t(), lambda t, m: t[1:], lambda t, m: t.contiguous(),
              lambda t, m: t.reshape(12), lambda t, m: m.conj(t), lambda t, m: t.to(m.complex64),
              lambda t, m: t.detach(), lambda t, m: t.real, lambda t, m: t + 1, lambda t, m: t.mT,
              lambda t, m: t.mH, lambda t, m: m.resolve_conj(t)):
        r_t, r_e = f(ty, torch), f(ey, ember)
        assert r_t.is_conj() == r_e.is_conj()
        np.testing.assert_allclose(r_e.resolve_conj().numpy(), r_t.resolve_conj().numpy())
    # a torch checkpoint holding a conjugate view loads with its bit, and Ember's loads in torch
    for save, load, pair in ((torch.save, ember.load, (tx, ty)), (ember.save, torch.load, (ex, ey))):
        buf = io.BytesIO()
        save({"x": pair[0], "y": pair[1]}, buf)
        buf.seek(0)
        d = load(buf)
        assert d["y"].is_conj() and not d["x"].is_conj()
        np.testing.assert_allclose(d["y"].resolve_conj().numpy(), ty.resolve_conj().numpy())


def test_imag_of_a_conjugate_view_is_a_negative_view():
    x = cx((4,))
    im = x.conj().imag
    assert im.is_neg() and ember.is_neg(im) and not im.is_conj()
    assert im.data_ptr() == x.data_ptr() + 8  # the stored imaginary parts
    np.testing.assert_allclose(np.array(im.tolist()), -x.numpy().imag)
    assert im[1].item() == -x[1].item().imag
    assert not (im + 0).is_neg() and not im.clone().is_neg() and im[1:].is_neg()
    with pytest.raises(RuntimeError, match="negative bit"):
        im.numpy()
    im[0] = 7.0
    assert x[0].item().imag == -7.0
    x.conj().imag = ember.full((4,), 2.0, dtype=ember.float64)
    np.testing.assert_allclose(x.numpy().imag, -2.0)
    assert repr(im) == repr(im.resolve_neg())
    r = im.resolve_neg()
    assert not r.is_neg() and r.data_ptr() != x.data_ptr()
    n = ember._neg_view(x)
    assert n.is_neg()
    np.testing.assert_allclose(ember.view_as_real(n).resolve_neg().numpy(), -ember.view_as_real(x).numpy())
    with pytest.raises(RuntimeError, match="negative bit"):
        n.view(ember.float64)
    for z in (pickle.loads(pickle.dumps(im)), ember.load(_saved(im))):
        assert z.is_neg()
        np.testing.assert_allclose(z.resolve_neg().numpy(), im.resolve_neg().numpy())


def _saved(t):
    buf = io.BytesIO()
    ember.save(t, buf)
    buf.seek(0)
    return buf


def test_inplace_writes_through_real_views_differentiate():
    # in-place ops through view_as_real/real/imag (of conjugate views too) and through a negative view:
    # the base's history takes them (first and second order)
    a = cx((3,)).requires_grad_(True)
    w = ember.randn(3, dtype=ember.float64).requires_grad_(True)

    def imag_mul(t):
        u = t * 1
        u.imag.mul_(3)
        return u

    def conj_imag_mul(t):
        u = t * 1
        u.conj().imag.mul_(3)
        return u

    def as_real_slice(t):
        u = t * 1
        ember.view_as_real(u)[1:].mul_(2)
        return u * u

    def stale_real_view(t):
        u = t * 1
        r = u.real
        u.mul_(2 + 1j)
        return r * r

    def neg_view_add(t):
        u = t * 1
        ember._neg_view(u)[1:].add_(1.5)
        return u * u

    for f, x in ((imag_mul, a), (conj_imag_mul, a), (as_real_slice, a), (stale_real_view, a), (neg_view_add, w)):
        assert ember.autograd.gradcheck(f, (x,)), f.__name__
        assert ember.autograd.gradgradcheck(f, (x,)), f.__name__
    u = w.detach().clone()
    ember._neg_view(u)[1:].add_(1.5)
    np.testing.assert_allclose(u.numpy()[1:], w.detach().numpy()[1:] - 1.5)


@needs_torch
def test_negative_views_match_torch():
    a = np.random.default_rng(5).standard_normal((3,)) + 1j * np.random.default_rng(6).standard_normal((3,))
    tx, ex = torch.tensor(a), ember.tensor(a)
    ti, ei = tx.conj().imag, ex.conj().imag
    assert ti.is_neg() == ei.is_neg()
    for f in (lambda t, m: t.clone(), lambda t, m: t[1:], lambda t, m: t * 2, lambda t, m: m.resolve_neg(t),
              lambda t, m: t.exp(), lambda t, m: t.unsqueeze(0)):
        r_t, r_e = f(ti, torch), f(ei, ember)
        assert r_t.is_neg() == r_e.is_neg()
        np.testing.assert_allclose(r_e.resolve_neg().numpy(), r_t.resolve_neg().numpy())
    for save, load, t in ((torch.save, ember.load, ti), (ember.save, torch.load, ei)):
        buf = io.BytesIO()
        save({"im": t}, buf)
        buf.seek(0)
        d = load(buf)
        assert d["im"].is_neg()
        np.testing.assert_allclose(d["im"].resolve_neg().numpy(), ti.resolve_neg().numpy())


def test_shared_memory_pickling_keeps_the_bits():
    from multiprocessing.reduction import ForkingPickler

    import ember.multiprocessing  # noqa: F401  (registers the shared-memory reductions)
    x = cx((3,))
    for t in (x.conj(), x.conj().imag):
        buf = io.BytesIO()
        ForkingPickler(buf).dump(t)
        z = pickle.loads(buf.getvalue())
        assert (z.is_conj(), z.is_neg()) == (t.is_conj(), t.is_neg())
        np.testing.assert_allclose(np.array(z.tolist()), np.array(t.tolist()))


# An op handed a conjugate (or negative) view computes what it computes on the materialized values: the
# generated guard's invariant, checked without torch over ops of every kind (elementwise, reductions,
# BLAS/LAPACK, FFT, indexing, shape, in-place and out=).
_OPS = {
    "add": lambda a, b: a + b, "mul": lambda a, b: a * b, "div": lambda a, b: a / (b + 3),
    "exp": lambda a, b: a.exp(), "sqrt": lambda a, b: a.sqrt(), "abs": lambda a, b: a.abs(),
    "angle": lambda a, b: a.angle(), "sum": lambda a, b: a.sum(0), "mean": lambda a, b: a.mean(),
    "cumsum": lambda a, b: a.cumsum(1), "matmul": lambda a, b: a @ b.mT, "inv": lambda a, b: ember.linalg.inv(
        a[:, :3] + 4 * ember.eye(3, dtype=a.dtype)), "fft": lambda a, b: ember.fft.fft(a),
    "index_select": lambda a, b: a.index_select(1, ember.tensor([2, 0])), "cat": lambda a, b: ember.cat([a, b]),
    "where": lambda a, b: ember.where(a.real > 0, a, b), "einsum": lambda a, b: ember.einsum("ij,kj->ik", a, b),
    "getitem": lambda a, b: a[ember.tensor([1, 0])], "flip": lambda a, b: a.flip(0),
    "isclose": lambda a, b: ember.isclose(a, b), "pow": lambda a, b: a ** 2,
}


@pytest.mark.parametrize("name", sorted(_OPS))
@pytest.mark.parametrize("bits", ["conj", "conj+neg"])
def test_ops_see_the_values_of_views_with_bits(name, bits):
    fn = _OPS[name]
    a, b = cx((3, 4), seed=7), cx((3, 4), seed=8)

    def viewed(t):  # the same values behind the bit(s): the storage holds conj(t), or -conj(t)
        if bits == "conj":
            return t.conj_physical().conj()
        return ember._neg_view(t.conj_physical().neg().conj())
    va, vb = viewed(a), viewed(b)
    assert va.is_conj() and (va.is_neg() == (bits == "conj+neg"))
    want, got = fn(a, b), fn(va, vb)
    np.testing.assert_allclose(np.asarray(got.resolve_conj().resolve_neg()),
                               np.asarray(want.resolve_conj().resolve_neg()), rtol=1e-12, atol=1e-12)
    # in place and out= through the bits land as values
    c = viewed(a)
    c.mul_(2)
    np.testing.assert_allclose(np.asarray(c.resolve_conj().resolve_neg()), 2 * a.numpy(), rtol=1e-12)
    out = viewed(ember.zeros(3, 4, dtype=ember.complex128))
    ember.add(a, b, out=out)
    np.testing.assert_allclose(np.asarray(out.resolve_conj().resolve_neg()), (a + b).numpy(), rtol=1e-12)
