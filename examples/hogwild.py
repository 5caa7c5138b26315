"""Hogwild! training (paper §5.4): N processes update one model in shared memory without locks,
each on its own share of every epoch; then the same model trained by one process, for comparison.

    PYTHONPATH=python python3 examples/hogwild.py [--num-processes 2] [--epochs 2] [--start-method fork|spawn]

The parameters live in shared memory (model.share_memory()); every process builds its own
optimizer (its momentum stays private) and writes its updates straight into the shared weights.
The training data is shared the same way, so the processes hold no copies of it.
"""
import argparse
import time

import ember
import ember.multiprocessing as mp
import ember.nn as nn
import ember.nn.functional as F
from ember.vision.datasets import FashionMNIST


def build_model():
    return nn.Sequential(nn.Flatten(), nn.Linear(28 * 28, 256), nn.ReLU(), nn.Linear(256, 10))


def load(train):
    ds = FashionMNIST(train=train)
    x = (ds.data.float() / 255.0 - 0.2860) / 0.3530  # Fashion-MNIST's mean and std
    return x.unsqueeze(1), ds.targets


def train(rank, model, x, y, args, num_processes):
    ember.set_num_threads(1)  # the processes run side by side, one core each
    ember.manual_seed(args.seed + rank)
    opt = ember.optim.SGD(model.parameters(), lr=args.lr, momentum=args.momentum)
    n = x.size(0)
    for _ in range(args.epochs):
        # every process takes a disjoint 1/N of a fresh permutation, as DistributedSampler would
        g = ember.Generator().manual_seed(args.seed + _)
        mine = ember.randperm(n, generator=g)[rank::num_processes]
        for i in range(0, mine.numel(), args.batch_size):
            idx = mine[i:i + args.batch_size]
            loss = F.cross_entropy(model(x[idx]), y[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()


def accuracy(model, x, y):
    with ember.no_grad():
        return (model(x).argmax(1) == y).float().mean().item()


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--num-processes", type=int, default=2)
    p.add_argument("--epochs", type=int, default=2)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--lr", type=float, default=0.05)
    p.add_argument("--momentum", type=float, default=0.5)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--start-method", default="fork", choices=["fork", "spawn", "forkserver"])
    args = p.parse_args()

    x, y = load(train=True)
    x_test, y_test = load(train=False)
    x.share_memory_()  # the workers map the training set instead of copying it
    y.share_memory_()

    results = {}
    for name, nprocs in (("hogwild", args.num_processes), ("single process", 1)):
        ember.manual_seed(args.seed)
        model = build_model()
        model.share_memory()
        start = time.perf_counter()
        if nprocs > 1:
            mp.start_processes(train, args=(model, x, y, args, nprocs), nprocs=nprocs,
                               start_method=args.start_method)
        else:
            train(0, model, x, y, args, 1)
        elapsed = time.perf_counter() - start
        results[name] = (accuracy(model, x_test, y_test), elapsed, nprocs)

    for name, (acc, elapsed, nprocs) in results.items():
        print(f"{name:>15}: {nprocs} process(es), test accuracy {100 * acc:.2f}%, {elapsed:.1f} s "
              f"for {args.epochs} epoch(s)")


if __name__ == "__main__":
    main()
