"""ember.cuda.nvtx: NVTX ranges and markers that Nsight Systems shows on its timeline (torch.cuda.nvtx).
Without a profiler attached they cost a function call; a build without CUDA raises, as PyTorch's."""
import contextlib

from .. import _C

__all__ = ["range_push", "range_pop", "range_start", "range_end", "mark", "range"]


def range_push(msg):
    """Open a nested range; returns its depth (negative when no tool is listening)."""
    return _C._nvtx_range_push(msg)


def range_pop():
    """Close the innermost open range; returns its depth."""
    return _C._nvtx_range_pop()


def range_start(msg) -> int:
    """Open a range that need not nest (it may end on another thread); returns its id for range_end."""
    return _C._nvtx_range_start(msg)


def range_end(range_id) -> None:
    """Close the range range_start opened."""
    _C._nvtx_range_end(range_id)


def mark(msg):
    """An instantaneous event."""
    _C._nvtx_mark(msg)


@contextlib.contextmanager
def range(msg, *args, **kwargs):
    """A range around a block; msg is formatted with args/kwargs (msg.format(*args, **kwargs))."""
    range_push(msg.format(*args, **kwargs))
    try:
        yield
    finally:
        range_pop()
