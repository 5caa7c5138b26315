"""The bottom of ember.cuda: whether CUDA is there, starting it, and which device an argument names.
The other parts (streams, random, memory) build on these; ember.cuda re-exports them all."""
from .. import _C


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

