"""Average/adaptive pooling (separable resampling kernels), grid_sample's fused 2-D kernel, half/bfloat16
interpolation weights, and the reductions and scans made faster beside them (short-row sums, scans and
extremes, the one-pass 2-norm, register-blocked transposes) against torch: values and gradients over many
configurations, non-finite grids, memory formats."""
import itertools

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")
F, E = torch.nn.functional, ember.nn.functional


def _run(lib, fn, x, seed, **kw):
    """fn's output at x (a float64 array) and x's gradient for a random output gradient (seeded)."""
    t = lib.tensor(x, requires_grad=True)
    y = fn(t, **kw)
    g = np.random.RandomState(seed).randn(*tuple(y.shape))
    y.backward(lib.tensor(g))
    return y.detach().numpy(), t.grad.numpy()


@pytest.mark.parametrize("nd", [1, 2, 3])
def test_avg_pool_matches_torch_over_configurations(nd):
    rng = np.random.RandomState(nd)
    sp = [6, 7, 5][:nd]
    name = f"avg_pool{nd}d"
    checked = 0
    for k, s, ceil, cip, div in itertools.product((1, 2, 3), (None, 1, 2, 3), (False, True), (False, True),
                                                  (None, 2, -3) if nd > 1 else (None,)):
        for p in range(0, k // 2 + 1):
            kw = dict(kernel_size=k, stride=s, padding=p, ceil_mode=ceil, count_include_pad=cip)
            if div is not None:
                kw["divisor_override"] = div
            x = rng.randn(2, 3, *sp)
            ty, tg = _run(torch, getattr(F, name), x, checked, **kw)
            ey, eg = _run(ember, getattr(E, name), x, checked, **kw)
            assert ey.shape == ty.shape, kw
            np.testing.assert_allclose(ey, ty, rtol=1e-12, atol=1e-12, err_msg=str(kw))
            np.testing.assert_allclose(eg, tg, rtol=1e-12, atol=1e-12, err_msg=str(kw))
            checked += 1
    assert checked > 40


@pytest.mark.parametrize("nd", [1, 2, 3])
@pytest.mark.parametrize("batched", [True, False])
def test_adaptive_avg_pool_matches_torch(nd, batched):
    rng = np.random.RandomState(10 * nd + batched)
    name = f"adaptive_avg_pool{nd}d"
    shape = ([2, 3] if batched else [3]) + [9, 11, 6][:nd]
    for out in (1, 2, 3, 5, 7, 12):
        x = rng.randn(*shape)
        ty, tg = _run(torch, getattr(F, name), x, out, output_size=out)
        ey, eg = _run(ember, getattr(E, name), x, out, output_size=out)
        np.testing.assert_allclose(ey, ty, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(eg, tg, rtol=1e-12, atol=1e-12)


def test_pooling_keeps_channels_last_and_rounds_reduced_floats_once():
    x = np.random.RandomState(0).randn(4, 5, 9, 11).astype(np.float32)
    ec = ember.tensor(x).to(memory_format=ember.channels_last)
    for f in (lambda F, t: F.avg_pool2d(t, 3, 1, 1), lambda F, t: F.adaptive_avg_pool2d(t, (4, 3))):
        y = f(E, ec)
        assert y.is_contiguous(memory_format=ember.channels_last)
        np.testing.assert_allclose(y.numpy(), f(F, torch.tensor(x)).numpy(), rtol=1e-5, atol=1e-6)
    # bfloat16: averaged in float, rounded once: within half an ulp of the exact average of the inputs
    xb = torch.tensor(x).bfloat16()
    exact = F.avg_pool2d(xb.double(), 3, 2, 1)
    got = torch.tensor(E.avg_pool2d(ember.tensor(xb.float().numpy()).bfloat16(), 3, 2, 1).float().numpy()).double()
    half_ulp = exact.abs() * 2.0 ** -8  # bfloat16 keeps 8 significant bits: half an ulp is at most |x| 2^-8
    assert bool(((got - exact).abs() <= half_ulp * 1.001 + 1e-30).all())


def test_integer_avg_pool_truncates_as_torch():
    x = np.random.RandomState(1).randint(-50, 50, (2, 3, 7, 6))
    for k, s, ceil, cip, div in itertools.product((2, 3), (None, 2), (False, True), (False, True), (None, -3)):
        kw = dict(kernel_size=k, stride=s, padding=1, ceil_mode=ceil, count_include_pad=cip, divisor_override=div)
        np.testing.assert_array_equal(E.avg_pool2d(ember.tensor(x), **kw).numpy(),
                                      F.avg_pool2d(torch.tensor(x), **kw).numpy(), err_msg=str(kw))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_grid_sample_2d_matches_torch(dtype):
    rng = np.random.RandomState(0)
    tol = 1e-5 if dtype == "float32" else 1e-12
    for pad, mode, ac in itertools.product(("zeros", "border", "reflection"), ("bilinear", "nearest"), (False, True)):
        for (n, c, h, w, ho, wo) in ((2, 3, 5, 7, 4, 6), (1, 1, 1, 1, 3, 2), (3, 2, 4, 1, 2, 5)):
            x = rng.randn(n, c, h, w).astype(dtype)
            g = (rng.rand(n, ho, wo, 2) * 2.6 - 1.3).astype(dtype)
            go = rng.randn(n, c, ho, wo).astype(dtype)
            res = []
            for lib, fn in ((torch, F), (ember, E)):
                tx, tg = lib.tensor(x, requires_grad=True), lib.tensor(g, requires_grad=True)
                y = fn.grid_sample(tx, tg, mode=mode, padding_mode=pad, align_corners=ac)
                y.backward(lib.tensor(go))
                res.append((y.detach().numpy(), tx.grad.numpy(), tg.grad.numpy()))
            for t, e in zip(*res):
                np.testing.assert_allclose(e, t, rtol=tol * 10, atol=tol * 10, err_msg=f"{pad} {mode} {ac}")


def test_grid_sample_non_finite_grids_match_torch():
    nan, inf = float("nan"), float("inf")
    x2 = np.arange(1.0, 13.0, dtype=np.float32).reshape(1, 1, 3, 4)
    g2 = np.array([[[[nan, 0.0], [0.0, inf], [-inf, 0.2], [1e20, 0.1], [0.3, -0.2], [-1e20, nan]]]], np.float32)
    for pad, mode, ac in itertools.product(("zeros", "border", "reflection"), ("bilinear", "nearest", "bicubic"),
                                           (False, True)):
        t = F.grid_sample(torch.tensor(x2), torch.tensor(g2), mode=mode, padding_mode=pad, align_corners=ac)
        e = E.grid_sample(ember.tensor(x2), ember.tensor(g2), mode=mode, padding_mode=pad, align_corners=ac)
        if mode == "bicubic" and pad != "zeros":
            continue  # torch's bicubic pads each tap: NaN taps land on different clipped pixels
        np.testing.assert_allclose(e.numpy(), t.numpy(), rtol=1e-5, atol=1e-5, equal_nan=True,
                                   err_msg=f"{pad} {mode} {ac}")
    x3 = np.arange(1.0, 25.0, dtype=np.float32).reshape(1, 1, 2, 3, 4)
    g3 = np.zeros((1, 1, 1, 3, 3), np.float32)
    g3.reshape(-1)[0], g3.reshape(-1)[-1] = nan, inf
    for mode in ("bilinear", "nearest"):
        t = F.grid_sample(torch.tensor(x3), torch.tensor(g3), mode=mode, align_corners=False)
        e = E.grid_sample(ember.tensor(x3), ember.tensor(g3), mode=mode, align_corners=False)
        np.testing.assert_allclose(e.numpy(), t.numpy(), equal_nan=True)


def test_grid_sample_fused_double_backward_and_grad_fn():
    x = ember.randn(1, 2, 3, 4, dtype=ember.float64, requires_grad=True)
    g = (ember.rand(1, 2, 3, 2, dtype=ember.float64) * 2.6 - 1.3).requires_grad_()
    y = E.grid_sample(x, g, align_corners=False)
    assert type(y.grad_fn).__name__ == "GridSampler2DBackward0"
    for pad in ("zeros", "border", "reflection"):
        f = lambda a, b: E.grid_sample(a, b, padding_mode=pad, align_corners=False)  # noqa: E731
        assert ember.autograd.gradcheck(f, (x, g)) and ember.autograd.gradgradcheck(f, (x, g))


def test_short_row_sums_and_blocked_transposes():
    rng = np.random.RandomState(3)
    for n in (1, 7, 8, 9, 49, 63, 64, 65, 200):
        a = rng.randn(37, n)
        for dt in ("float32", "float64"):
            got = ember.tensor(a.astype(dt)).sum(1).numpy()
            np.testing.assert_allclose(got, a.astype(dt).astype(np.float64).sum(1), rtol=1e-5 if dt == "float32" else 1e-13,
                                       atol=1e-5 if dt == "float32" else 1e-13)
        m = ember.tensor(a.astype(np.float32))
        np.testing.assert_array_equal(m.mean((1,), keepdim=True).numpy(), (m.sum(1, keepdim=True) / n).numpy())
    # bfloat16 sums widen as they read: the same additions as summing the float copy
    b = ember.tensor(rng.randn(50, 49).astype(np.float32)).bfloat16()
    np.testing.assert_array_equal(b.sum(1, dtype=ember.float32).numpy(), b.float().sum(1).numpy())
    for dt in (np.float32, np.int32, np.float64, np.int64):
        for r, c in ((5, 3), (67, 130), (128, 64), (3, 257)):
            a = (rng.randn(r, c) * 100).astype(dt)
            np.testing.assert_array_equal(ember.tensor(a).t().contiguous().numpy(), a.T)


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_reduced_float_interpolation_rounds_weights_as_torch(dtype):
    """torch keeps 1-d/3-d linear and cubic weights in the input's half/bfloat16 (its 2-d bilinear ones float):
    the results agree to the bit but for rare last-place ties."""
    rng = np.random.RandomState(0)
    mismatched = 0
    for mode, shape, kw in (("linear", (2, 3, 7), dict(scale_factor=0.6)), ("linear", (2, 3, 5), dict(size=9, align_corners=True)),
                            ("trilinear", (1, 2, 3, 4, 5), dict(size=(5, 3, 7))), ("bicubic", (2, 2, 5, 6), dict(size=(7, 4))),
                            ("bilinear", (2, 2, 5, 6), dict(scale_factor=1.7))):
        x = rng.uniform(-9, 9, shape).astype(np.float32)
        t = F.interpolate(torch.tensor(x).to(getattr(torch, dtype)), mode=mode, **kw).float().numpy()
        e = E.interpolate(ember.tensor(x).to(getattr(ember, dtype)), mode=mode, **kw).float().numpy()
        ulp = np.abs(t) * (2.0 ** -7 if dtype == "bfloat16" else 2.0 ** -10) + 1e-30
        assert np.all(np.abs(t - e) <= ulp), (mode, kw)
        mismatched += int((t != e).sum())
    assert mismatched <= 2


def test_scans_and_extremes_over_short_rows_match_torch():
    """cumsum/cumprod over short rows interleave 8 rows' chains; max/argmax over them take the exact loop."""
    rng = np.random.RandomState(4)
    for dt in ("float32", "float64", "int64"):
        for shape in ((37, 7), (8, 5), (3, 63), (100, 64), (5, 1), (0, 3), (9, 2, 3), (17, 15)):
            x = (rng.randn(*shape) * 3).astype(dt)
            for f in ("cumsum", "cumprod"):
                np.testing.assert_allclose(getattr(ember, f)(ember.tensor(x), -1).numpy(),
                                           getattr(torch, f)(torch.tensor(x), -1).numpy(), rtol=1e-6, atol=1e-6)
            if x.size == 0:
                continue
            if dt != "int64" and x.size > 3:
                x.flat[2] = np.nan  # NaN wins max/min and argmax, as torch's
            for f in ("amax", "amin", "argmax", "argmin"):
                np.testing.assert_array_equal(getattr(ember, f)(ember.tensor(x), -1).numpy(),
                                              getattr(torch, f)(torch.tensor(x), -1).numpy(), err_msg=f"{f} {dt} {shape}")


@pytest.mark.parametrize("p", [0.5, 1.5, 2.0, 3.0])
def test_norm_gradient_at_zeros_matches_torch(p):
    """p-norm gradients where entries (or a whole row) are zero: PyTorch's subgradients, never NaN."""
    x0 = np.array([[0.0, 1.0, -2.0], [0.0, 0.0, 0.0], [3.0, -0.5, 0.25]])
    e = ember.tensor(x0, requires_grad=True)
    e.norm(p, dim=1).sum().backward()
    t = torch.tensor(x0, requires_grad=True)
    t.norm(p, dim=1).sum().backward()
    np.testing.assert_allclose(e.grad.numpy(), t.grad.numpy(), rtol=1e-12, atol=1e-12)
    x = ember.tensor(np.random.RandomState(0).randn(3, 4), requires_grad=True)
    f = lambda a: a.norm(p, dim=1)  # noqa: E731
    assert ember.autograd.gradcheck(f, (x,)) and ember.autograd.gradgradcheck(f, (x,))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_two_norm_sums_squares_accurately(dtype):
    """the 2-norm sums squares in one pass, pairwise: against the float64 (longdouble) truth, not torch's
    float32 norm, which strays by ~1e-3 relative on 16M values."""
    rng = np.random.RandomState(5)
    for shape, dim in (((1024, 1024), None), ((1000, 37), 1), ((37, 1000), 0), ((5, 6, 7), (0, 2)), ((3, 0), 1),
                       ((), None), ((300001,), None), ((64, 8, 7, 7), (2, 3)), ((4, 5, 6), (0, 1, 2))):
        a = np.asarray(rng.randn(*shape), dtype=dtype)
        got = ember.tensor(a).norm(2, dim).numpy()
        want = np.asarray(np.sqrt((a.astype(np.longdouble) ** 2).sum(axis=dim)), dtype=np.float64)
        np.testing.assert_allclose(got, want, rtol=2e-6 if dtype == "float32" else 1e-13, err_msg=str((shape, dim)))
        assert tuple(got.shape) == tuple(torch.tensor(a).norm(2, dim).shape)
