"""ember.utils: hooks, data loading (ember.utils.data)."""
from . import hooks  # noqa: F401
from . import data  # noqa: F401
