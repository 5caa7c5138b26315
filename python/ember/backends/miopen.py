"""ember.backends.miopen: MIOpen (ROCm's cuDNN) is absent from a CPU-only build; its flag is validated
and kept, as torch's CPU build keeps it."""
from ._flags import _Flag, _install_flags, _set_flags


def set_flags(_immediate=None):
    """Set the immediate-mode flag (None keeps it); returns the previous value as a 1-tuple."""
    orig = (_module.immediate,)
    if _immediate is not None:
        _module.immediate = _immediate
    return orig


def flags(immediate=False):
    """The MIOpen flag within a `with` block."""
    return _set_flags(_module, immediate=immediate)


_module = _install_flags(__name__, immediate=_Flag("set_immediate_miopen", False))
