"""ember.distributed and DistributedDataParallel on one machine (loopback), 2 and 4 processes:
every collective against a single-process reference computed here, DDP against single-process
training, and the faults (a rank dying or raising, mismatched collectives, timeouts)."""
import datetime
import operator
import os
import sys
import tempfile
import threading
from functools import reduce as fold

import numpy as np
import pytest

import ember
import ember.distributed as dist

sys.path.insert(0, os.path.dirname(__file__))
import dist_util  # noqa: E402
from dist_workers import DTYPES, SHAPES, make_input, reference_training  # noqa: E402

pytestmark = pytest.mark.skipif(not dist.is_gloo_available(), reason="built without Gloo")


def _cast(a, dtype):
    """make_input's values as the dtype holds them (compared in float64 / bool)."""
    if dtype == "bool":
        return a.astype(bool)
    return a.astype(np.float64)


def _expected_reduce(arrays, op, dtype):
    if dtype == "bool":
        return {"MAX": np.logical_or, "BOR": np.logical_or, "MIN": np.logical_and}[op].reduce(arrays)
    ints = [a.astype(np.int64) for a in arrays] if op in ("BAND", "BOR", "BXOR") else arrays
    f = {"SUM": operator.add, "PRODUCT": operator.mul, "MIN": np.minimum, "MAX": np.maximum,
         "BAND": operator.and_, "BOR": operator.or_, "BXOR": operator.xor, "AVG": operator.add}[op]
    r = fold(f, ints)
    if op == "AVG":
        r = r / len(arrays)
    return _wrap(np.asarray(r, dtype=np.float64), dtype)


def _wrap(a, dtype):
    """Integer overflow as the dtype wraps it."""
    if dtype in ("int8", "uint8", "int32"):
        return a.astype(np.int64).astype(getattr(np, dtype)).astype(np.float64)
    return a


@pytest.fixture(scope="module", params=[2, 4])
def collective_results(request):
    ws = request.param
    return ws, dist_util.run("collectives", ws)


def _close(got, want, dtype):
    got = np.asarray(got)
    if dtype == "bool":
        np.testing.assert_array_equal(got.astype(bool), np.asarray(want).astype(bool))
    else:
        tol = {"float16": 2e-3, "bfloat16": 1e-2}.get(dtype, 1e-6)
        np.testing.assert_allclose(got.astype(np.float64), np.asarray(want, dtype=np.float64), rtol=tol, atol=tol)


def test_all_reduce(collective_results):
    ws, res = collective_results
    n = 0
    for key, got in res[0].items():
        if not (isinstance(key, tuple) and key[0] == "all_reduce"):
            continue
        _, dtype, shape, op = key
        ins = [_cast(make_input(r, dtype, shape), dtype) for r in range(ws)]
        want = _expected_reduce(ins, op, dtype)
        for r in range(ws):
            assert res[r][key].shape == tuple(shape)
            _close(res[r][key], want, dtype)
        # every rank ends with the same bits (DDP relies on it)
        for r in range(1, ws):
            np.testing.assert_array_equal(res[r][key], res[0][key])
        n += 1
    assert n > 150


def test_broadcast_reduce_gather_scatter(collective_results):
    ws, res = collective_results
    for dtype in DTYPES:
        for shape in SHAPES:
            ins = [_cast(make_input(r, dtype, shape), dtype) for r in range(ws)]
            for root in range(ws):
                for r in range(ws):
                    _close(res[r][("broadcast", dtype, shape, root)], ins[root], dtype)
            if dtype != "bool":
                _close(res[ws - 1][("reduce", dtype, shape)], _expected_reduce(ins, "SUM", dtype), dtype)
                # other ranks keep their input
                _close(res[0][("reduce", dtype, shape)], ins[0], dtype)
            for r in range(ws):
                for i in range(ws):
                    _close(res[r][("all_gather", dtype, shape)][i], ins[i], dtype)
                _close(res[r][("all_gather_into_tensor", dtype, shape)], np.stack(ins) if ins[0].size else
                       np.zeros((ws,) + tuple(shape)), dtype)
                _close(res[r][("scatter", dtype, shape)], _cast(make_input(100 + r, dtype, shape), dtype), dtype)
            for i in range(ws):
                _close(res[0][("gather", dtype, shape)][i], ins[i], dtype)
            assert res[1][("gather", dtype, shape)] is None


def test_reduce_scatter_and_all_to_all(collective_results):
    ws, res = collective_results
    for dtype in ["float32", "int64", "float64"]:
        ins = [make_input(r, dtype, (ws * 3, 4)) for r in range(ws)]
        total = sum(ins)
        for r in range(ws):
            _close(res[r][("reduce_scatter_tensor", dtype)], total[3 * r:3 * r + 3], dtype)
            _close(res[r][("all_to_all_single", dtype)], np.concatenate([ins[j][3 * r:3 * r + 3] for j in range(ws)]),
                   dtype)
            # uneven: rank j sent rows [sum(j+i+1 for i < r), +j+r+1) of its input to rank r
            parts = []
            for j in range(ws):
                inp = make_input(j, dtype, (sum(j + i + 1 for i in range(ws)), 2))
                start = sum(j + i + 1 for i in range(r))
                parts.append(inp[start:start + j + r + 1])
            _close(res[r][("all_to_all_uneven", dtype)], np.concatenate(parts), dtype)


def test_async_p2p_objects_groups(collective_results):
    ws, res = collective_results
    for r in range(ws):
        out = res[r]
        for i, t in enumerate(out["async"]):
            np.testing.assert_array_equal(t, np.full(5, sum(k + i for k in range(ws)), dtype=np.float32))
        assert out["async_done"]
        np.testing.assert_array_equal(out["ring"], np.full(4, (r - 1) % ws, dtype=np.float32))
        assert out["all_gather_object"] == [(k, list(range(k + 1)), "x" * k) for k in range(ws)]
        assert out["broadcast_object_list"] == [1, "two", [1.0, 1.0]]
        if r % 2 == 0:
            evens = [k for k in range(ws) if k % 2 == 0]
            assert out["subgroup"] == (float(sum(evens)), evens.index(r), len(evens))
        else:
            assert out["subgroup"] == (True, -1)
    assert res[0]["any_source"] == sorted((k, [k, k * 10]) for k in range(1, ws))
    assert res[ws - 1]["recv_object_list"] == (0, [1.0, 1.0], "b")
    for r in range(ws):
        # the even-ranks group, then ws/2 pairs: 1 + 1 + ws/2 groups
        assert res[r]["new_subgroups"] == (ws // 2, float(2 * (r // 2) * 2 + 1), 2 + ws // 2)


# ------------------------------------------------------------------ DDP
@pytest.mark.parametrize("ws,accumulate,cap", [(2, 1, 25), (2, 2, 0.001), (4, 1, 0.001)])
def test_ddp_matches_single_process(ws, accumulate, cap):
    want = reference_training(accumulate)
    res = dist_util.run("ddp_training", ws, accumulate, cap)
    for r in range(ws):
        for got, ref in zip(res[r]["params"], want):
            np.testing.assert_allclose(got, ref, rtol=0, atol=1e-6)  # the bound; measured <= 6e-8
        # every rank holds the same parameters, bit for bit
        for got, other in zip(res[r]["params"], res[0]["params"]):
            np.testing.assert_array_equal(got, other)
    assert res[0]["keys"][0].startswith("module.")
    buckets = res[0]["buckets"]
    assert sorted(i for b in buckets for i in b) == list(range(len(want)))
    if cap < 0.01:
        assert len(buckets) > 1  # small caps split the model into several buckets
    stats = res[0]["stats"]
    assert stats["iterations"] == 8 // accumulate and stats["buckets_reduced"] == len(buckets) * stats["iterations"]


def test_ddp_unused_parameters():
    res = dist_util.run("ddp_unused", 2, True)
    # b is used on rank 0 only: every rank gets rank 0's gradient averaged with zero; c is unused
    # everywhere: its grad stays None; a is averaged
    for r in range(2):
        g = res[r]["grads"]
        assert g["c.weight"] is None and g["c.bias"] is None
        np.testing.assert_array_equal(g["b.weight"], res[0]["grads"]["b.weight"])
        assert np.abs(g["b.weight"]).sum() > 0
    res = dist_util.run("ddp_unused", 2, False)
    for r in range(2):
        assert "Expected to have finished reduction in the prior iteration" in res[r]["error"]
        assert "find_unused_parameters=True" in res[r]["error"]


def test_ddp_sparse_gradients_are_averaged_and_stay_sparse():
    """embedding(sparse=True) under DDP: the gradient is the ranks' average (reduced dense in its
    bucket, sparse again after), so SparseAdam keeps working and every rank stays identical."""
    res = dist_util.run("ddp_sparse", 2)
    ember.manual_seed(0)
    w0 = ember.nn.Embedding(8, 3).weight.detach().numpy()
    for it in range(2):  # sparse on every rank, and the same everywhere
        for r in range(2):
            sparse, g = res[r]["grads"][it]
            assert sparse
            np.testing.assert_array_equal(g, res[0]["grads"][it][1])
    # the first step's gradient from the shared initial weights: d/dw sum(w[i]^2) = 2 w[i], averaged
    want = np.zeros((8, 3))
    for r in range(2):
        for row in (1, 2 + r):
            want[row] += 2 * w0[row] / 2
    np.testing.assert_allclose(res[0]["grads"][0][1], want, rtol=1e-6)
    np.testing.assert_array_equal(res[0]["weight"], res[1]["weight"])


def test_destroying_a_group_waits_for_its_python_callbacks():
    # this deadlocked when the group's thread needed the GIL back while the main thread joined it
    assert dist_util.run("destroy_while_callback_runs", 2, timeout=60) == [[2.0, 2.0, 2.0], None]


def test_ddp_communication_hooks():
    """DDP.register_comm_hook with torch's stock hooks and a hand-written one, against the ranks' local
    gradients computed here; Work.get_future() for collectives and point-to-point operations."""
    ws = 2
    res = dist_util.run("comm_hooks", ws)
    local = [res[r]["local"] for r in range(ws)]
    mean = [sum(g[i] for g in local) / ws for i in range(len(local[0]))]

    # each rank's gradients cast to float16, divided by the world size, summed
    half = [sum((g[i].astype(np.float16) / np.float16(ws)).astype(np.float32) for g in local)
            for i in range(len(local[0]))]
    for r in range(ws):
        out = res[r]
        for a, b in zip(out["none"], mean):
            np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)
        for a, b in zip(out["allreduce"], out["none"]):  # the hook does what DDP does: same bits
            np.testing.assert_array_equal(a, b)
        for key in ("fp16", "wrapped", "builtin_fp16"):
            for a, b in zip(out[key], half):
                np.testing.assert_allclose(a, b, rtol=1e-3, atol=1e-3)
            for a, b in zip(out[key], out["fp16"]):
                np.testing.assert_array_equal(a, b)
        for a, b in zip(out["bf16"], mean):
            np.testing.assert_allclose(a, b, rtol=2e-2, atol=2e-2)
        assert any(not np.array_equal(a, b) for a, b in zip(out["fp16"], mean))  # really went through fp16
        for a, b in zip(out["noop"], local[r]):
            np.testing.assert_array_equal(a, b)
        for i, a in enumerate(out["max"]):  # the buffer reaches the hook unaveraged
            np.testing.assert_array_equal(a, np.maximum(local[0][i], local[1][i]))
        calls = out["calls"]
        assert [c[0] for c in calls] == list(range(len(calls))) and len(calls) > 1
        assert [c[1] for c in calls] == [False] * (len(calls) - 1) + [True]
        assert all(c[2] == c[3] for c in calls)  # gradients() shaped like parameters()
        assert sorted(s for c in calls for s in c[2]) == sorted([(8, 4), (8,), (3, 8), (3,)])
        e = out["errors"]
        assert "TypeError" in e["not_callable"][0] and "must be callable" in e["not_callable"][1]
        assert "ValueError" in e["bad_return_annotation"][0]
        assert "RuntimeError" in e["twice"][0]
        assert e["twice"][1] == "register_comm_hook or register_builtin_comm_hook can only be called once."
        assert "RuntimeError" in e["not_a_future"][0] and "Future" in e["not_a_future"][1]
        assert "RuntimeError" in e["wrong_size"][0] and "elements" in e["wrong_size"][1]
        values, doubled, done = out["future"]
        np.testing.assert_array_equal(values, [3.0] * 3)
        np.testing.assert_array_equal(doubled, [6.0] * 3)
        assert done
        assert out["p2p"] == [True, True]
    np.testing.assert_array_equal(res[1]["p2p_values"][1], [1.0, 1.0])


# ------------------------------------------------------------------ faults
def test_a_rank_that_dies_fails_the_others_quickly():
    res = dist_util.run("dies_before_collective", 2, expect_fail=True, timeout=60)
    code, err, out = res[0]
    assert out["error"] and out["seconds"] < 15, out
    assert res[1][0] == 3


def test_a_rank_that_raises_fails_the_others():
    res = dist_util.run("raises_before_collective", 2, expect_fail=True, timeout=60)
    assert res[0][0] != 0 and "rank 0 gave up" in res[0][1]
    out = res[1][2]
    assert out["error"] and out["seconds"] < 15, out


def test_mismatched_collectives_raise_on_every_rank():
    res = dist_util.run("mismatched", 2)
    for r in range(2):
        for k in ("shape", "dtype", "op"):
            assert res[r][k] and "mismatch between collectives" in res[r][k], res[r]
            assert res[r][k].startswith("DistBackendError")
        assert res[r]["after"] == [2.0, 2.0]
    assert "numel=3" in res[0]["shape"] and "numel=4" in res[0]["shape"]


def test_second_init_raises():
    res = dist_util.run("double_init", 2)
    assert res == ["trying to initialize the default process group twice!"] * 2


def test_collective_timeout():
    res = dist_util.run("timeout_small", 2, expect_fail=True, timeout=60)
    out = res[0][2]
    assert out["error"] and 1.5 < out["seconds"] < 10, out


# ------------------------------------------------------------------ single process
def test_small_api():
    assert dist.is_backend_available("gloo")
    assert dist.is_backend_available("nccl") == dist.is_nccl_available() == bool(ember._C._distributed.nccl_available())
    assert dist.get_default_backend_for_device("cpu") == "gloo" and dist.get_default_backend_for_device("cuda:0") == "nccl"
    assert dist.supports_complex(dist.ReduceOp.SUM) and not dist.supports_complex(dist.ReduceOp.MAX)
    assert dist.Backend("GLOO") == "gloo" and dist.constants.default_pg_timeout == datetime.timedelta(minutes=30)
    with pytest.warns(FutureWarning):
        assert dist.reduce_op is dist.ReduceOp
    dist.set_debug_level(dist.DebugLevel.DETAIL)
    assert dist.get_debug_level() == "DETAIL"
    dist.set_debug_level(dist.DebugLevel.OFF)
    store, rank, ws = next(dist.rendezvous("tcp://127.0.0.1:%d?rank=0&world_size=1" % dist_util.free_port()))
    assert (rank, ws) == (0, 1) and isinstance(store, dist.TCPStore)


def test_not_initialized_errors():
    assert dist.is_available() and not dist.is_initialized()
    for f in (dist.get_rank, dist.get_world_size, lambda: dist.all_reduce(ember.ones(1))):
        with pytest.raises(ValueError, match="Default process group has not been initialized"):
            f()
    assert dist.get_rank(dist.GroupMember.NON_GROUP_MEMBER) == -1


def test_world_of_one_and_argument_errors():
    store = dist.HashStore()
    dist.init_process_group("gloo", store=store, rank=0, world_size=1)
    try:
        t = ember.arange(4.)
        dist.all_reduce(t, op=dist.ReduceOp.AVG)
        assert t.tolist() == [0.0, 1.0, 2.0, 3.0]
        assert dist.get_backend() == "gloo" and dist.get_process_group_ranks(dist.group.WORLD) == [0]
        with pytest.raises(TypeError, match="Expected parameter `tensor` of type"):
            dist.all_reduce([t])
        with pytest.raises(ValueError, match="should not be the same as the rank"):
            dist.send(t, 0)
        with pytest.raises(ValueError, match="less or equal to the world size"):
            dist.new_group([0, 5])
        with pytest.raises(RuntimeError, match="invalid src rank 3"):
            dist.broadcast(t, src=3)
        with pytest.raises(RuntimeError, match="world_size"):
            dist.all_gather([t, t], t)
        with pytest.raises(RuntimeError, match="AVG needs a floating-point"):
            dist.all_reduce(ember.ones(2, dtype=ember.int64), op=dist.ReduceOp.AVG)
        with pytest.raises(RuntimeError, match="BXOR is not supported for Float"):
            dist.all_reduce(t, op=dist.ReduceOp.BXOR)
        with pytest.raises(RuntimeError, match="NCCL"):
            dist.new_group([0], backend="nccl")
        # a leaf that requires grad: collectives write its data, not its history
        w = ember.ones(3, requires_grad=True)
        dist.all_reduce(w)
        assert w.grad_fn is None and w.requires_grad
    finally:
        dist.destroy_process_group()
    assert not dist.is_initialized()


def test_ddp_argument_errors():
    dist.init_process_group("gloo", store=dist.HashStore(), rank=0, world_size=1)
    try:
        with pytest.raises(RuntimeError, match="doesn't have any parameter that requires a gradient"):
            ember.nn.parallel.DistributedDataParallel(ember.nn.ReLU())
        with pytest.raises(ValueError, match="device_ids"):
            ember.nn.parallel.DistributedDataParallel(ember.nn.Linear(2, 2), device_ids=[0])
    finally:
        dist.destroy_process_group()


@pytest.mark.parametrize("kind", ["hash", "file", "tcp"])
def test_stores(kind, tmp_path):
    if kind == "hash":
        a = b = dist.HashStore()
    elif kind == "file":
        a = dist.FileStore(str(tmp_path / "store"), 2)
        b = dist.FileStore(str(tmp_path / "store"), 2)
    else:
        a = dist.TCPStore("127.0.0.1", 0, None, True, datetime.timedelta(seconds=10))
        b = dist.TCPStore("127.0.0.1", a.port, None, False, datetime.timedelta(seconds=10))
    a.set("k", "v")
    assert b.get("k") == b"v"
    b.set("bin", b"\x00\xff")
    assert a.get("bin") == b"\x00\xff"
    assert a.add("n", 5) == 5 and b.add("n", -2) == 3
    assert a.compare_set("k", "v", "w") == b"w" and b.compare_set("k", "nope", "z") == b"w"
    assert a.compare_set("fresh", "", "1") == b"1"
    b.append("log", "a")
    a.append("log", "b")
    assert b.get("log") == b"ab"
    assert a.check(["k", "n"]) and not a.check(["k", "missing"])
    assert b.delete_key("k") and not b.delete_key("k")
    with pytest.raises(dist.DistStoreError, match="wait timeout"):
        a.wait(["never"], datetime.timedelta(milliseconds=200))
    with pytest.raises(dist.DistStoreError):
        a.add("bin", 1)  # not an integer
    # a waiter wakes when another client sets the key
    threading.Timer(0.2, lambda: b.set("later", "x")).start()
    assert a.get("later") == b"x"
    a.set_timeout(datetime.timedelta(seconds=3))
    assert a.timeout == datetime.timedelta(seconds=3)
    p = dist.PrefixStore("pre", a)
    p.set("k", "1")
    assert a.get("pre/k") == b"1" and p.get("k") == b"1"
    del a, b, p
    if kind == "file":
        assert not (tmp_path / "store").exists()  # the last store using the file removed it


def test_tcp_store_errors():
    with pytest.raises(dist.DistNetworkError, match="could not connect"):
        dist.TCPStore("127.0.0.1", dist_util.free_port(), None, False, datetime.timedelta(milliseconds=300))
    a = dist.TCPStore("127.0.0.1", 0, None, True, datetime.timedelta(seconds=5))
    with pytest.raises(dist.DistNetworkError, match="failed to listen"):
        dist.TCPStore("127.0.0.1", a.port, None, True, datetime.timedelta(seconds=5))
    # world_size given: the master waits for its clients, then times out saying how many came
    with pytest.raises(dist.DistStoreError, match="1/2 clients joined"):
        dist.TCPStore("127.0.0.1", 0, 2, True, datetime.timedelta(milliseconds=300))
    assert issubclass(dist.DistStoreError, RuntimeError) and issubclass(dist.DistBackendError, dist.DistError)


def test_init_methods(tmp_path):
    """file:// and tcp:// rendezvous reach the same group as env:// (each rank a subprocess)."""
    res = dist_util.run_script(_INIT_METHODS, 2, str(tmp_path / "rdzv"))
    assert res == [[6.0, 6.0]] * 2


_INIT_METHODS = """
import sys, ember, ember.distributed as dist
rank, ws, path, port = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
dist.init_process_group("gloo", init_method="file://" + path, rank=rank, world_size=ws)
t = ember.ones(2) * (rank + 1); dist.all_reduce(t); dist.destroy_process_group()
dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}?rank={rank}&world_size={ws}")
dist.all_reduce(t); dist.all_reduce(t, op=dist.ReduceOp.AVG); dist.destroy_process_group()
print(t.tolist())
"""


def test_sampler_reads_the_default_group():
    dist.init_process_group("gloo", store=dist.HashStore(), rank=0, world_size=1)
    try:
        s = ember.utils.data.DistributedSampler(list(range(10)), shuffle=False)
        assert (s.num_replicas, s.rank) == (1, 0) and list(s) == list(range(10))
    finally:
        dist.destroy_process_group()


def _example(*args):
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = dict(os.environ, PYTHONPATH=dist_util.PYTHON_DIR)
    import subprocess
    out = subprocess.run([sys.executable, *args], cwd=root, env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    return out.stdout


@pytest.mark.skipif(not os.path.exists("/usr/share/datasets/fashion-mnist"), reason="dataset-fashion-mnist missing")
def test_main_job_and_ddp_example_in_two_processes(tmp_path):
    out = _example("examples/fashion_mnist.py", "--nproc", "2", "--epochs", "1", "--limit", "1024", "--out",
                   str(tmp_path))
    assert "x 2 processes (DDP, gloo)" in out and "final test accuracy" in out
    assert (tmp_path / "fashion_mnist_ember.safetensors").exists()
    out = _example("-m", "ember.distributed.run", "--nproc-per-node", "2", "examples/ddp_train.py", "--epochs", "1",
                   "--limit", "1024")
    assert "2 processes on 1 node(s)" in out and "epoch 1: train loss" in out


# ---- SyncBatchNorm: two ranks' halves of a batch normalize like BatchNorm over the whole batch

def test_sync_batchnorm_matches_batchnorm_on_the_whole_batch():
    rng = np.random.default_rng(3)
    x, w = rng.standard_normal((6, 3, 4)), rng.standard_normal((6, 3, 4))
    res = dist_util.run("sync_batchnorm", 2, x, w, 0.3)
    ref = ember.nn.BatchNorm1d(3, momentum=0.3).double()
    with ember.no_grad():
        ref.weight.copy_(ember.arange(3, dtype=ember.float64) * 0.5 + 1)
        ref.bias.fill_(0.25)
    xr = ember.tensor(x, requires_grad=True)
    for _ in range(2):
        xr.grad = None
        ref.zero_grad()
        y = ref(xr)
        (y * ember.tensor(w)).sum().backward()
    np.testing.assert_allclose(np.concatenate([res[0]["y"], res[1]["y"]]), y.detach().numpy(), atol=1e-12)
    np.testing.assert_allclose(np.concatenate([res[0]["grad_x"], res[1]["grad_x"]]), xr.grad.numpy(), atol=1e-12)
    # parameter gradients stay local (DDP averages them): their sum is the whole batch's
    np.testing.assert_allclose(res[0]["grad_w"] + res[1]["grad_w"], ref.weight.grad.numpy(), atol=1e-12)
    np.testing.assert_allclose(res[0]["grad_b"] + res[1]["grad_b"], ref.bias.grad.numpy(), atol=1e-12)
    for r in res:
        np.testing.assert_allclose(r["running"][0], ref.running_mean.numpy(), atol=1e-12)
        np.testing.assert_allclose(r["running"][1], ref.running_var.numpy(), atol=1e-12)
        assert r["running"][2] == 2
    ref.eval()
    np.testing.assert_allclose(np.concatenate([res[0]["eval"], res[1]["eval"]]), ref(xr).detach().numpy(), atol=1e-12)


def test_sync_batchnorm_alone_and_convert_match_torch():
    torch = pytest.importorskip("torch")
    for m in (ember, torch):
        m.manual_seed(0)
    x = np.random.default_rng(4).standard_normal((4, 3, 5))
    outs = []
    for m in (ember, torch):
        bn = m.nn.SyncBatchNorm(3).double()
        outs.append(bn(m.tensor(x)).detach().numpy())  # no process group: BatchNorm
    np.testing.assert_allclose(outs[0], outs[1], atol=1e-12)
    for m in (ember, torch):
        net = m.nn.Sequential(m.nn.Conv2d(2, 4, 3), m.nn.BatchNorm2d(4), m.nn.Sequential(m.nn.BatchNorm1d(5)))
        net[1].eval()
        conv = m.nn.SyncBatchNorm.convert_sync_batchnorm(net)
        assert conv is net and type(conv[1]).__name__ == "SyncBatchNorm" and type(conv[2][0]).__name__ == "SyncBatchNorm"
        assert not conv[1].training and conv[2][0].training
        outs.append(repr(conv).replace("ember.", "torch."))
    assert outs[2] == outs[3]
    with pytest.raises(ValueError, match="at least 2D"):
        ember.nn.SyncBatchNorm(3)(ember.ones(3))


def test_complex_tensors_travel_as_their_real_parts():
    res = dist_util.run("complex_collectives", 2)
    z = np.array([1 + 2j, -3j])
    for r in res:
        np.testing.assert_array_equal(r["sum"], 3 * z)
        np.testing.assert_array_equal(r["bcast"], 2 * z)
        np.testing.assert_array_equal(r["gather"][0], z)
        np.testing.assert_array_equal(r["gather"][1], 2 * z)
        assert "does not support" in r["max_error"] and "complex" in r["max_error"]
