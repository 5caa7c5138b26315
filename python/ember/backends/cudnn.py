"""ember.backends.cudnn: cuDNN is absent from a CPU-only build; its flags are kept (and ignored)."""
from ._flags import _Flag, _install_flags, _set_flags

__all__ = ["is_available", "version", "is_acceptable", "flags"]


def is_available():
    return False


def version():
    return None


def is_acceptable(tensor):
    return False


benchmark_limit = 10


def flags(enabled=False, benchmark=False, benchmark_limit=10, deterministic=False, allow_tf32=True):
    """Context manager setting the cuDNN flags for a block (the defaults are PyTorch's)."""
    return _set_flags(_module, enabled=enabled, benchmark=benchmark, benchmark_limit=benchmark_limit,
                      deterministic=deterministic, allow_tf32=allow_tf32)


_module = _install_flags(__name__, enabled=_Flag("set_enabled_cudnn", True),
                         benchmark=_Flag("set_benchmark_cudnn", False),
                         deterministic=_Flag("set_deterministic_cudnn", False),
                         allow_tf32=_Flag("set_allow_tf32_cudnn", True))
