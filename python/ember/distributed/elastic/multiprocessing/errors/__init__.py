"""Worker failures, recorded where the launcher can read them (torch.distributed.elastic's errors module).

A worker's main function wrapped in @record writes its uncaught exception as JSON to the file named by
TORCHELASTIC_ERROR_FILE (set by ember.distributed.run for every worker); the launcher reads that file to
name the failing rank's error and traceback. The JSON layout is torchrun's, so either launcher can read
the other's workers."""
import faulthandler
import functools
import json
import os
import signal
import socket
import time
import traceback
import warnings

__all__ = ["ChildFailedError", "ErrorHandler", "ProcessFailure", "get_error_handler", "record"]

_NOT_AVAILABLE = "<N/A>"


class ErrorHandler:
    """Writes an exception to the worker's error file; initialize() makes fatal signals dump stacks."""

    def _get_error_file_path(self):
        return os.environ.get("TORCHELASTIC_ERROR_FILE")

    def initialize(self):
        # a segfault or abort then still leaves every thread's Python stack on stderr for the launcher
        try:
            faulthandler.enable(all_threads=True)
        except Exception as e:  # stderr closed or not a real file
            warnings.warn(f"Unable to enable fault handler. {type(e).__name__}: {e}", stacklevel=2)

    def record_exception(self, e):
        path = self._get_error_file_path()
        if not path:
            return
        data = {"message": {"message": f"{type(e).__name__}: {e}",
                            "extraInfo": {"py_callstack": "".join(traceback.format_exception(e)),
                                          "timestamp": str(int(time.time()))}}}
        self._write_error_file(path, json.dumps(data))

    def dump_error_file(self, rootcause_error_file, error_code=0):
        """Copies a failed child's error file into this process's own (a launcher inside a launcher),
        stamping the child's exit code so the outer launcher reports the root cause."""
        with open(rootcause_error_file) as fp:
            data = json.load(fp)
        if error_code and isinstance(data.get("message"), dict):
            data["message"].setdefault("errorCode", error_code)
        path = self._get_error_file_path()
        if path:
            self._write_error_file(path, json.dumps(data))

    def _write_error_file(self, path, text):
        try:
            with open(path, "w") as fp:
                fp.write(text)
        except OSError as e:
            warnings.warn(f"Unable to write error to file. {type(e).__name__}: {e}", stacklevel=3)


def get_error_handler():
    return ErrorHandler()


class ProcessFailure:
    """One worker that ended badly: its ranks, pid, exit code (negative: killed by that signal), and
    what it left behind (the error file's message and traceback, or the traceback it printed)."""

    def __init__(self, local_rank, pid, exitcode, error_file=None, rank=None, stderr_tail=""):
        self.local_rank = local_rank
        self.rank = local_rank if rank is None else rank
        self.pid = pid
        self.exitcode = exitcode
        self.error_file = error_file if error_file and os.path.isfile(error_file) else _NOT_AVAILABLE
        self.error_file_data = {}
        self.message = ""
        self.traceback = ""
        self.timestamp = None
        if self.error_file != _NOT_AVAILABLE:
            self._read_error_file()
        if not self.traceback:
            self.traceback = _last_traceback(stderr_tail)
        # what it printed last, when that is not a Python traceback (a C++ abort, a message before exit)
        self.stderr_tail = "" if self.traceback else "\n".join(stderr_tail.rstrip().splitlines()[-20:])
        if not self.message:
            self.message = (f"Signal {-exitcode} ({self.signal_name()}) received by PID {pid}" if exitcode < 0
                            else _last_error_line(self.traceback or self.stderr_tail)
                            or f"exited with code {exitcode}")
        # finer than the whole-second timestamp, to tell which of several failures came first
        self.observed_at = os.path.getmtime(self.error_file) if self.error_file_data else time.time()
        if self.timestamp is None:
            self.timestamp = int(self.observed_at)

    def _read_error_file(self):
        try:
            with open(self.error_file) as fp:
                self.error_file_data = json.load(fp)
            info = self.error_file_data["message"]
            if isinstance(info, str):  # an error file written by hand: just a message
                self.message = info
                return
            self.message = str(info.get("message", ""))
            extra = info.get("extraInfo", {})
            self.traceback = str(extra.get("py_callstack", ""))
            self.timestamp = int(extra.get("timestamp", os.path.getmtime(self.error_file)))
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as e:
            self.message = f"unreadable error file {self.error_file} ({type(e).__name__}: {e})"

    def signal_name(self):
        if self.exitcode >= 0:
            return _NOT_AVAILABLE
        try:
            return signal.Signals(-self.exitcode).name
        except ValueError:
            return f"signal {-self.exitcode}"


def _last_traceback(text):
    """The last Python traceback (or faulthandler dump) a worker printed to stderr, else ""."""
    start = text.rfind("Traceback (most recent call last):")
    if start < 0:
        start = text.rfind("Fatal Python error")
    return text[start:].rstrip() if start >= 0 else ""


def _last_error_line(tb):
    lines = [line for line in tb.strip().splitlines() if line.strip()]
    return lines[-1].strip() if lines else ""


class ChildFailedError(Exception):
    """Raised by the launcher when workers fail; failures maps each failed global rank to its ProcessFailure.
    The root cause is the earliest failure (the others often fail because it did)."""

    def __init__(self, name, failures):
        self.name = name
        self.failures = failures
        super().__init__(self.format_msg())

    def get_first_failure(self):
        rank = min(self.failures, key=lambda r: (self.failures[r].observed_at, r))
        return rank, self.failures[rank]

    def format_msg(self):
        root_rank, root = self.get_first_failure()
        lines = ["=" * 64, f"{self.name} FAILED", "-" * 64, "Root cause (first failure):"]
        lines += _describe(root_rank, root)
        others = [r for r in sorted(self.failures) if r != root_rank]
        if others:
            lines += ["-" * 64, "Other failures:"]
            for r in others:
                lines += _describe(r, self.failures[r])
        lines.append("=" * 64)
        return "\n".join(lines)


def _describe(rank, failure):
    code = failure.exitcode
    exit_text = f"{code} ({failure.signal_name()})" if code < 0 else str(code)
    lines = [f"[{rank}]:",
             f"  time      : {time.strftime('%Y-%m-%d_%H:%M:%S', time.localtime(failure.timestamp))}",
             f"  host      : {socket.gethostname()}",
             f"  rank      : {rank} (local_rank: {failure.local_rank})",
             f"  exitcode  : {exit_text} (pid: {failure.pid})",
             f"  error_file: {failure.error_file}",
             f"  error     : {failure.message}"]
    if failure.traceback:
        lines.append("  traceback : " + failure.traceback.rstrip().replace("\n", "\n    "))
    elif failure.stderr_tail:
        lines.append("  stderr    : " + failure.stderr_tail.replace("\n", "\n    "))
    return lines


def record(fn=None, error_handler=None):
    """Decorates a worker's main function: an exception escaping it is written to the worker's error
    file (then re-raised), and a nested launcher's ChildFailedError passes its root cause up."""
    handler = error_handler or get_error_handler()

    def wrap(f):
        @functools.wraps(f)
        def wrapper(*args, **kwargs):
            handler.initialize()
            try:
                return f(*args, **kwargs)
            except SystemExit as e:
                if e.code in (0, None):
                    return None
                raise
            except ChildFailedError as e:
                _, failure = e.get_first_failure()
                if failure.error_file != _NOT_AVAILABLE:
                    handler.dump_error_file(failure.error_file, failure.exitcode)
                else:
                    handler.record_exception(e)
                raise
            except Exception as e:
                handler.record_exception(e)
                raise
        return wrapper

    return wrap if fn is None else wrap(fn)
