"""ember.cuda: GPUs through Ember's CUDA backend (csrc/ember/cuda/): devices, the caching allocator's
statistics, streams and events. On a build without CUDA the names behave as PyTorch's CPU build:
queries answer "no GPU" (is_available() False, device_count() 0, memory counters 0) and anything that
needs a device raises AssertionError("... not compiled with CUDA enabled"); on a CUDA build without a
GPU they raise PyTorch's RuntimeError ("Found no NVIDIA driver ..." / "No CUDA GPUs are available")."""
from .. import _C
from . import _nvml
from ._cudart import CudaError, check_error, cudart, cudaStatus
from ._device import (OutOfMemoryError, _checked_index, _device_index, _is_compiled, _lazy_init,  # noqa: F401
                      current_device, device, device_count, device_of, init, is_available, is_initialized, set_device)
from .memory import (caching_allocator_alloc, caching_allocator_delete, empty_cache, get_allocator_backend,
                     get_per_process_memory_fraction, host_memory_stats, host_memory_stats_as_nested_dict,
                     list_gpu_processes, max_memory_allocated, max_memory_cached, max_memory_reserved, mem_get_info,
                     memory_allocated, memory_cached, memory_reserved, memory_snapshot, memory_stats,
                     memory_stats_as_nested_dict, memory_summary, reset_accumulated_host_memory_stats,
                     reset_accumulated_memory_stats, reset_max_memory_allocated, reset_max_memory_cached,
                     reset_peak_host_memory_stats, reset_peak_memory_stats, set_per_process_memory_fraction)
from .random import (get_rng_state, get_rng_state_all, initial_seed, manual_seed, manual_seed_all, seed, seed_all,
                     set_rng_state, set_rng_state_all)
from .streams import (Event, ExternalStream, Stream, StreamContext, current_stream, default_stream, set_stream,
                      stream)

__all__ = [
    "is_available", "is_initialized", "device_count", "init", "current_device", "set_device", "get_device_name",
    "get_device_capability", "get_device_properties", "get_arch_list", "get_gencode_flags", "is_bf16_supported",
    "synchronize", "empty_cache", "ipc_collect", "memory_allocated", "max_memory_allocated", "memory_reserved",
    "max_memory_reserved", "memory_stats", "reset_peak_memory_stats", "reset_max_memory_allocated",
    "reset_accumulated_memory_stats", "mem_get_info", "set_per_process_memory_fraction",
    "get_per_process_memory_fraction", "manual_seed",
    "manual_seed_all", "seed", "seed_all", "initial_seed", "get_rng_state", "get_rng_state_all", "set_rng_state",
    "set_rng_state_all", "default_generators", "current_stream", "default_stream", "set_stream", "stream", "Stream", "ExternalStream",
    "Event", "StreamContext", "device", "device_of", "OutOfMemoryError", "amp", "memory_summary", "memory_snapshot",
    "memory_stats_as_nested_dict", "memory_cached", "max_memory_cached", "reset_max_memory_cached",
    "is_current_stream_capturing", "is_tf32_supported", "can_device_access_peer", "get_sync_debug_mode",
    "set_sync_debug_mode", "caching_allocator_alloc", "caching_allocator_delete", "nvtx",
    "FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor", "LongTensor", "IntTensor", "ShortTensor",
    "CharTensor", "ByteTensor", "BoolTensor", "memory", "random", "streams", "profiler", "host_memory_stats",
    "host_memory_stats_as_nested_dict", "reset_accumulated_host_memory_stats", "reset_peak_host_memory_stats",
    "list_gpu_processes", "get_allocator_backend", "utilization", "memory_usage", "temperature", "power_draw",
    "clock_rate", "device_memory_used", "cudart", "check_error", "CudaError", "cudaStatus", "get_stream_from_external",
    "has_half", "has_magma", "FloatStorage", "DoubleStorage", "HalfStorage", "BFloat16Storage", "LongStorage",
    "IntStorage", "ShortStorage", "CharStorage", "ByteStorage", "BoolStorage", "ComplexFloatStorage",
    "ComplexDoubleStorage",
]

has_half = True    # float16 tensors work on every supported GPU
has_magma = False  # Ember's GPU linear algebra uses no MAGMA

default_generators = ()


def is_bf16_supported(including_emulation=True):
    """Whether the current GPU supports bfloat16 (compute capability 8.0 and up, or emulated)."""
    if not is_available():
        return False
    return including_emulation or get_device_capability()[0] >= 8


def get_arch_list():
    """CUDA architectures this build has code for, e.g. ['sm_90'] (none without a GPU, as PyTorch)."""
    if not is_available():
        return []
    # CMake's names ("90", "90a", "80-real") as PyTorch spells them
    return ["sm_" + a.split("-")[0] for a in _C._cuda_arch_list().split(",") if a]


def get_gencode_flags():
    """NVCC gencode flags of the build."""
    return " ".join(f"-gencode compute={a.replace('sm', 'compute')},code={a}" for a in get_arch_list())


class _CudaDeviceProperties:
    """What get_device_properties() returns (torch._C._CudaDeviceProperties' fields)."""

    def __init__(self, d):
        self.__dict__.update(d)

    def __repr__(self):
        return (f"_CudaDeviceProperties(name='{self.name}', major={self.major}, minor={self.minor}, "
                f"total_memory={self.total_memory // (1024 * 1024)}MB, "
                f"multi_processor_count={self.multi_processor_count}, uuid={self.uuid}, "
                f"L2_cache_size={self.L2_cache_size // (1024 * 1024)}MB)")


def get_device_properties(device=None):
    """Name, compute capability, memory and multiprocessor count of a CUDA device."""
    return _CudaDeviceProperties(_C._cuda_get_device_properties(_checked_index(device)))


def get_device_name(device=None):
    """Name of a CUDA device, e.g. 'NVIDIA H200'."""
    return get_device_properties(device).name


def get_device_capability(device=None):
    """Compute capability (major, minor) of a CUDA device, e.g. (9, 0)."""
    p = get_device_properties(device)
    return (p.major, p.minor)


def synchronize(device=None):
    """Wait until every kernel queued on a CUDA device has finished."""
    _lazy_init()
    _C._cuda_synchronize(_device_index(device, optional=True))


def ipc_collect():
    """Free CUDA memory held for IPC (Ember shares none between processes)."""
    _lazy_init()


def __getattr__(name):
    # default_generators: one per visible GPU (an empty tuple without one, as PyTorch)
    if name == "default_generators":
        return tuple(_C._cuda_default_generator(i) for i in range(device_count()))
    raise AttributeError(f"module 'ember.cuda' has no attribute '{name}'")


# ---- smaller pieces of torch.cuda
def is_current_stream_capturing():
    """Whether a CUDA graph is being captured on the current stream: never, Ember does not capture graphs."""
    return False


def is_tf32_supported():
    """Whether the current GPU computes in TF32 natively (compute capability 8.0 and up)."""
    return is_bf16_supported(including_emulation=False)


def can_device_access_peer(device, peer_device):
    """Whether `device` can access `peer_device`'s memory directly (peer-to-peer over NVLink or PCIe)."""
    _lazy_init()
    device, peer = _device_index(device, optional=True), _device_index(peer_device)
    if device < 0 or device >= device_count():
        raise AssertionError("Invalid device id")
    if peer < 0 or peer >= device_count():
        raise AssertionError("Invalid peer device id")
    return _C._cuda_can_device_access_peer(device, peer)


_SYNC_MODES = {"default": 0, "warn": 1, "error": 2}


def set_sync_debug_mode(debug_mode):
    """Warn ("warn" / 1) or raise ("error" / 2) when an op makes the host wait for the GPU implicitly
    (.item(), .cpu(), a copy between GPUs); "default" / 0 stays quiet."""
    _lazy_init()
    if isinstance(debug_mode, str):
        if debug_mode not in _SYNC_MODES:
            raise RuntimeError("invalid value of debug_mode, expected one of `default`, `warn`, `error`")
        debug_mode = _SYNC_MODES[debug_mode]
    _C._cuda_set_sync_debug_mode(int(debug_mode))


def get_sync_debug_mode():
    """The mode set_sync_debug_mode set, as an int (0 default, 1 warn, 2 error)."""
    return _C._cuda_get_sync_debug_mode()


def get_stream_from_external(data_ptr, device=None):
    """A Stream for a cudaStream_t created outside Ember (another library's), given as an int."""
    return ExternalStream(data_ptr, device=device)


# ---- what nvidia-smi shows, through NVML (ember.cuda._nvml); RuntimeError without a driver
def utilization(device=None):
    """Percent of the last sample period (1/6 s to 1 s) during which a kernel ran on the GPU."""
    return _nvml.utilization_rates(device)[0]


def memory_usage(device=None):
    """Percent of the last sample period during which the GPU's memory was read or written."""
    return _nvml.utilization_rates(device)[1]


def temperature(device=None):
    """The GPU's temperature in degrees Celsius."""
    return _nvml.temperature(device)


def power_draw(device=None):
    """Power the GPU's board draws, in milliwatts."""
    return _nvml.power_usage(device)


def clock_rate(device=None):
    """The GPU's streaming-multiprocessor clock, in MHz."""
    return _nvml.sm_clock(device)


def device_memory_used(device=None):
    """Bytes of the GPU's memory in use by all processes (the driver's count, not the caching allocator's)."""
    return _nvml.memory_used(device)


# ---- legacy tensor types on the GPU: ember.cuda.FloatTensor(2, 3), isinstance(t, ember.cuda.LongTensor)
from .._legacy_types import _BY_DEVICE as _LEGACY  # noqa: E402
(FloatTensor, DoubleTensor, HalfTensor, BFloat16Tensor, LongTensor, IntTensor, ShortTensor, CharTensor, ByteTensor,
 BoolTensor) = _LEGACY["cuda"].values()

# ---- legacy typed storages on the GPU: ember.cuda.FloatStorage(4), isinstance(s, ember.cuda.FloatStorage)
from ..storage import _CUDA_LEGACY_CLASSES  # noqa: E402
globals().update(_CUDA_LEGACY_CLASSES)

from . import amp, memory, nvtx, profiler, random, streams  # noqa: E402,F401
