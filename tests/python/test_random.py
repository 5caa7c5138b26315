"""Random sampling: shapes, dtypes, value ranges, statistics, seeding (manual_seed, Generator
objects, get/set_rng_state) and results independent of the thread count. Ember-only (values are
not comparable with torch's generator); the shape/dtype/error parity lives in opdb."""
import math

import pytest

import ember
from cuda_absent import needs_no_gpu, raises_no_gpu

FLOATS = [ember.float32, ember.float64, ember.float16, ember.bfloat16]
INTS = [ember.int8, ember.int16, ember.int32, ember.int64, ember.uint8]

SAMPLERS = {
    "rand": lambda g: ember.rand(50_000, generator=g),
    "randn": lambda g: ember.randn(50_000, generator=g),
    "randn64": lambda g: ember.randn(40_001, dtype=ember.float64, generator=g),
    "randint": lambda g: ember.randint(-7, 1000, (50_000,), generator=g),
    "randperm": lambda g: ember.randperm(5_000, generator=g),
    "uniform_": lambda g: ember.empty(50_000).uniform_(-2, 3, generator=g),
    "normal_": lambda g: ember.empty(300, 200).t().normal_(1, 2, generator=g),
    "bernoulli_": lambda g: ember.empty(50_000).bernoulli_(0.3, generator=g),
    "bernoulli": lambda g: ember.bernoulli(ember.full((50_000,), 0.7), generator=g),
    "random_": lambda g: ember.empty(50_000, dtype=ember.int32).random_(0, 100, generator=g),
    "exponential_": lambda g: ember.empty(50_000, dtype=ember.float64).exponential_(2.0, generator=g),
    "multinomial": lambda g: ember.multinomial(ember.tensor([1.0, 2.0, 3.0, 4.0]), 20_000, True, generator=g),
    "rand_half": lambda g: ember.rand(40_000, dtype=ember.float16, generator=g),
}


def _stats(t):
    x = t.double()
    m = x.mean().item()
    s = x.std().item()
    return m, s


# ---------------------------------------------------------------- shapes, dtypes, ranges
@pytest.mark.parametrize("dtype", FLOATS)
def test_rand_randn_shapes_dtypes_ranges(dtype):
    for shape in [(), (0,), (3,), (2, 3, 4), (40_000,)]:
        r = ember.rand(*shape, dtype=dtype) if shape else ember.rand((), dtype=dtype)
        assert tuple(r.shape) == shape and r.dtype is dtype
        if r.numel():
            assert 0 <= r.min().item() and r.max().item() <= 1  # (rounding to half can reach 1.0)
        n = ember.randn(shape, dtype=dtype)
        assert tuple(n.shape) == shape and n.dtype is dtype
        assert ember.isfinite(n).all().item()
    assert ember.rand(2, 3).dtype is ember.get_default_dtype()
    assert ember.rand_like(ember.zeros(2, 3, dtype=dtype)).dtype is dtype
    assert ember.randn_like(ember.zeros(4, dtype=dtype), dtype=ember.float64).dtype is ember.float64


def test_rand_float32_is_strictly_below_one():
    r = ember.rand(200_000)
    assert r.max().item() < 1.0 and r.min().item() >= 0.0


@pytest.mark.parametrize("dtype", INTS + FLOATS)
def test_randint_range_and_dtype(dtype):
    lo, hi = (0, 7) if dtype is ember.uint8 else (-5, 7)
    r = ember.randint(lo, hi, (10_000,), dtype=dtype)
    assert r.dtype is dtype and tuple(r.shape) == (10_000,)
    assert r.min().item() == lo and r.max().item() == hi - 1  # every value is hit in 10000 draws
    if dtype in FLOATS:
        assert (r == r.floor()).all().item()
    assert ember.randint(5, (2, 3)).dtype is ember.int64
    assert set(ember.randint(0, 2, (1000,), dtype=ember.bool).tolist()) == {False, True}


@pytest.mark.parametrize("dtype", INTS + FLOATS + [ember.bool])
def test_random_default_range(dtype):
    t = ember.empty(20_000, dtype=dtype).random_()
    if dtype is ember.bool:
        assert set(t.tolist()) == {False, True}
        return
    top = {ember.int8: 127, ember.int16: 32767, ember.int32: 2**31 - 1, ember.int64: 2**63 - 1, ember.uint8: 255,
           ember.float16: 2**11, ember.bfloat16: 2**8, ember.float32: 2**24, ember.float64: 2**53}[dtype]
    assert t.min().item() >= 0 and t.max().item() <= top
    assert (t.double() == t.double().floor()).all().item()
    assert t.double().mean().item() > top / 4  # spread over the range, not stuck near 0


def test_random_from_to():
    t = ember.empty(10_000, dtype=ember.int64).random_(-3, 4)
    assert t.min().item() == -3 and t.max().item() == 3
    t = ember.empty(1000, dtype=ember.float32).random_(5, 6)
    assert (t == 5).all().item()


def test_randperm_is_a_permutation():
    for n in (0, 1, 2, 17, 5000):
        p = ember.randperm(n)
        assert p.dtype is ember.int64 and sorted(p.tolist()) == list(range(n))
    assert ember.randperm(10, dtype=ember.float32).dtype is ember.float32
    assert ember.randperm(100).tolist() != list(range(100))


def test_bernoulli_values_and_rates():
    p = ember.tensor([0.0, 1.0, 0.25]).expand(20_000, 3)
    b = ember.bernoulli(p)
    assert b.dtype is ember.float32 and tuple(b.shape) == (20_000, 3)
    assert set(b.flatten().tolist()) == {0.0, 1.0}
    rates = b.mean(0).tolist()
    assert rates[0] == 0.0 and rates[1] == 1.0 and abs(rates[2] - 0.25) < 0.02
    x = ember.empty(10_000, dtype=ember.int64).bernoulli_(0.5)
    assert set(x.tolist()) == {0, 1}
    y = ember.zeros(10_000, dtype=ember.bool).bernoulli_(ember.full((10_000,), 0.9))
    assert abs(y.float().mean().item() - 0.9) < 0.02


def test_multinomial():
    w = ember.tensor([1.0, 0.0, 3.0, 6.0])
    s = ember.multinomial(w, 40_000, replacement=True)
    assert s.dtype is ember.int64 and tuple(s.shape) == (40_000,)
    counts = [(s == k).sum().item() / 40_000 for k in range(4)]
    assert counts[1] == 0 and all(abs(c - e) < 0.015 for c, e in zip(counts, [0.1, 0.0, 0.3, 0.6]))
    rows = ember.multinomial(ember.ones(5, 10), 10)
    assert tuple(rows.shape) == (5, 10)
    for r in rows.tolist():
        assert sorted(r) == list(range(10))  # without replacement: every category once
    s2 = ember.multinomial(ember.tensor([0.0, 0.0, 5.0]), 1)
    assert s2.tolist() == [2]


# ---------------------------------------------------------------- statistics
def test_statistics():
    cases = [
        ("rand", ember.rand(200_000), 0.5, math.sqrt(1 / 12)),
        ("rand64", ember.rand(200_000, dtype=ember.float64), 0.5, math.sqrt(1 / 12)),
        ("randn", ember.randn(200_000), 0.0, 1.0),
        ("randn64", ember.randn(200_001, dtype=ember.float64), 0.0, 1.0),
        ("randn_half", ember.randn(100_000, dtype=ember.float16), 0.0, 1.0),
        ("uniform_", ember.empty(200_000).uniform_(-2, 4), 1.0, 6 / math.sqrt(12)),
        ("normal_", ember.empty(500, 400).normal_(3, 0.5), 3.0, 0.5),
        ("normal_64", ember.empty(100_000, dtype=ember.float64).normal_(-1, 2), -1.0, 2.0),
        ("exponential_", ember.empty(200_000).exponential_(4.0), 0.25, 0.25),
        ("randint", ember.randint(0, 10, (200_000,)).double(), 4.5, math.sqrt(99 / 12)),
        ("bernoulli", ember.bernoulli(ember.full((200_000,), 0.2)), 0.2, math.sqrt(0.16)),
    ]
    for name, t, mean, std in cases:
        m, s = _stats(t)
        n = t.numel()
        assert abs(m - mean) < 6 * std / math.sqrt(n) + 1e-3, (name, m, mean)
        assert abs(s - std) < 0.02 * std + 1e-3, (name, s, std)


def test_normal_samples_are_not_paired_copies():
    # Box-Muller pairs: the two values of a pair are independent (cos/sin), not equal
    x = ember.randn(10_000)
    a, b = x[0::2], x[1::2]
    corr = ((a - a.mean()) * (b - b.mean())).mean().item() / (a.std().item() * b.std().item())
    assert abs(corr) < 0.05
    assert ember.randn(4).unbind(0)[0].item() != ember.randn(4).unbind(0)[0].item()


# ---------------------------------------------------------------- seeding and generators
@pytest.mark.parametrize("name", list(SAMPLERS))
def test_manual_seed_reproducibility(name):
    f = SAMPLERS[name]
    ember.manual_seed(1234)
    a = f(None)
    b = f(None)
    ember.manual_seed(1234)
    c = f(None)
    assert a.tolist() == c.tolist()
    assert a.tolist() != b.tolist()
    ember.manual_seed(4321)
    assert f(None).tolist() != a.tolist()


@pytest.mark.parametrize("name", list(SAMPLERS))
def test_generator_objects(name):
    f = SAMPLERS[name]
    g1 = ember.Generator().manual_seed(7)
    g2 = ember.Generator()
    g2.manual_seed(7)
    ember.manual_seed(0)
    state = ember.get_rng_state()
    a, b = f(g1), f(g2)
    assert a.tolist() == b.tolist()
    assert ember.get_rng_state().tolist() == state.tolist(), "generator= leaves the default generator alone"
    g1.manual_seed(8)
    assert f(g1).tolist() != f(g2).tolist()


@pytest.mark.parametrize("name", list(SAMPLERS))
def test_results_do_not_depend_on_thread_count(name):
    f = SAMPLERS[name]
    n0 = ember.get_num_threads()
    try:
        out = []
        for n in (1, 2, 3):
            ember.set_num_threads(n)
            out.append(f(ember.Generator().manual_seed(99)).tolist())
        assert out[0] == out[1] == out[2]
    finally:
        ember.set_num_threads(n0)


def test_rng_state_roundtrip_and_seeds():
    ember.manual_seed(5)
    assert ember.initial_seed() == 5
    s = ember.get_rng_state()
    a = ember.rand(10)
    ember.set_rng_state(s)
    assert ember.rand(10).tolist() == a.tolist()
    g = ember.Generator()
    g.manual_seed(3)
    gs = g.get_state()
    x = ember.randn(5, generator=g)
    g.set_state(gs)
    assert ember.randn(5, generator=g).tolist() == x.tolist()
    assert g.initial_seed() == 3
    new = ember.seed()
    assert ember.initial_seed() == new
    ember.manual_seed(-1)  # negative seeds wrap as in PyTorch
    ember.manual_seed(2**64 - 1)
    with pytest.raises(RuntimeError):
        ember.manual_seed(2**64)
    assert ember.default_generator.initial_seed() == ember.initial_seed()


def test_generator_argument_errors():
    with pytest.raises(TypeError):
        ember.rand(3, generator=5)


@needs_no_gpu
def test_cuda_generators_without_a_gpu():
    with pytest.raises(RuntimeError):  # a CUDA build: no driver; a CPU build: no CUDA support
        ember.Generator(device="cuda")
    # seeding CUDA's generators needs no GPU (PyTorch queues the calls until CUDA starts)
    ember.cuda.manual_seed(3)
    ember.cuda.manual_seed_all(4)
    ember.cuda.seed()
    ember.cuda.seed_all()
    ember.cuda.set_rng_state(ember.get_rng_state())
    assert ember.cuda.default_generators == () and ember.cuda.get_rng_state_all() == []
    with raises_no_gpu():
        ember.cuda.initial_seed()
    with raises_no_gpu():
        ember.cuda.get_rng_state()
    with pytest.raises(RuntimeError, match="Overflow when unpacking long"):
        ember.cuda.manual_seed(2**64)


def test_random_inplace_on_views_writes_through():
    base = ember.zeros(4, 6)
    v = base[:, ::2]
    v.uniform_(1, 2)
    assert (base[:, ::2] >= 1).all().item() and (base[:, 1::2] == 0).all().item()
    v.normal_()
    assert (base[:, 1::2] == 0).all().item()
