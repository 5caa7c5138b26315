"""ember.amp (torch.amp): automatic mixed precision. autocast runs the ops of PyTorch's CPU lists in
bfloat16 (or float16) or float32 inside a region; GradScaler scales the loss so that 16-bit gradients
do not underflow, and skips the steps whose gradients overflowed."""
from .autocast_mode import _enter_autocast, _exit_autocast, autocast, custom_bwd, custom_fwd, is_autocast_available
from .grad_scaler import GradScaler

__all__ = ["autocast", "custom_bwd", "custom_fwd", "is_autocast_available", "GradScaler"]
