"""The rest of torch.distributed's Gloo-side API, against PyTorch where it is importable: option objects and a
group's low-level methods (pg.allreduce([t], opts)), ProcessGroupGloo, BackendConfig / get_backend_config,
all_gather_single / reduce_scatter_single / all_gather_coalesced, record_comm, store queues
(QueueEmptyError), split_group, shrink_group, breakpoint, post-local SGD (model averaging, its DDP hook,
PostLocalSGDOptimizer) and as_functional_optim. Multi-process cases run the same worker code
(dist_extras_workers.py) on both libraries, 2 or 3 loopback processes."""
import datetime
import importlib.util
import logging
import os
import pickle
import subprocess
import sys
import tempfile
import time
import warnings

import numpy as np
import pytest

import ember
import ember.distributed as dist

import dist_util

pytestmark = [pytest.mark.skipif(not dist.is_gloo_available(), reason="built without Gloo"),
              pytest.mark.skipif(os.name != "posix", reason="multi-process tests need fork/exec on POSIX")]

HAS_TORCH = importlib.util.find_spec("torch") is not None
needs_torch = pytest.mark.skipif(not HAS_TORCH, reason="PyTorch is not installed")


@pytest.fixture
def torch():
    return pytest.importorskip("torch")


def _run(fn, ws, *args, timeout=120):
    return dist_util.run(fn, ws, *args, script="dist_extras_workers.py", timeout=timeout)


def _same(a, b, path="", skip=()):
    """Worker results equal: tensors as (dtype, array) with equal dtype, shape and values; the rest equal."""
    if path in skip:
        return
    if isinstance(a, tuple) and len(a) == 2 and isinstance(a[1], np.ndarray):
        assert a[0] == b[0] and a[1].shape == b[1].shape, (path, a, b)
        np.testing.assert_array_equal(a[1], b[1], err_msg=path)
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b), (path, a, b)
        for i, (x, y) in enumerate(zip(a, b)):
            _same(x, y, f"{path}/{i}", skip)
    elif isinstance(a, dict):
        assert set(a) == set(b), (path, set(a) ^ set(b))
        for k in a:
            _same(a[k], b[k], f"{path}/{k}", skip)
    else:
        assert a == b, (path, a, b)


@pytest.fixture
def world_of_one():
    dist.init_process_group("gloo", store=dist.HashStore(), rank=0, world_size=1)
    yield
    dist.destroy_process_group()


@pytest.fixture
def torch_world_of_one(torch):
    torch.distributed.init_process_group("gloo", store=torch.distributed.HashStore(), rank=0, world_size=1)
    yield torch
    torch.distributed.destroy_process_group()


# ------------------------------------------------------------------ names
def test_small_names_match_torch(torch):
    td = torch.distributed
    assert dist.GroupName("pg") == "pg" and type(dist.GroupName("pg")) is str
    assert dist.GroupName.__supertype__ is td.GroupName.__supertype__ is str
    assert dist.RankType is int  # torch's int | SymInt: Ember has no symbolic ints
    assert isinstance(dist.log, logging.Logger) and dist.log.name == "ember.distributed"
    assert td.log.name == "torch.distributed"
    names = [[c.__name__ for c in lib.QueueEmptyError.__mro__[:5]] for lib in (dist, td)]
    assert names[0] == names[1]
    assert issubclass(dist.QueueEmptyError, dist.DistStoreError) and issubclass(dist.QueueEmptyError, RuntimeError)
    assert dist.distributed_c10d.SHRINK_DEFAULT == td.distributed_c10d.SHRINK_DEFAULT == 0
    assert dist.distributed_c10d.SHRINK_ABORT == td.distributed_c10d.SHRINK_ABORT == 1
    for name in ("AllreduceOptions", "BroadcastOptions", "ProcessGroupGloo", "BackendConfig", "GroupName"):
        assert getattr(dist, name).__module__ == "ember.distributed.distributed_c10d"
    # AllgatherOptions lives in distributed_c10d only, as in torch
    assert not hasattr(dist, "AllgatherOptions") and not hasattr(td, "AllgatherOptions")
    assert hasattr(dist.distributed_c10d, "AllgatherOptions") and hasattr(td.distributed_c10d, "AllgatherOptions")


OPTIONS = ["AllToAllOptions", "AllreduceCoalescedOptions", "AllreduceOptions", "BarrierOptions", "BroadcastOptions",
           "GatherOptions", "ReduceOptions", "ReduceScatterOptions", "ScatterOptions"]


def _fields(o, lib):
    out = {}
    for name in dir(o):
        if name.startswith("_"):
            continue
        v = getattr(o, name)
        if name == "reduceOp":
            v = [op for op in ("SUM", "AVG", "PRODUCT", "MIN", "MAX") if v == getattr(lib.ReduceOp, op)]
        out[name] = v
    return out


@pytest.mark.parametrize("name", OPTIONS + ["AllgatherOptions"])
def test_options_fields_defaults_and_checks_match_torch(torch, name):
    ours = getattr(dist.distributed_c10d, name)()
    theirs = getattr(torch.distributed.distributed_c10d, name)()
    assert _fields(ours, dist) == _fields(theirs, torch.distributed) != {}
    assert ours.timeout == datetime.timedelta(milliseconds=-1)  # unset: the group's own
    for o in (ours, theirs):
        o.asyncOp = 0
        assert o.asyncOp is False
        with pytest.raises(AttributeError):
            o.no_such_field = 1
        with pytest.raises(TypeError):
            o.timeout = None
        o.timeout = datetime.timedelta(seconds=3)
        assert o.timeout == datetime.timedelta(seconds=3)
        if hasattr(o, "reduceOp"):
            with pytest.raises(TypeError):
                o.reduceOp = 3
        if hasattr(o, "rootRank"):
            o.rootRank = True
            assert o.rootRank == 1 and type(o.rootRank) is int
    with pytest.raises(TypeError):
        getattr(dist.distributed_c10d, name)(timeout=datetime.timedelta(seconds=1))


# ------------------------------------------------------------------ BackendConfig, get_backend_config
@pytest.mark.parametrize("spec", ["nccl", "NCCL", "cpu:gloo", "cpu:gloo,cuda:nccl", "CPU:GLOO", "undefined"])
def test_backend_config_matches_torch(torch, spec):
    if spec == "undefined" and (ember._C._cuda_is_available() or torch.cuda.is_available()):
        pytest.skip("the accelerator decides")
    ours, theirs = dist.BackendConfig(spec), torch.distributed.BackendConfig(spec)
    assert repr(ours) == repr(theirs) and ours.get_device_backend_map() == theirs.get_device_backend_map()


def test_backend_config_capabilities_and_errors(torch):
    # Ember's Gloo moves CPU tensors only; torch's also takes CUDA tensors (through the host)
    assert repr(dist.BackendConfig("gloo")) == "cpu:gloo"
    assert repr(torch.distributed.BackendConfig("gloo")) == "cpu:gloo,cuda:gloo"
    for lib in (dist, torch.distributed):
        with pytest.raises(ValueError, match="Invalid device:backend pairing"):
            lib.BackendConfig("cpu:gloo:x")
        with pytest.raises(ValueError, match="Duplicate device type cpu"):
            lib.BackendConfig("cpu:gloo,cpu:nccl")
        with pytest.warns(UserWarning, match="Device capability of foo unknown"):
            assert repr(lib.BackendConfig("foo")) == "cpu:foo,cuda:foo,xpu:foo"


@pytest.mark.parametrize("backend", [None, "cpu:gloo", "gloo"])
def test_get_backend_config(torch, backend):
    td = torch.distributed
    got = []
    for lib in (dist, td):
        lib.init_process_group(backend, store=lib.HashStore(), rank=0, world_size=1)
        try:
            config = lib.get_backend_config()
            assert type(config) is str and lib.get_backend_config(lib.new_group([0])) == config
            with pytest.raises(ValueError, match="Invalid process group specified"):
                lib.get_backend_config(lib.GroupMember.NON_GROUP_MEMBER)
            got.append(config)
        finally:
            lib.destroy_process_group()
    assert got[0] == "cpu:gloo" and got[1] == ("cpu:gloo,cuda:gloo" if backend == "gloo" else "cpu:gloo")
    with pytest.raises(ValueError, match="has not been initialized"):
        dist.get_backend_config()


# ------------------------------------------------------------------ low-level methods, ProcessGroupGloo
@needs_torch
def test_low_level_methods_match_torch():
    ours, theirs = _run("low_level", 2, "ember"), _run("low_level", 2, "torch")
    for r in range(2):
        # an empty list: torch's ProcessGroup dispatcher raises NotImplementedError (its ProcessGroupGloo a
        # RuntimeError, which Ember raises for both)
        assert theirs[r]["errors"].pop("empty") == "NotImplementedError" and ours[r]["errors"].pop("empty") == \
            "RuntimeError"
        _same(ours[r], theirs[r])
    assert ours[0]["recv_anysource"][1] == 1 and ours[0]["direct_info"][:3] == [0, 2, "gloo"]


def test_options_timeout_gives_up_waiting():
    res = _run("options_timeout", 2)[0]
    assert res["error"] == "DistBackendError" and 0.2 < res["gave_up_after"] < 1.2
    assert res["completed"] == [True, [3.0, 3.0]]


def test_low_level_forms_world_of_one(world_of_one):
    pg = dist.group.WORLD
    t = ember.arange(3.)
    assert pg.allreduce(t, dist.ReduceOp.SUM, False).wait()  # Ember's own (tensor, op, verify) form
    with pytest.raises(TypeError, match="expected AllreduceOptions or a ReduceOp"):
        pg.allreduce([t], "sum")
    with pytest.raises(TypeError, match="expected BroadcastOptions"):
        pg.broadcast([t], dist.AllreduceOptions())
    with pytest.raises(RuntimeError, match="requires a single-element"):
        pg.gather([[t]], [t, t], dist.GatherOptions())
    o = dist.AllreduceOptions()
    o.timeout = datetime.timedelta(seconds=5)
    w = pg.allreduce([t], o)
    assert w.wait() and w.is_completed() and w.result()[0].tolist() == [0.0, 1.0, 2.0]
    pg.monitored_barrier(datetime.timedelta(seconds=5))


def test_process_group_gloo_devices_and_options(torch):
    G, TG = dist.ProcessGroupGloo, torch.distributed.ProcessGroupGloo
    for g in (G, TG):
        g.create_device(interface="lo")
        g.create_device(hostname="127.0.0.1")
        g.create_default_device()
        with pytest.raises(RuntimeError, match="(?i)unable to find address for: bogus0"):
            g.create_device(interface="bogus0")
        with pytest.raises(RuntimeError, match="(?i)cannot resolve no.such.host.invalid"):
            g.create_device(hostname="no.such.host.invalid")
        o = g._Options()
        assert (o._timeout, o._threads, o._devices, o.backend) == (datetime.timedelta(minutes=30), 2, [], "gloo")
        assert g.Options("gloo")._timeout == datetime.timedelta(minutes=30)
    assert G.create_device(interface="lo").hostname == "127.0.0.1"
    pg = G(dist.HashStore(), 0, 1, datetime.timedelta(seconds=7))
    t = ember.ones(2)
    assert pg.allreduce([t]).wait() and (pg.rank(), pg.size(), pg.name()) == (0, 1, "gloo")
    assert pg.options._timeout == datetime.timedelta(seconds=7)
    with pytest.raises(ValueError, match="one device"):
        o = G._Options()
        o._devices = [G.create_device(interface="lo")] * 2
        G(dist.HashStore(), 0, 1, o)
    with pytest.raises(ValueError, match="rank 1 is not in"):
        G(dist.HashStore(), 1, 1)


# ------------------------------------------------------------------ collectives, queues
@needs_torch
def test_new_collectives_and_queues_match_torch():
    ours = _run("extras", 2, "ember", dist_util.free_port())
    theirs = _run("extras", 2, "torch", dist_util.free_port())
    for r in range(2):
        o, t = ours[r], theirs[r]
        # torch's Gloo takes only the concatenated forms; Ember's also the stacked ones of the docs
        assert t.pop("stacked")[::2] == ["RuntimeError", "RuntimeError"]
        stacked = o.pop("stacked")
        assert stacked[::2] == [None, None]
        np.testing.assert_array_equal(stacked[1][1], [[1, 2], [3, 4]])
        np.testing.assert_array_equal(stacked[3][1], [[0., 2.], [4., 6.]][r])
        # torch's deprecation warnings name its own wrapper's file; Ember's the caller's line
        assert all(w[2] == "dist_extras_workers.py" for w in o["warnings"])
        for w in o["warnings"] + t["warnings"]:
            w.pop()
        assert o.pop("backend_config") == o.pop("backend_config_group") == "cpu:gloo"
        assert t.pop("backend_config") == t.pop("backend_config_group") == "cpu:gloo,cuda:gloo"
        _same(o, t)
    assert ours[0]["queue"] == [[b"a", b"b", b"c"], 1, 0, ["QueueEmptyError", True, "queue is empty"]]
    assert ours[0]["warnings"][0][0] == "FutureWarning"


def test_collectives_world_of_one(world_of_one):
    out = ember.zeros(3, dtype=ember.int32)
    assert dist.all_gather_single(out, ember.tensor([1, 2, 3], dtype=ember.int32)) is None
    assert out.tolist() == [1, 2, 3]
    c = ember.zeros(2, dtype=ember.complex64)
    dist.reduce_scatter_single(c, ember.tensor([1 + 2j, 3 - 1j], dtype=ember.complex64))
    assert c.tolist() == [1 + 2j, 3 - 1j]
    with pytest.raises(RuntimeError, match="does not support ReduceOp.MAX on complex"):
        dist.reduce_scatter_single(c, c.clone(), op=dist.ReduceOp.MAX)
    with pytest.raises(TypeError, match="Expected parameter `output`"):
        dist.reduce_scatter_single([c], c)
    with pytest.warns(FutureWarning, match="all_gather_coalesced"):
        with pytest.raises(RuntimeError, match=r"invalid size of output tensor at index 0 \(expected length \(3\), "
                           r"got \(2\)\)"):
            dist.all_gather_coalesced([[ember.zeros(2)]], [ember.ones(3)])
    with pytest.warns(FutureWarning, match="all_gather_coalesced"):
        with pytest.raises(RuntimeError, match="output lists should be equal to world size"):
            dist.all_gather_coalesced([], [ember.ones(3)])
    with pytest.warns(FutureWarning, match="all_gather_single"):
        dist.all_gather_into_tensor(out, out.clone())
    g = dist.new_group([0])
    assert dist.all_gather_single(out, out.clone(), group=dist.GroupMember.NON_GROUP_MEMBER) is None
    assert dist.get_backend_config(g) == "cpu:gloo"


@needs_torch
def test_non_member_collectives_warn_as_torch():
    # a rank outside the group gets None and torch's warning, from the new collectives and the older ones
    ours, theirs = _run("non_member", 2, "ember"), _run("non_member", 2, "torch")
    assert ours[1] == theirs[1] and ours[0] == theirs[0] == {}
    assert ours[1]["all_gather_single"] == [None, ["Running all_gather_single on global rank 1 which does not "
                                                   "belong to the given group."]]


@needs_torch
def test_all_gather_coalesced_checks_and_async_value_match_torch():
    ours, theirs = _run("gather_coalesced_checks", 2, "ember"), _run("gather_coalesced_checks", 2, "torch")
    for r in range(2):
        _same(ours[r], theirs[r])
    errors = ours[0]["errors"]
    # a same-sized output of another shape is an error (it used to be filled)
    assert errors["same_numel_other_shape"] == [
        "RuntimeError", "ProcessGroupGloo::allgather_coalesced: invalid size of output tensor at index 0 (expected "
        "length (2, 2), got (4))"]
    assert errors["tuple_input"][0] == errors["tuple_output"][0] == "TypeError"
    assert ours[0]["async"][0] == "Future" and len(ours[0]["async"][1]) == 2  # one list per rank, not flattened


@pytest.mark.parametrize("fn", ["all_reduce", "all_reduce_coalesced", "reduce", "reduce_scatter",
                                "reduce_scatter_single"])
@pytest.mark.parametrize("op", [3, "sum", None])
def test_reduce_op_must_be_a_ReduceOp_as_torch(world_of_one, torch_world_of_one, fn, op):
    # torch assigns op to an options object, which takes only a ReduceOp; Ember's C++ took an int (3: MIN)
    def call(lib, T):
        t = T.ones(2)
        return {"all_reduce": lambda: lib.all_reduce(t, op=op),
                "all_reduce_coalesced": lambda: lib.all_reduce_coalesced([t], op=op),
                "reduce": lambda: lib.reduce(t, 0, op=op),
                "reduce_scatter": lambda: lib.reduce_scatter(T.zeros(2), [t], op=op),
                "reduce_scatter_single": lambda: lib.reduce_scatter_single(T.zeros(2), t, op=op)}[fn]()
    torch = torch_world_of_one
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        for lib, T in ((dist, ember), (torch.distributed, torch)):
            with pytest.raises(TypeError):
                call(lib, T)


def test_complex_reductions_match_torch(world_of_one, torch_world_of_one):
    torch = torch_world_of_one
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        for lib, T in ((dist, ember), (torch.distributed, torch)):
            c = T.tensor([1 + 2j, 3 - 1j], dtype=T.complex64)
            # all_reduce and all_reduce_coalesced raise ValueError for an op complex numbers lack
            with pytest.raises(ValueError, match="all_reduce does not support .*MAX on complex tensors") as info:
                lib.all_reduce(c.clone(), op=lib.ReduceOp.MAX)
            if lib is dist:  # also a RuntimeError, Ember's error here before
                assert isinstance(info.value, RuntimeError)
            with pytest.raises(ValueError, match="all_reduce does not support .*PRODUCT on complex tensors"):
                lib.all_reduce_coalesced([c.clone()], op=lib.ReduceOp.PRODUCT)
            with pytest.raises(RuntimeError):
                lib.reduce(c.clone(), 0, op=lib.ReduceOp.MAX)
            with pytest.raises(RuntimeError):
                lib.reduce_scatter(T.zeros(2, dtype=T.complex64), [c.clone()], op=lib.ReduceOp.MAX)
            # reduce_scatter sums complex tensors (Ember's raised "not supported for ComplexFloat")
            out = T.zeros(2, dtype=T.complex64)
            assert lib.reduce_scatter(out, [c.clone()]) is None
            assert out.tolist() == [1 + 2j, 3 - 1j]
    # a real output for a complex input: torch's Gloo aborts the process on it; Ember raises
    with pytest.raises(RuntimeError, match="output and input must have the same dtype"):
        dist.reduce_scatter_single(ember.zeros(2, 2), ember.tensor([1 + 2j, 3 - 1j], dtype=ember.complex64))


def _profile_names(lib, T):
    with lib.profiler.profile() as prof:
        t = T.ones(4)
        lib.distributed.all_reduce(t)
        with lib.distributed.record_comm("my_ar"):
            lib.distributed.all_reduce(t)
            lib.distributed.all_reduce(t, async_op=True).wait()
            lib.distributed.broadcast(t, 0)
            lib.distributed.barrier()
        lib.distributed.all_gather([T.zeros(4)], t)
    from collections import Counter
    return Counter(e.name for e in prof.events() if e.name == "my_ar" or e.name.startswith("gloo:"))


def test_record_comm_names_profiler_ranges_as_torch(world_of_one, torch_world_of_one):
    torch = torch_world_of_one
    assert _profile_names(ember, ember) == _profile_names(torch, torch) == {
        "my_ar": 4, "gloo:all_reduce": 3, "gloo:broadcast": 1, "gloo:barrier": 1, "gloo:all_gather": 1}
    with pytest.raises(TypeError):
        with dist.record_comm(3):
            pass


@pytest.mark.parametrize("kind", ["hash", "tcp", "prefix", "file"])
def test_store_queues(torch, kind, tmp_path):
    def make(lib):
        if kind == "hash":
            return lib.HashStore()
        if kind == "file":
            return lib.FileStore(str(tmp_path / f"{lib.__name__}.store"), 1)
        s = lib.TCPStore("127.0.0.1", 0, 1, True)
        return lib.PrefixStore("p", s) if kind == "prefix" else s
    results = []
    for lib in (dist, torch.distributed):
        s = make(lib)
        if kind == "file" and lib is torch.distributed:  # torch's FileStore has no queues
            with pytest.raises(NotImplementedError):
                s.queue_push("q", "a")
            continue
        s.queue_push("q", "a")
        s.queue_push("q", b"b")
        r = [s.queue_len("q"), s.queue_pop("q"), s.queue_len("q"), s.queue_pop("q", block=False), s.queue_len("nope")]
        with pytest.raises(lib.QueueEmptyError, match="queue is empty"):
            s.queue_pop("q", block=False)
        s.set_timeout(datetime.timedelta(seconds=0.3))
        with pytest.raises(lib.DistStoreError):
            s.queue_pop("q")
        results.append(r)
    assert results[0] == [2, b"a", 1, b"b", 0]
    assert all(r == results[0] for r in results)


# ------------------------------------------------------------------ split_group, shrink_group
def test_split_group():
    a, b, c = _run("split", 3)
    assert a["a"] == [[0, 2], 0, 2, 4.0, "cpu:gloo"] and c["a"] == [[0, 2], 1, 2, 4.0, "cpu:gloo"]
    assert b["a"] == [[1], 0, 1, 2.0, "cpu:gloo"]
    # a rank in none of the splits gets None (torch's documented result)
    assert a["b"] == [[0, 1], 0, 3.0] and b["b"] == [[0, 1], 1, 3.0] and c["b"] is None
    # splitting a subgroup: split ranks are the parent's group ranks
    assert a["c"] is None and c["c"] == [[2], 1] and b["c"] == "ValueError"
    for r in (a, b, c):
        assert r["errors"] == ["ValueError"] * 5 + ["TypeError"]


def test_split_group_arguments_world_of_one(world_of_one, torch):
    with pytest.raises(ValueError, match="split_ranks cannot be None or empty"):
        dist.split_group()
    assert dist.split_group(split_ranks=[[0]]).size() == 1
    with pytest.raises(ValueError, match="Group -100 is not registered"):
        dist.split_group(dist.GroupMember.NON_GROUP_MEMBER, [[0]])
    with pytest.raises(ValueError, match="Backend mismatch"):
        dist.split_group(split_ranks=[[0]], backend="cpu:nccl")
    # torch splits only accelerator (NCCL/XCCL) groups: on the CPU it raises
    td = torch.distributed
    td.init_process_group("gloo", store=td.HashStore(), rank=0, world_size=1)
    try:
        with pytest.raises(RuntimeError, match="not safe to split"):
            td.split_group(split_ranks=[[0]])
    finally:
        td.destroy_process_group()


def test_shrink_group():
    a, b, c = _run("shrink", 3)
    assert b["group"] == [[1, 2], 0, 2, 3.0] and c["group"] == [[1, 2], 1, 2, 3.0]
    # the default group shrunk: the survivors renumbered 0, 1; groups made after it use the new numbering
    assert a["world"] == [True, 0, 2, [0, 1], 4.0] and c["world"] == [True, 1, 2, [0, 1], 4.0]
    assert a["after"] == c["after"] == [[0, 1], 4.0]
    assert a["errors"] == ["RuntimeError", "ValueError", "ValueError", "ValueError", "ValueError", "TypeError"]


def test_shrink_group_argument_errors_match_torch(world_of_one, torch):
    td = torch.distributed
    td.init_process_group("gloo", store=td.HashStore(), rank=0, world_size=1)
    try:
        for lib in (dist, td):
            with pytest.raises(TypeError, match="ranks_to_exclude must be a list"):
                lib.shrink_group((0,))
            with pytest.raises(ValueError, match="ranks_to_exclude cannot be empty"):
                lib.shrink_group([])
            with pytest.raises(ValueError, match="Invalid shrink_flags value: 5"):
                lib.shrink_group([0], shrink_flags=5)
            with pytest.raises(ValueError, match="Cannot shrink a process group with size 1"):
                lib.shrink_group([0])
    finally:
        td.destroy_process_group()


# ------------------------------------------------------------------ breakpoint
def _breakpoint_run(stdin_for_rank0, delay, *args):
    port = dist_util.free_port()
    with tempfile.TemporaryDirectory() as tmp:
        with open(os.path.join(tmp, "args.pkl"), "wb") as f:
            pickle.dump(args, f)
        env = dict(os.environ, MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), WORLD_SIZE="2", OMP_NUM_THREADS="1",
                   PYTHONPATH=dist_util.PYTHON_DIR + os.pathsep + os.environ.get("PYTHONPATH", ""))
        procs = [subprocess.Popen([sys.executable, os.path.join(dist_util.HERE, "dist_extras_workers.py"),
                                   "breakpoints", tmp], env=dict(env, RANK=str(r)), stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE) for r in range(2)]
        try:
            time.sleep(delay)
            out0, err0 = procs[0].communicate(stdin_for_rank0, timeout=60)
            out1, err1 = procs[1].communicate(b"", timeout=60)
        finally:
            for p in procs:
                if p.poll() is None:
                    p.kill()
        assert procs[0].returncode == procs[1].returncode == 0, (err0.decode()[-3000:], err1.decode()[-3000:])
        res = []
        for r in range(2):
            with open(os.path.join(tmp, f"{r}.pkl"), "rb") as f:
                res.append(pickle.load(f))
        return out0.decode(), err0.decode() + err1.decode(), res


def test_breakpoint_stops_one_rank_and_the_others_wait():
    # rank 0's pdb reads the commands; `up` reaches the caller's frame, where x = 41
    out, err, res = _breakpoint_run(b"up\np x\nc\n", 2.5)
    assert "Type 'up' to get to the frame that called dist.breakpoint(rank=0)" in out
    assert "\n(Pdb) 41\n" in out.replace("(Pdb) > ", "\n")
    assert res[0]["error"] is None and res[1]["error"] is None
    assert res[1]["waited"] > 1.0  # rank 1 waited for rank 0's session
    assert err.count("Skip the breakpoint, counter=1") == 2 and err.count("counter=2") == 2


def test_breakpoint_timeout():
    # rank 0 stays in pdb past timeout_s=1: rank 1 gives up with a store timeout
    out, err, res = _breakpoint_run(b"c\n", 3.0, 1)
    assert res[1]["error"] == "DistStoreError" and 0.8 < res[1]["waited"] < 2.5


# ------------------------------------------------------------------ post-local SGD
@needs_torch
def test_post_local_sgd_matches_torch():
    ours, theirs = _run("post_local_sgd", 2, "ember"), _run("post_local_sgd", 2, "torch")
    for r in range(2):
        assert {k: ours[r][k] for k in ("iter", "averager_step", "sd_step", "repr")} == \
            {k: theirs[r][k] for k in ("iter", "averager_step", "sd_step", "repr")} == \
            {"iter": 2, "averager_step": 8, "sd_step": 8, "repr": "SGD ("}
        for step_o, step_t in zip(ours[r]["steps"], theirs[r]["steps"]):
            for a, b in zip(step_o, step_t):
                np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    # global DDP for 2 steps, then local steps with the models averaged at steps 2 and 5
    for step in range(8):
        same = all(np.array_equal(a, b) for a, b in zip(ours[0]["steps"][step], ours[1]["steps"][step]))
        assert same == (step in (0, 1, 2, 5)), step


def test_model_averaging_pieces_match_torch(world_of_one, torch_world_of_one):
    from ember.distributed.algorithms.model_averaging import averagers, utils
    from torch.distributed.algorithms.model_averaging import averagers as t_averagers
    net = ember.nn.Linear(2, 2)
    net(ember.ones(1, 2)).sum().backward()
    net.bias.grad = None
    assert utils.get_params_to_average(net.parameters()) == [net.weight]
    opt = ember.optim.SGD(net.parameters(), lr=0.1)
    assert utils.get_params_to_average(opt.param_groups) == [net.weight]
    with pytest.raises(NotImplementedError, match="Parameter input of type"):
        utils.get_params_to_average([ember.ones(2)])
    before = net.weight.detach().clone()
    utils.average_parameters_or_parameter_groups(net.parameters(), None)  # world of one: the mean is itself
    assert ember.equal(net.weight.detach(), before)
    for mod in (averagers, t_averagers):
        with pytest.raises(ValueError, match="warmup_steps"):
            mod.PeriodicModelAverager(period=2, warmup_steps=-1)
        with pytest.raises(ValueError, match="period"):
            mod.PeriodicModelAverager(period=0)
        with pytest.warns(UserWarning, match="When period is 1"):
            mod.PeriodicModelAverager(period=1)
        with pytest.raises(TypeError):
            mod.ModelAverager()


def test_post_local_sgd_optimizer_state_dict_and_hook_state(world_of_one):
    from ember.distributed.algorithms.ddp_comm_hooks import post_localSGD_hook as pls
    from ember.distributed.algorithms.model_averaging.averagers import PeriodicModelAverager
    from ember.distributed.optim import PostLocalSGDOptimizer
    net = ember.nn.Linear(2, 1)
    opt = PostLocalSGDOptimizer(ember.optim.SGD(net.parameters(), lr=0.1), PeriodicModelAverager(period=2))
    for _ in range(3):
        opt.zero_grad()
        net(ember.ones(1, 2)).sum().backward()
        opt.step()
    sd = opt.state_dict()
    assert sd["step"] == 3 and opt.state is opt.optim.state and opt.param_groups is opt.optim.param_groups
    opt.averager.step = 0
    opt.load_state_dict(sd)
    assert opt.averager.step == 3
    del sd["step"]
    with pytest.warns(UserWarning, match="does not contain a step counter"):
        opt.load_state_dict(sd)
    assert opt.averager.step == 0
    state = pls.PostLocalSGDState(process_group=None, subgroup=None, start_localSGD_iter=1,
                                  post_local_gradient_allreduce=False)
    ddp = ember.nn.parallel.DistributedDataParallel(ember.nn.Linear(2, 1))
    ddp.register_comm_hook(state, pls.post_localSGD_hook)
    for _ in range(2):
        ddp(ember.ones(1, 2)).sum().backward()
    assert state.iter == 1


# ------------------------------------------------------------------ functional optimizers
FUNCTIONAL = [("SGD", dict(lr=0.1, momentum=0.9, nesterov=True), "functional_sgd", "_FunctionalSGD"),
              ("Adam", dict(lr=0.01, betas=(0.8, 0.99), amsgrad=True), "functional_adam", "_FunctionalAdam"),
              ("AdamW", dict(lr=0.01, weight_decay=0.1), "functional_adamw", "_FunctionalAdamW"),
              ("Adagrad", dict(lr=0.1, lr_decay=0.01, initial_accumulator_value=0.5), "functional_adagrad",
               "_FunctionalAdagrad"),
              ("Adadelta", dict(lr=0.5, rho=0.8), "functional_adadelta", "_FunctionalAdadelta"),
              ("RMSprop", dict(lr=0.01, momentum=0.5, centered=True), "functional_rmsprop", "_FunctionalRMSprop"),
              ("Rprop", dict(lr=0.01, etas=(0.4, 1.3)), "functional_rprop", "_FunctionalRprop"),
              ("Adamax", dict(lr=0.01, weight_decay=0.01), "functional_adamax", "_FunctionalAdamax")]


@pytest.mark.parametrize("name,kw,mod,cls", FUNCTIONAL, ids=[f[0] for f in FUNCTIONAL])
def test_functional_optimizers_match_torch(torch, name, kw, mod, cls):
    from ember.distributed.optim import _functional, as_functional_optim
    t_mod = importlib.import_module(f"torch.distributed.optim.{mod}")
    rs = np.random.RandomState(0)
    start = rs.randn(2, 3).astype(np.float32)
    grads = [rs.randn(2, 3).astype(np.float32) for _ in range(4)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # torch: TorchScript support is deprecated
        theirs_p = torch.nn.Parameter(torch.tensor(start))
        theirs = getattr(t_mod, cls)([theirs_p], **kw)
        ours_p = ember.nn.Parameter(ember.tensor(start))
        ours = getattr(_functional, cls)([ours_p], **kw)
        assert ours.defaults == theirs.defaults
        for g in grads:
            theirs.step([torch.tensor(g)])
            ours.step([ember.tensor(g)])
        np.testing.assert_allclose(ours_p.detach().numpy(), theirs_p.detach().numpy(), rtol=1e-5, atol=1e-6)
        assert ours_p.grad is None and set(ours.state[ours_p]) == set(theirs.state[theirs_p])
        with pytest.raises(ValueError, match="the gradients passed in does not equal"):
            ours.step([])
        fopt = as_functional_optim(getattr(ember.optim, name), **kw)
        t_fopt = torch.distributed.optim.as_functional_optim(getattr(torch.optim, name), **kw)
        assert type(fopt).__name__ == type(t_fopt).__name__ and fopt.defaults == t_fopt.defaults
        assert hasattr(fopt, "step_param") == hasattr(t_fopt, "step_param")
        if hasattr(fopt, "step_param"):
            a, b = ember.nn.Parameter(ember.tensor(start)), torch.nn.Parameter(torch.tensor(start))
            for g in grads:
                fopt.step_param(a, ember.tensor(g))
                t_fopt.step_param(b, torch.tensor(g))
            np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-5, atol=1e-6)


def test_as_functional_optim_errors(torch):
    from ember.distributed.optim import as_functional_optim
    from ember.distributed.optim._functional import _FunctionalSGD
    with pytest.raises(ValueError, match="does not have a functional counterpart"):
        as_functional_optim(ember.optim.LBFGS)
    with pytest.raises(ValueError, match="optimizer got an empty parameter list"):
        _FunctionalSGD([])
    with pytest.raises(ValueError, match="Invalid beta parameter at index 0"):
        as_functional_optim(ember.optim.Adam, betas=(1.5, 0.9))
    # changing defaults between steps changes the step, as in torch's
    p = ember.nn.Parameter(ember.zeros(2))
    f = as_functional_optim(ember.optim.SGD, lr=1.0)
    f.step_param(p, ember.ones(2))
    f.defaults["lr"] = 0.5
    f.step_param(p, ember.ones(2))
    f.step_param(p, None)
    assert p.tolist() == [-1.5, -1.5]
