"""torch.autocast: a context manager and decorator that runs a region in mixed precision. On the CPU,
the ops of PyTorch's CPU lists cast their floating inputs when they run (ops.yaml's `autocast:` key):
matmuls and convolutions to the autocast dtype (bfloat16 unless told), losses and some reductions to
float32, cat/stack/index_copy to the widest input type. custom_fwd/custom_bwd carry the state into
custom autograd Functions."""
import collections.abc
import functools
import warnings

from .. import _C
from .._C import bfloat16, float16, float64
from .._tensor import Tensor
from . import _state

__all__ = ["autocast", "is_autocast_available", "custom_fwd", "custom_bwd"]

is_autocast_available = _state.is_autocast_available


def _supported_dtypes():
    return [bfloat16, float16]


class autocast:
    """autocast(device_type, dtype=None, enabled=True, cache_enabled=None): inside the region, the
    autocast ops of `device_type` run in `dtype` (default: get_autocast_dtype(device_type)).
    Nested regions (enabled=False included) restore the outer state on exit."""

    def __init__(self, device_type, dtype=None, enabled=True, cache_enabled=None):
        if not isinstance(device_type, str):
            raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
        self.fast_dtype = _state.get_autocast_dtype(device_type) if dtype is None else dtype
        self.device = device_type
        if not is_autocast_available(self.device):
            raise RuntimeError(f"User specified an unsupported autocast device_type '{self.device}'")
        self.custom_backend_name = "privateuseone"
        self._cache_enabled = _state.is_autocast_cache_enabled() if cache_enabled is None else cache_enabled
        if enabled:
            if self.device == "cuda" and not _C._cuda_is_available():
                # like PyTorch without a GPU: the region runs unchanged
                warnings.warn("CUDA is not available or torch_xla is imported. Disabling autocast.", stacklevel=2)
                enabled = False
            elif self.device == "cuda":
                if self.fast_dtype not in (float16, bfloat16):
                    warnings.warn("In CUDA autocast, but the target dtype is not supported. Disabling autocast.\n"
                                  "CUDA Autocast only supports dtypes of torch.float16, torch.bfloat16 currently.",
                                  stacklevel=2)
                    enabled = False
            elif self.fast_dtype not in _supported_dtypes():
                name = self.device.upper()
                warnings.warn(f"In {name} autocast, but the target dtype is not supported. Disabling autocast.\n"
                              f"{name} Autocast only supports dtypes of "
                              + ", ".join(map(str, _supported_dtypes())) + " currently.", stacklevel=2)
                enabled = False
        self._enabled = enabled

    def __enter__(self):
        self.prev_cache_enabled = _state.is_autocast_cache_enabled()
        self.prev = _state.is_autocast_enabled(self.device)
        self.prev_fastdtype = _state.get_autocast_dtype(self.device)
        _state.set_autocast_enabled(self.device, bool(self._enabled))
        _state.set_autocast_dtype(self.device, self.fast_dtype)
        _state.autocast_increment_nesting()
        _state.set_autocast_cache_enabled(bool(self._cache_enabled))
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        # the cached weight casts live until the thread leaves its outermost region
        if _state.autocast_decrement_nesting() == 0:
            _state.clear_autocast_cache()
        _state.set_autocast_enabled(self.device, self.prev)
        _state.set_autocast_dtype(self.device, self.prev_fastdtype)
        _state.set_autocast_cache_enabled(self.prev_cache_enabled)
        return False

    def __call__(self, func):
        if not callable(func):
            raise TypeError(
                f"autocast()(func) requires a callable, but got {type(func).__name__}. "
                f"Did you mean to use autocast as a context manager? For example:\n"
                f"    with torch.autocast(device_type=...):\n"
                f"        output = model(input)")

        @functools.wraps(func)
        def decorate_autocast(*args, **kwargs):
            with self:
                return func(*args, **kwargs)
        return decorate_autocast


class _UnmanagedAutocast(autocast):
    """An autocast entered by _enter_autocast rather than by a with statement."""


def _enter_autocast(*vals):
    mode = _UnmanagedAutocast(*vals)
    mode.__enter__()
    return mode


def _exit_autocast(mode):
    mode.__exit__(None, None, None)


def _cast(value, device_type, dtype):
    """Casts the floating tensors (float64 excepted) of `device_type` found in nested containers."""
    if isinstance(value, Tensor):
        eligible = value.is_floating_point() and value.device.type == device_type and value.dtype is not float64
        return value.to(dtype) if eligible else value
    if isinstance(value, (str, bytes)) or type(value).__module__ == "numpy":
        return value
    if isinstance(value, collections.abc.Mapping):
        return {_cast(k, device_type, dtype): _cast(v, device_type, dtype) for k, v in value.items()}
    if isinstance(value, collections.abc.Iterable):
        items = (_cast(v, device_type, dtype) for v in value)
        return type(value)(items) if isinstance(value, (list, tuple)) else items
    return value


def custom_fwd(fwd=None, *, device_type, cast_inputs=None):
    """Decorates a custom autograd Function's forward. With cast_inputs, inside an enabled autocast
    region the floating tensor arguments are cast to it and forward runs with autocast off;
    without, forward runs under the current state, which custom_bwd restores for backward."""
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)

    @functools.wraps(fwd)
    def decorate_fwd(*args, **kwargs):
        args[0]._dtype = _state.get_autocast_dtype(device_type)
        if cast_inputs is None:
            args[0]._fwd_used_autocast = _state.is_autocast_enabled(device_type)
            return fwd(*args, **kwargs)
        args[0]._fwd_used_autocast = False
        if not _state.is_autocast_enabled(device_type):
            return fwd(*args, **kwargs)
        with autocast(device_type=device_type, enabled=False):
            return fwd(*_cast(args, device_type, cast_inputs), **_cast(kwargs, device_type, cast_inputs))
    return decorate_fwd


def custom_bwd(bwd=None, *, device_type):
    """Decorates a custom autograd Function's backward: it runs under forward's autocast state."""
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)

    @functools.wraps(bwd)
    def decorate_bwd(*args, **kwargs):
        with autocast(device_type=device_type, enabled=args[0]._fwd_used_autocast, dtype=args[0]._dtype):
            return bwd(*args, **kwargs)
    return decorate_bwd
