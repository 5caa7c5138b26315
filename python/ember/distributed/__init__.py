"""ember.distributed: process groups, collectives and stores, with torch.distributed's API.

Gloo moves the bytes of CPU tensors; ember.nn.parallel.DistributedDataParallel builds on these
groups, and ``python -m ember.distributed.run`` starts the processes (torchrun's interface).
"""
from .distributed_c10d import (  # noqa: F401
    Backend, BuiltinCommHookType, DistBackendError, DistError, DistNetworkError, DistStoreError, FileStore, GroupMember, HashStore,
    P2POp, PrefixStore, ProcessGroup, ReduceOp, Store, TCPStore, Work, all_gather, all_gather_into_tensor,
    all_gather_object, all_reduce, all_reduce_coalesced, all_to_all, all_to_all_single, barrier, batch_isend_irecv,
    broadcast, broadcast_object_list, default_pg_timeout, destroy_process_group, gather, gather_object, get_backend, GradBucket,
    get_global_rank, get_group_rank, get_node_local_rank, get_process_group_ranks, get_rank, get_world_size, group,
    init_process_group, irecv, is_available, is_gloo_available, is_initialized, is_mpi_available, is_nccl_available,
    is_torchelastic_launched, is_ucc_available, isend, monitored_barrier, new_group, recv, reduce, reduce_scatter,
    reduce_scatter_tensor, scatter, scatter_object_list, send, DebugLevel, get_debug_level,
    get_default_backend_for_device, get_pg_count, is_backend_available, is_xccl_available, new_subgroups,
    new_subgroups_by_enumeration, recv_object_list, register_rendezvous_handler, rendezvous, send_object_list,
    set_debug_level, set_debug_level_from_env, supports_complex,
    AllreduceCoalescedOptions, AllreduceOptions, AllToAllOptions, BackendConfig, BarrierOptions,
    BroadcastOptions, GatherOptions, GroupName, ProcessGroupGloo, QueueEmptyError, ReduceOptions, ReduceScatterOptions,
    ScatterOptions, all_gather_coalesced, all_gather_single, get_backend_config, record_comm, reduce_scatter_single,
    shrink_group, split_group)
from . import constants  # noqa: F401
from .device_mesh import DeviceMesh, init_device_mesh  # noqa: F401
from . import distributed_c10d  # noqa: F401

import logging as _logging

RankType = int  # torch: int | SymInt (Ember has no symbolic ints)
log = _logging.getLogger(__name__)
_breakpoint_calls = {}  # call site -> times reached (breakpoint's skip)
_breakpoint_count = 0  # breakpoints passed: names each one's keys in the store


def _distributed_pdb():
    """A Pdb that reads the terminal (/dev/stdin), also in a child process whose sys.stdin is closed."""
    import pdb
    import sys

    class _DistributedPdb(pdb.Pdb):
        def interaction(self, *args, **kwargs):
            stdin = sys.stdin
            try:
                with open("/dev/stdin") as sys.stdin:
                    pdb.Pdb.interaction(self, *args, **kwargs)
            finally:
                sys.stdin = stdin
    return _DistributedPdb()


def breakpoint(rank=0, skip=0, timeout_s=3600):
    """Stop in pdb on one rank (`rank`); the other ranks wait (up to timeout_s seconds) until it continues.
    skip: pass the first `skip` times this call site is reached."""
    import datetime
    import sys
    global _breakpoint_count
    if skip > 0:
        caller = sys._getframe(1)
        site = (caller.f_code.co_filename, caller.f_lineno)
        count = _breakpoint_calls[site] = _breakpoint_calls.get(site, 0) + 1
        if count <= skip:
            log.warning("Skip the breakpoint, counter=%d", count)
            return
    world = distributed_c10d._get_default_group()
    store = distributed_c10d._world.store
    # a store-based barrier with its own timeout (a Gloo group's timeout is fixed when it is made)
    _breakpoint_count += 1
    key = f"__ember_breakpoint/{_breakpoint_count}"
    if store.add(f"{key}/arrived", 1) == world.size():
        store.set(f"{key}/all", "1")
    if get_rank() == rank:
        pdb = _distributed_pdb()
        pdb.message(f"\n!!! ATTENTION !!!\n\nType 'up' to get to the frame that called dist.breakpoint(rank={rank})\n")
        pdb.set_trace()
        store.set(f"{key}/done", "1")
    timeout = None if timeout_s is None else datetime.timedelta(seconds=timeout_s)
    store.wait([f"{key}/all", f"{key}/done"], timeout)


def __getattr__(name):
    if name == "reduce_op":  # torch's deprecated spelling
        import warnings
        warnings.warn("`ember.distributed.reduce_op` is deprecated, please use `ember.distributed.ReduceOp` instead",
                      FutureWarning, stacklevel=2)
        return ReduceOp
    raise AttributeError(f"module 'ember.distributed' has no attribute '{name}'")
