"""ember.utils: hooks, data loading (ember.utils.data), activation checkpointing (utils.checkpoint)."""
from . import hooks  # noqa: F401
from . import data  # noqa: F401
from . import checkpoint  # noqa: F401
