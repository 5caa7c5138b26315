"""NN kernels, Ember vs PyTorch in one process: conv2d forward+backward on ResNet-like shapes, max-pool,
softmax / log_softmax / layer_norm / cross_entropy on 4096x1024 (forward and forward+backward), and
image work (resizing 480x640 RGB images to 224x224 as torchvision's transforms do, uint8 and a float32
batch; a byte transpose), and pooling/rearranging layers (average, adaptive, pixel shuffle, grid sample).

    PYTHONPATH=python python3 benchmarks/bench_nn.py [--threads N] [--only conv|norm|image|pool]
"""
import argparse

import ember
from common import compare, libraries, print_table


def conv_cases(libs):
    cases = []
    # (batch, channels, spatial): ResNet stages 2 and 3 at batch 32, plus the main job's first layer
    for n, c, hw in ((32, 64, 56), (32, 128, 28), (64, 32, 14)):
        made = {}
        for name, lib in libs.items():
            lib.manual_seed(0)
            x = lib.randn(n, c, hw, hw, requires_grad=True)
            w = lib.randn(c, c, 3, 3, requires_grad=True)
            b = lib.randn(c, requires_grad=True)
            made[name] = (lib, x, w, b)

        def fwd(m):
            lib, x, w, b = m
            with lib.no_grad():
                lib.nn.functional.conv2d(x, w, b, padding=1)

        def fwd_bwd(m):
            lib, x, w, b = m
            lib.nn.functional.conv2d(x, w, b, padding=1).sum().backward()
            x.grad = w.grad = b.grad = None

        flops = 2 * n * c * c * 9 * hw * hw
        cases.append((f"conv2d 3x3 fwd {n}x{c}x{hw}x{hw}", {k: (lambda m=m: fwd(m)) for k, m in made.items()}, flops))
        cases.append((f"conv2d 3x3 fwd+bwd {n}x{c}x{hw}x{hw}", {k: (lambda m=m: fwd_bwd(m)) for k, m in made.items()},
                      3 * flops))
        if hw == 56:  # the same layer on a channels-last input
            made_cl = {}
            for name, (lib, x, w, b) in made.items():
                x_cl = x.detach().to(memory_format=lib.channels_last).requires_grad_()
                made_cl[name] = (lib, x_cl, w, b)
            cases.append((f"conv2d 3x3 fwd+bwd {n}x{c}x{hw}x{hw} channels_last",
                          {k: (lambda m=m: fwd_bwd(m)) for k, m in made_cl.items()}, 3 * flops))
    return cases


def norm_cases(libs):
    cases = []
    made = {}
    for name, lib in libs.items():
        lib.manual_seed(0)
        x = lib.randn(4096, 1024, requires_grad=True)
        t = lib.randint(0, 1024, (4096,))
        ln = lib.nn.LayerNorm(1024)
        made[name] = (lib, x, t, ln)
    F = {k: m[0].nn.functional for k, m in made.items()}
    ops = {
        "softmax": lambda k, m: F[k].softmax(m[1], 1),
        "log_softmax": lambda k, m: F[k].log_softmax(m[1], 1),
        "layer_norm": lambda k, m: m[3](m[1]),
        "cross_entropy": lambda k, m: F[k].cross_entropy(m[1], m[2]),
    }
    for op, f in ops.items():
        def fwd(k, m, f=f):
            with m[0].no_grad():
                f(k, m)

        def fwd_bwd(k, m, f=f):
            f(k, m).sum().backward()
            m[1].grad = None
        cases.append((f"{op} fwd 4096x1024", {k: (lambda k=k, m=m: fwd(k, m)) for k, m in made.items()}, None))
        cases.append((f"{op} fwd+bwd 4096x1024", {k: (lambda k=k, m=m: fwd_bwd(k, m)) for k, m in made.items()}, None))
    made_pool = {}
    for name, lib in libs.items():
        lib.manual_seed(0)
        made_pool[name] = (lib, lib.randn(32, 64, 56, 56, requires_grad=True))

    def pool(m):
        m[0].nn.functional.max_pool2d(m[1], 3, 2, 1).sum().backward()
        m[1].grad = None
    cases.append(("max_pool2d 3/2/1 fwd+bwd 32x64x56x56", {k: (lambda m=m: pool(m)) for k, m in made_pool.items()}, None))
    return cases


def image_cases(libs):
    import numpy as np
    img = np.random.RandomState(0).randint(0, 256, size=(1, 3, 480, 640)).astype(np.uint8)
    made = {name: (lib, lib.from_numpy(img.copy())) for name, lib in libs.items()}
    cases = []
    for mode, aa in (("bilinear", True), ("bilinear", False), ("bicubic", True)):
        def resize(m, mode=mode, aa=aa):
            m[0].nn.functional.interpolate(m[1], size=(224, 224), mode=mode, antialias=aa)
        label = f"uint8 resize 480x640 -> 224x224 {mode}{' antialias' if aa else ''}"
        cases.append((label, {k: (lambda m=m, f=resize: f(m)) for k, m in made.items()}, None))
    batch = np.random.RandomState(2).rand(8, 3, 480, 640).astype(np.float32)
    made_f = {name: (lib, lib.from_numpy(batch.copy())) for name, lib in libs.items()}
    for mode, aa in (("bilinear", True), ("bicubic", False), ("nearest", False)):
        def resize_f(m, mode=mode, aa=aa):
            kw = {} if mode == "nearest" else {"antialias": aa}
            m[0].nn.functional.interpolate(m[1], size=(224, 224), mode=mode, **kw)
        label = f"float32 resize 8x3x480x640 -> 224x224 {mode}{' antialias' if aa else ''}"
        cases.append((label, {k: (lambda m=m, f=resize_f: f(m)) for k, m in made_f.items()}, None))
    feat = np.random.RandomState(3).rand(8, 64, 56, 56).astype(np.float32)
    made_u = {name: (lib, lib.from_numpy(feat.copy()).requires_grad_()) for name, lib in libs.items()}
    for mode in ("bilinear", "nearest"):
        def up(m, mode=mode):  # a decoder's Upsample(scale_factor=2), forward and backward
            m[0].nn.functional.interpolate(m[1], scale_factor=2, mode=mode).sum().backward()
            m[1].grad = None
        cases.append((f"upsample x2 {mode} fwd+bwd 8x64x56x56", {k: (lambda m=m, f=up: f(m)) for k, m in made_u.items()},
                      None))
    big = np.random.RandomState(1).randint(0, 256, size=(4096, 4096)).astype(np.uint8)
    made_t = {name: (lib, lib.from_numpy(big.copy())) for name, lib in libs.items()}
    cases.append(("uint8 transposed copy 4096x4096", {k: (lambda m=m: m[1].t().contiguous()) for k, m in made_t.items()},
                  None))
    return cases


def pool_cases(libs):
    """Pooling and rearranging layers of common models, forward+backward on a float32 feature batch."""
    import numpy as np
    feat = np.random.RandomState(4).rand(32, 64, 56, 56).astype(np.float32)
    head = np.random.RandomState(5).rand(64, 512, 7, 7).astype(np.float32)
    sub = np.random.RandomState(6).rand(16, 64, 56, 56).astype(np.float32)
    grid = (np.random.RandomState(7).rand(16, 56, 56, 2).astype(np.float32) * 2 - 1)
    made = {}
    for name, lib in libs.items():
        made[name] = (lib, lib.from_numpy(feat.copy()).requires_grad_(), lib.from_numpy(head.copy()).requires_grad_(),
                      lib.from_numpy(sub.copy()).requires_grad_(), lib.from_numpy(grid.copy()).requires_grad_())
    ops = {  # (label, which input, f)
        "avg_pool2d 3/1/1 fwd+bwd 32x64x56x56": (1, lambda F, x: F.avg_pool2d(x, 3, 1, 1)),
        "avg_pool2d 2/2 fwd+bwd 32x64x56x56": (1, lambda F, x: F.avg_pool2d(x, 2, 2)),
        "avg_pool2d 3/2/1 ceil, no pad count fwd+bwd 32x64x56x56":
            (1, lambda F, x: F.avg_pool2d(x, 3, 2, 1, ceil_mode=True, count_include_pad=False)),
        "adaptive_avg_pool2d 1 fwd+bwd 64x512x7x7": (2, lambda F, x: F.adaptive_avg_pool2d(x, 1)),
        "adaptive_avg_pool2d 7 fwd+bwd 32x64x56x56": (1, lambda F, x: F.adaptive_avg_pool2d(x, 7)),
        "adaptive_max_pool2d 7 fwd+bwd 32x64x56x56": (1, lambda F, x: F.adaptive_max_pool2d(x, 7)),
        "pixel_shuffle 2 fwd+bwd 16x64x56x56": (3, lambda F, x: F.pixel_shuffle(x, 2)),
        "pixel_unshuffle 2 fwd+bwd 16x64x56x56": (3, lambda F, x: F.pixel_unshuffle(x, 2)),
    }
    cases = []
    for label, (i, f) in ops.items():
        def run(m, i=i, f=f):
            f(m[0].nn.functional, m[i]).sum().backward()
            m[i].grad = None
        cases.append((label, {k: (lambda m=m, r=run: r(m)) for k, m in made.items()}, None))

    def gs(m):
        m[0].nn.functional.grid_sample(m[3], m[4], align_corners=False).sum().backward()
        m[3].grad = m[4].grad = None
    cases.append(("grid_sample bilinear fwd+bwd 16x64x56x56", {k: (lambda m=m: gs(m)) for k, m in made.items()}, None))
    return cases


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--only", choices=["conv", "norm", "image", "pool"])
    args = p.parse_args()
    libs = libraries(args.threads)
    cases = []
    if args.only in (None, "conv"):
        cases += conv_cases(libs)
    if args.only in (None, "norm"):
        cases += norm_cases(libs)
    if args.only in (None, "image"):
        cases += image_cases(libs)
    if args.only in (None, "pool"):
        cases += pool_cases(libs)
    rows = compare([(c[0], c[1]) for c in cases], rounds=5, min_time=0.3)
    work = {c[0]: c[2] for c in cases}

    def rate(name, t):
        if not work[name]:
            return ""
        return " / ".join(f"{work[name] / t[k] / 1e9:.0f}" for k in ("ember", "torch") if k in t)
    print_table(f"NN kernels, {args.threads} thread(s) (median)", rows, ("GFLOP/s ember / torch", rate))


if __name__ == "__main__":
    main()
