"""ember.backends.cuda: whether the CUDA backend is built, and cuBLAS's matmul switches
(torch.backends.cuda.matmul). allow_tf32 mirrors ember.get/set_float32_matmul_precision, as PyTorch's
does; every switch reaches the C++ core, which reads it at each GPU matrix product."""
from .. import _flags

__all__ = ["is_built", "matmul"]


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
