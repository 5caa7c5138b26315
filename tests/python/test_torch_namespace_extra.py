"""Python-level torch.* names against torch 2.13 on the same inputs: constants and runtime switches,
the *_copy family and split variants, atleast_*/broadcast_tensors/block_diag/unravel_index,
histogram(dd), asarray and the other constructors, the windows, range/from_file/gradient and the small
functions (values, dtypes, shapes, error types, gradients). The NN functions: test_torch_namespace_nn.py."""
import warnings

import numpy as np
import pytest

import ember
from cuda_absent import needs_no_gpu, raises_no_gpu

torch = pytest.importorskip("torch")

from namespace_parity import LIBS, arr, same, same_grads  # noqa: E402  (after the torch skip)


# ---------------------------------------------------------------- constants and runtime switches

def test_constants_equal_torchs():
    for name in ("e", "pi", "inf", "nan", "newaxis"):
        a, b = getattr(ember, name), getattr(torch, name)
        assert type(a) is type(b) and (a == b or (a != a and b != b)), name
    assert ember.ones(2)[ember.newaxis].shape == (1, 2)


def test_build_facts_are_truthful():
    assert ember.has_lapack is True and ember.has_openmp is True
    assert ember.has_mkl is ember.backends.mkl.is_available()
    assert ember.has_spectral is hasattr(ember, "fft")
    assert ember.is_vulkan_available() is False


@needs_no_gpu
def test_default_device():
    assert ember.get_default_device() == ember.device("cpu")
    ember.set_default_device("cpu")
    assert ember.get_default_device() == ember.device("cpu")
    ember.set_default_device(None)
    try:  # as PyTorch: setting an unusable device is accepted; the factory calls raise
        ember.set_default_device("cuda")
        assert ember.get_default_device().type == "cuda"
        with raises_no_gpu():
            ember.zeros(1)
    finally:
        ember.set_default_device(None)
    assert ember.get_default_device().type == "cpu"
    with ember.device("cpu") as d:
        assert d == ember.device("cpu") and ember.get_default_device() == d
    with raises_no_gpu():
        with ember.device("cuda"):
            ember.ones(1)
    assert ember.get_default_device().type == "cpu"


def test_set_default_tensor_type_matches_torch():
    before = ember.get_default_dtype()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for t in ("DoubleTensor", "FloatTensor"):
                same(lambda lib: (lib.set_default_tensor_type(getattr(lib, t)), lib.get_default_dtype())[1])
                same(lambda lib: (lib.set_default_tensor_type(f"torch.{t}"), lib.get_default_dtype())[1])
            for bad in ("torch.LongTensor", "torch.cuda.FloatTensor", "no_such_module.FloatTensor"):
                same(lambda lib: lib.set_default_tensor_type(bad))
            same(lambda lib: lib.set_default_tensor_type(lib.float64))
    finally:
        ember.set_default_dtype(before)
        torch.set_default_dtype(torch.float32)


def test_interop_threads_and_init():
    n = ember.get_num_interop_threads()
    assert isinstance(n, int) and n >= 1
    with pytest.raises(RuntimeError, match="positive integer"):
        ember.set_num_interop_threads(0)
    ember.init_num_threads()
    assert ember.get_num_threads() >= 1


def test_flush_denormal():
    with pytest.raises(RuntimeError):
        ember.set_flush_denormal(1)
    supported = ember.set_flush_denormal(True)
    try:
        tiny = ember.tensor([1e-320], dtype=ember.float64)
        if supported:  # denormals read and written as zero in this thread
            assert (tiny * 1.0).item() == 0.0
    finally:
        assert ember.set_flush_denormal(False) == supported
    assert (ember.tensor([1e-320], dtype=ember.float64) * 1.0).item() != 0.0


def test_warn_always_flag():
    assert ember.is_warn_always_enabled() is False
    with pytest.raises(RuntimeError):
        ember.set_warn_always(1)
    ember.set_warn_always(True)
    try:
        assert ember.is_warn_always_enabled() is True
        for _ in range(2):  # warned every time while the flag is on
            with pytest.warns(UserWarning, match="indexing"):
                ember.meshgrid(ember.ones(2), ember.ones(2))
    finally:
        ember.set_warn_always(False)


def test_set_anomaly_enabled():
    ember.set_anomaly_enabled(True, check_nan=False)
    try:
        assert ember.is_anomaly_enabled() and not ember.is_anomaly_check_nan_enabled()
    finally:
        ember.set_anomaly_enabled(False)
    assert not ember.is_anomaly_enabled()


def test_typename_and_predicates_match_torch():
    for obj in (1, None, "s", 2.5):
        assert ember.typename(obj) == torch.typename(obj)
    same(lambda lib: lib.typename(lib.ones(2, dtype=lib.int64)).replace("ember", "torch"))
    same(lambda lib: lib.typename(lib.ones(2)).replace("ember", "torch"))
    assert ember.typename(ember.nn.Linear) == "ember.nn.modules.linear.Linear"
    assert ember.typename(ember.nn.Linear(1, 1)) == "ember.nn.modules.linear.Linear"
    same(lambda lib: lib.is_storage(lib.ones(1)))
    same(lambda lib: lib.get_device(lib.ones(1)))
    same(lambda lib: lib.get_device(1))
    same(lambda lib: lib.is_inference(lib.ones(1)))
    same(lambda lib: lib.is_distributed(lib.ones(1)))


def test_get_device_module():
    assert ember.get_device_module() is ember.cpu
    assert ember.get_device_module("cpu") is ember.cpu
    assert ember.get_device_module(ember.device("cuda:0")) is ember.cuda
    for bad in ("xla", 3, "foo"):
        same(lambda lib: lib.get_device_module(bad))


@pytest.mark.parametrize("call", [
    lambda lib: lib.sym_int(3.7), lambda lib: lib.sym_int(-3.7), lambda lib: lib.sym_int(True),
    lambda lib: lib.sym_float(2), lambda lib: lib.sym_max(1, 2.0), lambda lib: lib.sym_max(3, 2.0),
    lambda lib: lib.sym_max(2, 3), lambda lib: lib.sym_min(1, 2.5), lambda lib: lib.sym_min(4, 2),
    lambda lib: lib.sym_not(0), lambda lib: lib.sym_not(True), lambda lib: lib.sym_ite(True, 1, 2),
    lambda lib: lib.sym_ite(False, 1.0, 2.0), lambda lib: lib.sym_ite(1, 1, 2), lambda lib: lib.sym_ite(True, 1, 2.0),
    lambda lib: lib.sym_sqrt(4), lambda lib: lib.sym_sqrt(-1), lambda lib: lib.sym_sum([1, 2, 3]),
    lambda lib: lib.sym_sum(1, 2), lambda lib: lib.sym_sum([1.5, 2]), lambda lib: lib.sym_sum([]),
    lambda lib: lib.sym_max("a", 1), lambda lib: lib.sym_float(lib.tensor(2)), lambda lib: lib.sym_int(lib.tensor(1.5)),
])
def test_sym_helpers_match_torch(call):
    same(call)


# ---------------------------------------------------------------- *_copy family and splits

X = arr(3, 4, 5)

COPY_CALLS = {
    "alias_copy": lambda lib, x: lib.alias_copy(x),
    "detach_copy": lambda lib, x: lib.detach_copy(x),
    "as_strided_copy": lambda lib, x: lib.as_strided_copy(x, (2, 3), (4, 1), 2),
    "diagonal_copy": lambda lib, x: lib.diagonal_copy(x, 1, 2, 0),
    "expand_copy": lambda lib, x: lib.expand_copy(x[:, :1], (2, 3, 4, 5)),
    "narrow_copy": lambda lib, x: lib.narrow_copy(x, 1, 1, 2),
    "narrow_copy_tensor_start": lambda lib, x: lib.narrow_copy(x, 2, lib.tensor(1), 3),
    "narrow_copy_method": lambda lib, x: x.narrow_copy(-1, 0, 2),
    "permute_copy": lambda lib, x: lib.permute_copy(x, (2, 0, 1)),
    "select_copy": lambda lib, x: lib.select_copy(x, 1, -1),
    "slice_copy": lambda lib, x: lib.slice_copy(x, 2, 1, None, 2),
    "slice_copy_clamped": lambda lib, x: lib.slice_copy(x, 1, -10, 100),
    "squeeze_copy": lambda lib, x: lib.squeeze_copy(x[:1, :, :1]),
    "squeeze_copy_dim": lambda lib, x: lib.squeeze_copy(x[:1, :, :1], 2),
    "squeeze_copy_dims": lambda lib, x: lib.squeeze_copy(x[:1, :, :1], (0, 2)),
    "t_copy": lambda lib, x: lib.t_copy(x[0]),
    "transpose_copy": lambda lib, x: lib.transpose_copy(x, 0, 2),
    "unfold_copy": lambda lib, x: lib.unfold_copy(x, 2, 2, 1),
    "unsqueeze_copy": lambda lib, x: lib.unsqueeze_copy(x, -1),
    "view_copy": lambda lib, x: lib.view_copy(x, (4, -1)),
    "split_copy": lambda lib, x: lib.split_copy(x, 2, 2),
    "split_with_sizes_copy": lambda lib, x: lib.split_with_sizes_copy(x, [1, 3], 1),
    "unbind_copy": lambda lib, x: lib.unbind_copy(x, 1),
    "split_with_sizes": lambda lib, x: lib.split_with_sizes(x, [2, 3], -1),
    "split_with_sizes_method": lambda lib, x: x.split_with_sizes([1, 2], 0),
    "unsafe_split": lambda lib, x: lib.unsafe_split(x, 2, 1),
    "unsafe_split_method": lambda lib, x: x.unsafe_split(3, 2),
    "unsafe_split_with_sizes": lambda lib, x: lib.unsafe_split_with_sizes(x, [3, 1], 1),
    "unsafe_split_with_sizes_method": lambda lib, x: x.unsafe_split_with_sizes([1, 4], 2),
    "unsafe_chunk": lambda lib, x: lib.unsafe_chunk(x, 2, 1),
    "unsafe_chunk_method": lambda lib, x: x.unsafe_chunk(3, -1),
}


@pytest.mark.parametrize("name", sorted(COPY_CALLS))
def test_copy_family_values_and_gradients_match_torch(name):
    call = COPY_CALLS[name]
    if name == "detach_copy":  # no gradient through a detach
        same(lambda lib: call(lib, lib.tensor(X)))
        return
    same_grads(call, X)


@pytest.mark.parametrize("name", [n for n in COPY_CALLS if n.endswith("_copy") or "_copy_" in n])
def test_copy_results_are_contiguous_and_fresh(name):
    x = ember.tensor(X)
    out = COPY_CALLS[name](ember, x)
    for o in (out if isinstance(out, tuple) else (out,)):
        assert o.is_contiguous()
        assert o._storage_ptr() != x._storage_ptr()
    before = X.copy()
    for o in (out if isinstance(out, tuple) else (out,)):
        o.fill_(7.0)
    assert np.array_equal(x.numpy(), before)


def _scatter_by_copy(lib, x, s, *geometry):
    out = x.clone()
    out.as_strided(*geometry).copy_(s)
    return out


def test_as_strided_scatter_matches_torch():
    x, s = arr(3, 4), arr(2, 3)
    same(lambda lib: lib.as_strided_scatter(lib.tensor(x), lib.tensor(s), (2, 3), (4, 1), 2))
    same(lambda lib: lib.tensor(x).as_strided_scatter(lib.tensor(s[0, :2]), (2,), (5,)))
    same(lambda lib: lib.as_strided_scatter(lib.zeros(3, 4), lib.ones(3), (2,), (5,)))
    # torch 2.13's AsStridedScatterBackward gives input the gradient inside the scattered region and
    # zero outside (the reverse of the math); compare with its clone + copy_ composition instead
    same_grads(lambda lib, x, s: lib.as_strided_scatter(x, s, (2, 3), (4, 1), 2) if lib is ember
               else _scatter_by_copy(lib, x, s, (2, 3), (4, 1), 2), x, s)


def test_view_copy_dtype_and_out():
    same(lambda lib: lib.view_copy(lib.tensor(X, dtype=lib.float32), lib.int32))
    same(lambda lib: lib.t_copy(lib.tensor(X[0]), out=lib.empty(0, dtype=lib.float64)))
    same(lambda lib: lib.t_copy(lib.tensor(X[0]), out=lib.empty(0, dtype=lib.int64)))
    def split_into(lib, shapes, dtype="float64"):
        out = [lib.empty(s, dtype=getattr(lib, dtype)) for s in shapes]
        return lib.split_copy(lib.tensor(X), 2, 0, out=out), out
    same(lambda lib: split_into(lib, [(2, 4, 5), (1, 4, 5)]))
    same(lambda lib: split_into(lib, [(2, 4, 5), (1, 4, 5)], "float32"))
    same(lambda lib: split_into(lib, [(0,), (0,)]))
    same(lambda lib: lib.unbind_copy(lib.tensor(X), 0, out=[lib.empty(4, 5, dtype=lib.float64) for _ in range(3)]))
    same(lambda lib: lib.split_copy(lib.tensor(X), 2, 0, out=[lib.empty(0)]))


@pytest.mark.parametrize("call", [
    lambda lib, x: lib.split_with_sizes(x, [1, 1]),
    lambda lib, x: lib.split_copy(x, [1, 2]),
    lambda lib, x: lib.unsafe_split(x, [1, 2], 1),
    lambda lib, x: lib.narrow_copy(x, 1, 1, 10),
    lambda lib, x: lib.slice_copy(x, 1, 0, 3, 0),
    lambda lib, x: lib.select_copy(x, 0, 5),
    lambda lib, x: lib.view_copy(x, (7, -1)),
    lambda lib, x: lib.permute_copy(x, (0, 0, 1)),
    lambda lib, x: lib.as_strided_copy(x, (100, 100), (1, 1)),
])
def test_copy_family_errors_match_torch(call):
    same(lambda lib: call(lib, lib.tensor(X)))


# ---------------------------------------------------------------- atleast, broadcast, block_diag, unravel

@pytest.mark.parametrize("fn", ["atleast_1d", "atleast_2d", "atleast_3d"])
@pytest.mark.parametrize("shape", [(), (3,), (2, 3), (2, 3, 4), (1, 2, 3, 4)])
def test_atleast_matches_torch(fn, shape):
    a = arr(*shape)
    same_grads(lambda lib, x: getattr(lib, fn)(x), a)
    b = arr(2)
    same(lambda lib: getattr(lib, fn)(lib.tensor(a), lib.tensor(b)))
    same(lambda lib: getattr(lib, fn)([lib.tensor(a)]))
    same(lambda lib: getattr(lib, fn)((lib.tensor(a), lib.tensor(1))))


def test_atleast_edge_cases_match_torch():
    same(lambda lib: lib.atleast_1d())
    same(lambda lib: lib.atleast_2d(1.0))


def test_broadcast_tensors_matches_torch():
    same_grads(lambda lib, a, b, c: lib.broadcast_tensors(a, b, c), arr(3, 1), arr(4), arr(2, 1, 1))
    same(lambda lib: lib.broadcast_tensors())
    same(lambda lib: lib.broadcast_tensors(lib.ones(2), lib.ones(3)))
    same(lambda lib: lib.broadcast_tensors([lib.ones(2), lib.ones(3, 1)]))
    same(lambda lib: lib.broadcast_tensors(lib.ones(2, dtype=lib.int32), lib.ones(3, 1, dtype=lib.bool)))


def test_block_diag_matches_torch():
    same_grads(lambda lib, a, b, c: lib.block_diag(a, b, c), arr(2, 3), arr(4), np.array(1.5))
    same(lambda lib: lib.block_diag())
    same(lambda lib: lib.block_diag(lib.ones(2, 2, 2)))
    same(lambda lib: lib.block_diag(lib.tensor(2), lib.ones(2, dtype=lib.int32), lib.ones(2, 2, dtype=lib.float64)))
    same(lambda lib: lib.block_diag(lib.tensor(2), lib.ones(2, dtype=lib.int32)))
    same(lambda lib: lib.block_diag(lib.tensor(True), lib.ones(2, dtype=lib.uint8), lib.ones(1, dtype=lib.int8)))
    same(lambda lib: lib.block_diag(lib.ones(0, 2), lib.ones(2, 0)))
    same(lambda lib: lib.block_diag([lib.ones(2)]))


@pytest.mark.parametrize("indices, shape", [
    ([4, 5], (2, 3)), (4, [2, 3]), (4, 5), (-1, (2, 3)), (6, (2, 3)), ([[0, 7], [23, 11]], (2, 3, 4)), (1, ()),
    ([1, 2], (2, -3)), (1, (2.0, 3)), (1, (2, 0)),
])
def test_unravel_index_matches_torch(indices, shape):
    same(lambda lib: lib.unravel_index(lib.tensor(indices), lib.Size(shape) if isinstance(shape, list) else shape))


def test_unravel_index_dtypes_match_torch():
    for dtype in ("int32", "uint8", "int16", "float32", "bool"):
        same(lambda lib: lib.unravel_index(lib.tensor([1, 0], dtype=getattr(lib, dtype)), (2, 3)))


# ---------------------------------------------------------------- histogram, histogramdd

DATA = np.array([1.0, 2, 1, 4, 2.5, -3, 0.25, 4, 3.75, 1.5])


@pytest.mark.parametrize("kw", [
    dict(bins=3), dict(bins=7, range=(0.0, 2.0)), dict(bins=4, density=True),
    dict(bins=4, range=(0.0, 2.0), weight=True, density=True), dict(bins=5, weight=True),
    dict(bins="tensor"), dict(bins="tensor", weight=True, density=True),
])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_histogram_matches_torch(kw, dtype):
    def call(lib):
        d = getattr(lib, dtype)
        args = dict(kw)
        if args.get("bins") == "tensor":
            args["bins"] = lib.tensor([-1.0, 0.5, 1.5, 2.5, 10], dtype=d)
        if args.pop("weight", False):
            args["weight"] = lib.tensor(np.linspace(0.1, 2, DATA.size), dtype=d)
        return lib.histogram(lib.tensor(DATA, dtype=d), **args)
    same(call)
    same(lambda lib: lib.tensor(DATA).reshape(2, 5).histogram(4))


@pytest.mark.parametrize("call", [
    lambda lib: lib.histogram(lib.tensor([3.0, 3.0]), 4),
    lambda lib: lib.histogram(lib.tensor([]), 4),
    lambda lib: lib.histogram(lib.tensor([1, 2]), 4),
    lambda lib: lib.histogram(lib.tensor([1.0, 2.0], dtype=lib.float16), 4),
    lambda lib: lib.histogram(lib.tensor([1.0, 2.0]), 0),
    lambda lib: lib.histogram(lib.tensor([1.0, 2.0]), 3, range=(2.0, 1.0)),
    lambda lib: lib.histogram(lib.tensor([1.0, float("nan")]), 3),
    lambda lib: lib.histogram(lib.tensor([1.0, float("inf")]), 3),
    lambda lib: lib.histogram(lib.tensor([1.0, 2.0]), lib.tensor([[0.0, 1.5]])),
    lambda lib: lib.histogram(lib.tensor([1.0, 2.0]), 3, weight=lib.ones(3)),
    lambda lib: lib.histogram(lib.tensor([1.0, 2.0]), 3, weight=lib.ones(2, dtype=lib.float64)),
])
def test_histogram_edge_cases_and_errors_match_torch(call):
    same(call)


def test_histogram_out_matches_torch():
    def call(lib):
        out = (lib.empty(0), lib.empty(0))
        r = lib.histogram(lib.tensor(DATA, dtype=lib.float32), 3, out=out)
        return r.hist is out[0], r.bin_edges is out[1], out
    same(call)


@pytest.mark.parametrize("kw", [
    dict(bins=[3, 3]), dict(bins=2, range=[0.0, 1.0, 0.0, 1.0], density=True), dict(bins=[2, 4], weight=True),
    dict(bins="tensors"), dict(bins=[3, 2], weight=True, density=True),
])
def test_histogramdd_matches_torch(kw):
    pts = np.array([[0.0, 1.0], [1.0, 0.0], [2.0, 0.0], [2.0, 2.0], [0.5, 0.5], [1.5, 1.9]])

    def call(lib):
        args = dict(kw)
        if args.get("bins") == "tensors":
            args["bins"] = [lib.tensor([0.0, 1, 2]), lib.tensor([0.0, 3])]
        if args.pop("weight", False):
            args["weight"] = lib.tensor([1.0, 2, 4, 8, 0.5, 3])
        return lib.histogramdd(lib.tensor(pts, dtype=lib.float32), **args)
    same(call)
    pts3 = arr(2, 3, 3)
    same(lambda lib: lib.histogramdd(lib.tensor(pts3), bins=[2, 3, 4]))


@pytest.mark.parametrize("call", [
    lambda lib: lib.histogramdd(lib.tensor([0.0, 0.0, 1.0]), bins=2),
    lambda lib: lib.histogramdd(lib.tensor([[0.0, 0.0, 1.0]]), bins=[2, 3]),
    lambda lib: lib.histogramdd(lib.tensor([[0.0, 0.0, 1.0]]), bins=2, range=[0.0, 1.0]),
])
def test_histogramdd_errors_match_torch(call):
    same(call)


# ---------------------------------------------------------------- constructors

def test_scalar_tensor_matches_torch():
    for s, kw in ((1, {}), (True, {}), (2, {"dtype": "int32"}), (1.5, {"dtype": "float64"}), (2.5, {"dtype": "int64"})):
        same(lambda lib: lib.scalar_tensor(s, **{k: getattr(lib, v) for k, v in kw.items()}))
    same(lambda lib: lib.scalar_tensor(1.5, requires_grad=True).requires_grad)
    same(lambda lib: lib.scalar_tensor(lib.tensor(2)))
    same(lambda lib: lib.scalar_tensor(lib.tensor([2, 3])))
    same(lambda lib: lib.scalar_tensor("a"))
    same(lambda lib: lib.scalar_tensor(1, device="cuda"))


def test_empty_strided_and_permuted_match_torch():
    for size, stride in (((2, 3), (1, 2)), ((2, 3, 4), (12, 1, 3)), ((0, 3), (3, 1)), ((), ())):
        same(lambda lib: (lib.empty_strided(size, stride).stride(), lib.empty_strided(size, stride).shape))
    same(lambda lib: lib.empty_strided((2, 3), (1, 2), dtype=lib.float64, requires_grad=True).requires_grad)
    for size, stride in (((2, 3), (1,)), ((2, -3), (1, 2)), ((2, 3), (1, -2))):
        same(lambda lib: lib.empty_strided(size, stride))
    same(lambda lib: lib.empty_strided((2, 3), (1, 2), dtype=lib.int32, requires_grad=True))
    for layout in ((2, 0, 1), (0, 1, 2), (1, 2, 0)):
        same(lambda lib: (lib.empty_permuted((2, 3, 4), layout).stride(), lib.empty_permuted((2, 3, 4), layout).shape))
    same(lambda lib: lib.empty_permuted((2, 3, 4), (2, 0, 0)))
    same(lambda lib: lib.empty_permuted((2, 3, 4), (2, 0)))
    same(lambda lib: lib.empty_permuted((2, 3), (1, 0), dtype=lib.int16).dtype)


def test_fill_matches_torch():
    same(lambda lib: lib.fill(lib.ones(2, 3), 3))
    same(lambda lib: lib.fill(lib.ones(2, dtype=lib.int32), 3.7))
    same(lambda lib: lib.fill(lib.ones(2), lib.tensor(5.0, dtype=lib.float64)))
    same(lambda lib: lib.fill(lib.ones(2), lib.tensor([5.0])))
    same_grads(lambda lib, x, v: lib.fill(x, v), arr(2, 3), np.array(2.0))


def test_randint_like_matches_torch_in_kind():
    for args, kw in (((5,), {}), ((3, 5), {"dtype": "int32"}), ((), {"high": 5}), ((), {"low": 1, "high": 5}),
                     ((5,), {"requires_grad": True})):
        def call(lib):
            k = {n: getattr(lib, v) if n == "dtype" else v for n, v in kw.items()}
            r = lib.randint_like(lib.ones(40, 3), *args, **k)
            lo, hi = (args if len(args) == 2 else (k.get("low", 0), args[0] if args else k["high"]))
            return r.dtype, r.shape, r.requires_grad, bool(((r >= lo) & (r < hi)).all())
        same(call)
    same(lambda lib: lib.randint_like(lib.ones(2, 3), 5, 3))
    same(lambda lib: lib.randint_like(lib.ones(2, 3), lib.tensor(5)).shape)
    g1, g2 = ember.Generator().manual_seed(3), ember.Generator().manual_seed(3)
    assert ember.equal(ember.randint_like(ember.ones(9), 100, generator=g1),
                       ember.randint_like(ember.ones(9), 100, generator=g2))


@pytest.mark.filterwarnings("ignore:torch.asarray. unspecified requires_grad")
def test_asarray_tensor_aliasing_matches_torch():
    for lib in LIBS:
        t = lib.ones(3)
        assert lib.asarray(t) is t and lib.asarray(t, dtype=lib.float32) is t and lib.asarray(t, copy=True) is not t
        assert lib.asarray(t, copy=True).data_ptr() != t.data_ptr()
        r = lib.asarray(t, requires_grad=True)  # set on the input itself
        assert r is t and t.requires_grad
        tg = lib.ones(2, requires_grad=True)
        r = lib.asarray(tg, requires_grad=False)
        assert r is tg and not tg.requires_grad
        nl = lib.ones(2, requires_grad=True) * 2
        r = lib.asarray(nl, requires_grad=False)
        assert r is not nl and not r.requires_grad and r.data_ptr() == nl.data_ptr()
        r = lib.asarray(nl, dtype=lib.float64)
        assert r.requires_grad and r.grad_fn is not None
        r = lib.asarray(nl, copy=True, requires_grad=False)
        assert not r.requires_grad and r.is_leaf
    same(lambda lib: lib.asarray(lib.ones(3), dtype=lib.float64, copy=False))
    with pytest.warns(UserWarning, match="requires_grad"):
        ember.set_warn_always(True)
        try:
            ember.asarray(ember.ones(2, requires_grad=True))
        finally:
            ember.set_warn_always(False)


def test_asarray_numpy_and_buffers_match_torch():
    for lib in LIBS:
        a = np.arange(3.0)
        lib.asarray(a)[0] = 5  # shares
        assert a[0] == 5
        a = np.arange(3.0)
        lib.asarray(a, copy=True)[0] = 5
        assert a[0] == 0
        b = bytearray(b"\x01\x02\x03\x04")
        lib.asarray(b)[0] = 9.0
        assert b == bytearray(b"\x00\x00\x10A")
    import array
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for obj in (np.arange(3.0), np.arange(3), np.float64(1.0), np.array([1, 2], dtype=np.int16),
                    bytearray(b"\x01\x02\x03\x04"), array.array("f", [1, 2]), memoryview(b"abcd"), b"ab"):
            same(lambda lib: lib.asarray(obj))
        same(lambda lib: lib.asarray(bytearray(b"\x01\x02\x03\x04"), dtype=lib.int16))
        same(lambda lib: lib.asarray(np.arange(3.0), dtype=lib.float32))
        same(lambda lib: lib.asarray(np.arange(3.0), dtype=lib.float32, copy=False))


@pytest.mark.parametrize("call", [
    lambda lib: lib.asarray([1, 2, 3]), lambda lib: lib.asarray([1.0, 2, 3], copy=False),
    lambda lib: lib.asarray([1.0, 2, 3], dtype=lib.float64), lambda lib: lib.asarray(3.5),
    lambda lib: lib.asarray(True), lambda lib: lib.asarray([[1, 2], [3, 4.5]]),
    lambda lib: lib.asarray((1, 2), dtype=lib.int32, device="cpu"), lambda lib: lib.asarray("abc"),
    lambda lib: lib.asarray(None), lambda lib: lib.asarray([1, 2], device="cuda"),
    lambda lib: lib.asarray([1, 2], requires_grad=True), lambda lib: lib.asarray([1.0, 2], requires_grad=True),
    lambda lib: lib.asarray([lib.tensor(1.0), lib.tensor(2.0)]),
    lambda lib: lib.asarray(lib.ones(2), device=lib.device("cpu")),
])
def test_asarray_sequences_match_torch(call):
    same(call)


def test_asarray_dlpack_shares_memory():
    src = torch.arange(4.0)
    t = ember.asarray(src)
    t[0] = 7.0
    assert src[0].item() == 7.0


# ---------------------------------------------------------------- windows

WINDOWS = [
    ("hann_window", ()), ("hamming_window", ()), ("hamming_window", (0.5,)), ("hamming_window", (0.5, 0.3)),
    ("blackman_window", ()), ("bartlett_window", ()), ("kaiser_window", ()), ("kaiser_window", (3.0,)),
]


@pytest.mark.parametrize("name, extra", WINDOWS)
@pytest.mark.parametrize("n", [0, 1, 2, 5, 16])
@pytest.mark.parametrize("periodic", [True, False])
def test_windows_match_torch(name, extra, n, periodic):
    for dtype in ("float32", "float64"):
        same(lambda lib: getattr(lib, name)(n, periodic, *extra, dtype=getattr(lib, dtype)), atol=1e-6)
    same(lambda lib: getattr(lib, name)(n), atol=1e-6)


@pytest.mark.parametrize("name", ["hann_window", "hamming_window", "blackman_window", "bartlett_window",
                                  "kaiser_window"])
def test_window_options_and_errors_match_torch(name):
    same(lambda lib: getattr(lib, name)(4, requires_grad=True).requires_grad)
    same(lambda lib: getattr(lib, name)(-1))
    same(lambda lib: getattr(lib, name)(3, dtype=lib.int64))
    same(lambda lib: getattr(lib, name)(3.0))
    same(lambda lib: getattr(lib, name)(3, device="cuda"))


def test_range_matches_torch():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for args, kw in (((1, 4), {}), ((1, 4, 0.5), {"dtype": "float64"}), ((0, 5, 2), {}),
                         ((1, 4), {"dtype": "int64"}), ((4, 1, -1), {}), ((0, 1, 0.1), {}),
                         ((-2.5, 3), {"dtype": "float64"}), ((1, 4, -1), {}), ((1, 4, 0), {}), ((4,), {})):
            same(lambda lib: lib.range(*args, **{k: getattr(lib, v) for k, v in kw.items()}))
        same(lambda lib: lib.range(0, 3, requires_grad=True).requires_grad)
    with pytest.warns(UserWarning, match="deprecated"):
        ember.range(0, 2)


def test_from_file_matches_torch(tmp_path):
    path = str(tmp_path / "data.bin")
    np.arange(6, dtype=np.float32).tofile(path)
    same(lambda lib: lib.from_file(path, size=6))
    same(lambda lib: lib.from_file(path, size=3, dtype=lib.float64))
    same(lambda lib: lib.from_file(path, size=7))
    same(lambda lib: lib.from_file(path))
    same(lambda lib: lib.from_file(str(tmp_path / "missing.bin"), size=2))
    private = ember.from_file(path, shared=False, size=6)
    private[1] = 9.0
    assert np.fromfile(path, dtype=np.float32)[1] == 1.0
    mapped = ember.from_file(path, shared=True, size=6)
    mapped[0] = 7.0
    assert np.fromfile(path, dtype=np.float32)[0] == 7.0


GRAD_F = np.array([[1.0, 2, 4, 7, 11], [2, 5, 9, 10, 8.5], [0, -1, 3, 3.5, 6]])


@pytest.mark.parametrize("kw", [
    {}, {"edge_order": 2}, {"spacing": 2.0}, {"spacing": 0.5, "edge_order": 2}, {"dim": 1}, {"dim": -2},
    {"dim": (1, 0), "spacing": [2.0, 3.0]}, {"spacing": "coords"}, {"spacing": "coords", "edge_order": 2},
    {"dim": 1, "spacing": "coords1"}, {"spacing": [1.0, 2.0, 3.0]}, {"edge_order": 3},
])
def test_gradient_matches_torch(kw):
    def call(lib, f):
        args = dict(kw)
        if args.get("spacing") == "coords":
            args["spacing"] = [lib.tensor([0.0, 1, 3], dtype=f.dtype), lib.tensor([0.0, 0.5, 2, 2.5, 4], dtype=f.dtype)]
        elif args.get("spacing") == "coords1":
            args["spacing"] = [lib.tensor([0.0, 0.5, 2, 2.5, 4], dtype=f.dtype)]
        return lib.gradient(f, **args)
    if kw.get("edge_order") == 3 or kw.get("spacing") == [1.0, 2.0, 3.0]:
        same(lambda lib: call(lib, lib.tensor(GRAD_F)))
        return
    same_grads(call, GRAD_F)
    same(lambda lib: call(lib, lib.tensor(GRAD_F, dtype=lib.float32)))


def test_gradient_edge_cases_match_torch():
    same(lambda lib: lib.gradient(lib.tensor([1, 4, 9, 16, 25], dtype=lib.int32), spacing=2))
    same(lambda lib: lib.gradient(lib.tensor([1.0, 2.0])))
    same(lambda lib: lib.gradient(lib.tensor([1.0, 2.0]), edge_order=2))
    same(lambda lib: lib.gradient(lib.tensor(3.0)))


@pytest.mark.parametrize("call", [
    lambda lib: lib.nonzero_static(lib.tensor([0, 1, 0, 2]), size=3),
    lambda lib: lib.nonzero_static(lib.tensor([[0, 1], [3, 2]]), size=1, fill_value=7),
    lambda lib: lib.nonzero_static(lib.tensor([[0, 1], [3, 0]]), size=4, fill_value=-5),
    lambda lib: lib.nonzero_static(lib.tensor([0, 1]), size=-1),
    lambda lib: lib.nonzero_static(lib.tensor(1), size=2),
    lambda lib: lib.put(lib.zeros(2, 2), lib.tensor([0, -1]), lib.tensor([5.0, 6.0])),
    lambda lib: lib.put(lib.zeros(2, 2), lib.tensor([0, 0]), lib.tensor([5.0, 6.0]), accumulate=True),
    lambda lib: lib.put(lib.zeros(2, 2), lib.tensor([4]), lib.tensor([5.0])),
    lambda lib: lib.put(lib.zeros(2, 2), lib.tensor([[1], [2]]), lib.tensor([5.0, 6.0])),
    lambda lib: lib.index_put(lib.zeros(3), [lib.tensor([0, 0])], lib.tensor([1.0, 2.0]), True),
    lambda lib: lib.index_put(lib.zeros(2, 3), (lib.tensor([0, 1]), lib.tensor([2, 0])), lib.tensor(3.0)),
    lambda lib: lib.index_put(lib.zeros(2, 3), [None, lib.tensor([0, 2])], lib.tensor(1.0)),
    lambda lib: lib.chain_matmul(lib.ones(2, 3), lib.ones(4, 1)),
    lambda lib: lib.chain_matmul(),
    lambda lib: lib.chain_matmul(lib.ones(2, 3, 1), lib.ones(3)),
    lambda lib: lib.chain_matmul(lib.tensor(X[0])),
    lambda lib: lib.norm_except_dim(lib.tensor(X), 2, 0),
    lambda lib: lib.norm_except_dim(lib.tensor(X), 3, 1),
    lambda lib: lib.norm_except_dim(lib.tensor(X), 2, 2),
    lambda lib: lib.norm_except_dim(lib.tensor(X), 2, -1),
    lambda lib: lib.frobenius_norm(lib.tensor(X), [1]),
    lambda lib: lib.frobenius_norm(lib.tensor(X), [0, 2], True),
    lambda lib: lib.frobenius_norm(lib.tensor(X), [0, 1, 2]),
    lambda lib: lib.is_same_size(lib.ones(2), lib.ones(2, 1)),
    lambda lib: lib.is_same_size(lib.ones(2, 3), lib.zeros(2, 3)),
    lambda lib: lib.is_signed(lib.ones(1, dtype=lib.uint8)),
    lambda lib: lib.is_signed(lib.ones(1, dtype=lib.int8)),
    lambda lib: lib.detach(lib.ones(2, requires_grad=True)).requires_grad,
    lambda lib: lib.sym_constrain_range(-5, max=2),
    lambda lib: lib.sym_constrain_range(5, min=7),
    lambda lib: lib.sym_constrain_range_for_size(-1),
    lambda lib: lib.sym_constrain_range_for_size(1),
    lambda lib: lib.sym_constrain_range_for_size(1, max=0),
    lambda lib: lib.sym_fresh_size(3),
])
@pytest.mark.filterwarnings("ignore:.*deprecated")
def test_small_functions_match_torch(call):
    same(call)


@pytest.mark.filterwarnings("ignore:.*deprecated")
def test_small_functions_gradients_match_torch():
    same_grads(lambda lib, a, b, c: lib.chain_matmul(a, b, c), arr(2, 3), arr(3, 4), arr(4, 2))
    same_grads(lambda lib, x, v: lib.put(x, lib.tensor([0, 5, -1]), v), arr(2, 3), arr(3))
    same_grads(lambda lib, x, v: lib.index_put(x, (lib.tensor([0, 1, 0]),), v, True), arr(2, 3), arr(3, 3))
    same_grads(lambda lib, v: lib.norm_except_dim(v, 2, 1), arr(3, 4, 2))
    same_grads(lambda lib, v: lib.frobenius_norm(v, [0, 1]), arr(3, 4))


@pytest.mark.parametrize("call", [
    lambda lib: lib.zeros(2, 3).put_(lib.tensor([0, -1]), lib.tensor([1.0, 2.0])),
    lambda lib: lib.zeros(2, 3).t().put_(lib.tensor([1, 1]), lib.tensor([1.0, 2.0]), True),
    lambda lib: lib.zeros(2, 3).put(lib.tensor([5]), lib.tensor([1.0])),
    lambda lib: lib.zeros(2, 3).put_(lib.tensor([6]), lib.tensor([1.0])),
    lambda lib: lib.tensor([[0, 1], [2, 0]]).nonzero_static(size=3),
    lambda lib: lib.zeros(2, 3).index_put((lib.tensor([1]),), lib.tensor(5.0)),
    lambda lib: lib.ones(2, dtype=lib.float64).new_empty_strided((2, 3), (1, 2)).stride(),
    lambda lib: lib.ones(2, dtype=lib.float64).new_empty_strided((2, 3), (1, 2)).dtype,
    lambda lib: lib.ones(2, dtype=lib.float64).new_empty_strided((2, 3), (3, 1), dtype=lib.int32).dtype,
    lambda lib: lib.ones(2).is_same_size(lib.ones(2)),
    lambda lib: lib.ones(2).is_same_size(lib.ones(1, 2)),
    lambda lib: lib.tensor([2]).is_nonzero(),
    lambda lib: lib.tensor([0.0]).is_nonzero(),
    lambda lib: lib.tensor([1, 2]).is_nonzero(),
    lambda lib: lib.ones(2).is_distributed(),
    lambda lib: lib.cond(True, lambda x: x + 1, lambda x: x - 1, (lib.ones(3),)),
    lambda lib: lib.cond(lib.tensor(False), lambda x: x + 1, lambda x: x - 1, [lib.ones(3)]),
    lambda lib: lib.cond(lib.tensor([True, False]), lambda x: x + 1, lambda x: x - 1, (lib.ones(3),)),
    lambda lib: lib.cond(0, lambda: lib.ones(1), lambda: lib.zeros(1)),
    lambda lib: lib.cond(True, lambda x: (x + 1, x.sum()), lambda x: (x, x.sum()), (lib.ones(3),)),
    lambda lib: lib.thread_safe_generator(),
])
def test_tensor_methods_and_control_flow_match_torch(call):
    same(call)


def test_cond_is_differentiable_through_the_taken_branch():
    same_grads(lambda lib, x: lib.cond(x.sum() > 0, lambda t: (t * t).sum(), lambda t: t.sum(), (x,)),
               np.abs(arr(3)) + 0.1)


# ---------------------------------------------------------------- complex views on real tensors

@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "bool", "uint8"])
def test_complex_views_of_real_tensors_match_torch(dtype):
    data = np.array([-1.5, 0.0, 2.0]).astype(np.float64)

    def make(lib):
        return lib.tensor(data).to(getattr(lib, dtype))
    for fn in ("is_complex", "is_conj", "is_neg"):
        same(lambda lib: getattr(lib, fn)(make(lib)))
        same(lambda lib: getattr(make(lib), fn)())
    for fn in ("conj", "resolve_conj", "resolve_neg", "conj_physical", "real"):
        same(lambda lib: (lambda t: (getattr(lib, fn)(t) is t, getattr(lib, fn)(t)))(make(lib)))
    for fn in ("conj", "resolve_conj", "resolve_neg", "conj_physical", "conj_physical_"):
        same(lambda lib: (lambda t: getattr(t, fn)() is t)(make(lib)))
    same(lambda lib: (lambda t: t.real is t)(make(lib)))
    same(lambda lib: lib.imag(make(lib)))
    same(lambda lib: make(lib).imag)
    same(lambda lib: lib.is_complex(1))
    same(lambda lib: lib.conj_physical(make(lib), out=lib.empty(0, dtype=getattr(lib, dtype))))


def test_real_part_assignment_and_gradients_match_torch():
    def assign(lib):
        t = lib.tensor([1.0, 2.0])
        t.real = lib.tensor([5.0, 6.0])
        return t
    same(assign)
    same_grads(lambda lib, x: lib.conj(x) * lib.conj_physical(x) + x.real, arr(3))


@pytest.mark.parametrize("call", [
    lambda lib, x: x.new(), lambda lib, x: x.new(2, 3).shape, lambda lib, x: x.new(lib.Size([2])).dtype,
    lambda lib, x: x.new([1, 2]), lambda lib, x: x.new((1, 2)), lambda lib, x: x.new(2.5),
    lambda lib, x: x.new(lib.tensor([1.0, 2.0], dtype=lib.float64)), lambda lib, x: x.new(lib.tensor([1, 2])),
    lambda lib, x: x.new([1, 2], device="cpu"), lambda lib, x: x.to(lib.int32).new([1.7, 2]),
])
def test_tensor_new_matches_torch(call):
    same(lambda lib: call(lib, lib.ones(2, dtype=lib.float64)))


def test_angle_of_real_tensors_matches_torch():
    data = np.array([-1.0, 2.0, np.nan, np.inf, -np.inf, -0.0, 0.0])
    same_grads(lambda lib, x: lib.angle(x), data)
    same_grads(lambda lib, x: x.angle() * x, data[:2])
    for dtype in ("float32", "int32", "bool", "uint8"):
        same(lambda lib: lib.angle(lib.tensor([1.0, -2.0, 0.0]).to(getattr(lib, dtype))))
    same(lambda lib: lib.angle(lib.tensor([-1.0]), out=lib.empty(0)))
    for dtype in ("float64", "int64", "float16"):
        same(lambda lib: lib.angle(lib.tensor([-1.0]), out=lib.empty(0, dtype=getattr(lib, dtype))))
        same(lambda lib: lib.conj_physical(lib.tensor([-1.0]), out=lib.empty(0, dtype=getattr(lib, dtype))))


IR_X = np.full((3, 2), 2.5)  # no ties with source: torch splits tied amin/amax gradients with excluded self values
IR_SRC = np.array([[1.0, 2], [3, 4], [5, 6], [7, 8]])


@pytest.mark.parametrize("reduce", ["prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.filterwarnings("ignore:index_reduce")
def test_index_reduce_matches_torch(reduce, include_self):
    idx = [0, 2, 0, 0]
    same_grads(lambda lib, x, s: lib.index_reduce(x, 0, lib.tensor(idx), s, reduce, include_self=include_self),
               IR_X, IR_SRC)
    same(lambda lib: lib.tensor(IR_X, dtype=lib.int64).index_reduce(
        0, lib.tensor(idx), lib.tensor(IR_SRC, dtype=lib.int64), reduce, include_self=include_self))
    same(lambda lib: lib.tensor(IR_X).index_reduce_(1, lib.tensor([1, 1], dtype=lib.int32), lib.tensor(IR_SRC[:3]),
                                                    reduce, include_self=include_self))


@pytest.mark.parametrize("call", [
    lambda lib: lib.index_reduce(lib.ones(3, 2), 0, lib.tensor([0, 1]), lib.ones(2, 2), "sum"),
    lambda lib: lib.index_reduce(lib.ones(3, 2), 0, lib.tensor([0, 5]), lib.ones(2, 2), "prod"),
    lambda lib: lib.index_reduce(lib.ones(3, 2), 0, lib.tensor([0.0, 1.0]), lib.ones(2, 2), "prod"),
    lambda lib: lib.index_reduce(lib.ones(3, 2), 0, lib.tensor([0, 1, 2]), lib.ones(2, 2), "prod"),
    lambda lib: lib.index_reduce(lib.ones(3, 2), 0, lib.tensor([0, 1]), lib.ones(2, 3), "prod"),
])
@pytest.mark.filterwarnings("ignore:index_reduce")
def test_index_reduce_errors_match_torch(call):
    same(call)


def test_fork_wait_future_at_top_level_match_torch():
    def call(lib):
        fut = lib.fork(lambda a, b: a * b, lib.tensor([1.0, 2.0]), 3)
        return isinstance(fut, lib.Future), lib.wait(fut)
    same(call)
    assert ember.fork is ember.jit.fork and ember.wait is ember.jit.wait
