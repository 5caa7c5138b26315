"""Complex inputs of ops that used to refuse them or answer wrongly (found by sweeping PyTorch's OpInfo
database over complex64/complex128 with tools/opinfo_sweep.py), against torch 2.13: values, and
gradients in PyTorch's convention."""
import numpy as np
import pytest

import ember
from ember.autograd import gradcheck

torch = pytest.importorskip("torch")

CDTYPES = ["complex64", "complex128"]
TOL = {"complex64": dict(rtol=2e-5, atol=2e-5), "complex128": dict(rtol=1e-10, atol=1e-10)}


def rand_complex(shape, dtype="complex128", seed=0, scale=1.0):
    rng = np.random.default_rng(seed)
    z = scale * (rng.standard_normal(shape) + 1j * rng.standard_normal(shape))
    return z.astype(np.complex64 if dtype == "complex64" else np.complex128)


def close(a, b, dtype="complex128"):
    assert str(a.dtype).split(".")[-1] == str(b.dtype).split(".")[-1], (a.dtype, b.dtype)
    assert tuple(a.shape) == tuple(b.shape), (a.shape, b.shape)
    tol = TOL.get(dtype, TOL["complex128"])
    np.testing.assert_allclose(a.detach().numpy(), b.detach().resolve_conj().numpy(), equal_nan=True, **tol)


def both(fn, *arrays, dtype="complex128"):
    e = fn(ember, *[ember.tensor(a) for a in arrays])
    t = fn(torch, *[torch.tensor(a) for a in arrays])
    for x, y in zip(e if isinstance(e, (tuple, list)) else [e], t if isinstance(t, (tuple, list)) else [t]):
        close(x, y, dtype)


def grads_match(fn, *arrays):
    """The gradients of a real loss through fn, Ember against torch (complex128)."""
    e = [ember.tensor(a).requires_grad_() for a in arrays]
    t = [torch.tensor(a).requires_grad_() for a in arrays]
    for lib, args in ((ember, e), (torch, t)):
        out = fn(lib, *args)
        (out * (0.5 + 0.25j)).real.sum().backward()
    for x, y in zip(e, t):
        np.testing.assert_allclose(x.grad.numpy(), y.grad.resolve_conj().numpy(), rtol=1e-9, atol=1e-9)


# ---- elementwise

@pytest.mark.parametrize("dtype", CDTYPES)
@pytest.mark.parametrize("name", ["exp2", "expm1", "log1p", "sinc", "logical_not"])
def test_unary(name, dtype):
    z = rand_complex((4, 5), dtype)
    z[0, :4] = [0, 1e-8 + 1e-9j, -1 + 0j, 0.3j]  # zero, tiny (expm1/log1p accuracy), log1p's pole
    both(lambda L, x: getattr(L, name)(x), z, dtype=dtype)
    if name != "logical_not" and dtype == "complex128":
        grads_match(lambda L, x: getattr(L, name)(x), rand_complex((6,), seed=1, scale=0.5))


def test_silu_complex():
    z = rand_complex((7,))
    both(lambda L, x: L.nn.functional.silu(x), z)
    # torch refuses to differentiate silu of complex numbers; Ember's gradient is that of x sigmoid(x)
    x = ember.tensor(z).requires_grad_()
    assert gradcheck(ember.nn.functional.silu, (x,))


@pytest.mark.parametrize("name", ["logical_and", "logical_or", "logical_xor"])
def test_logical_binary(name):
    a = rand_complex((3, 4))
    b = rand_complex((3, 4), seed=1)
    a[0, 0], b[0, 1], a[1, 2], b[1, 2] = 0, 0, 0, 0
    both(lambda L, x, y: getattr(L, name)(x, y), a, b)
    both(lambda L, x, y: getattr(L, name)(x, y.real), a, b)  # mixed with a real tensor


@pytest.mark.parametrize("dtype", CDTYPES)
def test_lerp(dtype):
    a, b, w = rand_complex((4, 4), dtype), rand_complex((4, 4), dtype, 1), rand_complex((4, 4), dtype, 2)
    both(lambda L, x, y: L.lerp(x, y, 0.3), a, b, dtype=dtype)
    both(lambda L, x, y, z: L.lerp(x, y, z), a, b, w, dtype=dtype)
    if dtype == "complex128":
        grads_match(lambda L, x, y, z: L.lerp(x, y, z), a, b, w)


def test_logaddexp_and_logcumsumexp():
    a, b = rand_complex((3, 4)), rand_complex((3, 4), seed=1)
    both(lambda L, x, y: L.logaddexp(x, y), a, b)
    for dim in (0, 1, -1):
        both(lambda L, x: L.logcumsumexp(x, dim), a)
    both(lambda L, x: L.logcumsumexp(x, 0), rand_complex((), seed=3))
    grads_match(lambda L, x: L.logcumsumexp(x, 1), a)
    grads_match(lambda L, x, y: L.logaddexp(x, y), a, b)


def test_ldexp_with_a_complex_exponent():
    both(lambda L, x, y: L.ldexp(x, y), rand_complex(()), rand_complex((), seed=1))
    both(lambda L, x, y: L.ldexp(x, y), rand_complex((3,)), np.array([1.0, -2.0, 0.5]))


# ---- reductions, statistics, scans

@pytest.mark.parametrize("reduce", ["add", "multiply"])
def test_scatter_reduce_complex(reduce):
    src = rand_complex((4, 3))
    idx = np.array([[0, 1, 0], [2, 0, 1], [0, 0, 0], [1, 2, 2]])
    self = rand_complex((3, 3), seed=1)
    both(lambda L, s, x: s.scatter(0, L.tensor(idx), x, reduce=reduce), self, src)
    for r in ("sum", "prod", "mean"):
        for inc in (True, False):
            both(lambda L, s, x: s.scatter_reduce(0, L.tensor(idx), x, r, include_self=inc), self, src)


def test_scatter_reduce_amax_complex_raises():
    s = ember.zeros(3, dtype=ember.complex64)
    with pytest.raises(NotImplementedError):
        s.scatter_reduce(0, ember.tensor([0, 1]), ember.ones(2, dtype=ember.complex64), "amax")


def test_gradient_cumulative_trapezoid_corrcoef():
    z = rand_complex((5,))
    both(lambda L, x: L.gradient(x)[0], z)
    both(lambda L, x: L.cumulative_trapezoid(x, dx=3.0), rand_complex((2, 2)))
    both(lambda L, x: L.cumulative_trapezoid(x), rand_complex((3, 1)))  # an empty result
    both(lambda L, x: L.cumsum(x, 1), rand_complex((3, 0)))
    both(lambda L, x: L.corrcoef(x), rand_complex((3, 4)))


def test_view_as_complex_ignores_size_one_strides():
    base = ember.randn(2, 2, dtype=ember.complex64)
    odd = base.as_strided((2, 1), (1, 1))  # a (2, 1) view whose size-1 dim has an odd stride
    r = ember.view_as_real(odd)
    back = ember.view_as_complex(r)
    assert back.shape == (2, 1)
    np.testing.assert_array_equal(back.numpy(), odd.numpy())


# ---- nn

@pytest.mark.parametrize("n", [1, 2, 3])
@pytest.mark.parametrize("transposed", [False, True])
def test_complex_convolution(n, transposed):
    x = rand_complex((2, 4) + (5,) * n)
    w = rand_complex((4, 3) + (3,) * n, seed=1) if transposed else rand_complex((3, 4) + (3,) * n, seed=1)
    b = rand_complex((3,), seed=2)
    name = f"conv_transpose{n}d" if transposed else f"conv{n}d"
    kw = dict(stride=2, padding=1) if transposed else dict(stride=1, padding=1)
    both(lambda L, x_, w_, b_: getattr(L.nn.functional, name)(x_, w_, b_, **kw), x, w, b)
    both(lambda L, x_, w_: getattr(L.nn.functional, name)(x_, w_, **kw), x, w)
    if n == 2:
        grads_match(lambda L, x_, w_, b_: getattr(L.nn.functional, name)(x_, w_, b_, **kw), x, w, b)
    if not transposed:
        both(lambda L, x_, w_: getattr(L.nn.functional, name)(x_, w_, padding="same"), x, w)
        both(lambda L, x_, w_: getattr(L.nn.functional, name)(x_[0], w_), x, w)  # unbatched


def test_complex_convolution_gradcheck():
    x = ember.tensor(rand_complex((1, 2, 4))).requires_grad_()
    w = ember.tensor(rand_complex((2, 2, 3), seed=1)).requires_grad_()
    assert gradcheck(lambda a, b: ember.nn.functional.conv1d(a, b, padding=1), (x, w))


def test_unfold_fold_complex():
    x = rand_complex((2, 3, 5, 5))
    both(lambda L, t: L.nn.functional.unfold(t, 2, padding=1), x)
    cols = rand_complex((2, 12, 36), seed=1)
    both(lambda L, t: L.nn.functional.fold(t, (5, 5), 2, padding=1), cols)
    grads_match(lambda L, t: L.nn.functional.unfold(t, 3), x)


def test_rms_norm_complex():
    x, w = rand_complex((2, 3, 4)), rand_complex((3, 4), seed=1)
    both(lambda L, a, b: L.nn.functional.rms_norm(a, [3, 4], b, eps=0.5), x, w)
    both(lambda L, a: L.nn.functional.rms_norm(a, [4]), x)


def test_constant_pad_with_a_complex_value():
    x = rand_complex((2, 3))
    both(lambda L, t: L.constant_pad_nd(t, [1, 2], 1 + 2j), x)
    both(lambda L, t: L.nn.functional.pad(t, [1, 1, 0, 1], value=0.5), x)


def test_istft_of_a_two_sided_spectrum_reads_its_first_half():
    z = rand_complex((10, 2))  # not Hermitian: only the first n_fft // 2 + 1 bins count, as torch's c2r
    both(lambda L, s: L.istft(s, n_fft=10), z)
    both(lambda L, s: L.istft(s, n_fft=10, return_complex=True, onesided=False), z)


def test_gradgradcheck_makes_complex_grad_outputs():
    from ember.autograd import gradgradcheck
    x = ember.tensor(rand_complex((3,))).requires_grad_()
    assert gradgradcheck(lambda a: a * a * a, (x,))


def test_inplace_and_out_forms_take_complex():
    z = rand_complex((3, 4))
    both(lambda L, x: x.cumsum_(1), z)
    both(lambda L, x: L.cumsum(x, 0, out=L.empty(3, 4, dtype=L.complex128)), z)
    both(lambda L, x: x.float_power_(2), z)
    both(lambda L, x: L.float_power(x, 2, out=L.empty(3, 4, dtype=L.complex128)), z)
    both(lambda L, x: L.float_power(x.real, x), z)
    with pytest.raises(RuntimeError, match="float_power_"):  # a real base cannot hold a complex result
        ember.ones(3, dtype=ember.float64).float_power_(ember.tensor(rand_complex((3,))))


def test_module_to_a_complex_dtype():
    for L in (ember, torch):
        m = L.nn.Linear(3, 2)
        with pytest.warns(UserWarning, match="Complex modules"):
            m.to(L.complex128)
        assert m.weight.dtype == L.complex128 and m.bias.dtype == L.complex128
    with pytest.raises(TypeError, match="floating point or complex"):
        ember.nn.Linear(3, 2).to(ember.int64)


@pytest.mark.parametrize("mode", ["LSTM", "GRU", "RNN"])
@pytest.mark.parametrize("bidirectional", [False, True])
def test_complex_recurrent_layers_match_torch(mode, bidirectional):
    import warnings
    x = rand_complex((5, 2, 3))
    outs, grads = [], []
    for L in (torch, ember):
        L.manual_seed(0)
        m = getattr(L.nn, mode)(3, 4, num_layers=2, bidirectional=bidirectional)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            m = m.to(L.complex128)
        if L is ember:  # the same parameters as torch's
            for (n, p), (_, tp) in zip(m.named_parameters(), torch_params):
                p.data.copy_(ember.tensor(tp.detach().numpy()))
        else:
            torch_params = list(m.named_parameters())
        xi = L.tensor(x).requires_grad_()
        y, _ = m(xi)
        (y * (0.5 + 0.25j)).real.sum().backward()
        outs.append(y)
        grads.append(xi.grad)
    close(outs[1], outs[0])
    close(grads[1], grads[0])


@pytest.mark.parametrize("cell", ["LSTMCell", "GRUCell"])
def test_complex_cells_gradcheck(cell):
    m = getattr(ember.nn, cell)(2, 3)
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = m.to(ember.complex128)
    x = ember.tensor(rand_complex((2, 2))).requires_grad_()

    def f(inp):
        out = m(inp)
        return out[0] if isinstance(out, tuple) else out
    assert gradcheck(f, (x,))


def test_complex_adaptive_avg_pool_and_empty_batch_norm():
    z = rand_complex((1, 2, 6))
    e = ember.nn.functional.adaptive_avg_pool1d(ember.tensor(z), 3)
    np.testing.assert_allclose(e.numpy(), z.reshape(1, 2, 3, 2).mean(-1), rtol=1e-12)
    empty = ember.zeros(0, 3, dtype=ember.complex128)
    out = ember.nn.functional.batch_norm(empty, None, None, training=True)
    assert out.shape == (0, 3) and out.dtype == ember.complex128
    with pytest.raises(NotImplementedError):  # a non-empty complex batch, as torch
        ember.nn.functional.batch_norm(ember.ones(2, 3, dtype=ember.complex128), None, None, training=True)
