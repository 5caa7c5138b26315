"""Averaging parameters across a process group (one all-reduce of all of them, flattened)."""
import itertools

from .... import _C
from ....nn.parameter import Parameter
from ... import distributed_c10d as _c10d

__all__ = ["average_parameters", "get_params_to_average", "average_parameters_or_parameter_groups"]


def average_parameters(params, process_group):
    """Replace every parameter by its mean over the group: one all-reduce of them all flattened into one
    buffer (extra memory of their size); parameters keep their dtypes."""
    group = process_group if process_group is not None else _c10d.group.WORLD
    if _c10d._non_member(group):
        return
    first, second = itertools.tee(params)
    flat = _C._ops.cat([p.data.reshape(-1) for p in first])
    flat /= _c10d.get_world_size(group)
    _c10d.all_reduce(flat, group=group)
    at = 0
    for p in second:
        p.data = flat[at:at + p.numel()].view_as(p).type_as(p)
        at += p.numel()


def get_params_to_average(params):
    """The parameters that have a gradient, from a model's parameters or an optimizer's param groups."""
    out = []
    for param in params:
        if isinstance(param, Parameter):
            if param.grad is not None:
                out.append(param)
        elif isinstance(param, dict):
            out.extend(p for p in param["params"] if p.grad is not None)
        else:
            raise NotImplementedError(f"Parameter input of type {type(param)} is not supported")
    return out


def average_parameters_or_parameter_groups(params, process_group):
    """Average a model's parameters or an optimizer's param groups (those with a gradient) over the group."""
    average_parameters(iter(get_params_to_average(params)), process_group)
