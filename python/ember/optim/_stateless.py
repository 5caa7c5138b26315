"""swap_in_optimizer_params_and_state: run an optimizer's step (and any other of its APIs) on other
parameter tensors and an optimizer.state_dict()-shaped state, leaving the live optimizer as it was."""
import contextlib
from collections import defaultdict

from .. import _C

__all__ = ["swap_in_optimizer_params_and_state"]

_NAME = "swap_in_optimizer_params_and_state"


def _check_state(state):
    if not isinstance(state, dict):
        raise RuntimeError(f"{_NAME} requires swapin_optim_state['state'] to be a dict mapping packed parameter ids "
                           f"to per-param state dicts, got {type(state).__name__}.")
    if any(isinstance(k, _C.TensorBase) for k in state):
        raise RuntimeError(f"{_NAME} requires optimizer.state_dict()-style state keyed by packed parameter ids.")
    if any(isinstance(k, int) and not isinstance(v, dict) for k, v in state.items()):
        raise RuntimeError(f"{_NAME} requires per-parameter optimizer state entries to be dictionaries.")
    return state


def _check_groups(optimizer, groups):
    if not isinstance(groups, list):
        raise RuntimeError(f"{_NAME} requires swapin_optim_state['param_groups'] to be a list of param-group dicts, "
                           f"got {type(groups).__name__}.")
    if len(optimizer.param_groups) != len(groups):
        raise RuntimeError("swapin_optim_state has a different number of parameter groups than the live optimizer.")
    return groups


def _group_ids(idx, live, swapin):
    """The packed parameter ids of one swap-in group, after checking it mirrors the live group."""
    if not isinstance(swapin, dict):
        raise RuntimeError(f"{_NAME} requires each optimizer param group to be a dictionary.")
    ids = swapin.get("params")
    if not isinstance(ids, list) or not all(isinstance(i, int) for i in ids):
        raise RuntimeError(f"{_NAME} requires optimizer.state_dict()-style param_groups[*]['params'] entries keyed "
                           "by packed parameter ids.")
    if len(live["params"]) != len(ids):
        raise RuntimeError(f"swapin_optim_state param group {idx} has a different number of params than the live "
                           "optimizer param group.")
    swapin_only = [k for k in swapin if k not in live]
    live_only = [k for k in live if k not in swapin]
    if swapin_only or live_only:
        raise RuntimeError(f"{_NAME} requires optimizer.state_dict()-style param group keys to exactly match the live "
                           f"optimizer group keys for group {idx}. Keys only in swap-in: {swapin_only}. Keys only in "
                           f"live: {live_only}.")
    return ids


@contextlib.contextmanager
def swap_in_optimizer_params_and_state(optimizer, swapin_parameters, swapin_optim_state):
    """Within the block the optimizer's groups hold the tensors of ``swapin_parameters`` (a dict, in
    the optimizer's parameter order) and the hyper-parameters and per-parameter state of
    ``swapin_optim_state`` (an optimizer.state_dict()). In-place updates of the state's tensors reach
    the caller's dict; on exit the groups and state are restored."""
    if not optimizer.state:
        raise RuntimeError(f"{_NAME} requires initialized optimizer state.")
    if not isinstance(swapin_optim_state, dict):
        raise RuntimeError(f"{_NAME} requires a DCP-style optimizer state_dict.")
    state = _check_state(swapin_optim_state.get("state"))
    groups = _check_groups(optimizer, swapin_optim_state.get("param_groups"))
    tensors = list(swapin_parameters.values())
    plan, seen, offset = [], set(), 0
    for idx, (live, swapin) in enumerate(zip(optimizer.param_groups, groups)):
        ids = _group_ids(idx, live, swapin)
        seen.update(ids)
        if offset + len(ids) > len(tensors):
            raise RuntimeError(f"{_NAME} requires the explicit parameter state to match optimizer.param_groups "
                               "ordering.")
        plan.append((live, swapin, ids, tensors[offset:offset + len(ids)]))
        offset += len(ids)
    extra = [k for k in state if k not in seen]
    if extra:
        raise RuntimeError(f"{_NAME} requires swapin_optim_state['state'] to be keyed only by packed parameter ids "
                           f"from param_groups[*]['params']; got extra keys {extra!r}.")

    live_state = optimizer.state
    # shallow copies: restoring them brings back the very same params lists
    snapshots = [dict(g) for g in optimizer.param_groups]
    try:
        swapped = defaultdict(dict)
        for live, swapin, ids, params in plan:
            live["params"] = params
            live.update((k, v) for k, v in swapin.items() if k != "params")
            for p, pid in zip(params, ids):
                # a copy of the per-param dict: tensors updated in place are shared, new entries stay here
                swapped[p] = dict(state.get(pid, {}))
        optimizer.state = swapped
        yield
    finally:
        for group, snapshot in zip(optimizer.param_groups, snapshots):
            group.clear()
            group.update(snapshot)
        optimizer.state = live_state
