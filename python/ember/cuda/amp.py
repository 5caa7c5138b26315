"""ember.cuda.amp: PyTorch's deprecated CUDA mixed-precision entry points. Without CUDA both turn
themselves off with a warning, as PyTorch's do: autocast runs the block unchanged, and GradScaler
passes losses and steps through without scaling."""
import functools
import warnings

from ..amp.grad_scaler import GradScaler as _AmpGradScaler

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


class GradScaler(_AmpGradScaler):
    """The deprecated spelling of ember.amp.GradScaler('cuda'): without CUDA it disables itself with a
    warning (scale() returns its input, step() calls optimizer.step()), as PyTorch's CPU build does."""

    def __init__(self, init_scale=2.0**16, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000,
                 enabled=True):
        warnings.warn("`ember.cuda.amp.GradScaler(args...)` is deprecated (PyTorch moved it to "
                      "`torch.amp.GradScaler('cuda', args...)`).", FutureWarning, stacklevel=2)
        super().__init__("cuda", init_scale=init_scale, growth_factor=growth_factor, backoff_factor=backoff_factor,
                         growth_interval=growth_interval, enabled=enabled)


def custom_fwd(fwd=None, *, cast_inputs=None):
    """Decorator for a custom autograd Function's forward; autocast never runs here, so it returns fwd."""
    if fwd is None:
        return functools.partial(custom_fwd, cast_inputs=cast_inputs)
    return fwd


def custom_bwd(bwd):
    """Decorator for a custom autograd Function's backward: nothing to restore without autocast."""
    return bwd
