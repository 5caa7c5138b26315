"""Stochastic weight averaging and exponential moving averages of a model's weights
(ember.optim.swa_utils): AveragedModel, the averaging functions, SWALR and update_bn."""
import itertools
import math
import warnings
from copy import deepcopy

from .. import _C
from ..autograd.grad_mode import no_grad
from ..nn.modules.batchnorm import _BatchNorm
from ..nn.modules.module import Module
from .lr_scheduler import LRScheduler, _format_param

__all__ = ["AveragedModel", "update_bn", "SWALR", "get_ema_multi_avg_fn", "get_swa_multi_avg_fn", "get_ema_avg_fn",
           "get_swa_avg_fn"]


_INTEGER_ADDCDIV = (
    "Integer division with addcdiv is no longer supported, and in a future  release addcdiv will perform a true "
    "division of tensor1 and tensor2. The historic addcdiv behavior can be implemented as (input + value * "
    "torch.trunc(tensor1 / tensor2)).to(input.dtype) for integer inputs and as (input + value * tensor1 / tensor2) "
    "for float inputs. The future addcdiv behavior is just the latter implementation: (input + value * tensor1 / "
    "tensor2), for all dtypes.")


def _check_decay(decay):
    if decay < 0.0 or decay > 1.0:
        raise ValueError(f"Invalid decay value {decay} provided. Please provide a value in [0,1] range.")


def get_ema_multi_avg_fn(decay=0.999):
    """An in-place EMA over lists of tensors: ema <- decay * ema + (1 - decay) * current."""
    _check_decay(decay)

    @no_grad()
    def ema_update(ema_param_list, current_param_list, _):
        if ema_param_list[0].is_floating_point():
            for p_ema, p_model in zip(ema_param_list, current_param_list):
                p_ema.lerp_(p_model, 1 - decay)
        else:
            # lerp has no integer form: the weighted sum is rounded back by copy_
            for p_ema, p_model in zip(ema_param_list, current_param_list, strict=True):
                p_ema.copy_(p_ema * decay + p_model * (1 - decay))
    return ema_update


def get_swa_multi_avg_fn():
    """An in-place running mean over lists of tensors: avg <- avg + (current - avg) / (n + 1)."""

    @no_grad()
    def swa_update(averaged_param_list, current_param_list, num_averaged):
        # Ember has no complex dtypes: lerp covers every floating one
        if averaged_param_list[0].is_floating_point():
            weight = 1 / (num_averaged + 1)
            if isinstance(weight, _C.TensorBase):
                weight = weight.item()
            for p_avg, p_model in zip(averaged_param_list, current_param_list):
                p_avg.lerp_(p_model, weight)
        elif isinstance(num_averaged, _C.TensorBase):
            # torch's integer path divides with addcdiv, which refuses integer division
            raise RuntimeError(_INTEGER_ADDCDIV)
        else:
            for p_avg, p_model in zip(averaged_param_list, current_param_list):
                p_avg.add_(p_model - p_avg, alpha=1.0 / (num_averaged + 1))
    return swa_update


def get_ema_avg_fn(decay=0.999):
    """The EMA of one tensor, returned: decay * ema + (1 - decay) * current."""
    _check_decay(decay)

    @no_grad()
    def ema_update(ema_param, current_param, num_averaged):
        return decay * ema_param + (1 - decay) * current_param
    return ema_update


def get_swa_avg_fn():
    """The running mean of one tensor, returned: avg + (current - avg) / (n + 1)."""

    @no_grad()
    def swa_update(averaged_param, current_param, num_averaged):
        return averaged_param + (current_param - averaged_param) / (num_averaged + 1)
    return swa_update


class AveragedModel(Module):
    """A copy of ``model`` whose parameters (and buffers with use_buffers=True) hold a running average
    of the model's, updated by update_parameters(model). The first update copies the weights; later
    ones apply avg_fn (one tensor at a time), multi_avg_fn (lists, in place) or, with neither, the
    equal-weight mean. n_averaged counts the updates and is a buffer, so it is in the state_dict."""

    def __init__(self, model, device=None, avg_fn=None, multi_avg_fn=None, use_buffers=False):
        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise AssertionError("Only one of avg_fn and multi_avg_fn should be provided")
        self.module = deepcopy(model)
        if device is not None:
            self.module = self.module.to(device)
        self.register_buffer("n_averaged", _C._ops.zeros((), dtype=_C.int64))
        self.avg_fn = avg_fn
        self.multi_avg_fn = multi_avg_fn
        self.use_buffers = use_buffers

    def forward(self, *args, **kwargs):
        return self.module(*args, **kwargs)

    def update_parameters(self, model):
        """Fold the current weights of ``model`` into the average."""
        if self.use_buffers:
            mine = itertools.chain(self.module.parameters(), self.module.buffers())
            theirs = itertools.chain(model.parameters(), model.buffers())
        else:
            # self.parameters() is the copy's parameters: n_averaged is a buffer, not among them
            mine, theirs = self.parameters(), model.parameters()
        averaged, current = [], []
        first = int(self.n_averaged.item()) == 0
        for p_avg, p_model in zip(mine, theirs):
            p_avg = p_avg.detach()
            p_model = p_model.detach().to(p_avg.device)
            averaged.append(p_avg)
            current.append(p_model)
            if first:
                p_avg.copy_(p_model)
        if not first:
            if self.avg_fn is not None and self.multi_avg_fn is None:
                for p_avg, p_model in zip(averaged, current):
                    p_avg.copy_(self.avg_fn(p_avg, p_model, self.n_averaged))
            else:
                # the multi-tensor functions run on same-dtype lists, as torch groups them
                by_dtype = {}
                for p_avg, p_model in zip(averaged, current):
                    lists = by_dtype.setdefault(p_avg.dtype, ([], []))
                    lists[0].append(p_avg)
                    lists[1].append(p_model)
                for avg_list, model_list in by_dtype.values():
                    if self.multi_avg_fn is not None:
                        self.multi_avg_fn(avg_list, model_list, self.n_averaged)
                    else:
                        # torch's CPU path: the one-tensor mean, copied back (rounds integer buffers)
                        swa = get_swa_avg_fn()
                        for p_avg, p_model in zip(avg_list, model_list):
                            p_avg.copy_(swa(p_avg, p_model, self.n_averaged))
        if not self.use_buffers:
            # buffers are not averaged: they follow the source model
            for b_swa, b_model in zip(self.module.buffers(), model.buffers(), strict=True):
                b_swa.detach().copy_(b_model.detach().to(b_swa.device))
        self.n_averaged += 1


@no_grad()
def update_bn(loader, model, device=None):
    """Recompute the running statistics of every BatchNorm in ``model`` with one pass over ``loader``
    (batches are tensors or lists/tuples whose first element is the input): the statistics are reset
    and accumulated as a cumulative mean (momentum None), then the momenta and mode are restored."""
    momenta = {}
    for module in model.modules():
        if isinstance(module, _BatchNorm):
            module.reset_running_stats()
            momenta[module] = module.momentum
    if not momenta:
        return
    was_training = model.training
    model.train()
    for module in momenta:
        module.momentum = None
    for batch in loader:
        if isinstance(batch, (list, tuple)):
            batch = batch[0]
        if device is not None:
            batch = batch.to(device)
        model(batch)
    for module, momentum in momenta.items():
        module.momentum = momentum
    model.train(was_training)


class SWALR(LRScheduler):
    """Anneals each group's lr to its swa_lr over anneal_epochs steps ("cos" or "linear"), then holds
    it. It works from the current lr (chainable): the previous step's starting lr is recovered from
    the current one and the previous annealing fraction."""

    def __init__(self, optimizer, swa_lr, anneal_epochs=10, anneal_strategy="cos", last_epoch=-1):
        swa_lrs = _format_param("swa_lr", optimizer, swa_lr)
        for lr, group in zip(swa_lrs, optimizer.param_groups):
            group["swa_lr"] = lr
        if anneal_strategy not in ["cos", "linear"]:
            raise ValueError(f"anneal_strategy must be one of 'cos' or 'linear', instead got {anneal_strategy}")
        self._set_anneal_func(anneal_strategy)
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(f"anneal_epochs must be equal or greater than 0, got {anneal_epochs}")
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    @staticmethod
    def _linear_anneal(t):
        return t

    @staticmethod
    def _cosine_anneal(t):
        return (1 - math.cos(math.pi * t)) / 2

    @staticmethod
    def _get_initial_lr(lr, swa_lr, alpha):
        if alpha == 1:
            return swa_lr
        return (lr - alpha * swa_lr) / (1 - alpha)

    def _set_anneal_func(self, anneal_strategy):
        self._anneal_strategy = anneal_strategy
        self.anneal_func = self._cosine_anneal if anneal_strategy == "cos" else self._linear_anneal

    def get_lr(self):
        if not self._get_lr_called_within_step:
            warnings.warn("To get the last learning rate computed by the scheduler, please use `get_last_lr()`.",
                          UserWarning, stacklevel=2)
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        prev_alpha = self.anneal_func(max(0, min(1, (step - 1) / max(1, self.anneal_epochs))))
        prev_lrs = [self._get_initial_lr(group["lr"], group["swa_lr"], prev_alpha)
                    for group in self.optimizer.param_groups]
        alpha = self.anneal_func(max(0, min(1, step / max(1, self.anneal_epochs))))
        return [group["swa_lr"] * alpha + lr * (1 - alpha) for group, lr in zip(self.optimizer.param_groups, prev_lrs)]

    def state_dict(self):
        """Every attribute but the optimizer and the annealing function (restored from its name)."""
        return {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "anneal_func")}

    def load_state_dict(self, state_dict):
        self.__dict__.update(state_dict)
        self._set_anneal_func(self._anneal_strategy)
