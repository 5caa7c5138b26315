"""torch.*'s extra math on the GPU against Ember's CPU results: addcmul/addcdiv, rsub, angles, ldexp,
heaviside, statistics (aminmax, renorm, nanmedian, quantile, cov, corrcoef), integration, the
scatter-into-a-view family, special functions (logit, polygamma, mvlgamma, xlogy), the scans
(cummax/cummin, logcumsumexp, diff), cross, searchsorted/bucketize/isin, and their gradients.
Skips without a GPU."""
import pytest

import ember

pytestmark = pytest.mark.skipif(not ember.cuda.is_available(), reason="no CUDA GPU")


def same(gpu, cpu, rtol=1e-5, atol=1e-6):
    assert gpu.device.type == "cuda", gpu.device
    back = gpu.cpu()
    assert back.dtype == cpu.dtype and back.shape == cpu.shape, (back.dtype, cpu.dtype, back.shape, cpu.shape)
    if back.dtype.is_floating_point:
        assert ember.allclose(back, cpu, rtol=rtol, atol=atol, equal_nan=True), (back, cpu)
    else:
        assert ember.equal(back, cpu), (back, cpu)


def both(fn, *tensors):
    """fn on the CPU tensors and on their GPU copies."""
    return fn(*[t.cuda() for t in tensors]), fn(*tensors)


@pytest.fixture(autouse=True)
def seed():
    ember.manual_seed(0)


ELEMENTWISE = {
    "addcmul": lambda a, b, c: ember.addcmul(a, b, c, value=0.5),
    "addcdiv": lambda a, b, c: ember.addcdiv(a, b, c.abs() + 1, value=-2),
    "addcmul_": lambda a, b, c: a.clone().addcmul_(b, c),
    "rsub": lambda a, b, c: ember.rsub(a, b, alpha=3),
    "rsub_scalar": lambda a, b, c: 1 - a,
    "deg2rad": lambda a, b, c: ember.deg2rad(a),
    "rad2deg": lambda a, b, c: ember.rad2deg(a),
    "ldexp": lambda a, b, c: ember.ldexp(a, (b * 4).round().to(ember.int32)),
    "heaviside": lambda a, b, c: ember.heaviside(a.round(), b),
    "copysign_scalar": lambda a, b, c: ember.copysign(a, -1.0),
    "logit": lambda a, b, c: ember.logit(a.sigmoid(), eps=1e-6),
    "polygamma": lambda a, b, c: ember.polygamma(2, a.abs() + 0.5),
    "mvlgamma": lambda a, b, c: ember.mvlgamma(a.abs() + 3, 3),
    "xlogy_scalar": lambda a, b, c: ember.xlogy(2.0, a.abs()),
    "ndtr": lambda a, b, c: ember.special.ndtr(a),
    "dist": lambda a, b, c: ember.dist(a, b, 3),
    "positive": lambda a, b, c: +a,
}


@pytest.mark.parametrize("name", sorted(ELEMENTWISE))
@pytest.mark.parametrize("dtype", [ember.float32, ember.float64])
def test_elementwise_extras(name, dtype):
    a, b, c = (ember.randn(7, 5, dtype=dtype) for _ in range(3))
    g, r = both(ELEMENTWISE[name], a, b, c)
    same(g, r, rtol=1e-4 if dtype == ember.float32 else 1e-10)


def test_statistics():
    x = ember.randn(6, 9, dtype=ember.float64)
    x[1, 3] = float("nan")
    for fn in (lambda t: ember.aminmax(t, dim=1), lambda t: ember.aminmax(t),
               lambda t: ember.renorm(t, 2, 0, 1.5), lambda t: ember.nanmedian(t, 1), lambda t: ember.nanmedian(t),
               lambda t: ember.msort(t)):
        g, r = both(fn, x)
        for gi, ri in zip(g if isinstance(g, tuple) else (g,), r if isinstance(r, tuple) else (r,)):
            same(gi, ri, rtol=1e-12)
    q = ember.tensor([0.1, 0.5, 0.9], dtype=ember.float64)
    for interp in ("linear", "lower", "higher", "midpoint", "nearest"):
        g, r = both(lambda t, qq: ember.quantile(t, qq, dim=1, interpolation=interp), x, q)
        same(g, r, rtol=1e-12)
        g, r = both(lambda t: ember.nanquantile(t, 0.3, dim=0, keepdim=True, interpolation=interp), x)
        same(g, r, rtol=1e-12)
    with pytest.raises(RuntimeError, match="same device"):
        ember.quantile(x.cuda(), q)
    y = ember.randn(3, 20, dtype=ember.float64)
    w = ember.randint(0, 4, (20,))
    aw = ember.rand(20, dtype=ember.float64)
    g, r = both(lambda t, f, a: ember.cov(t, fweights=f, aweights=a), y, w, aw)
    same(g, r, rtol=1e-10)
    g, r = both(ember.corrcoef, y)
    same(g, r, rtol=1e-10)


def test_integration_and_scatter_views():
    y = ember.randn(4, 10, dtype=ember.float64)
    x = ember.randn(10, dtype=ember.float64).sort().values
    for fn in (lambda a, b: ember.trapezoid(a, b), lambda a, b: ember.trapezoid(a, dx=0.5),
               lambda a, b: ember.cumulative_trapezoid(a, b), lambda a, b: ember.diff(a, n=2, dim=1),
               lambda a, b: ember.diff(a, prepend=a[:, :1], append=a[:, -2:])):
        g, r = both(fn, y, x)
        same(g, r, rtol=1e-12)
    base, src = ember.zeros(5, 5), ember.randn(5)
    for fn in (lambda b_, s: ember.diagonal_scatter(b_, s), lambda b_, s: ember.select_scatter(b_, s, 0, 2),
               lambda b_, s: ember.slice_scatter(b_, s.reshape(1, 5), 0, 1, 2),
               lambda b_, s: b_.clone().fill_diagonal_(3.0)):
        g, r = both(fn, base, src)
        same(g, r)
    t = ember.zeros(3, 4)
    idx, vals = ember.tensor([0, 5, 11, 5]), ember.tensor([1.0, 2.0, 3.0, 4.0])
    g, r = both(lambda a, i, v: a.clone().put_(i, v, accumulate=True), t, idx, vals)
    same(g, r)
    src = ember.randn(4, 3)
    g, r = both(lambda a, s, i: a.clone().index_reduce_(0, i, s, "amax", include_self=False), ember.ones(3, 3), src,
                ember.tensor([0, 2, 0, 1]))
    same(g, r)
    r = ember.zeros(2, 3).cuda()
    r.resize_(4, 5)
    assert r.shape == (4, 5) and r.device.type == "cuda"


@pytest.mark.parametrize("dtype", [ember.float32, ember.float64, ember.int64, ember.int32, ember.uint8])
def test_scans_and_search(dtype):
    x = (ember.randn(6, 33) * 10).to(dtype)
    if dtype.is_floating_point:
        x[2, 5] = float("nan")
    x[3, 4] = x[3, 3]  # a tie
    for dim in (0, 1, -1):
        for op in (ember.cummax, ember.cummin):
            (gv, gi), (rv, ri) = both(lambda t: op(t, dim), x)
            same(gv, rv)
            same(gi, ri)
    if dtype.is_floating_point:
        g, r = both(lambda t: ember.logcumsumexp(t, 1), x)
        same(g, r, rtol=1e-5)
    boundaries = ember.sort(x[0]).values
    for right in (False, True):
        g, r = both(lambda b, v: ember.searchsorted(b, v, right=right), boundaries, x)
        same(g, r)
        g, r = both(lambda b, v: ember.bucketize(v, b, right=right, out_int32=True), boundaries, x)
        same(g, r)
    sorter = ember.argsort(x[1])
    g, r = both(lambda b, s, v: ember.searchsorted(b, v, sorter=s), x[1], sorter, x)
    same(g, r)
    g, r = both(lambda a, b: ember.isin(a, b), x, x[0, :7])
    same(g, r)


def test_cross_and_gradients():
    a, b = ember.randn(4, 3, dtype=ember.float64), ember.randn(4, 3, dtype=ember.float64)
    g, r = both(lambda u, v: ember.linalg.cross(u, v), a, b)
    same(g, r, rtol=1e-12)
    # gradients of the composites come back on the GPU and match the CPU's
    for fn in (lambda t: ember.addcmul(t, t, t).sum(), lambda t: ember.logcumsumexp(t, 1).sum(),
               lambda t: ember.cummax(t, 1).values.sum(), lambda t: ember.logit(t.sigmoid()).sum(),
               lambda t: ember.quantile(t, 0.25, dim=1).sum(), lambda t: ember.renorm(t, 2, 0, 1.0).sum()):
        cpu = ember.randn(3, 5, dtype=ember.float64, requires_grad=True)
        gpu = cpu.detach().cuda().requires_grad_()
        fn(cpu).backward()
        fn(gpu).backward()
        assert gpu.grad.device.type == "cuda"
        same(gpu.grad, cpu.grad, rtol=1e-10)


def test_frexp_stays_on_the_cpu_with_a_clear_error():
    with pytest.raises(NotImplementedError, match="frexp"):
        ember.frexp(ember.ones(3).cuda())


@pytest.mark.parametrize("dtype", [ember.float32, ember.float64, ember.int64, ember.int32, ember.bool, ember.float16])
def test_cumsum_cumprod(dtype):
    x = (ember.randn(5, 40) * 3).to(dtype)
    for dim in (0, 1, -1):
        for fn in (lambda t: ember.cumsum(t, dim), lambda t: ember.cumprod(t, dim),
                   lambda t: ember.cumsum(t, dim, dtype=ember.float64)):
            g, r = both(fn, x)
            same(g, r, rtol=1e-3 if dtype == ember.float16 else 1e-6)
    big = ember.full((3,), 2**62, dtype=ember.int64)  # wraps as the CPU's
    g, r = both(lambda t: ember.cumsum(t, 0), big)
    same(g, r)
    g, r = both(lambda t: ember.cumsum(t, 0), ember.randn(100000))  # one long row
    same(g, r, rtol=1e-5, atol=1e-3)


def test_range_factories_and_index_tables():
    cases = [lambda dev: ember.arange(10, device=dev), lambda dev: ember.arange(-3, 7, 0.37, device=dev),
             lambda dev: ember.arange(0, 1, 0.1, dtype=ember.float32, device=dev),
             lambda dev: ember.arange(2**62, 2**62 + 5, device=dev),
             lambda dev: ember.linspace(-2.5, 7, 11, device=dev), lambda dev: ember.linspace(0, 1, 1, device=dev),
             lambda dev: ember.linspace(-3, 3, 7, dtype=ember.uint8, device=dev),
             lambda dev: ember.logspace(0, 3, 9, device=dev),
             lambda dev: ember.tril_indices(5, 4, -1, device=dev), lambda dev: ember.triu_indices(4, 6, 2, device=dev),
             lambda dev: ember.combinations(ember.arange(5, device=dev), 3),
             lambda dev: ember.combinations(ember.arange(4, device=dev), 2, with_replacement=True),
             lambda dev: ember.repeat_interleave(ember.tensor([2, 0, 3], device=dev)),
             lambda dev: ember.arange(6, device=dev).repeat_interleave(ember.tensor([1, 2, 0, 1, 3, 1], device=dev))]
    for make in cases:
        same(make("cuda"), make("cpu"), rtol=0, atol=0)
    assert ember.arange(0, device="cuda").shape == (0,)


def test_complex_and_polar():
    re, im = ember.randn(4, 3), ember.randn(3)
    g, r = both(ember.complex, re, im)
    same(g, r)
    g, r = both(lambda a, b: ember.polar(a.abs(), b), re, im)
    assert ember.allclose(g.cpu(), r)
    with pytest.raises(RuntimeError, match="same device|Expected all tensors"):
        ember.complex(re.cuda(), ember.randn(4, 3))


@pytest.mark.parametrize("p", [0.0, 1.0, 2.0, 3.0, float("inf")])
def test_cdist(p):
    x1, x2 = ember.randn(2, 7, 5, dtype=ember.float64), ember.randn(1, 9, 5, dtype=ember.float64)
    x1[0, 1, 2] = float("nan")
    for mode in ("donot_use_mm_for_euclid_dist", "use_mm_for_euclid_dist", None):
        g, r = both(lambda a, b: ember.cdist(a, b, p, compute_mode=mode), x1, x2)
        same(g, r, rtol=1e-10, atol=1e-12)
    a = ember.randn(3, 4, dtype=ember.float64, requires_grad=True)
    b = ember.randn(5, 4, dtype=ember.float64, requires_grad=True)
    ag, bg = a.detach().cuda().requires_grad_(), b.detach().cuda().requires_grad_()
    ember.cdist(a, b, p).sum().backward()
    ember.cdist(ag, bg, p).sum().backward()
    same(ag.grad, a.grad, rtol=1e-10)
    same(bg.grad, b.grad, rtol=1e-10)
