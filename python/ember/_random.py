"""The global random state: ember.manual_seed and friends act on ember.default_generator."""
from . import _C


def manual_seed(seed):
    seed = int(seed)
    if not (-0x8000_0000_0000_0000 <= seed <= 0xFFFF_FFFF_FFFF_FFFF):
        raise RuntimeError(f"Overflow when unpacking long: seed {seed} out of range")
    if seed < 0:
        seed += 1 << 64
    if seed >= 1 << 63:
        seed -= 1 << 64
    return _C.default_generator.manual_seed(seed)


def seed():
    return _C.default_generator.seed()


def initial_seed():
    return _C.default_generator.initial_seed()


def get_rng_state():
    return _C.default_generator.get_state()


def set_rng_state(new_state):
    _C.default_generator.set_state(new_state)
