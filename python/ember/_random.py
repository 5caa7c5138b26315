"""The global random state: ember.manual_seed and friends act on ember.default_generator."""
from . import _C


def _wrap_seed(seed):
    """A seed as the signed 64-bit value the generators take (PyTorch's range and wrapping)."""
    seed = int(seed)
    if not (-0x8000_0000_0000_0000 <= seed <= 0xFFFF_FFFF_FFFF_FFFF):
        raise RuntimeError(f"Overflow when unpacking long: seed {seed} out of range")
    if seed < 0:
        seed += 1 << 64
    if seed >= 1 << 63:
        seed -= 1 << 64
    return seed


def manual_seed(seed):
    """Seed the default random generator and every CUDA device's; returns the CPU generator."""
    seed = _wrap_seed(seed)
    _C._manual_seed_cuda_all(seed)
    return _C.default_generator.manual_seed(seed)


def seed():
    """Seed the default generator (and every CUDA device's) from a nondeterministic source; returns the seed."""
    s = _C.default_generator.seed()
    _C._manual_seed_cuda_all(_wrap_seed(s))
    return s


def initial_seed():
    """The seed the default generator was last seeded with."""
    return _C.default_generator.initial_seed()


def get_rng_state():
    """The default CPU generator's state as a uint8 tensor."""
    return _C.default_generator.get_state()


def set_rng_state(new_state):
    """Restore the default CPU generator's state from get_rng_state's tensor."""
    _C.default_generator.set_state(new_state)
