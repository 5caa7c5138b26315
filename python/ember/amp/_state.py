"""The thread's autocast state as PyTorch's torch.* functions show it: enabled and dtype per device
type, the cast cache switch, the nesting counter. The state lives in C++ (ember/autograd/autocast.h),
where the autocast ops read it; only the CPU entry changes what ops compute. The other device types
keep their flags so that code probing torch.is_autocast_enabled("cuda") gets PyTorch's answers."""
import warnings

from .. import _C

__all__ = ["is_autocast_enabled", "set_autocast_enabled", "get_autocast_dtype",
           "set_autocast_dtype", "is_autocast_cache_enabled", "set_autocast_cache_enabled",
           "clear_autocast_cache", "autocast_increment_nesting", "autocast_decrement_nesting",
           "is_autocast_cpu_enabled", "set_autocast_cpu_enabled", "get_autocast_cpu_dtype",
           "set_autocast_cpu_dtype", "get_autocast_gpu_dtype", "set_autocast_gpu_dtype",
           "is_autocast_ipu_enabled", "set_autocast_ipu_enabled", "get_autocast_ipu_dtype",
           "set_autocast_ipu_dtype", "is_autocast_xla_enabled", "set_autocast_xla_enabled",
           "get_autocast_xla_dtype", "set_autocast_xla_dtype"]

# the index of each device type in the C++ state (autocast::Device)
_AUTOCAST_DEVICES = {"cpu": 0, "cuda": 1, "xla": 2, "ipu": 3, "xpu": 4, "mps": 5, "hpu": 6, "mtia": 7,
                     "maia": 8, "privateuseone": 9}
# every device type a device string may name (PyTorch's list); the rest have no autocast
_DEVICE_TYPES = ("cpu", "cuda", "ipu", "xpu", "mkldnn", "opengl", "opencl", "ideep", "hip", "ve", "fpga",
                 "maia", "xla", "lazy", "vulkan", "mps", "meta", "hpu", "mtia", "privateuseone")


def _check_str(fn, name, value, position=1):
    if not isinstance(value, str):
        raise TypeError(f"{fn}(): argument '{name}' (position {position}) must be str, not {type(value).__name__}")


def _device_type(device_type):
    """'cpu', 'cuda:1', ... -> the device type, with PyTorch's errors for malformed strings."""
    if device_type == "":
        raise RuntimeError("Device string must not be empty")
    kind, sep, index = device_type.partition(":")
    if kind not in _DEVICE_TYPES:
        raise RuntimeError(f"Expected one of {', '.join(_DEVICE_TYPES)} device type at start of device string: "
                           f"{device_type}")
    if sep and not index.isdigit():
        raise RuntimeError(f"Invalid device string: '{device_type}'")
    return kind


def _index(device_type):
    kind = _device_type(device_type)
    if kind not in _AUTOCAST_DEVICES:
        raise RuntimeError("unknown device type for autocast in get_autocast_dispatch_key_from_device_type")
    return _AUTOCAST_DEVICES[kind]


def _deprecated(old, new):
    warnings.warn(f"torch.{old} is deprecated. Please use torch.{new} instead.", DeprecationWarning, stacklevel=3)


def is_autocast_available(device_type):
    """Whether autocast can be enabled for `device_type` (a device string such as 'cpu' or 'cuda:0')."""
    _check_str("_is_autocast_available", "device_type", device_type)
    return _device_type(device_type) in _AUTOCAST_DEVICES


def is_autocast_enabled(device_type=None):
    """Whether autocast is on for `device_type`; without it, for CUDA (PyTorch's older spelling)."""
    if device_type is None:
        return _C._autocast_is_enabled(_AUTOCAST_DEVICES["cuda"])
    _check_str("is_autocast_enabled", "device_type", device_type)
    return _C._autocast_is_enabled(_index(device_type))


def set_autocast_enabled(*args):
    """set_autocast_enabled(device_type, enabled), or set_autocast_enabled(enabled) for CUDA."""
    if len(args) == 1 and isinstance(args[0], bool):
        return _C._autocast_set_enabled(_AUTOCAST_DEVICES["cuda"], args[0])
    if len(args) == 2 and isinstance(args[0], str):
        if not isinstance(args[1], bool):
            raise TypeError("set_autocast_enabled(): argument 'enabled' (position 2) must be bool, not "
                            f"{type(args[1]).__name__}")
        return _C._autocast_set_enabled(_index(args[0]), args[1])
    got = ", ".join(type(a).__name__ for a in args)
    raise TypeError(f"set_autocast_enabled() received an invalid combination of arguments - got ({got}), but "
                    "expected one of:\n * (str device_type, bool enabled)\n * (bool enabled)\n")


def get_autocast_dtype(device_type):
    """The dtype the lower-precision autocast ops of `device_type` run in (bfloat16 on the CPU)."""
    _check_str("get_autocast_dtype", "device_type", device_type)
    return _C._autocast_get_dtype(_index(device_type))


def _check_dtype(fn, dtype):
    if not isinstance(dtype, _C.dtype):
        raise TypeError(f"{fn}(): argument 'dtype' (position 2) must be torch.dtype, not {type(dtype).__name__}")


def set_autocast_dtype(device_type, dtype):
    """Set the lower-precision dtype of a device type's autocast regions."""
    _check_str("set_autocast_dtype", "device_type", device_type)
    _check_dtype("set_autocast_dtype", dtype)
    _C._autocast_set_dtype(_index(device_type), dtype)


def is_autocast_cache_enabled():
    """Whether autocast regions cache the lower-precision copies of leaf weights."""
    return _C._autocast_is_cache_enabled()


def set_autocast_cache_enabled(enabled):
    """Turn the cache of autocast's weight casts on or off."""
    if not isinstance(enabled, bool):
        raise TypeError(f"enabled must be a bool (got {type(enabled).__name__})")
    _C._autocast_set_cache_enabled(enabled)


def clear_autocast_cache():
    """Drops the cached casts of leaf weights (autocast's exit from the outermost region does this)."""
    _C._autocast_clear_cache()


def autocast_increment_nesting():
    """Counts one more open autocast region on this thread; returns the new depth."""
    return _C._autocast_increment_nesting()


def autocast_decrement_nesting():
    """Counts one region closed; returns the new depth (0: outside every region)."""
    return _C._autocast_decrement_nesting()


# ---- the per-device spellings PyTorch still exports (deprecated in favour of the two above)
def is_autocast_cpu_enabled():
    """True inside an enabled CPU autocast region."""
    _deprecated("is_autocast_cpu_enabled()", "is_autocast_enabled('cpu')")
    return is_autocast_enabled("cpu")


def set_autocast_cpu_enabled(enabled):
    """Turn CPU autocast on or off."""
    _deprecated("set_autocast_cpu_enabled(enabled)", "set_autocast_enabled('cpu', enabled)")
    set_autocast_enabled("cpu", enabled)


def get_autocast_cpu_dtype():
    """The lower-precision dtype of CPU autocast regions."""
    _deprecated("get_autocast_cpu_dtype()", "get_autocast_dtype('cpu')")
    return get_autocast_dtype("cpu")


def set_autocast_cpu_dtype(dtype):
    """Set the lower-precision dtype of CPU autocast regions."""
    _deprecated("set_autocast_cpu_dtype(dtype)", "set_autocast_dtype('cpu', dtype)")
    set_autocast_dtype("cpu", dtype)


def get_autocast_gpu_dtype():
    """The lower-precision dtype of CUDA autocast regions."""
    _deprecated("get_autocast_gpu_dtype()", "get_autocast_dtype('cuda')")
    return get_autocast_dtype("cuda")


def set_autocast_gpu_dtype(dtype):
    """Set the lower-precision dtype of CUDA autocast regions."""
    _deprecated("set_autocast_gpu_dtype(dtype)", "set_autocast_dtype('cuda', dtype)")
    set_autocast_dtype("cuda", dtype)


def is_autocast_ipu_enabled():
    """True inside an enabled IPU autocast region (never, in Ember)."""
    _deprecated("is_autocast_ipu_enabled()", "is_autocast_enabled('ipu')")
    return is_autocast_enabled("ipu")


def set_autocast_ipu_enabled(enabled):
    """Turn IPU autocast on or off."""
    _deprecated("set_autocast_ipu_enabled(enabled)", "set_autocast_enabled('ipu', enabled)")
    set_autocast_enabled("ipu", enabled)


def get_autocast_ipu_dtype():
    """The lower-precision dtype of IPU autocast regions."""
    _deprecated("get_autocast_ipu_dtype()", "get_autocast_dtype('ipu')")
    return get_autocast_dtype("ipu")


def set_autocast_ipu_dtype(dtype):
    """Set the lower-precision dtype of IPU autocast regions."""
    _deprecated("set_autocast_ipu_dtype(dtype)", "set_autocast_dtype('ipu', dtype)")
    set_autocast_dtype("ipu", dtype)


def is_autocast_xla_enabled():
    """True inside an enabled XLA autocast region (never, in Ember)."""
    _deprecated("is_autocast_xla_enabled()", "is_autocast_enabled('xla')")
    return is_autocast_enabled("xla")


def set_autocast_xla_enabled(enabled):
    """Turn XLA autocast on or off."""
    _deprecated("set_autocast_xla_enabled(enabled)", "set_autocast_enabled('xla', enabled)")
    set_autocast_enabled("xla", enabled)


def get_autocast_xla_dtype():
    """The lower-precision dtype of XLA autocast regions."""
    _deprecated("get_autocast_xla_dtype()", "get_autocast_dtype('xla')")
    return get_autocast_dtype("xla")


def set_autocast_xla_dtype(dtype):
    """Set the lower-precision dtype of XLA autocast regions."""
    _deprecated("set_autocast_xla_dtype(dtype)", "set_autocast_dtype('xla', dtype)")
    set_autocast_dtype("xla", dtype)
