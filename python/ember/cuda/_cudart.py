"""The CUDA runtime calls PyTorch exposes as torch.cuda.cudart() (profiler switches, host memory
registration, error strings), and the error type a failing one raises through check_error."""
import enum
import types

from .. import _C
from ._device import _lazy_init


class cudaStatus:
    """cudaError_t codes PyTorch names."""
    SUCCESS: int = 0
    ERROR_NOT_READY: int = 34


class CudaError(RuntimeError):
    """A CUDA runtime call failed; the message is the runtime's text for the code, then the code."""

    def __init__(self, code):
        super().__init__(f"{_C._cudart_error_string(int(code))} ({int(code)})")


class _CudaErrorCode(enum.IntEnum):
    success = 0


_RUNTIME = types.SimpleNamespace(
    cudaError=_CudaErrorCode,
    cudaGetErrorString=lambda code: _C._cudart_error_string(int(code)),
    cudaProfilerStart=_C._cudart_profiler_start,
    cudaProfilerStop=_C._cudart_profiler_stop,
    cudaHostRegister=lambda ptr, size, flags: _C._cudart_host_register(int(ptr), int(size), int(flags)),
    cudaHostUnregister=lambda ptr: _C._cudart_host_unregister(int(ptr)),
)


def cudart():
    """The CUDA runtime's functions (cudaProfilerStart/Stop, cudaHostRegister/Unregister,
    cudaGetErrorString); each returns a cudaError_t code. Starts CUDA first (raises without a GPU)."""
    _lazy_init()
    return _RUNTIME


def check_error(res):
    """Raise CudaError unless `res`, a CUDA runtime call's result, is success (0)."""
    if res != cudaStatus.SUCCESS:
        raise CudaError(res)
