"""ember.accelerator: PyTorch's device-generic accelerator API, over ember.cuda when a GPU is there.
Without one, queries answer "none" and anything needing a device raises PyTorch's RuntimeError for
that case."""
from . import _C
from . import cuda as _cuda

__all__ = ["current_accelerator", "is_available", "device_count", "current_device_index", "set_device_index",
           "synchronize", "empty_cache", "memory_allocated", "max_memory_allocated", "memory_reserved",
           "max_memory_reserved", "memory_stats", "reset_peak_memory_stats", "get_memory_info", "current_stream",
           "set_stream", "device_index", "reset_accumulated_memory_stats", "empty_host_cache", "get_device_capability",
           "current_device_idx", "set_device_idx"]

_NONE = "Cannot access accelerator device when none is available."


def _gpu():
    """ember.cuda, or PyTorch's RuntimeError when there is no accelerator."""
    if not _cuda.is_available():
        raise RuntimeError(_NONE)
    return _cuda


def current_accelerator(check_available=False):
    """device('cuda') when a GPU is there, else None."""
    return _C.device("cuda") if _cuda.is_available() else None


def is_available():
    return _cuda.is_available()


def device_count():
    return _cuda.device_count()


def current_device_index():
    return _gpu().current_device()


def set_device_index(device):
    _gpu().set_device(device)


def synchronize(device=None):
    _gpu().synchronize(device)


def empty_cache():
    _gpu().empty_cache()


def memory_allocated(device_index=None):
    return _gpu().memory_allocated(device_index)


def max_memory_allocated(device_index=None):
    return _gpu().max_memory_allocated(device_index)


def memory_reserved(device_index=None):
    return _gpu().memory_reserved(device_index)


def max_memory_reserved(device_index=None):
    return _gpu().max_memory_reserved(device_index)


def memory_stats(device_index=None):
    return _gpu().memory_stats(device_index)


def reset_peak_memory_stats(device_index=None):
    _gpu().reset_peak_memory_stats(device_index)


def get_memory_info(device_index=None):
    return _gpu().mem_get_info(device_index)


def current_device_idx():
    """Deprecated spelling of current_device_index (torch's FutureWarning)."""
    import warnings
    warnings.warn("Use `current_device_index` instead.", FutureWarning, stacklevel=2)
    return current_device_index()


def set_device_idx(device):
    """Deprecated spelling of set_device_index (torch's FutureWarning)."""
    import warnings
    warnings.warn("Use `set_device_index` instead.", FutureWarning, stacklevel=2)
    set_device_index(device)


def current_stream(device=None):
    """The current stream of `device` (default: the current device)."""
    return _gpu().current_stream(device)


def set_stream(stream):
    """Make `stream` current (and its device the current device)."""
    gpu = _gpu()
    gpu.set_device(stream.device_index)
    gpu.set_stream(stream)


class device_index:
    """Context manager making device index `device` current for a block (None: no change)."""

    def __init__(self, device, /):
        self.idx = device
        self.prev_idx = -1

    def __enter__(self):
        if self.idx is not None:
            gpu = _gpu()
            self.prev_idx = gpu.current_device()
            gpu.set_device(self.idx)

    def __exit__(self, *exc_info):
        if self.idx is not None and self.prev_idx >= 0:
            _cuda.set_device(self.prev_idx)
        return False


def reset_accumulated_memory_stats(device_index=None):
    _gpu().reset_accumulated_memory_stats(device_index)


def empty_host_cache():
    """Release the idle blocks of the pinned host memory cache."""
    _gpu()
    _C._cuda_host_empty_cache()


def get_device_capability(device=None):
    """{"supported_dtypes": the dtypes a tensor on the device can have}."""
    _gpu()._checked_index(device)
    return {"supported_dtypes": {_C.float32, _C.float64, _C.float16, _C.bfloat16, _C.int64, _C.int32, _C.int16,
                                 _C.int8, _C.uint8, _C.bool, _C.complex64, _C.complex128}}
