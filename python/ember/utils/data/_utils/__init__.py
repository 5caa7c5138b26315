"""Helpers of ember.utils.data: collation, fetching and worker info."""
from . import collate, fetch, pin_memory, worker  # noqa: F401
