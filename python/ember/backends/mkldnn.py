"""ember.backends.mkldnn: oneDNN (formerly MKL-DNN), which runs Ember's float32 convolutions when the
build found it."""
from ._flags import _Flag, _install_flags, _set_flags

__all__ = ["is_available", "flags"]


def is_available():
    """Whether this build links oneDNN (its library is then loaded with the extension)."""
    try:
        with open("/proc/self/maps") as f:
            return "libdnnl" in f.read()
    except OSError:
        return False


def flags(enabled=False, deterministic=False, allow_tf32=True):
    """Context manager setting the oneDNN flags for a block (the defaults are PyTorch's)."""
    return _set_flags(_module, enabled=enabled, deterministic=deterministic, allow_tf32=allow_tf32)


_module = _install_flags(__name__, enabled=_Flag("set_enabled_mkldnn", True),
                         deterministic=_Flag("set_deterministic_mkldnn", False),
                         allow_tf32=_Flag("set_allow_tf32_mkldnn", True))
