"""ember.accelerator: PyTorch's device-generic accelerator API. Ember has no accelerator, so queries
answer "none" and anything needing a device raises PyTorch's RuntimeError for that case."""

__all__ = ["current_accelerator", "is_available", "device_count", "current_device_index", "set_device_index",
           "synchronize", "empty_cache", "memory_allocated", "max_memory_allocated", "memory_reserved",
           "max_memory_reserved", "memory_stats", "reset_peak_memory_stats", "get_memory_info"]

_NONE = "Cannot access accelerator device when none is available."


def current_accelerator(check_available=False):
    return None


def is_available():
    return False


def device_count():
    return 0


def current_device_index():
    raise RuntimeError(_NONE)


def set_device_index(device):
    raise RuntimeError(_NONE)


def synchronize(device=None):
    raise RuntimeError(_NONE)


def empty_cache():
    raise RuntimeError(_NONE)


def memory_allocated(device_index=None):
    raise RuntimeError(_NONE)


def max_memory_allocated(device_index=None):
    raise RuntimeError(_NONE)


def memory_reserved(device_index=None):
    raise RuntimeError(_NONE)


def max_memory_reserved(device_index=None):
    raise RuntimeError(_NONE)


def memory_stats(device_index=None):
    raise RuntimeError(_NONE)


def reset_peak_memory_stats(device_index=None):
    raise RuntimeError(_NONE)


def get_memory_info(device_index=None):
    raise RuntimeError(_NONE)
