"""Ember vs PyTorch on the same GPU, in one process (issues: CUDA backend parts 1 and 2): per-op launch
overhead, elementwise bandwidth, reductions, cuBLAS products, softmax / layer_norm, a small MLP's
training step, and the caching allocator's steady state. Prints a table
of medians and ratios; needs a GPU (scripts/gpu_check.sh runs it), and PyTorch's CUDA build for the
side-by-side columns.

    python benchmarks/bench_cuda.py [--reps 30]
"""
import argparse
import statistics
import sys
import time

import ember

try:
    import torch
    HAVE_TORCH = torch.cuda.is_available()
except Exception:
    torch, HAVE_TORCH = None, False


def median_time(fn, sync, reps, inner=1):
    """Median seconds of one call of fn over `reps` timed batches of `inner` calls (after warm-up)."""
    for _ in range(3):
        fn()
    sync()
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        for _ in range(inner):
            fn()
        sync()
        times.append((time.perf_counter() - t0) / inner)
    return statistics.median(times)


def libs():
    out = [("ember", ember, ember.cuda.synchronize)]
    if HAVE_TORCH:
        out.append(("torch", torch, torch.cuda.synchronize))
    return out


def row(name, unit, values, better="lower"):
    e = values.get("ember")
    t = values.get("torch")
    ratio = ""
    if e and t:
        ratio = f"{(t / e if better == 'lower' else e / t):.2f}x"
    fmt = lambda v: "-" if v is None else f"{v:,.2f}"
    print(f"| {name:<44} | {unit:<8} | {fmt(e):>12} | {fmt(t):>12} | {ratio:>8} |")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=30)
    args = ap.parse_args()
    if not ember.cuda.is_available():
        print("bench_cuda: no CUDA GPU (ember.cuda.is_available() is False)")
        return 0
    print(f"GPU: {ember.cuda.get_device_name()}  (PyTorch {torch.__version__ if torch else 'absent'})")
    print("ratio: Ember's speed relative to PyTorch's (> 1: Ember faster)\n")
    print(f"| {'benchmark':<44} | {'unit':<8} | {'ember':>12} | {'torch':>12} | {'ratio':>8} |")
    print(f"|{'-' * 46}|{'-' * 10}|{'-' * 14}|{'-' * 14}|{'-' * 10}|")

    # launch overhead: a + b on 4-element tensors, 1000 per timed batch (host-bound)
    vals = {}
    for name, lib, sync in libs():
        a = lib.ones(4, device="cuda")
        b = lib.ones(4, device="cuda")
        vals[name] = median_time(lambda: a + b, sync, args.reps, inner=1000) * 1e6
    row("a + b, 4 elements (per-op overhead)", "us", vals)

    # elementwise bandwidth: c = a + b over 256 MiB float32 inputs (3 x 256 MiB moved)
    n = 64 * 1024 * 1024
    vals = {}
    for name, lib, sync in libs():
        a = lib.ones(n, device="cuda")
        b = lib.ones(n, device="cuda")
        t = median_time(lambda: a + b, sync, args.reps)
        vals[name] = 3 * n * 4 / t / 1e9
        del a, b
    row("a + b, 256 MiB float32 (bandwidth)", "GB/s", vals, better="higher")

    vals = {}
    for name, lib, sync in libs():
        a = lib.ones(n, device="cuda")
        t = median_time(lambda: a.mul_(1.0), sync, args.reps)
        vals[name] = 2 * n * 4 / t / 1e9
        del a
    row("a.mul_(1), 256 MiB float32 (in place)", "GB/s", vals, better="higher")

    vals = {}
    for name, lib, sync in libs():
        a = lib.ones(n, device="cuda")
        vals[name] = n * 4 / median_time(lambda: a.sum(), sync, args.reps) / 1e9
        del a
    row("a.sum(), 256 MiB float32 (full reduction)", "GB/s", vals, better="higher")

    vals = {}
    for name, lib, sync in libs():
        a = lib.ones(8192, 8192, device="cuda")
        vals[name] = 8192 * 8192 * 4 / median_time(lambda: a.sum(1), sync, args.reps) / 1e9
        vals[name + "_amax"] = 8192 * 8192 * 4 / median_time(lambda: a.amax(0), sync, args.reps) / 1e9
        del a
    row("a.sum(1), 8192 x 8192 (rows)", "GB/s", {k: v for k, v in vals.items() if "_" not in k}, better="higher")
    row("a.amax(0), 8192 x 8192 (columns)", "GB/s", {k[:-5]: v for k, v in vals.items() if k.endswith("_amax")},
        better="higher")

    vals = {}
    for name, lib, sync in libs():
        a = lib.ones(4096, 4096, device="cuda")
        vals[name] = 2 * 4096 * 4096 * 4 / median_time(lambda: a.t().contiguous(), sync, args.reps) / 1e9
        del a
    row("a.t().contiguous(), 4096 x 4096 (transpose)", "GB/s", vals, better="higher")

    # host-to-device copies of 256 MiB: pageable (staged by the driver) and pinned with non_blocking
    for label, pinned in (("pageable", False), ("pinned, non_blocking", True)):
        vals = {}
        for name, lib, sync in libs():
            h = lib.ones(n)
            if pinned:
                h = h.pin_memory()
            vals[name] = n * 4 / median_time(lambda: h.to("cuda", non_blocking=pinned), sync, args.reps // 3 + 1) / 1e9
            del h
        row(f"host -> GPU copy, 256 MiB ({label})", "GB/s", vals, better="higher")

    # indexing: an embedding-style row gather and a scatter_add of 65536 rows of 128 floats
    vals, vals_add = {}, {}
    for name, lib, sync in libs():
        table = lib.ones(1 << 20, 128, device="cuda")
        idx = lib.randint(0, 1 << 20, (65536,), device="cuda")
        src = lib.ones(65536, 128, device="cuda")
        gidx = idx.unsqueeze(1).expand(65536, 128)
        vals[name] = 2 * 65536 * 128 * 4 / median_time(lambda: table.index_select(0, idx), sync, args.reps) / 1e9
        vals_add[name] = 2 * 65536 * 128 * 4 / median_time(lambda: table.scatter_add_(0, gidx, src), sync,
                                                            args.reps) / 1e9
        del table, idx, src, gidx
    row("index_select, 65536 of 1M rows x 128", "GB/s", vals, better="higher")
    row("scatter_add_, 65536 rows x 128 (atomics)", "GB/s", vals_add, better="higher")

    # matrix products on cuBLAS (TF32 off, PyTorch's default) and the NN kernels (issue: CUDA part 2)
    for label, shape_a, shape_b, dt in (("matmul 4096^3 float32", (4096, 4096), (4096, 4096), "float32"),
                                        ("matmul 4096^3 bfloat16", (4096, 4096), (4096, 4096), "bfloat16"),
                                        ("bmm 64 x 256^3 float32", (64, 256, 256), (64, 256, 256), "float32"),
                                        ("matmul 64x1024 @ 1024x1024 float32", (64, 1024), (1024, 1024), "float32")):
        vals = {}
        for name, lib, sync in libs():
            a = lib.randn(*shape_a, device="cuda").to(getattr(lib, dt))
            b = lib.randn(*shape_b, device="cuda").to(getattr(lib, dt))
            flops = 2 * a.numel() * shape_b[-1]
            vals[name] = flops / median_time(lambda: a @ b, sync, args.reps) / 1e12
            del a, b
        row(label, "TFLOP/s", vals, better="higher")
    for label, fn in (("softmax, 8192 x 4096 rows", lambda lib, x: lib.softmax(x, -1)),
                      ("log_softmax, 8192 x 4096 rows", lambda lib, x: lib.log_softmax(x, -1)),
                      ("layer_norm, 8192 x 4096", lambda lib, x: lib.nn.functional.layer_norm(x, (4096,)))):
        vals = {}
        for name, lib, sync in libs():
            x = lib.randn(8192, 4096, device="cuda")
            vals[name] = 2 * x.numel() * 4 / median_time(lambda: fn(lib, x), sync, args.reps) / 1e9
            del x
        row(label, "GB/s", vals, better="higher")

    # a training step of a small MLP (Linear/ReLU/LayerNorm, cross_entropy, Adam): host overhead at this size
    def mlp_step_time(name, lib, sync):
        lib.manual_seed(0)
        nn = lib.nn
        model = nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.LayerNorm(256), nn.Linear(256, 10)).to("cuda")
        opt = lib.optim.Adam(model.parameters(), lr=1e-3)
        x = lib.randn(128, 784, device="cuda")
        y = lib.randint(0, 10, (128,), device="cuda")

        def step():
            opt.zero_grad()
            lib.nn.functional.cross_entropy(model(x), y).backward()
            opt.step()
        return median_time(step, sync, args.reps, inner=20) * 1e6
    row("MLP training step (784-256-10, batch 128)", "us", {name: mlp_step_time(name, lib, sync)
                                                           for name, lib, sync in libs()})

    # the allocator: device allocations in iterations 2..100 of a training-like loop
    def steady_state_allocations(lib):
        w = lib.ones(512, 512, device="cuda")
        counts = []
        for _ in range(100):
            h = (w * 2 + 1).relu()
            s = h.sum(0).sum()
            del h, s
            counts.append(lib.cuda.memory_stats()["num_device_alloc"])
        return counts[-1] - counts[0]
    new_allocs = steady_state_allocations(ember)
    torch_new = steady_state_allocations(torch) if HAVE_TORCH else None
    print(f"| {'cudaMalloc calls in iterations 2..100':<44} | {'count':<8} | {new_allocs:>12} | "
          f"{'-' if torch_new is None else torch_new:>12} | {'':>8} |")
    print(f"\npeak allocated: {ember.cuda.max_memory_allocated() / 2**20:.1f} MiB, "
          f"reserved: {ember.cuda.memory_reserved() / 2**20:.1f} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
