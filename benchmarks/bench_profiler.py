"""Profiler cost per op: `a + b` on 1-element tensors with the profiler off and on, Ember vs PyTorch.

    PYTHONPATH=python python3 benchmarks/bench_profiler.py [--threads N] [--ops N] [--rounds N]

"off" is the plain loop; "on" runs the same loop inside profile(activities=[CPU]) (only the loop is
timed, not the post-processing at exit). Medians of interleaved rounds, in ns per op. Point
PYTHONPATH at another build (one without ember.profiler) to get its "off" figure for comparison.
"""
import argparse
import statistics
import time

import ember
from common import libraries


def loop_ns(a, b, n):
    start = time.perf_counter_ns()
    for _ in range(n):
        a + b
    return (time.perf_counter_ns() - start) / n


def run_off(lib, n):
    a, b = lib.ones(1), lib.ones(1)
    return loop_ns(a, b, n)


def run_on(lib, n, **kw):
    a, b = lib.ones(1), lib.ones(1)
    with lib.profiler.profile(activities=[lib.profiler.ProfilerActivity.CPU], **kw):
        t = loop_ns(a, b, n)
    return t


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--ops", type=int, default=20000, help="ops per round")
    p.add_argument("--rounds", type=int, default=15)
    args = p.parse_args()
    libs = libraries(args.threads)
    has_prof = hasattr(ember, "profiler")
    cases = {}
    for name, lib in libs.items():
        cases[f"{name} off"] = lambda lib=lib: run_off(lib, args.ops)
        if name == "torch" or has_prof:
            cases[f"{name} on"] = lambda lib=lib: run_on(lib, args.ops)
            cases[f"{name} on (shapes+memory)"] = lambda lib=lib: run_on(lib, args.ops, record_shapes=True,
                                                                         profile_memory=True)
    for fn in cases.values():  # warm up
        fn()
    samples = {k: [] for k in cases}
    for _ in range(args.rounds):
        for k, fn in cases.items():
            samples[k].append(fn())
    med = {k: statistics.median(v) for k, v in samples.items()}
    print(f"a + b on 1-element tensors, {args.threads} thread(s), {args.ops} ops x {args.rounds} rounds (median)")
    print("| case | ns/op | over off |")
    print("|---|---|---|")
    for k, v in med.items():
        base = med[k.split(" ")[0] + " off"]
        print(f"| {k} | {v:.0f} | {v - base:+.0f} |")


if __name__ == "__main__":
    main()
