"""The DataLoader iterator with worker processes (num_workers > 0).

Indices go to the workers round-robin through one index queue each, at most prefetch_factor
batches ahead per worker; batches come back on one result queue as shared-memory tensors
(ember.multiprocessing's reducers) and are handed out in sampler order (in_order=True) or as
they arrive. The main process waits on the result queue and the workers' sentinels together,
so a worker that dies is noticed at once, and a worker's exception is re-raised here."""
import itertools
import multiprocessing.connection
import os
import queue
import signal
import time
from multiprocessing.reduction import ForkingPickler

from ... import multiprocessing as ember_mp
from ._utils import worker as _worker
from ._dataloader_iter import _BaseDataLoaderIter


class _MultiProcessingDataLoaderIter(_BaseDataLoaderIter):
    def __init__(self, loader):
        super().__init__(loader)
        self._num_workers = loader.num_workers
        self._prefetch_factor = loader.prefetch_factor
        self._timeout = loader.timeout
        self._in_order = loader.in_order
        self._persistent_workers = loader.persistent_workers
        ctx = loader.multiprocessing_context or ember_mp
        if ember_mp.get_sharing_strategy() == "file_system":
            ember_mp._reductions._connect_tracker()  # one tracker, inherited by the workers
        self._shutdown = False
        self._worker_result_queue = ctx.Queue()
        self._workers_done_event = ctx.Event()
        self._index_queues, self._workers = [], []
        for i in range(self._num_workers):
            index_queue = ctx.Queue()
            index_queue.cancel_join_thread()  # never block exit on indices nobody will read
            w = ctx.Process(target=_worker._worker_loop, daemon=True, args=(
                self._dataset_kind, self._dataset, index_queue, self._worker_result_queue,
                self._workers_done_event, self._auto_collation, self._collate_fn, self._drop_last,
                self._base_seed, loader.worker_init_fn, i, self._num_workers, os.getpid()))
            w.start()
            self._index_queues.append(index_queue)
            self._workers.append(w)
        self._reset(loader, first_iter=True)

    def _reset(self, loader, first_iter=False):
        super()._reset(loader, first_iter)
        self._send_idx = 0  # next batch index to send to a worker
        self._rcvd_idx = 0  # next batch index to return
        self._task_info = {}  # batch index -> (worker_id,) while pending, (worker_id, data) once here
        self._tasks_outstanding = 0
        self._workers_status = [True] * self._num_workers
        self._worker_queue_idx_cycle = itertools.cycle(range(self._num_workers))
        if not first_iter:
            for q in self._index_queues:
                q.put(_worker._ResumeIteration())
            pending = self._num_workers
            while pending > 0:  # batches of an abandoned epoch are dropped on the way
                idx, _ = self._get_data()
                if isinstance(idx, _worker._ResumeIteration):
                    pending -= 1
        for _ in range(self._prefetch_factor * self._num_workers):
            self._try_put_index()

    # ---------------------------------------------------------------- receiving
    def _try_get_data(self, timeout):
        reader = self._worker_result_queue._reader
        live = {w.sentinel: i for i, w in enumerate(self._workers) if self._workers_status[i] or
                self._persistent_workers}
        ready = multiprocessing.connection.wait([reader, *live], timeout)
        if not ready:
            return False, None
        if reader in ready:  # read what a worker sent before looking at whether it died
            try:
                idx, data = self._worker_result_queue.get(timeout=timeout)
                return True, (idx, ForkingPickler.loads(data) if isinstance(data, bytes) else data)
            except queue.Empty:
                pass
            except Exception as e:  # e.g. the sender of a file descriptor died before handing it over
                # the reset can arrive before the dead worker is reapable: give its sentinel a moment (up
                # to 5 s on a loaded machine: 1 s was not always enough)
                deadline = time.monotonic() + 5.0
                while time.monotonic() < deadline and all(self._workers[i].is_alive() for i in live.values()):
                    multiprocessing.connection.wait(list(live), 0.1)
                self._raise_if_dead(live.values(), e)
                raise
        self._raise_if_dead(i for s, i in live.items() if s in ready)
        return False, None

    def _raise_if_dead(self, worker_ids, cause=None):
        dead = [self._workers[i] for i in worker_ids if not self._workers[i].is_alive()]
        if dead:
            pids = ", ".join(str(w.pid) for w in dead)
            code = dead[0].exitcode
            self._shutdown_workers(graceful=False)
            how = f"killed by signal: {signal.Signals(-code).name}" if code < 0 else f"exit code {code}"
            raise RuntimeError(f"DataLoader worker (pid(s) {pids}) exited unexpectedly ({how}).") from cause

    def _get_data(self):
        if self._timeout > 0:
            ok, data = self._try_get_data(self._timeout)
            if not ok:
                self._shutdown_workers(graceful=False)
                raise RuntimeError(f"DataLoader timed out after {self._timeout} seconds")
            return data
        while True:
            ok, data = self._try_get_data(_worker.MP_STATUS_CHECK_INTERVAL)
            if ok:
                return data

    def _next_data(self):
        while True:
            while self._rcvd_idx < self._send_idx:
                info = self._task_info.get(self._rcvd_idx)
                if info is not None and (len(info) == 2 or self._workers_status[info[0]]):
                    break
                self._task_info.pop(self._rcvd_idx, None)  # returned out of order, or its worker ended
                self._rcvd_idx += 1
            else:
                if not self._persistent_workers:
                    self._shutdown_workers()
                raise StopIteration
            if len(self._task_info[self._rcvd_idx]) == 2:
                data = self._task_info.pop(self._rcvd_idx)[1]
                self._rcvd_idx += 1
                return self._process_data(data)
            idx, data = self._get_data()
            self._tasks_outstanding -= 1
            if isinstance(data, _worker._IterableDatasetStopIteration):
                self._workers_status[data.worker_id] = False
                if not self._persistent_workers:
                    self._index_queues[data.worker_id].put(None)
                self._try_put_index()
                continue
            if idx == self._rcvd_idx:
                del self._task_info[idx]
                self._rcvd_idx += 1
                return self._process_data(data)
            if not self._in_order:
                del self._task_info[idx]
                return self._process_data(data)
            self._task_info[idx] += (data,)

    def _process_data(self, data):
        self._try_put_index()
        if isinstance(data, _worker.ExceptionWrapper):
            data.reraise()
        return data

    def _try_put_index(self):
        if self._tasks_outstanding >= self._prefetch_factor * self._num_workers:
            return
        try:
            index = self._next_index()
        except StopIteration:
            return
        for _ in range(self._num_workers):
            worker_id = next(self._worker_queue_idx_cycle)
            if self._workers_status[worker_id]:
                break
        else:
            return  # every worker has ended
        self._index_queues[worker_id].put((self._send_idx, index))
        self._task_info[self._send_idx] = (worker_id,)
        self._tasks_outstanding += 1
        self._send_idx += 1

    # ---------------------------------------------------------------- shutdown
    def _shutdown_workers(self, graceful=True):
        # graceful: let the workers see the None and exit; else (a fault) terminate them at once
        if self._shutdown:
            return
        self._shutdown = True
        try:
            self._workers_done_event.set()
            for q in self._index_queues:
                try:
                    q.put(None)
                except (OSError, ValueError):
                    pass
            # the workers flush what they already sent before they exit: read and drop it meanwhile,
            # so the storages it holds are released now (named segments would otherwise wait for exit)
            deadline = time.monotonic() + (_worker.MP_STATUS_CHECK_INTERVAL if graceful else 0)
            for w in self._workers:
                while w.is_alive() and time.monotonic() < deadline:
                    self._drain()
                    w.join(0.01)
                if w.is_alive():
                    w.terminate()
                    w.join()
            for q in self._index_queues:
                q.cancel_join_thread()
                q.close()
            self._drain()
        finally:
            self._worker_result_queue.cancel_join_thread()
            self._worker_result_queue.close()

    def _drain(self):
        # batches nobody will read: unpickle and drop them so named segments are released now
        while True:
            try:
                if not self._worker_result_queue._reader.poll(0):
                    return
                _, data = self._worker_result_queue.get(timeout=0.1)
                if isinstance(data, bytes):
                    ForkingPickler.loads(data)
            except queue.Empty:
                return
            except Exception:
                continue  # e.g. a file descriptor whose sender has exited: nothing left to release

    def __del__(self):
        try:
            self._shutdown_workers()
        except Exception:
            pass
