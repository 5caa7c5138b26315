"""Switching the CUDA profiler's collection on and off (torch.cuda.profiler): with Nsight Systems' or
Nsight Compute's capture range set to cudaProfilerApi, only the code between start() and stop() is
recorded."""
import contextlib

from ._cudart import check_error, cudart

__all__ = ["start", "stop", "profile"]


def start():
    """Start the attached CUDA profiler's collection (CudaError if the runtime refuses)."""
    check_error(cudart().cudaProfilerStart())


def stop():
    """Stop the attached CUDA profiler's collection (CudaError if the runtime refuses)."""
    check_error(cudart().cudaProfilerStop())


@contextlib.contextmanager
def profile():
    """Context manager: collection on for the block, off after it (even when it raises)."""
    try:
        start()
        yield
    finally:
        stop()
