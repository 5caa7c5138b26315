"""ember.cpu.amp (torch.cpu.amp): the deprecated CPU spellings of torch.amp.autocast('cpu', ...) and
torch.amp.GradScaler('cpu', ...); each warns once per construction, then behaves as the new one."""
import warnings

from .. import amp as _amp
from .._C import bfloat16

__all__ = ["autocast", "GradScaler"]


class autocast(_amp.autocast):
    """autocast(enabled=True, dtype=torch.bfloat16, cache_enabled=True): autocast('cpu', ...)."""

    def __init__(self, enabled=True, dtype=None, cache_enabled=True):
        warnings.warn("`torch.cpu.amp.autocast(args...)` is deprecated. Please use "
                      "`torch.amp.autocast('cpu', args...)` instead.", FutureWarning, stacklevel=2)
        super().__init__("cpu", enabled=enabled, dtype=bfloat16 if dtype is None else dtype,
                         cache_enabled=cache_enabled)


class GradScaler(_amp.GradScaler):
    """GradScaler(init_scale=65536.0, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000,
    enabled=True): GradScaler('cpu', ...)."""

    def __init__(self, init_scale=2.0**16, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000,
                 enabled=True):
        warnings.warn("`torch.cpu.amp.GradScaler(args...)` is deprecated. Please use "
                      "`torch.amp.GradScaler('cpu', args...)` instead.", FutureWarning, stacklevel=2)
        super().__init__("cpu", init_scale=init_scale, growth_factor=growth_factor,
                         backoff_factor=backoff_factor, growth_interval=growth_interval, enabled=enabled)
