"""ember.cpu: the CPU device module, with the CPU allocator's counters in the shape of
torch.cuda's memory API (memory_stats, memory_allocated, max_memory_allocated, ...)."""
from collections import OrderedDict

from .. import _C

__all__ = ["is_available", "device_count", "current_device", "synchronize", "memory_stats", "memory_allocated",
           "max_memory_allocated", "reset_peak_memory_stats", "memory_summary", "empty_cache", "memory_reserved"]


def is_available():
    return True


def device_count():
    return 1


def current_device():
    return "cpu"


def synchronize(device=None):
    """CPU ops finish before they return: nothing to wait for."""


def memory_stats(device=None):
    """The CPU allocator's counters, keyed as torch.cuda.memory_stats keys them:
    allocated_bytes.all.{current,peak,allocated,freed} and allocation.all.{current,allocated,freed}."""
    return OrderedDict(sorted(_C._memory_stats().items()))


def memory_allocated(device=None):
    """Bytes currently held by CPU tensors' storages."""
    return _C._memory_stats()["allocated_bytes.all.current"]


def max_memory_allocated(device=None):
    """The most bytes held at once since the start or the last reset_peak_memory_stats()."""
    return _C._memory_stats()["allocated_bytes.all.peak"]


def reset_peak_memory_stats(device=None):
    """Restarts the peak tracked by max_memory_allocated() from the current usage."""
    _C._reset_peak_memory_stats()


def empty_cache():
    """Gives the large freed blocks the allocator keeps for reuse (EMBER_CPU_CACHE_MB, default
    256) back to the system, as torch.cuda.empty_cache() does for its caching allocator."""
    _C._cpu_empty_cache()


def memory_reserved(device=None):
    """Bytes held by the allocator: live tensors plus the freed large blocks kept for reuse."""
    return memory_allocated() + _C._cpu_cached_bytes()


def memory_summary(device=None, abbreviated=False):
    from ..profiler._events import _format_memory
    s = memory_stats()
    rows = [("Allocated memory (current)", _format_memory(s["allocated_bytes.all.current"])),
            ("Allocated memory (peak)", _format_memory(s["allocated_bytes.all.peak"])),
            ("Allocated memory (total allocated)", _format_memory(s["allocated_bytes.all.allocated"])),
            ("Allocated memory (total freed)", _format_memory(s["allocated_bytes.all.freed"])),
            ("Allocations (current)", str(s["allocation.all.current"])),
            ("Allocations (total)", str(s["allocation.all.allocated"]))]
    width = max(len(k) for k, _ in rows)
    return "\n".join(f"{k:<{width}}  {v:>12}" for k, v in rows) + "\n"

from . import amp  # noqa: E402,F401  (torch.cpu.amp: autocast and GradScaler for the CPU)
