"""torch.signal: signal-processing helpers. Only the window functions (ember.signal.windows), as in PyTorch."""
from . import windows  # noqa: F401

__all__ = ["windows"]
