"""Worker information. Ember's DataLoader loads in the main process (num_workers=0), so there is
never a worker: get_worker_info() returns None."""

__all__ = ["get_worker_info", "WorkerInfo"]


class WorkerInfo:
    """What a DataLoader worker process knows about itself (id, num_workers, seed, dataset)."""

    def __init__(self, **kwargs):
        for k, v in kwargs.items():
            setattr(self, k, v)
        self.__keys = tuple(kwargs.keys())

    def __repr__(self):
        items = ", ".join(f"{k}={getattr(self, k)}" for k in self.__keys)
        return f"{self.__class__.__name__}({items})"


def get_worker_info():
    """The WorkerInfo of the current DataLoader worker, or None in the main process (always, in Ember)."""
    return None
