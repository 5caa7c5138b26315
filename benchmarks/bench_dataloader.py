"""DataLoader throughput with 0, 1 and 2 worker processes, Ember side by side with PyTorch, on a
dataset whose items cost Python work (as decoding/augmenting does); plus the workers' memory.

    PYTHONPATH=python python3 benchmarks/bench_dataloader.py [--items 2048] [--work 2000]

Each configuration builds a fresh loader (worker start-up included) and runs two epochs; the
table shows items/s of the second epoch (steady state, persistent workers) and of the whole
run. A second table isolates the cost of moving a batch (tiny items, one worker) under each
sharing strategy. Memory: the proportional set size (PSS, shared pages split between their users) and the
resident size of each worker after the run, from /proc/<pid>/smaps_rollup.
"""
import argparse
import os
import random
import statistics
import time

import numpy as np


class Work:
    """Item i: a 3x32x32 float image scaled by the result of `work` steps of pure-Python arithmetic."""

    def __init__(self, lib, n, work):
        self.lib, self.n, self.work = lib, n, work
        self.images = np.random.default_rng(0).random((64, 3, 32, 32), dtype=np.float32)

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        rng = random.Random(i)
        s = 0.0
        for _ in range(self.work):
            s += rng.random()
        return self.lib.from_numpy(self.images[i % 64] * (s / self.work)), i


def memory_kb(pid):
    fields = {}
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                parts = line.split()
                if parts[0] in ("Rss:", "Pss:"):
                    fields[parts[0][:-1]] = int(parts[1])
    except OSError:
        pass
    return fields


def run(lib, data_mod, workers, items, work, batch_size, epochs=2):
    ds = Work(lib, items, work)
    kw = dict(num_workers=workers, persistent_workers=workers > 0)
    start = time.perf_counter()
    loader = data_mod.DataLoader(ds, batch_size=batch_size, shuffle=True, **kw)
    epoch_times, mem = [], []
    for _ in range(epochs):
        t0 = time.perf_counter()
        total = 0
        it = iter(loader)
        for x, idx in it:
            total += x.shape[0]
        assert total == items
        epoch_times.append(time.perf_counter() - t0)
    elapsed = time.perf_counter() - start
    if workers:
        mem = [memory_kb(w.pid) for w in it._workers]
        del it
        loader._iterator._shutdown_workers()
    return items / epoch_times[-1], epochs * items / elapsed, mem


class Tiny:
    def __init__(self, lib, n):
        self.lib, self.n = lib, n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return self.lib.ones(16)


def batches_per_s(lib, data_mod, mp_mod, strategy, n=4000, batch_size=4):
    mp_mod.set_sharing_strategy(strategy)
    loader = data_mod.DataLoader(Tiny(lib, n), batch_size=batch_size, num_workers=1, persistent_workers=True)
    for _ in loader:  # warm-up epoch: worker start-up
        pass
    t0 = time.perf_counter()
    for _ in loader:
        pass
    rate = (n // batch_size) / (time.perf_counter() - t0)
    loader._iterator._shutdown_workers()
    return rate


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--items", type=int, default=2048)
    p.add_argument("--work", type=int, default=2000, help="Python loop steps per item")
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--repeats", type=int, default=3)
    args = p.parse_args()

    import ember
    import ember.utils.data as ember_data
    libs = [("ember", ember, ember_data)]
    try:
        import torch
        import torch.utils.data as torch_data
        torch.set_num_threads(1)
        libs.append(("torch", torch, torch_data))
    except ImportError:
        print("torch not installed: Ember only")
    ember.set_num_threads(1)

    print(f"{args.items} items of 3x32x32 float32, {args.work} Python steps each, batch {args.batch_size}, "
          f"{os.cpu_count()} cores; median of {args.repeats} runs")
    print("| workers | library | steady items/s | overall items/s (incl. start-up) | worker PSS / RSS (MiB) |")
    print("|---|---|---|---|---|")
    for workers in (0, 1, 2):
        for name, lib, data_mod in libs:
            runs = [run(lib, data_mod, workers, args.items, args.work, args.batch_size) for _ in range(args.repeats)]
            steady = statistics.median(r[0] for r in runs)
            overall = statistics.median(r[1] for r in runs)
            mem = runs[-1][2]
            mem_s = ", ".join(f"{m.get('Pss', 0) / 1024:.0f} / {m.get('Rss', 0) / 1024:.0f}" for m in mem) or "-"
            print(f"| {workers} | {name} | {steady:,.0f} | {overall:,.0f} | {mem_s} |")

    print("\nPer-batch transfer cost: batches of 4 tensors of 16 floats, 1 worker, batches/s")
    print("| strategy | " + " | ".join(name for name, _, _ in libs) + " |")
    print("|---|" + "---|" * len(libs))
    for strategy in ("file_descriptor", "file_system"):
        rates = []
        for name, lib, data_mod in libs:
            mp_mod = __import__(f"{name}.multiprocessing", fromlist=["x"])
            rates.append(statistics.median(batches_per_s(lib, data_mod, mp_mod, strategy)
                                           for _ in range(args.repeats)))
            mp_mod.set_sharing_strategy("file_descriptor")
        print(f"| {strategy} | " + " | ".join(f"{r:,.0f}" for r in rates) + " |")


if __name__ == "__main__":
    main()
