"""ember.cuda: GPUs through Ember's CUDA backend (csrc/ember/cuda/): devices, the caching allocator's
statistics, streams and events. On a build without CUDA the names behave as PyTorch's CPU build:
queries answer "no GPU" (is_available() False, device_count() 0, memory counters 0) and anything that
needs a device raises AssertionError("... not compiled with CUDA enabled"); on a CUDA build without a
GPU they raise PyTorch's RuntimeError ("Found no NVIDIA driver ..." / "No CUDA GPUs are available")."""
from collections import OrderedDict

from .. import _C
from .._random import _wrap_seed

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
    "CharTensor", "ByteTensor", "BoolTensor",
]

default_generators = ()


class OutOfMemoryError(RuntimeError):
    """A device ran out of memory, even after the caching allocator released its cache. The message
    says how much was asked for, allocated, reserved and free, and how much of the reserve is
    fragmentation."""


_C._set_out_of_memory_type(OutOfMemoryError)


def _is_compiled():
    """Whether this build has the CUDA backend."""
    return _C._cuda_is_compiled()


def _lazy_init():
    """Start CUDA: PyTorch's errors without a CUDA build (AssertionError) or without a GPU (RuntimeError)."""
    _C._cuda_init()


def is_available():
    """Whether CUDA can be used: a CUDA build, a driver and at least one GPU."""
    return _C._cuda_is_available()


def is_initialized():
    """Whether CUDA has been started in this process."""
    return _C._cuda_is_initialized()


def device_count():
    """Number of CUDA devices (0 without a driver or GPU)."""
    return _C._cuda_device_count()


def init():
    """Start CUDA now rather than at first use; raises without a GPU."""
    _lazy_init()


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


def _device_index(device, optional=False):
    """The CUDA index `device` names; ValueError for a non-CUDA device, as PyTorch."""
    if isinstance(device, str):
        device = _C.device(device)
    if isinstance(device, _C.device):
        if device.type != "cuda":
            raise ValueError(f"Expected a cuda device, but got: {device}")
        if device.index is None:
            if not optional:
                raise ValueError(f"Expected a cuda device with a specified index or an integer, but got:{device}")
            return current_device()
        return device.index
    if device is None:
        if not optional:
            raise ValueError("Expected a torch.device with a specified index or an integer, but got:None")
        return current_device()
    return int(device)


def _checked_index(device):
    """The index of `device` (None: the current one), AssertionError("Invalid device id") beyond the GPUs."""
    _lazy_init()
    idx = _device_index(device, optional=True)
    if idx < 0 or idx >= device_count():
        raise AssertionError("Invalid device id")
    return idx


# ---- devices
def current_device():
    """Index of the current CUDA device."""
    _lazy_init()
    return _C._cuda_current_device()


def set_device(device):
    """Select the current CUDA device (a negative index is a no-op, as in PyTorch)."""
    idx = _device_index(device)
    if idx >= 0:
        _lazy_init()
        _C._cuda_set_device(idx)


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


# ---- random state: one Philox generator per device (C++ objects that exist before CUDA starts, so
# seeding early needs no GPU, as PyTorch's queued seed calls); ember.manual_seed seeds them all.
def _seed_index():
    """The device a seed call means: the current one once CUDA runs, else device 0 (where it starts)."""
    return _C._cuda_current_device() if is_initialized() else 0


def _generator(device="cuda"):
    """The default generator `device` names ("cuda" or None: the current device's)."""
    if isinstance(device, str):
        device = _C.device(device)
    if device is None or (isinstance(device, _C.device) and device.type == "cuda" and device.index is None):
        return _C._cuda_default_generator(_seed_index())
    idx = _device_index(device)
    if is_available() and not 0 <= idx < device_count():
        raise RuntimeError(f"CUDA error: invalid device ordinal (device {idx} of {device_count()})")
    return _C._cuda_default_generator(idx)


def manual_seed(seed):
    """Seed the current CUDA device's generator."""
    _C._cuda_default_generator(_seed_index()).manual_seed(_wrap_seed(seed))


def manual_seed_all(seed):
    """Seed every CUDA device's generator."""
    _C._manual_seed_cuda_all(_wrap_seed(seed))


def seed():
    """Seed the current CUDA device's generator from a nondeterministic source."""
    _C._cuda_default_generator(_seed_index()).seed()


def seed_all():
    """Seed every CUDA device's generator with one nondeterministic seed."""
    import random as _pyrandom
    manual_seed_all(_pyrandom.SystemRandom().getrandbits(63))


def initial_seed():
    """The current CUDA device's generator's initial seed (starts CUDA, as PyTorch)."""
    _lazy_init()
    return _C._cuda_default_generator(current_device()).initial_seed()


def get_rng_state(device="cuda"):
    """A CUDA generator's state, as a CPU uint8 tensor (starts CUDA, as PyTorch)."""
    _lazy_init()
    return _generator(device).get_state()


def get_rng_state_all():
    """Every CUDA device's generator state, in device order."""
    return [get_rng_state(i) for i in range(device_count())]


def set_rng_state(new_state, device="cuda"):
    """Restore a CUDA generator's state from get_rng_state's tensor."""
    _generator(device).set_state(new_state)


def set_rng_state_all(new_states):
    """Restore every CUDA device's generator state, in device order."""
    for i, state in enumerate(new_states):
        set_rng_state(state, i)


def __getattr__(name):
    # default_generators: one per visible GPU (an empty tuple without one, as PyTorch)
    if name == "default_generators":
        return tuple(_C._cuda_default_generator(i) for i in range(device_count()))
    raise AttributeError(f"module 'ember.cuda' has no attribute '{name}'")


# ---- streams and events
class Stream:
    """A CUDA stream: kernels queued on one run in order; on different streams, concurrently.
    `with ember.cuda.stream(s):` makes it current for the ops in the block."""

    def __init__(self, device=None, priority=0, stream_id=None, device_index=None, **kwargs):
        _lazy_init()
        if stream_id is not None:  # wrap an existing handle (ExternalStream, current_stream())
            self.cuda_stream, self.device_index = int(stream_id), int(device_index)
        else:
            idx = _device_index(device, optional=True)
            self.cuda_stream, self.device_index = _C._cuda_new_stream(idx, int(priority))

    @property
    def device(self):
        return _C.device("cuda", self.device_index)

    def query(self):
        """Whether every kernel queued on the stream has finished."""
        return _C._cuda_stream_query(self.cuda_stream, self.device_index)

    def synchronize(self):
        """Wait until every kernel queued on the stream has finished."""
        _C._cuda_stream_synchronize(self.cuda_stream, self.device_index)

    def wait_event(self, event):
        """Make later work on this stream wait for `event` (the host does not wait)."""
        event.wait(self)

    def wait_stream(self, stream):
        """Make later work on this stream wait for the work queued on `stream` so far."""
        self.wait_event(stream.record_event())

    def record_event(self, event=None):
        """Record an event on this stream (a new one unless given); returns it."""
        event = Event() if event is None else event
        event.record(self)
        return event

    def __eq__(self, other):
        return isinstance(other, Stream) and (self.cuda_stream, self.device_index) == (other.cuda_stream, other.device_index)

    def __hash__(self):
        return hash((self.cuda_stream, self.device_index))

    def __repr__(self):
        return f"<ember.cuda.Stream device=cuda:{self.device_index} cuda_stream={self.cuda_stream:#x}>"


class ExternalStream(Stream):
    """A stream created elsewhere (a cudaStream_t from another library)."""

    def __init__(self, stream_ptr, device=None, **kwargs):
        idx = _device_index(device, optional=True)
        super().__init__(stream_id=stream_ptr, device_index=idx)


def current_stream(device=None):
    """The calling thread's current stream on a device."""
    _lazy_init()
    sid, idx = _C._cuda_current_stream(_device_index(device, optional=True))
    return Stream(stream_id=sid, device_index=idx)


def default_stream(device=None):
    """A device's default stream (handle 0)."""
    _lazy_init()
    sid, idx = _C._cuda_default_stream(_device_index(device, optional=True))
    return Stream(stream_id=sid, device_index=idx)


def set_stream(stream):
    """Make `stream` the calling thread's current stream on its device."""
    if stream is not None:
        _C._cuda_set_stream(stream.cuda_stream, stream.device_index)


class Event:
    """A CUDA event: a point in a stream's work, to wait for, query, or time (enable_timing=True)."""

    def __init__(self, enable_timing=False, blocking=False, interprocess=False, **kwargs):
        _lazy_init()
        if interprocess:
            raise NotImplementedError("ember.cuda.Event: interprocess events are not supported")
        self.enable_timing = bool(enable_timing)
        self._event = None  # made on the first record(), on that stream's device

    def record(self, stream=None):
        """Record the event on `stream` (default: the current stream)."""
        stream = current_stream() if stream is None else stream
        if self._event is None:
            self._event = _C._Event("cuda", stream.device_index, self.enable_timing)
        self._event.record(stream.cuda_stream, stream.device_index)

    def wait(self, stream=None):
        """Make later work on `stream` (default: the current one) wait for this event."""
        stream = current_stream() if stream is None else stream
        if self._event is not None:
            self._event.wait(stream.cuda_stream, stream.device_index)

    def query(self):
        """Whether the work before the event has finished (True if never recorded)."""
        return True if self._event is None else self._event.query()

    def synchronize(self):
        """Wait on the host until the work before the event has finished."""
        if self._event is not None:
            self._event.synchronize()

    def elapsed_time(self, end_event):
        """Milliseconds between this event and `end_event` (both recorded, with enable_timing)."""
        if self._event is None or end_event._event is None:
            raise RuntimeError("Both events must be recorded before calculating elapsed time.")
        return self._event.elapsed_time(end_event._event)

    def __repr__(self):
        return f"<ember.cuda.Event enable_timing={self.enable_timing} recorded={self._event is not None}>"


class StreamContext:
    """Makes a stream current for a `with` block (None: no change)."""

    def __init__(self, stream):
        self.stream = stream
        self._prev = None

    def __enter__(self):
        if self.stream is None:
            return None
        self._prev = current_stream(self.stream.device_index)
        set_stream(self.stream)
        return self.stream

    def __exit__(self, *exc):
        if self._prev is not None:
            set_stream(self._prev)
        return False


def stream(stream):
    """Context manager making `stream` current for the ops in its block."""
    return StreamContext(stream)


class device:
    """Context manager selecting the current CUDA device; a negative index (or None) is a no-op."""

    def __init__(self, device):
        self.idx = -1 if device is None else _device_index(device, optional=True)
        self.prev_idx = -1

    def __enter__(self):
        if self.idx >= 0:
            _lazy_init()
            self.prev_idx = current_device()
            if self.prev_idx != self.idx:
                _C._cuda_set_device(self.idx)

    def __exit__(self, *exc):
        if self.idx >= 0 and self.prev_idx != self.idx:
            _C._cuda_set_device(self.prev_idx)
        return False


class device_of(device):
    """device(obj's CUDA device), a no-op for a CPU tensor."""

    def __init__(self, obj):
        super().__init__(obj.get_device() if obj.is_cuda else -1)


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


_raw_blocks = {}  # pointer -> device, for caching_allocator_delete
_device_ctx = device  # the class: the functions below have a parameter named `device`


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
        raise RuntimeError(f"caching_allocator_delete: {mem_ptr:#x} was not allocated by caching_allocator_alloc")
    with _device_ctx(idx):
        _C._cuda_caching_allocator_delete(mem_ptr)


# ---- legacy tensor types on the GPU: ember.cuda.FloatTensor(2, 3), isinstance(t, ember.cuda.LongTensor)
from .._legacy_types import _BY_DEVICE as _LEGACY  # noqa: E402
(FloatTensor, DoubleTensor, HalfTensor, BFloat16Tensor, LongTensor, IntTensor, ShortTensor, CharTensor, ByteTensor,
 BoolTensor) = _LEGACY["cuda"].values()

from . import amp, nvtx  # noqa: E402,F401
