"""The CUDA generators' seeds and states (torch.cuda.random)."""
from .. import _C
from .._random import _wrap_seed
from ._device import _device_index, _lazy_init, current_device, device_count, is_available, is_initialized

__all__ = ["get_rng_state", "get_rng_state_all", "set_rng_state", "set_rng_state_all", "manual_seed",
           "manual_seed_all", "seed", "seed_all", "initial_seed"]


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
