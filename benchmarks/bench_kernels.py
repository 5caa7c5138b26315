"""Throughput of large elementwise ops, reductions and GEMM, Ember vs PyTorch in one process.

    PYTHONPATH=python python3 benchmarks/bench_kernels.py [--threads N]
"""
import argparse

import ember
from common import compare, fmt_time, libraries


SIZES = (256, 512, 1024, 2048, 4096)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--threads", type=int, default=2)
    args = p.parse_args()
    libs = libraries(args.threads)
    n = 1 << 24  # 16M float32 = 64 MiB per tensor

    def mk(lib, shape, dtype="float32"):
        lib.manual_seed(0)
        return lib.randn(*shape, dtype=getattr(lib, dtype))

    data = {name: (mk(lib, (n,)), mk(lib, (n,))) for name, lib in libs.items()}
    masks = {name: a[0] > a[1] for name, a in data.items()}  # a random mask: a branchy select mispredicts
    mats = {name: {s: (mk(lib, (s, s)), mk(lib, (s, s))) for s in SIZES} for name, lib in libs.items()}
    wide = {name: mk(lib, (4096, 4096)) for name, lib in libs.items()}
    small = {name: mk(lib, (1000, 100)) for name, lib in libs.items()}
    maps = {name: mk(lib, (64, 512, 7, 7)) for name, lib in libs.items()}  # ResNet's last feature maps

    cases = [
        ("add 16M f32 (out of place)", {k: (lambda a=a: a[0] + a[1]) for k, a in data.items()}, 3 * 4 * n),
        ("add_ 16M f32 (in place)", {k: (lambda a=a: a[0].add_(a[1])) for k, a in data.items()}, 3 * 4 * n),
        ("mul by scalar 16M f32", {k: (lambda a=a: a[0] * 2.0) for k, a in data.items()}, 2 * 4 * n),
        ("exp 16M f32", {k: (lambda a=a: a[0].exp()) for k, a in data.items()}, 2 * 4 * n),
        ("sigmoid 16M f32", {k: (lambda a=a: a[0].sigmoid()) for k, a in data.items()}, 2 * 4 * n),
        ("clamp(-1, 1) 16M f32", {k: (lambda a=a: a[0].clamp(-1, 1)) for k, a in data.items()}, 2 * 4 * n),
        ("where(a > b, a, b) 16M f32", {k: (lambda a=a, m=masks[k], lib=libs[k]: lib.where(m, a[0], a[1]))
                                         for k, a in data.items()}, (3 * 4 + 1) * n),
        ("fmod 16M f32", {k: (lambda a=a: a[0].fmod(a[1])) for k, a in data.items()}, 3 * 4 * n),
        ("remainder 16M f32", {k: (lambda a=a: a[0].remainder(a[1])) for k, a in data.items()}, 3 * 4 * n),
        ("floor_divide 16M f32", {k: (lambda a=a: a[0].floor_divide(a[1])) for k, a in data.items()}, 3 * 4 * n),
        ("sum 16M f32", {k: (lambda a=a: a[0].sum()) for k, a in data.items()}, 4 * n),
        ("sum(dim=0) 4096x4096", {k: (lambda a=a: a.sum(0)) for k, a in wide.items()}, 4 * 4096 * 4096),
        ("sum(dim=1) 4096x4096", {k: (lambda a=a: a.sum(1)) for k, a in wide.items()}, 4 * 4096 * 4096),
        ("norm 4096x4096 (2-norm, all)", {k: (lambda a=a: a.norm()) for k, a in wide.items()}, 4 * 4096 * 4096),
        ("norm(dim=1) 4096x4096", {k: (lambda a=a: a.norm(dim=1)) for k, a in wide.items()}, 4 * 4096 * 4096),
        ("mean / norm over 7x7 maps 64x512x7x7", {k: (lambda a=a: (a.mean((2, 3)), a.norm(dim=(2, 3))))
                                                  for k, a in maps.items()}, None),
        ("cumsum(-1) over rows of 7, 64x512x7x7", {k: (lambda a=a: a.cumsum(-1)) for k, a in maps.items()}, None),
        ("transposed copy 4096x4096", {k: (lambda a=a: a.t().contiguous()) for k, a in wide.items()}, 8 * 4096 * 4096),
        ("softmax-ish: exp/sum(1) 1000x100", {k: (lambda a=a: a.exp() / a.exp().sum(1, keepdim=True)) for k, a in small.items()}, None),
    ]
    for s in SIZES:
        cases.append((f"matmul {s}x{s} f32", {k: (lambda m=m[s]: m[0] @ m[1]) for k, m in mats.items()}, 2 * s ** 3))
    rows = compare([(c[0], c[1]) for c in cases], rounds=5, min_time=0.2)
    print(f"\n## Kernels, {args.threads} thread(s) (median; GB/s or GFLOP/s from the median)")
    print("| case | ember | torch | torch/ember | ember rate | torch rate |")
    print("|---|---|---|---|---|---|")
    for (name, t), (_, _, work) in zip(rows, cases):
        e, tt = t["ember"], t.get("torch")
        unit = "GFLOP/s" if name.startswith("matmul") else "GB/s"
        rate = (lambda s: f"{work / s / 1e9:.1f} {unit}") if work else (lambda s: "")
        print(f"| {name} | {fmt_time(e)} | {fmt_time(tt) if tt else 'n/a'} | "
              f"{(tt / e) if tt else float('nan'):.2f}x | {rate(e)} | {rate(tt) if tt else ''} |")


if __name__ == "__main__":
    main()
