"""DistributedDataParallel: data-parallel training over ember.distributed process groups.

At construction rank 0's parameters and buffers are broadcast to every rank. The C++ reducer
(ember/distributed/reducer.cpp) groups the gradients into buckets and starts each bucket's
all-reduce from the autograd engine the moment its last gradient is accumulated, so
communication overlaps the rest of backward; at backward's end the averaged gradients are in
every parameter's .grad, identical on all ranks.
"""
import contextlib
import zlib

from ... import _C
from ..._C import _distributed as _D
from ..._tensor import Tensor
from ...distributed import distributed_c10d as _c10d
from ...distributed.algorithms.join import Join, Joinable, _JoinConfig
from ..modules.module import Module


def _tensors_in(obj, out):
    """Every tensor in a forward's output (nested tuples, lists, dicts)."""
    if isinstance(obj, Tensor):
        out.append(obj)
    elif isinstance(obj, (list, tuple)):
        for o in obj:
            _tensors_in(o, out)
    elif isinstance(obj, dict):
        for o in obj.values():
            _tensors_in(o, out)
    return out


def _check_comm_hook(hook):
    """torch's checks of a hook: callable; annotations, when given, GradBucket -> Future[Tensor]."""
    import inspect
    if not callable(hook):
        raise TypeError("Communication hook must be callable.")
    from ...distributed import GradBucket
    from ...futures import Future
    sig = inspect.signature(hook)
    bucket = sig.parameters.get("bucket")
    if bucket is not None and bucket.annotation not in (inspect.Parameter.empty, GradBucket, "dist.GradBucket"):
        raise ValueError("Communication hook: bucket annotation should be dist.GradBucket.")
    if sig.return_annotation not in (inspect.Signature.empty, Future[Tensor], "torch.futures.Future[torch.Tensor]"):
        raise ValueError("Communication hook: return annotation should be torch.futures.Future[torch.Tensor].")


class _DDPJoinHook:
    """What a rank that ran out of inputs does for DDP inside Join (see ember.distributed.algorithms.join):
    each round, the collectives of one forward/backward of the others (buffers from the active rank with
    the highest index, the requires-sync vote, gradient buckets of zeros); at the end, every rank takes
    the model of the rank that joined last (it saw every step)."""

    def __init__(self, ddp, divide_by_initial_world_size):
        self.ddp = ddp
        ddp._divide_by_initial_world_size = divide_by_initial_world_size

    def main_hook(self):
        ddp = self.ddp
        ddp._sync_buffers_in_join(active=False)
        if not ddp._vote_backward_sync(joined=True):
            return
        ddp.reducer.join_shadow()

    def post_hook(self, is_last_joiner):
        ddp = self.ddp
        src = ddp._common_rank(is_last_joiner)
        ddp._broadcast_coalesced(list(ddp.module.parameters()) + list(ddp.module.buffers()), src)


class DistributedDataParallel(Module, Joinable):
    """Wrap a module so backward averages its gradients across processes."""
    def __init__(self, module, device_ids=None, output_device=None, dim=0, broadcast_buffers=None, init_sync=True,
                 process_group=None, bucket_cap_mb=None, find_unused_parameters=False, check_reduction=False,
                 gradient_as_bucket_view=False, static_graph=False, delay_all_reduce_named_params=None,
                 param_to_hook_all_reduce=None, mixed_precision=None, device_mesh=None,
                 skip_all_reduce_unused_params=False, bucket_cap_mb_list=None, batched_grad_copy=False,
                 forward_sync_buffers=None):
        super().__init__()
        self._join_config = _JoinConfig.construct_disabled_join_config()
        self._divide_by_initial_world_size = True
        self._join_divisor = 0  # the count of active ranks the reducer divides by inside Join (0: all)
        params = [p for p in module.parameters() if p.requires_grad]
        if not params:
            raise RuntimeError("DistributedDataParallel is not needed when a module doesn't have any parameter that "
                               "requires a gradient.")
        devices = {p.device for p in module.parameters()}
        on_gpu = len(devices) == 1 and next(iter(devices)).type == "cuda"
        if (device_ids is not None or output_device is not None) and not on_gpu:
            raise ValueError("DistributedDataParallel device_ids and output_device arguments only work with "
                             "single-device/multiple-device GPU modules or CPU modules, but got device_ids "
                             f"{device_ids}, output_device {output_device}, and module parameters {devices}.")
        if on_gpu and device_ids is not None:
            index = next(iter(devices)).index
            ids = [getattr(d, "index", d) for d in device_ids]
            if ids != [index]:
                raise ValueError(f"DistributedDataParallel: device_ids {device_ids} must name the one device of the "
                                 f"module's parameters (cuda:{index})")
        if mixed_precision is not None:
            raise NotImplementedError("DistributedDataParallel: mixed_precision (torch's experimental "
                                      "_MixedPrecision) is not supported")
        if process_group is not None and device_mesh is not None:
            raise RuntimeError("Cannot specify both process_group and device_mesh arguments.")
        if device_mesh is not None:
            if device_mesh.ndim != 1:
                raise RuntimeError(f"Only 1D device mesh is supported, but got {device_mesh}.")
            process_group = device_mesh.get_group(mesh_dim=0)
        self.device_mesh = device_mesh
        self.module = module
        self.process_group = process_group if process_group is not None else _c10d._get_default_group()
        self.device_ids = [next(iter(devices)).index] if on_gpu and device_ids is not None else None
        self.output_device = self.device_ids[0] if self.device_ids else None
        self.dim = dim
        self.broadcast_buffers = True if broadcast_buffers is None else broadcast_buffers
        self.find_unused_parameters = find_unused_parameters
        self.gradient_as_bucket_view = gradient_as_bucket_view
        self.static_graph = static_graph
        self.require_backward_grad_sync = True
        self.require_forward_param_sync = True
        self.bucket_bytes_cap = int((25 if bucket_cap_mb is None else bucket_cap_mb) * 1024 * 1024)
        self._check_same_model(params)
        if init_sync:
            self._broadcast_coalesced(list(module.parameters()) + list(module.buffers()))
        self.reducer = _D.Reducer(params, self.process_group, self.bucket_bytes_cap,
                                 min(1024 * 1024, self.bucket_bytes_cap), find_unused_parameters)

    # ---- construction
    def _check_same_model(self, params):
        """Every rank must wrap the same architecture (names, shapes, dtypes, order)."""
        tensor, zeros, int64 = _C._ops.tensor, _C._ops.zeros, _C.int64
        desc = ";".join(f"{n}:{tuple(p.shape)}:{p.dtype}" for n, p in self.module.named_parameters() if p.requires_grad)
        dev = params[0].device if self.process_group.name() == "nccl" else "cpu"  # NCCL moves GPU memory
        mine = tensor([len(params), zlib.crc32(desc.encode())], dtype=int64).to(dev)
        n = self.process_group.size()
        alls = [zeros(2, dtype=int64).to(dev) for _ in range(n)]
        self.process_group.allgather(alls, mine).wait()
        for r, other in enumerate(alls):
            count, digest = other.tolist()
            if count != len(params):
                raise RuntimeError(f"DDP expects same model across all ranks, but Rank {self.process_group.rank()} has "
                                   f"{len(params)} params, while rank {r} has inconsistent {count} params.")
            if digest != mine[1].item():
                raise RuntimeError(f"DDP expects same model across all ranks, but rank {r}'s parameters differ in name, "
                                   f"shape or dtype from rank {self.process_group.rank()}'s ({desc[:200]}...)")

    def _broadcast_coalesced(self, tensors, src=0):
        """The values of group rank `src` into every rank's tensors: one broadcast per dtype."""
        _D.broadcast_coalesced(self.process_group, tensors, src)

    # ---- training
    def forward(self, *inputs, **kwargs):
        if self._join_config.enable:
            self._join_forward_prologue()  # inside Join: its collectives, buffers included
        else:
            if self._join_divisor:  # back outside Join: average over the whole group again
                self._join_divisor = 0
                self.reducer.set_divisor(0)
            if self.broadcast_buffers and self.require_forward_param_sync:
                buffers = list(self.module.buffers())
                if buffers and self.process_group.size() > 1:
                    self._broadcast_coalesced(buffers)
        out = self.module(*inputs, **kwargs)
        if _C.is_grad_enabled() and self.require_backward_grad_sync:
            self.reducer.prepare_for_backward(_tensors_in(out, []) if self.find_unused_parameters else [])
        return out

    # ---- uneven inputs (Join)
    def join(self, divide_by_initial_world_size=True, enable=True, throw_on_early_termination=False):
        """Context manager for ranks with different numbers of batches: inside it, a rank that runs out
        keeps answering the others' collectives until all have finished. Gradients are averaged over the
        initial world size (joined ranks count as zeros) or, with divide_by_initial_world_size=False,
        over the ranks still training."""
        return Join([self], enable, throw_on_early_termination,
                    divide_by_initial_world_size=divide_by_initial_world_size)

    def join_hook(self, **kwargs):
        return _DDPJoinHook(self, kwargs.get("divide_by_initial_world_size", True))

    @property
    def join_device(self):
        return next(self.module.parameters()).device if self.process_group.name() == "nccl" else \
            _C.device("cpu")

    @property
    def join_process_group(self):
        return self.process_group

    def _join_forward_prologue(self):
        """An active rank's side of one Join round, before the forward: announce itself, learn how many
        ranks are active (when averaging over them), sync buffers, vote on gradient sync."""
        work = Join.notify_join_context(self)
        if work is not None:
            work.wait()
            active = int(work.result()[0].item())
            self._join_divisor = 0 if self._divide_by_initial_world_size else active
            self.reducer.set_divisor(self._join_divisor)
        self._sync_buffers_in_join(active=True)
        self._vote_backward_sync(joined=False)

    def _common_rank(self, mine):
        """The highest group rank among those passing mine=True (every rank calls it)."""
        t = _C._ops.tensor([self.process_group.rank() if mine else -1], device=self.join_device)
        _c10d.all_reduce(t, op=_c10d.ReduceOp.MAX, group=self.process_group)
        rank = int(t.item())
        if rank < 0:
            raise RuntimeError("DistributedDataParallel join: no rank qualified (BUG)")
        return rank

    def _sync_buffers_in_join(self, active):
        buffers = list(self.module.buffers())
        if self.broadcast_buffers and buffers and self.process_group.size() > 1:
            self._broadcast_coalesced(buffers, self._common_rank(active))

    def _vote_backward_sync(self, joined):
        """Whether any active rank will reduce gradients this round (not all inside no_sync())."""
        t = _C._ops.tensor([0 if joined or not self.require_backward_grad_sync else 1], device=self.join_device)
        _c10d.all_reduce(t, group=self.process_group)
        return bool(t.item())

    @contextlib.contextmanager
    def no_sync(self):
        """Gradients accumulate locally inside the block; the first backward after it reduces them all."""
        old = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = old

    # ---- communication hooks
    def register_comm_hook(self, state, hook):
        """Replace each bucket's all-reduce by hook(state, bucket) -> Future[Tensor] (torch's contract: the
        bucket's buffer holds the local gradients, unaveraged; the future's tensor becomes the gradients)."""
        _check_comm_hook(hook)
        from ...distributed.algorithms.ddp_comm_hooks import default_hooks
        builtin = {default_hooks.allreduce_hook: False, default_hooks.fp16_compress_hook: True}.get(hook)
        if builtin is not None and (state is None or state is self.process_group):
            # the stock hooks on DDP's own group: the same operations, run by the reducer in C++
            self.reducer.register_builtin_comm_hook(fp16=builtin)
            return
        self.reducer.register_comm_hook(lambda bucket: hook(state, bucket))

    def _register_builtin_comm_hook(self, comm_hook_type):
        """One of dist.BuiltinCommHookType: ALLREDUCE (the reducer's own path) or FP16_COMPRESS."""
        from ...distributed import BuiltinCommHookType
        if comm_hook_type not in (BuiltinCommHookType.ALLREDUCE, BuiltinCommHookType.FP16_COMPRESS):
            raise TypeError(f"_register_builtin_comm_hook expects a BuiltinCommHookType, got {comm_hook_type!r}")
        self.reducer.register_builtin_comm_hook(fp16=comm_hook_type == BuiltinCommHookType.FP16_COMPRESS)

    def will_sync_module_buffers(self):
        return self.require_forward_param_sync and self.broadcast_buffers and len(list(self.module.buffers())) > 0

    def _get_bucket_indices(self):
        return self.reducer.bucket_indices()

    def _reducer_stats(self):
        """Ember's own: iterations, buckets reduced, all-reduce time and the part backward waited for."""
        return self.reducer.stats()
