"""The shape, indexing, scan and resampling ops beyond their OpInfos: out=(values, indices) of every
tuple-returning op, the Python-level forms (nonzero(as_tuple), where(cond), meshgrid, split),
distributions of the new random ops, and behaviours found while testing them."""
import math
import os
import warnings

import numpy as np
import pytest
import yaml

import ember
from parity import Sample, T, check, get_torch

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _tuple_out_ops():
    with open(os.path.join(ROOT, "ops.yaml")) as f:
        entries = yaml.safe_load(f)
    return sorted(e["func"].split("(")[0] for e in entries
                  if e.get("out") and e["func"].split("->")[1].strip().startswith("("))


X = T((3, 5), "float32", low=-3, high=3)
XI = T((3, 5), "int64", low=-3, high=3)
XS = T((3, 3), "float32", data=[[4.0, 1.0, -0.5], [0.5, 3.0, 0.2], [-1.0, 0.3, 5.0]])
# op -> (fn(lib, x, out=...), sample)
TUPLE_OUT = {
    "max.dim": (lambda lib, x, **k: lib.max(x, 1, **k), X),
    "min.dim": (lambda lib, x, **k: lib.min(x, 0, True, **k), X),
    "cummax": (lambda lib, x, **k: lib.cummax(x, 1, **k), XI),
    "cummin": (lambda lib, x, **k: lib.cummin(x, 0, **k), X),
    "sort": (lambda lib, x, **k: lib.sort(x, 1, True, **k), X),
    "sort.stable": (lambda lib, x, **k: lib.sort(x, stable=True, dim=0, **k), XI),
    "topk": (lambda lib, x, **k: lib.topk(x, 2, **k), X),
    "kthvalue": (lambda lib, x, **k: lib.kthvalue(x, 2, 1, **k), X),
    "mode": (lambda lib, x, **k: lib.mode(x, 1, **k), XI),
    "median.dim": (lambda lib, x, **k: lib.median(x, 1, True, **k), X),
    "nanmedian.dim": (lambda lib, x, **k: lib.nanmedian(x, 1, **k), X),
    "aminmax": (lambda lib, x, **k: lib.aminmax(x, dim=0, **k), XI),
    "frexp.Tensor": (lambda lib, x, **k: lib.frexp(x, **k), X, "int32"),  # (mantissa, int32 exponent)
    # linear algebra (XS: square, well conditioned)
    "geqrf": (lambda lib, x, **k: lib.geqrf(x, **k), X),
    "qr": (lambda lib, x, **k: lib.qr(x, **k), X),
    "svd": (lambda lib, x, **k: lib.svd(x, **k), XS),
    "slogdet": (lambda lib, x, **k: lib.slogdet(x, **k), XS),
    "lu_unpack": (lambda lib, x, **k: lib.lu_unpack(*lib.linalg.lu_factor(x), **k), XS),
    "triangular_solve": (lambda lib, x, **k: lib.triangular_solve(x, x, **k), XS),
}


def test_every_tuple_out_op_is_tested():
    assert sorted(TUPLE_OUT) == _tuple_out_ops()


def _with_out(fn, out_dtypes=None, bad_len=False, as_list=False):
    def f(lib, x):
        r = fn(lib, x)
        dts = out_dtypes or [t.dtype for t in r]
        outs = [lib.empty(0, dtype=d if not isinstance(d, str) else getattr(lib, d)) for d in dts]
        if bad_len:
            outs = outs[:1]
        ret = fn(lib, x, out=list(outs) if as_list else tuple(outs))
        assert all(a is b for a, b in zip(ret, outs)), "out= must return the out tensors themselves"
        return ret
    return f


@pytest.mark.parametrize("name", sorted(TUPLE_OUT))
def test_tuple_out(name):
    get_torch()
    fn, x, *second = TUPLE_OUT[name]
    idx = second[0] if second else "int64"  # the second output's dtype
    s = Sample(x)
    check(_with_out(fn), s)                                  # values, indices and the named fields
    check(_with_out(fn, as_list=True), s)                    # a list works as well as a tuple
    check(_with_out(fn, bad_len=True), s, expect_error=True)  # TypeError: one tensor for two
    check(_with_out(fn, out_dtypes=["float64", idx]), s, expect_error=x.dtype != "float64")
    check(_with_out(fn, out_dtypes=[x.dtype, "int64" if idx == "int32" else "int32"]), s, expect_error=True)
    check(lambda lib, t: fn(lib, t, out=lib.empty(0)), s, expect_error=True)  # not a tuple


def test_tuple_out_resizes_and_rejects_grad():
    x = ember.tensor([[1.0, 5.0], [3.0, 2.0]])
    v, i = ember.empty(7), ember.empty(1, dtype=ember.int64)
    ember.max(x, 1, out=(v, i))
    assert v.tolist() == [5.0, 3.0] and i.tolist() == [1, 0]
    with pytest.raises(RuntimeError):
        ember.max(x.requires_grad_(), 1, out=(ember.empty(0), ember.empty(0, dtype=ember.int64)))


# ---------------------------------------------------------------- Python-level forms
def test_nonzero_as_tuple_and_where_condition():
    get_torch()
    for x in (T((3, 4), "float32", low=-1, high=1), T((), "float32"), T((0, 2), "int64"), T((5,), "bool")):
        s = Sample(x)
        check(lambda lib, t: lib.nonzero(t, as_tuple=True), s)
        check(lambda lib, t: t.nonzero(as_tuple=True), s)
        check(lambda lib, t: lib.where(t), s)
        check(lambda lib, t: lib.nonzero(t, as_tuple=False), s)
    check(lambda lib, t: lib.nonzero(t, out=lib.empty(0, dtype=lib.int64)), Sample(T((3, 4), "int64", low=-1, high=1)))


def test_meshgrid_forms_and_warning():
    a, b = ember.tensor([1, 2, 3]), ember.tensor([4, 5])
    x, y = ember.meshgrid([a, b], indexing="xy")
    assert tuple(x.shape) == (2, 3) and y[:, 0].tolist() == [4, 5]
    # the grids are expanded views of the inputs
    assert x.stride() == (0, 1)
    import ember._functional as fn
    fn._meshgrid_warned = False
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        ember.meshgrid(a, b)
    assert any("indexing" in str(m.message) for m in w)


def test_split_function_keyword_names():
    get_torch()
    x = T((5, 2), "float32")
    check(lambda lib, t: lib.split(t, split_size_or_sections=[2, 3]), Sample(x))
    check(lambda lib, t: lib.split(tensor=t, split_size_or_sections=2, dim=0), Sample(x))
    check(lambda lib, t: t.split(split_size=2), Sample(x))


def test_interpolate_is_reachable_through_nn_functional_module():
    import ember.nn._functional_shape as m
    assert set(m.__all__) >= {"interpolate", "grid_sample", "affine_grid"}
    x = ember.arange(4.0).reshape(1, 1, 4)
    assert m.interpolate(x, scale_factor=2, mode="nearest").tolist() == [[[0, 0, 1, 1, 2, 2, 3, 3]]]


def test_interpolate_nearest_gradient_is_its_forwards():
    # torch's nearest backward maps output i to i >> 1 when the output is twice the input, while its
    # forward (with a scale factor) uses floor(i / scale); Ember's gradient follows its forward
    import ember.nn._functional_shape as m
    x = ember.arange(3.0, dtype=ember.float64).reshape(1, 1, 3).requires_grad_()
    y = m.interpolate(x, scale_factor=2.3, mode="nearest")
    assert y.detach().flatten().tolist() == [0, 0, 0, 1, 1, 2]
    y.sum().backward()
    assert x.grad.flatten().tolist() == [3.0, 2.0, 1.0]


def test_scatter_reduce_matches_a_reference():
    rng = np.random.default_rng(0)
    for reduce in ("sum", "prod", "mean", "amax", "amin"):
        for include_self in (True, False):
            self_ = rng.uniform(-2, 2, size=(4, 3))
            src = rng.uniform(-2, 2, size=(5, 3))
            idx = rng.integers(0, 4, size=(5, 3))
            ref = self_.copy()
            groups = {}
            for i in range(5):
                for j in range(3):
                    groups.setdefault((idx[i, j], j), []).append(src[i, j])
            for (r, j), vals in groups.items():
                vals = ([self_[r, j]] if include_self else []) + vals
                ref[r, j] = {"sum": np.sum, "prod": np.prod, "mean": np.mean, "amax": np.max, "amin": np.min}[reduce](vals)
            got = ember.from_numpy(self_.copy()).scatter_reduce(0, ember.from_numpy(idx), ember.from_numpy(src), reduce,
                                                                include_self=include_self)
            assert np.allclose(got.numpy(), ref), (reduce, include_self)


def test_logcumsumexp_does_not_overflow():
    x = ember.tensor([1000.0, 1000.0, -1000.0, 1001.0], dtype=ember.float32)
    r = ember.logcumsumexp(x, 0).tolist()
    expect = [1000.0, 1000.0 + math.log(2), 1000.0 + math.log(2), 1001.0 + math.log1p(2 * math.exp(-1))]
    assert np.allclose(r, expect, rtol=1e-6)


def test_searchsorted_large_and_histc_edges():
    seq = ember.arange(0.0, 100_000.0)
    v = ember.tensor([-1.0, 0.0, 0.5, 99_999.0, 1e9])
    assert ember.searchsorted(seq, v).tolist() == [0, 0, 1, 99_999, 100_000]
    assert ember.searchsorted(seq, v, right=True).tolist() == [0, 1, 1, 100_000, 100_000]
    h = ember.histc(ember.tensor([0.0, 1.0, 2.0, 3.0]), bins=3, min=0, max=3)
    assert h.tolist() == [1.0, 1.0, 2.0]  # the top edge belongs to the last bin


# ---------------------------------------------------------------- random distributions
def _mean_std(t):
    x = t.double()
    return x.mean().item(), x.std().item()


def test_normal_with_tensor_mean_and_std():
    ember.manual_seed(3)
    mean = ember.tensor([0.0, 10.0]).repeat(50_000).reshape(50_000, 2)
    std = ember.tensor([1.0, 0.5])
    r = ember.normal(mean, std)
    assert tuple(r.shape) == (50_000, 2)
    for j, (m, s) in enumerate([(0.0, 1.0), (10.0, 0.5)]):
        mm, ss = _mean_std(r[:, j])
        assert abs(mm - m) < 0.02 and abs(ss - s) < 0.02
    mm, ss = _mean_std(ember.normal(2.0, ember.full((100_000,), 3.0)))
    assert abs(mm - 2.0) < 0.05 and abs(ss - 3.0) < 0.05
    mm, ss = _mean_std(ember.normal(ember.full((100_000,), -1.0), 0.25))
    assert abs(mm + 1.0) < 0.01 and abs(ss - 0.25) < 0.01
    r = ember.normal(1.0, 2.0, (3, 4), dtype=ember.float64)
    assert r.dtype is ember.float64 and tuple(r.shape) == (3, 4)


@pytest.mark.parametrize("lam", [0.3, 4.0, 25.0, 700.0])
def test_poisson_mean_and_variance(lam):
    ember.manual_seed(5)
    r = ember.poisson(ember.full((100_000,), lam))
    assert ember.equal(r, r.round()) if hasattr(ember, "equal") else bool((r == r.round()).all().item())
    assert r.min().item() >= 0
    m, s = _mean_std(r)
    assert abs(m - lam) < 5 * math.sqrt(lam / 100_000) + 1e-3
    assert abs(s * s - lam) / lam < 0.05


def test_bernoulli_float_p_and_random_to():
    ember.manual_seed(7)
    r = ember.bernoulli(ember.empty(100_000), 0.25)
    assert set(r.unique().tolist()) == {0.0, 1.0} and abs(r.mean().item() - 0.25) < 0.01
    x = ember.empty(100_000).bernoulli_()
    assert abs(x.mean().item() - 0.5) < 0.01
    x = ember.empty(100_000, dtype=ember.int64).random_(10)
    assert x.min().item() == 0 and x.max().item() == 9
    assert ember.empty(10).random_(to=3).max().item() < 3


def test_new_random_ops_follow_the_seed():
    for f in (lambda: ember.normal(ember.zeros(5), ember.ones(5)), lambda: ember.poisson(ember.full((5,), 30.0)),
              lambda: ember.bernoulli(ember.empty(8), 0.5), lambda: ember.empty(6).random_(100)):
        ember.manual_seed(11)
        a = f()
        ember.manual_seed(11)
        assert f().tolist() == a.tolist()


# ---------------------------------------------------------------- schema fixes (test_schema_gaps.FIXED)
def test_memory_format_arguments():
    get_torch()
    xt = T((3, 4), "float32", layout="T")
    for fn in (lambda lib, x: x.clone(memory_format=lib.contiguous_format).stride(),
               lambda lib, x: x.clone(memory_format=lib.preserve_format).stride(),
               lambda lib, x: x.clone().stride(),
               lambda lib, x: lib.clone(x, memory_format=lib.contiguous_format).stride(),
               lambda lib, x: lib.empty_like(x, memory_format=lib.contiguous_format).stride(),
               lambda lib, x: lib.zeros_like(x, memory_format=lib.preserve_format).stride(),
               lambda lib, x: lib.ones_like(x, dtype=lib.float64, memory_format=lib.contiguous_format).stride(),
               lambda lib, x: lib.full_like(x, 2.0, memory_format=lib.contiguous_format).stride(),
               lambda lib, x: lib.rand_like(x, memory_format=lib.contiguous_format).shape,
               lambda lib, x: lib.empty(2, 3, memory_format=lib.contiguous_format).stride(),
               lambda lib, x: lib.empty((2, 3), dtype=lib.float64, memory_format=lib.contiguous_format).dtype):
        check(fn, Sample(xt))
    check(lambda lib, x: lib.empty(2, 3, memory_format=lib.preserve_format), Sample(xt), expect_error=True)
    check(lambda lib, x: x.clone(memory_format=1), Sample(xt), expect_error=True)
    check(lambda lib, x: lib.zeros(2, memory_format=lib.contiguous_format), Sample(xt), expect_error=True)


def test_copy_keyword_and_non_blocking():
    get_torch()
    s = Sample(T((2, 3), "float32"), T((3,), "float64"))
    check(lambda lib, x, y: x.copy_(other=y, non_blocking=True), s, same_object=0)
    check(lambda lib, x, y: x.copy_(y, True), s, same_object=0)
    check(lambda lib, x, y: x.copy_(src=y), s, expect_error=True)


def test_float_power_inplace():
    get_torch()
    check(lambda lib, x, y: x.float_power_(y), Sample(T((2, 3), "float64", low=0.5, high=2), T((3,), "float32")),
          same_object=0)
    check(lambda lib, x: x.float_power_(2), Sample(T((2, 3), "float64")), same_object=0)
    check(lambda lib, x: x.float_power_(2), Sample(T((2, 3), "float32")), expect_error=True)
    check(lambda lib, x, y: x.float_power_(y), Sample(T((3,), "float64"), T((2, 3), "float64")), expect_error=True)


def test_function_forms_of_inplace_ops_return_their_input():
    get_torch()
    s = Sample(T((2, 3), "float32"))
    check(lambda lib, x: lib.fill_(x, 1.5), s, same_object=0)
    check(lambda lib, x: lib.zero_(x), s, same_object=0)
    check(lambda lib, x: lib.index_put_(x, (lib.tensor([1, 0]),), lib.tensor(2.0)), s, same_object=0)
    check(lambda lib, x: lib.fill_(input=x, value=3), s, same_object=0)


def test_inplace_view_ops_change_geometry_and_version():
    x = ember.zeros(2, 3)
    v = x._version
    assert x.t_() is x and tuple(x.shape) == (3, 2) and x.stride() == (1, 3) and x._version == v + 1
    assert tuple(x.unsqueeze_(0).shape) == (1, 3, 2) and tuple(x.squeeze_().shape) == (3, 2)
    assert tuple(x.swapdims_(0, 1).shape) == (2, 3) and x.is_contiguous()
    leaf = ember.zeros(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf"):
        leaf.unsqueeze_(0)


def test_sum_prod_dim_is_required_by_the_dim_overloads():
    get_torch()
    s = Sample(T((2, 3), "float32"))
    for fn in (lambda lib, x: lib.sum(x, None), lambda lib, x: lib.sum(x, None, True), lambda lib, x: lib.sum(x, dim=None),
               lambda lib, x: x.sum(dtype=lib.float64), lambda lib, x: lib.sum(x, 1, out=lib.empty(0)),
               lambda lib, x: lib.prod(x, 1, True), lambda lib, x: x.prod(dtype=lib.float64)):
        check(fn, s)
    for fn in (lambda lib, x: lib.sum(x, keepdim=True), lambda lib, x: lib.prod(x, keepdim=True),
               lambda lib, x: lib.sum(x, out=lib.empty(0)), lambda lib, x: lib.prod(x, out=lib.empty(0)),
               lambda lib, x: lib.prod(x, None)):
        check(fn, s, expect_error=True)


def test_scatter_reduce_prod_double_backward_with_two_zeros_is_refused():
    a = ember.tensor([0.0, 1.5], dtype=ember.float64, requires_grad=True)
    s = ember.tensor([0.0, 2.0, 3.0], dtype=ember.float64, requires_grad=True)
    y = a.scatter_reduce(0, ember.tensor([0, 0, 1]), s, "prod")
    g = ember.autograd.grad(y.sum(), [a, s])  # first order is fine: zero for both zeros of group 0
    assert g[0].tolist() == [0.0, 3.0] and g[1].tolist() == [0.0, 0.0, 1.5]
    with pytest.raises(RuntimeError, match="Double backward"):
        ember.autograd.grad(a.scatter_reduce(0, ember.tensor([0, 0, 1]), s, "prod").sum(), [a, s], create_graph=True)


def _aa_matrix(n_in, n_out, cubic):
    """PIL's antialiasing resampling matrix (a triangle or a = -0.5 cubic filter, stretched when downsampling)."""
    scale = n_in / n_out
    support = (2.0 if cubic else 1.0) * max(scale, 1.0)
    inv = 1.0 / scale if scale >= 1 else 1.0

    def filt(x):
        x = abs(x)
        if not cubic:
            return max(0.0, 1.0 - x)
        a = -0.5
        if x < 1:
            return ((a + 2) * x - (a + 3)) * x * x + 1
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a if x < 2 else 0.0
    m = np.zeros((n_out, n_in))
    for j in range(n_out):
        c = scale * (j + 0.5)
        lo, hi = max(int(c - support + 0.5), 0), min(int(c + support + 0.5), n_in)
        w = np.array([filt((t - c + 0.5) * inv) for t in range(lo, hi)])
        m[j, lo:hi] = w / w.sum()
    return m


@pytest.mark.parametrize("cubic", [False, True])
def test_interpolate_antialias_matches_pil_filters(cubic):
    # includes an output width of 1, where torch's CPU kernel repeats its first row (its bug): the
    # reference here is the separable PIL filter itself
    import ember.nn._functional_shape as m
    rng = np.random.default_rng(1)
    for (h, w), (oh, ow) in [((8, 5), (2, 1)), ((9, 11), (4, 5)), ((3, 4), (7, 2))]:
        x = rng.standard_normal((1, 2, h, w))
        ref = np.einsum("ih,nchw,jw->ncij", _aa_matrix(h, oh, cubic), x, _aa_matrix(w, ow, cubic))
        got = m.interpolate(ember.from_numpy(x.copy()), size=(oh, ow), mode="bicubic" if cubic else "bilinear",
                            antialias=True)
        assert np.allclose(got.numpy(), ref, rtol=1e-12, atol=1e-12)
