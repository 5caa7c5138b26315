"""float16 / bfloat16 elementwise ops and casts on the CPU against torch 2.13, bit for bit.

Ember widens half/bfloat16 operands block by block inside the kernel (vector conversions, and for
add/sub/mul/div in registers) instead of casting whole tensors; these tests pin that the values
are exactly PyTorch's ("compute in float, round once to nearest even") over every 16-bit pattern,
every layout the iterator can hand a kernel, and run lengths that cross the blocks' and vectors'
edges. Transcendental functions may differ from torch's by one unit of the reduced dtype (the float
results differ by an ulp between SLEEF and libm).
"""
import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")

REDUCED = ("float16", "bfloat16")
LIBS = (ember, torch)


def bits(t):
    """The 16- or 32-bit patterns of a float tensor, as a NumPy array."""
    lib = ember if isinstance(t, ember.Tensor) else torch
    width = {2: lib.int16, 4: lib.int32, 8: lib.int64}[t.element_size()]
    return t.contiguous().view(width).numpy()


def from_bits(lib, pattern, dtype):
    """A tensor of `dtype` holding the given 16-bit patterns (NumPy uint16 or int16)."""
    return lib.from_numpy(np.ascontiguousarray(pattern).view(np.int16).copy()).view(getattr(lib, dtype))


def pair(values, dtype):
    """(ember, torch) tensors of `dtype` with the same values (rounded once, by torch)."""
    t = torch.tensor(np.asarray(values, dtype=np.float32)).to(getattr(torch, dtype))
    return from_bits(ember, t.view(torch.int16).numpy(), dtype), t


def assert_same(e, t, ulps=0):
    """Same dtype, shape and values; NaN where torch has NaN; within `ulps` units of the dtype."""
    assert str(e.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
    assert tuple(e.shape) == tuple(t.shape)
    if e.dtype in (ember.float16, ember.bfloat16):
        ev, tv = e.float().numpy(), t.float().numpy()
        assert np.array_equal(np.isnan(ev), np.isnan(tv)), (ev, tv)
        if ulps == 0:
            ok = np.isnan(tv) | (bits(e) == bits(t))
            assert ok.all(), (e[~ember.from_numpy(ok)], t[~torch.from_numpy(ok)])
        else:  # within `ulps` units in the last place (the subnormals' spacing near zero)
            eps, tiny = (2.0 ** -10, 2.0 ** -24) if e.dtype == ember.float16 else (2.0 ** -7, 2.0 ** -133)
            np.testing.assert_allclose(ev, tv, rtol=2 * ulps * eps, atol=ulps * tiny, equal_nan=True)
    else:
        ev, tv = e.numpy(), t.numpy()
        if ev.dtype.kind == "f" and ulps:
            eps = np.finfo(ev.dtype).eps
            np.testing.assert_allclose(ev, tv, rtol=ulps * eps, atol=ulps * np.finfo(ev.dtype).smallest_subnormal,
                                       equal_nan=True)
        elif ev.dtype.kind == "f":
            assert np.array_equal(np.isnan(ev), np.isnan(tv))
            ok = np.isnan(tv) | (ev.view(np.uint8 if ev.itemsize == 1 else f"u{ev.itemsize}")
                                 == tv.view(np.uint8 if tv.itemsize == 1 else f"u{tv.itemsize}"))
            assert ok.all()
        else:
            np.testing.assert_array_equal(ev, tv)


def values(n, seed=0, special=True):
    """n float32 values: normal ones, big ones (that overflow half), tiny ones (half subnormals) and
    the special values, shuffled."""
    rng = np.random.default_rng(seed)
    v = rng.standard_normal(n).astype(np.float32) * 3
    if special and n >= 16:
        k = n // 8
        v[:k] *= 30000.0
        v[k:2 * k] *= 1e-6
        v[2 * k:2 * k + 8] = [np.nan, np.inf, -np.inf, 0.0, -0.0, 65504.0, 65520.0, 6e-8]
        rng.shuffle(v)
    return v


# ---------------------------------------------------------------- casts
@pytest.mark.parametrize("dtype", REDUCED)
def test_every_16_bit_pattern_widens_as_torch(dtype):
    pattern = np.arange(65536, dtype=np.uint32).astype(np.uint16)
    e, t = from_bits(ember, pattern, dtype), from_bits(torch, pattern, dtype)
    for target in ("float32", "float64"):
        ew, tw = e.to(getattr(ember, target)), t.to(getattr(torch, target))
        ok = np.isnan(tw.numpy()) | (bits(ew) == bits(tw))
        assert ok.all(), pattern[~ok][:10]
        assert np.array_equal(np.isnan(ew.numpy()), np.isnan(tw.numpy()))
    # strided sources and odd lengths take the gathering path
    assert_same(e[1::3].float(), t[1::3].float())


@pytest.mark.parametrize("dtype", REDUCED)
def test_narrowing_rounds_to_nearest_even_as_torch(dtype):
    rng = np.random.default_rng(1)
    raw = rng.integers(0, 2 ** 32, 200_003, dtype=np.uint64).astype(np.uint32)
    # halfway cases of both formats, the overflow threshold and subnormals
    edges = np.array([0x3f801000, 0x3f803000, 0x3f808000, 0x3f818000, 0x477ff000, 0x477fefff, 0x477fe000,
                      0x33000000, 0x33000001, 0x32ffffff, 0x387fc000, 0x7f7fffff, 0xff7fffff, 0x00000001,
                      0x7f800000, 0xff800000, 0x7fc00000, 0x80000000], dtype=np.uint32)
    raw = np.concatenate([edges, raw])
    f = raw.view(np.float32)
    e, t = ember.from_numpy(f.copy()), torch.from_numpy(f.copy())
    assert_same(e.to(getattr(ember, dtype)), t.to(getattr(torch, dtype)))
    assert_same(e[::2].to(getattr(ember, dtype)), t[::2].to(getattr(torch, dtype)))
    assert_same(e.double().to(getattr(ember, dtype)), t.double().to(getattr(torch, dtype)))


@pytest.mark.parametrize("dtype", REDUCED)
@pytest.mark.parametrize("other", ["int8", "uint8", "int16", "int32", "int64", "bool", "float64", "complex64"])
def test_casts_between_reduced_and_other_dtypes(dtype, other):
    e, t = pair(values(3001, seed=2, special=False) * 20, dtype)
    ed, td = getattr(ember, other), getattr(torch, other)
    if other not in ("uint8", "int8", "bool"):  # out-of-range float -> small int is UB-defined differently
        assert_same(e.to(ed), t.to(td))
    small_e, small_t = e.clamp(-100, 100), t.clamp(-100, 100)
    if other != "uint8":
        assert_same(small_e.to(ed), small_t.to(td))
    assert_same(small_e.abs().to(ed), small_t.abs().to(td))
    back_e, back_t = small_e.to(ed), small_t.to(td)
    assert_same(back_e.to(e.dtype), back_t.to(t.dtype))
    assert_same(back_e[::3].to(e.dtype), back_t[::3].to(t.dtype))


def test_half_and_bfloat16_convert_into_each_other():
    e, t = pair(values(5000, seed=3), "float16")
    assert_same(e.to(ember.bfloat16), t.to(torch.bfloat16))
    assert_same(e.to(ember.bfloat16).to(ember.float16), t.to(torch.bfloat16).to(torch.float16))


# ---------------------------------------------------------------- unary
EXACT_UNARY = ["neg", "abs", "relu", "floor", "ceil", "trunc", "round", "frac", "sign", "sqrt", "reciprocal",
               "square", "isnan", "isinf", "isfinite", "signbit", "logical_not", "nan_to_num", "positive"]
TRANSCENDENTAL = ["exp", "expm1", "log", "log1p", "log2", "sin", "cos", "tan", "tanh", "sigmoid", "erf",
                  "atan", "asinh", "rsqrt", "exp2", "sinh", "cosh"]


@pytest.mark.parametrize("dtype", REDUCED)
@pytest.mark.parametrize("op", EXACT_UNARY + TRANSCENDENTAL)
def test_unary_ops(dtype, op):
    for n in (0, 1, 15, 17, 1023, 1024, 1025, 4099):
        e, t = pair(values(n, seed=n), dtype)
        if op in ("log", "log1p", "log2", "sqrt", "rsqrt"):
            e, t = e.abs(), t.abs()
        ulps = 1 if op in TRANSCENDENTAL else 0
        if op == "erf":  # torch's vectorized erf is a polynomial good to ~1e-7 absolute; Ember's is libm's
            np.testing.assert_allclose(ember.erf(e).float().numpy(), torch.erf(t).float().numpy(),
                                       rtol=2.0 ** -6, atol=4e-7)
            continue
        assert_same(getattr(ember, op)(e), getattr(torch, op)(t), ulps)
    # non-contiguous: a transposed matrix and a stepped slice
    e, t = pair(values(37 * 41, seed=9).reshape(37, 41), dtype)
    if op == "erf":
        return
    assert_same(getattr(e.t(), op)(), getattr(t.t(), op)(), 1 if op in TRANSCENDENTAL else 0)
    assert_same(getattr(e[:, ::3], op)(), getattr(t[:, ::3], op)(), 1 if op in TRANSCENDENTAL else 0)


@pytest.mark.parametrize("dtype", REDUCED)
def test_unary_in_place_and_out(dtype):
    e, t = pair(values(3000, seed=4), dtype)
    e2, t2 = e.clone(), t.clone()
    e2.abs_().neg_().exp_()
    t2.abs_().neg_().exp_()
    assert_same(e2, t2, 1)
    eo, to = ember.empty(3000, dtype=ember.float32), torch.empty(3000, dtype=torch.float32)
    ember.exp(e, out=eo)
    torch.exp(t, out=to)
    assert_same(eo, to, 1)  # the reduced result rounded first, then widened: torch's out= rule
    with pytest.raises(RuntimeError, match="Found dtype Float but expected"):
        ember.neg(e, out=eo)  # neg's out= must have the input's dtype, as torch's
    with pytest.raises(RuntimeError, match="Found dtype Float but expected"):
        torch.neg(t, out=to)


def test_unary_errors_name_the_reduced_dtype():
    with pytest.raises(RuntimeError, match="Half"):
        ember.bitwise_not(ember.ones(3, dtype=ember.float16))
    with pytest.raises(RuntimeError):
        torch.bitwise_not(torch.ones(3, dtype=torch.float16))


# ---------------------------------------------------------------- binary
BINARY = ["add", "sub", "mul", "div", "maximum", "minimum", "fmax", "fmin", "fmod", "remainder", "atan2",
          "pow", "eq", "ne", "lt", "le", "gt", "ge", "hypot", "copysign", "floor_divide", "logaddexp", "nextafter"]
BINARY_ULPS = {"atan2": 1, "pow": 1, "hypot": 1, "logaddexp": 1}


def layouts(dtype, seed):
    """(name, (ember a, ember b), (torch a, torch b)) over the layouts the iterator hands a kernel."""
    ea, ta = pair(values(4099, seed=seed).reshape(-1)[:4096].reshape(64, 64), dtype)
    eb, tb = pair(values(4099, seed=seed + 1).reshape(-1)[:4096].reshape(64, 64), dtype)
    yield "contiguous", (ea, eb), (ta, tb)
    yield "transposed", (ea.t(), eb.t()), (ta.t(), tb.t())
    yield "mixed layouts", (ea.t(), eb), (ta.t(), tb)
    yield "stepped", (ea[:, ::2], eb[:, 1::2]), (ta[:, ::2], tb[:, 1::2])
    yield "row broadcast", (ea, eb[3]), (ta, tb[3])
    yield "column broadcast", (ea, eb[:, :1]), (ta, tb[:, :1])
    yield "tensor op 0-d", (ea, eb[5, 7]), (ta, tb[5, 7])
    yield "0-d op tensor", (eb[5, 7], ea), (tb[5, 7], ta)
    yield "python float", (ea, 2.7182817), (ta, 2.7182817)
    yield "python int", (ea, 3), (ta, 3)
    yield "python float first", (-1.4142135, ea), (-1.4142135, ta)
    yield "float64 0-d", (ea, ember.tensor(0.1, dtype=ember.float64)), (ta, torch.tensor(0.1, dtype=torch.float64))
    yield "float32 1-element", (ea, ember.tensor([0.3])), (ta, torch.tensor([0.3]))
    yield "odd length", (ea.reshape(-1)[:1037], eb.reshape(-1)[3:1040]), (ta.reshape(-1)[:1037], tb.reshape(-1)[3:1040])
    yield "empty", (ea[:0], eb[:0]), (ta[:0], tb[:0])
    yield "0-d both", (ea[1, 1], eb[2, 2]), (ta[1, 1], tb[2, 2])


@pytest.mark.parametrize("dtype", REDUCED)
@pytest.mark.parametrize("op", BINARY)
def test_binary_ops_over_layouts(dtype, op):
    for name, (ea, eb), (ta, tb) in layouts(dtype, seed=len(op)):
        if op in ("fmod", "remainder", "floor_divide", "atan2", "hypot", "copysign", "logaddexp", "fmax", "fmin",
                  "maximum", "minimum", "nextafter") and not isinstance(ea, ember.Tensor):
            continue  # these take a tensor first
        if op in ("maximum", "minimum", "fmax", "fmin", "atan2", "hypot", "copysign", "logaddexp", "nextafter") and \
                not isinstance(eb, ember.Tensor):
            continue
        try:
            expected = getattr(torch, op)(ta, tb)
        except (RuntimeError, TypeError) as err:
            with pytest.raises(type(err)):
                getattr(ember, op)(ea, eb)
            continue
        got = getattr(ember, op)(ea, eb)
        try:
            assert_same(got, expected, BINARY_ULPS.get(op, 0))
        except AssertionError as err:
            raise AssertionError(f"{op} {dtype} {name}: {err}") from None


@pytest.mark.parametrize("dtype", REDUCED)
def test_add_sub_alpha_and_rounding_modes(dtype):
    if ember.backends.cpu.get_cpu_capability() == "DEFAULT":
        pytest.skip("the baseline kernels do not follow torch's vector/scalar split")
    for name, (ea, eb), (ta, tb) in layouts(dtype, seed=11):
        if not isinstance(ea, ember.Tensor) or not isinstance(eb, ember.Tensor):
            continue
        # torch's vectorized loop computes fma(alpha rounded to the dtype, b, a) in float; its scalar loop (strided
        # runs, tails, short tensors) rounds alpha * b to the dtype first; Ember follows the same split
        if True:
            for alpha in (2, -0.5, 3.25, 0.1):
                assert_same(ember.add(ea, eb, alpha=alpha), torch.add(ta, tb, alpha=alpha))
                assert_same(ember.sub(ea, eb, alpha=alpha), torch.sub(ta, tb, alpha=alpha))
        for mode in ("trunc", "floor"):
            assert_same(ember.div(ea, eb, rounding_mode=mode), torch.div(ta, tb, rounding_mode=mode))


@pytest.mark.parametrize("dtype", REDUCED)
def test_binary_in_place_out_and_promotion(dtype):
    ea, ta = pair(values(3000, seed=5), dtype)
    eb, tb = pair(values(3000, seed=6), dtype)
    e2, t2 = ea.clone(), ta.clone()
    alpha = 1 if ember.backends.cpu.get_cpu_capability() == "DEFAULT" else 2  # (see baseline_build)
    for e_op, t_op in ((lambda x: x.mul_(eb), lambda x: x.mul_(tb)),
                       (lambda x: x.add_(eb, alpha=alpha), lambda x: x.add_(tb, alpha=alpha)),
                       (lambda x: x.div_(3.0), lambda x: x.div_(3.0)), (lambda x: x.sub_(1), lambda x: x.sub_(1)),
                       (lambda x: x.mul_(0.1), lambda x: x.mul_(0.1))):
        e_op(e2)
        t_op(t2)
        assert_same(e2, t2)
    # in place on a transposed view writes through
    em, tm = ea[:2900].reshape(58, 50).clone(), ta[:2900].reshape(58, 50).clone()
    em.t().mul_(em.t()[0].clone())
    tm.t().mul_(tm.t()[0].clone())
    assert_same(em, tm)
    # out= of a wider dtype holds the reduced result (rounded first, then widened), as torch
    for out_dtype in ("float32", "float64"):
        eo, to = ember.empty(3000, dtype=getattr(ember, out_dtype)), torch.empty(3000, dtype=getattr(torch, out_dtype))
        ember.add(ea, eb, out=eo)
        torch.add(ta, tb, out=to)
        assert_same(eo, to)
        ember.mul(ea, 0.1, out=eo)
        torch.mul(ta, 0.1, out=to)
        assert_same(eo, to)
    # out= of the reduced dtype, and a bool result into a reduced out=
    eo, to = ember.empty(7, dtype=ea.dtype), torch.empty(7, dtype=ta.dtype)
    ember.add(ea, eb, out=eo)
    torch.add(ta, tb, out=to)
    assert_same(eo, to)
    ember.gt(ea, eb, out=eo)
    torch.gt(ta, tb, out=to)
    assert_same(eo, to)
    # an in-place op whose single-value operand aliases the output raises, as torch's (that operand is read
    # through a float copy, so the check must see the original)
    for lib, x in ((ember, ea), (torch, ta)):
        with pytest.raises(RuntimeError, match="single memory location"):
            y = x.clone()
            y[1:].mul_(y[1])
    # other dtypes join through type promotion: float32 tensors make float32 results
    ef, tf = ember.from_numpy(values(3000, seed=7)), torch.from_numpy(values(3000, seed=7))
    assert_same(ea + ef, ta + tf)
    assert_same(ea * ember.arange(3000), ta * torch.arange(3000))
    other = "float16" if dtype == "bfloat16" else "bfloat16"
    eo_, to_ = pair(values(3000, seed=8), other)
    assert_same(ea + eo_, ta + to_)
    # an integer tensor and a half tensor
    assert_same(ember.arange(3000, dtype=ember.int32) + ea, torch.arange(3000, dtype=torch.int32) + ta)
    # a reduced result can't be written into an integer tensor
    with pytest.raises(RuntimeError):
        ember.arange(3000).add_(ea)


# ---------------------------------------------------------------- ternary
@pytest.mark.parametrize("dtype", REDUCED)
def test_clamp_lerp_where_masked_fill(dtype):
    for name, (ea, eb), (ta, tb) in layouts(dtype, seed=21):
        if not isinstance(ea, ember.Tensor) or not isinstance(eb, ember.Tensor):
            continue
        assert_same(ea.clamp(-1.5, 2), ta.clamp(-1.5, 2))
        assert_same(ea.clamp(min=0.25), ta.clamp(min=0.25))
        assert_same(ea.clamp(max=float("nan")), ta.clamp(max=float("nan")))
        assert_same(ember.clamp(ea, eb, eb + 1), torch.clamp(ta, tb, tb + 1))
        if ea.dtype == eb.dtype:  # lerp's end and weight tensors have the input's dtype
            assert_same(ember.lerp(ea, eb, 0.3), torch.lerp(ta, tb, 0.3))
            assert_same(ember.lerp(ea, eb, 0.7), torch.lerp(ta, tb, 0.7))
            assert_same(ember.lerp(ea, eb, eb.sigmoid()), torch.lerp(ta, tb, tb.sigmoid()), 1)
        else:
            with pytest.raises(RuntimeError):
                torch.lerp(ta, tb, 0.3)
            with pytest.raises(RuntimeError):
                ember.lerp(ea, eb, 0.3)
        assert_same(ember.where(ea > eb, ea, eb), torch.where(ta > tb, ta, tb))
        assert_same(ember.where(ea > 0, ea, 0.5), torch.where(ta > 0, ta, 0.5))
        assert_same(ea.masked_fill(ea < 0, -2.5), ta.masked_fill(ta < 0, -2.5))
    e, t = pair(values(3000, seed=22), dtype)
    e.clamp_(-1, 1)
    t.clamp_(-1, 1)
    assert_same(e, t)


def test_where_moves_nan_payloads_and_every_dtype():
    pattern = np.arange(65536, dtype=np.uint32).astype(np.uint16)
    for dtype in REDUCED:
        e, t = from_bits(ember, pattern, dtype), from_bits(torch, pattern, dtype)
        mask = np.random.default_rng(0).random(65536) < 0.5
        got = ember.where(ember.from_numpy(mask), e, e.flip(0))
        want = np.where(mask, pattern, pattern[::-1])
        assert np.array_equal(bits(got).view(np.uint16), want)
    for dtype in ("uint8", "int16", "int32", "int64", "bool", "float32", "float64", "complex64", "complex128"):
        x = torch.arange(-600, 600).to(getattr(torch, dtype))
        c = torch.arange(1200) % 3 == 0
        ex, ec = ember.from_numpy(x.numpy().copy()), ember.from_numpy(c.numpy().copy())
        assert np.array_equal(ember.where(ec, ex, ex.flip(0)).numpy(), torch.where(c, x, x.flip(0)).numpy())
        assert np.array_equal(ember.where(ec[::2], ex[::2], ex[1::2]).numpy(),
                              torch.where(c[::2], x[::2], x[1::2]).numpy())


# ---------------------------------------------------------------- float32 kernels touched on the way
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_add_with_alpha_rounds_once_as_torch(dtype):
    """torch's add/sub with alpha is one fused multiply-add: fma(alpha, b, a), on every layout."""
    v, w = values(10_001, seed=40, special=False), values(10_001, seed=41, special=False)
    e = [ember.from_numpy(x.copy()).to(getattr(ember, dtype)) for x in (v, w)]
    t = [torch.from_numpy(x.copy()).to(getattr(torch, dtype)) for x in (v, w)]
    for alpha in (0.1, 3.3, -0.7, 1):
        assert_same(ember.add(e[0], e[1], alpha=alpha), torch.add(t[0], t[1], alpha=alpha))
        assert_same(ember.sub(e[0], e[1], alpha=alpha), torch.sub(t[0], t[1], alpha=alpha))
        assert_same(ember.add(e[0][::3], e[1][1::3], alpha=alpha), torch.add(t[0][::3], t[1][1::3], alpha=alpha))
        assert_same(ember.add(e[0], e[1][7], alpha=alpha), torch.add(t[0], t[1][7], alpha=alpha))
        e2, t2 = e[0].clone(), t[0].clone()
        e2.add_(e[1], alpha=alpha)
        t2.add_(t[1], alpha=alpha)
        assert_same(e2, t2)



def test_float32_where_clamp_sigmoid_match_torch():
    v = values(100_003, seed=30)
    e, t = ember.from_numpy(v.copy()), torch.from_numpy(v.copy())
    assert_same(e.clamp(-1, 1), t.clamp(-1, 1))
    assert_same(e.clamp(min=0), t.clamp(min=0))
    assert_same(e.clamp(max=float("nan")), t.clamp(max=float("nan")))
    assert_same(ember.where(e > 0, e, -e), torch.where(t > 0, t, -t))
    np.testing.assert_allclose(e.sigmoid().numpy(), t.sigmoid().numpy(), rtol=3e-7, atol=1e-30)
    d = e.double()
    np.testing.assert_allclose(d.sigmoid().numpy(), t.double().sigmoid().numpy(), rtol=1e-15, atol=1e-300)


def test_reduced_autograd_and_threads():
    """Gradients in half flow through the widening kernels; the parallel split gives the same bits."""
    v = values(200_000, seed=31)
    for lib in LIBS:
        lib.manual_seed(0)
    xs = {}
    for lib in LIBS:
        x = lib.from_numpy(v.copy()).half().requires_grad_()
        y = (x * 0.5 + x.sigmoid()).sum()
        y.backward()
        xs[lib.__name__] = x.grad
    assert_same(xs["ember"], xs["torch"], 1)
    e, t = pair(v, "bfloat16")
    threads = ember.get_num_threads()
    try:
        ember.set_num_threads(2)
        two = (e * e + 1).exp()
        ember.set_num_threads(1)
        one = (e * e + 1).exp()
    finally:
        ember.set_num_threads(threads)
    assert np.array_equal(bits(two), bits(one))
    assert_same(two, (t * t + 1).exp(), 1)


# ---------------------------------------------------------------- sums widen as they read
@pytest.mark.parametrize("dtype", REDUCED)
def test_sum_and_mean_widen_while_reading(dtype):
    """A half/bfloat16 sum is the float sum of the widened values, bit for bit (the kernel widens as it
    reads instead of copying to float first), on every reduction layout; and torch's within rounding."""
    rng = np.random.default_rng(50)
    cases = [((700_000,), None), ((256, 512), 1), ((256, 512), 0), ((3, 50_000, 7), 1), ((64, 9000), 1),
             ((5, 3), (0, 1)), ((0, 4), 1), ((), None), ((20_000, 3), 0), ((40, 30, 20), (0, 2))]
    threads = ember.get_num_threads()
    try:
        for n_threads in (1, 2):
            ember.set_num_threads(n_threads)
            for shape, dims in cases:
                v = np.asarray(rng.standard_normal(shape) * 3, dtype=np.float32)
                t = torch.from_numpy(v).to(getattr(torch, dtype))
                e = ember.from_numpy(t.float().numpy()).to(getattr(ember, dtype))
                for x, tx in ((e, t), (e.t() if e.dim() == 2 else e, t.t() if t.dim() == 2 else t)):
                    args = () if dims is None else (dims,)
                    assert_same(x.sum(*args), x.float().sum(*args).to(x.dtype))
                    assert_same(x.mean(*args), x.float().mean(*args).to(x.dtype))
                    assert_same(x.sum(*args, dtype=ember.float32), x.float().sum(*args))
                    np.testing.assert_allclose(x.sum(*args).float().numpy(), tx.sum(*args).float().numpy(),
                                               rtol=2e-2, atol=2e-2)
    finally:
        ember.set_num_threads(threads)
    g = ember.ones(7, dtype=getattr(ember, dtype), requires_grad=True)
    (g * 2).sum().backward()
    assert g.grad.dtype == g.dtype and (g.grad.float() == 2).all()


# ---------------------------------------------------------------- composites in float, rounded once
EXACT_ACTIVATIONS = {
    "silu": lambda F, x: F.silu(x), "mish": lambda F, x: F.mish(x), "softplus": lambda F, x: F.softplus(x),
    "softplus beta": lambda F, x: F.softplus(x, beta=2.0, threshold=5.0), "elu": lambda F, x: F.elu(x, 0.7),
    "selu": lambda F, x: F.selu(x), "celu": lambda F, x: F.celu(x, 1.3), "hardswish": lambda F, x: F.hardswish(x),
    "hardsigmoid": lambda F, x: F.hardsigmoid(x), "logsigmoid": lambda F, x: F.logsigmoid(x),
    "leaky_relu": lambda F, x: F.leaky_relu(x, 0.1), "relu6": lambda F, x: F.relu6(x),
}


@pytest.mark.parametrize("dtype", REDUCED)
@pytest.mark.parametrize("name", list(EXACT_ACTIVATIONS) + ["gelu", "gelu tanh"])
def test_activations_and_gradients_compute_in_float(dtype, name):
    """PyTorch computes these half/bfloat16 activations (and their gradients) in float and rounds once;
    Ember's composites do the same instead of rounding every step (gelu was 1000 ulps off below -2)."""
    e, t = pair(values(4096, seed=60, special=False), dtype)
    eg, tg = pair(values(4096, seed=61, special=False), dtype)
    if name.startswith("gelu"):
        f = (lambda F, x: F.gelu(x, approximate="tanh")) if name == "gelu tanh" else (lambda F, x: F.gelu(x))
        # torch's vectorized erf/tanh are polynomials good to ~1e-7: compare within that and a few ulps
        tol = dict(rtol=4 * 2.0 ** (-10 if dtype == "float16" else -7), atol=1e-6)
    else:
        f, tol = EXACT_ACTIVATIONS[name], None
    # the piecewise-linear ones bit for bit; through exp/log an ulp (libm's or SLEEF's float, then rounded)
    ulps = 0 if name in ("hardswish", "hardsigmoid", "leaky_relu", "relu6") else 1
    ex, tx = e.clone().requires_grad_(), t.clone().requires_grad_()
    ey, ty = f(ember.nn.functional, ex), f(torch.nn.functional, tx)
    ey.backward(eg)
    ty.backward(tg)
    for got, want in ((ey.detach(), ty.detach()), (ex.grad, tx.grad)):
        if tol is None:
            assert_same(got, want, ulps)
        else:
            assert got.dtype == e.dtype
            np.testing.assert_allclose(got.float().numpy(), want.float().numpy(), **tol)


@pytest.mark.parametrize("dtype", REDUCED)
def test_addcmul_addcdiv_logaddexp_in_float(dtype):
    a, ta = pair(values(5000, seed=62, special=False), dtype)
    b, tb = pair(values(5000, seed=63, special=False), dtype)
    c, tc = pair(values(5000, seed=64, special=False), dtype)
    for value in (0.3, 1, -2.5):
        # torch: fma(value * b, c, a) in float; within an ulp of that (Ember rounds value * b * c first)
        assert_same(ember.addcmul(a, b, c, value=value), torch.addcmul(ta, tb, tc, value=value), 1)
        assert_same(ember.addcdiv(a, b, c.abs() + 1, value=value), torch.addcdiv(ta, tb, tc.abs() + 1, value=value))
        a2, ta2 = a.clone(), ta.clone()
        a2.addcmul_(b, c, value=value)
        ta2.addcmul_(tb, tc, value=value)
        assert_same(a2, ta2, 1)
    assert_same(ember.logaddexp(a, b), torch.logaddexp(ta, tb), 1)
    assert_same(ember.logaddexp2(a, b), torch.logaddexp2(ta, tb), 1)


# torch's and Ember's baseline (pre-AVX2) kernels split add/sub-with-alpha loops differently; the
# default builds of both libraries run the vector kernels on any machine these tests run on
baseline_build = pytest.mark.skipif(ember.backends.cpu.get_cpu_capability() == "DEFAULT",
                                    reason="the baseline kernels do not follow torch's vector/scalar split")


@baseline_build
@pytest.mark.parametrize("dtype", REDUCED)
def test_short_runs_follow_torchs_scalar_loop(dtype):
    """torch computes the last n % 32 values of a run (and strided runs) in 16-bit steps; lengths whose
    remainders by 16 and 32 differ tell a 16-wide split from a 32-wide one."""
    for n in (1, 5, 16, 20, 24, 31, 32, 33, 48, 63, 70, 95):
        x, tx = pair(np.linspace(-3, 3, n), dtype)
        y, ty = pair(np.linspace(2, -5, n), dtype)
        for alpha in (0.3, -2.5, 0.1):
            assert_same(ember.add(x, y, alpha=alpha), torch.add(tx, ty, alpha=alpha))
            assert_same(ember.sub(x, y, alpha=alpha), torch.sub(tx, ty, alpha=alpha))
    big, tbig = pair([60000.0, -60000.0, 1.0] * 7, dtype)  # alpha * y overflows in 16 bits: inf - inf
    assert_same(ember.add(big, big, alpha=2), torch.add(tbig, tbig, alpha=2))


@pytest.mark.parametrize("dtype", REDUCED)
def test_pow_integer_exponents_as_torch(dtype):
    x, tx = pair(values(9000, seed=70), dtype)
    for e in (2, 3, -1, -2, 4, 2.5, 0.5, -0.5):
        assert_same(x.pow(e), tx.pow(e), 0 if e in (2, 3, -1, -2, 4) else 1)


def test_sum_with_another_16_bit_dtype_casts_first():
    """sum(x, dtype=d) casts x to d first: bfloat16 1e5 overflows float16 (inf - inf = nan), as torch;
    mean(x, dtype=d) averages x's own values and rounds the mean."""
    for src, dst in (("bfloat16", "float16"), ("float32", "float16"), ("float32", "bfloat16"), ("float16", "bfloat16")):
        e, t = pair([1e5, -1e5, 1.0, 3.25, 70000.0, -70000.0], src)  # (exact sums in float: no order effects)
        for args in ((), (0,)):
            assert_same(e.sum(*args, dtype=getattr(ember, dst)), t.sum(*args, dtype=getattr(torch, dst)))
            assert_same(e.mean(*args, dtype=getattr(ember, dst)), t.mean(*args, dtype=getattr(torch, dst)))


def test_nextafter_steps_a_16_bit_ulp():
    for dtype in REDUCED:
        pattern = np.arange(65536, dtype=np.uint32).astype(np.uint16)
        e, t = from_bits(ember, pattern, dtype), from_bits(torch, pattern, dtype)
        for target in (1.0, -1.0, 0.0, float("inf"), float("-inf")):
            assert_same(ember.nextafter(e, ember.full_like(e, target)), torch.nextafter(t, torch.full_like(t, target)))


def test_float_addcmul_functional_and_in_place_agree():
    v = [values(3000, seed=s, special=False) for s in (80, 81, 82)]
    for dtype in ("float32", "float64"):
        a, b, c = (ember.from_numpy(x.copy()).to(getattr(ember, dtype)) for x in v)
        for value in (0.3, 1, -2.5):
            got = a.clone().addcmul_(b, c, value=value)
            assert np.array_equal(got.numpy(), ember.addcmul(a, b, c, value=value).numpy())
