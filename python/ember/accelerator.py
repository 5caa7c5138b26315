"""ember.accelerator: PyTorch's device-generic accelerator API, over ember.cuda when a GPU is there.
Without one, queries answer "none" and anything needing a device raises PyTorch's RuntimeError for
that case."""
from . import _C
from . import cuda as _cuda

__all__ = ["current_accelerator", "is_available", "device_count", "current_device_index", "set_device_index",
           "synchronize", "empty_cache", "memory_allocated", "max_memory_allocated", "memory_reserved",
           "max_memory_reserved", "memory_stats", "reset_peak_memory_stats", "get_memory_info"]

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
