"""Optimizer: the base class of ember.optim's algorithms.

Parameters are organised in param_groups (dicts holding "params" and the group's options; missing
options come from `defaults`); per-parameter state lives in `state`, keyed by the parameter. The
state_dict layout is PyTorch's (parameters numbered by int in group order), so optimizer state
dicts interchange. Subclasses implement `step`; it runs under no_grad with the step pre/post
hooks around it.
"""
import functools
import itertools
import warnings
from collections import OrderedDict, defaultdict
from copy import deepcopy

from .. import _C
from ..autograd.grad_mode import enable_grad, no_grad
from ..utils.hooks import add_hook

__all__ = ["Optimizer", "required", "register_optimizer_step_pre_hook", "register_optimizer_step_post_hook"]


class _RequiredParameter:
    """Singleton marking a hyper-parameter without default (lr of SGD in old PyTorch)."""

    def __repr__(self):
        return "<required parameter>"


required = _RequiredParameter()

_global_optimizer_pre_hooks = OrderedDict()
_global_optimizer_post_hooks = OrderedDict()


def register_optimizer_step_pre_hook(hook):
    """Register a hook that runs before every optimizer's step.

    hook(optimizer, args, kwargs) -> None or (new_args, new_kwargs)."""
    return add_hook(_global_optimizer_pre_hooks, hook)


def register_optimizer_step_post_hook(hook):
    """Register a hook that runs after every optimizer's step.

    hook(optimizer, args, kwargs) -> None."""
    return add_hook(_global_optimizer_post_hooks, hook)


def _hooked_step(step):
    """Wrap a subclass's step: run the step hooks around it, the body under no_grad."""
    @functools.wraps(step)
    def wrapper(self, *args, **kwargs):
        for hook in itertools.chain(_global_optimizer_pre_hooks.values(), self._optimizer_step_pre_hooks.values()):
            result = hook(self, args, kwargs)
            if result is not None:
                if isinstance(result, tuple) and len(result) == 2:
                    args, kwargs = result
                else:
                    raise RuntimeError(f"{step} must return None or a tuple of (new_args, new_kwargs), but got "
                                       f"{result}.")
        with no_grad():
            out = step(self, *args, **kwargs)
        for hook in itertools.chain(self._optimizer_step_post_hooks.values(), _global_optimizer_post_hooks.values()):
            hook(self, args, kwargs)
        return out
    wrapper._ember_hooked = True
    return wrapper


def _typename(obj):
    if isinstance(obj, _C.TensorBase):
        return obj.type()
    module = type(obj).__module__
    return type(obj).__qualname__ if module == "builtins" else module + "." + type(obj).__qualname__


class Optimizer:
    """Base class of optimizers. params: an iterable of tensors, of (name, tensor) pairs, or of
    dicts (param groups); defaults: the options a group takes when it does not set them."""

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        step = cls.__dict__.get("step")
        if step is not None and not getattr(step, "_ember_hooked", False):
            cls.step = _hooked_step(step)

    def __init__(self, params, defaults):
        self.defaults = defaults
        self._optimizer_step_pre_hooks = OrderedDict()
        self._optimizer_step_post_hooks = OrderedDict()
        self._optimizer_state_dict_pre_hooks = OrderedDict()
        self._optimizer_state_dict_post_hooks = OrderedDict()
        self._optimizer_load_state_dict_pre_hooks = OrderedDict()
        self._optimizer_load_state_dict_post_hooks = OrderedDict()
        if isinstance(params, _C.TensorBase):
            raise TypeError("params argument given to the optimizer should be an iterable of Tensors or dicts, but "
                            "got " + _typename(params))
        self.state = defaultdict(dict)
        self.param_groups = []
        param_groups = list(params)
        if len(param_groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]
        for group in param_groups:
            self.add_param_group(group)

    def __getstate__(self):
        return {"defaults": self.defaults, "state": self.state, "param_groups": self.param_groups}

    def __setstate__(self, state):
        self.__dict__.update(state)
        for name in ("_optimizer_step_pre_hooks", "_optimizer_step_post_hooks", "_optimizer_state_dict_pre_hooks",
                     "_optimizer_state_dict_post_hooks", "_optimizer_load_state_dict_pre_hooks",
                     "_optimizer_load_state_dict_post_hooks"):
            if name not in self.__dict__:
                setattr(self, name, OrderedDict())

    def __repr__(self):
        s = self.__class__.__name__ + " ("
        for i, group in enumerate(self.param_groups):
            s += f"\nParameter Group {i}\n"
            for key in sorted(group.keys()):
                if key != "params":
                    s += f"    {key}: {group[key]}\n"
        return s + ")"

    # ------------------------------------------------------------ groups
    def add_param_group(self, param_group):
        """Add a group of parameters (a dict with "params" and optional per-group options)."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group).__name__}")
        params = param_group["params"]
        if isinstance(params, _C.TensorBase):
            param_group["params"] = [params]
        elif isinstance(params, set):
            raise TypeError("optimizer parameters need to be organized in ordered collections, but the ordering of "
                            "tensors in sets will change between runs. Please use a list instead.")
        else:
            param_group["params"] = list(params)
        tensors, names = [], []
        for p in param_group["params"]:
            if isinstance(p, tuple):
                names.append(p[0])
                tensors.append(p[1])
            else:
                tensors.append(p)
        param_group["params"] = tensors
        if names:
            if len(names) != len(tensors):
                raise ValueError("all optimizer params should be with/without names. Some param names are missing")
            param_group["param_names"] = names
        for p in tensors:
            if not isinstance(p, _C.TensorBase):
                raise TypeError("optimizer can only optimize Tensors, but one of the params is " + _typename(p))
            if not self.defaults.get("differentiable", None) and not (p.is_leaf or p.retains_grad):
                raise ValueError("can't optimize a non-leaf Tensor")
        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError(f"parameter group didn't specify a value of required optimization parameter {name}")
            param_group.setdefault(name, default)
        if len(tensors) != len({id(p) for p in tensors}):
            warnings.warn("optimizer contains a parameter group with duplicate parameters; in future, this will "
                          "cause an error; see github.com/pytorch/pytorch/issues/40967 for more information",
                          stacklevel=3)
        seen = set()
        for group in self.param_groups:
            seen.update(id(p) for p in group["params"])
            if ("param_names" in param_group) != ("param_names" in group):
                current = "with names" if "param_names" in param_group else "without names"
                raise ValueError("all optimizer param groups should be with/without names. "
                                 f"cannot add param group {current} to the optimizer")
        if not seen.isdisjoint(id(p) for p in tensors):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)

    # ------------------------------------------------------------ gradients
    def zero_grad(self, set_to_none=True):
        """Reset the gradients of all optimized parameters: to None (default) or to zero."""
        for group in self.param_groups:
            for p in group["params"]:
                g = p.grad
                if g is not None:
                    if set_to_none:
                        p.grad = None
                    else:
                        if g.grad_fn is not None:
                            g.detach_()
                        else:
                            g.requires_grad_(False)
                        g.zero_()

    def step(self, closure=None):
        raise NotImplementedError

    @staticmethod
    def _eval_closure(closure):
        if closure is None:
            return None
        with enable_grad():
            return closure()

    # ------------------------------------------------------------ state dict
    def state_dict(self):
        """{"state": {param index: state}, "param_groups": [group options + "params": [indices]]}."""
        for hook in self._optimizer_state_dict_pre_hooks.values():
            hook(self)
        mapping = {}
        start = 0

        def pack_group(group):
            nonlocal start
            packed = {k: v for k, v in group.items() if k != "params"}
            for i, p in enumerate(group["params"], start):
                mapping.setdefault(id(p), i)
            packed["params"] = [mapping[id(p)] for p in group["params"]]
            start += len(packed["params"])
            return packed

        groups = [pack_group(g) for g in self.param_groups]
        packed_state = {(mapping[id(k)] if isinstance(k, _C.TensorBase) else k): v for k, v in self.state.items()}
        sd = {"state": packed_state, "param_groups": groups}
        for hook in self._optimizer_state_dict_post_hooks.values():
            r = hook(self, sd)
            if r is not None:
                sd = r
        return sd

    @staticmethod
    def _cast_state_value(param, value, key=None, fused_or_capturable=False):
        if key == "step":
            return value.to(_C.float32) if fused_or_capturable else value
        if param.is_floating_point():
            return value.to(param.dtype)
        return value

    def load_state_dict(self, state_dict):
        """Load a state_dict made by state_dict() (here or by PyTorch): groups must match in number
        and sizes; floating state tensors are cast to their parameter's dtype."""
        state_dict = state_dict.copy()
        for hook in self._optimizer_load_state_dict_pre_hooks.values():
            r = hook(self, state_dict)
            if r is not None:
                state_dict = r
        groups = self.param_groups
        saved_groups = deepcopy(state_dict["param_groups"])
        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"]) for g, s in zip(groups, saved_groups)):
            raise ValueError("loaded state dict contains a parameter group that doesn't match the size of "
                             "optimizer's group")
        id_map = dict(zip(itertools.chain.from_iterable(g["params"] for g in saved_groups),
                          itertools.chain.from_iterable(g["params"] for g in groups)))
        group_of = {}
        for g in state_dict["param_groups"]:
            for i in g["params"]:
                group_of[i] = g

        def cast(param, value, pid, key=None):
            if isinstance(value, _C.TensorBase):
                g = group_of.get(pid, {})
                return Optimizer._cast_state_value(param, value, key, bool(g.get("fused")) or
                                                   bool(g.get("capturable")))
            if isinstance(value, dict):
                return {k: cast(param, v, pid, k) for k, v in value.items()}
            if isinstance(value, (list, tuple)):
                return type(value)(cast(param, v, pid) for v in value)
            return value

        state = defaultdict(dict)
        for k, v in state_dict["state"].items():
            if k in id_map:
                param = id_map[k]
                state[param] = cast(param, v, k)
            else:
                state[k] = v

        def update_group(group, new_group):
            new_group["params"] = group["params"]
            if "param_names" in group and "param_names" not in new_group:
                new_group["param_names"] = group["param_names"]
            return new_group

        self.__setstate__({"state": state, "param_groups": [update_group(g, s) for g, s in zip(groups, saved_groups)]})
        for hook in self._optimizer_load_state_dict_post_hooks.values():
            hook(self)

    # ------------------------------------------------------------ hooks
    def _register(self, table, hook, prepend=False):
        handle = add_hook(table, hook)
        if prepend:
            table.move_to_end(handle.id, last=False)
        return handle

    def register_step_pre_hook(self, hook):
        """hook(optimizer, args, kwargs) -> None or (new_args, new_kwargs), before step."""
        return self._register(self._optimizer_step_pre_hooks, hook)

    def register_step_post_hook(self, hook):
        """hook(optimizer, args, kwargs) -> None, after step."""
        return self._register(self._optimizer_step_post_hooks, hook)

    def register_state_dict_pre_hook(self, hook, prepend=False):
        return self._register(self._optimizer_state_dict_pre_hooks, hook, prepend)

    def register_state_dict_post_hook(self, hook, prepend=False):
        return self._register(self._optimizer_state_dict_post_hooks, hook, prepend)

    def register_load_state_dict_pre_hook(self, hook, prepend=False):
        return self._register(self._optimizer_load_state_dict_pre_hooks, hook, prepend)

    def register_load_state_dict_post_hook(self, hook, prepend=False):
        return self._register(self._optimizer_load_state_dict_post_hooks, hook, prepend)


def _scalar_step():
    """A fresh step counter: a 0-d float tensor (float64 when that is the default dtype), as torch keeps it."""
    dtype = _C.float64 if _C.get_default_dtype() is _C.float64 else _C.float32
    return _C._ops.zeros((), dtype=dtype, device="cpu")  # host-side bookkeeping, whatever the default device


def _init_state(state, params, *zero_buffers):
    """The per-parameter states, created on first use as a step counter plus zeroed buffers."""
    for p in params:
        st = state[p]
        if len(st) == 0:
            st["step"] = _scalar_step()
            for name in zero_buffers:
                st[name] = _C._ops.zeros_like(p)
    return [state[p] for p in params]


def _setdefault_groups(optimizer, **defaults):
    """Give every param group the options it lacks (one pickled before they existed), in order."""
    for group in optimizer.param_groups:
        for name, value in defaults.items():
            group.setdefault(name, value)


def _check_lr(lr):
    if isinstance(lr, _C.TensorBase) and lr.numel() != 1:
        raise ValueError("Tensor lr must be 1-element")
    if not 0.0 <= lr:
        raise ValueError(f"Invalid learning rate: {lr}")


def _check_nonnegative(value, name):
    """The constructors' check that a hyper-parameter is >= 0, with torch's message."""
    if not 0.0 <= value:
        raise ValueError(f"Invalid {name} value: {value}")


def _check_betas(betas):
    if not 0.0 <= betas[0] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
    if not 0.0 <= betas[1] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")


def _float(x):
    return float(x.item()) if isinstance(x, _C.TensorBase) else float(x)


# optimizers whose step takes sparse COO gradients (embedding(sparse=True)); the others raise torch's error
_SPARSE_GRAD_OK = {"SGD", "Adagrad"}


def _params_with_grad(group, name):
    """(params, grads) of the group's parameters that have a gradient."""
    params, grads = [], []
    for p in group["params"]:
        g = p.grad
        if g is not None:
            if g.is_sparse and name not in _SPARSE_GRAD_OK:
                if name in ("Adam", "AdamW"):  # AdamW is Adam with decoupled weight decay, as in torch
                    raise RuntimeError("Adam does not support sparse gradients, please consider SparseAdam instead")
                raise RuntimeError(f"{name} does not support sparse gradients")
            params.append(p)
            grads.append(g)
    return params, grads


def _split_sparse(params, grads):
    """((params, grads) with dense gradients, (params, grads) with sparse ones)."""
    dense = [(p, g) for p, g in zip(params, grads) if not g.is_sparse]
    sparse = [(p, g) for p, g in zip(params, grads) if g.is_sparse]
    return ([p for p, _ in dense], [g for _, g in dense]), sparse


def _sparse_rows(grad):
    """(index tuple, values) of a coalesced sparse gradient: grad's entries are param[index] += values."""
    grad = grad.coalesce()
    return tuple(grad._indices()), grad._values()
