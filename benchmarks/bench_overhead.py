"""Per-op overhead and autograd recording cost, Ember vs PyTorch, in one process.

    PYTHONPATH=python python3 benchmarks/bench_overhead.py [--threads N]

Interleaved rounds, medians. "torch/ember" > 1 means Ember is faster.
"""
import argparse

import ember
from common import compare, libraries, print_table


def chain(lib, x, n=100):
    y = x
    for i in range(n // 2):
        y = y * 1.01
        y = y + 0.5
    return y.sum()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--threads", type=int, default=1)
    args = p.parse_args()
    libs = libraries(args.threads)

    def per_lib(make):
        return {name: make(lib) for name, lib in libs.items()}

    def add_small(lib):
        a, b = lib.ones(1), lib.ones(1)
        return lambda: a + b

    def add_grad(lib):
        a = lib.ones(1, requires_grad=True)
        b = lib.ones(1)
        return lambda: a + b

    def mul_method(lib):
        a, b = lib.ones(1), lib.ones(1)
        return lambda: a.mul(b)

    def add_scalar(lib):
        a = lib.ones(1)
        return lambda: a + 1.0

    def view_op(lib):
        a = lib.ones(4, 4)
        return lambda: a.view(16)

    def index_op(lib):
        a = lib.ones(4, 4)
        return lambda: a[1]

    def chain_fwd_bwd(lib):
        x = lib.ones(4, requires_grad=True)

        def run():
            chain(lib, x).backward()
            x.grad = None
        return run

    def linear_small(lib):
        lib.manual_seed(0)
        m, x = lib.nn.Linear(16, 16), lib.randn(1, 16)
        return lambda: m(x)

    cases = [
        ("a + b (1 element)", per_lib(add_small)),
        ("a + 1.0 (Python scalar)", per_lib(add_scalar)),
        ("a.mul(b) (method)", per_lib(mul_method)),
        ("a.view(16)", per_lib(view_op)),
        ("a[1]", per_lib(index_op)),
        ("a + b, a requires grad", per_lib(add_grad)),
        ("100-op chain fwd+bwd (4 elements)", per_lib(chain_fwd_bwd)),
        ("nn.Linear(16, 16) forward, batch 1", per_lib(linear_small)),
    ]
    rows = compare(cases)
    print_table(f"Per-op overhead, {args.threads} thread(s)", rows)


if __name__ == "__main__":
    main()
