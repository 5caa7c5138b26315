"""The profiler on the GPU (ProfilerActivity.CUDA through CUPTI): kernels recorded with their device
time, each tied to the op that launched it, the table's CUDA columns, the Chrome trace's GPU rows, and
the host running ahead of the device (the paper's Fig. 1). Skips without a GPU."""
import json

import pytest

import ember
from ember.profiler import DeviceType, ProfilerActivity, profile, record_function

pytestmark = pytest.mark.skipif(not ember.cuda.is_available(), reason="no CUDA GPU")


def test_cuda_is_a_supported_activity():
    assert ProfilerActivity.CUDA in ember.profiler.supported_activities()


def test_kernels_are_tied_to_their_ops(tmp_path):
    x = ember.randn(256, 256, device="cuda")
    lin = ember.nn.Linear(256, 128).cuda()
    ember.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        with record_function("fwd"):
            y = ember.relu(lin(x))
        y.sum().backward()
    events = prof.events()
    kernels = [e for e in events if e.device_type == DeviceType.CUDA]
    assert kernels, "no device work recorded"
    assert all(k.device_time_total > 0 and k.cpu_time_total == 0 for k in kernels)
    assert all(k.device_index == 0 for k in kernels)
    linked = [k for k in kernels if k.linked is not None]
    assert len(linked) >= len(kernels) - 1  # the allocator's fills aside, every kernel has its op
    by_name = {}
    for e in events:
        if e.device_type == DeviceType.CPU:
            by_name.setdefault(e.name, []).append(e)
    # the matrix product ran on the GPU, inside the forward range
    assert sum(e.device_time_total for e in by_name["fwd"]) > 0
    mm = [e for name in ("aten::addmm", "aten::mm", "aten::linear") for e in by_name.get(name, [])]
    assert any(e.kernels for e in mm) or any(e.device_time_total > 0 for e in mm)
    assert sum(e.device_time_total for e in by_name["aten::relu"]) > 0
    # a kernel starts after the op that launched it began
    for k in linked:
        assert k.time_range.start >= k.linked.time_range.start - 50  # us: the two clocks' offset
    table = prof.key_averages().table(sort_by="cuda_time_total", row_limit=10)
    assert "Self CUDA" in table and "Self CUDA time total" in table
    path = tmp_path / "gpu.json"
    prof.export_chrome_trace(str(path))
    trace = json.load(open(path))["traceEvents"]
    assert any(t.get("cat") == "kernel" for t in trace)
    assert any(t.get("cat") == "ac2g" and t.get("ph") == "f" for t in trace)


def test_host_runs_ahead_of_the_device():
    a = ember.randn(4096, 4096, device="cuda")
    ember.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        b = a @ a  # several milliseconds of GPU work queued in microseconds
        c = b + 1
    del c
    events = prof.events()
    mm = next(e for e in events if e.name in ("aten::matmul", "aten::mm") and e.device_time_total > 0)
    kernel_end = max(k.time_range.end for k in events if k.device_type == DeviceType.CUDA and k.linked is not None
                     and k.linked.name in ("aten::mm", "aten::matmul"))
    assert mm.time_range.end < kernel_end  # the op returned before its kernel finished


def test_cuda_only_profile_keeps_the_device_events():
    x = ember.ones(1024, device="cuda")
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        x * 2
    events = prof.events()
    assert events and all(e.device_type == DeviceType.CUDA for e in events)


def test_legacy_profiler_use_device():
    x = ember.ones(1024, device="cuda")
    with ember.autograd.profiler.profile(use_device="cuda") as prof:
        x.exp()
    exp = [e for e in prof.function_events if e.name == "aten::exp"]
    assert exp and exp[0].device_time_total > 0


def test_matches_torch_on_the_same_step():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch without CUDA")
    headers = {}
    for lib in (ember, torch):
        x = lib.randn(512, 512, device="cuda")
        lib.cuda.synchronize()
        with lib.profiler.profile(activities=[lib.profiler.ProfilerActivity.CPU,
                                              lib.profiler.ProfilerActivity.CUDA]) as prof:
            lib.mm(x, x).relu()
        avg = {e.key: e for e in prof.key_averages()}
        assert avg["aten::mm"].device_time_total > 0 and avg["aten::relu"].device_time_total > 0
        headers[lib.__name__] = prof.key_averages().table(row_limit=5).splitlines()[1].split("  ")
    # the same columns, in the same order
    assert [h.strip() for h in headers["ember"] if h.strip()] == [h.strip() for h in headers["torch"] if h.strip()]
