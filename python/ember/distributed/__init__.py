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
    set_debug_level, set_debug_level_from_env, supports_complex)
from . import constants  # noqa: F401
from .device_mesh import DeviceMesh, init_device_mesh  # noqa: F401
from . import distributed_c10d  # noqa: F401


def __getattr__(name):
    if name == "reduce_op":  # torch's deprecated spelling
        import warnings
        warnings.warn("`ember.distributed.reduce_op` is deprecated, please use `ember.distributed.ReduceOp` instead",
                      FutureWarning, stacklevel=2)
        return ReduceOp
    raise AttributeError(f"module 'ember.distributed' has no attribute '{name}'")
