"""ember.profiler / ember.autograd.profiler: recorded events, backward linkage, record_function,
memory columns, the table and Chrome trace formats, schedules, and toggling from many threads."""
import json
import os
import re
import threading
import time

import pytest

import ember
from ember.profiler import ProfilerAction, ProfilerActivity, profile, record_function, schedule


def names(prof):
    return [e.name for e in prof.events()]


def by_key(prof, **kw):
    return {e.key: e for e in prof.key_averages(**kw)}


def test_every_op_counted():
    a, b = ember.ones(3), ember.ones(3)
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        for _ in range(3):
            a + b
        a.mul(b)
        ember.mul(a, b)
        a.add_(b)
    avg = by_key(prof)
    assert avg["aten::add"].count == 3
    assert avg["aten::mul"].count == 2
    assert avg["aten::add_"].count == 1
    for e in prof.events():
        assert e.time_range.end >= e.time_range.start
        assert e.thread == threading.get_native_id()


def test_nothing_recorded_outside_the_block():
    a = ember.ones(2)
    with profile() as prof:
        a + a
    a * a  # after exit: not recorded
    assert "aten::mul" not in names(prof)
    assert not ember._C._profiler_enabled()


def test_composite_ops_nest_their_callees():
    x = ember.randn(4, 5)
    with profile() as prof:
        ember.nn.functional.linear(x, ember.randn(3, 5), ember.randn(3))
    ev = {e.name: e for e in prof.events()}
    lin = ev["aten::linear"]
    assert lin.cpu_children, "linear's callees are its children"
    for c in lin.cpu_children:
        assert c.cpu_parent is lin
        assert lin.time_range.start <= c.time_range.start and c.time_range.end <= lin.time_range.end
    assert lin.self_cpu_time_total <= lin.cpu_time_total


def test_record_function_context_and_decorator():
    @record_function("decorated")
    def f(x, depth):
        return f(x + 1, depth - 1) if depth else x

    x = ember.ones(2)
    f(x, 1)  # no profiler running: a no-op
    with profile() as prof:
        with record_function("outer") as rf:
            assert isinstance(rf, record_function)
            f(x, 2)
    evs = prof.events()
    outer = next(e for e in evs if e.name == "outer")
    decorated = [e for e in evs if e.name == "decorated"]
    assert len(decorated) == 3  # each (recursive) call gets its own range
    assert decorated[0].cpu_parent is outer
    assert decorated[1].cpu_parent is decorated[0] and decorated[2].cpu_parent is decorated[1]
    assert all(e.is_user_annotation for e in decorated)
    adds = [e for e in evs if e.name == "aten::add"]
    assert len(adds) == 2 and adds[0].cpu_parent is decorated[0]


def test_backward_nodes_linked_to_forward_ops(tmp_path):
    x = ember.randn(3, 4, requires_grad=True)
    w = ember.randn(4, 2, requires_grad=True)
    with profile(record_shapes=True) as prof:
        y = (x @ w).relu().sum()
        y.backward()
    evs = prof.events()
    for fwd_name, node in (("aten::relu", "ReluBackward0"), ("aten::sum", "SumBackward0")):
        fwd = next(e for e in evs if e.name == fwd_name and e.cpu_parent is None)
        bwd = next(e for e in evs if e.name == node)
        wrapper = next(e for e in evs if e.name == "autograd::engine::evaluate_function: " + node)
        assert fwd.sequence_nr >= 0
        assert bwd.sequence_nr == fwd.sequence_nr == wrapper.sequence_nr
        assert bwd.cpu_parent is wrapper
        assert bwd.fwd_thread == fwd.thread
    # the trace carries the link as PyTorch's does: args and a flow arrow
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(str(path))
    trace = json.loads(path.read_text())["traceEvents"]
    relu = next(e for e in trace if e.get("name") == "ReluBackward0")
    fwd = next(e for e in trace if e.get("name") == "aten::relu")
    assert relu["args"]["Sequence number"] == fwd["args"]["Sequence number"]
    assert relu["args"]["Fwd thread id"] == fwd["tid"]
    seq = fwd["args"]["Sequence number"]
    flows = [e for e in trace if e.get("cat") == "fwdbwd" and e["id"] == seq]
    assert sorted(e["ph"] for e in flows) == ["f", "s"]
    assert relu["args"]["Input Dims"] == [[3, 2]]


def _check_nesting(events):
    """Events on one thread either nest or are disjoint (a valid flame chart)."""
    by_tid = {}
    for e in events:
        by_tid.setdefault(e["tid"], []).append(e)
    for evs in by_tid.values():
        evs.sort(key=lambda e: (e["ts"], -e["dur"]))
        stack = []
        for e in evs:
            while stack and stack[-1]["ts"] + stack[-1]["dur"] <= e["ts"] + 1e-3:
                stack.pop()
            if stack:
                top = stack[-1]
                assert e["ts"] + e["dur"] <= top["ts"] + top["dur"] + 1e-3, (e["name"], top["name"])
            stack.append(e)


def test_chrome_trace_is_valid_json(tmp_path):
    x = ember.randn(8, 8, requires_grad=True)
    with profile(record_shapes=True, profile_memory=True) as prof:
        with record_function("step"):
            (x * 2).sum().backward()
    path = tmp_path / "t.json"
    prof.export_chrome_trace(str(path))
    doc = json.loads(path.read_text())
    evs = doc["traceEvents"]
    complete = [e for e in evs if e["ph"] == "X"]
    assert complete
    for e in complete:
        assert {"name", "cat", "ts", "dur", "pid", "tid", "args"} <= set(e)
        assert e["dur"] >= 0 and e["pid"] == os.getpid()
    assert {e["cat"] for e in complete} == {"cpu_op", "user_annotation"}
    step = next(e for e in complete if e["name"] == "step")
    mul = next(e for e in complete if e["name"] == "aten::mul")
    assert step["ts"] <= mul["ts"] and mul["ts"] + mul["dur"] <= step["ts"] + step["dur"] + 1e-3
    assert mul["args"]["Input Dims"][0] == [8, 8] and mul["args"]["Input type"][0] == "float"
    _check_nesting(complete)
    mem = [e for e in evs if e["ph"] == "i"]
    assert mem and all(e["name"] == "[memory]" and "Bytes" in e["args"] for e in mem)
    names_ = {e["args"]["name"] for e in evs if e["ph"] == "M" and e["name"] == "thread_name"}
    assert f"thread {threading.get_native_id()}" in names_
    # gzip when the name says so
    gz = tmp_path / "t.json.gz"
    prof.export_chrome_trace(str(gz))
    import gzip
    assert json.loads(gzip.open(gz, "rt").read())["traceEvents"]


def test_memory_columns():
    with profile(profile_memory=True) as prof:
        with record_function("alloc"):
            keep = ember.empty(1000)  # 4000 bytes, kept
            tmp = ember.empty(500)
            del tmp  # 2000 bytes made and freed
    avg = by_key(prof)
    assert avg["alloc"].cpu_memory_usage == 4000
    assert avg["alloc"].self_cpu_memory_usage == -2000  # the free happened in the range itself
    assert avg["aten::empty"].self_cpu_memory_usage == 6000
    lines = prof.key_averages().table(sort_by="cpu_memory_usage").splitlines()
    assert re.split(r"\s{2,}", lines[1].strip())[6:9] == ["CPU Mem", "Self CPU Mem", "# of Calls"]
    rows = {re.split(r"\s{2,}", line.strip())[0]: re.split(r"\s{2,}", line.strip()) for line in lines[3:-2]}
    assert rows["aten::empty"][6:9] == ["5.86 KB", "5.86 KB", "2"]
    assert rows["alloc"][6:9] == ["3.91 KB", "-1.95 KB", "1"]
    del keep
    # outside every range an allocation shows as a [memory] row
    with profile(profile_memory=True) as prof2:
        ember.empty(10)
    assert "aten::empty" in names(prof2)
    with profile(profile_memory=False) as prof3:
        ember.empty(10)
    assert "CPU Mem" not in prof3.key_averages().table()


def test_table_layout_matches_torch():
    torch = pytest.importorskip("torch")
    results = {}
    for lib in (ember, torch):
        a = lib.ones(2, 3)
        with lib.profiler.profile(record_shapes=True, profile_memory=True) as prof:
            for _ in range(2):
                lib.add(a, a)
            lib.add(lib.ones(4), lib.ones(4))
        results[lib.__name__] = prof
    for lib, prof in results.items():
        avg = by_key(prof)
        assert avg["aten::add"].count == 3
        grouped = [e for e in prof.key_averages(group_by_input_shape=True) if e.key == "aten::add"]
        assert sorted(e.count for e in grouped) == [1, 2]
    for group in (False, True):
        tables = {k: p.key_averages(group_by_input_shape=group).table(sort_by="cpu_time_total", row_limit=3)
                  for k, p in results.items()}
        e_lines, t_lines = tables["ember"].splitlines(), tables["torch"].splitlines()
        assert len(e_lines) == len(t_lines) == 3 + 3 + 2
        # the same columns, titles and widths (the shapes column fits its content)
        assert re.split(r"\s{2,}", e_lines[1].strip()) == re.split(r"\s{2,}", t_lines[1].strip())
        widths = [[len(c) for c in lines[0].split()] for lines in (e_lines, t_lines)]
        assert widths[0][:9] == widths[1][:9]
        assert e_lines[0] == e_lines[2] == e_lines[-2]
        assert re.fullmatch(r"Self CPU time total: [0-9.]+(us|ms|s)", e_lines[-1])
        # the slowest row first: add or ones, whichever the (shared, noisy) machine timed longer
        assert e_lines[3].split()[0] in ("aten::add", "aten::ones")


def test_table_sorting_and_row_limit():
    a = ember.ones(64, 64)
    with profile() as prof:
        for _ in range(5):
            a @ a
        a + a
    avg = prof.key_averages()
    rows = avg.table(sort_by="count", row_limit=1).splitlines()
    assert len(rows) == 6 and rows[3].split()[0] == "aten::matmul"
    assert rows[3].split()[-1] == "5"
    times = [e.self_cpu_time_total for e in sorted(avg, key=lambda e: e.self_cpu_time_total, reverse=True)]
    first = avg.table(sort_by="self_cpu_time_total").splitlines()[3].split()[0]
    assert by_key(prof)[first].self_cpu_time_total == times[0]
    total = sum(e.self_cpu_time_total for e in prof.events())
    assert abs(prof.events().self_cpu_time_total - total) < 1e-6
    assert str(prof.events().table()).endswith("\n")


def test_format_helpers_match_torch():
    pytest.importorskip("torch")
    from torch.autograd import profiler_util as tu
    from ember.profiler import _events as eu
    for us in (0.0, 0.5, 999.9994, 1234.5, 2.5e6):
        assert eu._format_time(us) == tu._format_time(us)
    for n in (0, 10, -32, 5000, 5 << 20, -(3 << 30)):
        assert eu._format_memory(n) == tu._format_memory(n)
    assert eu._format_time_share(1, 3) == tu._format_time_share(1, 3)


def test_schedule_actions_match_torch():
    torch = pytest.importorskip("torch")
    for kw in (dict(wait=1, warmup=1, active=2, repeat=2), dict(wait=0, warmup=2, active=1),
               dict(wait=2, warmup=1, active=3, repeat=1, skip_first=3), dict(wait=3, warmup=1, active=1, repeat=1,
                                                                                skip_first_wait=1)):
        ours, theirs = schedule(**kw), torch.profiler.schedule(**kw)
        assert [ours(i).name for i in range(16)] == [theirs(i).name for i in range(16)], kw
    with pytest.raises(AssertionError):
        schedule(wait=1, warmup=1, active=0)


def test_schedule_steps_and_on_trace_ready():
    traces = []
    a = ember.ones(2)
    sched = schedule(wait=1, warmup=1, active=2, repeat=2)
    with profile(schedule=sched, on_trace_ready=lambda p: traces.append(p.events())) as prof:
        for step in range(10):
            a + a
            prof.step()
    assert prof.step_num == 10
    assert len(traces) == 2
    for t, active_steps in zip(traces, ((2, 3), (6, 7))):
        steps = sorted(e.name for e in t if e.name.startswith("ProfilerStep#"))
        assert steps == [f"ProfilerStep#{s}" for s in active_steps]
        assert sum(e.name == "aten::add" for e in t) == 2  # the warmup step's op was dropped
        for e in t:
            if e.name == "aten::add":
                assert e.cpu_parent is not None and e.cpu_parent.name.startswith("ProfilerStep#")
    assert ProfilerAction.RECORD_AND_SAVE == sched(3)


def test_no_schedule_calls_on_trace_ready_once(tmp_path):
    from ember.profiler import tensorboard_trace_handler
    with profile(on_trace_ready=tensorboard_trace_handler(str(tmp_path), worker_name="w")):
        ember.ones(3).sum()
    files = os.listdir(tmp_path)
    assert len(files) == 1 and files[0].startswith("w.") and files[0].endswith(".pt.trace.json")
    assert json.loads((tmp_path / files[0]).read_text())["traceEvents"]


def test_with_stack():
    def inner_fn():
        return ember.ones(2) + 1

    with profile(with_stack=True) as prof:
        inner_fn()
    add = next(e for e in prof.events() if e.name == "aten::add")
    assert "inner_fn" in add.stack[0] and "test_profiler.py" in add.stack[0]
    table = prof.key_averages(group_by_stack_n=2).table()
    assert "Source Location" in table and "inner_fn" in table


def test_autograd_profiler_api(tmp_path):
    x = ember.randn(5, requires_grad=True)
    with ember.autograd.profiler.profile(record_shapes=True) as prof:
        with ember.autograd.profiler.record_function("fwd"):
            y = (x * x).sum()
        y.backward()
    evs = prof.function_events
    assert "MulBackward0" in [e.name for e in evs]
    assert "fwd" in [e.name for e in evs]
    assert "Self CPU time total" in prof.table()
    prof.export_chrome_trace(str(tmp_path / "a.json"))
    with ember.autograd.profiler.profile(enabled=False) as off:
        x + x
    assert off.function_events is None
    with pytest.raises(RuntimeError):
        profile().events()


def test_only_one_profiler_at_a_time():
    with profile():
        with pytest.raises(RuntimeError, match="already enabled"):
            with profile():
                pass
    with profile() as p:  # the failed start left the running one intact
        ember.ones(1)
    assert "aten::ones" in names(p)


def test_activities_without_cpu_record_nothing():
    with pytest.warns(UserWarning):
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            ember.ones(1)
    assert prof.function_events is None or len(prof.function_events) == 0


def test_ops_on_other_threads_and_toggling():
    stop = threading.Event()
    errors = []

    def worker():
        try:
            a = ember.ones(4, requires_grad=True)
            while not stop.is_set():
                with record_function("worker_range"):
                    (a * 2).sum().backward()
                time.sleep(0.0001)  # hand the GIL back so the main thread can toggle
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=worker) for _ in range(3)]
    for t in threads:
        t.start()
    seen_tids = set()
    try:
        for i in range(20):
            with profile(profile_memory=bool(i % 2), record_shapes=bool(i % 3)) as prof:
                for _ in range(20):
                    ember.ones(2) + 1
                time.sleep(0.005)  # let the workers (and their GIL-free backward passes) run
            seen_tids |= {e.thread for e in prof.events()}
    finally:
        stop.set()
        for t in threads:
            t.join()
    assert not errors
    assert threading.get_native_id() in seen_tids
    assert len(seen_tids) >= 2  # the workers' ops were recorded on their own threads


def test_cpu_memory_api():
    s0 = ember.cpu.memory_stats()
    for k in ("allocated_bytes.all.current", "allocated_bytes.all.peak", "allocated_bytes.all.allocated",
              "allocated_bytes.all.freed", "allocation.all.current", "allocation.all.allocated",
              "allocation.all.freed"):
        assert k in s0
    base = ember.cpu.memory_allocated()
    ember.cpu.reset_peak_memory_stats()
    assert ember.cpu.max_memory_allocated() == base
    t = ember.empty(1 << 16)
    assert ember.cpu.memory_allocated() == base + 4 * (1 << 16)
    del t
    assert ember.cpu.memory_allocated() == base
    assert ember.cpu.max_memory_allocated() == base + 4 * (1 << 16)
    s1 = ember.cpu.memory_stats()
    assert s1["allocation.all.allocated"] - s0["allocation.all.allocated"] >= 1
    assert s1["allocated_bytes.all.freed"] - s0["allocated_bytes.all.freed"] >= 4 * (1 << 16)
    ember.cpu.reset_peak_memory_stats()
    assert ember.cpu.max_memory_allocated() == base
    assert "Allocated memory (peak)" in ember.cpu.memory_summary()


def test_sessions_started_from_several_threads():
    # one session at a time: the losers of the race get RuntimeError, nothing crashes or leaks
    results = {"ok": 0, "busy": 0}
    lock = threading.Lock()

    def worker():
        for _ in range(30):
            try:
                with profile(profile_memory=True) as prof:
                    ember.ones(3).sum()
                    time.sleep(0.0005)
                assert any(e.name == "aten::sum" for e in prof.events())
                key = "ok"
            except RuntimeError as exc:
                assert "already enabled" in str(exc)
                key = "busy"
            with lock:
                results[key] += 1

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results["ok"] >= 1 and results["ok"] + results["busy"] == 120
    assert not ember._C._profiler_enabled()


def test_failing_op_still_closes_its_range():
    with profile() as prof:
        with pytest.raises(RuntimeError):
            with record_function("bad"):
                ember.ones(2) + ember.ones(3)
        ember.ones(1)
    evs = prof.events()
    bad = next(e for e in evs if e.name == "bad")
    add = next(e for e in evs if e.name == "aten::add")
    ones_after = [e for e in evs if e.name == "aten::ones"][-1]
    assert add.cpu_parent is bad and add.time_range.end <= bad.time_range.end
    assert ones_after.cpu_parent is None  # the stack unwound with the exception


def _raw_with_device_work():
    """A session as _C._profiler_stop() hands it back after a GPU profile (times in ns)."""
    us = 1000
    t0 = 10_000 * us
    ev = lambda name, kind, s, e, parent, corr: (name, kind, t0 + s * us, t0 + e * us, -1, parent, 0, 0, [], [], [],
                                                 corr)
    events = [ev("step", 1, 0, 100, -1, 1), ev("aten::linear", 0, 10, 60, 0, 2), ev("aten::addmm", 0, 20, 50, 1, 3),
              ev("aten::relu", 0, 70, 90, 0, 4)]
    dev = lambda name, kind, s, e, corr, nbytes=0: (name, kind, t0 + s * us, t0 + e * us, 0, 7, corr, nbytes,
                                                    (4, 1, 1), (128, 1, 1))
    device = [dev("gemm_kernel", 0, 30, 130, 3), dev("bias_kernel", 0, 130, 140, 3), dev("Memset", 2, 55, 57, 2, 64),
              dev("relu_kernel", 0, 140, 150, 4), dev("Memcpy HtoD", 1, 150, 160, 0, 4096)]
    return {"start_ns": t0, "stop_ns": t0 + 200 * us, "epoch_offset_ns": 0, "pid": 1, "device_warning": "",
            "threads": [(11, events, [])], "device_events": device}


def test_device_times_follow_torch_definitions(tmp_path):
    from ember.profiler._events import build_event_list
    from ember.profiler import DeviceType

    evs = build_event_list(_raw_with_device_work(), use_device="cuda")
    by = {e.name: e for e in evs}
    assert by["gemm_kernel"].device_type == DeviceType.CUDA and by["aten::addmm"].device_type == DeviceType.CPU
    assert ember.autograd.DeviceType.CUDA == 1 and str(DeviceType.CUDA) == "DeviceType.CUDA"
    # a host op: its own kernels (self) plus its children's (total); device work has no CPU time
    assert [k.name for k in by["aten::addmm"].kernels] == ["gemm_kernel", "bias_kernel"]
    assert by["aten::addmm"].self_device_time_total == pytest.approx(110)
    assert by["aten::linear"].self_device_time_total == pytest.approx(2)  # its memset
    assert by["aten::linear"].device_time_total == pytest.approx(112)
    assert by["step"].device_time_total == pytest.approx(122) and by["step"].self_device_time_total == 0
    assert by["gemm_kernel"].cpu_time_total == 0 and by["gemm_kernel"].self_cpu_time_total == 0
    assert by["gemm_kernel"].device_time_total == pytest.approx(100)
    assert by["Memcpy HtoD"].linked is None  # launched outside every range
    with pytest.warns(FutureWarning):
        assert by["aten::addmm"].cuda_time_total == pytest.approx(110)
    avg = {e.key: e for e in evs.key_averages()}
    assert avg["aten::addmm"].device_time == pytest.approx(110) and avg["gemm_kernel"].device_type == DeviceType.CUDA
    # the table: PyTorch's CUDA columns and footer; the kernels' self time is the device total
    table = evs.key_averages().table(sort_by="cuda_time_total", row_limit=20)
    lines = table.splitlines()
    assert re.split(r"\s{2,}", lines[1].strip()) == [
        "Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg", "Self CUDA", "Self CUDA %",
        "CUDA total", "CUDA time avg", "# of Calls"]
    assert lines[3].split()[0] == "step"  # the largest CUDA total
    assert lines[-1] == "Self CUDA time total: 132.000us"
    assert lines[-2].startswith("Self CPU time total: 100.000us")
    # the trace: a GPU process with a row per stream, kernels tied to their op by flow arrows
    path = tmp_path / "gpu.json"
    evs.export_chrome_trace(str(path))
    trace = json.load(open(path))["traceEvents"]
    kernels = [t for t in trace if t.get("cat") == "kernel"]
    assert sorted(k["name"] for k in kernels) == ["bias_kernel", "gemm_kernel", "relu_kernel"]
    gemm = next(k for k in kernels if k["name"] == "gemm_kernel")
    assert gemm["pid"] == 0 and gemm["tid"] == 7 and gemm["args"]["grid"] == [4, 1, 1]
    assert gemm["args"]["External id"] == by["aten::addmm"].id
    assert {t["cat"] for t in trace if t.get("ph") in ("s", "f") and t["cat"] == "ac2g"} == {"ac2g"}
    assert any(t.get("name") == "process_name" and t["args"]["name"] == "GPU 0" for t in trace)
    assert [t["cat"] for t in trace if t.get("name") == "Memcpy HtoD"] == ["gpu_memcpy"]


def test_cpu_profile_has_no_device_columns():
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        ember.ones(2) + 1
    assert "CUDA" not in prof.key_averages().table()
    assert all(e.device_time_total == 0 and e.device_type == ember.profiler.DeviceType.CPU for e in prof.events())
    if not ember.cuda.is_available():
        assert ProfilerActivity.CUDA not in ember.profiler.supported_activities()
        with pytest.warns(UserWarning, match="GPU|device profiler"):
            with ember.autograd.profiler.profile(use_device="cuda") as p2:
                ember.ones(2) + 1
        assert "aten::add" in [e.name for e in p2.function_events]  # the host part is still recorded
