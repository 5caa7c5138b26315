"""Training-loop throughput: Ember's C++ frontend vs Ember's Python frontend vs PyTorch, on the
Fashion-MNIST CNN of examples/fashion_mnist.py (Adam, batch 64, dropout in train mode).

    PYTHONPATH=python python3 benchmarks/bench_cpp_training.py [--steps 60] [--threads N] [--build build]

Every loop runs the same steps on the same batches (zero_grad, forward, cross-entropy, backward,
Adam step, loss.item()) after 3 warm-up steps; the C++ loop is build/ember_train_parity
(tests/cpp/parity/train_parity.cpp) started on a weight and batch file written here.
"""
import argparse
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

import ember
from ember.safetensors import save_file

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "examples"))
from fashion_mnist import DATA_DIR, build_model, load_split  # noqa: E402

WARMUP = 3


def batches_np(n_batches, batch):
    try:
        x, y = load_split(DATA_DIR, True)
        x = ((x[:n_batches * batch].astype(np.float32) / 255.0 - 0.2860) / 0.3530)[:, None]
        y = y[:n_batches * batch].astype(np.int64)
    except SystemExit:  # no dataset: random images, the cost is the same
        rng = np.random.default_rng(0)
        x = rng.standard_normal((n_batches * batch, 1, 28, 28), dtype=np.float32)
        y = rng.integers(0, 10, n_batches * batch)
    return [(x[i * batch:(i + 1) * batch].copy(), y[i * batch:(i + 1) * batch].copy()) for i in range(n_batches)]


def python_loop(lib, state, data, steps):
    model = build_model(lib.nn)
    model.load_state_dict({k: lib.from_numpy(v.numpy().copy()) for k, v in state.items()})
    opt = lib.optim.Adam(model.parameters(), lr=1e-3)
    batches = [(lib.from_numpy(x), lib.from_numpy(y)) for x, y in data]
    lib.manual_seed(1)
    model.train()
    start = None
    for step in range(steps):
        if step == WARMUP:
            start = time.perf_counter()
        x, y = batches[step % len(batches)]
        opt.zero_grad()
        loss = lib.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        loss.item()
    return time.perf_counter() - start


def cpp_loop(binary, init, batch_file, steps, out):
    res = subprocess.run([binary, init, batch_file, "adam", str(steps), out, "--time"], capture_output=True,
                         text=True, check=True)
    fields = res.stderr.split()
    return float(fields[fields.index("seconds") + 1])


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--steps", type=int, default=60)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--threads", type=int, default=os.cpu_count())
    p.add_argument("--build", default=os.path.join(ROOT, "build"))
    p.add_argument("--rounds", type=int, default=3, help="runs per loop (the best is reported)")
    args = p.parse_args()
    binary = os.path.join(args.build, "ember_train_parity")
    if not os.path.exists(binary):
        sys.exit(f"{binary} not found: build it first (cmake --build build)")
    ember.set_num_threads(args.threads)
    # the C++ process's pools (OpenMP and OpenBLAS), as ember.set_num_threads sets them here
    os.environ["OMP_NUM_THREADS"] = os.environ["OPENBLAS_NUM_THREADS"] = str(args.threads)
    try:
        import torch
        torch.set_num_threads(args.threads)
    except ImportError:
        torch = None

    data = batches_np(10, args.batch_size)
    ember.manual_seed(0)
    state = {k: v.contiguous() for k, v in build_model(ember.nn).state_dict().items()}
    timed = (args.steps - WARMUP) * args.batch_size
    results = {}
    with tempfile.TemporaryDirectory() as d:
        init, batch_file = os.path.join(d, "init.safetensors"), os.path.join(d, "batches.safetensors")
        save_file(state, init)
        flat = {}
        for i, (x, y) in enumerate(data):
            flat[f"x{i}"], flat[f"y{i}"] = ember.from_numpy(x), ember.from_numpy(y)
        save_file(flat, batch_file)
        runs = {"ember C++ (ember::nn / ember::optim)": lambda: cpp_loop(binary, init, batch_file, args.steps,
                                                                          os.path.join(d, "out.safetensors")),
                "ember Python": lambda: python_loop(ember, state, data, args.steps)}
        if torch is not None:
            runs[f"torch {torch.__version__} Python"] = lambda: python_loop(torch, state, data, args.steps)
        for _ in range(args.rounds):  # interleaved rounds, best of each
            for name, fn in runs.items():
                results[name] = min(results.get(name, float("inf")), fn())
    print(f"\n## Fashion-MNIST CNN training loop, batch {args.batch_size}, {args.steps - WARMUP} timed steps, "
          f"{args.threads} threads")
    print("| loop | images/s | ms/step | vs ember Python |")
    print("|---|---|---|---|")
    base = results["ember Python"]
    for name, sec in results.items():
        print(f"| {name} | {timed / sec:,.0f} | {1e3 * sec / (args.steps - WARMUP):.2f} | {base / sec:.2f}x |")


if __name__ == "__main__":
    main()
