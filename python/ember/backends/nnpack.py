"""ember.backends.nnpack: NNPACK, a convolution library Ember does not link; its switch is validated
and kept as torch keeps it (on by default)."""
import contextlib

__all__ = ["is_available", "flags", "set_flags"]

_nnpack_enabled = True


def is_available():
    """Whether this build has NNPACK: Ember's never has."""
    return False


def set_flags(_enabled):
    """Set whether NNPACK may be used; returns the previous setting as a 1-tuple."""
    global _nnpack_enabled
    if not isinstance(_enabled, bool):
        raise RuntimeError(f"set_enabled_NNPACK expects a bool, but got {type(_enabled).__name__}")
    orig = (_nnpack_enabled,)
    _nnpack_enabled = _enabled
    return orig


@contextlib.contextmanager
def flags(enabled=False):
    """The NNPACK switch within a `with` block (off by default, as torch's)."""
    orig = set_flags(enabled)
    try:
        yield
    finally:
        set_flags(orig[0])
