"""Join: training on uneven inputs across ranks (torch.distributed.algorithms.join).

Every iteration of a joinable (DDP, ZeroRedundancyOptimizer) first all-reduces a 1 over its group
(notify_join_context). A rank whose inputs ran out leaves the `with Join(...)` block and, in
__exit__, all-reduces 0s instead, running each joinable's join hook, which issues the collectives
one iteration of the others would (DDP: gradient buckets of zeros), until the sum says nobody is
left; then each hook's post_hook runs (DDP: every rank takes the last joiner's model).
"""
import abc
import warnings

from ... import _C
from .. import distributed_c10d as _c10d

__all__ = ["JoinHook", "Joinable", "Join"]


class JoinHook:
    """What a joined rank does for a joinable: main_hook() once per iteration others still run,
    post_hook(is_last_joiner) once everyone has joined."""

    def main_hook(self) -> None:
        """Shadow one iteration's collectives."""

    def post_hook(self, is_last_joiner: bool) -> None:
        """Runs after all ranks joined; is_last_joiner tells whether this rank joined last."""


class _JoinConfig:
    __slots__ = ("enable", "throw_on_early_termination", "is_first_joinable")

    def __init__(self, enable, throw_on_early_termination, is_first_joinable):
        self.enable, self.throw_on_early_termination, self.is_first_joinable = (
            enable, throw_on_early_termination, is_first_joinable)

    @staticmethod
    def construct_disabled_join_config():
        return _JoinConfig(False, False, False)


class Joinable(abc.ABC):
    """A class usable inside Join: gives a join hook, the device and the process group it
    communicates on, and calls Join.notify_join_context(self) once per iteration."""

    @abc.abstractmethod
    def __init__(self):
        super().__init__()
        self._join_config = _JoinConfig.construct_disabled_join_config()

    @abc.abstractmethod
    def join_hook(self, **kwargs) -> JoinHook:
        """The hook a joined rank runs for this joinable (kwargs: Join's keyword arguments)."""

    @property
    @abc.abstractmethod
    def join_device(self):
        """The device the join all-reduces use."""

    @property
    @abc.abstractmethod
    def join_process_group(self):
        """The group the join all-reduces run on."""


class Join:
    """Context manager for uneven inputs: `with Join([model, optimizer]): for batch in my_batches: ...`.

    throw_on_early_termination=True makes every rank raise as soon as one runs out instead (for
    models whose collectives a join hook cannot shadow, such as SyncBatchNorm)."""

    def __init__(self, joinables, enable=True, throw_on_early_termination=False, **kwargs):
        if len(joinables) == 0:
            raise ValueError("The join context manager requires at least one joinable")
        self._joinables = list(joinables)
        self._join_hooks = [j.join_hook(**kwargs) for j in self._joinables]
        self._enable = enable
        self._throw_on_early_termination = throw_on_early_termination
        self._extract_dist_info()

    def _set_joinable_configs(self):
        for i, joinable in enumerate(self._joinables):
            joinable._join_config = _JoinConfig(self._enable, self._throw_on_early_termination, i == 0)

    def _extract_dist_info(self):
        group = device = None
        for joinable in self._joinables:
            if group is None:
                group = joinable.join_process_group
            elif group is not joinable.join_process_group:
                raise ValueError("Using join context manager with multiple process groups")
            if device is None:
                device = joinable.join_device
        self._process_group, self._device = group, device
        self._rank = _c10d.get_rank(group)

    def __enter__(self):
        self._set_joinable_configs()
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        if not self._enable or exc_type is not None:
            return False  # an error inside the block propagates; no joining then
        # the joined rank's count all-reduce below stands for the 1 its joinables would announce: the
        # hooks' own calls (ZeroRedundancyOptimizer.step) must not announce again
        for joinable in self._joinables:
            joinable._join_config = _JoinConfig.construct_disabled_join_config()
        rounds = 0  # rounds run for ranks still training; none: this rank joined last
        while True:
            if rounds == 1000:
                warnings.warn(f"Detected uneven input skew of greater than 1000. This means that rank {self._rank} "
                              "has at least 1000 fewer inputs than other currently-active ranks. This level of skew "
                              "could lead to performance degradation during training.", stacklevel=2)
            if self._nonjoined_count() == 0:
                break
            if self._throw_on_early_termination:
                self._notify_procs_to_terminate()
            for hook in self._join_hooks:
                hook.main_hook()
            rounds += 1
        for hook in self._join_hooks:
            hook.post_hook(rounds == 0)
        return False  # outside the block the joinables run as usual again (their configs stay disabled)

    def _nonjoined_count(self):
        count = _C._ops.zeros(1, device=self._device)
        _c10d.all_reduce(count, group=self._process_group)
        return count.item()

    def _notify_procs_to_terminate(self):
        ones = _C._ops.ones(1, device=self._device)
        _c10d.all_reduce(ones, group=self._process_group)
        raise RuntimeError(f"Rank {self._rank} exhausted all inputs.")

    @staticmethod
    def notify_join_context(joinable):
        """Called by a joinable once per iteration, before its collectives: all-reduces a 1 (the
        joined ranks all-reduce 0s); returns that async work, or None when join is off or this
        is not the first joinable. With throw_on_early_termination, raises on every rank once any
        rank has run out of inputs."""
        if not hasattr(joinable, "_join_config"):
            raise AssertionError(f"Check that the {type(joinable)} constructor calls the ``Joinable`` constructor")
        config = joinable._join_config
        if not config.is_first_joinable or not config.enable:
            return None
        device, group = joinable.join_device, joinable.join_process_group
        work = _c10d.all_reduce(_C._ops.ones(1, device=device), group=group, async_op=True)
        if config.throw_on_early_termination:
            zeros = _C._ops.zeros(1, device=device)
            _c10d.all_reduce(zeros, group=group)
            if zeros.item():
                raise RuntimeError("Detected at least one rank that exhausted inputs. Throwing across all ranks.")
        return work
