"""Small namespaces against torch 2.13 (CPU build): nn.parallel's functions, utils.checkpoint's
extras, testing.assert_allclose, autograd's engine switches and variable, and the backends."""
import collections
import functools
import warnings

import numpy as np
import pytest

import ember
from cuda_absent import same_absence

torch = pytest.importorskip("torch")

LIBS = (torch, ember)
Pair = collections.namedtuple("Pair", "a b")


def _outcome(fn):
    """("ok", value) or (exception type name, message), with the library's name made neutral."""
    try:
        return ("ok", fn())
    except Exception as e:  # noqa: BLE001 - the outcome is what is compared
        return (type(e).__name__, str(e).replace("ember", "torch").replace("Ember", "PyTorch"))


def _same_outcome(make):
    """make(lib) -> callable; both libraries must end the same way (same value or same error)."""
    (torch_kind, torch_val), (ember_kind, ember_val) = got = [_outcome(make(lib)) for lib in LIBS]
    no_gpu_either_way = torch_kind != "ok" and ember_kind == "RuntimeError" and same_absence(RuntimeError(ember_val),
                                                                                               torch_val)
    if not no_gpu_either_way:
        assert got[1] == got[0]
    return got[0]


# ---------------------------------------------------------------- nn.parallel

@pytest.mark.parametrize("inputs, devices", [
    ([1, 2], [0, 1]), ({"a": 1, "b": [2]}, [0, 1, 2]), ((), [0, 1]), (None, (0, 1)), ((1, "s", None), [3]),
    (Pair(1, "s"), [0, 1]), ([], [0]), ({}, [0, 1]), (5, []),
])
def test_scatter_of_objects_matches_torch(inputs, devices):
    kind, value = _same_outcome(lambda lib: lambda: lib.nn.parallel.scatter(inputs, devices))
    assert kind == "ok"
    got = ember.nn.parallel.scatter(inputs, devices)
    assert [type(x) for x in got] == [type(x) for x in value]


@pytest.mark.parametrize("devices", [["cpu"], [0, "cpu"], ["cuda:0", "cpu"]])
def test_scatter_of_tensors_to_cpu_devices_matches_torch(devices):
    kind, _ = _same_outcome(lambda lib: lambda: lib.nn.parallel.scatter([lib.ones(4)], devices))
    assert kind == "ValueError"


def test_scatter_of_tensors_needs_an_accelerator():
    # torch's CPU build fails on a missing binding (AttributeError); Ember says why, as a RuntimeError
    for devices in ([0, 1], [], ["cuda:1"]):
        with pytest.raises((AttributeError, RuntimeError)):
            torch.nn.parallel.scatter((torch.ones(4), 1), devices)
        with pytest.raises(RuntimeError, match="accelerator"):
            ember.nn.parallel.scatter((ember.ones(4), 1), devices)


def test_scatter_kwargs_matches_torch():
    from ember.nn.parallel.scatter_gather import scatter_kwargs as ember_sk
    from torch.nn.parallel.scatter_gather import scatter_kwargs as torch_sk
    for args in (((1,), {"a": 2}, [0, 1]), ((), {"a": 2}, [0, 1]), ((1, 2), None, [0, 1, 2]), ((), None, [0])):
        assert ember_sk(*args) == torch_sk(*args)


@pytest.mark.parametrize("outputs", [
    [None, None], [[None], [None]], [{"a": None}, {"a": None, "b": None}], [1, 2], [Pair(None, None)] * 2,
    [(None, [None]), (None, [None])], [], [{"k": (None,)}, {"k": (None,)}],
])
def test_gather_of_objects_matches_torch(outputs):
    _same_outcome(lambda lib: lambda: lib.nn.parallel.gather(outputs, 0))


def test_gather_of_tensors_matches_torch():
    for target in (0, "cpu", -1, None):
        kind, msg = _same_outcome(lambda lib: lambda: lib.nn.parallel.gather([{"x": lib.ones(2)}] * 2, target))
        assert kind == "AssertionError" and "CPU tensors" in msg


def test_replicate_matches_torch():
    def net(lib):
        return lib.nn.Sequential(lib.nn.ReLU(), lib.nn.Sequential(lib.nn.Tanh(), None))
    assert _same_outcome(lambda lib: lambda: lib.nn.parallel.replicate(lib.nn.Linear(2, 2), []))[0] == "ok"
    for devices in (["cpu"], ["cuda:0", "cpu"]):
        assert _same_outcome(lambda lib: lambda: lib.nn.parallel.replicate(net(lib), devices))[0] == "ValueError"
    assert _same_outcome(lambda lib: lambda: lib.nn.parallel.replicate(lib.nn.Linear(2, 2), [0]))[0] == \
        "AssertionError"
    with pytest.raises(RuntimeError, match="accelerator"):
        ember.nn.parallel.replicate(ember.nn.Linear(2, 2), [0], detach=True)
    for lib in LIBS:
        model = net(lib)
        replicas = lib.nn.parallel.replicate(model, [0, 1])
        assert len(replicas) == 2
        for r in replicas:
            assert type(r) is type(model) and r is not model
            assert type(r[0]) is type(model[0]) and r[0] is not model[0]
            assert r[1][1] is None and r[1][0] is not model[1][0]
            assert r._is_replica
        assert replicas[0][0] is not replicas[1][0]
        flat = lib.nn.parallel.replicate(lib.nn.Sequential(lib.nn.ReLU(), lib.nn.Tanh()), [0])[0]
        x = lib.tensor([-1.0, 2.0])
        np.testing.assert_allclose(flat(x).numpy(), np.tanh([0.0, 2.0]), rtol=1e-6)


def test_parallel_apply_matches_torch():
    def call(lib, n_inputs=1, **kw):
        mods = [lib.nn.Linear(3, 2)]
        return lambda: lib.nn.parallel.parallel_apply(mods, [(lib.ones(1, 3),)] * n_inputs, **kw)
    assert _same_outcome(lambda lib: call(lib, 2))[0] == "AssertionError"
    assert _same_outcome(lambda lib: call(lib, kwargs_tup=[{}, {}]))[0] == "AssertionError"
    assert _same_outcome(lambda lib: call(lib, devices=[0, 1]))[0] == "AssertionError"
    assert _same_outcome(lambda lib: call(lib, devices=["cpu"]))[0] == "ValueError"
    for kw in (dict(), dict(devices=[0]), dict(devices=["cuda:0"]), dict(devices=[None])):
        assert _same_outcome(lambda lib: call(lib, **kw)) == ("RuntimeError", "Cannot access accelerator device when "
                                                                              "none is available.")
    assert _same_outcome(lambda lib: lambda: lib.nn.parallel.parallel_apply([], [])) == \
        ("AssertionError", "No available accelerator found.")


def test_parallel_namespace_matches_torch():
    assert sorted(ember.nn.parallel.__all__) == sorted(torch.nn.parallel.__all__)


# ---------------------------------------------------------------- utils.checkpoint extras

def test_checkpoint_names_match_torch():
    assert sorted(ember.utils.checkpoint.__all__) == sorted(torch.utils.checkpoint.__all__)
    assert [(p.name, p.value) for p in ember.utils.checkpoint.CheckpointPolicy] == \
        [(p.name, p.value) for p in torch.utils.checkpoint.CheckpointPolicy]


def test_default_device_type_and_device_states_match_torch():
    for lib in LIBS:
        ck = lib.utils.checkpoint
        saved = ck.DefaultDeviceType._default_device_type
        try:
            ck.DefaultDeviceType._default_device_type = None
            assert ck.DefaultDeviceType.get_device_type() == "cpu"
            ck.DefaultDeviceType.set_device_type()
            assert ck.DefaultDeviceType.get_device_type() == "cuda"
            ck.DefaultDeviceType.set_device_type("meta")
            assert ck.DefaultDeviceType.get_device_type() == "meta"
        finally:
            ck.DefaultDeviceType._default_device_type = saved
        assert ck.get_device_states(lib.ones(2), 3, [lib.zeros(1)], {"k": lib.ones(1)}) == ([], [])
        assert ck.get_device_states() == ([], [])
    for kw in (dict(), dict(device_type="cpu"), dict(device_type="meta"), dict(device_type="cuda"),
               dict(device_type="bogus")):
        for devices in ([], [0]):
            _same_outcome(lambda lib: lambda: lib.utils.checkpoint.set_device_states(devices, [lib.get_rng_state()]
                                                                                     * len(devices), **kw))


def test_set_checkpoint_debug_enabled_nests_and_restores():
    for lib in LIBS:
        ck = lib.utils.checkpoint
        assert ck._checkpoint_debug_enabled is None
        with ck.set_checkpoint_debug_enabled(True):
            assert ck._checkpoint_debug_enabled is True
            with ck.set_checkpoint_debug_enabled(None):
                assert ck._checkpoint_debug_enabled is None
            assert ck._checkpoint_debug_enabled is True
        assert ck._checkpoint_debug_enabled is None
        x = lib.ones(3, requires_grad=True)
        with ck.set_checkpoint_debug_enabled(True):
            ck.checkpoint(lambda t: t.sin(), x, use_reentrant=False).sum().backward()
        np.testing.assert_allclose(x.grad.numpy(), np.cos(np.ones(3)), rtol=1e-6)


def test_selective_checkpoint_contexts_validate_as_torch():
    for arg in ([], lambda ctx, op, *a, **k: None):
        for lib in LIBS:
            pair = lib.utils.checkpoint.create_selective_checkpoint_contexts(arg)
            assert isinstance(pair, tuple) and len(pair) == 2
    for arg in (3, "mm", None):
        assert _same_outcome(lambda lib: lambda: lib.utils.checkpoint.create_selective_checkpoint_contexts(arg))[0] \
            == "TypeError"
    kind, msg = _same_outcome(lambda lib: lambda: lib.utils.checkpoint.create_selective_checkpoint_contexts(["mm"]))
    assert kind == "ValueError" and "OpOverload" in msg
    ctx = ember.utils.checkpoint.SelectiveCheckpointContext(is_recompute=False, op_output=3)
    assert (ctx.is_recompute, ctx.op_output) == (False, 3)
    with pytest.raises(TypeError):
        ember.utils.checkpoint.SelectiveCheckpointContext(False)


def test_selective_checkpoint_gives_torch_gradients():
    rs = np.random.RandomState(0)
    a, b = rs.randn(4, 4).astype(np.float32), rs.randn(4, 4).astype(np.float32)
    grads = []
    for lib in LIBS:
        ck = lib.utils.checkpoint
        x, y = lib.tensor(a, requires_grad=True), lib.tensor(b, requires_grad=True)

        def policy(ctx, op, *args, **kwargs):
            return ck.CheckpointPolicy.PREFER_RECOMPUTE

        def fn(x, y):
            return lib.sigmoid(lib.matmul(lib.matmul(x, y), y)) * y
        out = ck.checkpoint(fn, x, y, use_reentrant=False,
                            context_fn=functools.partial(ck.create_selective_checkpoint_contexts, policy))
        out.sum().backward()
        grads.append((out.detach().numpy(), x.grad.numpy(), y.grad.numpy()))
    for e, t in zip(grads[1], grads[0]):
        np.testing.assert_allclose(e, t, rtol=1e-5, atol=1e-6)


def _count_recomputes(lib, grouped):
    calls = [0]

    def fn(x, z):
        calls[0] += 1
        return x.sin() * 2, z.exp()
    x = lib.tensor([0.5, -1.0, 2.0], requires_grad=True)
    z = lib.tensor([1.0, 0.25, -0.5], requires_grad=True)
    a, b = lib.utils.checkpoint.checkpoint(fn, x, z, use_reentrant=False)
    if grouped:
        with lib.utils.checkpoint.GraphExecGroup() as group:
            assert lib.utils.checkpoint.GraphExecGroup._get_current_group() is group
            a.sum().backward()
            b.sum().backward()
    else:
        a.sum().backward(retain_graph=True)
        b.sum().backward()
    return calls[0], x.grad.numpy(), z.grad.numpy()


def test_graph_exec_group_recomputes_once_like_torch():
    for grouped in (False, True):
        t, e = _count_recomputes(torch, grouped), _count_recomputes(ember, grouped)
        assert e[0] == t[0] == (2 if grouped else 3)
        np.testing.assert_allclose(e[1], t[1], rtol=1e-6)
        np.testing.assert_allclose(e[2], t[2], rtol=1e-6)
    assert ember.utils.checkpoint.GraphExecGroup._get_current_group() is None


def test_graph_exec_group_does_not_nest():
    def nested(lib):
        def run():
            with lib.utils.checkpoint.GraphExecGroup():
                with lib.utils.checkpoint.GraphExecGroup():
                    pass
        return run
    t, e = _outcome(nested(torch)), _outcome(nested(ember))
    assert e[0] == t[0] == "RuntimeError"
    # the message names the enclosing group's object, whose address differs
    assert e[1].split(" at 0x")[0] == t[1].split(" at 0x")[0]
    assert ember.utils.checkpoint.GraphExecGroup._get_current_group() is None


# ---------------------------------------------------------------- testing.assert_allclose

@pytest.mark.parametrize("actual, expected, kw", [
    ([1.0, 2.0], [1.0, 2.0], {}), ([1.0, 2.0], [1.0, 2.00001], {}), ([1.0, 2.0], [1.0, 2.001], {}),
    ([1.0, float("nan")], [1.0, float("nan")], {}), ([1.0, float("nan")], [1.0, float("nan")], dict(equal_nan=False)),
    ([1, 2], [1.0, 2.0], {}), ([1.0, 2.0], [1.0, 2.5], dict(rtol=0.3, atol=0.0)), ([1.0], [1.5], dict(rtol=0.1)),
    ([1.0, 2.0], [1.0, 3.0], dict(msg="custom")), ([[1.0]], [1.0], {}),
])
def test_assert_allclose_matches_torch(actual, expected, kw):
    def make(lib):
        def run():
            with warnings.catch_warnings(record=True) as w:
                warnings.simplefilter("always")
                lib.testing.assert_allclose(lib.tensor(actual, dtype=lib.float32) if isinstance(actual[0], float)
                                            else lib.tensor(actual), expected, **kw)
            return [(x.category, str(x.message)) for x in w]
        return run
    t, e = _outcome(make(torch)), _outcome(make(ember))
    assert e[0] == t[0]
    if t[0] == "ok":
        assert e[1] == t[1] and e[1][0][0] is FutureWarning
    elif t[0] == "AssertionError" and "msg" in kw:
        assert e[1] == t[1]


def test_assert_allclose_float64_tolerance_matches_torch():
    for delta, passes in ((1e-9, True), (1e-4, False)):
        for lib in LIBS:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                if passes:
                    lib.testing.assert_allclose(lib.tensor([1.0], dtype=lib.float64), [1.0 + delta])
                else:
                    with pytest.raises(AssertionError):
                        lib.testing.assert_allclose(lib.tensor([1.0], dtype=lib.float64), [1.0 + delta])


# ---------------------------------------------------------------- autograd switches

def _switch_states():
    return (torch._C._is_multithreading_enabled(), torch._C._is_grad_layout_enforcement_enabled())


def _ember_states():
    s = ember.autograd.grad_mode._engine_switches
    return (s.multithreading, s.grad_layout_enforcement)


def test_autograd_switches_follow_torch():
    steps = [
        lambda lib: lib.autograd.set_multithreading_enabled(False),
        lambda lib: lib.autograd.enforce_grad_layout_policy(False),
        lambda lib: lib.autograd.set_multithreading_enabled(True),
        lambda lib: lib.autograd.enforce_grad_layout_policy(),
    ]
    for step in steps:
        step(torch)
        step(ember)
        assert _ember_states() == _switch_states()
    for lib, states in ((torch, _switch_states), (ember, _ember_states)):
        with lib.autograd.set_multithreading_enabled(False):
            with lib.autograd.enforce_grad_layout_policy(False):
                assert states() == (False, False)
            assert states() == (False, True)
        assert states() == (True, True)


def test_autograd_switches_as_decorators_follow_torch():
    seen = {}
    for lib, states in ((torch, _switch_states), (ember, _ember_states)):
        @lib.autograd.enforce_grad_layout_policy(False)
        def inner():
            return states()
        after_decoration = states()
        seen[lib.__name__] = (after_decoration, inner(), states())
        lib.autograd.set_multithreading_enabled(True)
        lib.autograd.enforce_grad_layout_policy(True)
    assert seen["ember"] == seen["torch"]
    x = ember.ones(2, requires_grad=True)
    with ember.autograd.set_multithreading_enabled(False):
        (x * 3).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [3.0, 3.0])


def test_autograd_variable_raises_as_torch():
    assert _same_outcome(lambda lib: lambda: lib.autograd.variable(lib.ones(1)))[0] == "RuntimeError"
    assert _same_outcome(lambda lib: lambda: lib.autograd.variable())[0] == "RuntimeError"


# ---------------------------------------------------------------- backends

def test_backend_availability_matches_cpu_torch():
    for name in ("kleidiai", "cusparselt"):
        assert getattr(ember.backends, name).is_available() == getattr(torch.backends, name).is_available()
    assert ember.backends.cusparselt.version() is None and ember.backends.cusparselt.get_max_alg_id() is None
    assert ember.backends.nnpack.is_available() is False  # Ember does not link NNPACK
    assert ember.backends.opt_einsum.is_available() == torch.backends.opt_einsum.is_available()
    assert ember.backends.opt_einsum.get_opt_einsum() is torch.backends.opt_einsum.get_opt_einsum()


def test_opt_einsum_flags_match_torch():
    assert _same_outcome(lambda lib: lambda: lib.backends.opt_einsum.set_flags())
    for args in ((True,), (None, "greedy"), (False, "bogus")):
        _same_outcome(lambda lib: lambda: lib.backends.opt_einsum.set_flags(*args))
    for lib in LIBS:
        with lib.backends.opt_einsum.flags(enabled=False):
            pass
    if not ember.backends.opt_einsum.is_available():
        assert ember.backends.opt_einsum.enabled is False and ember.backends.opt_einsum.strategy is None


def test_mha_fastpath_switch_matches_torch():
    for lib in LIBS:
        assert lib.backends.mha.get_fastpath_enabled() is True
        lib.backends.mha.set_fastpath_enabled(False)
        assert lib.backends.mha.get_fastpath_enabled() is False
        lib.backends.mha.set_fastpath_enabled(True)


def test_nnpack_and_miopen_flags_match_torch():
    for value in (True, False, 1):
        _same_outcome(lambda lib: lambda: lib.backends.nnpack.set_flags(value))
        _same_outcome(lambda lib: lambda: lib.backends.miopen.set_flags(value))
    for lib in LIBS:
        lib.backends.nnpack.set_flags(True)
        with lib.backends.nnpack.flags():
            assert lib.backends.nnpack.set_flags(False) == (False,)
        assert lib.backends.nnpack.set_flags(True) == (True,)
        lib.backends.miopen.immediate = False
        with lib.backends.miopen.flags(immediate=True):
            assert lib.backends.miopen.immediate is True
        assert lib.backends.miopen.immediate is False
    _same_outcome(lambda lib: lambda: setattr(lib.backends.miopen, "immediate", 2))


def test_quantized_engine_checks_match_torch():
    assert _same_outcome(lambda lib: lambda: setattr(lib.backends.quantized, "engine", "bogus"))[0] == "RuntimeError"
    assert _same_outcome(lambda lib: lambda: setattr(lib.backends.quantized, "supported_engines", []))[0] == \
        "RuntimeError"
    q = ember.backends.quantized
    # Ember has no quantized kernels: its one engine is "none", and naming a real one is refused as
    # torch refuses an engine its build lacks
    assert q.engine == "none" and q.supported_engines == ["none"]
    with pytest.raises(RuntimeError, match="quantized engine X86 is not supported"):
        q.engine = "x86"
    q.engine = "none"
    assert q.engine == "none"


def test_python_native_matches_torch():
    for lib in LIBS:
        pn = lib.backends.python_native
        assert pn.all_dsls == ["cutedsl", "triton"] and pn.available_dsls == []
        assert pn.get_dsl_operations("triton") == [] and pn.get_dsl_operations("nope") == []
        assert repr(pn.triton) == "DSLController(triton, unavailable, enabled)"
        assert pn.triton is pn.triton and pn.triton.name == "triton" and pn.triton.version is None
        pn.triton.enabled = False
        assert pn.is_dsl_disabled("triton") and repr(pn.triton).endswith("disabled)")
        pn.triton.enabled = True
        with pn.cutedsl.disabled():
            assert not pn.cutedsl.enabled
        assert pn.cutedsl.enabled
        pn.disable_operations("op_a")
        with pn.operations_disabled("op_a", "op_b"):
            assert pn.is_operation_disabled("op_b")
        assert pn.is_operation_disabled("op_a") and not pn.is_operation_disabled("op_b")
        pn.enable_operations("op_a")
        assert not pn.is_operation_disabled("op_a")
        assert not pn.is_dsl_disabled("nope")
        assert {"triton", "cutedsl", "available_dsls"} <= set(dir(pn))
    assert _same_outcome(lambda lib: lambda: lib.backends.python_native.nope)[0] == "AttributeError"
