"""Property-based fuzzing of every op in ops.yaml: each generated call must return or raise an ordinary
Python exception within a time bound, never crash, hang or trip a sanitizer.

Calls are generated with Hypothesis from the ops' schemas, with edge values (0-size and 0-d tensors,
negative sizes and dims, 2**31, 2**62, -2**63, NaN/inf, huge expanded views, overlapping and
non-contiguous layouts). They run in a worker subprocess with a capped address space (or, under
ASan, a capped allocation size), so a crash or a hang is seen, recorded with its reproducer, and the
worker restarted. A call description is plain JSON: `python3 fuzz_ops.py --replay '<json>'` reruns one.

    python3 tests/fuzz/fuzz_ops.py --calls 20000 [--seed 0] [--report out.json]
The suite's tests/python/test_fuzz_ops.py runs a short campaign; scripts/sanitize.sh runs it under
ASan + UBSan.
"""
import argparse
import json
import os
import re
import select
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

# ---------------------------------------------------------------- the ops and their schemas


def _split_args(s):
    out, depth, cur = [], 0, ""
    for ch in s:
        if ch in "[(":
            depth += 1
        elif ch in "])":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        out.append(cur.strip())
    return out


def load_ops(path=os.path.join(ROOT, "ops.yaml")):
    """[{name, function, method, inplace, out, args: [{type, name, default, kwonly}]}] from ops.yaml."""
    import yaml
    ops = []
    for entry in yaml.safe_load(open(path)):
        func = entry["func"]
        name = func[:func.index("(")].split(".")[0]
        pyname = entry.get("python", name)
        variants = entry.get("variants", ["function", "method"])
        args, kwonly = [], False
        for a in _split_args(func[func.index("(") + 1:func.rindex(") ->")]):
            if a == "*":
                kwonly = True
                continue
            m = re.match(r"(\S+)\s+(\w+)(?:=(.*))?$", a)
            typ, aname, default = m.group(1), m.group(2), m.group(3)
            typ = re.sub(r"\([a-z]!?\)", "", typ)  # Tensor(a!) -> Tensor
            args.append({"type": typ, "name": aname, "default": default, "kwonly": kwonly})
        ops.append({"name": pyname, "function": "function" in variants, "method": "method" in variants
                    and bool(args) and args[0]["type"] == "Tensor", "inplace": bool(entry.get("inplace")),
                    "out": bool(entry.get("out")), "args": args})
    return ops


# ---------------------------------------------------------------- Hypothesis strategies for calls

EDGE_INTS = [0, 1, -1, 2, 3, -2, 4, 2**31 - 1, 2**31, -2**31, 2**32, 2**62, -2**62, 2**63 - 1, -2**63]
EDGE_FLOATS = [0.0, -0.0, 1.0, -1.0, 0.5, 2.0, 1e-300, 1e300, -1e300, float("nan"), float("inf"), float("-inf"),
               2.0**62, 3.5]
DTYPES = ["float32", "float64", "int64", "int32", "bool", "uint8", "int8", "int16", "float16", "bfloat16"]
STRINGS = ["mean", "sum", "none", "constant", "reflect", "replicate", "circular", "nearest", "linear", "bilinear",
           "bicubic", "trilinear", "area", "floor", "trunc", "tanh", "same", "valid", "fro", "nuc", "", "bogus"]
# schema types with a generator; the rest (Generator?, MemoryFormat?, TensorOptions) keep their defaults
KNOWN_TYPES = {"Tensor", "Tensor[]", "int", "int[]", "int[1]", "int[2]", "int[3]", "float", "float[]", "bool",
               "bool[]", "Scalar", "str", "ScalarType", "Generator", "MemoryFormat", "TensorOptions"}
LAYOUTS = ["contig", "contig", "contig", "transposed", "strided", "expanded", "overlap", "huge_expanded"]


def strategies():
    from hypothesis import strategies as st

    small_int = st.integers(-3, 5)
    edge_int = st.sampled_from(EDGE_INTS)
    any_int = st.one_of(small_int, small_int, small_int, edge_int)
    dim_size = st.one_of(st.integers(0, 4), st.integers(0, 4), st.integers(0, 4), st.sampled_from([0, 1, 7, 16]))
    shape = st.lists(dim_size, min_size=0, max_size=4)

    def tensor(dtypes=DTYPES):
        return st.fixed_dictionaries({
            "t": st.just("tensor"), "dtype": st.sampled_from(dtypes), "shape": shape,
            "layout": st.sampled_from(LAYOUTS), "fill": st.sampled_from(["normal", "special", "ints", "small"]),
            # views whose sizes overflow any product that skips their 0, and a large one to reduce
            "huge": st.sampled_from([[0, 2**62], [2**62, 0], [2**31, 0, 2**31], [1, 2**62, 0], [0, 2**31, 2**32],
                                     [2**20]]),
            "seed": st.integers(0, 2**16)})

    scalar = st.one_of(any_int, st.sampled_from(EDGE_FLOATS), st.booleans())

    def for_type(typ):
        opt = typ.endswith("?")
        base = typ.rstrip("?")
        if base == "Tensor":
            s = tensor()
        elif base.startswith("Tensor["):
            s = st.lists(tensor(), min_size=0, max_size=3)
        elif base == "int":
            s = any_int
        elif base.startswith("int["):
            s = st.one_of(st.lists(any_int, min_size=0, max_size=4), any_int)
        elif base == "float":
            s = st.one_of(st.sampled_from(EDGE_FLOATS), st.floats(-4, 4))
        elif base.startswith("float["):
            s = st.lists(st.sampled_from(EDGE_FLOATS), min_size=0, max_size=3)
        elif base == "bool":
            s = st.booleans()
        elif base.startswith("bool["):
            s = st.lists(st.booleans(), min_size=0, max_size=3)
        elif base == "Scalar":
            s = scalar
        elif base == "str":
            s = st.sampled_from(STRINGS)
        elif base == "ScalarType":
            s = st.builds(lambda d: {"t": "dtype", "v": d}, st.sampled_from(DTYPES))
        else:  # Generator, MemoryFormat, TensorOptions, Layout, Device: left at their defaults
            return None
        return st.one_of(st.none(), s) if opt else s

    @st.composite
    def call(draw, ops):
        op = draw(st.sampled_from(ops))
        forms = (["function"] if op["function"] else []) + (["method"] if op["method"] else [])
        if op["inplace"]:
            forms.append("inplace")
        if op["out"]:
            forms.append("out")
        form = draw(st.sampled_from(forms or ["function"]))
        args, kwargs = [], {}
        for a in op["args"]:
            s = for_type(a["type"])
            if s is None:
                continue
            # defaulted arguments are passed a third of the time, keyword-only ones by keyword
            if a["default"] is not None and draw(st.integers(0, 2)) > 0:
                continue
            v = draw(s)
            if a["kwonly"]:
                kwargs[a["name"]] = v
            elif kwargs:  # a skipped positional forces the rest to keywords
                kwargs[a["name"]] = v
            else:
                args.append(v)
        if form == "out":
            kwargs["out"] = draw(tensor())
        return {"op": op["name"], "form": form, "args": args, "kwargs": kwargs}

    return call


# ---------------------------------------------------------------- the worker: builds and runs calls


def _make_tensor(ember, np, spec):
    rng = np.random.default_rng(spec["seed"])
    dtype = getattr(ember, spec["dtype"])
    layout, shape = spec["layout"], list(spec["shape"])
    if layout == "huge_expanded":  # a valid view with huge sizes and (almost) no memory behind it
        return ember.zeros([1] * len(spec["huge"]), dtype=dtype).expand(*spec["huge"])

    def values(shp):
        n = int(np.prod(shp)) if shp else 1
        fill = spec["fill"]
        if fill == "special":
            v = rng.choice(np.array([0.0, -0.0, 1.0, -1.0, np.nan, np.inf, -np.inf, 1e38, -1e38, 2.0**31, 2.0**62]), n)
        elif fill == "ints":
            v = rng.choice(np.array([0, 1, -1, 127, -128, 255, 2**31 - 1, -2**31, 2**62, -2**63, 2**63 - 1],
                                    dtype=np.float64), n)
        elif fill == "small":
            v = rng.integers(0, 4, n).astype(np.float64)
        else:
            v = rng.standard_normal(n) * 3
        if spec["dtype"] in ("float32", "float64", "float16", "bfloat16"):
            t = ember.tensor(v.reshape(shp).tolist() if shp else float(v[0]), dtype=ember.float64)
            return t.to(dtype)
        if spec["dtype"] == "bool":
            return ember.tensor((v.reshape(shp) != 0).tolist() if shp else bool(v[0] != 0))
        info = np.iinfo(getattr(np, spec["dtype"]))
        iv = np.nan_to_num(v, nan=0, posinf=info.max, neginf=info.min)
        iv = np.clip(iv, info.min, info.max).astype(np.int64)
        return ember.tensor(iv.reshape(shp).tolist() if shp else int(iv[0]), dtype=dtype)

    if layout == "transposed" and len(shape) >= 2:
        return values(shape[::-1]).permute(*reversed(range(len(shape))))
    if layout == "strided" and shape:
        return values(shape[:-1] + [shape[-1] * 2])[..., ::2]
    if layout == "expanded" and shape:
        small = [1 if i % 2 == 0 else s for i, s in enumerate(shape)]
        return values(small).expand(*shape)
    if layout == "overlap" and shape:  # windows that share elements: strides smaller than the sizes
        n = sum(max(s - 1, 0) for s in shape) + 1
        return values([n]).as_strided(shape, [1] * len(shape))
    return values(shape)


def _materialize(ember, np, v):
    if isinstance(v, dict):
        if v.get("t") == "tensor":
            return _make_tensor(ember, np, v)
        if v.get("t") == "dtype":
            return getattr(ember, v["v"])
    if isinstance(v, list):
        return [_materialize(ember, np, x) for x in v]
    return v


def _touch(ember, r, depth=0):
    """Reads every element of a (not too large) result: under ASan a view past its storage shows."""
    if isinstance(r, ember.Tensor):
        if r.numel() <= (1 << 20):
            r.contiguous()
            repr(r.shape)
    elif isinstance(r, (tuple, list)) and depth < 2:
        for x in r[:64]:
            _touch(ember, x, depth + 1)


def run_call(ember, np, call):
    args = _materialize(ember, np, call["args"])
    kwargs = {k: _materialize(ember, np, v) for k, v in call["kwargs"].items()}
    name, form = call["op"], call["form"]
    if form == "function":
        fn = getattr(ember._C._ops, name, None) or getattr(ember, name)
    else:
        self_ = args.pop(0) if args else kwargs.pop(next(iter(kwargs)), None)
        if not isinstance(self_, ember.Tensor):
            raise TypeError("fuzz: method call without a tensor self")
        fn = getattr(self_, name + "_" if form == "inplace" else name)
    r = fn(*args, **kwargs)
    _touch(ember, r)


def worker_main():
    import resource
    if not os.environ.get("EMBER_SANITIZED"):
        # a runaway allocation fails fast instead of paging the machine (an output of a few GiB is an
        # ordinary MemoryError-like RuntimeError here, as it is on a machine without that memory)
        cap = int(os.environ.get("EMBER_FUZZ_AS_GB", "3")) << 30
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
    import warnings
    warnings.simplefilter("ignore")
    import numpy as np
    import ember
    ember.set_num_threads(1)
    out = sys.stdout
    for line in sys.stdin:
        call = json.loads(line)
        status, detail = "ok", ""
        try:
            run_call(ember, np, call)
        except SystemError as e:  # a binding returned NULL without an exception set: a bug
            status, detail = "systemerror", repr(e)[:300]
        except Exception as e:  # an ordinary exception is a fine answer to bad input
            status, detail = "raised", type(e).__name__
        out.write(json.dumps({"status": status, "detail": detail}) + "\n")
        out.flush()


# ---------------------------------------------------------------- the runner: one worker, restarted on death


class Runner:
    def __init__(self, timeout=10.0, env=None, restart_every=5000):
        self.timeout, self.env, self.restart_every = timeout, env, restart_every
        self.proc, self.calls = None, 0

    def _start(self):
        env = dict(os.environ if self.env is None else self.env)
        env["PYTHONUNBUFFERED"] = "1"
        self.stderr_path = os.path.join(os.environ.get("TMPDIR", "/tmp"), f"ember_fuzz_{os.getpid()}.err")
        self.stderr = open(self.stderr_path, "wb")
        self.proc = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--worker"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=self.stderr, env=env)
        self.calls = 0

    def stop(self):
        if self.proc:
            self.proc.kill()
            self.proc.wait()
            self.stderr.close()
            self.proc = None

    def _stderr_tail(self):
        self.stderr.flush()
        with open(self.stderr_path, "rb") as f:
            return f.read()[-3000:].decode(errors="replace")

    def run(self, call):
        """(status, detail): status is ok / raised (fine), or crash / hang / systemerror (failures)."""
        if self.proc is None or self.calls >= self.restart_every:
            self.stop()
            self._start()
        self.calls += 1
        try:
            self.proc.stdin.write((json.dumps(call) + "\n").encode())
            self.proc.stdin.flush()
        except BrokenPipeError:
            pass
        ready, _, _ = select.select([self.proc.stdout], [], [], self.timeout)
        line = self.proc.stdout.readline() if ready else b""
        if line:
            r = json.loads(line)
            return r["status"], r["detail"]
        hung = not ready
        self.proc.kill()
        self.proc.wait()
        detail = self._stderr_tail()
        self.stderr.close()
        self.proc = None
        return ("hang", f"no answer in {self.timeout}s") if hung else ("crash", detail)


FAILURES = ("crash", "hang", "systemerror")


def failure_signature(status, detail):
    """What makes two failures the same bug: the sanitizer's message and the first Ember frame."""
    lines = detail.splitlines()
    msg = next((ln for ln in lines if "runtime error" in ln or "ERROR: AddressSanitizer" in ln or
                ln.startswith("ember:")), "")
    msg = re.sub(r"0x[0-9a-f]+|\d+", "N", msg.split(": ", 1)[-1] if "runtime error" in msg else msg)[:160]
    frame = next((ln.split(" in ", 1)[1].split(" ")[0] for ln in lines if " in ember::" in ln), "")
    return f"{status}|{msg}|{frame}"


def campaign(calls, seed=0, timeout=10.0, ops=None, progress=True):
    """Runs `calls` generated calls; returns the report (counts, failures with reproducers)."""
    from hypothesis import HealthCheck, Phase, given, settings
    ops = ops or load_ops()
    runner = Runner(timeout=timeout)
    report = {"calls": 0, "ok": 0, "raised": 0, "failures": [], "ops": len(ops), "seconds": 0.0}
    seen = set()
    start = time.time()

    @settings(max_examples=calls, deadline=None, database=None, phases=[Phase.generate], derandomize=False,
              suppress_health_check=list(HealthCheck))
    @given(strategies()(ops))
    def one(call):
        status, detail = runner.run(call)
        report["calls"] += 1
        if status in FAILURES:
            sig = failure_signature(status, detail)
            first = sig not in seen
            seen.add(sig)
            report["failures"].append({"status": status, "call": call, "signature": sig,
                                       "detail": detail if first else ""})
            if first:  # Hypothesis explores around a failure: print each distinct one once
                print(f"[fuzz] {status}: {json.dumps(call)}\n{detail}", file=sys.stderr, flush=True)
        else:
            report[status] += 1
        if progress and report["calls"] % 5000 == 0:
            print(f"[fuzz] {report['calls']} calls, {len(report['failures'])} failures, "
                  f"{time.time() - start:.0f}s", flush=True)

    import random
    random.seed(seed)
    from hypothesis import seed as hseed
    try:
        hseed(seed)(one)()
    finally:
        runner.stop()
    report["seconds"] = round(time.time() - start, 1)
    return report


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--worker", action="store_true")
    p.add_argument("--calls", type=int, default=2000)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--timeout", type=float, default=float(os.environ.get("EMBER_FUZZ_TIMEOUT", "20")))
    p.add_argument("--report")
    p.add_argument("--replay", help="one call as JSON (a reproducer from a report)")
    p.add_argument("--replay-report", help="rerun every failing call of a --report file (after a fix)")
    a = p.parse_args()
    if a.worker:
        return worker_main()
    if a.replay or a.replay_report:
        calls = [json.loads(a.replay)] if a.replay else [f["call"] for f in json.load(open(a.replay_report))["failures"]]
        runner = Runner(timeout=a.timeout)
        statuses = [runner.run(c) for c in calls]
        runner.stop()
        for c, (status, detail) in zip(calls, statuses):
            print(status, json.dumps(c)[:200], detail[-300:] if status in FAILURES else detail)
        sys.exit(1 if any(st in FAILURES for st, _ in statuses) else 0)
    report = campaign(a.calls, a.seed, a.timeout)
    if a.report:
        with open(a.report, "w") as f:
            json.dump(report, f, indent=1)
    n = len(report["failures"])
    distinct = len({f["signature"] for f in report["failures"]})
    print(f"[fuzz] {report['calls']} calls over {report['ops']} ops in {report['seconds']}s: {report['ok']} returned, "
          f"{report['raised']} raised an ordinary exception, {n} crashed/hung ({distinct} distinct)")
    sys.exit(1 if n else 0)


if __name__ == "__main__":
    main()
