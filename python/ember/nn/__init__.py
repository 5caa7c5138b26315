"""ember.nn: neural networks. For now only the functional interface (ember.nn.functional)."""
from . import functional  # noqa: F401
