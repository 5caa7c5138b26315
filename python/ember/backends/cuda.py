"""ember.backends.cuda: CUDA is not built in; cuBLAS's matmul switches still read and write, and
allow_tf32 mirrors ember.get/set_float32_matmul_precision as PyTorch's does."""
from .. import _flags

__all__ = ["is_built", "matmul"]


def is_built():
    return False


class _CuBLASFlags:
    _names = ("allow_tf32", "allow_fp16_reduced_precision_reduction", "allow_bf16_reduced_precision_reduction")

    def __init__(self):
        object.__setattr__(self, "_reduced", {"allow_fp16_reduced_precision_reduction": True,
                                              "allow_bf16_reduced_precision_reduction": True})

    def __getattr__(self, name):
        if name == "allow_tf32":
            return _flags.get_float32_matmul_precision() != "highest"
        if name in self._reduced:
            return self._reduced[name]
        raise AttributeError(f"Unknown attribute {name}")

    def __setattr__(self, name, value):
        if name not in self._names:
            raise AttributeError(f"Unknown attribute {name}")
        if not isinstance(value, bool):
            raise RuntimeError(f"set_{name} expects a bool, but got {type(value).__name__}")
        if name == "allow_tf32":
            _flags.set_float32_matmul_precision("high" if value else "highest")
        else:
            self._reduced[name] = value


matmul = _CuBLASFlags()
