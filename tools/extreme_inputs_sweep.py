"""Hangs and crashes on extreme inputs: PyTorch's OpInfo samples (as tools/opinfo_sweep.py takes them)
with inf/NaN planted in their floating tensors, or int64's extremes (and -1, 0) in their integer ones,
through Ember. Values are not compared (opinfo_sweep.py does that); an op only has to answer or raise.
A bug finder, not a test.

Each op runs in a worker process that prints its name first; a worker that dies (a crash) or stops
answering (a hang) is reported with the op it was in, and a new worker goes on from the next op.

    PYTHONPATH=python python3 tools/extreme_inputs_sweep.py [--dtype float64|float32|int64] [--timeout 120]
"""
import argparse
import math
import os
import subprocess
import sys
import warnings

FILLS = {"float64": (math.inf, -math.inf, math.nan), "float32": (math.inf, -math.inf, math.nan),
         "int64": (-2**63, 2**63 - 1, -1, 0)}


def worker(dtype, start):
    warnings.simplefilter("ignore")
    sys.path.insert(0, os.path.dirname(__file__))
    import opinfo_sweep as S
    import torch
    tdt = getattr(torch, dtype)
    names = [op.name + ("." + op.variant_test_name if op.variant_test_name else "") for op in S.op_db]
    for name, op in list(zip(names, S.op_db))[start:]:
        print("START", name, flush=True)
        fn = S.ember_variant(op)
        if fn is None:
            continue
        try:
            samples = list(op.sample_inputs("cpu", tdt))[:4]
        except Exception:  # noqa: BLE001 - torch's sample generator itself
            continue
        for s in samples:
            for fill in FILLS[dtype]:
                def plant(t):
                    if isinstance(t, torch.Tensor) and t.dtype == tdt and t.numel() > 0:
                        t = t.detach().clone()
                        t.view(-1)[0] = fill
                        t.view(-1)[-1] = fill
                    return t
                try:
                    fn(S.to_ember(plant(s.input)), *[S.to_ember(plant(a)) for a in s.args],
                       **{k: S.to_ember(plant(v)) for k, v in s.kwargs.items()})
                except Exception:  # noqa: BLE001 - raising is a fine answer here
                    pass
    print("DONE", flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dtype", default="float64", choices=sorted(FILLS))
    ap.add_argument("--timeout", type=int, default=120, help="seconds without a new op before a hang is declared")
    ap.add_argument("--worker", type=int, default=-1, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.worker >= 0:
        return worker(a.dtype, a.worker)
    sys.path.insert(0, os.path.dirname(__file__))
    import opinfo_sweep as S
    total, start, bad = len(S.op_db), 0, []
    while start < total:
        p = subprocess.Popen([sys.executable, __file__, "--dtype", a.dtype, "--worker", str(start)],
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        current, index = None, start - 1
        import selectors
        sel = selectors.DefaultSelector()
        sel.register(p.stdout, selectors.EVENT_READ)
        done = False
        while True:
            if not sel.select(timeout=a.timeout):
                p.kill()
                bad.append((current, "hang"))
                break
            line = p.stdout.readline()
            if not line:
                p.wait()
                bad.append((current, f"crash (exit {p.returncode})"))
                break
            if line.startswith("START"):
                current, index = line.split()[1], index + 1
            elif line.startswith("DONE"):
                done = True
                p.wait()
                break
        if done:
            break
        start = max(index + 1, start + 1)
    for name, what in bad:
        print(f"{name}: {what}")
    print(f"{total} ops, {len(bad)} hang or crash on {a.dtype} inputs with {FILLS[a.dtype]} planted")


if __name__ == "__main__":
    main()
