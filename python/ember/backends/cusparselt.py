"""ember.backends.cusparselt: cuSPARSELt (structured-sparse CUDA matmuls) is absent from a CPU-only
build, so it has no version and no algorithm ids."""

__all__ = ["version", "is_available", "get_max_alg_id"]


def version():
    return None


def is_available():
    return False


def get_max_alg_id():
    return None
