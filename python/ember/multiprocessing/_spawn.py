"""spawn(fn, args, nprocs): run fn(i, *args) in nprocs processes; the first failure is re-raised
in the parent (with the child's traceback) after the other processes are terminated."""
import multiprocessing
import multiprocessing.connection
import os
import pickle
import signal
import sys
import tempfile
import time
import traceback

__all__ = ["spawn", "start_processes", "ProcessContext", "SpawnContext", "ProcessException",
           "ProcessRaisedException", "ProcessExitedException"]


class ProcessException(Exception):
    __slots__ = ["error_index", "error_pid"]

    def __init__(self, msg, error_index, pid):
        super().__init__(msg)
        self.msg, self.error_index, self.pid = msg, error_index, pid

    def __reduce__(self):
        return type(self), (self.msg, self.error_index, self.pid)


class ProcessRaisedException(ProcessException):
    """A spawned process raised an exception; the message carries its traceback."""


class ProcessExitedException(ProcessException):
    """A spawned process exited with a non-zero code or was killed by a signal."""

    __slots__ = ["exit_code"]

    def __init__(self, msg, error_index, error_pid, exit_code, signal_name=None):
        super().__init__(msg, error_index, error_pid)
        self.exit_code, self.signal_name = exit_code, signal_name

    def __reduce__(self):
        return type(self), (self.msg, self.error_index, self.pid, self.exit_code, self.signal_name)


def _wrap(fn, i, args, error_file):
    try:
        fn(i, *args)
    except KeyboardInterrupt:
        pass  # the parent is going down too
    except Exception:
        with open(error_file, "wb") as fh:
            pickle.dump(traceback.format_exc(), fh)
        sys.exit(1)


class ProcessContext:
    def __init__(self, processes, error_files):
        self.processes, self.error_files = processes, error_files
        self.sentinels = {p.sentinel: i for i, p in enumerate(processes)}

    def pids(self):
        return [int(p.pid) for p in self.processes]

    def join(self, timeout=None):
        """Wait for the processes; True once all exited cleanly, False on timeout. The first failure
        terminates the others and raises ProcessRaisedException / ProcessExitedException."""
        if not self.sentinels:
            return True
        ready = multiprocessing.connection.wait(self.sentinels.keys(), timeout=timeout)
        error_index = None
        for s in ready:
            i = self.sentinels.pop(s)
            p = self.processes[i]
            p.join()
            if p.exitcode != 0:
                error_index = i
                break
        if error_index is None:
            return not self.sentinels
        self._terminate_rest()
        self._raise(error_index)

    def _terminate_rest(self):
        alive = [p for p in self.processes if p.is_alive()]
        for p in alive:
            p.terminate()
        deadline = time.monotonic() + 30
        for p in alive:
            p.join(max(0.0, deadline - time.monotonic()))
        for p in alive:
            if p.is_alive():
                p.kill()
                p.join()

    def _raise(self, i):
        p, error_file = self.processes[i], self.error_files[i]
        if not os.path.exists(error_file) or os.path.getsize(error_file) == 0:
            code = p.exitcode
            if code < 0:
                name = signal.Signals(-code).name
                raise ProcessExitedException(f"process {i} terminated with signal {name}", error_index=i,
                                             error_pid=p.pid, exit_code=code, signal_name=name)
            raise ProcessExitedException(f"process {i} terminated with exit code {code}", error_index=i,
                                         error_pid=p.pid, exit_code=code)
        with open(error_file, "rb") as fh:
            original_trace = pickle.load(fh)
        msg = f"\n\n-- Process {i} terminated with the following error:\n{original_trace}"
        raise ProcessRaisedException(msg, i, p.pid)

    def __del__(self):
        for f in getattr(self, "error_files", ()):
            try:
                os.unlink(f)
            except OSError:
                pass


SpawnContext = ProcessContext  # the old name


def start_processes(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):
    """Start nprocs processes running fn(i, *args) with the given start method ('spawn', 'fork',
    'forkserver'); with join=True wait for all of them, else return the ProcessContext."""
    ctx = multiprocessing.get_context(start_method)
    processes, error_files = [], []
    for i in range(nprocs):
        fd, error_file = tempfile.mkstemp(prefix="ember_spawn_", suffix=".err")
        os.close(fd)
        os.unlink(error_file)  # exists only once a child wrote its traceback
        p = ctx.Process(target=_wrap, args=(fn, i, args, error_file), daemon=daemon)
        p.start()
        processes.append(p)
        error_files.append(error_file)
    context = ProcessContext(processes, error_files)
    if not join:
        return context
    while not context.join():
        pass


def spawn(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):
    """torch.multiprocessing.spawn: start_processes with the 'spawn' start method."""
    if start_method != "spawn":
        import warnings
        warnings.warn(f"This method only supports start_method=spawn (got: {start_method}).\nTo use a different "
                      f"start_method use:\n\t\t ember.multiprocessing.start_processes(...)", FutureWarning,
                      stacklevel=2)
    return start_processes(fn, args, nprocs, join, daemon, start_method)
