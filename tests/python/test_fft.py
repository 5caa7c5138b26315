"""ember.fft against torch.fft 2.13: all 22 functions over dtypes, odd/even/padded/trimmed sizes, dims and
the three norms; errors; gradients (gradcheck/gradgradcheck in float64 through the real views, and the
same gradients as torch for complex inputs)."""
import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")

C2C = ["fft", "ifft", "fftn", "ifftn", "fft2", "ifft2"]
R2C = ["rfft", "ihfft", "rfftn", "rfft2", "ihfftn", "ihfft2"]
C2R = ["irfft", "hfft", "irfftn", "irfft2", "hfftn", "hfft2"]
ALL_TRANSFORMS = C2C + R2C + C2R
NORMS = [None, "backward", "ortho", "forward"]


def data(shape, kind, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape)
    if kind.startswith("complex"):
        x = x + 1j * rng.standard_normal(shape)
    if kind.startswith("int"):
        x = rng.integers(-5, 5, shape)
    return x.astype(kind)


def check(name, x, *args, tol=None, **kw):
    e = getattr(ember.fft, name)(ember.tensor(x), *args, **kw)
    t = getattr(torch.fft, name)(torch.tensor(x), *args, **kw).resolve_conj()
    assert str(e.dtype).split(".")[1] == str(t.dtype).split(".")[1], (name, e.dtype, t.dtype)
    assert tuple(e.shape) == tuple(t.shape), (name, e.shape, t.shape)
    single = x.dtype in (np.float32, np.complex64) or x.dtype.kind in "iu"  # ints transform in float32
    rtol = tol or (2e-5 if single else 1e-11)
    np.testing.assert_allclose(e.numpy(), t.numpy(), rtol=rtol, atol=rtol * max(1.0, np.abs(t.numpy()).max(initial=0)))


def input_kind(name, dtype):
    if name in R2C and dtype.startswith("complex"):
        return None
    return dtype


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "complex128", "int64"])
@pytest.mark.parametrize("name", ALL_TRANSFORMS)
def test_default_arguments(name, dtype):
    if input_kind(name, dtype) is None:
        pytest.skip("real-input transform")
    for shape in ((8,), (7,), (4, 6), (3, 5, 2)):
        if name.endswith("2") and len(shape) < 2:
            continue
        check(name, data(shape, dtype))


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("name", ALL_TRANSFORMS)
def test_norms_sizes_and_dims(name, norm):
    x = data((5, 6, 4), "float64" if name in R2C else "complex128", 1)
    one_d = name in ("fft", "ifft", "rfft", "irfft", "hfft", "ihfft")
    if one_d:
        for n, dim in ((None, 1), (9, -1), (3, 0), (1, -2), (16, 2)):
            check(name, x, n=n, dim=dim, norm=norm)
    else:
        for s, dim in ((None, (0, 2)), ((3, 8), (2, 0)), ((6,), (1,)), ((4, 4), None), (None, (-1,))):
            if name.endswith("2") and (len(s or dim or ()) != 2):
                continue
            check(name, x, s=s, dim=dim or (-2, -1) if name.endswith("2") else dim, norm=norm)


def test_non_contiguous_and_empty_batch():
    x = data((6, 8), "complex128", 2)
    e, t = ember.tensor(x).t(), torch.tensor(x).t()
    np.testing.assert_allclose(ember.fft.fft(e).numpy(), torch.fft.fft(t).numpy(), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(ember.fft.rfft(ember.tensor(x.real)[:, ::2]).numpy(),
                               torch.fft.rfft(torch.tensor(x.real)[:, ::2]).numpy(), rtol=1e-12, atol=1e-12)
    # (torch's MKL build refuses an empty batch; pocketfft transforms nothing)
    assert ember.fft.fft(ember.zeros(0, 4, dtype=ember.complex64)).shape == (0, 4)
    assert ember.fft.rfft(ember.zeros(0, 4)).shape == (0, 3)
    check("fftn", data((), "complex128"))


def test_roundtrips_recover_the_signal():
    x = data((4, 10), "float64", 3)
    e = ember.tensor(x)
    np.testing.assert_allclose(ember.fft.irfft(ember.fft.rfft(e), n=10).numpy(), x, atol=1e-12)
    np.testing.assert_allclose(ember.fft.ifftn(ember.fft.fftn(e)).real.numpy(), x, atol=1e-12)
    np.testing.assert_allclose(ember.fft.hfft(ember.fft.ihfft(e), n=10).numpy(), x, atol=1e-12)


@pytest.mark.parametrize("n", [0, 1, 2, 7, 8])
@pytest.mark.parametrize("d", [1.0, 0.25])
@pytest.mark.parametrize("dtype", [None, "float64"])
def test_frequencies(n, d, dtype):
    for name in ("fftfreq", "rfftfreq"):
        kw = {} if dtype is None else {"dtype": getattr(ember, dtype)}
        tkw = {} if dtype is None else {"dtype": getattr(torch, dtype)}
        e, t = getattr(ember.fft, name)(n, d, **kw), getattr(torch.fft, name)(n, d, **tkw)
        assert str(e.dtype).split(".")[1] == str(t.dtype).split(".")[1]
        np.testing.assert_allclose(e.numpy(), t.numpy(), rtol=1e-6)


@pytest.mark.parametrize("name", ["fftshift", "ifftshift"])
def test_shifts(name):
    for shape, dim in (((7,), None), ((4, 5), None), ((4, 5), 1), ((3, 4, 5), (0, -1))):
        x = np.arange(int(np.prod(shape))).reshape(shape).astype(np.float64)
        e, t = getattr(ember.fft, name)(ember.tensor(x), dim=dim), getattr(torch.fft, name)(torch.tensor(x), dim=dim)
        np.testing.assert_array_equal(e.numpy(), t.numpy())


@pytest.mark.parametrize("call", [
    lambda m: m.fft.fft(m.ones(4), n=0),
    lambda m: m.fft.irfft(m.ones(1, dtype=m.complex64)),
    lambda m: m.fft.fftn(m.ones(4, 4), dim=(0, 0)),
    lambda m: m.fft.fftn(m.ones(4, 4), s=(2, 2, 2), dim=(0, 1)),
    lambda m: m.fft.rfft(m.ones(4, dtype=m.complex64)),
    lambda m: m.fft.fft(m.ones(4), dim=3),
    lambda m: m.fft.fft(m.ones(4), norm="bad"),
    lambda m: m.fft.fft(m.ones(4, dtype=m.float16)),
    lambda m: m.fft.fft(m.tensor(1.0)),
    lambda m: m.fft.fftshift(m.tensor(1.0)),
])
def test_errors_match_torch_types(call):
    with pytest.raises(Exception) as te:
        call(torch)
    with pytest.raises(type(te.value)):
        call(ember)


def test_out_argument():
    x = data((3, 8), "complex64")
    out = ember.empty(0, dtype=ember.complex64)
    r = ember.fft.fft(ember.tensor(x), out=out)
    assert r is out and out.shape == (3, 8)
    np.testing.assert_allclose(out.numpy(), torch.fft.fft(torch.tensor(x)).numpy(), rtol=1e-5, atol=1e-5)


# ---- gradients

def _real_view(m, y):
    return m.view_as_real(y.resolve_conj()) if y.is_complex() else y


@pytest.mark.parametrize("name", ALL_TRANSFORMS)
def test_gradcheck_and_gradgradcheck(name):
    real_in = name in R2C
    shape = (3, 5) if real_in else (3, 4, 2)
    x = ember.tensor(data(shape, "float64", 4), requires_grad=True)
    kw = {"n": 6} if name in ("fft", "ifft", "rfft", "irfft", "hfft", "ihfft") else {"s": (3, 6)}

    def f(v):
        z = v if real_in else ember.view_as_complex(v)
        return _real_view(ember, getattr(ember.fft, name)(z, norm="ortho", **kw))
    assert ember.autograd.gradcheck(f, (x,))
    assert ember.autograd.gradgradcheck(f, (x,))


@pytest.mark.parametrize("name", ALL_TRANSFORMS)
def test_gradients_match_torch(name):
    x = data((4, 6), "float64" if name in R2C else "complex128", 5)
    grads = []
    for m in (ember, torch):
        v = m.tensor(x, requires_grad=True)
        y = _real_view(m, getattr(m.fft, name)(v))
        w = m.arange(y.numel(), dtype=y.dtype).reshape(y.shape).sin()
        (y * w).sum().backward()
        grads.append(v.grad.resolve_conj().numpy() if m is torch else v.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-10, atol=1e-10)


def test_spectral_loss_trains():
    """A real use: fit a signal's magnitude spectrum by gradient descent (rfft -> abs -> mse)."""
    target = ember.fft.rfft(ember.tensor(np.sin(np.linspace(0, 12, 64)))).abs()
    x = ember.zeros(64, dtype=ember.float64, requires_grad=True)
    with ember.no_grad():
        x.normal_(0, 0.1)
    opt = ember.optim.Adam([x], lr=0.05)
    first = None
    for _ in range(150):
        opt.zero_grad()
        loss = ((ember.fft.rfft(x).abs() - target) ** 2).mean()
        loss.backward()
        opt.step()
        first = first if first is not None else loss.item()
    assert loss.item() < 0.05 * first


# ---- stft / istft

STFT_CASES = [dict(), dict(hop_length=5), dict(win_length=10), dict(center=False), dict(normalized=True),
              dict(center=False, win_length=10, align_to_window=True), dict(pad_mode="constant"), dict(onesided=False)]


@pytest.mark.parametrize("kw", STFT_CASES, ids=[str(k) for k in STFT_CASES])
@pytest.mark.parametrize("batched", [False, True])
def test_stft_matches_torch(kw, batched):
    x = data((2, 100) if batched else (100,), "float64", 8)
    for window in (None, "hann"):
        outs = []
        for m in (ember, torch):
            w = None if window is None else m.hann_window(kw.get("win_length", 16), dtype=m.float64)
            outs.append(m.stft(m.tensor(x), 16, window=w, return_complex=True, **kw))
        assert tuple(outs[0].shape) == tuple(outs[1].shape)
        np.testing.assert_allclose(outs[0].numpy(), outs[1].numpy(), rtol=1e-12, atol=1e-12)
    e = ember.tensor(x).stft(16, return_complex=False)
    t = torch.tensor(x).stft(16, return_complex=False)
    np.testing.assert_allclose(e.numpy(), t.numpy(), rtol=1e-12, atol=1e-12)


ISTFT_CASES = [dict(), dict(hop_length=5), dict(win_length=10), dict(normalized=True), dict(length=90),
               dict(length=120)]


@pytest.mark.parametrize("kw", ISTFT_CASES, ids=[str(k) for k in ISTFT_CASES])
def test_istft_matches_torch_and_inverts_stft(kw):
    x = data((2, 100), "float64", 9)
    win = kw.get("win_length", 16)
    fwd = {k: v for k, v in kw.items() if k != "length"}
    spec = torch.stft(torch.tensor(x), 16, window=torch.hann_window(win, dtype=torch.float64), return_complex=True,
                      **fwd)
    e = ember.istft(ember.tensor(spec.numpy()), 16, window=ember.hann_window(win, dtype=ember.float64), **kw)
    t = torch.istft(spec, 16, window=torch.hann_window(win, dtype=torch.float64), **kw)
    assert tuple(e.shape) == tuple(t.shape)
    np.testing.assert_allclose(e.numpy(), t.numpy(), rtol=1e-10, atol=1e-10)
    if "length" not in kw:
        np.testing.assert_allclose(e.numpy(), x, atol=1e-10)


@pytest.mark.parametrize("call", [
    lambda m: m.stft(m.ones(100), 16),
    lambda m: m.stft(m.ones(100), 16, hop_length=0, return_complex=True),
    lambda m: m.stft(m.ones(100), 16, win_length=20, return_complex=True),
    lambda m: m.stft(m.ones(100), 16, window=m.ones(5), return_complex=True),
    lambda m: m.stft(m.ones(100), 16, return_complex=True, align_to_window=True),
    lambda m: m.istft(m.stft(m.ones(100, dtype=m.float64), 16, window=m.hann_window(16, dtype=m.float64),
                             center=False, return_complex=True), 16, window=m.hann_window(16, dtype=m.float64),
                      center=False),
    lambda m: m.istft(m.ones(9, 5), 16),
])
def test_stft_errors_match_torch(call):
    with pytest.raises(Exception) as te:
        call(torch)
    with pytest.raises(type(te.value)):
        call(ember)


def test_stft_istft_gradients():
    x = ember.tensor(data((40,), "float64", 10), requires_grad=True)
    w = ember.hann_window(8, dtype=ember.float64)

    def f(v):
        return ember.view_as_real(ember.stft(v, 8, hop_length=2, window=w, return_complex=True))
    assert ember.autograd.gradcheck(f, (x,))

    def g(v):
        return ember.istft(ember.stft(v, 8, hop_length=2, window=w, return_complex=True) * 2, 8, hop_length=2,
                           window=w)
    assert ember.autograd.gradcheck(g, (x,))
