"""DataLoader with worker processes: order, prefetching, persistent workers, worker info and seeding,
IterableDataset sharding, and the faults (worker exception, killed worker, timeout, Ctrl-C)."""
import os
import random
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

import ember
from ember.utils.data import DataLoader, Dataset, IterableDataset, get_worker_info
from ember.utils.data._utils.worker import _numpy_seed
from shm_util import assert_no_new_segments, ember_segments

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class Squares(Dataset):
    def __init__(self, n=20, fail_at=None, kill_at=None, sleep_at=None):
        self.n, self.fail_at, self.kill_at, self.sleep_at = n, fail_at, kill_at, sleep_at

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        if i == self.fail_at:
            raise KeyError(f"no item {i}")
        if i == self.kill_at:
            os.kill(os.getpid(), signal.SIGKILL)
        if i == self.sleep_at:
            time.sleep(30)
        info = get_worker_info()
        return ember.full((2,), float(i * i)), i, info.id if info else -1, os.getpid()


class Seeds(Dataset):
    def __len__(self):
        return 4

    def __getitem__(self, i):
        info = get_worker_info()
        return info.id, info.seed, random.random(), float(np.random.rand()), ember.rand(1).item()


class Stream(IterableDataset):
    def __init__(self, n):
        self.n = n

    def __iter__(self):
        info = get_worker_info()
        start, step = (0, 1) if info is None else (info.id, info.num_workers)
        return iter(range(start, self.n, step))


def test_batches_match_single_process():
    g = ember.Generator()
    ref = [(x.tolist(), i.tolist()) for x, i, _, _ in
           DataLoader(Squares(), batch_size=3, shuffle=True, generator=g.manual_seed(5))]
    loader = DataLoader(Squares(), batch_size=3, shuffle=True, generator=g.manual_seed(5), num_workers=2)
    out = list(loader)
    assert [(x.tolist(), i.tolist()) for x, i, _, _ in out] == ref
    assert sorted(set(w for _, _, wid, _ in out for w in wid.tolist())) == [0, 1]
    assert len(set(p for _, _, _, pid in out for p in pid.tolist()) - {os.getpid()}) == 2
    assert all(x.is_shared() for x, _, _, _ in out)  # they arrived through shared memory
    assert len(loader) == 7


@pytest.mark.filterwarnings("ignore:This DataLoader will create")
def test_unbatched_out_of_order_prefetch():
    out = list(DataLoader(Squares(9), batch_size=None, num_workers=2, prefetch_factor=1, in_order=False))
    assert sorted(i for _, i, _, _ in out) == list(range(9))
    out = list(DataLoader(Squares(9), batch_size=None, num_workers=3, prefetch_factor=4))
    assert [i for _, i, _, _ in out] == list(range(9))


def test_argument_checks():
    with pytest.warns(UserWarning, match="This DataLoader will create 64 worker processes"):
        DataLoader(Squares(), num_workers=64).check_worker_number_rationality()
    with pytest.raises(ValueError, match="prefetch_factor"):
        DataLoader(Squares(), prefetch_factor=2)
    with pytest.raises(ValueError, match="non-negative"):
        DataLoader(Squares(), num_workers=1, prefetch_factor=-1)
    with pytest.raises(ValueError, match="persistent_workers"):
        DataLoader(Squares(), persistent_workers=True)
    with pytest.raises(ValueError, match="num_workers > 0"):
        DataLoader(Squares(), multiprocessing_context="fork")
    with pytest.raises(ValueError, match="valid start method"):
        DataLoader(Squares(), num_workers=1, multiprocessing_context="teleport")
    with pytest.raises(TypeError):
        DataLoader(Squares(), num_workers=1, multiprocessing_context=3)
    assert DataLoader(Squares(), num_workers=2).prefetch_factor == 2


def test_persistent_workers_and_init_fn(tmp_path):
    marks = str(tmp_path)
    loader = DataLoader(Squares(8), batch_size=2, num_workers=2, persistent_workers=True,
                        worker_init_fn=lambda wid: open(os.path.join(marks, f"w{wid}"), "w").close())
    pids = []
    for _ in range(3):
        batches = list(loader)
        assert [i.tolist() for _, i, _, _ in batches] == [[0, 1], [2, 3], [4, 5], [6, 7]]
        pids.append(sorted(set(p for _, _, _, pid in batches for p in pid.tolist())))
    assert pids[0] == pids[1] == pids[2]  # the same two processes every epoch
    next(iter(loader))  # an abandoned epoch ...
    assert len(list(loader)) == 4  # ... does not leak into the next
    assert sorted(os.listdir(marks)) == ["w0", "w1"]


def test_worker_seeding():
    g = ember.Generator().manual_seed(123)
    base_seed = int(ember.empty((), dtype=ember.int64).random_(generator=ember.Generator().manual_seed(123)).item())
    rows = list(DataLoader(Seeds(), batch_size=None, num_workers=2, generator=g))
    for wid, seed, py, npv, ev in rows[:2]:  # the first item of each worker
        assert seed == base_seed + wid
        random.seed(seed)
        assert py == random.random()
        np.random.seed(_numpy_seed(base_seed, wid))
        assert npv == float(np.random.rand())
        ember.manual_seed(seed)
        assert ev == ember.rand(1).item()
    again = list(DataLoader(Seeds(), batch_size=None, num_workers=2, generator=ember.Generator().manual_seed(123)))
    assert again == rows


def test_numpy_seed_matches_torch():
    worker = pytest.importorskip("torch.utils.data._utils.worker")
    for base, wid in [(0, 0), (123456789012345, 3), (2**63 - 1, 7)]:
        assert list(_numpy_seed(base, wid)) == list(worker._generate_state(base, wid))


@pytest.mark.filterwarnings("ignore:This DataLoader will create")
def test_iterable_sharding():
    out = list(DataLoader(Stream(11), batch_size=2, num_workers=3))
    assert sorted(v for b in out for v in b.tolist()) == list(range(11))
    # each worker fills its own batches; exhausted workers drop out
    assert len(out) == 2 + 2 + 2


def test_worker_exception_is_reraised():
    loader = DataLoader(Squares(fail_at=5), batch_size=2, num_workers=2)
    with pytest.raises(KeyError) as ei:
        list(loader)
    msg = str(ei.value)
    assert "Caught KeyError in DataLoader worker process 0" in msg
    assert "Original Traceback" in msg and "no item 5" in msg and "__getitem__" in msg


def test_worker_init_fn_exception():
    def bad_init(wid):
        raise ValueError(f"init {wid}")
    with pytest.raises(ValueError, match="Caught ValueError in DataLoader worker process"):
        list(DataLoader(Squares(4), num_workers=1, worker_init_fn=bad_init))


def test_killed_worker_is_reported():
    t0 = time.monotonic()
    with pytest.raises(RuntimeError, match=r"DataLoader worker \(pid\(s\) \d+\) exited unexpectedly"):
        list(DataLoader(Squares(kill_at=3), batch_size=None, num_workers=2))
    assert time.monotonic() - t0 < 10


def test_timeout():
    t0 = time.monotonic()
    with pytest.raises(RuntimeError, match="DataLoader timed out after 0.5 seconds"):
        list(DataLoader(Squares(4, sleep_at=0), batch_size=None, num_workers=1, timeout=0.5))
    assert time.monotonic() - t0 < 10


def test_pin_memory_and_spawn_context():
    with pytest.warns(UserWarning, match="pin_memory"):
        loader = DataLoader(Squares(6), batch_size=3, num_workers=1, pin_memory=True,
                            multiprocessing_context="spawn")
    assert [i.tolist() for _, i, _, _ in loader] == [[0, 1, 2], [3, 4, 5]]


def test_no_leaked_segments_file_system():
    import ember.multiprocessing as mp
    before = ember_segments()
    mp.set_sharing_strategy("file_system")
    try:
        total = sum(x.sum().item() for x, _, _, _ in DataLoader(Squares(), batch_size=4, num_workers=2))
    finally:
        mp.set_sharing_strategy("file_descriptor")
    assert total == 2 * sum(i * i for i in range(20))
    assert_no_new_segments(before)


CTRL_C = textwrap.dedent("""
    import os, signal, sys, time
    # a process started in the background by a non-interactive shell ignores SIGINT, and so would this one
    signal.signal(signal.SIGINT, signal.default_int_handler)
    sys.path.insert(0, {path!r})
    import ember
    from ember.utils.data import DataLoader, Dataset

    class Slow(Dataset):
        def __len__(self):
            return 1000
        def __getitem__(self, i):
            time.sleep(0.05)
            return os.getpid()

    if __name__ == "__main__":
        it = iter(DataLoader(Slow(), batch_size=None, num_workers=2))
        try:  # (the pids inside: a Ctrl-C that comes right after them, on a loaded machine, is caught too)
            print(" ".join(str(w.pid) for w in it._workers), flush=True)
            for _ in it:
                pass
        except KeyboardInterrupt:
            print("interrupted", flush=True)
            raise
""")


def test_ctrl_c_cleans_up(tmp_path):
    script = tmp_path / "ctrl_c.py"
    script.write_text(CTRL_C.format(path=os.path.join(ROOT, "python")))
    p = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    pids = [int(x) for x in p.stdout.readline().split()]
    time.sleep(0.3)
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=30)
    assert "interrupted" in out and "KeyboardInterrupt" in err
    for pid in pids:  # the workers are gone (not left as orphans)
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                break
            time.sleep(0.05)
        else:
            pytest.fail(f"worker {pid} still alive")


class Unpicklable(Dataset):
    def __len__(self):
        return 4

    def __getitem__(self, i):
        import threading
        return threading.Lock()


def test_unpicklable_batch_is_reported():
    with pytest.raises(TypeError, match="Caught TypeError in DataLoader worker process 0"):
        list(DataLoader(Unpicklable(), batch_size=None, num_workers=1, collate_fn=lambda x: x, timeout=10))


def test_abandoned_epoch_releases_segments():
    import gc
    import ember.multiprocessing as mp
    before = ember_segments()
    mp.set_sharing_strategy("file_system")
    try:
        it = iter(DataLoader(Squares(), batch_size=2, num_workers=2, prefetch_factor=4))
        first = next(it)
        deadline = time.monotonic() + 5
        while it._worker_result_queue.empty() and time.monotonic() < deadline:
            time.sleep(0.01)  # batches in flight
        del it, first
        gc.collect()
    finally:
        mp.set_sharing_strategy("file_descriptor")
    assert_no_new_segments(before)


def _collate_and_probe(batch):
    from ember.utils.data import default_collate
    x, i, _, _ = default_collate(batch)
    return x, i, x.is_shared()  # stacked straight into shared memory inside the worker


def test_worker_collates_into_shared_memory():
    out = list(DataLoader(Squares(6), batch_size=3, num_workers=1, collate_fn=_collate_and_probe))
    assert [s for _, _, s in out] == [True, True]
    assert [x[:, 0].tolist() for x, _, _ in out] == [[0, 1, 4], [9, 16, 25]]
    x, _, _ = next(iter(DataLoader(Squares(6), batch_size=3, collate_fn=_collate_and_probe)))
    assert not x.is_shared()  # the main process keeps ordinary memory
