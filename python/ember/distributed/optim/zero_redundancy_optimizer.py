"""ZeroRedundancyOptimizer: any optimizer with its state sharded across the ranks of a group
(ZeRO stage 1, Rajbhandari et al. 2020; torch.distributed.optim.ZeroRedundancyOptimizer).

Parameters are dealt to ranks largest first, each to the rank holding the fewest elements so far
(per parameter group). Each rank builds the wrapped optimizer on its share only, so its state
(Adam's moments, ...) exists once across the group; step() updates the local share and then every
rank broadcasts its updated parameters to the others. Gradients must already be identical on every
rank (DDP). state_dict() needs consolidate_state_dict(to=rank) first, on every rank.
"""
import io

from ... import _C
from ...optim.optimizer import Optimizer
from .. import distributed_c10d as _c10d
from ..algorithms.join import Join, Joinable, JoinHook

__all__ = ["ZeroRedundancyOptimizer"]


def _is_trainable(param):
    return param.requires_grad


def _broadcast_object(obj, src_rank, group, device):
    """`obj` from global rank src_rank to every rank of `group` (ember.save bytes, loaded with weights_only)."""
    from ...serialization import load, save
    if _c10d.get_rank() == src_rank:
        buf = io.BytesIO()
        save(obj, buf)
        data = _c10d._byte_tensor(buf.getvalue()).to(device)
        _c10d.broadcast(_C._ops.tensor([data.numel()], dtype=_C.int64, device=device), src=src_rank, group=group)
        _c10d.broadcast(data, src=src_rank, group=group)
        return obj
    length = _C._ops.zeros(1, dtype=_C.int64, device=device)
    _c10d.broadcast(length, src=src_rank, group=group)
    data = _C._ops.empty(int(length.item()), dtype=_C.uint8, device=device)
    _c10d.broadcast(data, src=src_rank, group=group)
    return load(io.BytesIO(data.cpu().numpy().tobytes()), map_location=device, weights_only=True)


def _to_device(obj, device):
    if isinstance(obj, _C.TensorBase):
        return obj.to(device)
    if isinstance(obj, dict):
        return {k: _to_device(v, device) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return type(obj)(_to_device(v, device) for v in obj)
    return obj


class _ZeROJoinHook(JoinHook):
    """A joined rank keeps stepping (its share of the parameters, and the broadcasts the others wait for)."""

    def __init__(self, zero):
        self.zero = zero

    def main_hook(self):
        self.zero.step()


class ZeroRedundancyOptimizer(Optimizer, Joinable):
    """optimizer_class(**defaults) over this rank's share of `params`; step() syncs every parameter.

    parameters_as_bucket_view=True keeps each rank's share in one flat buffer (parameters become views
    of it) so each rank's update travels in one broadcast. overlap_with_ddp is not supported."""

    def __init__(self, params, optimizer_class, process_group=None, parameters_as_bucket_view=False,
                 overlap_with_ddp=False, **defaults):
        if overlap_with_ddp:
            raise NotImplementedError("ZeroRedundancyOptimizer: overlap_with_ddp=True (stepping inside DDP's "
                                      "communication hook) is not supported; use overlap_with_ddp=False")
        if isinstance(params, _C.TensorBase):
            raise TypeError(f"`params` argument should be an iterable of Tensors, but got {params.type()}")
        try:
            params = list(params)
        except TypeError as e:
            raise TypeError(f"`params` argument should be an iterable of Tensors or dicts, but got "
                            f"{type(params).__name__}") from e
        if not params:
            raise ValueError("ZeroRedundancyOptimizer got an empty parameter list")
        if all(isinstance(p, _C.TensorBase) for p in params):
            self._all_params = list(params)
        elif all(isinstance(p, dict) for p in params):
            if any("params" not in g for g in params):
                raise ValueError("Each parameter group passed-in via `params` must have a 'params' key mapping to "
                                 "the parameters in the group")
            self._all_params = [p for g in params for p in g["params"]]
        else:
            raise TypeError("`params` argument should be an iterable of Tensors or dicts")
        kinds = {(p.dtype, p.device) for p in self._all_params if not p.is_sparse}
        if parameters_as_bucket_view and len({k[0] for k in kinds}) > 1:
            raise ValueError("ZeroRedundancyOptimizer with parameters_as_bucket_view=True needs parameters of one "
                             f"dtype, got {sorted(str(k[0]) for k in kinds)}")
        self.initialized = False
        Optimizer.__init__(self, params, defaults)
        Joinable.__init__(self)
        self._partition_cache = []
        self.process_group = process_group if process_group is not None else _c10d._get_default_group()
        self.world_size = _c10d.get_world_size(self.process_group)
        self.rank = _c10d.get_rank(self.process_group)
        self.global_rank = _c10d.get_global_rank(self.process_group, self.rank)
        self._default_device = self._all_params[0].device
        self._is_trainable_mask = [_is_trainable(p) for p in self._all_params]
        self.optim = optimizer_class(self._partition_parameters()[self.rank], **defaults)
        self._sync_param_groups(self.optim.param_groups, self.param_groups)
        self.parameters_as_bucket_view = parameters_as_bucket_view
        self._build_param_buckets()
        self._all_state_dicts = []
        self.initialized = True

    # ---- partition
    def _partition_parameters(self, params_per_rank=None):
        """Per rank, its param groups (the options of each global group, its share of the params)."""
        if params_per_rank is not None:
            if self._partition_cache:
                raise AssertionError("Specifying `params_per_rank` should only be done when the parameters have not "
                                     "been partitioned yet")
            if len(self.param_groups) != 1:
                raise RuntimeError("Specifying `params_per_rank` only supports a single parameter group")
            if len(params_per_rank) != self.world_size:
                raise ValueError("`params_per_rank` must have length equal to the world size")
            known = {id(p) for p in self._all_params}
            if any(id(p) not in known for ps in params_per_rank for p in ps):
                raise ValueError("Passing a new parameter in `params_per_rank` that was not passed into the "
                                 "ZeroRedundancyOptimizer constructor")
            self._partition_cache = [[dict(self.param_groups[0], params=list(ps))] for ps in params_per_rank]
            return self._partition_cache
        if not self._partition_cache:
            self._partition_cache = [[] for _ in range(self.world_size)]
            sizes = [0] * self.world_size
            for group in self.param_groups:
                shares = [[] for _ in range(self.world_size)]
                for p in sorted(group["params"], key=lambda t: t.numel(), reverse=True):
                    rank = min(range(self.world_size), key=lambda r: (sizes[r], r))
                    shares[rank].append(p)
                    sizes[rank] += p.numel()
                for rank, share in enumerate(shares):
                    self._partition_cache[rank].append(dict(group, params=share))
        return self._partition_cache

    def _index_to_param(self):
        return [p for g in self.param_groups for p in g["params"]]

    def add_param_group(self, param_group):
        """Add a group (dealt across ranks like the others)."""
        super().add_param_group(param_group)
        if self.initialized:
            self._partition_cache = []
            groups = self._partition_parameters()[self.rank]
            if len(groups) == len(self.optim.param_groups) + 1:
                self.optim.add_param_group(groups[-1])
            self._all_params = self._index_to_param()
            self._is_trainable_mask = [_is_trainable(p) for p in self._all_params]
            if self.parameters_as_bucket_view:
                self._build_param_buckets()

    @staticmethod
    def _sync_param_groups(src, dst):
        """Every option but "params" from each group of src into dst (lr schedulers edit one of them)."""
        if len(src) != len(dst):
            raise AssertionError("Mismatch between number of source and destination parameter groups")
        for s, d in zip(src, dst):
            for key, value in s.items():
                if key != "params":
                    d[key] = value

    # ---- buckets
    def _build_param_buckets(self):
        """With parameters_as_bucket_view: each rank's trainable share becomes views of one flat buffer
        (per device), broadcast in one piece."""
        self._buckets = []
        if not self.parameters_as_bucket_view:
            return
        devices = {}
        for rank, groups in enumerate(self._partition_parameters()):
            for g in groups:
                for p in g["params"]:
                    devices.setdefault(p.device, [[] for _ in range(self.world_size)])[rank].append(p)
        for device, per_rank in devices.items():
            row = []
            for params in per_rank:
                trainable = [p for p in params if _is_trainable(p)]
                for p in params:
                    if not _is_trainable(p):
                        p.data = p.data.detach().clone()
                total = sum(p.numel() for p in trainable)
                if total == 0:
                    row.append(_C._ops.zeros(1, device=device))
                    continue
                bucket = _C._ops.empty(total, dtype=trainable[0].dtype, device=device)
                at = 0
                for p in trainable:
                    bucket[at:at + p.numel()].copy_(p.data.reshape(-1))
                    p.data = bucket[at:at + p.numel()].view(p.shape)
                    at += p.numel()
                row.append(bucket)
            self._buckets.append(row)

    # ---- step
    def step(self, closure=None, **kwargs):
        """The wrapped optimizer's step on this rank's share, then every share broadcast from its owner."""
        loss = self._local_step(closure=closure, **kwargs)
        self._sync_params()
        return loss

    def _local_step(self, closure=None, **kwargs):
        Join.notify_join_context(self)
        mask = [_is_trainable(p) for p in self._all_params]
        if mask != self._is_trainable_mask:
            self._build_param_buckets()
            self._is_trainable_mask = mask
        self._sync_param_groups(self.param_groups, self.optim.param_groups)
        loss = self.optim.step(**kwargs) if closure is None else self.optim.step(closure=closure, **kwargs)
        self._sync_param_groups(self.optim.param_groups, self.param_groups)
        return loss

    def _sync_params(self):
        works = []
        for rank in range(self.world_size):
            src = _c10d.get_global_rank(self.process_group, rank)
            if self.parameters_as_bucket_view:
                tensors = [row[rank] for row in self._buckets]
            else:
                tensors = [p.data for g in self._partition_parameters()[rank] for p in g["params"]]
            works.extend(_c10d.broadcast(t, src=src, group=self.process_group, async_op=True) for t in tensors)
        for w in works:
            w.wait()

    # ---- state
    def consolidate_state_dict(self, to=0):
        """Gather every rank's optimizer state on group rank `to` (every rank calls it), for state_dict()."""
        self._sync_param_groups(self.param_groups, self.optim.param_groups)
        self._all_state_dicts = []
        for rank in range(self.world_size):
            src = _c10d.get_global_rank(self.process_group, rank)
            mine = self.optim.state_dict() if rank == self.rank else None
            if rank == to:  # its own state stays put; every other rank's is broadcast from its owner
                if self.rank == to:
                    self._all_state_dicts.append(_to_device(mine, _C.device("cpu")))
                continue
            got = _broadcast_object(mine, src, self.process_group, self._default_device)
            if self.rank == to:
                self._all_state_dicts.append(_to_device(got, _C.device("cpu")))

    def state_dict(self):
        """The whole optimizer's state as one optimizer's state_dict (on the rank consolidate_state_dict
        gathered it on)."""
        if not self._all_state_dicts:
            raise RuntimeError("Optimizer state has not been consolidated on this rank. Please call "
                               f"`consolidate_state_dict(to={self.rank})` on all ranks beforehand if you meant to "
                               "save the global state.")
        sd = super().state_dict()
        index_of = {id(p): i for i, p in enumerate(self._index_to_param())}
        for rank, local in enumerate(self._all_state_dicts):
            for local_group, global_group in zip(local["param_groups"], self._partition_parameters()[rank]):
                for local_index, param in zip(local_group["params"], global_group["params"]):
                    if local_index in local["state"]:
                        sd["state"][index_of[id(param)]] = local["state"][local_index]
        sd["state"] = dict(sorted(sd["state"].items()))
        return sd

    def load_state_dict(self, state_dict):
        """Load a state_dict() of this optimizer (or of the wrapped optimizer over the same parameters):
        each rank keeps the state of its share."""
        index_to_param = self._index_to_param()
        own = {id(p) for g in self._partition_parameters()[self.rank] for p in g["params"]}
        mine = {}
        for index, value in state_dict["state"].items():
            param = index_to_param[index]
            if id(param) in own:
                self.optim.state[param] = _to_device(value, param.device)
                mine[index] = value
        super().load_state_dict(dict(state_dict, state=mine))
        self._sync_param_groups(state_dict["param_groups"], self.param_groups)
        self._sync_param_groups(self.param_groups, self.optim.param_groups)

    # ---- Join
    def join_hook(self, **kwargs):
        return _ZeROJoinHook(self)

    @property
    def join_device(self):
        return self._default_device

    @property
    def join_process_group(self):
        return self.process_group
