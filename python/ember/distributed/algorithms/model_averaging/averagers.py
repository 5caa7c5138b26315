"""Model averagers: ModelAverager (the interface) and PeriodicModelAverager (every `period` steps after a
warm-up), as torch.distributed.algorithms.model_averaging.averagers."""
import warnings
from abc import ABC, abstractmethod

from ... import distributed_c10d as _c10d
from . import utils

__all__ = ["ModelAverager", "PeriodicModelAverager"]


class ModelAverager(ABC):
    """Base class of model averagers: a process group (default: the world) and a step counter."""

    def __init__(self, process_group=None):
        self.process_group = process_group if process_group is not None else _c10d._get_default_group()
        self.step = 0

    @abstractmethod
    def average_parameters(self, params):
        """Average `params` across the group (when the averager's schedule says so)."""
        raise NotImplementedError


class PeriodicModelAverager(ModelAverager):
    """Averages parameters across the group every `period` steps once `warmup_steps` steps have passed
    (post-local SGD: call average_parameters after each optimizer step)."""

    def __init__(self, period, warmup_steps=0, process_group=None):
        super().__init__(process_group)
        if warmup_steps < 0:
            raise ValueError("Arg ``warmup_steps`` must be a non-negative number.")
        self.warmup_steps = warmup_steps
        if period < 1:
            raise ValueError("Arg ``period`` must be a positive value.")
        if period == 1:
            warnings.warn("When period is 1, no need to use model averaging because the communication cost of "
                          "all-reducing parameters will be no less than the cost of all-reducing gradients by "
                          "DistributedDataParallel in the backward pass. Therefore, only DistributedDataParallel "
                          "should be used for this case.", stacklevel=2)
        self.period = period

    def average_parameters(self, params):
        """Average the parameters (or optimizer param groups) that have gradients if this step is on the
        schedule; counts the step either way."""
        if self.step >= self.warmup_steps and (self.step - self.warmup_steps) % self.period == 0:
            utils.average_parameters_or_parameter_groups(params, self.process_group)
        self.step += 1
