"""ember.multiprocessing: a drop-in for Python's multiprocessing (PyTorch's torch.multiprocessing).

Everything of the standard module is re-exported; in addition, tensors sent through its queues,
pipes and pools (and as spawn-process arguments) travel as shared-memory storages instead of
being copied: the receiver maps the same memory, so writes on either side are seen by both.
How the memory is named is the sharing strategy: 'file_descriptor' (default; an anonymous memfd
whose fd is passed over a Unix socket, freed by the kernel with its last user) or 'file_system'
(a named /dev/shm segment, refcounted across processes)."""
import multiprocessing
from multiprocessing import *  # noqa: F401,F403

from . import _reductions
from ._spawn import (  # noqa: F401
    ProcessContext, ProcessExitedException, ProcessRaisedException, SpawnContext, spawn, start_processes,
)

__all__ = ["set_sharing_strategy", "get_sharing_strategy", "get_all_sharing_strategies", "spawn",
           "start_processes", "ProcessContext", "SpawnContext", "ProcessRaisedException",
           "ProcessExitedException"]
__all__ += multiprocessing.__all__

_all_sharing_strategies = {"file_descriptor", "file_system"}


def set_sharing_strategy(new_strategy):
    """How tensors sent to other processes are shared: 'file_descriptor' or 'file_system'."""
    if new_strategy not in _all_sharing_strategies:
        raise AssertionError(f"invalid sharing strategy {new_strategy!r}; expected one of "
                             f"{sorted(_all_sharing_strategies)}")
    if new_strategy == "file_system":
        _reductions._connect_tracker()  # started here, so children share this process's tracker
    _reductions._strategy[0] = new_strategy


def get_sharing_strategy():
    return _reductions._strategy[0]


def get_all_sharing_strategies():
    return set(_all_sharing_strategies)


_reductions.init_reductions()
