"""ember.cuda.amp: PyTorch's deprecated CUDA mixed-precision entry points. Without CUDA both turn
themselves off with a warning, as PyTorch's do: autocast runs the block unchanged, and GradScaler
passes losses and steps through without scaling."""
import functools
import warnings

__all__ = ["autocast", "GradScaler", "custom_fwd", "custom_bwd"]


class autocast:
    """Context manager and decorator; disabled (a no-op) without CUDA."""

    def __init__(self, enabled=True, dtype=None, cache_enabled=True):
        warnings.warn("`ember.cuda.amp.autocast(args...)` is deprecated (PyTorch moved it to "
                      "`torch.amp.autocast('cuda', args...)`).", FutureWarning, stacklevel=2)
        if enabled:
            warnings.warn("CUDA is not available. Disabling autocast.", UserWarning, stacklevel=2)
        self._enabled = False
        self.fast_dtype = dtype

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def __call__(self, func):
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with self:
                return func(*args, **kwargs)
        return wrapper


class GradScaler:
    """Loss scaling for float16 training; without CUDA it is disabled: scale() returns its input,
    step() calls optimizer.step(), update() and unscale_() do nothing."""

    def __init__(self, init_scale=2.0**16, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000,
                 enabled=True):
        warnings.warn("`ember.cuda.amp.GradScaler(args...)` is deprecated (PyTorch moved it to "
                      "`torch.amp.GradScaler('cuda', args...)`).", FutureWarning, stacklevel=2)
        if enabled:
            warnings.warn("ember.cuda.amp.GradScaler is enabled, but CUDA is not available.  Disabling.",
                          UserWarning, stacklevel=2)
        self._enabled = False
        self._init_scale, self._growth_factor = init_scale, growth_factor
        self._backoff_factor, self._growth_interval = backoff_factor, growth_interval

    def is_enabled(self):
        return self._enabled

    def scale(self, outputs):
        return outputs

    def unscale_(self, optimizer):
        pass

    def step(self, optimizer, *args, **kwargs):
        return optimizer.step(*args, **kwargs)

    def update(self, new_scale=None):
        pass

    def get_scale(self):
        return 1.0

    def get_growth_factor(self):
        return self._growth_factor

    def set_growth_factor(self, new_factor):
        self._growth_factor = new_factor

    def get_backoff_factor(self):
        return self._backoff_factor

    def set_backoff_factor(self, new_factor):
        self._backoff_factor = new_factor

    def get_growth_interval(self):
        return self._growth_interval

    def set_growth_interval(self, new_interval):
        self._growth_interval = new_interval

    def state_dict(self):
        return {}

    def load_state_dict(self, state_dict):
        pass  # a disabled scaler has no state to restore (PyTorch's ignores the dict too)


def custom_fwd(fwd=None, *, cast_inputs=None):
    """Decorator for a custom autograd Function's forward; autocast never runs here, so it returns fwd."""
    if fwd is None:
        return functools.partial(custom_fwd, cast_inputs=cast_inputs)
    return fwd


def custom_bwd(bwd):
    """Decorator for a custom autograd Function's backward: nothing to restore without autocast."""
    return bwd
