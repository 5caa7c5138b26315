"""ember.cuda on a CPU-only build: the names a PyTorch program touches, behaving as PyTorch's CPU
build does. Queries answer "no GPU" (is_available() False, device_count() 0, memory counters 0),
seeding is a no-op, and anything that needs a device raises AssertionError("... not compiled with
CUDA enabled"), the error PyTorch raises there."""
from collections import OrderedDict

from .. import _C

__all__ = [
    "is_available", "is_initialized", "device_count", "init", "current_device", "set_device", "get_device_name",
    "get_device_capability", "get_device_properties", "get_arch_list", "get_gencode_flags", "is_bf16_supported",
    "synchronize", "empty_cache", "ipc_collect", "memory_allocated", "max_memory_allocated", "memory_reserved",
    "max_memory_reserved", "memory_stats", "reset_peak_memory_stats", "reset_max_memory_allocated",
    "reset_accumulated_memory_stats", "mem_get_info", "set_per_process_memory_fraction", "manual_seed",
    "manual_seed_all", "seed", "seed_all", "initial_seed", "get_rng_state", "get_rng_state_all", "set_rng_state",
    "set_rng_state_all", "current_stream", "default_stream", "stream", "Stream", "Event", "StreamContext", "device",
    "device_of", "OutOfMemoryError", "amp",
]

_NOT_COMPILED = "Ember not compiled with CUDA enabled"
default_generators = ()


class OutOfMemoryError(RuntimeError):
    """Raised when a device runs out of memory (never, without a device)."""


def _lazy_init():
    raise AssertionError(_NOT_COMPILED)


def _is_compiled():
    return False


def is_available():
    """Whether CUDA can be used: always False in Ember."""
    return False


def is_initialized():
    """Whether CUDA was initialized: always False in Ember."""
    return False


def device_count():
    """Number of CUDA devices: 0 in Ember."""
    return 0


def init():
    """Initialize CUDA; raises, as Ember is built without CUDA."""
    _lazy_init()


def is_bf16_supported(including_emulation=True):
    """Whether a CUDA device supports bfloat16: False without CUDA."""
    return False


def get_arch_list():
    """CUDA architectures the build supports: none."""
    return []


def get_gencode_flags():
    """NVCC gencode flags of the build: empty."""
    return ""


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


# ---- devices: every query about a particular device needs CUDA
def current_device():
    """Index of the current CUDA device; raises without CUDA."""
    _lazy_init()


def set_device(device):
    """Select the current CUDA device; raises without CUDA."""
    if _device_index(device) >= 0:  # a negative index is a no-op, as in PyTorch
        _lazy_init()


def get_device_name(device=None):
    """Name of a CUDA device; raises without CUDA."""
    _lazy_init()


def get_device_capability(device=None):
    """Compute capability of a CUDA device; raises without CUDA."""
    _lazy_init()


def get_device_properties(device=None):
    """Properties of a CUDA device; raises without CUDA."""
    _lazy_init()


def synchronize(device=None):
    """Wait for CUDA work to finish; raises without CUDA."""
    _lazy_init()


def ipc_collect():
    """Free CUDA memory held for IPC; raises without CUDA."""
    _lazy_init()


def mem_get_info(device=None):
    """Free and total CUDA memory; raises without CUDA."""
    _lazy_init()


def set_per_process_memory_fraction(fraction, device=None):
    """Cap this process's share of CUDA memory; raises without CUDA."""
    _lazy_init()


def current_stream(device=None):
    """The current CUDA stream; raises without CUDA."""
    _lazy_init()


def default_stream(device=None):
    """The default CUDA stream; raises without CUDA."""
    _lazy_init()


# ---- the caching allocator: never initialised, so it holds nothing
def empty_cache():
    """Nothing is cached without CUDA: a no-op, as PyTorch's when CUDA was never initialised."""


def memory_stats(device=None):
    """CUDA allocator statistics: empty without CUDA."""
    return OrderedDict()


def memory_allocated(device=None):
    """Bytes of CUDA memory allocated: 0 without CUDA."""
    return 0


def max_memory_allocated(device=None):
    """Peak bytes of CUDA memory allocated: 0 without CUDA."""
    return 0


def memory_reserved(device=None):
    """Bytes of CUDA memory reserved: 0 without CUDA."""
    return 0


def max_memory_reserved(device=None):
    """Peak bytes of CUDA memory reserved: 0 without CUDA."""
    return 0


def reset_peak_memory_stats(device=None):
    """Reset the CUDA allocator's peaks; raises without CUDA."""
    _lazy_init()


def reset_max_memory_allocated(device=None):
    """Reset the CUDA allocation peak; raises without CUDA."""
    _lazy_init()


def reset_accumulated_memory_stats(device=None):
    """Reset the CUDA allocator's counters; raises without CUDA."""
    _lazy_init()


# ---- random state: PyTorch queues these until CUDA starts, which it never does here
def manual_seed(seed):
    """Seed the current CUDA generator (ignored without CUDA, as in PyTorch)."""
    int(seed)


def manual_seed_all(seed):
    """Seed every CUDA generator (ignored without CUDA, as in PyTorch)."""
    int(seed)


def seed():
    """Seed the current CUDA generator randomly (ignored without CUDA)."""
    pass


def seed_all():
    """Seed every CUDA generator randomly (ignored without CUDA)."""
    pass


def initial_seed():
    """A CUDA generator's initial seed; raises without CUDA."""
    _lazy_init()


def get_rng_state(device="cuda"):
    """A CUDA generator's state; raises without CUDA."""
    _lazy_init()


def get_rng_state_all():
    """Every CUDA generator's state: an empty list."""
    return []


def set_rng_state(new_state, device="cuda"):
    """Restore a CUDA generator's state (ignored without CUDA)."""
    pass


def set_rng_state_all(new_states):
    """Restore every CUDA generator's state (none without CUDA)."""
    for state in new_states:
        set_rng_state(state)


# ---- streams and events: the names exist, constructing one needs CUDA
class Stream:
    """A CUDA stream; constructing one raises, as Ember is built without CUDA."""
    def __new__(cls, device=None, priority=0, **kwargs):
        raise RuntimeError("ember.cuda.Stream requires CUDA support")


class Event:
    """A CUDA event; constructing one raises, as Ember is built without CUDA."""
    def __new__(cls, enable_timing=False, blocking=False, interprocess=False, **kwargs):
        raise RuntimeError("ember.cuda.Event requires CUDA support")


class StreamContext:
    """Selects a stream within a `with` block; None selects nothing (the only stream there can be here)."""

    def __init__(self, stream):
        self.stream = stream

    def __enter__(self):
        if self.stream is not None:
            _lazy_init()

    def __exit__(self, *exc):
        return False


def stream(stream):
    """Context manager selecting a CUDA stream; entering it with a stream raises without CUDA."""
    return StreamContext(stream)


class device:
    """Context manager selecting a CUDA device; a negative index (or None) is a no-op."""

    def __init__(self, device):
        self.idx = -1 if device is None else _device_index(device, optional=True)

    def __enter__(self):
        if self.idx >= 0:
            raise RuntimeError("Ember was compiled without CUDA support")

    def __exit__(self, *exc):
        return False


class device_of(device):
    """device(obj's CUDA device), a no-op for a CPU tensor."""

    def __init__(self, obj):
        super().__init__(obj.get_device() if obj.is_cuda else -1)


from . import amp  # noqa: E402,F401
