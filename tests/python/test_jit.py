"""ember.jit.trace / save / load and ember.compile: replays compute what eager code computes, or
raise; they never answer with something the trace baked in."""
import io
import os
import warnings

import numpy as np
import pytest

import ember
import ember.nn as nn
import ember.nn.functional as F


def _close(a, b, tol=1e-6):
    assert a.shape == b.shape and a.dtype == b.dtype
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=tol, atol=tol)


class CNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 4, 3, padding=1)
        self.bn = nn.BatchNorm2d(4)
        self.fc = nn.Linear(4 * 4 * 4, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.bn(self.conv1(x))), 2)
        return F.log_softmax(self.fc(ember.flatten(x, 1)), dim=1)


def _mlp():
    ember.manual_seed(0)
    return nn.Sequential(nn.Linear(6, 16), nn.GELU(), nn.Linear(16, 3))


# ---------------------------------------------------------------- trace
def test_trace_matches_eager_and_runs_other_batch_sizes():
    m = _mlp()
    x = ember.randn(4, 6)
    t = ember.jit.trace(m, x)
    _close(t(x), m(x))
    for n in (1, 7, 0):
        y = ember.randn(n, 6)
        _close(t(y), m(y))
    assert [k for k in t.state_dict()] == [k for k in m.state_dict()]
    assert "linear" in t.graph.nodes() and "gelu" in t.graph.nodes()
    assert "linear(" in t.code


def test_trace_gradients_equal_eager():
    m = _mlp().double()
    x = ember.randn(5, 6, dtype=ember.float64, requires_grad=True)
    t = ember.jit.trace(m, x)
    t(x).square().sum().backward()
    gx, gw = x.grad.clone(), m[0].weight.grad.clone()
    x.grad = None
    m.zero_grad()
    m(x).square().sum().backward()
    _close(gx, x.grad, 1e-12)
    _close(gw, m[0].weight.grad, 1e-12)
    assert ember.autograd.gradcheck(lambda a: t(a), (x,))


def test_trace_follows_parameter_updates():
    m = _mlp()
    x = ember.randn(3, 6)
    t = ember.jit.trace(m, x)
    with ember.no_grad():
        m[0].weight.add_(1.0)
    _close(t(x), m(x))
    t.double()  # new tensors: the graph is rebound to them (and no longer fits float32 inputs)
    assert m[0].weight.dtype == ember.float64
    with pytest.raises(RuntimeError, match="dtype"):
        t(x)


def test_trace_batchnorm_training_updates_running_stats_like_eager():
    ember.manual_seed(1)
    a, b = CNN(), CNN()
    b.load_state_dict(a.state_dict())
    x = ember.randn(2, 1, 8, 8)
    t = ember.jit.trace(a, x)  # tracing ran forward once (as eager): stats moved once
    b(x)
    y = ember.randn(3, 1, 8, 8)
    _close(t(y), b(y))
    _close(a.bn.running_mean, b.bn.running_mean)
    _close(a.bn.running_var, b.bn.running_var)
    assert a.bn.num_batches_tracked.item() == b.bn.num_batches_tracked.item() == 2


def test_shape_read_makes_graph_static_and_other_shapes_raise():
    m = _mlp()

    def f(x):
        return m(x.view(x.size(0), -1))

    x = ember.randn(4, 2, 3)
    with pytest.warns(ember.jit.TracerWarning, match="shape"):
        t = ember.jit.trace(f, x)
    _close(t(x + 1), f(x + 1))
    with pytest.raises(RuntimeError, match=r"shape \[2, 2, 3\].*traced code read a shape"):
        t(ember.randn(2, 2, 3))


def test_flatten_instead_of_size_stays_dynamic():
    m = _mlp()
    t = ember.jit.trace(lambda x: m(ember.flatten(x, 1)), ember.randn(4, 2, 3))
    y = ember.randn(9, 2, 3)
    _close(t(y), m(y.flatten(1)))


def test_data_dependent_branch_is_guarded():
    def f(x):
        if x.sum() > 0:
            return x * 2
        return x - 1

    pos = ember.ones(3)
    with pytest.warns(ember.jit.TracerWarning, match="values"):
        t = ember.jit.trace(f, pos)
    _close(t(pos), pos * 2)
    with pytest.raises(RuntimeError, match="guard failed"):
        t(-pos)  # eager would take the other branch: never the wrong answer


def test_item_and_tolist_guards():
    def f(x):
        k = int(x[0].item())
        return x * k

    x = ember.tensor([2.0, 3.0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = ember.jit.trace(f, x)
    _close(t(ember.tensor([2.0, 5.0])), ember.tensor([4.0, 10.0]))
    with pytest.raises(RuntimeError, match="guard failed"):
        t(ember.tensor([3.0, 5.0]))


def test_numpy_read_is_guarded():
    def f(x):
        return x + float(x.numpy().max())

    x = ember.tensor([1.0, 2.0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = ember.jit.trace(f, x)
    _close(t(x), f(x))
    with pytest.raises(RuntimeError, match="guard failed"):
        t(ember.tensor([1.0, 3.0]))


def test_dtype_and_rank_mismatch_raise():
    t = ember.jit.trace(lambda x: x.exp(), ember.randn(2, 3))
    with pytest.raises(RuntimeError, match="dtype float64 but was traced with float32"):
        t(ember.randn(2, 3, dtype=ember.float64))
    with pytest.raises(RuntimeError, match="3 dimensions"):
        t(ember.randn(2, 3, 4))
    with pytest.raises(TypeError, match="takes 1 tensor inputs but got 2"):
        t._c.run([ember.randn(2, 3), ember.randn(2, 3)])


def test_backward_inside_trace_is_refused():
    def f(x):
        y = (x * x).sum()
        y.backward()
        return x.grad

    with pytest.raises(RuntimeError, match="cannot trace.*backward"):
        ember.jit.trace(f, ember.randn(3, requires_grad=True))
    # the thread is free to trace again
    ember.jit.trace(lambda x: x + 1, ember.randn(2))


def test_failed_trace_leaves_no_tracer_behind():
    def f(x):
        raise ValueError("boom")

    with pytest.raises(ValueError):
        ember.jit.trace(f, ember.randn(2))
    assert not ember.jit.is_tracing()
    t = ember.jit.trace(lambda x: x.sin(), ember.randn(2))
    assert t.graph.nodes() == ["sin"]


def test_constants_tuples_nested_inputs_and_inplace():
    c = ember.tensor([1.0, 2.0, 3.0])

    def f(pair, z):
        a, b = pair
        w = a * c
        w.add_(b)
        return w, [z.relu(), a.t()]

    a, b, z = ember.randn(3), ember.randn(3), ember.randn(2, 2)
    t = ember.jit.trace(f, ((a, b), z))
    for args in [((a, b), z), ((ember.randn(3), ember.randn(3)), ember.randn(2, 2))]:
        got, ref = t(*args), f(*args)
        assert isinstance(got, tuple) and isinstance(got[1], list)
        _close(got[0], ref[0])
        _close(got[1][0], ref[1][0])
        _close(got[1][1], ref[1][1])
    c.mul_(2)  # a captured tensor is held by reference, as eager code would see it
    _close(t((a, b), z)[0], f((a, b), z)[0])


def test_random_ops_replay_with_the_generator():
    def f(x):
        return F.dropout(x, 0.5, training=True)

    x = ember.ones(1000)
    t = ember.jit.trace(f, x)
    ember.manual_seed(3)
    r1 = t(x)
    ember.manual_seed(3)
    r2 = f(x)
    _close(r1, r2)


def test_views_and_aliasing_replay_like_eager():
    def f(x):
        y = x.clone()
        v = y[1:]
        v.mul_(10)
        return y, v.sum()

    x = ember.arange(4.0)
    t = ember.jit.trace(f, x)
    got = t(ember.arange(4.0) + 1)
    ref = f(ember.arange(4.0) + 1)
    _close(got[0], ref[0])
    _close(got[1], ref[1])


# ---------------------------------------------------------------- save / load
def test_save_load_roundtrip(tmp_path):
    ember.manual_seed(2)
    m = CNN().eval()
    x = ember.randn(2, 1, 8, 8)
    t = ember.jit.trace(m, x)
    path = tmp_path / "cnn.pt"
    ember.jit.save(t, str(path))
    loaded = ember.jit.load(str(path))
    y = ember.randn(5, 1, 8, 8)
    _close(loaded(y), m(y))
    assert sorted(loaded.state_dict()) == sorted(m.state_dict())
    assert loaded.conv1.weight.requires_grad and not loaded.bn.running_mean.requires_grad
    loaded(y).sum().backward()
    assert loaded.conv1.weight.grad is not None
    buf = io.BytesIO()
    t.save(buf)
    buf.seek(0)
    _close(ember.jit.load(buf)(y), m(y))


def test_load_rejects_bad_files(tmp_path):
    t = ember.jit.trace(lambda x: x.tanh(), ember.randn(2))
    good = tmp_path / "g.pt"
    t.save(str(good))
    data = good.read_bytes()
    bad = tmp_path / "bad.pt"
    bad.write_bytes(data[: len(data) // 2])
    with pytest.raises(RuntimeError):
        ember.jit.load(str(bad))
    plain = tmp_path / "plain.safetensors"
    ember.serialize.save_archive if False else None
    from ember import safetensors as st
    st.save_file({"a": ember.ones(2)}, str(plain))
    with pytest.raises(RuntimeError, match="not an ember.jit graph file"):
        ember.jit.load(str(plain))
    # a graph naming an op Ember does not have, or reading a value before it exists
    doc = t.graph.json()
    import json
    for mutate, msg in [(lambda d: d["nodes"][0].update(op="os.system"), "unknown op 'os.system'"),
                        (lambda d: d["nodes"][0]["args"][0].update(value=99), "outside the graph|before it is defined"),
                        (lambda d: d.update(version=7), "version 7"),
                        (lambda d: d["nodes"][0]["args"].append({"int": 1}), "has 2 arguments")]:
        d = json.loads(json.dumps(doc))
        mutate(d)
        with pytest.raises(RuntimeError, match=msg):
            g = ember._C._jit.from_json(json.dumps(d), {})
            g.run([ember.randn(2)])


def test_script_points_to_trace():
    with pytest.raises(NotImplementedError, match="trace"):
        ember.jit.script(_mlp())


# ---------------------------------------------------------------- compile
def test_compile_function_caches_per_signature():
    calls = []

    def f(x, y):
        calls.append(1)
        return (x * y).sigmoid() + y

    cf = ember.compile(f)
    x, y = ember.randn(4, 3), ember.randn(3)
    _close(cf(x, y), f(x, y))
    n = len(calls)
    for _ in range(3):
        _close(cf(x + 1, y), (((x + 1) * y).sigmoid() + y))
    assert len(calls) == n  # replayed, not re-run in Python
    _close(cf(ember.randn(7, 3), y).shape and cf(x, y), f(x, y))  # another batch size: same graph
    assert cf.stats["traces"] == 1
    cf(x.double(), y.double())  # another dtype: another trace
    assert cf.stats["traces"] == 2


def test_compile_traces_each_branch():
    def f(x):
        if x.sum() > 0:
            return x * 2
        return x - 1

    cf = ember.compile(f)
    p, n = ember.ones(3), -ember.ones(3)
    for v in (p, n, p, n):
        _close(cf(v), f(v))
    assert cf.stats["traces"] == 2 and cf.stats["graph_calls"] == 2


def test_compile_static_shape_retraces_per_shape():
    cf = ember.compile(lambda x: x.view(x.size(0), -1).sum(1))
    for n in (2, 3, 2, 3):
        x = ember.randn(n, 2, 2)
        _close(cf(x), x.view(n, -1).sum(1))
    assert cf.stats["traces"] == 2


def test_compile_module_gradients_and_state_dict():
    m = _mlp().double()
    cm = ember.compile(m)
    assert all(k.startswith("_orig_mod.") for k in cm.state_dict())
    x = ember.randn(5, 6, dtype=ember.float64)
    for _ in range(2):
        m.zero_grad()
        cm(x).square().sum().backward()
    g = m[0].weight.grad.clone()
    m.zero_grad()
    m(x).square().sum().backward()
    _close(g, m[0].weight.grad, 1e-12)
    assert cm._compiled.stats["graph_calls"] >= 1
    assert cm._orig_mod is m and cm.training == m.training


def test_compile_falls_back_to_eager_when_untraceable():
    def f(x):
        y = (x * x).sum()
        (g,) = ember.autograd.grad(y, x)
        return g

    cf = ember.compile(f)
    x = ember.randn(3, requires_grad=True)
    _close(cf(x), 2 * x)
    _close(cf(x), 2 * x)
    assert cf.stats["traces"] == 0 and cf.eager_reasons
    with pytest.raises(RuntimeError, match="cannot trace"):
        ember.compile(f, fullgraph=True)(x)


def test_compile_sees_replaced_parameters():
    m = _mlp()
    cm = ember.compile(m)
    x = ember.randn(2, 6)
    cm(x)
    cm(x)
    m[0].weight = nn.Parameter(ember.zeros(16, 6))
    _close(cm(x), m(x))


# ---------------------------------------------------------------- against PyTorch
def test_trace_agrees_with_torch_jit_trace():
    torch = pytest.importorskip("torch")
    m = _mlp()
    tm = torch.nn.Sequential(torch.nn.Linear(6, 16), torch.nn.GELU(), torch.nn.Linear(16, 3))
    tm.load_state_dict({k: torch.from_numpy(v.detach().numpy().copy()) for k, v in m.state_dict().items()})
    x = np.random.default_rng(0).standard_normal((4, 6)).astype(np.float32)
    et = ember.jit.trace(m, ember.from_numpy(x))
    tt = torch.jit.trace(tm, torch.from_numpy(x))
    y = np.random.default_rng(1).standard_normal((9, 6)).astype(np.float32)
    np.testing.assert_allclose(et(ember.from_numpy(y)).detach().numpy(), tt(torch.from_numpy(y)).detach().numpy(),
                               rtol=1e-5, atol=1e-6)


def test_custom_function_with_grad_is_refused_and_compile_runs_it_eagerly():
    class Cube(ember.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x * x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * 7.0  # deliberately not 3x^2: a graph of the forward ops would get this wrong

    x = ember.randn(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="custom autograd.Function 'Cube'"):
        ember.jit.trace(lambda a: Cube.apply(a), x)
    cf = ember.compile(lambda a: Cube.apply(a))
    for _ in range(2):
        x.grad = None
        cf(x).sum().backward()
        _close(x.grad, ember.full((3,), 7.0))
    # without grad the forward ops are all there is: traceable
    t = ember.jit.trace(lambda a: Cube.apply(a), x.detach())
    _close(t(x.detach() + 1), (x.detach() + 1) ** 3, 1e-5)


def test_compile_runs_an_untraceable_call_once():
    calls = []

    def f(x):
        calls.append(1)
        (g,) = ember.autograd.grad((x * x).sum(), x)
        return g

    cf = ember.compile(f)
    cf(ember.randn(2, requires_grad=True))
    assert len(calls) == 1  # no second eager run after the trace was refused


@pytest.mark.parametrize("backend", ["interp", "codegen"])
def test_compile_fuses_elementwise_chains_with_fused_backward(backend, tmp_path, monkeypatch):
    if backend == "codegen" and not ember._C._fuser_codegen_available():
        pytest.skip("no C++ compiler for generated kernels")
    monkeypatch.setenv("EMBER_CACHE_DIR", str(tmp_path))
    ember._C._fuser_set_backend(backend)
    try:
        b = ember.randn(8, dtype=ember.float64)

        def f(x):
            h = x + b
            return (0.5 * h * (1.0 + ember.tanh(0.79788 * (h + 0.044715 * h * h * h)))).sum(-1)

        cf = ember.compile(f)
        x = ember.randn(5, 8, dtype=ember.float64, requires_grad=True)
        cf(x)
        entry = next(iter(cf._cache.values()))[0]
        assert entry.graph.num_fusion_groups >= 1
        before = ember._C._fuser_stats()
        got = cf(x)
        assert ember._C._fuser_stats()[0] > before[0]  # ran as one fused loop
        _close(got, f(x), 1e-12)
        (g1,) = ember.autograd.grad(got.sum(), x)
        (g2,) = ember.autograd.grad(f(x).sum(), x)
        _close(g1, g2, 1e-10)
        assert ember.autograd.gradcheck(cf, (x,))
        traces = cf.stats["traces"]
        y = ember.randn(3, 8, dtype=ember.float64, requires_grad=True)  # another batch size: the same graph
        _close(cf(y), f(y), 1e-12)
        assert cf.stats["traces"] == traces
    finally:
        ember._C._fuser_set_backend(None)


def test_torchscript_names_keep_their_eager_meaning():
    assert ember.jit.annotate(list, [1]) == [1]
    fut = ember.jit.fork(lambda a, b: a + b, ember.ones(2), 1)
    _close(ember.jit.wait(fut), ember.full((2,), 2.0))
    assert ember.jit.Attribute(3, int) == 3
    old = ember.jit.set_fusion_strategy([("STATIC", 1)])
    assert ember.jit.set_fusion_strategy(old) == [("STATIC", 1)]
    with ember.jit.strict_fusion():
        pass
    f = ember.jit.script_if_tracing(lambda x: x * 2)
    t = ember.jit.trace(lambda x: f(x) + 1, ember.ones(2))
    _close(t(ember.zeros(2)), ember.ones(2))


def test_outputs_and_inputs_are_freed_at_once():
    # paper §5.5: no reference cycles holding tensors until the cyclic GC runs
    import gc
    p, g = ember.randn(1 << 18), ember.randn(1 << 18)

    def f(p, g):
        return ((p - 0.001 * g) * 2.0, [p + g])

    t, cf = ember.jit.trace(f, (p, g)), ember.compile(f)
    cf(p, g)
    gc.collect()
    gc.disable()
    try:
        base = ember.cpu.memory_allocated()
        for _ in range(3):
            r = t(p, g)
            del r
            r = cf(p, g)
            del r
        assert ember.cpu.memory_allocated() == base
    finally:
        gc.enable()


def test_compile_dynamic_false_specializes_on_shapes():
    f = lambda x: (x * 2).relu()  # noqa: E731
    dyn, static = ember.compile(f), ember.compile(f, dynamic=False)
    for n in (2, 3, 2):
        x = ember.randn(n, 4)
        _close(dyn(x), f(x))
        _close(static(x), f(x))
    assert dyn.stats["traces"] == 1 and static.stats["traces"] == 2


@pytest.mark.parametrize("name", ["bn", "gn", "in", "bce", "bilinear", "mse", "ce"])
def test_nn_argument_checks_do_not_pin_shapes(name):
    ember.manual_seed(0)
    make = {
        "bn": lambda n: (nn.BatchNorm2d(3), (ember.randn(n, 3, 4, 4),)),
        "gn": lambda n: (nn.GroupNorm(1, 3), (ember.randn(n, 3, 4),)),
        "in": lambda n: (nn.InstanceNorm1d(3), (ember.randn(n, 3, 5),)),
        "bce": lambda n: (lambda a, b: F.binary_cross_entropy_with_logits(a, b), (ember.randn(n, 2), ember.rand(n, 2))),
        "bilinear": lambda n: (nn.Bilinear(3, 2, 4), (ember.randn(n, 3), ember.randn(n, 2))),
        "mse": lambda n: (lambda a, b: F.mse_loss(a, b), (ember.randn(n, 2), ember.randn(n, 2))),
        "ce": lambda n: (lambda a, b: F.cross_entropy(a, b), (ember.randn(n, 5), ember.randint(0, 5, (n,)))),
    }[name]
    m, args = make(3)
    if isinstance(m, nn.Module):
        m.eval()
    t = ember.jit.trace(m, args)
    assert not t._c.static_shapes
    _, other = make(6)
    _close(t(*other), m(*other), 1e-6)


def test_printing_records_nothing_and_guards_compare_nan_and_bool():
    def f(x):
        repr(x)  # printing inside traced code is not part of the graph
        return x * 2

    t = ember.jit.trace(f, ember.randn(3))
    assert t.graph.nodes() == ["mul"] and not t._c.has_guards

    def g(x):
        y = x.sum()
        return x + 1 if bool((x > 0).any()) and bool(y.isnan() | (y > -1e9)) else x

    nanx = ember.tensor([float("nan"), 1.0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = ember.jit.trace(lambda x: x * x.sum().item() if x.sum().isnan().item() else x, nanx)
    _close(t(nanx.clone()), nanx * float("nan"))  # NaN read at trace time matches NaN at replay
    with pytest.raises(RuntimeError, match="guard failed"):
        t(ember.tensor([0.0, 1.0]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tb = ember.jit.trace(g, ember.ones(2))
    _close(tb(ember.ones(2) * 3), ember.ones(2) * 4)
    with pytest.raises(RuntimeError, match="guard failed"):
        tb(-ember.ones(2))
