"""The CUDA caching allocator and pinned host memory (torch.cuda.memory): statistics, the cache, raw
blocks, the per-process cap, and what the driver says about the device's memory."""
from collections import OrderedDict

from .. import _C
from . import _nvml
from ._device import _device_index, _lazy_init, device as _device_ctx, is_initialized
from .streams import Stream, StreamContext

__all__ = ["caching_allocator_alloc", "caching_allocator_delete", "get_per_process_memory_fraction",
           "set_per_process_memory_fraction", "empty_cache", "memory_stats", "memory_stats_as_nested_dict",
           "reset_accumulated_memory_stats", "reset_peak_memory_stats", "reset_max_memory_allocated",
           "reset_max_memory_cached", "host_memory_stats", "host_memory_stats_as_nested_dict",
           "reset_accumulated_host_memory_stats", "reset_peak_host_memory_stats", "memory_allocated",
           "max_memory_allocated", "memory_reserved", "max_memory_reserved", "memory_cached", "max_memory_cached",
           "memory_snapshot", "memory_summary", "list_gpu_processes", "mem_get_info", "get_allocator_backend"]


def mem_get_info(device=None):
    """(free, total) bytes of a CUDA device, as the driver reports them."""
    _lazy_init()
    return tuple(_C._cuda_mem_get_info(_device_index(device, optional=True)))


def set_per_process_memory_fraction(fraction, device=None):
    """Cap the caching allocator's reserve on a device at `fraction` of its memory: an allocation past it
    releases cached blocks and retries, then raises ember.cuda.OutOfMemoryError, as in PyTorch."""
    _lazy_init()
    if not isinstance(fraction, float):
        raise TypeError("Invalid type for fraction argument, must be `float`")
    if not 0 <= fraction <= 1:
        raise ValueError(f"Invalid fraction value: {fraction}. Allowed range: 0~1")
    _C._cuda_set_memory_fraction(fraction, _device_index(device, optional=True))


def get_per_process_memory_fraction(device=None):
    """The fraction set_per_process_memory_fraction set for a device (1.0: no cap)."""
    _lazy_init()
    return _C._cuda_get_memory_fraction(_device_index(device, optional=True))


# ---- the caching allocator
def empty_cache():
    """Return the allocator's cached, unused blocks to the device (visible in nvidia-smi).
    Before CUDA has started there is nothing to release: a no-op, as in PyTorch."""
    if is_initialized():
        _C._cuda_empty_cache()


def memory_stats(device=None):
    """The caching allocator's statistics, under PyTorch's keys ("allocated_bytes.all.current",
    "num_device_alloc", ...); empty before CUDA has started."""
    if not is_initialized():
        return OrderedDict()
    stats = _C._cuda_memory_stats(_device_index(device, optional=True))
    return OrderedDict(sorted(stats.items()))


def memory_stats_as_nested_dict(device=None):
    """memory_stats() with its dotted keys as nested dicts."""
    out = {}
    for key, value in memory_stats(device).items():
        node = out
        *path, leaf = key.split(".")
        for part in path:
            node = node.setdefault(part, {})
        node[leaf] = value
    return out


def memory_snapshot(device=None):
    """The allocator's segments and their blocks (address, sizes, state)."""
    if not is_initialized():
        return []
    return _C._cuda_memory_snapshot(_device_index(device, optional=True))


def _stat(device, key):
    return memory_stats(device).get(key, 0)


def memory_allocated(device=None):
    """Bytes held by tensors on a CUDA device now."""
    return _stat(device, "allocated_bytes.all.current")


def max_memory_allocated(device=None):
    """Peak of memory_allocated() since the start or the last reset_peak_memory_stats()."""
    return _stat(device, "allocated_bytes.all.peak")


def memory_reserved(device=None):
    """Bytes the caching allocator holds from the device (allocated plus cached)."""
    return _stat(device, "reserved_bytes.all.current")


def max_memory_reserved(device=None):
    """Peak of memory_reserved()."""
    return _stat(device, "reserved_bytes.all.peak")


def memory_cached(device=None):
    """Deprecated name of memory_reserved()."""
    return memory_reserved(device)


def max_memory_cached(device=None):
    """Deprecated name of max_memory_reserved()."""
    return max_memory_reserved(device)


def reset_peak_memory_stats(device=None):
    """Make every statistic's peak its current value."""
    _lazy_init()
    _C._cuda_reset_peak_memory_stats(_device_index(device, optional=True))


def reset_max_memory_allocated(device=None):
    """Reset the allocation peak (PyTorch resets every peak here too)."""
    reset_peak_memory_stats(device)


def reset_max_memory_cached(device=None):
    """Reset the reserve peak (PyTorch resets every peak here too)."""
    reset_peak_memory_stats(device)


def reset_accumulated_memory_stats(device=None):
    """Zero the allocated/freed totals and the num_* counters."""
    _lazy_init()
    _C._cuda_reset_accumulated_memory_stats(_device_index(device, optional=True))


def memory_summary(device=None, abbreviated=False):
    """A short table of the allocator's statistics."""
    s = memory_stats(device)
    lines = ["|  CUDA memory summary (Ember caching allocator)", "|" + "-" * 60]
    for name in ("allocated_bytes", "reserved_bytes", "active_bytes", "inactive_split_bytes", "requested_bytes"):
        lines.append(f"|  {name:<22} current {s.get(name + '.all.current', 0):>14,}  peak {s.get(name + '.all.peak', 0):>14,}")
    for name in ("allocation", "segment", "active"):
        lines.append(f"|  {name:<22} current {s.get(name + '.all.current', 0):>14,}  peak {s.get(name + '.all.peak', 0):>14,}")
    for name in ("num_device_alloc", "num_device_free", "num_alloc_retries", "num_ooms"):
        lines.append(f"|  {name:<22} {s.get(name, 0):>14,}")
    return "\n".join(lines) + "\n"

_raw_blocks = {}  # pointer -> device, for caching_allocator_delete

def caching_allocator_alloc(size, device=None, stream=None):
    """`size` bytes from the caching allocator, for use on `stream` (default: the current one); returns the
    address as an int. Give it back with caching_allocator_delete."""
    _lazy_init()
    idx = _device_index(device, optional=True)
    if stream is not None and not isinstance(stream, Stream):
        raise TypeError("Invalid type for stream argument, must be `torch.cuda.Stream` or `int` representing a "
                        "pointer to a existing stream")
    with _device_ctx(idx), StreamContext(stream):
        ptr = _C._cuda_caching_allocator_alloc(int(size), idx)
    _raw_blocks[ptr] = idx
    return ptr


def caching_allocator_delete(mem_ptr):
    """Return a block from caching_allocator_alloc to the cache."""
    idx = _raw_blocks.pop(mem_ptr, None)
    if idx is None:
        raise RuntimeError(f"caching_allocator_delete: {mem_ptr!r} was not allocated by caching_allocator_alloc")
    with _device_ctx(idx):
        _C._cuda_caching_allocator_delete(mem_ptr)


# ---- pinned host memory (the caching host allocator behind pin_memory() and non_blocking copies)
def host_memory_stats_as_nested_dict():
    """host_memory_stats() as nested dicts, e.g. ["allocations"]["current"]; empty before CUDA has started."""
    if not is_initialized():
        return {}
    return _C._cuda_host_memory_stats()


def host_memory_stats():
    """The pinned host allocator's statistics under PyTorch's dotted keys: "allocations.*" and
    "allocated_bytes.*" (blocks owned, in use or cached), "active_requests.*" / "active_bytes.*" (handed
    out), each {current, peak, allocated, freed}; "num_host_alloc" / "num_host_free" (cudaHostAlloc /
    cudaFreeHost calls) and "host_alloc_time.*" / "host_free_time.*" (microseconds: total, max, min,
    count, avg). Block sizes are the rounded ones (powers of two from 512 bytes)."""
    flat = []

    def walk(prefix, node):
        for key, value in node.items():
            if isinstance(value, dict):
                walk(prefix + key + ".", value)
            else:
                flat.append((prefix + key, value))

    walk("", host_memory_stats_as_nested_dict())
    return OrderedDict(sorted(flat))


def reset_peak_host_memory_stats():
    """Make the pinned allocator's peaks their current values (and the longest call times 0)."""
    _C._cuda_reset_peak_host_memory_stats()


def reset_accumulated_host_memory_stats():
    """Zero the pinned allocator's allocated/freed totals, call counts and times."""
    _C._cuda_reset_accumulated_host_memory_stats()


def get_allocator_backend():
    """Which allocator serves CUDA tensors: "native", Ember's caching allocator (PyTorch's default
    name for its own); Ember has no cudaMallocAsync backend."""
    return "native"


def list_gpu_processes(device=None):
    """Every process running on a GPU and the memory it holds, as nvidia-smi sees them (NVML), one
    line each: "process <pid> uses <MB> MB GPU memory" under a "GPU:<index>" line."""
    if not _nvml.load():
        return "cuda driver can't be loaded, is cuda enabled?"
    index = _nvml.device_index(device)
    procs = _nvml.running_processes(index)
    lines = [f"GPU:{index}"]
    if not procs:
        lines.append("no processes are running")
    for pid, used in procs:
        lines.append(f"process {pid:>10d} uses {used / (1024 * 1024):>12.3f} MB GPU memory")
    return "\n".join(lines)

