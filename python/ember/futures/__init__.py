"""ember.futures: torch.futures' Future, the handle of a result that arrives later.

A Future is completed once, with a value (set_result) or an error (set_exception); then() chains a
callback that runs when it completes and gives a new Future for the callback's return. Process
groups hand them out (Work.get_future()) and DDP's communication hooks return them.

Completion is pushed: whoever completes a future (a process group's thread, for a collective) runs
its callbacks. Some work completes only when waited for (point-to-point, NCCL); its futures carry a
`_pull` that wait() calls first, and futures chained onto them inherit it.
"""
import threading
import traceback
from typing import Generic, TypeVar

T = TypeVar("T")
S = TypeVar("S")

__all__ = ["Future", "collect_all", "wait_all"]


class Future(Generic[T]):
    """The eventual result of an asynchronous computation."""

    def __init__(self, *, devices=None):
        self._cond = threading.Condition()
        self._done = False
        self._value = None
        self._error = None
        self._callbacks = []
        self._pull = None  # completes this future when called (work that finishes in wait())

    def __repr__(self):
        state = "done" if self._done else "pending"
        return f"<ember.futures.Future ({state})>"

    def done(self) -> bool:
        """Whether the future has a value or an error (a completed future may still hold an error)."""
        return self._done

    def wait(self) -> T:
        """Blocks until the future completes; returns its value or raises its error."""
        if not self._done and self._pull is not None:
            try:
                self._pull()
            except Exception:
                # a failed operation's error reaches this future through its completion; an error
                # that completes nothing (waiting on the group's own thread) is raised here
                with self._cond:
                    if not self._done:
                        self._cond.wait(timeout=1.0)
                    if not self._done:
                        raise
        with self._cond:
            while not self._done:
                self._cond.wait()
        if self._error is not None:
            raise self._error
        return self._value

    def value(self) -> T:
        """The value of a completed future (raises its error); call after wait() or in a callback."""
        if not self._done:
            raise RuntimeError("Future.value(): the future has not completed yet; call wait() first, or read it in a "
                               "callback given to then()")
        if self._error is not None:
            raise self._error
        return self._value

    def then(self, callback) -> "Future[S]":
        """A new future completed with callback(self) once this one completes (or with its error)."""
        child = Future()
        child._pull = self.wait if self._pull is not None else None

        def run(fut):
            try:
                result = callback(fut)
            except BaseException as e:  # noqa: BLE001 - the error travels to whoever waits on the child
                tb = "".join(traceback.format_exception(type(e), e, e.__traceback__.tb_next if e.__traceback__ else None))
                err = RuntimeError(f"Got the following error when running the callback: {type(e).__name__}: {e}\n\n"
                                   f"{tb}")
                err.__cause__ = e
                child.set_exception(err)
            else:
                child.set_result(result)
        self.add_done_callback(run)
        return child

    def add_done_callback(self, callback) -> None:
        """Runs callback(self) once the future completes (at once if it has). Errors the callback raises are
        reported, not propagated: use then() to chain a computation."""
        with self._cond:
            if not self._done:
                self._callbacks.append(callback)
                return
        self._run(callback)

    def _run(self, callback):
        try:
            callback(self)
        except Exception as e:  # noqa: BLE001 - as torch: a done-callback's error is logged, not raised
            import sys
            print(f"[ember.futures] Got the following error when running the callback: {type(e).__name__}: {e}",
                  file=sys.stderr)

    def _complete(self, value, error):
        with self._cond:
            if self._done:
                raise RuntimeError("Attempting to mark a completed Future as complete again. Note that a Future can "
                                   "only be marked completed once.")
            self._value, self._error, self._done = value, error, True
            callbacks, self._callbacks = self._callbacks, []
            self._cond.notify_all()
        for cb in callbacks:
            self._run(cb)

    def set_result(self, result: T) -> None:
        """Completes the future with a value; its waiters wake and its callbacks run, on this thread."""
        self._complete(result, None)

    def set_exception(self, result: Exception) -> None:
        """Completes the future with an error, raised by wait() and value()."""
        if not isinstance(result, BaseException):
            raise AssertionError(f"{result} is of type {type(result)}, not an Exception.")
        self._complete(None, result)


def collect_all(futures):
    """A future completed with the list of `futures` once all have completed (or with the first error)."""
    futures = list(futures)
    for f in futures:
        if not isinstance(f, Future):
            raise TypeError(f"collect_all expects a list of ember.futures.Future, got {type(f).__name__}")
    out = Future()
    if any(f._pull is not None for f in futures):
        def pull_all():
            for f in futures:
                try:
                    f.wait()
                except Exception:
                    pass  # reaches `out` through its completion
        out._pull = pull_all
    if not futures:
        out.set_result([])
        return out
    lock = threading.Lock()
    left = [len(futures)]

    def one_done(_):
        with lock:
            left[0] -= 1
            last = left[0] == 0
        if last:
            err = next((f._error for f in futures if f._error is not None), None)
            if err is not None:
                out.set_exception(err)
            else:
                out.set_result(futures)
    for f in futures:
        f.add_done_callback(one_done)
    return out


def wait_all(futures):
    """Waits for every future; their values in order, or the first error raised."""
    return [f.value() for f in collect_all(futures).wait()]
