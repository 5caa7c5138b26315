"""ember.binomial, detach_, conj_physical_, slice_inverse and Tensor.apply_/map_/map2_/const_data_ptr,
against torch 2.13."""
import math

import pytest

import ember

torch = pytest.importorskip("torch")


def _raises_like(fn_ember, fn_torch):
    with pytest.raises(Exception) as te:
        fn_torch()
    with pytest.raises(type(te.value)) as ee:
        fn_ember()
    return str(ee.value), str(te.value)


# ---- binomial
def test_binomial_moments_match_the_distribution():
    g = ember.Generator()
    g.manual_seed(0)
    n = 200_000
    for count, p in ((20.0, 0.3), (5.0, 0.9), (1000.0, 0.02), (300.0, 0.5)):
        x = ember.binomial(ember.full((n,), count), ember.full((n,), p), generator=g)
        assert x.dtype == ember.float32 and x.shape == (n,)
        mean, var = count * p, count * p * (1 - p)
        # 6 standard errors of the sample mean / variance
        assert abs(x.mean().item() - mean) < 6 * math.sqrt(var / n)
        assert abs(x.var().item() / var - 1) < 6 * math.sqrt(2 / n) + 0.01
        assert x.min().item() >= 0 and x.max().item() <= count
        assert bool((x == x.floor()).all())


def test_binomial_frequencies_follow_the_pmf():
    g = ember.Generator()
    g.manual_seed(1)
    n, count, p = 100_000, 6, 0.35
    x = ember.binomial(ember.full((n,), float(count), dtype=ember.float64),
                       ember.full((n,), p, dtype=ember.float64), generator=g)
    assert x.dtype == ember.float64
    chi2 = 0.0
    for k in range(count + 1):
        expected = n * math.comb(count, k) * p ** k * (1 - p) ** (count - k)
        chi2 += ((x == k).sum().item() - expected) ** 2 / expected
    assert chi2 < 25  # 6 degrees of freedom: p < 1e-3 of exceeding this by chance


def test_binomial_generator_reproducible_and_independent_of_global_seed():
    c, p = ember.full((1000,), 50.0), ember.full((1000,), 0.4)
    g = ember.Generator()
    g.manual_seed(7)
    a = ember.binomial(c, p, generator=g)
    ember.manual_seed(123)
    g.manual_seed(7)
    b = ember.binomial(c, p, generator=g)
    assert ember.equal(a, b)
    ember.manual_seed(5)
    u = ember.binomial(c, p)
    ember.manual_seed(5)
    assert ember.equal(u, ember.binomial(c, p))


@pytest.mark.filterwarnings("ignore:An output with one or more elements was resized")  # torch's, on broadcasting
def test_binomial_edge_values_match_torch():
    count = [10.5, 10.5, 10.7, 0.5, 100.5, -3.0, 0.0, 5.0, 5.0, 10.0]
    prob = [1.0, 0.999999, 1.0, 1.0, 1.0, 1.0, 0.5, 1.0, 0.0, 1.5]
    e = ember.binomial(ember.tensor(count), ember.tensor(prob))
    t = torch.binomial(torch.tensor(count), torch.tensor(prob))
    assert e.tolist() == t.tolist()
    assert math.isnan(ember.binomial(ember.tensor([10.0]), ember.tensor([float("nan")])).item())
    assert ember.binomial(ember.tensor([10.0]), ember.tensor([-0.5])).tolist() == [0.0]
    # shapes broadcast as torch's
    for cs, ps in (((2,), (2, 1)), ((1, 1), (1,)), ((), ()), ((0,), (0,)), ((1,), (3,))):
        e = ember.binomial(ember.full(cs, 3.0), ember.full(ps, 0.5))
        t = torch.binomial(torch.full(cs, 3.0), torch.full(ps, 0.5))
        assert tuple(e.shape) == tuple(t.shape)
    assert not ember.binomial(ember.tensor([10.0]).requires_grad_(), ember.tensor([0.5])).requires_grad


def test_binomial_errors_match_torch():
    def cases(m):
        return [
            lambda: m.binomial(m.tensor([10]), m.tensor([0.5])),
            lambda: m.binomial(m.tensor([10.0]), m.tensor([0])),
            lambda: m.binomial(m.tensor([10.0]), m.tensor([0.5], dtype=m.float64)),
            lambda: m.binomial(m.tensor([10.0], dtype=m.float16), m.tensor([0.5], dtype=m.float16)),
            lambda: m.binomial(m.tensor([10.0], dtype=m.bfloat16), m.tensor([0.5], dtype=m.bfloat16)),
            lambda: m.binomial(m.tensor([10.0, 2.0, 3.0]), m.tensor([0.5, 0.2])),
            lambda: m.binomial(m.tensor([10.0]), 0.5),
            lambda: m.binomial([10.0], m.tensor([0.5])),
            lambda: m.binomial(m.tensor([10.0]), m.tensor([0.5]), generator=1),
        ]
    for ours, theirs in zip(cases(ember), cases(torch)):
        _raises_like(ours, theirs)


def test_binomial_error_messages():
    e, t = _raises_like(lambda: ember.binomial(ember.tensor([10]), ember.tensor([0.5])),
                        lambda: torch.binomial(torch.tensor([10]), torch.tensor([0.5])))
    assert e == t
    e, t = _raises_like(lambda: ember.binomial(ember.tensor([1.0]), ember.tensor([0.5], dtype=ember.float64)),
                        lambda: torch.binomial(torch.tensor([1.0]), torch.tensor([0.5], dtype=torch.float64)))
    assert e == t


# ---- detach_, conj_physical_
def test_detach_():
    for m in (ember, torch):
        x = m.arange(4.0).requires_grad_()
        y = x * 2
        assert m.detach_(y) is y and not y.requires_grad and y.grad_fn is None and y.is_leaf
    _raises_like(lambda: ember.detach_((ember.arange(4.0).requires_grad_() * 1).view(2, 2)),
                 lambda: torch.detach_((torch.arange(4.0).requires_grad_() * 1).view(2, 2)))
    _raises_like(lambda: ember.detach_([1.0]), lambda: torch.detach_([1.0]))


def test_conj_physical_():
    for m in (ember, torch):
        x = m.tensor([1.0, -2.0])
        assert m.conj_physical_(x) is x and x.tolist() == [1.0, -2.0]
    _raises_like(lambda: ember.conj_physical_(3.0), lambda: torch.conj_physical_(3.0))


# ---- slice_inverse
@pytest.mark.parametrize("case", [
    (lambda b: b[1:3], 0, 1, 3, 1),
    (lambda b: b[:, 1:], 1, 1, None, 1),
    (lambda b: b[1::2], 0, 1, None, 2),
    (lambda b: b[-2:], 0, -2, None, 1),
])
def test_slice_inverse_matches_torch(case):
    sl, dim, start, end, step = case
    results = []
    for m in (ember, torch):
        base = m.arange(30.0)[5:20].view(5, 3)
        r = m.slice_inverse(sl(base), base, dim, start, end, step)
        assert r.data_ptr() == base.data_ptr()
        results.append((tuple(r.shape), tuple(r.stride()), r.storage_offset(), r.tolist()))
        r2 = sl(base).slice_inverse(base, dim, start, end, step)
        assert r2.tolist() == r.tolist()
    assert results[0] == results[1]


def test_slice_inverse_takes_src_layout_and_checks_types():
    for m in (ember, torch):
        base = m.arange(15.0).view(5, 3)
        r = m.slice_inverse(base[1:3], m.zeros(5, 3).t().contiguous().t(), 0, 1, 3)
        assert (tuple(r.stride()), r.storage_offset()) == ((1, 5), 0)
    base_e, base_t = ember.arange(15.0).view(5, 3), torch.arange(15.0).view(5, 3)
    _raises_like(lambda: ember.slice_inverse(base_e, base_e, "a"), lambda: torch.slice_inverse(base_t, base_t, "a"))
    _raises_like(lambda: ember.slice_inverse([1], base_e, 0), lambda: torch.slice_inverse([1], base_t, 0))
    _raises_like(lambda: ember.slice_inverse(base_e, 2, 0), lambda: torch.slice_inverse(base_t, 2, 0))


def test_slice_inverse_gradient():
    # both route the gradient through the as_strided view of the product's storage
    xe = ember.arange(4.0).requires_grad_()
    ember.slice_inverse((xe * 1)[1:3], ember.zeros(4), 0, 1, 3).sum().backward()
    xt = torch.arange(4.0).requires_grad_()
    torch.slice_inverse((xt * 1)[1:3], torch.zeros(4), 0, 1, 3).sum().backward()
    assert xe.grad.tolist() == xt.grad.tolist()


# ---- apply_, map_, map2_, const_data_ptr
def test_apply_map_map2_match_torch():
    results = []
    for m in (ember, torch):
        x = m.arange(6.0).view(2, 3)
        a = x.clone()
        assert a.apply_(lambda v: v * 2 - 1) is a
        b = x.t().clone().t()  # non-contiguous: element order is logical
        b.map_(m.tensor([1.0, 10.0, 100.0]), lambda u, v: u + v)
        c = x.clone().map2_(m.ones(3), m.full((2, 1), 2.0), lambda u, v, w: u * v * w)
        i = m.tensor([1, 2, 3]).apply_(lambda v: v / 2)
        bo = m.tensor([True, False]).apply_(lambda v: 0)
        results.append([a.tolist(), b.tolist(), c.tolist(), i.tolist(), i.dtype is m.int64, bo.tolist()])
    assert results[0] == results[1]
    _raises_like(lambda: ember.arange(3.0).apply_(lambda v: "a"), lambda: torch.arange(3.0).apply_(lambda v: "a"))
    _raises_like(lambda: ember.arange(3.0).apply_(3), lambda: torch.arange(3.0).apply_(3))
    e, t = _raises_like(lambda: ember.arange(3.0).requires_grad_().apply_(lambda v: v),
                        lambda: torch.arange(3.0).requires_grad_().apply_(lambda v: v))
    assert e == t
    _raises_like(lambda: ember.zeros(2, 3).map_(ember.ones(4), lambda u, v: u),
                 lambda: torch.zeros(2, 3).map_(torch.ones(4), lambda u, v: u))


def test_const_data_ptr():
    x = ember.arange(6.0).view(2, 3)
    assert x.const_data_ptr() == x.data_ptr() and x[1].const_data_ptr() == x[1].data_ptr() != x.data_ptr()


def test_deprecated_resize_and_resize_as():
    for m in (ember, torch):
        x = m.arange(6.0)
        with pytest.warns(UserWarning, match="non-inplace resize is deprecated"):
            r = x.resize(2, 3)
        assert tuple(r.shape) == (2, 3) and r.data_ptr() == x.data_ptr() and r.tolist() == [[0, 1, 2], [3, 4, 5]]
        with pytest.warns(UserWarning, match="non-inplace resize_as is deprecated"):
            assert tuple(x.resize_as(m.zeros(3, 2)).shape) == (3, 2)
        y = m.arange(3.0, requires_grad=True)
        with pytest.warns(UserWarning):
            (y * 2).resize(3, 1).sum().backward()
        assert y.grad.tolist() == [2.0, 2.0, 2.0]
        with pytest.warns(UserWarning):
            nc = m.arange(6.0).view(2, 3).t().resize(6)
        assert nc.tolist() == [0.0, 3.0, 1.0, 4.0, 2.0, 5.0]
    with pytest.warns(UserWarning):
        e, t = _raises_like(lambda: ember.arange(6.0).resize(2, 2), lambda: torch.arange(6.0).resize(2, 2))
    assert e == t


def _strided(m, shape, perm, steps, expand_at):
    x = m.zeros(tuple(shape)).permute(*perm)[tuple(slice(None, None, s) for s in steps)]
    if expand_at is not None:
        x = x.unsqueeze(expand_at).expand(*[3 if i == expand_at else -1 for i in range(x.dim() + 1)])
    return x


def test_dim_order_matches_torch_on_random_layouts():
    import random
    rng = random.Random(0)
    for _ in range(400):
        nd = rng.randint(1, 5)
        shape = [rng.choice([1, 1, 2, 3, 4]) for _ in range(nd)]
        perm = rng.sample(range(nd), nd)
        steps = [rng.choice([1, 1, 2]) for _ in range(nd)]
        expand_at = rng.choice([None, None, 0, nd])
        for ours_check, torch_check in ((False, False), (True, True), ([ember.contiguous_format], [torch.contiguous_format])):
            outcomes = []
            for m, check in ((ember, ours_check), (torch, torch_check)):
                try:
                    outcomes.append(_strided(m, shape, perm, steps, expand_at).dim_order(ambiguity_check=check))
                except RuntimeError as e:
                    outcomes.append(str(e))
            assert outcomes[0] == outcomes[1], (shape, perm, steps, expand_at, ours_check)
    assert ember.zeros(()).dim_order() == torch.zeros(()).dim_order() == ()
    # channels-last layout, built by permuting
    assert ember.zeros(2, 4, 5, 3).permute(0, 3, 1, 2).dim_order() == (0, 2, 3, 1)
    _raises_like(lambda: ember.zeros(2).dim_order(ambiguity_check="x"), lambda: torch.zeros(2).dim_order(ambiguity_check="x"))
    _raises_like(lambda: ember.zeros(2).dim_order(ambiguity_check=[1]), lambda: torch.zeros(2).dim_order(ambiguity_check=[1]))


def test_vander_nuclear_norm_to_dense_match_torch():
    torch = pytest.importorskip("torch")
    import numpy as np
    data = [1.5, -2.0, 3.0, 0.5]
    for lib_args in [dict(), dict(N=2), dict(N=5, increasing=True), dict(N=0)]:
        e = ember.vander(ember.tensor(data, dtype=ember.float64), **lib_args)
        t = torch.vander(torch.tensor(data, dtype=torch.float64), **lib_args)
        assert tuple(e.shape) == tuple(t.shape) and np.allclose(e.tolist(), t.tolist())
    assert ember.vander(ember.tensor([1, 2])).dtype == ember.int64
    for bad in (lambda lib: lib.vander(lib.ones(2, 2)), lambda lib: lib.vander(lib.ones(3), N=-1)):
        with pytest.raises(RuntimeError):
            bad(torch)
        with pytest.raises(RuntimeError):
            bad(ember)
    x = np.random.default_rng(0).standard_normal((2, 3, 4))
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for args in [(), ((0, 2),), ((0, 2), True)]:
            e = ember.nuclear_norm(ember.tensor(x), *args)
            t = torch.nuclear_norm(torch.tensor(x), *args)
            assert tuple(e.shape) == tuple(t.shape) and np.allclose(e.tolist(), t.tolist())
    y = ember.ones(3)
    assert y.to_dense() is y and y.name is None and torch.ones(3).name is None
    assert ember.GradScaler is ember.amp.GradScaler


# ---- CrossMapLRN2d, as_subclass, output_nr, module_load, cfloat/cdouble

@pytest.mark.parametrize("channels,size", [(6, 3), (6, 4), (1, 3), (2, 5), (7, 2), (5, 5)])
def test_cross_map_lrn2d_matches_torch_values_and_gradients(channels, size):
    import numpy as np
    x = np.random.default_rng(channels * 10 + size).standard_normal((2, channels, 3, 3))
    w = np.random.default_rng(1).standard_normal(x.shape)
    outs = []
    for m in (ember, torch):
        xi = m.tensor(x, requires_grad=True)
        y = m.nn.CrossMapLRN2d(size, 0.1, 0.75, 1.0)(xi)
        (y * m.tensor(w)).sum().backward()
        outs.append((y.detach().numpy(), xi.grad.numpy()))
    np.testing.assert_allclose(outs[0][0], outs[1][0], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(outs[0][1], outs[1][1], rtol=1e-12, atol=1e-12)  # torch's own backward formula
    assert repr(ember.nn.CrossMapLRN2d(3)) == repr(torch.nn.CrossMapLRN2d(3))
    with pytest.raises(ValueError, match="Expected input to be 4D"):
        ember.nn.CrossMapLRN2d(3)(ember.ones(2, 3, 4))


def test_as_subclass_output_nr_module_load_and_complex_casts():
    class Mine(ember.Tensor):
        pass
    t = ember.randn(3, requires_grad=True)
    u = t.as_subclass(Mine)
    assert type(u) is Mine and u.requires_grad and u.grad_fn is not None and u.data_ptr() == t.data_ptr()
    (u * 2).sum().backward()
    assert t.grad.tolist() == [2.0, 2.0, 2.0]
    with pytest.raises(TypeError):
        t.as_subclass(int)
    y = t * 2
    parts = y.unbind(0)
    assert (t.output_nr, y.output_nr, parts[0].output_nr, parts[2].output_nr) == (0, 0, 0, 2)
    p = ember.zeros(3)
    src = ember.tensor([1.0, 2.0, 3.0])
    r = p.module_load(src)
    assert r.tolist() == [1.0, 2.0, 3.0] and p.tolist() == [1.0, 2.0, 3.0] and not r.requires_grad
    r2 = p.module_load(src * 2, assign=True)
    assert r2.tolist() == [2.0, 4.0, 6.0] and p.tolist() == [1.0, 2.0, 3.0]
    assert ember.ones(2).cfloat().dtype == ember.complex64 and ember.ones(2).cdouble().dtype == ember.complex128


def test_grad_dtype_matches_torch():
    """Tensor.grad_dtype: a leaf's gradient is cast to it (default: the leaf's dtype); None keeps any
    dtype; set/read on non-leaves, a mismatching .grad assignment and a change that contradicts the
    existing gradient raise torch's errors."""
    def run(lib):
        out = []

        class Double(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x.clone()

            @staticmethod
            def backward(ctx, g):
                return g.double()

        a = lib.ones(3, requires_grad=True)
        out.append(str(a.grad_dtype))
        a.grad_dtype = lib.float64
        (a * 2).sum().backward()
        out.append((str(a.grad.dtype), a.grad.tolist()))
        b = lib.ones(3, requires_grad=True)
        b.grad_dtype = None
        Double.apply(b).sum().backward()
        out.append((str(b.grad.dtype), b.grad_dtype))
        c = lib.ones(3, requires_grad=True)
        Double.apply(c).sum().backward()  # default: cast back to the leaf's dtype
        out.append(str(c.grad.dtype))
        nonleaf = lib.ones(3, requires_grad=True) * 2
        for fn in (lambda: setattr(nonleaf, "grad_dtype", lib.float64), lambda: nonleaf.grad_dtype,
                   lambda: setattr(a, "grad", lib.ones(3)), lambda: setattr(c, "grad_dtype", lib.float64)):
            with pytest.raises(RuntimeError) as info:
                fn()
            out.append(str(info.value))
        return [str(x).replace("torch.", "").replace("ember.", "") for x in out]
    assert run(ember) == run(torch)


def test_grad_dtype_none_keeps_a_real_leaf_real():
    def run(lib):
        x = lib.ones(3, requires_grad=True)
        x.grad_dtype = None
        (x * (1 + 2j)).abs().sum().backward()
        return str(x.grad.dtype).split(".")[-1], x.grad.tolist()
    assert run(ember) == run(torch)
