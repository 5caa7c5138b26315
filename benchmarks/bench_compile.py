"""Eager vs ember.compile (trace + fusion), and torch eager vs torch.compile, in one process.

    PYTHONPATH=python python3 benchmarks/bench_compile.py [--threads N] [--torch-compile]

Blocks: elementwise-heavy code as people write it (GPT-2's tanh GELU in an MLP, a hand-written
layer norm, a functional Adam step): the chains ember.compile fuses into one loop. Workloads: the
five training steps of bench_training.py with the model's forward compiled (the backward of fused
groups runs fused kernels; the rest replays the recorded ops). Compile time is the first call
(the first traces, the second fuses and generates kernels; a cold kernel cache). Interleaved rounds, medians.
--torch-compile also times torch.compile (inductor) where it works on this machine.
"""
import argparse
import math
import os
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from common import compare, fmt_time, libraries  # noqa: E402
import bench_training  # noqa: E402


def gelu_mlp(lib, d=512, n=256):
    lib.manual_seed(0)
    w1, b1 = lib.randn(d, 4 * d) * 0.02, lib.zeros(4 * d)
    w2, b2 = lib.randn(4 * d, d) * 0.02, lib.zeros(d)
    x = lib.randn(n, d)
    c = math.sqrt(2.0 / math.pi)

    def f(x):
        h = x @ w1 + b1
        h = 0.5 * h * (1.0 + lib.tanh(c * (h + 0.044715 * h * h * h)))  # GPT-2's GELU, as written there
        return h @ w2 + b2
    return f, (x,)


def bias_gelu(lib, d=2048, n=256):
    lib.manual_seed(0)
    b, x = lib.zeros(d), lib.randn(n, d)
    c = math.sqrt(2.0 / math.pi)

    def f(x):
        h = x + b
        return 0.5 * h * (1.0 + lib.tanh(c * (h + 0.044715 * h * h * h)))
    return f, (x,)


def layer_norm(lib, d=768, n=512):
    lib.manual_seed(0)
    w, b, x = lib.ones(d), lib.zeros(d), lib.randn(n, d)

    def f(x):
        mu = x.mean(-1, keepdim=True)
        xc = x - mu
        var = (xc * xc).mean(-1, keepdim=True)
        return xc * lib.rsqrt(var + 1e-5) * w + b
    return f, (x,)


def adam_step(lib, n=1 << 20):
    lib.manual_seed(0)
    p, g, m, v = lib.randn(n), lib.randn(n), lib.zeros(n), lib.zeros(n)
    lr, b1, b2, eps, t = 1e-3, 0.9, 0.999, 1e-8, 10

    def f(p, g, m, v):
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        denom = (v / (1 - b2 ** t)).sqrt() + eps
        return p - lr * (m / (1 - b1 ** t)) / denom, m, v
    return f, (p, g, m, v)


BLOCKS = {"bias + GELU (GPT-2's tanh form), 256x2048": bias_gelu,
          "GELU MLP (the same inside 256x512->2048->512)": gelu_mlp,
          "layer norm written out (512x768)": layer_norm,
          "Adam step, functional (1M params)": adam_step}


def first_calls(fn, args):
    """Seconds of the first two calls: ember.compile traces on the first and fuses and generates its
    kernels on the second (torch.compile compiles on the first)."""
    start = time.perf_counter()
    fn(*args)
    fn(*args)
    return time.perf_counter() - start


def print_row(name, t, t_first, tcol):
    """One table row; tcol: what to show for torch / torch.compile / its first calls when not timed."""
    if "torch" in t:
        tcol[0] = fmt_time(t["torch"])
    if "torch.compile" in t:
        tcol[1] = fmt_time(t["torch.compile"])
    print(f"| {name} | {fmt_time(t['eager'])} | {fmt_time(t['compiled'])} | {t['eager'] / t['compiled']:.2f}x | "
          f"{t_first * 1e3:.0f} ms | {tcol[0]} | {tcol[1]} | {tcol[2]} |")


def torch_compile(torch, fn):
    try:
        cf = torch.compile(fn)
        return cf, None
    except Exception as e:  # noqa: BLE001
        return None, f"{type(e).__name__}: {str(e).splitlines()[0][:80]}"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--torch-compile", action="store_true")
    ap.add_argument("--workloads", default=",".join(bench_training.WORKLOADS))
    args = ap.parse_args()
    libs = libraries(args.threads)
    ember = libs["ember"]
    torch = libs.get("torch")
    # a cold kernel cache, so the first call pays the whole compile
    os.environ["EMBER_CACHE_DIR"] = tempfile.mkdtemp(prefix="ember_bench_cache_")

    print(f"## Elementwise-heavy blocks, {args.threads} thread(s)")
    print("| block | ember eager | ember.compile | speedup | first 2 calls | torch eager | torch.compile | "
          "its first 2 calls |")
    print("|---|---|---|---|---|---|---|---|")
    for name, make in BLOCKS.items():
        f, a = make(ember)
        cf = ember.compile(f)
        t_first = first_calls(cf, a)
        cases = [(name, {"eager": lambda: f(*a), "compiled": lambda: cf(*a)})]
        tcol = ["-", "-", "-"]
        if torch is not None:
            tf, ta = make(torch)
            cases[0][1]["torch"] = lambda: tf(*ta)
            if args.torch_compile:
                tcf, err = torch_compile(torch, tf)
                if tcf is not None:
                    try:
                        tcol[2] = f"{first_calls(tcf, ta) * 1e3:.0f} ms"
                        cases[0][1]["torch.compile"] = lambda: tcf(*ta)
                    except Exception as e:  # noqa: BLE001
                        tcol[1] = f"fails: {type(e).__name__}"
                else:
                    tcol[1] = f"fails: {err}"
        (_, t), = compare(cases)
        print_row(name, t, t_first, tcol)

    print(f"\n## Training steps with the forward compiled, {args.threads} thread(s)")
    print("| workload | ember eager | ember.compile | speedup | first 2 steps | torch eager | torch.compile | "
          "its first 2 steps |")
    print("|---|---|---|---|---|---|---|---|")
    for w in args.workloads.split(","):
        step_e, desc = bench_training.make(ember, w)
        step_c, _ = bench_training.make(ember, w, wrap=ember.compile)
        t_first = first_calls(step_c, ())
        fns = {"eager": step_e, "compiled": step_c}
        tcol = ["-", "-", "-"]
        if torch is not None:
            fns["torch"], _ = bench_training.make(torch, w)
            if args.torch_compile:
                try:
                    step_tc, _ = bench_training.make(torch, w, wrap=torch.compile)
                    tcol[2] = f"{first_calls(step_tc, ()) * 1e3:.0f} ms"
                    fns["torch.compile"] = step_tc
                except Exception as e:  # noqa: BLE001
                    tcol[1] = f"fails: {type(e).__name__}"
        (_, t), = compare([(w, fns)], rounds=5, min_time=0.3)
        print_row(desc, t, t_first, tcol)


if __name__ == "__main__":
    main()
