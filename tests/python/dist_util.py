"""Runs a function of tests/python/dist_workers.py in N processes (one machine, loopback) and
collects what each rank returned; a rank that fails reports its traceback."""
import os
import pickle
import socket
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
PYTHON_DIR = os.path.join(os.path.dirname(os.path.dirname(HERE)), "python")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class WorkerFailed(AssertionError):
    pass


def run(fn, world_size, *args, timeout=120, expect_fail=False, script="dist_workers.py"):
    """[rank 0's result, rank 1's, ...]; with expect_fail, [(returncode, stderr, result or None)] per rank.
    script: the worker file in this directory (dist_workers.py, or another with the same main())."""
    port = free_port()
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), WORLD_SIZE=str(world_size),
                   OMP_NUM_THREADS="1", PYTHONPATH=PYTHON_DIR + os.pathsep + os.environ.get("PYTHONPATH", ""))
        with open(os.path.join(tmp, "args.pkl"), "wb") as f:
            pickle.dump(args, f)
        procs = []
        for rank in range(world_size):
            procs.append(subprocess.Popen(
                [sys.executable, os.path.join(HERE, script), fn, tmp],
                env=dict(env, RANK=str(rank), LOCAL_RANK=str(rank)), stdout=subprocess.PIPE, stderr=subprocess.PIPE))
        outs = _wait_all(procs, timeout, fn)
        results = []
        for rank, (code, _, err) in enumerate(outs):
            path = os.path.join(tmp, f"{rank}.pkl")
            res = None
            if os.path.exists(path):
                with open(path, "rb") as f:
                    res = pickle.load(f)
            if expect_fail:
                results.append((code, err, res))
            elif code != 0:
                raise WorkerFailed(f"{fn}: rank {rank} exited with {code}:\n{err[-4000:]}")
            else:
                results.append(res)
        return results


def run_script(code, world_size, *args, timeout=120):
    """Runs `python -c code RANK WORLD_SIZE *args PORT` per rank; each rank's last stdout line, as a literal."""
    import ast
    port = free_port()
    env = dict(os.environ, OMP_NUM_THREADS="1", PYTHONPATH=PYTHON_DIR + os.pathsep + os.environ.get("PYTHONPATH", ""))
    procs = [subprocess.Popen([sys.executable, "-c", code, str(r), str(world_size), *args, str(port)], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE) for r in range(world_size)]
    results = []
    for r, (code, out, err) in enumerate(_wait_all(procs, timeout, "script")):
        if code != 0:
            raise WorkerFailed(f"script rank {r} exited with {code}:\n{err[-4000:]}")
        results.append(ast.literal_eval(out.strip().splitlines()[-1]))
    return results


def _wait_all(procs, timeout, what):
    """[(returncode, stdout, stderr)] per process; all are killed when one hangs."""
    outs = []
    for p in procs:
        try:
            out, err = p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            for q in procs:
                q.kill()
            raise WorkerFailed(f"{what}: a worker hung for {timeout}s")
        outs.append((p.returncode, out.decode(errors="replace"), err.decode(errors="replace")))
    return outs
