"""torch.cuda's submodules (memory, random, streams, profiler), the runtime's error type, the legacy
CUDA storages and the NVML queries: present where PyTorch has them, answering as PyTorch's CUDA build
does on a machine without a GPU. The NVML code runs against a small stand-in library compiled here
(the real one comes with the NVIDIA driver); the GPU side is in tests/python/cuda/test_cuda_backend.py."""
import shutil
import subprocess
import warnings

import pytest

import ember
from cuda_absent import needs_no_gpu, raises_no_gpu
from ember.cuda import _nvml


def test_submodules_hold_what_torch_puts_there():
    m = ember.cuda.memory
    for name in ("memory_allocated", "max_memory_reserved", "memory_stats", "empty_cache", "memory_snapshot",
                 "caching_allocator_alloc", "host_memory_stats", "reset_peak_host_memory_stats",
                 "list_gpu_processes", "mem_get_info", "get_allocator_backend", "set_per_process_memory_fraction"):
        assert getattr(m, name) is getattr(ember.cuda, name), name
    for name in ("manual_seed", "manual_seed_all", "seed", "seed_all", "initial_seed", "get_rng_state",
                 "set_rng_state", "get_rng_state_all", "set_rng_state_all"):
        assert getattr(ember.cuda.random, name) is getattr(ember.cuda, name), name
    for name in ("Stream", "ExternalStream", "Event"):
        assert getattr(ember.cuda.streams, name) is getattr(ember.cuda, name), name
    assert ember.cuda.Stream.__module__ == "ember.cuda.streams"
    assert {"start", "stop", "profile"} <= set(ember.cuda.profiler.__all__)
    assert ember.cuda.get_allocator_backend() == "native"
    assert ember.cuda.has_half is True and ember.cuda.has_magma is False
    import ember.cuda.memory as as_module  # importable the way programs spell it
    assert as_module is ember.cuda.memory


def test_check_error_and_cuda_error():
    ember.cuda.check_error(0)
    ember.cuda.check_error(ember.cuda.cudaStatus.SUCCESS)
    assert ember.cuda.cudaStatus.ERROR_NOT_READY == 34
    if not ember.cuda._is_compiled():
        return
    with pytest.raises(ember.cuda.CudaError, match=r"^out of memory \(2\)$"):
        ember.cuda.check_error(2)
    assert issubclass(ember.cuda.CudaError, RuntimeError)


@needs_no_gpu
def test_runtime_and_stats_without_a_gpu():
    assert ember.cuda.host_memory_stats() == {} and ember.cuda.host_memory_stats_as_nested_dict() == {}
    for call in (ember.cuda.cudart, ember.cuda.profiler.start, ember.cuda.profiler.stop,
                 lambda: ember.cuda.get_stream_from_external(0), lambda: ember.cuda.FloatStorage(2)):
        with raises_no_gpu(), warnings.catch_warnings():
            warnings.simplefilter("ignore")  # TypedStorage's deprecation
            call()
    with pytest.raises(RuntimeError, match="not allocated by caching_allocator_alloc"):
        ember.cuda.caching_allocator_delete("cuda:0")


def test_legacy_cuda_storage_classes():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cpu = ember.FloatStorage(3)
        assert isinstance(cpu, ember.FloatStorage) and not isinstance(cpu, ember.cuda.FloatStorage)
        assert ember.cuda.FloatStorage.dtype is ember.float32 and ember.cuda.LongStorage.dtype is ember.int64
        assert repr(ember.cuda.HalfStorage) == "<class 'ember.cuda.HalfStorage'>"
        with pytest.raises(RuntimeError, match=r"ember.cuda.IntStorage\(\): expected device type cuda, got cpu"):
            ember.cuda.IntStorage(2, device="cpu")
        with pytest.raises(RuntimeError, match="Device of 'wrap_storage' must be cuda, but got cpu"):
            ember.cuda.ByteStorage(wrap_storage=ember.UntypedStorage(4))
        with pytest.raises(RuntimeError, match="expected device type cpu, got cuda"):
            ember.FloatStorage(2, device="cuda")


# ---- NVML: a stand-in libnvidia-ml with two GPUs, answering fixed values in NVML's C interface
FAKE_NVML = r"""
#include <string.h>
typedef struct { unsigned gpu, memory; } util_t;
typedef struct { unsigned long long total, free, used; } mem_t;
typedef struct { unsigned pid; unsigned long long used; unsigned gi, ci; } proc_t;
static int inited = 0;
int nvmlInit_v2(void) { inited = 1; return 0; }
const char* nvmlErrorString(int code) { return code == 2 ? "Invalid Argument" : "Unknown Error"; }
int nvmlDeviceGetCount_v2(unsigned* n) { *n = 2; return 0; }
int nvmlDeviceGetHandleByIndex_v2(unsigned i, void** h) {
  if (!inited || i > 1) return 2;
  *h = (void*)(long)(i + 1); return 0;
}
static long idx(void* h) { return (long)h - 1; }
int nvmlDeviceGetUUID(void* h, char* buf, unsigned len) {
  strncpy(buf, idx(h) ? "GPU-bbbb-2222" : "GPU-aaaa-1111", len); return 0;
}
int nvmlDeviceGetUtilizationRates(void* h, util_t* u) { u->gpu = 40 + idx(h); u->memory = 7; return 0; }
int nvmlDeviceGetTemperature(void* h, int sensor, unsigned* t) { if (sensor) return 2; *t = 50 + idx(h); return 0; }
int nvmlDeviceGetPowerUsage(void* h, unsigned* mw) { *mw = 123456 + idx(h); return 0; }
int nvmlDeviceGetClockInfo(void* h, int clock, unsigned* mhz) { if (clock != 1) return 2; *mhz = 1980; return 0; }
int nvmlDeviceGetMemoryInfo(void* h, mem_t* m) { m->total = 100; m->used = 60 + idx(h); m->free = 40; return 0; }
int nvmlDeviceGetComputeRunningProcesses_v3(void* h, unsigned* count, proc_t* p) {
  unsigned n = idx(h) ? 0 : 2;
  if (n == 0) { *count = 0; return 0; }
  if (!p || *count < n) { *count = n; return 7; }
  p[0].pid = 4242; p[0].used = 3ull << 20; p[1].pid = 7; p[1].used = ~0ull;
  *count = n; return 0;
}
"""


@pytest.fixture
def fake_nvml(tmp_path, monkeypatch):
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler for the stand-in NVML")
    src = tmp_path / "nvml.c"
    src.write_text(FAKE_NVML)
    lib = tmp_path / "libnvidia-ml.so.1"
    subprocess.run([cc, "-shared", "-fPIC", "-o", str(lib), str(src)], check=True)
    monkeypatch.setattr(_nvml, "_LIBRARY", str(lib))
    monkeypatch.setattr(_nvml, "_lib", None)
    monkeypatch.setattr(_nvml, "_tried", False)
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    yield
    monkeypatch.setattr(_nvml, "_tried", False)  # the next user loads the real library (or not) again
    monkeypatch.setattr(_nvml, "_lib", None)


def test_nvml_queries(fake_nvml, monkeypatch):
    # device 1 given explicitly (None would ask CUDA for the current device)
    assert ember.cuda.utilization(1) == 41 and ember.cuda.memory_usage(1) == 7
    assert ember.cuda.temperature(0) == 50 and ember.cuda.power_draw(1) == 123457
    assert ember.cuda.clock_rate(0) == 1980 and ember.cuda.device_memory_used(1) == 61
    assert ember.cuda.utilization("cuda:0") == 40
    assert ember.cuda.list_gpu_processes(0) == ("GPU:0\n"
                                               "process       4242 uses        3.000 MB GPU memory\n"
                                               "process          7 uses        0.000 MB GPU memory")
    assert ember.cuda.list_gpu_processes(1) == "GPU:1\nno processes are running"
    # CUDA's device i is the i-th GPU CUDA_VISIBLE_DEVICES lists, by index or by UUID (prefix)
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "1,0")
    assert ember.cuda.utilization(0) == 41 and ember.cuda.list_gpu_processes(1).startswith("GPU:0\nprocess")
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "bbbb")
    assert ember.cuda.temperature(0) == 51
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "GPU-aaaa-1111")
    assert ember.cuda.temperature(0) == 50
    with pytest.raises(RuntimeError, match=r"device 1 is not visible \(CUDA_VISIBLE_DEVICES=GPU-aaaa-1111\)"):
        ember.cuda.temperature(1)
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "cccc")
    with pytest.raises(RuntimeError, match="no GPU's UUID matches"):
        ember.cuda.temperature(0)
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES")
    with pytest.raises(RuntimeError, match=r"NVML nvmlDeviceGetHandleByIndex failed: Invalid Argument \(error 2\)"):
        ember.cuda.temperature(5)
    with pytest.raises(ValueError, match="Expected a cuda device"):
        ember.cuda.utilization("cpu")


def test_nvml_without_a_driver(monkeypatch, tmp_path):
    monkeypatch.setattr(_nvml, "_LIBRARY", str(tmp_path / "absent.so"))
    monkeypatch.setattr(_nvml, "_lib", None)
    monkeypatch.setattr(_nvml, "_tried", False)
    try:
        assert ember.cuda.list_gpu_processes(0) == "cuda driver can't be loaded, is cuda enabled?"
        for query in (ember.cuda.utilization, ember.cuda.memory_usage, ember.cuda.temperature,
                      ember.cuda.power_draw, ember.cuda.clock_rate, ember.cuda.device_memory_used):
            with pytest.raises(RuntimeError, match="cuda driver can't be loaded"):
                query(0)
    finally:
        monkeypatch.setattr(_nvml, "_tried", False)


def test_cuda_names_match_torch():
    torch = pytest.importorskip("torch")
    for sub in ("memory", "random", "profiler"):
        theirs, ours = getattr(torch.cuda, sub), getattr(ember.cuda, sub)
        left_out = {"CUDAPluggableAllocator", "change_current_allocator", "MemPool", "use_mem_pool",
                    "caching_allocator_enable", "caching_allocator_disabled"}  # allocator plug-ins and pools
        missing = [n for n in theirs.__all__ if not hasattr(ours, n) and n not in left_out]
        assert not missing, (sub, missing)
    assert ember.cuda.cudaStatus.ERROR_NOT_READY == torch.cuda.cudaStatus.ERROR_NOT_READY
