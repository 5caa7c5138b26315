"""python -m ember.distributed.run: torchrun's launcher for Ember programs.

Starts --nproc-per-node copies of a script (or -m module) on this node with the environment torchrun
gives its workers (RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE, GROUP_RANK, MASTER_ADDR, MASTER_PORT,
TORCHELASTIC_*), waits for them, and when one fails stops the rest (SIGTERM, SIGKILL after a grace
period) and reports the failing rank's exit code or signal and its error. Several nodes are a fixed
set (static rendezvous): every node runs this launcher with the same --nnodes, --nproc-per-node,
--master-addr and --master-port and its own --node-rank; the workers meet in init_process_group.

Each worker's TORCHELASTIC_ERROR_FILE receives its exception when its main function is wrapped in
ember.distributed.elastic.multiprocessing.errors.record; without it the launcher falls back to the
last traceback the worker printed on stderr, which it forwards while keeping the tail.
"""
import argparse
import collections
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid

from .elastic.multiprocessing.errors import ChildFailedError, ProcessFailure, record

__all__ = ["ChildFailedError", "LaunchConfigError", "SignalException", "get_args_parser", "main", "parse_args",
           "run"]

_STD_NONE, _STD_OUT, _STD_ERR, _STD_ALL = 0, 1, 2, 3
_STDERR_TAIL_BYTES = 64 * 1024  # enough for a deep traceback, bounded for chatty workers


class LaunchConfigError(ValueError):
    """The launcher's arguments do not describe a job it can run."""


class SignalException(Exception):
    """The launcher received a termination signal; its workers have been stopped."""

    def __init__(self, msg, sigval):
        super().__init__(msg)
        self.sigval = sigval


def get_args_parser():
    p = argparse.ArgumentParser(prog="python -m ember.distributed.run",
                                description="Start and supervise the worker processes of a distributed job.")
    p.add_argument("--nnodes", type=str, default="1:1",
                   help="number of nodes, N or N:N (a fixed count; elastic ranges are not supported)")
    p.add_argument("--nproc-per-node", "--nproc_per_node", type=str, default="1",
                   help="workers on this node: a number, 'cpu', 'gpu' or 'auto'")
    p.add_argument("--node-rank", "--node_rank", type=int, default=0, help="this node's rank in [0, nnodes)")
    p.add_argument("--master-addr", "--master_addr", type=str, default="127.0.0.1",
                   help="address of the node that hosts rank 0")
    p.add_argument("--master-port", "--master_port", type=int, default=29500,
                   help="free port on the master node for the workers' rendezvous")
    p.add_argument("--standalone", action="store_true",
                   help="a single-node job on localhost with a free port and a fresh run id")
    p.add_argument("--rdzv-backend", "--rdzv_backend", type=str, default="static",
                   help="'static' (nodes given by --node-rank), or 'c10d' on a single node")
    p.add_argument("--rdzv-endpoint", "--rdzv_endpoint", type=str, default="",
                   help="host[:port] of the rendezvous; overrides --master-addr/--master-port")
    p.add_argument("--rdzv-id", "--rdzv_id", type=str, default="none", help="the job's id (TORCHELASTIC_RUN_ID)")
    p.add_argument("--max-restarts", "--max_restarts", type=int, default=0,
                   help="restart this node's workers up to this many times after a failure")
    p.add_argument("--monitor-interval", "--monitor_interval", type=float, default=0.1,
                   help="seconds between checks of the workers' states")
    p.add_argument("--stop-timeout", "--stop_timeout", type=float, default=30.0,
                   help="seconds a worker gets after SIGTERM before SIGKILL")
    p.add_argument("--role", type=str, default="default", help="the workers' role name (ROLE_NAME)")
    p.add_argument("-m", "--module", action="store_true", help="run training_script as a module (python -m)")
    p.add_argument("--no-python", "--no_python", action="store_true",
                   help="run training_script as an executable, not through python")
    p.add_argument("--log-dir", "--log_dir", type=str, default=None,
                   help="directory for the workers' error files and redirected output (kept afterwards)")
    p.add_argument("-r", "--redirects", type=str, default="0",
                   help="send workers' output to files in --log-dir: 0 none, 1 stdout, 2 stderr, 3 both; "
                        "or per local rank, e.g. 0:1,1:2")
    p.add_argument("-t", "--tee", type=str, default="0",
                   help="like --redirects but also echo to the console with a [role local_rank]: prefix")
    p.add_argument("training_script", type=str, help="the script (or module with -m) every worker runs")
    p.add_argument("training_script_args", nargs=argparse.REMAINDER)
    return p


def parse_args(args=None):
    return get_args_parser().parse_args(args)


def _parse_nnodes(text):
    lo, _, hi = text.partition(":")
    try:
        lo, hi = int(lo), int(hi or lo)
    except ValueError:
        raise LaunchConfigError(f"--nnodes must be N or N:N, got {text!r}") from None
    if lo != hi:
        raise LaunchConfigError(f"--nnodes {text}: elastic node ranges need a rendezvous service; "
                         "ember.distributed.run runs a fixed number of nodes (give N)")
    if lo < 1:
        raise LaunchConfigError(f"--nnodes must be at least 1, got {lo}")
    return lo


def _parse_nproc(text):
    if text == "cpu":
        return os.cpu_count() or 1
    if text in ("gpu", "auto"):
        from .. import cuda  # only these spellings need the accelerator's count
        if cuda.is_available():
            return cuda.device_count()
        if text == "gpu":
            raise LaunchConfigError("--nproc-per-node gpu: CUDA is not available")
        return os.cpu_count() or 1
    try:
        n = int(text)
    except ValueError:
        raise LaunchConfigError(f"--nproc-per-node must be a number, 'cpu', 'gpu' or 'auto', got {text!r}") from None
    if n < 1:
        raise LaunchConfigError(f"--nproc-per-node must be at least 1, got {n}")
    return n


def _parse_std(text, nproc, flag):
    """--redirects/--tee: one value for every local rank, or local_rank:value pairs."""
    try:
        if ":" not in text:
            value = int(text)
            table = {r: value for r in range(nproc)}
        else:
            table = {r: _STD_NONE for r in range(nproc)}
            for item in text.split(","):
                rank, value = item.split(":")
                table[int(rank)] = int(value)
    except ValueError:
        raise LaunchConfigError(f"{flag} must be 0-3 or local_rank:value pairs such as 0:1,1:3, got {text!r}") from None
    if any(v not in (_STD_NONE, _STD_OUT, _STD_ERR, _STD_ALL) for v in table.values()):
        raise LaunchConfigError(f"{flag} values are 0 (none), 1 (stdout), 2 (stderr) or 3 (both), got {text!r}")
    return table


def _free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _die_with_launcher(launcher_pid):
    """Runs in each worker between fork and exec: if the launcher is killed outright (SIGKILL, OOM) the
    kernel kills the worker too, so no worker is left orphaned."""
    try:
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
    except OSError:
        return None

    def in_child():
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
        if os.getppid() != launcher_pid:  # the launcher died before prctl took effect
            os._exit(1)
    return in_child if sys.platform.startswith("linux") else None


class _OutputPump(threading.Thread):
    """Copies one worker stream from its pipe to the console and/or a log file as it arrives, keeping the
    last bytes of stderr so a failure can be reported with the traceback the worker printed."""

    def __init__(self, fd, console, log_path, prefix, keep_tail):
        super().__init__(daemon=True)
        self.fd = fd
        self.console = console
        self.log = open(log_path, "wb") if log_path else None
        self.prefix = prefix
        self.tail = collections.deque() if keep_tail else None
        self.tail_bytes = 0
        self.partial = b""  # the unfinished last line, when lines are prefixed

    def run(self):
        try:
            while True:
                chunk = os.read(self.fd, 65536)
                if not chunk:
                    break
                if self.log:
                    self.log.write(chunk)
                    self.log.flush()
                if self.console is not None:
                    self._to_console(chunk)
                if self.tail is not None:
                    self.tail.append(chunk)
                    self.tail_bytes += len(chunk)
                    while self.tail_bytes - len(self.tail[0]) >= _STDERR_TAIL_BYTES:
                        self.tail_bytes -= len(self.tail.popleft())
        except OSError:
            pass
        finally:
            if self.partial and self.console is not None:
                self._to_console(b"", final=True)
            os.close(self.fd)
            if self.log:
                self.log.close()

    def _to_console(self, chunk, final=False):
        if self.prefix:
            # whole lines only: workers print a line in several writes, and the prefixed lines of
            # several workers must not interleave mid-line
            self.partial += chunk
            lines = self.partial.split(b"\n")
            self.partial = b"" if final else lines.pop()
            if not lines:
                return
            chunk = b"".join(self.prefix + line + b"\n" for line in lines)
        stream = getattr(self.console, "buffer", None)
        try:
            if stream is not None:
                stream.write(chunk)
            else:
                self.console.write(chunk.decode(errors="replace"))
            self.console.flush()
        except (OSError, ValueError):  # console gone: keep draining the pipe so the worker never blocks
            self.console = None

    def text(self):
        return b"".join(self.tail or ()).decode(errors="replace")


class _Worker:
    def __init__(self, local_rank, rank, proc, error_file):
        self.local_rank = local_rank
        self.rank = rank
        self.proc = proc
        self.error_file = error_file
        self.pumps = []
        self.stderr_pump = None


class _WorkerGroup:
    """This node's workers for one attempt: started together, watched, stopped together."""

    def __init__(self, cfg, attempt_dir, restart_count):
        self.cfg = cfg
        self.attempt_dir = attempt_dir
        self.restart_count = restart_count
        self.workers = []

    def start(self):
        cfg = self.cfg
        spawn_hook = _die_with_launcher(os.getpid())
        for local_rank in range(cfg.nproc):
            rank = cfg.node_rank * cfg.nproc + local_rank
            wdir = os.path.join(self.attempt_dir, str(local_rank))
            os.makedirs(wdir, exist_ok=True)
            error_file = os.path.join(wdir, "error.json")
            env = dict(os.environ)
            env.update(_worker_env(cfg, local_rank, rank, self.restart_count, error_file))
            out_piped = bool((cfg.redirects[local_rank] | cfg.tee[local_rank]) & _STD_OUT)
            # its own session: a terminal's Ctrl-C reaches only the launcher, which stops the workers in
            # order, and killpg reaches the worker's own children too
            proc = subprocess.Popen(cfg.cmd, env=env, stdout=subprocess.PIPE if out_piped else None,
                                    stderr=subprocess.PIPE, start_new_session=True, preexec_fn=spawn_hook)
            self.workers.append(_Worker(local_rank, rank, proc, error_file))
        # pumps start once every worker is forked: no thread runs while the spawn hook is in a child
        for w in self.workers:
            redirect, tee = cfg.redirects[w.local_rank], cfg.tee[w.local_rank]
            wdir = os.path.dirname(w.error_file)
            prefix = f"[{cfg.role}{w.local_rank}]:".encode()
            for bit, pipe, console, name in ((_STD_OUT, w.proc.stdout, sys.stdout, "stdout.log"),
                                            (_STD_ERR, w.proc.stderr, sys.stderr, "stderr.log")):
                if pipe is None:
                    continue
                fd = os.dup(pipe.fileno())  # the pump owns the pipe from here on
                pipe.close()
                pump = _OutputPump(fd, console if not (redirect & bit) or (tee & bit) else None,
                                   os.path.join(wdir, name) if (redirect | tee) & bit else None,
                                   prefix if tee & bit else b"", keep_tail=bit == _STD_ERR)
                pump.start()
                w.pumps.append(pump)
                if bit == _STD_ERR:
                    w.stderr_pump = pump

    def failures(self):
        """Workers that have exited non-zero, as {rank: ProcessFailure}."""
        failed = {}
        for w in self.workers:
            code = w.proc.poll()
            if code not in (None, 0):
                # children the worker left behind would hold its stderr open; the traceback is in the pipe
                _signal_group(w.proc, signal.SIGKILL)
                for pump in w.pumps:
                    pump.join(timeout=2.0)
                tail = w.stderr_pump.text() if w.stderr_pump else ""
                failed[w.rank] = ProcessFailure(w.local_rank, w.proc.pid, code, w.error_file, rank=w.rank,
                                                stderr_tail=tail)
        return failed

    def all_succeeded(self):
        return all(w.proc.poll() == 0 for w in self.workers)

    def stop(self, timeout):
        """SIGTERM to every live worker's process group, SIGKILL to whatever is left after timeout."""
        for w in self.workers:
            if w.proc.poll() is None:
                _signal_group(w.proc, signal.SIGTERM)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and any(w.proc.poll() is None for w in self.workers):
            time.sleep(0.02)
        for w in self.workers:
            _signal_group(w.proc, signal.SIGKILL)  # also what the worker's own children left running
            w.proc.wait()
        self.join_pumps()

    def kill(self):
        for w in self.workers:
            _signal_group(w.proc, signal.SIGKILL)

    def join_pumps(self, timeout=2.0):
        deadline = time.monotonic() + timeout
        for w in self.workers:
            for pump in w.pumps:
                pump.join(max(0.0, deadline - time.monotonic()))


def _signal_group(proc, sig):
    try:
        os.killpg(proc.pid, sig)  # each worker leads its own session, so its pid is its group id
    except (ProcessLookupError, PermissionError):
        pass


def _worker_env(cfg, local_rank, rank, restart_count, error_file):
    return {
        "LOCAL_RANK": str(local_rank),
        "RANK": str(rank),
        "GROUP_RANK": str(cfg.node_rank),
        "ROLE_RANK": str(rank),
        "ROLE_NAME": cfg.role,
        "LOCAL_WORLD_SIZE": str(cfg.nproc),
        "WORLD_SIZE": str(cfg.world_size),
        "GROUP_WORLD_SIZE": str(cfg.nnodes),
        "ROLE_WORLD_SIZE": str(cfg.world_size),
        "MASTER_ADDR": cfg.master_addr,
        "MASTER_PORT": str(cfg.master_port),
        "TORCHELASTIC_RESTART_COUNT": str(restart_count),
        "TORCHELASTIC_MAX_RESTARTS": str(cfg.max_restarts),
        "TORCHELASTIC_RUN_ID": cfg.run_id,
        # no store is hosted here: rank 0's init_process_group creates the TCPStore server itself
        "TORCHELASTIC_USE_AGENT_STORE": "False",
        "TORCH_NCCL_ASYNC_ERROR_HANDLING": os.environ.get("TORCH_NCCL_ASYNC_ERROR_HANDLING", "1"),
        "TORCHELASTIC_ERROR_FILE": error_file,
    }


class _Config:
    def __init__(self, args):
        self.nnodes = _parse_nnodes(args.nnodes)
        self.nproc = _parse_nproc(args.nproc_per_node)
        self.node_rank = args.node_rank
        if not 0 <= self.node_rank < self.nnodes:
            raise LaunchConfigError(f"--node-rank must be in [0, {self.nnodes - 1}], got {self.node_rank}")
        self.world_size = self.nnodes * self.nproc
        self.master_addr, self.master_port = args.master_addr, args.master_port
        self.run_id = args.rdzv_id
        if args.rdzv_backend not in ("static", "c10d"):
            raise LaunchConfigError(f"--rdzv-backend must be 'static' or 'c10d', got {args.rdzv_backend!r}")
        if args.standalone:
            if self.nnodes != 1:
                raise LaunchConfigError("--standalone runs one node; for several give --node-rank and --master-addr")
            self.master_addr, self.master_port = "127.0.0.1", _free_port()
            self.run_id = str(uuid.uuid4())
        elif args.rdzv_backend == "c10d" and self.nnodes > 1:
            raise LaunchConfigError("ember.distributed.run assigns node ranks statically: use --rdzv-backend static "
                             "and give every node its --node-rank")
        if args.rdzv_endpoint and not args.standalone:
            host, sep, port = args.rdzv_endpoint.rpartition(":")
            if not sep:  # a bare host keeps --master-port
                host, port = port, ""
            try:
                self.master_port = int(port) if port else self.master_port
            except ValueError:
                raise LaunchConfigError(f"--rdzv-endpoint must be host[:port], got {args.rdzv_endpoint!r}") from None
            self.master_addr = host.strip("[]") or self.master_addr
        if not 0 < self.master_port < 65536:
            raise LaunchConfigError(f"--master-port must be in [1, 65535], got {self.master_port}")
        if args.max_restarts < 0:
            raise LaunchConfigError(f"--max-restarts must be >= 0, got {args.max_restarts}")
        self.max_restarts = args.max_restarts
        self.monitor_interval = args.monitor_interval
        self.stop_timeout = args.stop_timeout
        self.role = args.role
        self.redirects = _parse_std(args.redirects, self.nproc, "--redirects")
        self.tee = _parse_std(args.tee, self.nproc, "--tee")
        self.log_dir = args.log_dir
        if args.module and args.no_python:
            raise LaunchConfigError("--no-python and -m cannot be used together")
        if args.no_python:
            if shutil.which(args.training_script) is None:
                raise LaunchConfigError(f"--no-python: {args.training_script!r} is not an executable program")
            self.cmd = [args.training_script]
        elif args.module:
            self.cmd = [sys.executable, "-u", "-m", args.training_script]
        else:
            self.cmd = [sys.executable, "-u", args.training_script]
        self.cmd += args.training_script_args
        self.name = args.training_script


def _set_omp_threads(nproc):
    # n workers each spinning up one OpenMP thread per core would oversubscribe the machine n times
    if "OMP_NUM_THREADS" not in os.environ and nproc > 1:
        os.environ["OMP_NUM_THREADS"] = "1"
        print("*" * 60 + "\nOMP_NUM_THREADS is not set: each of the " f"{nproc} workers gets OMP_NUM_THREADS=1 so they "
              "do not oversubscribe the cores;\nset it yourself to tune intra-op parallelism.\n" + "*" * 60,
              file=sys.stderr, flush=True)


def run(args):
    """Launches and supervises this node's workers; returns when they all succeed, raises ChildFailedError
    when they fail past --max-restarts, SignalException when the launcher is told to stop."""
    cfg = _Config(args)
    _set_omp_threads(cfg.nproc)
    log_root = cfg.log_dir or tempfile.mkdtemp(prefix="ember_run_")
    os.makedirs(log_root, exist_ok=True)
    stopping = {"signal": None}
    group = None

    def on_signal(signum, frame):
        if stopping["signal"] is not None:  # a second signal while stopping: no more grace
            if group is not None:
                group.kill()
            return
        stopping["signal"] = signum
        raise SignalException(f"Process {os.getpid()} got signal: {signum}", sigval=signum)

    previous = {}
    if threading.current_thread() is threading.main_thread():  # Python delivers signals to that thread only
        previous = {s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP,
                                                              signal.SIGQUIT)}
    failed = False
    try:
        restart_count = 0
        while True:
            attempt_dir = os.path.join(log_root, f"attempt_{restart_count}")
            group = _WorkerGroup(cfg, attempt_dir, restart_count)
            group.start()
            failures = _watch(group, cfg.monitor_interval)
            if not failures:
                group.join_pumps()
                return
            group.stop(cfg.stop_timeout)
            if restart_count >= cfg.max_restarts:
                failed = True
                raise ChildFailedError(cfg.name, failures)
            restart_count += 1
            print(f"ember.distributed.run: worker group failed ({_summary(failures)}); restart "
                  f"{restart_count} of {cfg.max_restarts}", file=sys.stderr, flush=True)
    except BaseException:  # a signal, a spawn that failed half way: no worker outlives the launcher
        if group is not None:
            group.stop(cfg.stop_timeout)
        raise
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
        if not cfg.log_dir and not failed:  # after a failure the report points into it
            shutil.rmtree(log_root, ignore_errors=True)


def _watch(group, interval):
    while True:
        failures = group.failures()
        if failures:
            return failures
        if group.all_succeeded():
            return {}
        time.sleep(interval)


def _summary(failures):
    return ", ".join(f"rank {r}: {f.message}" for r, f in sorted(failures.items()))


@record
def main(args=None):
    run(parse_args(args))


if __name__ == "__main__":
    try:
        main()
    except ChildFailedError as e:
        print(e.format_msg(), file=sys.stderr, flush=True)
        sys.exit(1)
    except SignalException as e:
        print(f"ember.distributed.run: stopped the workers after {signal.Signals(e.sigval).name}",
              file=sys.stderr, flush=True)
        sys.exit(128 + e.sigval)
    except LaunchConfigError as e:
        print(f"ember.distributed.run: error: {e}", file=sys.stderr, flush=True)
        sys.exit(2)
