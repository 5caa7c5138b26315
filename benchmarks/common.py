"""Shared timing helpers: interleaved rounds, medians, side-by-side tables."""
import argparse
import statistics
import time


def libraries(threads):
    """{"ember": ember, "torch": torch (when installed)}, each set to `threads` intra-op threads."""
    import ember
    libs = {"ember": ember}
    try:
        import torch
        libs["torch"] = torch
    except ImportError:
        pass
    for lib in libs.values():
        lib.set_num_threads(threads)
    return libs


def threads_and_libraries(default_threads=1):
    """(args, libraries) of a script whose one option is --threads N."""
    p = argparse.ArgumentParser()
    p.add_argument("--threads", type=int, default=default_threads)
    args = p.parse_args()
    return args, libraries(args.threads)


def time_per_call(fn, number):
    start = time.perf_counter()
    for _ in range(number):
        fn()
    return (time.perf_counter() - start) / number


def compare(cases, rounds=7, min_time=0.05):
    """cases: list of (name, {"ember": fn, "torch": fn}). Returns rows of (name, ember_s, torch_s)."""
    rows = []
    for name, fns in cases:
        # calibrate the call count so one round takes ~min_time
        numbers = {}
        for lib, fn in fns.items():
            fn()
            n = 1
            while time_per_call(fn, n) * n < min_time / 5:
                n *= 2
            numbers[lib] = n
        samples = {lib: [] for lib in fns}
        for _ in range(rounds):  # interleave the libraries round by round
            for lib, fn in fns.items():
                samples[lib].append(time_per_call(fn, numbers[lib]))
        rows.append((name, {lib: statistics.median(v) for lib, v in samples.items()}))
    return rows


def fmt_time(s):
    if s < 1e-6:
        return f"{s * 1e9:.0f} ns"
    if s < 1e-3:
        return f"{s * 1e6:.2f} us"
    return f"{s * 1e3:.2f} ms"


def print_table(title, rows, extra=None):
    print(f"\n## {title}")
    print(f"| case | ember | torch | torch/ember |" + (" " + extra[0] + " |" if extra else ""))
    print("|---|---|---|---|" + ("---|" if extra else ""))
    for name, t in rows:
        e, tt = t["ember"], t.get("torch")
        ratio = f"{tt / e:.2f}x" if tt else "n/a"
        line = f"| {name} | {fmt_time(e)} | {fmt_time(tt) if tt else 'n/a'} | {ratio} |"
        if extra:
            line += " " + extra[1](name, t) + " |"
        print(line)
