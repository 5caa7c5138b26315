"""ember.random: the global random state (torch.random): seeding, saving and restoring it, and
fork_rng, which runs a block on a copy of the state and puts the original back afterwards."""
import contextlib
import warnings

from ._C import device as _device
from ._random import get_rng_state, initial_seed, manual_seed, seed, set_rng_state

__all__ = ["set_rng_state", "get_rng_state", "manual_seed", "seed", "initial_seed", "fork_rng", "thread_safe_generator"]

_warned_many_devices = False


@contextlib.contextmanager
def fork_rng(devices=None, enabled=True, _caller="fork_rng", _devices_kw="devices", device_type="cuda"):
    """Inside the block, random numbers may be drawn and seeds set freely: on leaving it, the CPU
    generator's state and that of each listed `device_type` device (default: all of them) are
    restored."""
    if device_type == "meta":
        yield
        return
    device_type = _device(device_type).type
    device_mod = None
    if device_type == "cpu":  # only the CPU generator to keep (torch fails looking for per-device states)
        devices = []
    else:
        import importlib
        try:
            device_mod = importlib.import_module(f"{__package__}.{device_type}")
        except ImportError:
            pass
        if not hasattr(device_mod, "get_rng_state"):
            raise RuntimeError(f"ember has no module of `{device_type}`, you should register a module by "
                               "`ember._register_device_module`.")
    if not enabled:
        yield
        return
    if devices is None:
        count = device_mod.device_count()
        global _warned_many_devices
        if count > 1 and not _warned_many_devices:
            warnings.warn(f"{device_type.upper()} reports that you have {count} available devices, and you have used "
                          f"{_caller} without explicitly specifying which devices are being used. For safety, we "
                          f"initialize *every* {device_type.upper()} device by default, which can be quite slow if you "
                          f"have a lot of {device_type.upper()}s. If you know that you are only making use of a few "
                          f"{device_type.upper()} devices, set the environment variable "
                          f"{device_type.upper()}_VISIBLE_DEVICES or the '{_devices_kw}' keyword argument of {_caller} "
                          "with the set of devices you are actually using.", stacklevel=3)
            _warned_many_devices = True
        devices = list(range(count))
    else:
        devices = list(devices)
    cpu_state = get_rng_state()
    device_states = [device_mod.get_rng_state(d) for d in devices]
    try:
        yield
    finally:
        set_rng_state(cpu_state)
        for d, state in zip(devices, device_states):
            device_mod.set_rng_state(state, d)


def thread_safe_generator():
    """The generator random transforms should use: a DataLoader thread worker's own, else None (the
    global one). Ember's DataLoader workers are processes, each with its own global generator, so
    this is None everywhere."""
    from .utils.data import get_worker_info
    info = get_worker_info()
    if info is not None and getattr(info, "worker_method", None) == "thread" and getattr(info, "rng", None) is not None:
        return info.rng.torch_generator
    return None
