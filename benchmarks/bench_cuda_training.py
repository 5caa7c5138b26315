"""The paper's Table 1 at training time on one GPU, Ember vs PyTorch in one process (issue: CUDA backend
part 2): ResNet-50, MobileNetV2, VGG-19 and AlexNet on synthetic 224x224 batches (images/s), a 2-layer
LSTM language model as GNMT's stand-in (tokens/s) and NCF's embedding MLP (samples/s), in float32 and
under bfloat16 autocast; then the paper's Fig. 2: device memory and cudaMalloc calls over ResNet-50's
first iterations (the caching allocator allocates in iteration 1 only), plotted as a PNG.

    python benchmarks/bench_cuda_training.py [--steps 10] [--batch 32] [--plot fig2.png]

The vision models come from ember.vision.models for Ember and from torchvision for PyTorch; without
torchvision the same files (ember.vision's models are torchvision's architectures, parameter for
parameter) are run against torch's API. A model an Ember build cannot train on the GPU yet prints the
error instead of a figure. Needs a GPU (scripts/gpu_check.sh runs it); prints "no CUDA GPU" otherwise.
"""
import argparse
import math
import pathlib
import sys
import time

import ember

try:
    import torch
    HAVE_TORCH = torch.cuda.is_available()
except Exception:
    torch, HAVE_TORCH = None, False

VISION = {"resnet50": "resnet.py", "mobilenet_v2": "mobilenetv2.py", "vgg19": "vgg.py", "alexnet": "alexnet.py"}


def vision_builder(lib, name):
    if lib is ember:
        import ember.vision.models as models
        return getattr(models, name)
    try:
        import torchvision.models as tvm
        return getattr(tvm, name)
    except ImportError:
        pass
    # ember.vision's model files written against torch's API: the same architecture and initialisation
    src = (pathlib.Path(ember.__file__).parent / "vision" / "models" / VISION[name]).read_text()
    src = (src.replace("from ... import flatten, nn", "from torch import flatten, nn")
              .replace("from ...nn import functional as F", "from torch.nn import functional as F")
              .replace("from ._utils import handle_weights, register_model", ""))
    ns = {"handle_weights": lambda n, w, kw: (kw.pop("pretrained", None), kw.pop("progress", None)),
          "register_model": lambda f: f, "__name__": f"torch_{name}"}
    exec(compile(src, VISION[name], "exec"), ns)
    return ns[name]


def vision_case(name, batch):
    def make(lib):
        model = vision_builder(lib, name)(num_classes=1000).cuda()
        x = lib.randn(batch, 3, 224, 224, device="cuda")
        y = lib.randint(0, 1000, (batch,), device="cuda")
        return model, (x,), y, lib.nn.functional.cross_entropy
    return make, batch, "img/s"


def lstm_case(batch, seq=35, vocab=10000, hidden=512):
    def make(lib):
        nn = lib.nn

        class LM(nn.Module):
            def __init__(self):
                super().__init__()
                self.embed = nn.Embedding(vocab, hidden)
                self.lstm = nn.LSTM(hidden, hidden, num_layers=2)
                self.out = nn.Linear(hidden, vocab)

            def forward(self, tokens):
                h, _ = self.lstm(self.embed(tokens))
                return self.out(h).reshape(-1, vocab)
        x = lib.randint(0, vocab, (seq, batch), device="cuda")
        y = lib.randint(0, vocab, (seq * batch,), device="cuda")
        return LM().cuda(), (x,), y, lib.nn.functional.cross_entropy
    return make, batch * seq, "tok/s"


def ncf_case(batch, users=138493, items=26744, dim=64):
    def make(lib):
        nn = lib.nn

        class NCF(nn.Module):
            def __init__(self):
                super().__init__()
                self.user, self.item = nn.Embedding(users, dim), nn.Embedding(items, dim)
                self.mlp = nn.Sequential(nn.Linear(2 * dim, 256), nn.ReLU(), nn.Linear(256, 128), nn.ReLU(),
                                         nn.Linear(128, 64), nn.ReLU(), nn.Linear(64, 1))

            def forward(self, u, i):
                return self.mlp(lib.cat([self.user(u), self.item(i)], 1)).squeeze(1)
        u = lib.randint(0, users, (batch,), device="cuda")
        i = lib.randint(0, items, (batch,), device="cuda")
        y = lib.randint(0, 2, (batch,), device="cuda").float()
        return NCF().cuda(), (u, i), y, lib.nn.functional.binary_cross_entropy_with_logits
    return make, batch, "samples/s"


def throughput(lib, make, per_step, steps, bf16):
    """Items per second over `steps` training steps after 3 warm-up steps; a string when it fails."""
    try:
        lib.manual_seed(0)
        model, inputs, target, loss_fn = make(lib)
        opt = lib.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)

        def step():
            opt.zero_grad(set_to_none=True)
            with lib.autocast("cuda", dtype=lib.bfloat16, enabled=bf16):
                if bf16 and not lib.is_autocast_enabled("cuda"):
                    raise NotImplementedError("autocast('cuda') is not supported by this build")
                loss = loss_fn(model(*inputs), target)
            loss.backward()
            opt.step()
        for _ in range(3):
            step()
        lib.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(steps):
            step()
        lib.cuda.synchronize()
        return per_step * steps / (time.perf_counter() - t0)
    except Exception as e:  # noqa: BLE001 - the row says what stops it
        return f"{type(e).__name__}: {str(e).splitlines()[0][:60]}"
    finally:
        lib.cuda.empty_cache()


def memory_trace(lib, batch, iterations=6):
    """(allocated MiB, reserved MiB, cudaMalloc calls so far) after each of ResNet-50's first iterations."""
    lib.cuda.empty_cache()
    lib.manual_seed(0)
    model = vision_builder(lib, "resnet50")(num_classes=1000).cuda()
    opt = lib.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    x = lib.randn(batch, 3, 224, 224, device="cuda")
    y = lib.randint(0, 1000, (batch,), device="cuda")
    base = lib.cuda.memory_stats().get("num_device_alloc", 0)
    out = []
    for _ in range(iterations):
        opt.zero_grad(set_to_none=True)
        lib.nn.functional.cross_entropy(model(x), y).backward()
        opt.step()
        lib.cuda.synchronize()
        s = lib.cuda.memory_stats()
        out.append((lib.cuda.memory_allocated() / 2**20, lib.cuda.memory_reserved() / 2**20,
                    s.get("num_device_alloc", 0) - base))
    del model, opt, x, y
    lib.cuda.empty_cache()
    return out


def plot(traces, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib not installed: no plot")
        return
    fig, (a, b) = plt.subplots(1, 2, figsize=(10, 3.5))
    for name, tr in traces.items():
        it = range(1, len(tr) + 1)
        a.plot(it, [t[1] for t in tr], marker="o", label=f"{name} reserved")
        a.plot(it, [t[0] for t in tr], marker=".", linestyle="--", label=f"{name} allocated")
        b.plot(it, [t[2] for t in tr], marker="o", label=name)
    a.set_xlabel("iteration")
    a.set_ylabel("device memory (MiB)")
    a.legend(fontsize=7)
    b.set_xlabel("iteration")
    b.set_ylabel("cudaMalloc calls so far")
    b.legend(fontsize=7)
    fig.suptitle("ResNet-50 training: the caching allocator's memory over the first iterations (Fig. 2)")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    print(f"wrote {path}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--batch", type=int, default=32, help="images per step for the vision models")
    ap.add_argument("--plot", default="fig2_memory.png")
    args = ap.parse_args()
    if not ember.cuda.is_available():
        print("bench_cuda_training: no CUDA GPU (ember.cuda.is_available() is False)")
        return 0
    print(f"GPU: {ember.cuda.get_device_name()}  (PyTorch {torch.__version__ if torch else 'absent'}); "
          f"{args.steps} timed steps after 3 warm-up steps, SGD with momentum")
    print(f"| {'model':<14} | {'precision':<9} | {'unit':<9} | {'ember':>12} | {'torch':>12} | {'ratio':>6} |")
    print(f"|{'-' * 16}|{'-' * 11}|{'-' * 11}|{'-' * 14}|{'-' * 14}|{'-' * 8}|")
    cases = [(n, vision_case(n, args.batch)) for n in VISION]
    cases += [("lstm_lm", lstm_case(64)), ("ncf", ncf_case(8192))]
    ratios = []
    for name, (make, per_step, unit) in cases:
        for bf16 in (False, True):
            e = throughput(ember, make, per_step, args.steps, bf16)
            t = throughput(torch, make, per_step, args.steps, bf16) if HAVE_TORCH else None
            ratio = ""
            if isinstance(e, float) and isinstance(t, float):
                ratios.append(e / t)
                ratio = f"{e / t:.2f}x"
            fmt = lambda v: "-" if v is None else (f"{v:,.0f}" if isinstance(v, float) else "error")
            print(f"| {name:<14} | {'bf16' if bf16 else 'float32':<9} | {unit:<9} | {fmt(e):>12} | {fmt(t):>12} | "
                  f"{ratio:>6} |")
            for lib_name, v in (("ember", e), ("torch", t)):
                if isinstance(v, str):
                    print(f"|   {lib_name} error: {v}")
    if ratios:
        print(f"\ngeomean ratio over {len(ratios)} rows measured by both: "
              f"{math.exp(sum(math.log(r) for r in ratios) / len(ratios)):.2f}x (target >= 1.0, every row >= 0.95)")

    print("\nFig. 2: ResNet-50 (batch %d), per iteration: allocated MiB / reserved MiB / cudaMalloc calls so far" % args.batch)
    traces = {}
    for name, lib in (("ember", ember),) + ((("torch", torch),) if HAVE_TORCH else ()):
        try:
            traces[name] = memory_trace(lib, args.batch)
        except Exception as e:  # noqa: BLE001
            print(f"  {name}: {type(e).__name__}: {str(e).splitlines()[0][:80]}")
            continue
        print(f"  {name}: " + "  ".join(f"[{i + 1}] {a:.0f}/{r:.0f}/{c}" for i, (a, r, c) in enumerate(traces[name])))
        later = traces[name][-1][2] - traces[name][0][2]
        print(f"  {name}: cudaMalloc calls after iteration 1: {later} (target 0)")
    if traces:
        plot(traces, args.plot)
    return 0


if __name__ == "__main__":
    sys.exit(main())
