"""ember.backends.cudnn: cuDNN runs the GPU's convolutions when it can be loaded (NVIDIA's wheel
nvidia-cudnn-cu13, or the one PyTorch brings); otherwise they run as im2col + cuBLAS. The flags are
PyTorch's, with its defaults, and reach the C++ core: enabled, benchmark (time cuDNN's algorithms once
per shape and keep the fastest), deterministic (deterministic algorithms only), allow_tf32."""
from .. import _C
from ._flags import _Flag, _install_flags, _set_flags

__all__ = ["is_available", "version", "is_acceptable", "flags"]


def is_available():
    """Whether cuDNN can run here (this build has it and it loads beside a GPU)."""
    return bool(_C._cuda_is_available() and _C._cudnn_version() > 0)


def version():
    """cuDNN's version as an integer (e.g. 92801), None without it."""
    v = _C._cudnn_version() if _C._cuda_is_available() else 0
    return v or None


def is_acceptable(tensor):
    """Whether cuDNN would take this tensor: a CUDA tensor of a floating dtype, with cuDNN enabled and present."""
    if not _module.enabled or not getattr(tensor, "is_cuda", False):
        return False
    return tensor.dtype.is_floating_point and is_available()


benchmark_limit = 10


def flags(enabled=False, benchmark=False, benchmark_limit=10, deterministic=False, allow_tf32=True):
    """Context manager setting the cuDNN flags for a block (the defaults are PyTorch's)."""
    return _set_flags(_module, enabled=enabled, benchmark=benchmark, benchmark_limit=benchmark_limit,
                      deterministic=deterministic, allow_tf32=allow_tf32)


def _push():
    m = _module
    _C._cudnn_set_flags(m.enabled, m.benchmark, m.deterministic, m.allow_tf32)


_module = _install_flags(__name__, enabled=_Flag("set_enabled_cudnn", True, _push),
                         benchmark=_Flag("set_benchmark_cudnn", False, _push),
                         deterministic=_Flag("set_deterministic_cudnn", False, _push),
                         allow_tf32=_Flag("set_allow_tf32_cudnn", True, _push))
