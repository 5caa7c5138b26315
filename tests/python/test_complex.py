"""Complex dtypes (complex64, complex128) against torch 2.13: promotion, creation, printing, the
elementwise ops and reductions that take them, the real/complex views, and gradients (PyTorch's
convention: dL/dx + i dL/dy) compared with torch's on the same inputs."""
import itertools

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64",
          "complex64", "complex128"]
CDTYPES = ["complex64", "complex128"]


def E(name):
    return getattr(ember, name)


def T(name):
    return getattr(torch, name)


def rand_complex(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    z = rng.standard_normal(shape) + 1j * rng.standard_normal(shape)
    return z.astype(np.complex64 if dtype == "complex64" else np.complex128)


def pair(z):
    return ember.tensor(z), torch.tensor(z)


def close(a, b, rtol=1e-5, atol=1e-6):
    assert str(a.dtype).split(".")[-1] == str(b.dtype).split(".")[-1], (a.dtype, b.dtype)
    assert tuple(a.shape) == tuple(b.shape), (a.shape, b.shape)
    np.testing.assert_allclose(a.detach().resolve_conj().numpy(), b.detach().resolve_conj().numpy(), rtol=rtol, atol=atol,
                               equal_nan=True)


# ---- dtypes and promotion

def test_dtype_objects():
    for name, alias, size in (("complex64", "cfloat", 8), ("complex128", "cdouble", 16)):
        d = E(name)
        assert d is E(alias) and d.is_complex and not d.is_floating_point and d.itemsize == size
        assert repr(d) == f"ember.{name}"
    assert not ember.float32.is_complex


def test_promote_types_matches_torch():
    for a, b in itertools.product(DTYPES, CDTYPES):
        for x, y in ((a, b), (b, a)):
            if "float16" in x + y and "complex" in x + y:
                continue  # torch promotes float16 to complex32, which Ember lacks
            assert str(ember.promote_types(E(x), E(y))).split(".")[1] == str(torch.promote_types(T(x), T(y))).split(".")[1]


@pytest.mark.parametrize("real", ["int64", "float32", "float64", "bool"])
@pytest.mark.parametrize("cplx", CDTYPES)
def test_result_type_with_numbers_and_zero_dim(real, cplx):
    cases = [
        lambda m: m.ones(2, dtype=getattr(m, real)) + 1j,
        lambda m: m.ones(2, dtype=getattr(m, real)) * m.tensor(1j, dtype=getattr(m, cplx)),
        lambda m: m.ones(2, dtype=getattr(m, cplx)) + m.tensor(2.0, dtype=getattr(m, real)),
        lambda m: m.tensor(1.0, dtype=getattr(m, real)) * m.ones(2, dtype=getattr(m, cplx)),
        lambda m: m.ones(2, dtype=getattr(m, cplx)) * 2.5,
    ]
    for f in cases:
        assert str(f(ember)).replace("ember", "torch") == str(f(torch))


# ---- creation, conversion, printing

def test_tensor_from_python_and_numpy():
    data = [[1 + 2j, 3], [0.5j, -1.25]]
    close(ember.tensor(data), torch.tensor(data))
    close(ember.tensor(data, dtype=ember.complex128), torch.tensor(data, dtype=torch.complex128))
    close(ember.tensor([1, 2.5, 1j]), torch.tensor([1, 2.5, 1j]))
    z = rand_complex((3, 4), "complex64")
    close(ember.tensor(z), torch.tensor(z))
    close(ember.from_numpy(z), torch.from_numpy(z))
    a = ember.tensor(z)
    np.testing.assert_array_equal(a.numpy(), z)
    assert ember.tensor(np.complex64(1 + 2j)).dtype == ember.complex64
    with pytest.raises(TypeError, match="must be real number, not complex"):
        ember.tensor([1 + 1j], dtype=ember.float32)


def test_default_dtype_picks_the_complex_twin():
    ember.set_default_dtype(ember.float64)
    try:
        assert ember.tensor(1j).dtype == ember.complex128
        assert (ember.ones(2, dtype=ember.int64) + 1j).dtype == ember.complex128
    finally:
        ember.set_default_dtype(ember.float32)
    assert ember.tensor(1j).dtype == ember.complex64


def test_item_tolist_and_python_numbers():
    e, t = pair(np.array([[1 + 2j, -3.5 - 1e-5j]], dtype=np.complex128))
    assert e.tolist() == t.tolist()
    assert e[0, 0].item() == t[0, 0].item() and complex(e[0, 1]) == complex(t[0, 1])
    assert float(ember.tensor(2 + 0j)) == 2.0 and int(ember.tensor(3 + 0j)) == 3
    for f in (float, int):
        with pytest.raises(RuntimeError, match="without overflow"):
            f(ember.tensor(1 + 1j))


@pytest.mark.parametrize("data", [
    [1 + 2j, -3.5 - 1e-5j], [[1 + 2j, 3], [0.5j, -1]], [1e10 + 1j, 0.001j], [0j], 2 + 0j, [float("nan") + 1j, 1 - 1j * float("inf")],
])
@pytest.mark.parametrize("dtype", CDTYPES)
def test_repr_matches_torch(data, dtype):
    assert repr(ember.tensor(data, dtype=E(dtype))).replace("ember.", "torch.") == repr(torch.tensor(data, dtype=T(dtype)))


def test_factories_and_fill():
    for dt in CDTYPES:
        close(ember.zeros(2, 3, dtype=E(dt)), torch.zeros(2, 3, dtype=T(dt)))
        close(ember.ones(3, dtype=E(dt)), torch.ones(3, dtype=T(dt)))
        close(ember.full((2,), 1 - 2j, dtype=E(dt)), torch.full((2,), 1 - 2j, dtype=T(dt)))
        close(ember.zeros(3, dtype=E(dt)).fill_(2 + 3j), torch.zeros(3, dtype=T(dt)).fill_(2 + 3j))
    close(ember.full((2,), 1 - 2j), torch.full((2,), 1 - 2j))
    with pytest.raises(RuntimeError, match="without overflow"):
        ember.zeros(3).fill_(1 + 2j)
    x = ember.zeros(3)
    x.fill_(4 + 0j)
    assert x.tolist() == [4.0] * 3


def test_casts_between_real_and_complex():
    z = rand_complex((5,), "complex128")
    e, t = pair(z)
    for dt in ("float32", "float64", "int64", "bool", "complex64"):
        close(e.to(E(dt)), t.to(T(dt)))
    close(ember.arange(4).to(ember.complex64), torch.arange(4).to(torch.complex64))
    r = ember.zeros(5, dtype=ember.float64)
    r.copy_(e)  # keeps the real part, as torch
    np.testing.assert_array_equal(r.numpy(), z.real)


# ---- elementwise ops

UNARY = ["neg", "exp", "log", "log2", "log10", "sqrt", "rsqrt", "sin", "cos", "tan", "asin", "acos", "atan", "sinh",
         "cosh", "tanh", "asinh", "acosh", "atanh", "sigmoid", "reciprocal", "square", "abs", "angle", "sgn",
         "conj_physical", "isnan", "isinf", "isfinite"]


@pytest.mark.parametrize("dtype", CDTYPES)
@pytest.mark.parametrize("op", UNARY)
def test_unary_ops(op, dtype):
    z = rand_complex((4, 5), dtype)
    z[0, 0] = 0
    e, t = pair(z)
    tol = 2e-5 if dtype == "complex64" else 1e-10
    close(getattr(ember, op)(e), getattr(torch, op)(t), rtol=tol, atol=tol)
    close(getattr(ember, op)(e.t()), getattr(torch, op)(t.t()), rtol=tol, atol=tol)  # non-contiguous
    close(getattr(ember, op)(e[:0]), getattr(torch, op)(t[:0]))


@pytest.mark.parametrize("op", ["add", "sub", "mul", "div", "pow", "eq", "ne"])
@pytest.mark.parametrize("dtype", CDTYPES)
def test_binary_ops_with_broadcast_and_mixed_dtypes(op, dtype):
    a, b = rand_complex((3, 4), dtype, 1), rand_complex((4,), dtype, 2)
    (ea, ta), (eb, tb) = pair(a), pair(b)
    tol = 1e-4 if dtype == "complex64" else 1e-10
    close(getattr(ember, op)(ea, eb), getattr(torch, op)(ta, tb), rtol=tol, atol=tol)
    r = np.random.default_rng(3).standard_normal((3, 1))
    close(getattr(ember, op)(ea, ember.tensor(r)), getattr(torch, op)(ta, torch.tensor(r)), rtol=tol, atol=tol)
    close(getattr(ember, op)(ember.tensor(r), ea), getattr(torch, op)(torch.tensor(r), ta), rtol=tol, atol=tol)
    for s in (2, 1.5, 2 - 1j):
        close(getattr(ember, op)(ea, s), getattr(torch, op)(ta, s), rtol=tol, atol=tol)


def test_operators_and_alpha():
    e, t = pair(rand_complex((3,), "complex64"))
    close(e * 1j + 2, t * 1j + 2)
    close(1 / e - e ** 2, 1 / t - t ** 2, rtol=1e-5)
    close(-e, -t)
    close(ember.add(e, e, alpha=1 - 1j), torch.add(t, t, alpha=1 - 1j))
    with pytest.raises(RuntimeError, match="alpha must not be a complex"):
        ember.add(ember.ones(2), ember.ones(2), alpha=1j)


def test_errors_where_torch_has_no_complex_kernel():
    e = ember.tensor([1 + 1j, 2])
    with pytest.raises(RuntimeError, match="torch.sgn"):
        ember.sign(e)
    with pytest.raises(NotImplementedError):
        ember.floor(e)
    with pytest.raises(NotImplementedError):
        e < e
    with pytest.raises(NotImplementedError):
        e.max()
    with pytest.raises(TypeError):
        ~e


# ---- reductions and matrix products

@pytest.mark.parametrize("dtype", CDTYPES)
def test_sum_and_mean(dtype):
    e, t = pair(rand_complex((3, 4, 5), dtype))
    tol = 1e-5 if dtype == "complex64" else 1e-12
    for kw in ({}, {"dim": 1}, {"dim": (0, 2), "keepdim": True}, {"dim": -1}):
        close(e.sum(**kw), t.sum(**kw), rtol=tol, atol=tol)
        close(e.mean(**kw), t.mean(**kw), rtol=tol, atol=tol)
    close(e.transpose(0, 2).sum(0), t.transpose(0, 2).sum(0), rtol=tol, atol=tol)
    close(ember.tensor(1 + 2j).sum(0), torch.tensor(1 + 2j).sum(0))
    close(e[:, :0].sum(1), t[:, :0].sum(1))


@pytest.mark.parametrize("dtype", CDTYPES)
def test_matmul(dtype):
    (ea, ta), (eb, tb) = pair(rand_complex((3, 4), dtype, 1)), pair(rand_complex((4, 2), dtype, 2))
    tol = 1e-5 if dtype == "complex64" else 1e-12
    close(ea @ eb, ta @ tb, rtol=tol, atol=tol)
    close(ember.mm(ea, eb), torch.mm(ta, tb), rtol=tol, atol=tol)
    close(eb.t() @ ea.t(), tb.t() @ ta.t(), rtol=tol, atol=tol)
    (ec, tc) = pair(rand_complex((2, 3, 4), dtype, 3))
    close(ember.bmm(ec, ec.transpose(1, 2)), torch.bmm(tc, tc.transpose(1, 2)), rtol=tol, atol=tol)


# ---- views

def test_view_as_real_and_complex_share_storage():
    z = rand_complex((2, 3), "complex128")
    e, t = pair(z)
    r = ember.view_as_real(e)
    close(r, torch.view_as_real(t))
    r[0, 0, 1] = 5.0
    assert e[0, 0].item() == complex(z[0, 0].real, 5.0)
    back = ember.view_as_complex(r)
    assert back.dtype == ember.complex128 and back._storage_ptr() == e._storage_ptr()
    np.testing.assert_array_equal(ember.view_as_complex(ember.view_as_real(e.t())).numpy(), e.t().numpy())
    e.real.mul_(2)
    e.imag = ember.zeros(2, 3, dtype=ember.float64)
    np.testing.assert_array_equal(e.numpy(), 2 * z.real + 0j)


@pytest.mark.parametrize("make", [
    lambda m: m.ones(3),
    lambda m: m.ones(3, 4),
    lambda m: m.ones(4, 2)[::2].t().contiguous().t(),
    lambda m: m.ones(3, 3)[:, :2],
    lambda m: m.ones(5)[1:].view(2, 2),
    lambda m: m.tensor(1.0),
])
def test_view_as_complex_errors_match_torch(make):
    with pytest.raises(RuntimeError) as te:
        torch.view_as_complex(make(torch))
    with pytest.raises(RuntimeError) as ee:
        ember.view_as_complex(make(ember))
    assert str(ee.value).split("\n")[0] == str(te.value).split("\n")[0] or "float and double" in str(ee.value)


def test_view_as_complex_of_float16_needs_complex32():
    with pytest.raises(RuntimeError, match="float and double"):  # torch makes a complex32, Ember has none
        ember.view_as_complex(ember.ones(2, dtype=ember.float16))


def test_complex_polar_real_imag_and_predicates():
    a, b = np.random.default_rng(0).standard_normal((2, 3))
    close(ember.complex(ember.tensor(a), ember.tensor(b)), torch.complex(torch.tensor(a), torch.tensor(b)))
    close(ember.polar(ember.tensor(np.abs(a)), ember.tensor(b)), torch.polar(torch.tensor(np.abs(a)), torch.tensor(b)))
    with pytest.raises(RuntimeError, match="scalar type"):
        ember.complex(ember.ones(2), ember.ones(2, dtype=ember.float64))
    e, t = pair(rand_complex((3,), "complex64"))
    close(e.real, t.real)
    close(e.imag, t.imag)
    close(e.conj(), t.conj())
    close(ember.view_as_real_copy(e), torch.view_as_real_copy(t))
    assert e.is_complex() and ember.is_complex(e) and not ember.ones(1).is_complex()
    assert not e.is_conj() and not e.conj().is_neg()
    x = ember.ones(2)
    assert x.conj() is x and x.real is x
    with pytest.raises(RuntimeError, match="non-complex"):
        x.imag


# ---- autograd

def grads(m, fn, z):
    x = m.tensor(z, requires_grad=True)
    out = fn(m, x)
    out = m.view_as_real(out) if out.is_complex() else out
    (out * m.arange(out.numel(), dtype=out.dtype).reshape(out.shape).cos()).sum().backward()
    return x.grad


GRAD_FNS = {
    "mul": lambda m, x: x * x.flip(0) * (2 - 1j),
    "div": lambda m, x: x / (x.flip(0) + 3),
    "exp_log": lambda m, x: (x.exp() + 1).log(),
    "sqrt": lambda m, x: (x + 4).sqrt(),
    "trig": lambda m, x: x.sin() * x.cos() + x.tanh(),
    "recip_pow": lambda m, x: x.reciprocal() + x ** 2,
    "abs": lambda m, x: x.abs(),
    "angle": lambda m, x: x.angle(),
    "sgn": lambda m, x: m.sgn(x),
    "conj": lambda m, x: x.conj_physical() * x,
    "real_imag": lambda m, x: x.real * x.imag,
    "sum_mean": lambda m, x: x.sum(0) * x.mean(),
    "matmul": lambda m, x: x.reshape(2, 3) @ x.reshape(3, 2),
    "polar": lambda m, x: m.polar(x.abs(), x.angle()),
    "mixed_real": lambda m, x: x * m.tensor([0.5, -1.0, 2.0, 1.0, 0.25, 3.0], dtype=m.float64),
}


@pytest.mark.parametrize("name", sorted(GRAD_FNS))
def test_gradients_match_torch(name):
    z = rand_complex((6,), "complex128", 7)
    fn = GRAD_FNS[name]
    ge, gt = grads(ember, fn, z), grads(torch, fn, z)
    close(ge, gt, rtol=1e-9, atol=1e-10)


def test_real_input_gets_the_real_part_of_its_gradient():
    for m in (ember, torch):
        x = m.tensor([1.0, 2.0], dtype=m.float64, requires_grad=True)
        y = x * m.tensor([1 + 2j, 3 - 1j], dtype=m.complex128)
        m.view_as_real(y).sum().backward()
        assert x.grad.dtype == m.float64
    e = ember.tensor([1.0, 2.0], dtype=ember.float64, requires_grad=True)
    ember.view_as_real(e * ember.tensor([1 + 2j, 3 - 1j], dtype=ember.complex128)).sum().backward()
    assert e.grad.tolist() == [3.0, 2.0]


def test_gradcheck_through_complex_views():
    x = ember.tensor(np.random.default_rng(1).standard_normal((3, 2)), dtype=ember.float64, requires_grad=True)

    def f(r):
        z = ember.view_as_complex(r)
        return ember.view_as_real((z * z.exp()).sqrt() / (z.abs() + 1) + z.angle())
    assert ember.autograd.gradcheck(f, (x,))
    assert ember.autograd.gradgradcheck(f, (x,))


def test_requires_grad_and_implicit_backward():
    z = ember.ones(2, dtype=ember.complex64, requires_grad=True)
    assert z.requires_grad
    with pytest.raises(RuntimeError, match="real scalar outputs"):
        z.sum().backward()


# ---- linalg.eig / eigvals (complex results)

def _eig_input(dtype, shape=(4, 4), seed=11):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shape)
    if dtype.startswith("complex"):
        a = a + 1j * rng.standard_normal(shape)
    return a.astype(dtype)


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "complex128"])
@pytest.mark.parametrize("shape", [(4, 4), (2, 3, 3), (1, 1), (0, 0)])
def test_eig_matches_torch(dtype, shape):
    a = _eig_input(dtype, shape)
    e, t = ember.linalg.eig(ember.tensor(a)), torch.linalg.eig(torch.tensor(a))
    tol = 1e-4 if dtype in ("float32", "complex64") else 1e-10
    close(e.eigenvalues, t.eigenvalues, rtol=tol, atol=tol)
    if dtype in ("float64", "complex128"):  # the same LAPACK routine: the same phases
        close(e.eigenvectors, t.eigenvectors, rtol=tol, atol=tol)
    else:  # computed in double precision: each eigenvector may differ from torch's by a phase
        ev, tv = e.eigenvectors.numpy(), t.eigenvectors.numpy()
        for v in (ev, tv):
            if v.size:
                idx = np.abs(v).argmax(axis=-2)[..., None, :]
                v /= np.take_along_axis(v, idx, axis=-2) / np.abs(np.take_along_axis(v, idx, axis=-2))
        np.testing.assert_allclose(ev, tv, rtol=tol, atol=tol)
    close(ember.linalg.eigvals(ember.tensor(a)), torch.linalg.eigvals(torch.tensor(a)), rtol=tol, atol=tol)
    if a.size:
        A = ember.tensor(a).to(e.eigenvectors.dtype)
        resid = A @ e.eigenvectors - e.eigenvectors * e.eigenvalues.unsqueeze(-2)
        assert float(resid.abs().max()) < 100 * tol


def test_eig_errors():
    with pytest.raises(RuntimeError, match="square"):
        ember.linalg.eig(ember.ones(2, 3))
    with pytest.raises(RuntimeError, match="infs or NaNs"):
        ember.linalg.eig(ember.tensor([[1.0, float("nan")], [0.0, 1.0]]))
    with pytest.raises(RuntimeError):
        ember.linalg.eig(ember.ones(3, 3, dtype=ember.int64))


@pytest.mark.parametrize("dtype", ["float64", "complex128"])
def test_eig_gradients_match_torch(dtype):
    a = _eig_input(dtype, (4, 4), 5)
    grads = []
    for m in (ember, torch):
        A = m.tensor(a, requires_grad=True)
        L, V = m.linalg.eig(A)
        # a gauge-invariant loss: |V| and the eigenvalues
        loss = (m.view_as_real(L) * m.arange(8, dtype=m.float64).reshape(4, 2)).sum() + (V.abs() ** 2 * m.arange(
            16, dtype=m.float64).reshape(4, 4).cos()).sum()
        loss.backward()
        grads.append(A.grad.resolve_conj().numpy() if m is torch else A.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-8, atol=1e-8)
    for m in (ember, torch):  # eigvals alone
        A = m.tensor(a, requires_grad=True)
        m.view_as_real(m.linalg.eigvals(A)).sum().backward()
        grads.append(A.grad.resolve_conj().numpy() if m is torch else A.grad.numpy())
    np.testing.assert_allclose(grads[2], grads[3], rtol=1e-8, atol=1e-8)


@pytest.mark.parametrize("fn", [
    lambda m, x: m.vdot(x, x.flip(0)), lambda m, x: x.norm(), lambda m, x: m.linalg.vector_norm(x, 1),
    lambda m, x: x.var(), lambda m, x: x.std(correction=0), lambda m, x: m.var_mean(x)[1],
    lambda m, x: x.cumsum(0), lambda m, x: m.outer(x, x).trace(), lambda m, x: x[x.real > 0],
    lambda m, x: m.stack([x, x]).flip(1), lambda m, x: m.where(x.real > 0, x, 0),
    lambda m, x: m.allclose(x, x * 1.0000001), lambda m, x: x.index_select(0, m.tensor([2, 0])),
])
def test_reductions_and_indexing_match_torch(fn):
    z = rand_complex((3,), "complex128", 3)
    e, t = fn(ember, ember.tensor(z)), fn(torch, torch.tensor(z))
    if isinstance(t, bool):
        assert e == t
    else:
        close(e, t, rtol=1e-12, atol=1e-12)


def test_linspace_with_complex_ends():
    close(ember.linspace(0, 1 + 1j, 5), torch.linspace(0, 1 + 1j, 5))
    close(ember.linspace(1j, 2, 3, dtype=ember.complex128), torch.linspace(1j, 2, 3, dtype=torch.complex128))


def test_gradients_of_norm_and_var_match_torch():
    z = rand_complex((4,), "complex128", 4)
    for fn in (lambda x: x.norm(), lambda x: x.var(), lambda x: x.cumsum(0).abs().sum(), lambda x: torch_or_ember_vdot(x)):
        grads = []
        for m in (ember, torch):
            x = m.tensor(z, requires_grad=True)
            r = fn(x)
            (r if not r.is_complex() else m.view_as_real(r).sum()).backward()
            grads.append(x.grad)
        close(grads[0], grads[1], rtol=1e-10, atol=1e-10)


def torch_or_ember_vdot(x):
    m = ember if isinstance(x, ember.Tensor) else torch
    return m.vdot(x, x * (1 + 2j))


def test_randn_and_rand_complex():
    ember.manual_seed(0)
    z = ember.randn(20000, dtype=ember.complex64)
    assert z.dtype == ember.complex64
    assert abs(float(z.real.var()) - 0.5) < 0.03 and abs(float(z.imag.var()) - 0.5) < 0.03
    u = ember.rand(1000, dtype=ember.complex128)
    assert 0 <= float(u.real.min()) and float(u.imag.max()) < 1


# ---- every OpInfo op on complex inputs: the same values as torch, or an error (never a silent wrong answer)

def _complexify(lib, v):
    from parity import TensorSpec
    if isinstance(v, TensorSpec):
        t = v.make(lib)
        if t.dtype == lib.float64:
            im = t.flip(0) if t.dim() > 0 else t * 0.5
            return lib.complex(t, im * 0.7 + 0.1)
        return t
    if isinstance(v, (list, tuple)):
        return type(v)(_complexify(lib, x) for x in v)
    return v


def _arrays(x):
    if isinstance(x, (list, tuple)):
        return [_arrays(y) for y in x]
    if hasattr(x, "detach"):
        x = x.detach()
        if hasattr(x, "resolve_conj"):
            x = x.resolve_conj().resolve_neg()
        return x.numpy()
    return x


RANDOM_RESULTS = {"empty_like", "rand_like", "randn_like", "normal.Tensor_float", "normal.float_Tensor",
                  "normal.Tensor_Tensor"}


def _opdb_float64_ops():
    import opdb
    return [op for op in opdb.OPS if op.function is not None and "float64" in op.dtypes and op.name not in RANDOM_RESULTS]


@pytest.mark.parametrize("op", _opdb_float64_ops(), ids=lambda op: op.name)
def test_no_silent_wrong_answer_on_complex_inputs(op):
    import warnings
    for s in op.samples("float64")[:2]:
        res = []
        for lib in (ember, torch):
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    r = op.function(lib, *[_complexify(lib, a) for a in s.args],
                                    **{k: _complexify(lib, v) for k, v in s.kwargs.items()})
                res.append(("ok", _arrays(r)))
            except Exception as e:  # noqa: BLE001
                res.append(("error", e))
        (ek, ev), (tk, tv) = res
        if ek == "ok" and tk == "ok":
            ea = ev if isinstance(ev, list) else [ev]
            ta = tv if isinstance(tv, list) else [tv]
            for a, b in zip(ea, ta):
                a, b = np.asarray(a), np.asarray(b)
                assert a.dtype == b.dtype and a.shape == b.shape, (op.name, a.dtype, b.dtype, a.shape, b.shape)
                np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6, equal_nan=True, err_msg=op.name)


@pytest.mark.parametrize("name", ["SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adamax", "NAdam", "RAdam", "Adadelta"])
def test_optimizers_update_complex_parameters_like_torch(name):
    z = rand_complex((5,), "complex128", 6)
    out = []
    for m in (ember, torch):
        p = m.nn.Parameter(m.tensor(z))
        kw = {"momentum": 0.9} if name in ("SGD", "RMSprop") else {}
        opt = getattr(m.optim, name)([p], lr=0.1, **kw)
        for _ in range(3):
            opt.zero_grad()
            (p * p.conj()).real.sum().backward()  # |p|^2: gradient 2p
            opt.step()
        out.append(p.detach())
    close(out[0], out[1], rtol=1e-8, atol=1e-8)  # (NAdam's mu product rounds differently at 1e-10)


def test_scatter_and_index_put_accumulate_complex():
    for m in (ember, torch):
        x = m.zeros(3, dtype=m.complex64)
        r = (x.index_put((m.tensor([0, 0]),), m.tensor([1j, 2]), accumulate=True),
             x.index_add(0, m.tensor([1, 1]), m.tensor([1j, 3])), x.scatter(0, m.tensor([2]), m.tensor([5j])),
             x.scatter_add(0, m.tensor([1, 1]), m.tensor([1j, 1 + 1j])))
        if m is ember:
            mine = r
    for a, b in zip(mine, r):
        close(a, b)


def test_complex_checkpoints_round_trip_with_torch(tmp_path):
    import pickle
    z = ember.tensor([1 + 2j, 3 - 4j], dtype=ember.complex64)
    z2 = ember.tensor([[1j]], dtype=ember.complex128)
    ember.save({"a": z, "b": z2, "view": z[1:]}, tmp_path / "e.pt")
    for loaded in (ember.load(tmp_path / "e.pt"), torch.load(tmp_path / "e.pt")):
        assert loaded["a"].tolist() == [1 + 2j, 3 - 4j] and loaded["b"].tolist() == [[1j]]
        assert loaded["view"].tolist() == [3 - 4j]
    torch.save({"t": torch.tensor([5 + 1j]), "d": torch.tensor([2j], dtype=torch.complex128)}, tmp_path / "t.pt")
    back = ember.load(tmp_path / "t.pt")
    assert back["t"].dtype == ember.complex64 and back["d"].tolist() == [2j]
    assert pickle.loads(pickle.dumps(z)).tolist() == z.tolist()
    import ember.safetensors as st
    st.save_file({"z": z}, str(tmp_path / "z.safetensors"))
    assert st.load_file(str(tmp_path / "z.safetensors"))["z"].tolist() == z.tolist()
    with pytest.raises(ValueError, match="complex128"):
        st.save_file({"z": z2}, str(tmp_path / "z2.safetensors"))


def test_testing_helpers_and_finfo_take_complex():
    for m in (ember, torch):
        z = m.tensor([1 + 2j, 3 - 4j])
        m.testing.assert_close(z, z * 1.0000001)
        with pytest.raises(AssertionError, match="Greatest absolute difference: 0.0999"):
            m.testing.assert_close(z, z + 0.1j)
        x = m.testing.make_tensor((50,), dtype=m.complex128, device="cpu", low=-1, high=1)
        assert x.dtype == m.complex128 and bool((x.imag.abs() <= 1).all()) and bool((x.imag != 0).any())
    assert ember.finfo(ember.complex64).eps == torch.finfo(torch.complex64).eps
    assert ember.isclose(ember.tensor([1j]), ember.tensor([1j + 1e-9])).item()


def test_prod_over_an_empty_dim_is_one():
    for shape, fn in (((3, 0), lambda x: x.prod(1)), ((0,), lambda x: x.prod()), ((2, 0, 3), lambda x: x.cumprod(1))):
        e, t = fn(ember.zeros(shape, dtype=ember.complex64)), fn(torch.zeros(shape, dtype=torch.complex64))
        close(e, t)


@pytest.mark.parametrize("fn", [lambda m, x: x.prod(), lambda m, x: x.prod(1), lambda m, x: x.prod(0, keepdim=True),
                                lambda m, x: x.cumprod(1), lambda m, x: x.cumprod(0)])
def test_prod_and_cumprod_values_and_gradients(fn):
    z = rand_complex((2, 3), "complex128", 9)
    outs = []
    for m in (ember, torch):
        x = m.tensor(z, requires_grad=True)
        y = fn(m, x)
        (m.view_as_real(y) * m.arange(y.numel() * 2, dtype=m.float64).reshape(*y.shape, 2).cos()).sum().backward()
        outs.append((y.detach(), x.grad))
    close(outs[0][0], outs[1][0], rtol=1e-12, atol=1e-12)
    close(outs[0][1], outs[1][1], rtol=1e-10, atol=1e-10)
