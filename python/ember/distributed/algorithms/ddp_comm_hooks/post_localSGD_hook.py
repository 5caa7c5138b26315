"""The post-local SGD communication hook: DDP averages gradients over the whole group for the first
start_localSGD_iter iterations, then only within a subgroup (a model averager, e.g.
PeriodicModelAverager, averages the models globally now and then)."""
import logging

from ....futures import Future
from ...._tensor import Tensor
from ... import distributed_c10d as _c10d
from . import default_hooks as _default

logger = logging.getLogger(__name__)


class PostLocalSGDState:
    """post_localSGD_hook's state: the global group (None: the world), the subgroup used after
    start_localSGD_iter (None: made by new_subgroups() on first use), whether gradients are still
    all-reduced in the subgroup afterwards, and the iteration count."""

    __slots__ = ["process_group", "subgroup", "start_localSGD_iter", "post_local_gradient_allreduce", "iter"]

    def __init__(self, process_group, subgroup, start_localSGD_iter, post_local_gradient_allreduce=True):
        logger.info("Local SGD will be started after %s iterations", start_localSGD_iter)
        self.process_group = process_group
        self.subgroup = subgroup
        self.start_localSGD_iter = start_localSGD_iter
        self.post_local_gradient_allreduce = post_local_gradient_allreduce
        self.iter = 0

    def maybe_increase_iter(self, bucket):
        """Count an iteration at each backward's last bucket (and log when local SGD starts)."""
        if bucket.is_last():
            self.iter += 1
        if self.iter == self.start_localSGD_iter:
            logger.info("Start to apply local SGD after %s iterations.", self.iter)


def post_localSGD_hook(state, bucket) -> Future[Tensor]:
    """Average the bucket over state.process_group until state.start_localSGD_iter, then over state.subgroup
    (or leave it local when post_local_gradient_allreduce is False)."""
    global_group = state.process_group if state.process_group is not None else _c10d.group.WORLD
    tensor = bucket.buffer()
    if state.iter < state.start_localSGD_iter:
        state.maybe_increase_iter(bucket)
        return _default._allreduce_fut(global_group, tensor)
    if not state.post_local_gradient_allreduce:
        fut = Future()
        fut.set_result(tensor)
        return fut
    if state.subgroup is None:
        state.subgroup, _ = _c10d.new_subgroups()
    return _default._allreduce_fut(state.subgroup, tensor)
