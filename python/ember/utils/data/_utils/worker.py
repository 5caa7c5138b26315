"""DataLoader worker processes: the loop each worker runs, its WorkerInfo, how it is seeded, and
the wrapper that carries an exception (with its traceback) back to the main process."""
import os
import queue
import random
import sys
import traceback

__all__ = ["get_worker_info", "WorkerInfo", "ExceptionWrapper"]

# how often a waiting worker (or the main process) looks whether its peer is still alive
MP_STATUS_CHECK_INTERVAL = 1.0
# how often an idle worker checks for shutdown: short, so shutting down never waits on it
_WORKER_POLL_INTERVAL = 0.1

_worker_info = None


class WorkerInfo:
    """What a DataLoader worker process knows about itself (id, num_workers, seed, dataset)."""

    __initialized = False

    def __init__(self, **kwargs):
        for k, v in kwargs.items():
            setattr(self, k, v)
        self.__keys = tuple(kwargs.keys())
        self.__initialized = True

    def __setattr__(self, key, val):
        if self.__initialized:
            raise RuntimeError(f"Cannot assign attributes to {self.__class__.__name__} objects")
        return super().__setattr__(key, val)

    def __repr__(self):
        items = ", ".join(f"{k}={getattr(self, k)}" for k in self.__keys)
        return f"{self.__class__.__name__}({items})"


def get_worker_info():
    """In a DataLoader worker: its WorkerInfo (id, num_workers, seed, dataset, the worker's own copy).
    In the main process: None. IterableDatasets use it to give each worker its own share."""
    return _worker_info


class ExceptionWrapper:
    """An exception caught in a worker: its type and the formatted traceback, picklable."""

    def __init__(self, exc_info=None, where="in background"):
        exc_info = exc_info or sys.exc_info()
        self.exc_type = exc_info[0]
        self.exc_msg = "".join(traceback.format_exception(*exc_info))
        self.where = where

    def reraise(self):
        msg = f"Caught {self.exc_type.__name__} {self.where}.\nOriginal {self.exc_msg}"
        if self.exc_type is KeyError:
            msg = _KeyErrorMessage(msg)  # KeyError would repr() the message, escaping its newlines
        try:
            exception = self.exc_type(msg)
        except Exception:
            raise RuntimeError(msg) from None  # the type needs other constructor arguments
        raise exception


class _KeyErrorMessage(str):
    def __repr__(self):
        return self


class _IterableDatasetStopIteration:
    """A worker's iterable dataset is exhausted."""

    def __init__(self, worker_id):
        self.worker_id = worker_id


class _ResumeIteration:
    """Sent to persistent workers at the start of each epoch after the first."""


def _numpy_seed(base_seed, worker_id):
    # NumPy's SeedSequence over (worker_id, base_seed split into 32-bit words), four words out:
    # the same seeds PyTorch gives np.random in its workers
    import numpy as np
    mask = 0xFFFFFFFF
    return np.random.SeedSequence([worker_id, base_seed & mask, base_seed >> 32, 0]).generate_state(4)


def _seed_worker(base_seed, worker_id):
    from .... import _C
    seed = base_seed + worker_id
    random.seed(seed)
    _C.default_generator.manual_seed(seed)
    try:
        import numpy as np
    except ImportError:
        return seed
    np.random.seed(_numpy_seed(base_seed, worker_id))
    return seed


def _pickle_result(data, worker_id):
    # pickled here rather than in the queue's feeder thread, where a failure would only be printed
    # and the main process would wait for the batch forever
    from multiprocessing.reduction import ForkingPickler
    try:
        return bytes(ForkingPickler.dumps(data))
    except Exception:
        return bytes(ForkingPickler.dumps(ExceptionWrapper(where=f"in DataLoader worker process {worker_id}")))


def _worker_loop(dataset_kind, dataset, index_queue, data_queue, done_event, auto_collation, collate_fn,
                 drop_last, base_seed, init_fn, worker_id, num_workers, parent_pid):
    global _worker_info
    from .... import _C
    from .fetch import _IterableDatasetFetcher, _MapDatasetFetcher
    try:
        _C.set_num_threads(1)  # workers run side by side: one thread each, as in PyTorch
        seed = _seed_worker(base_seed, worker_id)
        _worker_info = WorkerInfo(id=worker_id, num_workers=num_workers, seed=seed, dataset=dataset)
        fetcher_cls = _IterableDatasetFetcher if dataset_kind == "iterable" else _MapDatasetFetcher

        init_exception = None
        fetcher = None
        try:
            if init_fn is not None:
                init_fn(worker_id)
            fetcher = fetcher_cls(dataset, auto_collation, collate_fn, drop_last)
        except Exception:
            init_exception = ExceptionWrapper(where=f"in DataLoader worker process {worker_id}")

        iteration_end = False
        while True:
            try:
                r = index_queue.get(timeout=_WORKER_POLL_INTERVAL)
            except queue.Empty:
                # shutting down (the None may still sit in the main process's feeder thread), or the
                # main process died and nobody will read our results
                if done_event.is_set() or os.getppid() != parent_pid:
                    break
                continue
            if isinstance(r, _ResumeIteration):
                data_queue.put((r, None))
                iteration_end = False
                if init_exception is None:
                    fetcher = fetcher_cls(dataset, auto_collation, collate_fn, drop_last)
                continue
            if r is None:
                break  # shutdown
            if done_event.is_set() or iteration_end:
                continue  # draining after the end: drop the request
            idx, index = r
            if init_exception is not None:
                data, init_exception = init_exception, None
            else:
                try:
                    data = fetcher.fetch(index)
                except Exception as e:
                    if isinstance(e, StopIteration) and dataset_kind == "iterable":
                        data = _IterableDatasetStopIteration(worker_id)
                        iteration_end = True
                    else:
                        data = ExceptionWrapper(where=f"in DataLoader worker process {worker_id}")
            data_queue.put((idx, _pickle_result(data, worker_id)))
            del data, idx, index, r  # the batch's storages are freed as soon as they are sent
    except KeyboardInterrupt:
        pass  # the main process handles Ctrl-C and shuts us down
    if done_event.is_set() and os.getppid() != parent_pid:
        data_queue.cancel_join_thread()  # nobody reads any more: do not block exit on a full pipe
    data_queue.close()  # at exit, the feeder thread flushes what is queued to the main process
