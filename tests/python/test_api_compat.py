"""The half of PyTorch's public API that plain programs touch on a CPU-only machine, against torch's
CPU build: ember.cuda / accelerator / backends, CUDA requests failing as torch's do, isclose /
allclose / equal, ember.testing, indexing with ranges and tuples, pickling devices, ember.onnx and
nn.DataParallel."""
import copy
import math
import multiprocessing
import pickle
import warnings

import numpy as np
import pytest

import re

import ember
from cuda_absent import NO_GPU_ERROR, NO_GPU_MATCH, needs_no_gpu, raises_no_gpu

torch = pytest.importorskip("torch")


def _outcome(fn):
    """('ok', value) or (exception type name, message with the library's name normalised)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = fn()
    except Exception as e:  # noqa: BLE001 - the kind is what is compared
        # (ember.Tensor's class is defined in ember._tensor)
        return type(e).__name__, str(e).replace("Torch", "Ember").replace("torch", "ember").replace(
            "ember._tensor.Tensor", "ember.Tensor")
    return "ok", r


def _same_outcome(ember_fn, torch_fn, message=True):
    e, t = _outcome(ember_fn), _outcome(torch_fn)
    assert e[0] == t[0], (e, t)
    if e[0] != "ok" and message:
        assert e[1] == t[1], (e, t)
    return e, t


# ---------------------------------------------------------------- ember.cuda
CUDA_CALLS = [
    ("is_available", ()), ("device_count", ()), ("is_initialized", ()), ("manual_seed", (1,)),
    ("manual_seed_all", (1,)), ("seed", ()), ("seed_all", ()), ("synchronize", ()), ("empty_cache", ()),
    ("memory_allocated", ()), ("max_memory_allocated", ()), ("memory_reserved", ()), ("max_memory_reserved", ()),
    ("memory_stats", ()), ("memory_allocated", (0,)), ("get_device_name", ()), ("get_device_name", (0,)),
    ("current_device", ()), ("get_device_properties", (0,)), ("get_device_capability", ()),
    ("is_bf16_supported", ()), ("initial_seed", ()), ("get_rng_state", ()), ("get_rng_state_all", ()),
    ("set_rng_state_all", ([],)), ("init", ()), ("current_stream", ()), ("default_stream", ()),
    ("mem_get_info", ()), ("get_arch_list", ()), ("set_device", (-1,)), ("set_device", ("cpu",)),
    ("synchronize", ("cuda",)), ("ipc_collect", ()), ("_is_compiled", ()),
]


@pytest.mark.parametrize("name,args", CUDA_CALLS, ids=[f"{n}{a}" for n, a in CUDA_CALLS])
@needs_no_gpu
def test_cuda_module_matches_cpu_build(name, args):
    # torch here is a CPU-only build. Ember built with CUDA on a machine without a GPU answers every
    # query the same, and raises PyTorch's CUDA-build RuntimeError where the CPU build asserts.
    if ember.cuda._is_compiled():
        e, t = _outcome(lambda: getattr(ember.cuda, name)(*args)), _outcome(lambda: getattr(torch.cuda, name)(*args))
        if name == "_is_compiled":
            assert e == ("ok", True)
        elif t[0] == "AssertionError":
            assert e[0] == NO_GPU_ERROR.__name__ and re.search(NO_GPU_MATCH, e[1]), (e, t)
        else:
            assert e[0] == t[0] and (e[0] != "ok" or (e[1] == t[1] and type(e[1]) is type(t[1]))), (e, t)
        return
    e, t = _same_outcome(lambda: getattr(ember.cuda, name)(*args), lambda: getattr(torch.cuda, name)(*args))
    if e[0] == "ok":
        assert e[1] == t[1] and type(e[1]) is type(t[1])


@needs_no_gpu
def test_cuda_device_queries_raise_without_a_gpu():
    # torch's CPU build raises AttributeError from a missing binding for some of these; Ember raises
    # the same AssertionError as every other device query
    for fn in [ember.cuda.reset_peak_memory_stats, ember.cuda.reset_max_memory_allocated,
               lambda: ember.cuda.set_device(0),
               ember.cuda.reset_accumulated_memory_stats, ember.cuda.synchronize, ember.cuda.current_device]:
        with raises_no_gpu():
            fn()


def test_cuda_streams_events_and_context_managers():
    for name in ["Stream", "Event"]:
        _same_outcome(lambda: getattr(ember.cuda, name)(), lambda: getattr(torch.cuda, name)(), message=False)
    with pytest.raises(RuntimeError):
        ember.cuda.Event(enable_timing=True)
    for lib in (ember, torch):
        with lib.cuda.device(-1):
            pass
        with lib.cuda.stream(None):
            pass
        with lib.cuda.device_of(lib.ones(1)):
            pass
    _same_outcome(lambda: ember.cuda.device(0).__enter__(), lambda: torch.cuda.device(0).__enter__(), message=False)
    _same_outcome(lambda: ember.cuda.device("cpu"), lambda: torch.cuda.device("cpu"))
    assert issubclass(ember.cuda.OutOfMemoryError, RuntimeError)
    assert ember.OutOfMemoryError is ember.cuda.OutOfMemoryError
    assert ember.ones(2).get_device() == torch.ones(2).get_device() == -1


def test_cuda_amp_is_disabled_with_warnings():
    import ember.cuda.amp as amp
    with pytest.warns(FutureWarning), pytest.warns(UserWarning, match="CUDA is not available"):
        ac = amp.autocast()
    with ac:
        y = ember.ones(2) * 2
    assert y.dtype == ember.float32
    with pytest.warns(UserWarning, match="CUDA is not available"), pytest.warns(FutureWarning):
        scaler = amp.GradScaler()
    assert scaler.is_enabled() is False and scaler.get_scale() == 1.0 and scaler.state_dict() == {}
    x = ember.ones(2, requires_grad=True)
    loss = (x * 3).sum()
    assert scaler.scale(loss) is loss
    opt = ember.optim.SGD([x], lr=0.1)
    scaler.scale(loss).backward()
    scaler.step(opt)
    scaler.update()
    assert x.tolist() == pytest.approx([0.7, 0.7])

    with pytest.warns(FutureWarning):
        @amp.autocast(enabled=False)
        def f(a):
            return a + 1
    assert f(ember.ones(1)).tolist() == [2.0]
    assert amp.custom_fwd(f) is f and amp.custom_bwd(f) is f and amp.custom_fwd(cast_inputs=ember.float32)(f) is f


# ---------------------------------------------------------------- accelerator and backends
def test_accelerator():
    for name in ["current_accelerator", "is_available", "device_count"]:
        assert getattr(ember.accelerator, name)() == getattr(torch.accelerator, name)()
    for name in ["current_device_index", "synchronize", "memory_allocated", "empty_cache"]:
        _same_outcome(getattr(ember.accelerator, name), getattr(torch.accelerator, name))


def test_backends_values():
    assert ember.backends.cuda.is_built() == ember._C._cuda_is_compiled()  # torch's CPU build says False
    for path in ["cudnn.is_available", "cudnn.version", "mps.is_available", "mps.is_built",
                 "openmp.is_available", "cpu.get_cpu_capability"]:
        mod, fn = path.split(".")
        assert getattr(getattr(ember.backends, mod), fn)() == getattr(getattr(torch.backends, mod), fn)(), path
    for path in ["cudnn.benchmark", "cudnn.deterministic", "cudnn.enabled", "cudnn.allow_tf32", "mkldnn.enabled",
                 "cuda.matmul.allow_tf32", "cuda.matmul.allow_fp16_reduced_precision_reduction"]:
        e, t = ember.backends, torch.backends
        for p in path.split("."):
            e, t = getattr(e, p), getattr(t, p)
        assert e == t, path
    assert isinstance(ember.backends.mkldnn.is_available(), bool)


@pytest.mark.parametrize("mod,flag", [("cudnn", "benchmark"), ("cudnn", "deterministic"), ("cudnn", "enabled"),
                                      ("cudnn", "allow_tf32"), ("mkldnn", "enabled")])
def test_backend_flags_set_and_check_bools(mod, flag):
    em, tm = getattr(ember.backends, mod), getattr(torch.backends, mod)
    old = getattr(em, flag)
    try:
        setattr(em, flag, not old)
        assert getattr(em, flag) is (not old)
        _same_outcome(lambda: setattr(em, flag, 1), lambda: setattr(tm, flag, 1), message=False)
        assert getattr(em, flag) is (not old)
    finally:
        setattr(em, flag, old)


def test_backend_flags_context_managers():
    cudnn = ember.backends.cudnn
    with cudnn.flags(enabled=False, deterministic=True):
        assert (cudnn.enabled, cudnn.deterministic, cudnn.benchmark, cudnn.allow_tf32) == (False, True, False, True)
        with torch.backends.cudnn.flags(enabled=False, deterministic=True):
            assert torch.backends.cudnn.benchmark == cudnn.benchmark
    assert cudnn.enabled is True and cudnn.deterministic is False
    with pytest.raises(ZeroDivisionError):
        with cudnn.flags(benchmark=True):
            assert cudnn.benchmark is True
            1 / 0
    assert cudnn.benchmark is False
    # the switches reach the C++ core, which picks cuDNN's algorithms with them
    with cudnn.flags(enabled=True, benchmark=True, deterministic=True, allow_tf32=False):
        assert ember._C._cudnn_flags() == (True, True, True, False)
    assert ember._C._cudnn_flags() == (True, False, False, True)
    cudnn.allow_tf32 = False
    assert ember._C._cudnn_flags()[3] is False
    cudnn.allow_tf32 = True
    if not ember.cuda.is_available():
        assert not cudnn.is_available() and cudnn.version() is None and not cudnn.is_acceptable(ember.ones(1))
    with ember.backends.mkldnn.flags():
        assert ember.backends.mkldnn.enabled is False
    assert ember.backends.mkldnn.enabled is True


def test_matmul_precision_and_tf32_flag():
    matmul = ember.backends.cuda.matmul
    try:
        for lib in (ember, torch):
            assert lib.get_float32_matmul_precision() == "highest"
        for p in ["high", "medium", "highest"]:
            ember.set_float32_matmul_precision(p)
            torch.set_float32_matmul_precision(p)
            assert ember.get_float32_matmul_precision() == p
            assert matmul.allow_tf32 == torch.backends.cuda.matmul.allow_tf32
        matmul.allow_tf32 = True
        assert ember.get_float32_matmul_precision() == "high"
        matmul.allow_tf32 = False
        assert ember.get_float32_matmul_precision() == "highest"
        with pytest.warns(UserWarning):
            ember.set_float32_matmul_precision("bogus")
        assert ember.get_float32_matmul_precision() == "highest"
        _same_outcome(lambda: ember.set_float32_matmul_precision(3), lambda: torch.set_float32_matmul_precision(3))
        with pytest.raises(RuntimeError):
            matmul.allow_tf32 = "x"
        with pytest.raises(AttributeError):
            matmul.bogus
    finally:
        torch.set_float32_matmul_precision("highest")
        ember.set_float32_matmul_precision("highest")


def test_deterministic_algorithms():
    libs = (ember, torch)
    try:
        for steps in [[(True,)], [(True, True)], [(False, True)], [(True, True), (False,)]]:
            for args in steps:
                for lib in libs:
                    lib.use_deterministic_algorithms(args[0], warn_only=args[1] if len(args) > 1 else False)
            for name in ["are_deterministic_algorithms_enabled", "is_deterministic_algorithms_warn_only_enabled",
                         "get_deterministic_debug_mode"]:
                assert getattr(ember, name)() == getattr(torch, name)(), (steps, name)
        for mode in ["default", "warn", "error", 0, 1, 2]:
            for lib in libs:
                lib.set_deterministic_debug_mode(mode)
            assert ember.get_deterministic_debug_mode() == torch.get_deterministic_debug_mode()
            assert ember.are_deterministic_algorithms_enabled() == torch.are_deterministic_algorithms_enabled()
        for bad in ["x", 5, 1.0]:
            _same_outcome(lambda: ember.set_deterministic_debug_mode(bad),
                          lambda: torch.set_deterministic_debug_mode(bad))
        for bad in [1, "a"]:
            _same_outcome(lambda: ember.use_deterministic_algorithms(bad),
                          lambda: torch.use_deterministic_algorithms(bad), message=False)
    finally:
        for lib in libs:
            lib.use_deterministic_algorithms(False)


# ---------------------------------------------------------------- CUDA requests on a CPU-only build
DEVICE_CASES = [
    "lib.ones(2).cuda()", "lib.ones(2).cuda(0)", "lib.ones(2).to('cuda')", "lib.ones(2).to('cuda:0')",
    "lib.ones(2).to(device='cuda', non_blocking=True)", "lib.ones(2).to(lib.device('cuda'))", "lib.ones(2).to(0)",
    "lib.zeros(2, device='cuda')", "lib.tensor([1], device='cuda')", "lib.ones(2, device=lib.device('cuda', 0))",
    "lib.randn(2, device='cuda')", "lib.arange(3, device='cuda')", "lib.zeros(2, device=1)",
    "lib.ones(2).new_zeros(2, device='cuda')", "lib.ones(2).new_tensor([1], device='cuda')",
    "lib.zeros_like(lib.ones(2), device='cuda')", "lib.full((2,), 1.0, device='cuda')",
    "lib.as_tensor([1], device='cuda')", "lib.empty(2, device='cuda')",
    "lib.ones(2).pin_memory()", "lib.empty(2, pin_memory=True)", "lib.tensor([1.0], pin_memory=True)",
    "lib.nn.Linear(2, 2).cuda()", "lib.nn.Linear(2, 2).to('cuda')", "lib.nn.Linear(2, 2).to(0)",
    "lib.nn.Linear(2, 2).cuda(0)", "lib.ones(2).cuda('cpu')", "lib.ones(2).cuda('cuda:1')",
    "lib.nn.Linear(2, 2).cuda('cpu')",
]


def _same_no_gpu_outcome(ember_fn, torch_fn):
    """As _same_outcome against torch's CPU-only build, for an Ember that may be a CUDA build on a
    machine without a GPU: there, torch's "not compiled with CUDA" AssertionError is PyTorch's CUDA-build
    RuntimeError ("Found no NVIDIA driver ...")."""
    if not ember.cuda._is_compiled():
        return _same_outcome(ember_fn, torch_fn)
    e, t = _outcome(ember_fn), _outcome(torch_fn)
    if t[0] == "AssertionError" and "not compiled with CUDA" in t[1]:
        assert e[0] == NO_GPU_ERROR.__name__ and re.search(NO_GPU_MATCH, e[1]), (e, t)
    else:
        assert e[0] == t[0], (e, t)
    return e, t


@needs_no_gpu
@pytest.mark.parametrize("expr", DEVICE_CASES)
def test_cuda_requests_fail_like_cpu_torch(expr):
    e, t = _same_no_gpu_outcome(lambda: eval(expr, {"lib": ember}), lambda: eval(expr, {"lib": torch}))
    assert e[0] != "ok"


@pytest.mark.parametrize("expr", [
    "lib.ones(2).is_cuda", "lib.ones(2).is_pinned()", "lib.device('cuda:0').index", "lib.device('cuda', 1).index",
    "str(lib.device('cuda', 1))", "lib.device('cuda:0').type", "lib.device('cuda', index=None).index",
    "lib.device(type='cuda', index=3).index", "repr(lib.device(lib.device('cuda', 2)))",
    "lib.device('cpu', 0).index", "lib.device('cuda:0') == lib.device('cuda', 0)",
    "lib.device('cpu:0') == lib.device('cpu')",
    "lib.zeros(2, device='cpu').device.type", "str(lib.zeros(2, device='cpu:0').device)",
    "lib.ones(2).to(device='cpu', non_blocking=True).tolist()", "lib.ones(2).to('cpu:0').tolist()",
    "lib.ones(2).cpu().tolist()", "lib.ones(2, pin_memory=False).tolist()", "repr(lib.nn.ReLU().cuda())",
    "repr(lib.nn.ReLU().to('cuda'))", "lib.device('cuda:-1')", "lib.device(0)", "lib.device(1.5)",
    "lib.device('cuda:1', 2)", "lib.device('cuda', -1)", "lib.device('bogus')", "lib.device('cuda:01')",
    "lib.device('cuda:+1')", "lib.device('cuda: 1')", "lib.device(' cuda')", "lib.device('cuda:')",
    "lib.device(':0')", "lib.device('cuda:10').index", "lib.device('cuda_x')", "lib.device(-1)",
])
def test_device_semantics(expr):
    e, t = _same_outcome(lambda: eval(expr, {"lib": ember}), lambda: eval(expr, {"lib": torch}), message=False)
    if e[0] == "ok":
        assert e[1] == t[1] if not isinstance(e[1], str) else e[1] == t[1].replace("torch", "ember")


def _identity(x):
    return x


def test_device_pickle_copy_and_spawn():
    for d in [ember.device("cpu"), ember.device("cuda"), ember.device("cuda:1"), ember.device("cpu", 0)]:
        for proto in range(pickle.HIGHEST_PROTOCOL + 1):
            r = pickle.loads(pickle.dumps(d, protocol=proto))
            assert r == d and type(r) is ember.device and r.index == d.index
        assert copy.copy(d) == d and copy.deepcopy(d) == d
        assert d.__reduce__()[1] == torch.device(str(d)).__reduce__()[1]
    assert pickle.loads(pickle.dumps(ember.device("cpu"))) == ember.device("cpu")
    devices = [ember.device("cpu"), ember.device("cuda", 1)]
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        assert pool.map(_identity, devices) == devices


# ---------------------------------------------------------------- isclose / allclose / equal
def _pair(lib, a, b):
    return lib.tensor(a[0], dtype=getattr(lib, a[1])), lib.tensor(b[0], dtype=getattr(lib, b[1]))


NAN, INF = float("nan"), float("inf")
CLOSE_CASES = [
    (([1.0, 2.0, 3.0], "float32"), ([1.0, 2.00001, 3.1], "float32"), {}),
    (([NAN, INF, -INF, 1.0, 0.0], "float64"), ([NAN, INF, INF, 1.0 + 1e-9, 1e-9], "float64"), {}),
    (([NAN, INF, 1.0], "float64"), ([NAN, INF, 2.0], "float64"), {"equal_nan": True}),
    (([1.0, 2.0], "float16"), ([1.001, 2.01], "float16"), {}),
    (([1.0, 2.0], "bfloat16"), ([1.001, 2.01], "bfloat16"), {"rtol": 1e-2, "atol": 0.0}),
    (([1, 2, 3], "int64"), ([1, 3, 5], "int64"), {}),
    (([1, 2, 3], "int64"), ([1, 3, 5], "int64"), {"rtol": 0.5}),
    (([1, 2], "uint8"), ([2, 1], "uint8"), {"atol": 1}),
    (([100], "int8"), ([-100], "int8"), {"atol": 250}),
    (([2**53 + 1], "int64"), ([2**53], "int64"), {"rtol": 0, "atol": 0.5}),
    (([True, False], "bool"), ([True, True], "bool"), {}),
    (([True, False], "bool"), ([True, True], "bool"), {"rtol": 0, "atol": 0}),
    (([[1.0], [2.0]], "float32"), ([1.0, 2.0, 3.0], "float32"), {}),
    ((1.0, "float32"), ([1.0, 2.0], "float32"), {"rtol": 0, "atol": 0}),
    (([], "float32"), ([], "float32"), {}),
    (([1.0], "float32"), ([1.0], "float64"), {}),
    (([1], "int64"), ([1.0], "float32"), {}),
    (([1.0, 2.0], "float32"), ([1.0, 2.0, 3.0], "float32"), {}),
    (([1.0], "float32"), ([1.0], "float32"), {"rtol": -1.0}),
    (([1.0], "float32"), ([1.0], "float32"), {"atol": -1.0}),
    (([1.0], "float32"), ([1.0], "float32"), {"equal_nan": 1}),
    (([1e10], "float32"), ([1.00001e10], "float32"), {}),
]


@pytest.mark.parametrize("a,b,kw", CLOSE_CASES)
def test_isclose_allclose(a, b, kw):
    for name in ["isclose", "allclose"]:
        def run(lib):
            x, y = _pair(lib, a, b)
            r = getattr(lib, name)(x, y, **kw)
            m = getattr(x, name)(y, **kw)
            if name == "isclose":
                assert m.tolist() == r.tolist()
                return r.dtype == lib.bool, r.shape, r.tolist()
            assert m == r and isinstance(r, bool)
            return r
        e, t = _same_outcome(lambda: run(ember), lambda: run(torch), message=name == "allclose")
        if e[0] == "ok":
            if name == "allclose":
                assert e[1] == t[1]
            else:
                assert (e[1][0], tuple(e[1][1]), e[1][2]) == (t[1][0], tuple(t[1][1]), t[1][2])


def test_isclose_random_and_noncontiguous():
    g = np.random.default_rng(0)
    for dtype in ["float32", "float64"]:
        a = g.standard_normal((5, 6)).astype(dtype)
        b = (a + g.standard_normal((5, 6)) * 1e-5).astype(dtype)
        for rtol, atol in [(1e-5, 1e-8), (1e-3, 0.0), (0.0, 1e-5)]:
            for prep in [lambda x: x, lambda x: x.t(), lambda x: x[:, ::2]]:
                e = ember.isclose(prep(ember.tensor(a)), prep(ember.tensor(b)), rtol=rtol, atol=atol)
                t = torch.isclose(prep(torch.tensor(a)), prep(torch.tensor(b)), rtol=rtol, atol=atol)
                assert e.tolist() == t.tolist()


def test_isclose_non_tensor_arguments():
    for expr in ["lib.isclose(lib.ones(2), 1)", "lib.allclose(lib.ones(2), 1.0)", "lib.equal(lib.ones(2), 1)"]:
        _same_outcome(lambda: eval(expr, {"lib": ember}), lambda: eval(expr, {"lib": torch}), message=False)


@pytest.mark.parametrize("a,b", [
    (([1.0, 2.0], "float32"), ([1.0, 2.0], "float64")), (([1, 2], "int32"), ([1.0, 2.0], "float32")),
    (([1.0, 2.0], "float32"), ([1.0, 2.0, 3.0], "float32")), (([[1.0, 2.0]], "float32"), ([1.0, 2.0], "float32")),
    (([1.0], "float32"), (1.0, "float32")), (([NAN], "float32"), ([NAN], "float32")),
    (([1.0, 2.0], "float32"), ([1.0, 2.5], "float32")), (([], "int64"), ([], "float32")),
    (([True, False], "bool"), ([1, 0], "uint8")), (([0.0], "float32"), ([-0.0], "float32")),
])
def test_equal(a, b):
    e = ember.equal(*_pair(ember, a, b))
    t = torch.equal(*_pair(torch, a, b))
    assert e is t
    x, y = _pair(ember, a, b)
    assert x.equal(y) is t


# ---------------------------------------------------------------- ember.testing
def _ac_cases(lib):
    t = lib.tensor
    return [
        (t([1.0, 2.0, 3.0]), t([1.0, 2.0, 4.0]), {}), (t([1, 2, 3]), t([1, 2, 4]), {}),
        (t([[1.0, 2.0], [3.0, 4.0]]), t([[1.0, 2.5], [3.0, 4.0]]), {}), (t(1.0), t(2.0), {}),
        (lib.ones(2), lib.ones(2, dtype=lib.float64), {}),
        (lib.ones(2), lib.ones(2, dtype=lib.float64), {"check_dtype": False}),
        (lib.ones(2), lib.ones(3), {}), (lib.ones(2), lib.ones(2), {"rtol": 1e-3}),
        (lib.ones(2), lib.ones(2), {"atol": 1e-3}),
        (1.0, 1.5, {}), (1, 2, {}), (True, False, {}), (1.0, t(1.0), {}), (t(1.0), 1.0, {}),
        ([lib.ones(2), lib.zeros(2)], [lib.ones(2), lib.ones(2)], {}), ({"a": lib.ones(2)}, {"a": lib.zeros(2)}, {}),
        ({"a": lib.ones(2)}, {"b": lib.ones(2)}, {}), ([1, 2], [1, 2, 3], {}), ([1, 2], [1, 3], {}),
        ({"x": [lib.ones(1), {"y": t([1.0, 5.0])}]}, {"x": [lib.ones(1), {"y": t([1.0, 6.0])}]}, {}),
        (t([NAN]), t([NAN]), {}), (t([NAN]), t([NAN]), {"equal_nan": True}),
        (lib.ones(2), lib.zeros(2), {"msg": "custom"}), (lib.ones(2), lib.zeros(2), {"msg": lambda m: "X" + m[:10]}),
        (lib.ones(2, 2).t(), lib.ones(2, 2), {"check_stride": True}),
        (t([True, False]), t([True, True]), {}), (np.ones(2), np.zeros(2), {}), (lib.ones(2), np.ones(2), {}),
        (None, None, {}), (None, 1, {}), ("a", "a", {}), (lib.ones(2).requires_grad_(), lib.ones(2), {}),
        (t([1.0, 2.0]), t([1.0, 2.0 + 1e-6]), {}), (t([0.0, 1.0]), t([1e-3, 1.0]), {}),
        (lib.ones(2, dtype=lib.int64), lib.ones(2, dtype=lib.int32), {}),
        (lib.ones(2, dtype=lib.float16), lib.ones(2) * 1.0009765625, {"check_dtype": False}),
        (lib.ones(2, dtype=lib.float16), lib.ones(2) * 1.01, {"check_dtype": False}),
        ((lib.ones(1),), [lib.ones(1)], {}), (t([1.0, INF]), t([1.0, INF]), {}), (t([1.0, INF]), t([1.0, -INF]), {}),
        (lib.empty(0), lib.empty(0), {}), (1.0, 1, {}), (t([0.0, 1.0, 2.0]), t([1.0, 1.0, 0.0]), {}),
        (lib.zeros(3, 4), lib.ones(3, 4), {}), (t([1.0, 2.0]), t([1.1, 2.0]), {"rtol": 0.2, "atol": 0.0}),
        (lib.nn.Parameter(lib.ones(2)), lib.ones(2), {"allow_subclasses": False}),
        (t([1, 2], dtype=lib.uint8), t([3, 2], dtype=lib.uint8), {}),
    ]


def test_assert_close_matches_torch():
    from torch.testing import assert_close as t_ac
    for i, (ec, tc) in enumerate(zip(_ac_cases(ember), _ac_cases(torch))):
        e, t = _same_outcome(lambda: ember.testing.assert_close(ec[0], ec[1], **ec[2]),
                             lambda: t_ac(tc[0], tc[1], **tc[2]))
        assert e[0] == t[0], i


def test_assert_close_random_mismatch_report():
    g = np.random.default_rng(1)
    for shape in [(7,), (3, 4), (2, 3, 5)]:
        a = g.standard_normal(shape).astype("float32")
        b = a.copy()
        flat = b.reshape(-1)
        flat[g.choice(flat.size, 3, replace=False)] += g.standard_normal(3).astype("float32")
        _same_outcome(lambda: ember.testing.assert_close(ember.tensor(a), ember.tensor(b)),
                      lambda: torch.testing.assert_close(torch.tensor(a), torch.tensor(b)))


@pytest.mark.parametrize("dtype", ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16",
                                   "float32", "float64"])
def test_make_tensor(dtype):
    mt = ember.testing.make_tensor
    d = getattr(ember, dtype)
    x = mt(3, 4, dtype=d, device="cpu")
    assert x.shape == (3, 4) and x.dtype == d and x.device.type == "cpu" and x.is_contiguous()
    assert mt((2, 5), dtype=d, device="cpu").shape == (2, 5) and mt([2], dtype=d, device="cpu").shape == (2,)
    assert mt(dtype=d, device=ember.device("cpu")).shape == ()
    big = mt(2000, dtype=d, device="cpu").to(ember.float64)
    lo, hi = {"bool": (0, 1), "uint8": (0, 9)}.get(dtype, (-9, 9) if d.is_floating_point else (-9, 9))
    assert lo <= big.min().item() and big.max().item() <= hi
    if not d.is_floating_point:
        assert len(set(big.tolist())) == hi - lo + 1  # the whole default range is drawn
    else:  # (rounding to a low-precision dtype may reach the bound)
        assert big.max().item() < 9 or dtype in ("float16", "bfloat16")
    nc = mt(3, 4, dtype=d, device="cpu", noncontiguous=True)
    tnc = torch.testing.make_tensor(3, 4, dtype=getattr(torch, dtype), device="cpu", noncontiguous=True)
    assert not nc.is_contiguous() and nc.shape == (3, 4) and nc.stride() == tnc.stride()
    assert mt(1, dtype=d, device="cpu", noncontiguous=True).is_contiguous()
    nz = mt(500, dtype=d, device="cpu", exclude_zero=True, low=0 if dtype != "bool" else None,
            high=2 if dtype != "bool" else None)
    assert bool((nz != 0).all().item())
    if dtype not in ("bool",):
        r = mt(1000, dtype=d, device="cpu", low=2, high=5).to(ember.float64)
        assert r.min().item() >= 2 and r.max().item() <= 5
    if d.is_floating_point:
        y = mt(3, dtype=d, device="cpu", requires_grad=True)
        assert y.requires_grad and y.is_leaf
    else:
        _same_outcome(lambda: mt(3, dtype=d, device="cpu", requires_grad=True),
                      lambda: torch.testing.make_tensor(3, dtype=getattr(torch, dtype), device="cpu",
                                                        requires_grad=True))


def test_make_tensor_errors_and_bounds():
    mt, tmt = ember.testing.make_tensor, torch.testing.make_tensor
    for kw in [dict(low=3, high=1), dict(low=float("nan")), dict(low=1e40),
               dict(noncontiguous=True, memory_format="cf")]:
        def run(lib, f):
            k = dict(kw)
            if k.get("memory_format") == "cf":
                k["memory_format"] = lib.contiguous_format
            return f(2, 3, dtype=lib.float32, device="cpu", **k)
        _same_outcome(lambda: run(ember, mt), lambda: run(torch, tmt))
    _same_outcome(lambda: mt(2, dtype=ember.int8, device="cpu", low=5, high=5),
                  lambda: tmt(2, dtype=torch.int8, device="cpu", low=5, high=5))
    assert set(mt(200, dtype=ember.int8, device="cpu", low=1.5, high=3.5).tolist()) == {2, 3}
    u = mt(500, dtype=ember.uint8, device="cpu", low=-5, high=300)
    assert u.min().item() >= 0
    assert set(mt(50, dtype=ember.bool, device="cpu", low=0, high=1).tolist()) == {False}
    with pytest.warns(FutureWarning):
        assert mt(3, dtype=ember.float32, device="cpu", low=2, high=2).tolist() == [2.0, 2.0, 2.0]
    for d, lo, hi in [(ember.float64, -1e308, 1e308), (ember.float32, -1e300, 1e300), (ember.float16, -1e6, None)]:
        wide = mt(200, dtype=d, device="cpu", low=lo, high=hi).to(ember.float64)
        assert bool(ember.isfinite(wide).all().item()) and wide.min().item() < 0
    tiny = mt(400, dtype=ember.float32, device="cpu", low=0, high=1e-30, exclude_zero=True)
    assert bool((tiny != 0).all().item())


# ---------------------------------------------------------------- indexing with ranges and tuples
INDEXES = [
    "(range(3), [0, 1, 2])", "((0, 1),)", "([0, 1], [1, 2])", "(range(2),)", "range(2)", "[range(2), 1]",
    "((0, 1), (1, 2))", "[(0, 1)]", "(0, (1, 2))", "[[0, 1], [1, 2]]", "range(0)", "((),)",
    "(range(1, 3), slice(None))", "((True, False, True),)", "(Ellipsis, (0, 2))", "((0, 1.5),)", "[[0, 1]]",
    "(lib.tensor([0, 1]), range(2))", "((lib.tensor(0), lib.tensor(2)),)", "[(True, False, True)]",
    "(slice(None), range(3, 0, -1))", "(range(-1, -3, -1), None, 0)", "(range(2), range(2))", "((5,),)",
    "(range(4),)", "'a'",
]


@pytest.mark.parametrize("index", INDEXES)
def test_index_with_ranges_and_tuples(index):
    def get(lib):
        x = lib.arange(12.0).reshape(3, 4)
        return x[eval(index, {"lib": lib})].tolist()

    def put(lib):
        x = lib.arange(12.0).reshape(3, 4)
        x[eval(index, {"lib": lib})] = -1.0
        y = lib.arange(12.0).reshape(3, 4)
        ix = eval(index, {"lib": lib})
        y[ix] = lib.full(tuple(y[ix].shape), 7.0)
        return x.tolist(), y.tolist()

    for fn in (get, put):
        e, t = _same_outcome(lambda: fn(ember), lambda: fn(torch), message=False)
        if e[0] == "ok":
            assert e[1] == t[1]


def test_range_index_gradient():
    logits = ember.randn(4, 5, dtype=ember.float64, requires_grad=True)
    target = [1, 0, 4, 2]
    ember.autograd.gradcheck(lambda z: z[range(4), target], (logits,))
    ember.autograd.gradgradcheck(lambda z: z[range(4), target] ** 2, (logits,))
    lt = torch.tensor(logits.detach().numpy(), requires_grad=True)
    logits[range(4), target].sum().backward()
    lt[range(4), target].sum().backward()
    assert logits.grad.tolist() == lt.grad.tolist()


# ---------------------------------------------------------------- onnx and DataParallel
def test_onnx():
    import ember.onnx  # export itself: tests/python/test_onnx_export.py (needs onnx + onnxruntime)
    assert ember.onnx.is_in_onnx_export() is torch.onnx.is_in_onnx_export() is False
    for name in ("UnsupportedOperatorError", "SymbolicValueError"):  # the same hierarchy as torch's
        assert issubclass(getattr(ember.onnx.errors, name), ember.onnx.errors.OnnxExporterError)
        assert issubclass(getattr(torch.onnx.errors, name), torch.onnx.errors.OnnxExporterError)
    assert issubclass(ember.onnx.OnnxExporterError, RuntimeError) and issubclass(torch.onnx.OnnxExporterError, RuntimeError)
    assert {m.name: m.value for m in ember.onnx.TrainingMode} == {k: int(v) for k, v in
                                                                 torch.onnx.TrainingMode.__members__.items()}


def test_data_parallel_without_gpus():
    ember.manual_seed(0)
    lin = ember.nn.Linear(3, 2)
    dp = ember.nn.DataParallel(lin, device_ids=[0, 1])
    assert dp.module is lin and dp.device_ids == [] and ember.nn.parallel.DataParallel is ember.nn.DataParallel
    tdp = torch.nn.DataParallel(torch.nn.Linear(3, 2), device_ids=[0, 1])
    assert list(dp.state_dict()) == list(tdp.state_dict()) == ["module.weight", "module.bias"]
    assert repr(dp) == repr(tdp)
    tdp.load_state_dict({k: torch.tensor(v.numpy()) for k, v in dp.state_dict().items()})
    x = np.random.default_rng(2).standard_normal((4, 3)).astype("float32")
    np.testing.assert_allclose(dp(ember.tensor(x)).detach().numpy(), tdp(torch.tensor(x)).detach().numpy(), rtol=1e-6)
    assert [n for n, _ in dp.named_parameters()] == ["module.weight", "module.bias"]
    dp(ember.tensor(x)).sum().backward()
    assert lin.weight.grad is not None
    _same_outcome(lambda: ember.nn.parallel.data_parallel(lin, ember.ones(1, 3)),
                  lambda: torch.nn.parallel.data_parallel(torch.nn.Linear(3, 2), torch.ones(1, 3)))
    assert ember.nn.parallel.DistributedDataParallel.__name__ == "DistributedDataParallel"  # over ember.distributed
    assert math.isfinite(dp(ember.ones(1, 3)).sum().item())


def test_backend_flags_of_a_cpu_tensor_match_torch():
    torch = pytest.importorskip("torch")
    names = ["is_cuda", "is_xpu", "is_mps", "is_meta", "is_quantized", "is_sparse", "is_sparse_csr", "is_mkldnn",
             "is_nested", "is_vulkan", "is_ipu", "is_maia", "is_mtia"]
    ours, theirs = ember.zeros(2), torch.zeros(2)
    assert {n: getattr(ours, n) for n in names} == {n: getattr(theirs, n) for n in names}


def test_cublas_switches_reach_the_core():
    """The switches cuBLAS reads at each GPU product (kernels/cuda/blas.cpp) follow the Python ones."""
    matmul = ember.backends.cuda.matmul
    try:
        assert ember._C._cuda_matmul_flags() == (False, True, True)  # PyTorch's defaults
        ember.set_float32_matmul_precision("medium")
        assert ember._C._cuda_matmul_flags()[0] is True and matmul.allow_tf32
        matmul.allow_fp16_reduced_precision_reduction = False
        matmul.allow_bf16_reduced_precision_reduction = False
        assert ember._C._cuda_matmul_flags() == (True, False, False)
        assert not matmul.allow_fp16_reduced_precision_reduction
        matmul.allow_tf32 = False
        assert ember._C._cuda_matmul_flags() == (False, False, False)
        assert ember.get_float32_matmul_precision() == "highest"
    finally:
        matmul.allow_fp16_reduced_precision_reduction = True
        matmul.allow_bf16_reduced_precision_reduction = True
        ember.set_float32_matmul_precision("highest")
