"""NVML, the driver's management library (libnvidia-ml.so.1, what nvidia-smi reads), through ctypes:
utilization, temperature, power, clocks and the processes on a GPU. PyTorch reads the same numbers
through the pynvml package; Ember loads the library the driver installs, so nothing extra is needed."""
import ctypes
import os

from ._device import _device_index

_SUCCESS, _INSUFFICIENT_SIZE = 0, 7
_TEMPERATURE_GPU, _CLOCK_SM = 0, 1
_NOT_AVAILABLE = ctypes.c_ulonglong(-1).value

_LIBRARY = "libnvidia-ml.so.1"  # the driver's; tests point this at a stand-in
_lib = None      # the loaded library once nvmlInit succeeded
_tried = False   # load() ran (it runs once per process)


class _Utilization(ctypes.Structure):
    _fields_ = [("gpu", ctypes.c_uint), ("memory", ctypes.c_uint)]


class _Memory(ctypes.Structure):
    _fields_ = [("total", ctypes.c_ulonglong), ("free", ctypes.c_ulonglong), ("used", ctypes.c_ulonglong)]


class _ProcessInfo(ctypes.Structure):  # nvmlProcessInfo_t of nvmlDeviceGetComputeRunningProcesses_v3
    _fields_ = [("pid", ctypes.c_uint), ("usedGpuMemory", ctypes.c_ulonglong), ("gpuInstanceId", ctypes.c_uint),
                ("computeInstanceId", ctypes.c_uint)]


def load():
    """Whether NVML is usable: the library loads and nvmlInit succeeds (False without a driver)."""
    global _lib, _tried
    if not _tried:
        _tried = True
        try:
            lib = ctypes.CDLL(_LIBRARY)
            lib.nvmlErrorString.restype = ctypes.c_char_p
            if lib.nvmlInit_v2() == _SUCCESS:
                _lib = lib
        except (OSError, AttributeError):
            pass
    return _lib is not None


def _check(code, what):
    if code != _SUCCESS:
        raise RuntimeError(f"NVML {what} failed: {_lib.nvmlErrorString(code).decode()} (error {code})")


def _require():
    if not load():  # PyTorch's message when NVML finds no driver
        raise RuntimeError("cuda driver can't be loaded, is cuda enabled?")
    return _lib


def device_index(device):
    """The NVML index of a CUDA device (None: the current one), through CUDA_VISIBLE_DEVICES: CUDA's
    device i is the i-th visible GPU, named there by index or by UUID."""
    idx = _device_index(device, optional=True)
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible is None:
        return idx
    names = [v.strip() for v in visible.split(",") if v.strip()]
    if idx < 0 or idx >= len(names):
        raise RuntimeError(f"device {idx} is not visible (CUDA_VISIBLE_DEVICES={visible})")
    name = names[idx]
    if name.lstrip("-").isdigit():
        return int(name)
    lib = _require()  # a UUID (or its prefix, as CUDA accepts): find the GPU that has it
    count = ctypes.c_uint()
    _check(lib.nvmlDeviceGetCount_v2(ctypes.byref(count)), "nvmlDeviceGetCount")
    for i in range(count.value):
        uuid = ctypes.create_string_buffer(96)
        _check(lib.nvmlDeviceGetUUID(_handle(i), uuid, 96), "nvmlDeviceGetUUID")
        if uuid.value.decode().startswith(name if name.startswith("GPU-") else "GPU-" + name):
            return i
    raise RuntimeError(f"CUDA_VISIBLE_DEVICES names {name!r}, which no GPU's UUID matches")


def _handle(index):
    handle = ctypes.c_void_p()
    _check(_require().nvmlDeviceGetHandleByIndex_v2(ctypes.c_uint(index), ctypes.byref(handle)),
           "nvmlDeviceGetHandleByIndex")
    return handle


def _query(device, fn, out, *args):
    """NVML's `fn`(handle, *args, &out) for a CUDA device; returns `out` (RuntimeError without a driver)."""
    lib = _require()
    _check(getattr(lib, fn)(_handle(device_index(device)), *args, ctypes.byref(out)), fn)
    return out


def utilization_rates(device):
    """(gpu, memory): percent of the last sample period a kernel ran / device memory was read or written."""
    u = _query(device, "nvmlDeviceGetUtilizationRates", _Utilization())
    return u.gpu, u.memory


def temperature(device):
    """The GPU die's temperature in degrees Celsius."""
    return _query(device, "nvmlDeviceGetTemperature", ctypes.c_uint(), _TEMPERATURE_GPU).value


def power_usage(device):
    """Power drawn by the board, in milliwatts."""
    return _query(device, "nvmlDeviceGetPowerUsage", ctypes.c_uint()).value


def sm_clock(device):
    """The streaming multiprocessors' clock now, in MHz."""
    return _query(device, "nvmlDeviceGetClockInfo", ctypes.c_uint(), _CLOCK_SM).value


def memory_used(device):
    """Bytes of device memory in use by every process (what nvidia-smi shows)."""
    return _query(device, "nvmlDeviceGetMemoryInfo", _Memory()).used


def running_processes(index):
    """[(pid, bytes used)] of the compute processes on the GPU with this NVML index."""
    lib = _require()
    handle = _handle(index)
    count = ctypes.c_uint(0)
    code = lib.nvmlDeviceGetComputeRunningProcesses_v3(handle, ctypes.byref(count), None)
    if code == _SUCCESS:
        return []
    if code != _INSUFFICIENT_SIZE:
        _check(code, "nvmlDeviceGetComputeRunningProcesses")
    count.value = count.value * 2 + 5  # room for processes that start between the two calls
    infos = (_ProcessInfo * count.value)()
    _check(lib.nvmlDeviceGetComputeRunningProcesses_v3(handle, ctypes.byref(count), infos),
           "nvmlDeviceGetComputeRunningProcesses")
    # memory is "not available" under some drivers (Windows WDDM): counted as 0 here
    return [(p.pid, 0 if p.usedGpuMemory == _NOT_AVAILABLE else p.usedGpuMemory) for p in infos[:count.value]]
