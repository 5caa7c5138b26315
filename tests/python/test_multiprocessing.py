"""ember.multiprocessing: shared-memory tensors across fork and spawn, queue round-trips, sharing
strategies, segment lifetime (no /dev/shm leaks, also after SIGKILL) and spawn()'s errors."""
import os
import signal
import subprocess
import sys
import textwrap

import pytest

import ember
import ember.multiprocessing as mp
from shm_util import assert_no_new_segments, ember_segments

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture(params=["file_descriptor", "file_system"])
def strategy(request):
    old = mp.get_sharing_strategy()
    mp.set_sharing_strategy(request.param)
    yield request.param
    mp.set_sharing_strategy(old)


def test_strategies():
    assert mp.get_sharing_strategy() == "file_descriptor"
    assert mp.get_all_sharing_strategies() == {"file_descriptor", "file_system"}
    with pytest.raises(AssertionError):
        mp.set_sharing_strategy("carrier_pigeon")
    assert mp.Process is not None and mp.Queue is not None and mp.get_context("fork").Pool is not None


def test_share_memory_in_place(strategy):
    t = ember.arange(12.).reshape(3, 4)
    v = t[1:, ::2]
    assert not t.is_shared()
    assert t.share_memory_() is t
    assert t.is_shared() and v.is_shared()  # the views follow their storage
    assert t.tolist() == ember.arange(12.).reshape(3, 4).tolist()
    v.fill_(-1)
    assert t[1].tolist() == [-1, 5, -1, 7]
    ptr = t.data_ptr()
    t.share_memory_()  # already shared: nothing moves
    assert t.data_ptr() == ptr
    with pytest.raises(RuntimeError, match="not resizable"):
        ember.add(ember.ones(100), 1, out=t)  # shared memory cannot grow
    e = ember.empty(0).share_memory_()
    assert e.is_shared() and e.numel() == 0
    if strategy == "file_system":
        name = ember._C._shm_name(t)
        assert name[1:] in ember_segments()
        del t, v
        assert name[1:] not in ember_segments()  # the last reference unlinks the segment


def _child_add(t, value):
    t.add_(value)


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_child_writes_are_seen(method):
    t = ember.zeros(2, 3).share_memory_()
    ctx = mp.get_context(method)
    p = ctx.Process(target=_child_add, args=(t[1], 5.0))
    p.start()
    p.join(60)
    assert p.exitcode == 0
    assert t.tolist() == [[0, 0, 0], [5, 5, 5]]


def _echo(q_in, q_out, done):
    while True:
        x = q_in.get()
        if x is None:
            break
        x.mul_(2)  # shared: the sender sees this
        q_out.put(x)
    done.wait()


def test_queue_round_trip_views(strategy):
    ctx = mp.get_context("fork")
    q_in, q_out, done = ctx.Queue(), ctx.Queue(), ctx.Event()
    p = ctx.Process(target=_echo, args=(q_in, q_out, done))
    p.start()
    base = ember.arange(24, dtype=ember.int64).reshape(4, 6)
    cases = [base[1:3, 2:5], base.t()[2], base[:, ::3], ember.tensor([True, False]), ember.empty(0, 3),
             ember.tensor(3.5)]
    for c in cases:
        expected = (c * 2).tolist() if c.dtype != ember.bool else c.tolist()
        if c.dtype == ember.bool:
            c = c.to(ember.uint8)
            expected = (c * 2).tolist()
        q_in.put(c)
        r = q_out.get(timeout=30)
        assert r.dtype == c.dtype and r.shape == c.shape
        assert r.stride() == c.stride() and r.storage_offset() == c.storage_offset()
        assert r.tolist() == expected and c.tolist() == expected
        assert r.is_shared() and c.is_shared()
    q_in.put(None)
    done.set()
    p.join(30)
    assert p.exitcode == 0


def test_parameters_and_non_leaf():
    from multiprocessing.reduction import ForkingPickler

    def round_trip(x):
        return ForkingPickler.loads(ForkingPickler.dumps(x))

    w = ember.nn.Parameter(ember.ones(3))
    r = round_trip(w)
    assert type(r) is ember.nn.Parameter and r.requires_grad and w.is_shared()
    r.data.fill_(4)  # the same memory
    assert w.tolist() == [4, 4, 4]
    y = w * 2
    with pytest.raises(RuntimeError, match="Cowardly refusing"):
        ForkingPickler.dumps(y)
    d = round_trip(y.detach())
    assert d.tolist() == y.tolist() and not d.requires_grad


def _echo_pair(q_in, q_out, done):
    a, b = q_in.get()
    q_out.put((b, a, a.data_ptr() + 4 * b.storage_offset() == b.data_ptr()))
    done.wait()


def test_one_storage_maps_once(strategy):
    ctx = mp.get_context("fork")
    q_in, q_out, done = ctx.Queue(), ctx.Queue(), ctx.Event()
    p = ctx.Process(target=_echo_pair, args=(q_in, q_out, done))
    p.start()
    t = ember.arange(6.)
    q_in.put((t, t[2:]))
    b, a, aliased_in_child = q_out.get(timeout=30)
    done.set()
    p.join(30)
    assert aliased_in_child  # a tensor and its view arrive as views of one mapping
    assert a.data_ptr() == t.data_ptr() and b.data_ptr() == t.data_ptr() + 8  # back home: the original memory


def _double(t):
    return t * 2


def test_pool_map():
    with mp.get_context("fork").Pool(2) as pool:
        out = pool.map(_double, [ember.full((2,), float(i)) for i in range(4)])
    assert [o.tolist() for o in out] == [[0, 0], [2, 2], [4, 4], [6, 6]]


def test_module_share_memory():
    m = ember.nn.Linear(3, 2)
    m.weight.grad = ember.zeros(2, 3)
    assert m.share_memory() is m
    assert all(p.is_shared() for p in m.parameters()) and m.weight.grad.is_shared()
    ctx = mp.get_context("fork")
    p = ctx.Process(target=_child_add, args=(m.weight.data, 1.0))
    before = m.weight.detach().clone()
    p.start()
    p.join(30)
    assert m.weight.tolist() == (before + 1).tolist()


LEAK_SCRIPT = textwrap.dedent("""
    import os, signal, sys
    sys.path.insert(0, {path!r})
    import ember, ember.multiprocessing as mp

    def hold(q, ready):
        ts = [q.get() for _ in range(2)]
        ready.set()
        signal.pause()

    def fail(t):
        raise ValueError("boom")

    if __name__ == "__main__":
        mp.set_sharing_strategy(sys.argv[1])
        ctx = mp.get_context("fork")
        q, ready = ctx.Queue(), ctx.Event()
        p = ctx.Process(target=hold, args=(q, ready))
        p.start()
        q.put(ember.ones(1000))
        q.put(ember.arange(10.)[2:])
        assert ready.wait(30)
        os.kill(p.pid, signal.SIGKILL)   # dies holding both segments
        p.join()
        p = ctx.Process(target=fail, args=(ember.zeros(4).share_memory_(),))
        p.start()
        p.join()
        print(len([f for f in os.listdir("/dev/shm") if f.startswith("ember_")]), p.exitcode)
""")


@pytest.mark.parametrize("strat", ["file_descriptor", "file_system"])
def test_no_leaked_segments_after_kill(tmp_path, strat):
    script = tmp_path / "leak.py"
    script.write_text(LEAK_SCRIPT.format(path=os.path.join(ROOT, "python")))
    before = ember_segments()
    r = subprocess.run([sys.executable, str(script), strat], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    in_flight, code = map(int, r.stdout.split())
    assert code == 1
    if strat == "file_system":
        assert in_flight >= 2  # the killed child's segments were still there while the parent lived
    # the resource tracker unlinks what the killed child held once the process tree has exited
    assert_no_new_segments(before, timeout=10)


def test_no_leaks_in_process(strategy):
    before = ember_segments()
    live = ember._C._shm_live_mappings()
    ctx = mp.get_context("fork")
    q_in, q_out, done = ctx.Queue(), ctx.Queue(), ctx.Event()
    p = ctx.Process(target=_echo, args=(q_in, q_out, done))
    p.start()
    for i in range(5):
        q_in.put(ember.full((100,), float(i)))
        assert q_out.get(timeout=30).tolist() == [2.0 * i] * 100
    q_in.put(None)
    done.set()
    p.join(30)
    assert ember._C._shm_live_mappings() == live
    assert_no_new_segments(before)


def _spawn_ok(i, t):
    t[i] = i + 1


def _spawn_fail(i):
    if i == 1:
        raise ValueError("worker one failed")
    signal.pause() if i == 0 else None


def _spawn_exit(i, how):
    if how == "code":
        sys.exit(3)
    os.kill(os.getpid(), signal.SIGKILL)


def test_spawn_writes_and_errors():
    t = ember.zeros(3).share_memory_()
    mp.spawn(_spawn_ok, args=(t,), nprocs=3)  # the real spawn start method, one case
    assert t.tolist() == [1, 2, 3]
    with pytest.raises(mp.ProcessRaisedException, match="worker one failed") as ei:
        mp.start_processes(_spawn_fail, nprocs=2, start_method="fork")
    assert ei.value.error_index == 1 and "Traceback" in str(ei.value) and "Process 1" in str(ei.value)
    with pytest.raises(mp.ProcessExitedException, match="exit code 3") as ei:
        mp.start_processes(_spawn_exit, args=("code",), nprocs=1, start_method="fork")
    assert ei.value.exit_code == 3
    with pytest.raises(mp.ProcessExitedException, match="signal SIGKILL") as ei:
        mp.start_processes(_spawn_exit, args=("kill",), nprocs=1, start_method="fork")
    assert ei.value.signal_name == "SIGKILL"
    ctx = mp.start_processes(_spawn_ok, args=(t,), nprocs=2, join=False, start_method="fork")
    assert len(ctx.pids()) == 2
    while not ctx.join():
        pass
    with pytest.warns(FutureWarning, match="only supports start_method=spawn"):
        mp.spawn(_spawn_ok, args=(t,), nprocs=1, start_method="fork")


def _parallel_work(q):
    q.put((ember.get_num_threads(), ember.ones(1 << 21).exp().sum().item()))


def test_fork_after_parallel_region():
    # libgomp's pool does not survive fork(): the child must not hang in its first parallel op
    old = ember.get_num_threads()
    ember.set_num_threads(2)
    try:
        ember.ones(1 << 21).exp().sum()  # the parent's pool is up
        ctx = mp.get_context("fork")
        q = ctx.Queue()
        p = ctx.Process(target=_parallel_work, args=(q,))
        p.start()
        threads, total = q.get(timeout=30)
        p.join(30)
    finally:
        ember.set_num_threads(old)
    assert threads == 1 and total == pytest.approx(2.718281828 * (1 << 21), rel=1e-4)
