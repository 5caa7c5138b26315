"""Helpers of ember.utils.data: collation, fetching and worker info."""
from . import collate, fetch, worker  # noqa: F401
