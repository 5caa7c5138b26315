"""ember.backends.cuda: whether the CUDA backend is built, and cuBLAS's matmul switches
(torch.backends.cuda.matmul). allow_tf32 mirrors ember.get/set_float32_matmul_precision, as PyTorch's
does; every switch reaches the C++ core, which reads it at each GPU matrix product."""
import contextlib
import enum
import warnings

from .. import _flags

__all__ = ["is_built", "matmul", "SDPBackend", "sdp_kernel", "flash_sdp_enabled", "enable_flash_sdp",
           "mem_efficient_sdp_enabled", "enable_mem_efficient_sdp", "math_sdp_enabled", "enable_math_sdp",
           "cudnn_sdp_enabled", "enable_cudnn_sdp", "is_flash_attention_available", "can_use_flash_attention",
           "can_use_efficient_attention", "preferred_blas_library", "preferred_linalg_library"]


def is_built():
    """Whether Ember was built with the CUDA backend (a GPU may still be absent)."""
    from .. import _C
    return bool(_C._cuda_is_compiled())


class _CuBLASFlags:
    _names = ("allow_tf32", "allow_fp16_reduced_precision_reduction", "allow_bf16_reduced_precision_reduction")

    def __getattr__(self, name):
        from .. import _C
        tf32, fp16, bf16 = _C._cuda_matmul_flags()
        if name == "allow_tf32":
            return tf32
        if name == "allow_fp16_reduced_precision_reduction":
            return fp16
        if name == "allow_bf16_reduced_precision_reduction":
            return bf16
        raise AttributeError(f"Unknown attribute {name}")

    def __setattr__(self, name, value):
        if name not in self._names:
            raise AttributeError(f"Unknown attribute {name}")
        if not isinstance(value, bool):
            raise RuntimeError(f"set_{name} expects a bool, but got {type(value).__name__}")
        if name == "allow_tf32":
            _flags.set_float32_matmul_precision("high" if value else "highest")
            return
        from .. import _C
        tf32, fp16, bf16 = _C._cuda_matmul_flags()
        if name == "allow_fp16_reduced_precision_reduction":
            fp16 = value
        else:
            bf16 = value
        _C._cuda_set_matmul_flags(tf32, fp16, bf16)


matmul = _CuBLASFlags()


# ---- scaled_dot_product_attention's backend switches (the state ember.nn.attention.sdpa_kernel sets)
from ..nn.attention import SDPBackend, can_use_efficient_attention, can_use_flash_attention  # noqa: E402
from ..nn import attention as _attention  # noqa: E402


def _switch(backend, enabled):
    if not isinstance(enabled, bool):
        raise TypeError(f"enable_*_sdp expects a bool, but got {type(enabled).__name__}")
    (_attention._enabled.add if enabled else _attention._enabled.discard)(backend)


def flash_sdp_enabled():
    """Whether scaled_dot_product_attention may pick flash attention (Ember has no such kernel)."""
    return SDPBackend.FLASH_ATTENTION in _attention._enabled


def enable_flash_sdp(enabled: bool):
    _switch(SDPBackend.FLASH_ATTENTION, enabled)


def mem_efficient_sdp_enabled():
    return SDPBackend.EFFICIENT_ATTENTION in _attention._enabled


def enable_mem_efficient_sdp(enabled: bool):
    _switch(SDPBackend.EFFICIENT_ATTENTION, enabled)


def math_sdp_enabled():
    """Whether the math backend (Ember's one SDPA kernel) may run."""
    return SDPBackend.MATH in _attention._enabled


def enable_math_sdp(enabled: bool):
    _switch(SDPBackend.MATH, enabled)


def cudnn_sdp_enabled():
    return SDPBackend.CUDNN_ATTENTION in _attention._enabled


def enable_cudnn_sdp(enabled: bool):
    _switch(SDPBackend.CUDNN_ATTENTION, enabled)


def is_flash_attention_available():
    """False: Ember has no flash-attention kernel (attention runs on the math backend)."""
    return False


@contextlib.contextmanager
def sdp_kernel(enable_flash=True, enable_math=True, enable_mem_efficient=True, enable_cudnn=True):
    """torch's deprecated switch of the SDPA backends for a block; prefer ember.nn.attention.sdpa_kernel."""
    warnings.warn("`ember.backends.cuda.sdp_kernel()` is deprecated. In the future, this context manager will be "
                  "removed. Please see `ember.nn.attention.sdpa_kernel()` for the new context manager, with updated "
                  "signature.", FutureWarning, stacklevel=3)
    chosen = [b for b, on in ((SDPBackend.FLASH_ATTENTION, enable_flash), (SDPBackend.MATH, enable_math),
                              (SDPBackend.EFFICIENT_ATTENTION, enable_mem_efficient),
                              (SDPBackend.CUDNN_ATTENTION, enable_cudnn)) if on]
    with _attention.sdpa_kernel(chosen):
        yield {}


# ---- which library GPU linear algebra uses: Ember has one of each (cuBLAS; none for LAPACK-style ops)
class _BlasBackend(enum.Enum):
    Default = 0
    Cublas = 1
    Cublaslt = 2
    Ck = 3


class _LinalgBackend(enum.Enum):
    Default = 0
    Cusolver = 1
    Magma = 2


def preferred_blas_library(backend=None):
    """The GPU BLAS in use: cuBLAS, Ember's only one (asking for another raises)."""
    if backend is not None:
        name = backend.name if isinstance(backend, _BlasBackend) else str(backend)
        if name.lower() not in ("cublas", "default"):
            raise RuntimeError(f"preferred_blas_library: Ember's GPU matrix products use cuBLAS only; "
                               f"'{name}' is not available")
    return _BlasBackend.Cublas


def preferred_linalg_library(backend=None):
    """The GPU linear-algebra library: Default (Ember's decompositions run on the CPU's LAPACK)."""
    if backend is not None:
        name = backend.name if isinstance(backend, _LinalgBackend) else str(backend)
        if name.lower() != "default":
            raise RuntimeError(f"preferred_linalg_library: Ember has no GPU linear-algebra library; "
                               f"'{name}' is not available")
    return _LinalgBackend.Default
