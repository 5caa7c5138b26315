"""python -m ember.distributed.run: worker environments (against torchrun's), failures, signals, restarts,
several nodes, output redirection, and the @record error-file protocol."""
import json
import os
import re
import signal
import subprocess
import sys
import textwrap
import time

import pytest

import ember
from ember.distributed import run as launcher
from ember.distributed.elastic.multiprocessing.errors import ChildFailedError, ProcessFailure, record

PYTHON_DIR = os.path.dirname(os.path.dirname(ember.__file__))

# what a worker writes: the environment the launcher added, its argv and pid
ENV_DUMP = """
import json, os, sys
base = set(json.loads(os.environ["BASE_KEYS"]))
added = {k: v for k, v in os.environ.items() if k not in base}
with open(os.path.join(os.environ["OUT_DIR"], "rank%s.json" % os.environ["RANK"]), "w") as f:
    json.dump({"env": added, "argv": sys.argv[1:], "name": __name__}, f)
"""

TORCH_ONLY_KEYS = {"TORCHELASTIC_SIGNALS_TO_HANDLE", "TORCHELASTIC_USE_AGENT_STORE", "TORCHELASTIC_ERROR_FILE"}


def _env(tmp_path, **extra):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([PYTHON_DIR, str(tmp_path)]), OUT_DIR=str(tmp_path))
    env.pop("OMP_NUM_THREADS", None)
    env.update(extra)
    env["BASE_KEYS"] = json.dumps(sorted(env) + ["BASE_KEYS"])
    return env


def _launch(tmp_path, *args, env=None, timeout=60, module="ember.distributed.run"):
    return subprocess.run([sys.executable, "-m", module, *args], cwd=tmp_path, env=env or _env(tmp_path),
                          capture_output=True, text=True, timeout=timeout)


def _write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return str(path)


def _dumps(tmp_path, world):
    return [json.loads((tmp_path / f"rank{r}.json").read_text()) for r in range(world)]


def _dead(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


@pytest.mark.parametrize("nproc", [2, 4])
def test_worker_environment(tmp_path, nproc):
    script = _write(tmp_path, "dump.py", ENV_DUMP)
    r = _launch(tmp_path, "--nproc-per-node", str(nproc), "--master-port", "29581", script)
    assert r.returncode == 0, r.stderr
    assert "OMP_NUM_THREADS" in r.stderr  # the oversubscription warning
    dumps = _dumps(tmp_path, nproc)
    for rank, d in enumerate(dumps):
        e = d["env"]
        assert (e["RANK"], e["LOCAL_RANK"], e["ROLE_RANK"]) == (str(rank),) * 3
        assert (e["WORLD_SIZE"], e["LOCAL_WORLD_SIZE"], e["ROLE_WORLD_SIZE"]) == (str(nproc),) * 3
        assert (e["GROUP_RANK"], e["GROUP_WORLD_SIZE"], e["ROLE_NAME"]) == ("0", "1", "default")
        assert (e["MASTER_ADDR"], e["MASTER_PORT"]) == ("127.0.0.1", "29581")
        assert (e["TORCHELASTIC_RUN_ID"], e["TORCHELASTIC_RESTART_COUNT"], e["TORCHELASTIC_MAX_RESTARTS"]) == (
            "none", "0", "0")
        assert e["OMP_NUM_THREADS"] == "1"
        assert e["TORCHELASTIC_ERROR_FILE"].endswith(os.path.join(str(rank), "error.json"))
    assert len({d["env"]["TORCHELASTIC_ERROR_FILE"] for d in dumps}) == nproc


def test_environment_matches_torchrun(tmp_path):
    pytest.importorskip("torch")
    script = _write(tmp_path, "dump.py", ENV_DUMP)
    results = []
    port = str(launcher._free_port())  # torchrun binds its store there
    for module in ("torch.distributed.run", "ember.distributed.run"):
        r = _launch(tmp_path, "--nproc-per-node", "2", "--master-port", port, script, "x", module=module)
        assert r.returncode == 0, r.stderr
        results.append([{k: v for k, v in d["env"].items() if k not in TORCH_ONLY_KEYS} for d in _dumps(tmp_path, 2)])
    assert results[0] == results[1]


def test_omp_threads_kept_when_set(tmp_path):
    script = _write(tmp_path, "dump.py", ENV_DUMP)
    r = _launch(tmp_path, "--nproc-per-node", "2", script, env=_env(tmp_path, OMP_NUM_THREADS="3"))
    assert r.returncode == 0, r.stderr
    assert "OMP_NUM_THREADS" not in r.stderr
    assert [d["env"].get("OMP_NUM_THREADS") for d in _dumps(tmp_path, 2)] == [None, None]  # inherited, not added
    r = _launch(tmp_path, "--nproc-per-node", "1", script)
    assert "OMP_NUM_THREADS" not in r.stderr and "OMP_NUM_THREADS" not in _dumps(tmp_path, 1)[0]["env"]


def test_script_arguments_pass_through(tmp_path):
    script = _write(tmp_path, "dump.py", ENV_DUMP)
    args = ["--nproc-per-node", "5", "--lr=0.1", "a b", "-m", "x"]
    r = _launch(tmp_path, "--nproc_per_node", "2", script, *args)
    assert r.returncode == 0, r.stderr
    assert [d["argv"] for d in _dumps(tmp_path, 2)] == [args, args]


def test_module_mode(tmp_path):
    pkg = tmp_path / "trainpkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    _write(pkg, "main.py", ENV_DUMP)
    r = _launch(tmp_path, "--nproc-per-node", "2", "-m", "trainpkg.main", "--epochs", "3")
    assert r.returncode == 0, r.stderr
    assert [(d["name"], d["argv"]) for d in _dumps(tmp_path, 2)] == [("__main__", ["--epochs", "3"])] * 2
    r = _launch(tmp_path, "--no-python", "-m", "trainpkg.main")
    assert r.returncode == 2 and "--no-python" in r.stderr


def test_no_python_runs_executable(tmp_path):
    script = _write(tmp_path, "dump.sh", '#!/bin/sh\necho "rank=$RANK args=$*" > "$OUT_DIR/sh$RANK.txt"\n')
    os.chmod(script, 0o755)
    r = _launch(tmp_path, "--nproc-per-node", "2", "--no-python", script, "p", "q")
    assert r.returncode == 0, r.stderr
    assert [(tmp_path / f"sh{i}.txt").read_text().strip() for i in range(2)] == ["rank=0 args=p q", "rank=1 args=p q"]
    r = _launch(tmp_path, "--nproc-per-node", "2", "--no-python", str(tmp_path / "missing.sh"))
    assert r.returncode == 2 and "not an executable" in r.stderr


FAILING = """
import os, sys, time
from ember.distributed.elastic.multiprocessing.errors import record

@record
def main():
    rank = int(os.environ["RANK"])
    open(os.path.join(os.environ["OUT_DIR"], "pid%d" % rank), "w").write(str(os.getpid()))
    if rank == 1:
        time.sleep(0.5)
        raise ValueError("bad batch on rank one")
    time.sleep(60)

if __name__ == "__main__":
    main()
"""


@pytest.mark.parametrize("recorded", [True, False])
def test_failure_stops_the_group(tmp_path, recorded):
    text = FAILING if recorded else FAILING.replace("@record", "")
    script = _write(tmp_path, "fail.py", text)
    start = time.monotonic()
    r = _launch(tmp_path, "--nproc-per-node", "3", "--log-dir", str(tmp_path / "logs"), script)
    elapsed = time.monotonic() - start
    assert r.returncode == 1
    assert elapsed < 10, elapsed
    assert "fail.py FAILED" in r.stderr
    assert "rank      : 1 (local_rank: 1)" in r.stderr and "exitcode  : 1" in r.stderr
    assert "error     : ValueError: bad batch on rank one" in r.stderr
    assert 'raise ValueError("bad batch on rank one")' in r.stderr.split("FAILED")[1]  # the traceback
    error_file = os.path.join(str(tmp_path / "logs"), "attempt_0", "1", "error.json")
    assert os.path.isfile(error_file) == recorded
    assert (f"error_file: {error_file}" in r.stderr) == recorded
    if recorded:
        data = json.load(open(error_file))["message"]
        assert data["message"] == "ValueError: bad batch on rank one"
        assert "Traceback" in data["extraInfo"]["py_callstack"] and int(data["extraInfo"]["timestamp"]) > 0
    for rank in (0, 2):  # the sleepers were stopped, not left running
        assert _dead(int((tmp_path / f"pid{rank}").read_text()))
    assert "[0]:" not in r.stderr and "[2]:" not in r.stderr  # stopped workers are not failures


def test_worker_killed_by_signal(tmp_path):
    script = _write(tmp_path, "die.py", """
        import os, signal, time
        if os.environ["RANK"] == "0":
            os.kill(os.getpid(), signal.SIGKILL)
        time.sleep(60)
        """)
    start = time.monotonic()
    r = _launch(tmp_path, "--nproc-per-node", "2", script)
    assert r.returncode == 1 and time.monotonic() - start < 10
    assert "exitcode  : -9 (SIGKILL)" in r.stderr and "rank      : 0" in r.stderr
    assert "Signal 9 (SIGKILL) received by PID" in r.stderr


def test_worker_error_without_traceback(tmp_path):
    script = _write(tmp_path, "exit.py", """
        import os, sys
        if os.environ["RANK"] == "1":
            sys.exit("cannot open the dataset")
        """)
    r = _launch(tmp_path, "--nproc-per-node", "2", script)
    assert r.returncode == 1
    assert "error     : cannot open the dataset" in r.stderr and "rank      : 1" in r.stderr


SLEEPER = """
import os, signal, sys, time
if "ignore-term" in sys.argv:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
open(os.path.join(os.environ["OUT_DIR"], "pid%s" % os.environ["RANK"]), "w").write(str(os.getpid()))
time.sleep(60)
"""


def _start_sleepers(tmp_path, *extra):
    script = _write(tmp_path, "sleep.py", SLEEPER)
    proc = subprocess.Popen([sys.executable, "-m", "ember.distributed.run", "--nproc-per-node", "2", *extra, script,
                             *([] if "--stop-timeout" not in extra else ["ignore-term"])],
                            cwd=tmp_path, env=_env(tmp_path), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 30
    while not all((tmp_path / f"pid{r}").exists() and (tmp_path / f"pid{r}").read_text() for r in range(2)):
        assert time.monotonic() < deadline and proc.poll() is None, proc.communicate()
        time.sleep(0.05)
    return proc, [int((tmp_path / f"pid{r}").read_text()) for r in range(2)]


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_signal_to_launcher_stops_workers(tmp_path, sig):
    proc, pids = _start_sleepers(tmp_path)
    start = time.monotonic()
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 128 + sig
    assert time.monotonic() - start < 10
    assert signal.Signals(sig).name in err
    assert all(_dead(pid) for pid in pids)


def test_stubborn_worker_gets_sigkill(tmp_path):
    proc, pids = _start_sleepers(tmp_path, "--stop-timeout", "1")
    start = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    proc.communicate(timeout=30)
    assert proc.returncode == 128 + signal.SIGTERM
    assert 1 <= time.monotonic() - start < 10
    assert all(_dead(pid) for pid in pids)


def test_killed_launcher_leaves_no_orphans(tmp_path):
    proc, pids = _start_sleepers(tmp_path)
    proc.kill()
    proc.communicate(timeout=30)
    deadline = time.monotonic() + 5
    while not all(_dead(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert all(_dead(pid) for pid in pids)


def test_two_nodes_on_one_machine(tmp_path):
    script = _write(tmp_path, "dump.py", ENV_DUMP)
    common = ["--nnodes", "2", "--nproc-per-node", "2", "--master-addr", "127.0.0.1", "--master-port", "29587"]
    procs = [subprocess.Popen([sys.executable, "-m", "ember.distributed.run", *common, "--node-rank", str(node),
                               script], cwd=tmp_path, env=_env(tmp_path), stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for node in (0, 1)]
    for p in procs:
        p.communicate(timeout=60)
        assert p.returncode == 0
    envs = [d["env"] for d in _dumps(tmp_path, 4)]
    assert [(e["RANK"], e["LOCAL_RANK"], e["GROUP_RANK"]) for e in envs] == [
        ("0", "0", "0"), ("1", "1", "0"), ("2", "0", "1"), ("3", "1", "1")]
    assert {(e["WORLD_SIZE"], e["LOCAL_WORLD_SIZE"], e["GROUP_WORLD_SIZE"], e["MASTER_PORT"]) for e in envs} == {
        ("4", "2", "2", "29587")}


def test_standalone_picks_a_free_port(tmp_path):
    script = _write(tmp_path, "dump.py", ENV_DUMP)
    r = _launch(tmp_path, "--standalone", "--nproc-per-node", "2", script)
    assert r.returncode == 0, r.stderr
    e0, e1 = [d["env"] for d in _dumps(tmp_path, 2)]
    assert e0["MASTER_ADDR"] == "127.0.0.1" and e0["MASTER_PORT"] == e1["MASTER_PORT"]
    assert e0["TORCHELASTIC_RUN_ID"] == e1["TORCHELASTIC_RUN_ID"] and len(e0["TORCHELASTIC_RUN_ID"]) == 36
    r = _launch(tmp_path, "--standalone", "--nproc-per-node", "1", script)
    assert _dumps(tmp_path, 1)[0]["env"]["TORCHELASTIC_RUN_ID"] != e0["TORCHELASTIC_RUN_ID"]


def test_rdzv_endpoint_names_the_master(tmp_path):
    script = _write(tmp_path, "dump.py", ENV_DUMP)
    for endpoint, expected in (("localhost:29591", ("localhost", "29591")), ("10.1.2.3", ("10.1.2.3", "29500")),
                               ("[::1]:29592", ("::1", "29592"))):
        r = _launch(tmp_path, "--rdzv-endpoint", endpoint, script)
        assert r.returncode == 0, r.stderr
        e = _dumps(tmp_path, 1)[0]["env"]
        assert (e["MASTER_ADDR"], e["MASTER_PORT"]) == expected
    r = _launch(tmp_path, "--rdzv-endpoint", "host:port", script)
    assert r.returncode == 2 and "--rdzv-endpoint" in r.stderr


def test_restarts(tmp_path):
    script = _write(tmp_path, "flaky.py", """
        import os, sys
        attempt = os.environ["TORCHELASTIC_RESTART_COUNT"]
        open(os.path.join(os.environ["OUT_DIR"], "attempt%s_rank%s" % (attempt, os.environ["RANK"])), "w").close()
        if os.environ["RANK"] == "1" and int(attempt) < int(sys.argv[1]):
            raise RuntimeError("flaky on attempt " + attempt)
        """)
    r = _launch(tmp_path, "--nproc-per-node", "2", "--max-restarts", "2", script, "1")
    assert r.returncode == 0, r.stderr
    assert "restart 1 of 2" in r.stderr and "restart 2" not in r.stderr
    assert {p.name for p in tmp_path.glob("attempt*")} == {f"attempt{a}_rank{r}" for a in (0, 1) for r in (0, 1)}
    r = _launch(tmp_path, "--nproc-per-node", "2", "--max-restarts", "1", script, "5")
    assert r.returncode == 1 and "RuntimeError: flaky on attempt 1" in r.stderr


def test_tee_and_redirects(tmp_path):
    script = _write(tmp_path, "talk.py", """
        import os, sys
        print("out of", os.environ["RANK"])
        # one write: without --tee both workers share the launcher's stderr, and print()'s pieces of
        # their lines could interleave ("err of err of1 0")
        sys.stderr.write("err of " + os.environ["RANK"] + chr(10))
        for i in range(300):
            print("line", i, "of", os.environ["RANK"])
        """)
    logs = tmp_path / "logs"
    r = _launch(tmp_path, "--nproc-per-node", "2", "--tee", "3", "--log-dir", str(logs), script)
    assert r.returncode == 0, r.stderr
    assert "[default0]:out of 0" in r.stdout and "[default1]:out of 1" in r.stdout
    # print writes a line in pieces (python -u): the prefixed lines of the two workers never mix
    assert all(re.fullmatch(r"\[default(\d)\]:(out of \1|line \d+ of \1)", line) for line in r.stdout.splitlines())
    assert len(r.stdout.splitlines()) == 2 * 301
    assert "[default1]:err of 1" in r.stderr
    assert (logs / "attempt_0" / "1" / "stdout.log").read_text().startswith("out of 1\nline 0 of 1\n")
    assert (logs / "attempt_0" / "0" / "stderr.log").read_text() == "err of 0\n"
    r = _launch(tmp_path, "--nproc-per-node", "2", "--redirects", "0:1", "--log-dir", str(tmp_path / "l2"), script)
    assert r.returncode == 0 and "out of 0" not in r.stdout and "out of 1" in r.stdout and "err of 0" in r.stderr
    assert (tmp_path / "l2" / "attempt_0" / "0" / "stdout.log").read_text().endswith("line 299 of 0\n")


@pytest.mark.parametrize("args,message", [
    (["--nnodes", "1:2"], "fixed number of nodes"),
    (["--nnodes", "2", "--node-rank", "2"], "--node-rank"),
    (["--nproc-per-node", "0"], "at least 1"),
    (["--nproc-per-node", "many"], "--nproc-per-node"),
    (["--standalone", "--nnodes", "2"], "--standalone"),
    (["--redirects", "7"], "--redirects"),
    (["--max-restarts", "-1"], "--max-restarts"),
])
def test_bad_arguments(tmp_path, args, message):
    script = _write(tmp_path, "dump.py", ENV_DUMP)
    r = _launch(tmp_path, *args, script)
    assert r.returncode == 2 and message in r.stderr
    assert not list(tmp_path.glob("rank*.json"))


def test_main_in_process(tmp_path, monkeypatch):
    script = _write(tmp_path, "dump.py", ENV_DUMP)
    for k, v in _env(tmp_path, OMP_NUM_THREADS="1").items():
        monkeypatch.setenv(k, v)
    before = signal.getsignal(signal.SIGTERM)
    assert launcher.main(["--nproc-per-node", "2", script]) is None
    assert len(_dumps(tmp_path, 2)) == 2
    fail = _write(tmp_path, "fail.py", FAILING)
    with pytest.raises(ChildFailedError) as info:
        launcher.main(["--nproc-per-node", "2", fail])
    rank, failure = info.value.get_first_failure()
    assert rank == 1 and failure.exitcode == 1 and failure.message == "ValueError: bad batch on rank one"
    assert signal.getsignal(signal.SIGTERM) is before  # the launcher's handlers were put back
    with pytest.raises(launcher.LaunchConfigError):
        launcher.main(["--nnodes", "0", script])


def test_record_writes_torch_layout(tmp_path, monkeypatch):
    error_file = tmp_path / "error.json"
    monkeypatch.setenv("TORCHELASTIC_ERROR_FILE", str(error_file))

    @record
    def crash(x):
        raise KeyError(x)

    with pytest.raises(KeyError):
        crash("missing")
    data = json.loads(error_file.read_text())
    assert data["message"]["message"] == "KeyError: 'missing'"
    assert "in crash" in data["message"]["extraInfo"]["py_callstack"]
    failure = ProcessFailure(3, 1234, 1, str(error_file))
    assert failure.message == "KeyError: 'missing'" and "in crash" in failure.traceback

    @record
    def finish():
        sys.exit(0)

    error_file.unlink()
    assert finish() is None and not error_file.exists()
    assert record(lambda: 5)() == 5


def test_record_matches_torch_error_file(tmp_path, monkeypatch):
    pytest.importorskip("torch")
    from torch.distributed.elastic.multiprocessing.errors import record as torch_record
    files = []
    for deco in (record, torch_record):
        path = tmp_path / f"err{len(files)}.json"
        monkeypatch.setenv("TORCHELASTIC_ERROR_FILE", str(path))

        @deco
        def crash():
            raise ValueError("same")

        with pytest.raises(ValueError):
            crash()
        files.append(json.loads(path.read_text()))
    ours, theirs = files
    assert ours["message"]["message"] == theirs["message"]["message"]
    assert set(ours["message"]["extraInfo"]) == set(theirs["message"]["extraInfo"])


def test_root_cause_is_the_earliest_failure(tmp_path):
    files = []
    for rank, when in ((0, 1000.7), (1, 1000.2), (2, 1000.9)):
        path = tmp_path / f"e{rank}.json"
        path.write_text(json.dumps({"message": {"message": f"E{rank}", "extraInfo": {"py_callstack": "",
                                                                                   "timestamp": "1000"}}}))
        os.utime(path, (when, when))
        files.append(str(path))
    failures = {r: ProcessFailure(r, 100 + r, 1, files[r], rank=r) for r in range(3)}
    failures[3] = ProcessFailure(3, 103, -15, None, rank=3)  # no error file: seen now, later than the others
    err = ChildFailedError("job.py", failures)
    assert err.get_first_failure()[0] == 1
    text = err.format_msg()
    assert text.index("error     : E1") < text.index("Other failures") < text.index("error     : E0")
    assert "Signal 15 (SIGTERM) received by PID 103" in text


def test_nproc_spellings():
    assert launcher._parse_nproc("3") == 3
    assert launcher._parse_nproc("cpu") == os.cpu_count()
    expected = ember.cuda.device_count() if ember.cuda.is_available() else os.cpu_count()
    assert launcher._parse_nproc("auto") == expected
    if not ember.cuda.is_available():
        with pytest.raises(launcher.LaunchConfigError, match="CUDA"):
            launcher._parse_nproc("gpu")
    else:
        assert launcher._parse_nproc("gpu") == ember.cuda.device_count()
