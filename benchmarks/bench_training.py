"""Training throughput of small models, Ember vs PyTorch: steps/s from interleaved rounds in one
process (medians), peak RSS per workload from separate processes, and `import` time.

    PYTHONPATH=python python3 benchmarks/bench_training.py [--threads N] [--only mlp,lenet,...] [--no-rss]
"""
import argparse
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
WORKLOADS = ["mlp", "lenet", "resnet", "lstm", "transformer"]


def make(lib, name, wrap=None):
    """(step function, description) for one workload, identical for both libraries. wrap(model)
    gives the callable the step runs forward through (ember.compile / torch.compile)."""
    nn = lib.nn
    lib.manual_seed(0)
    if name == "mlp":
        model = nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(), nn.Linear(512, 10))
        opt = lib.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
        x, y = lib.randn(64, 784), lib.randint(0, 10, (64,))
        desc = "MLP 784-512-512-10, batch 64, SGD momentum"
    elif name == "lenet":
        model = nn.Sequential(nn.Conv2d(1, 6, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(6, 16, 5), nn.ReLU(),
                              nn.MaxPool2d(2), nn.Flatten(), nn.Linear(400, 120), nn.ReLU(), nn.Linear(120, 84),
                              nn.ReLU(), nn.Linear(84, 10))
        opt = lib.optim.Adam(model.parameters(), lr=1e-3)
        x, y = lib.randn(64, 1, 28, 28), lib.randint(0, 10, (64,))
        desc = "LeNet-5 28x28, batch 64, Adam"
    elif name == "resnet":
        def block(c):
            return nn.Sequential(nn.Conv2d(c, c, 3, padding=1, bias=False), nn.BatchNorm2d(c), nn.ReLU(),
                                 nn.Conv2d(c, c, 3, padding=1, bias=False), nn.BatchNorm2d(c))

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.stem = nn.Sequential(nn.Conv2d(3, 32, 3, padding=1, bias=False), nn.BatchNorm2d(32), nn.ReLU())
                self.b1, self.b2 = block(32), block(32)
                self.down = nn.Sequential(nn.Conv2d(32, 64, 3, stride=2, padding=1, bias=False), nn.BatchNorm2d(64),
                                          nn.ReLU())
                self.b3 = block(64)
                self.head = nn.Linear(64, 10)

            def forward(self, x):
                x = self.stem(x)
                x = (x + self.b1(x)).relu()
                x = (x + self.b2(x)).relu()
                x = self.down(x)
                x = (x + self.b3(x)).relu()
                return self.head(x.mean((2, 3)))
        model = Net()
        opt = lib.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, nesterov=True, weight_decay=5e-4)
        x, y = lib.randn(32, 3, 32, 32), lib.randint(0, 10, (32,))
        desc = "ResNet-style CNN 3x32x32 with BatchNorm, batch 32, SGD nesterov"
    elif name == "lstm":
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.rnn = nn.LSTM(128, 256, batch_first=True)
                self.head = nn.Linear(256, 10)

            def forward(self, x):
                return self.head(self.rnn(x)[0][:, -1])
        model = Net()
        opt = lib.optim.Adam(model.parameters(), lr=1e-3)
        x, y = lib.randn(32, 32, 128), lib.randint(0, 10, (32,))
        desc = "LSTM 128->256, 32 steps, batch 32, Adam"
    elif name == "transformer":
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                layer = nn.TransformerEncoderLayer(128, 4, 256, dropout=0.0, batch_first=True)
                self.enc = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
                self.head = nn.Linear(128, 10)

            def forward(self, x):
                return self.head(self.enc(x).mean(1))
        model = Net()
        opt = lib.optim.AdamW(model.parameters(), lr=1e-3)
        x, y = lib.randn(16, 64, 128), lib.randint(0, 10, (16,))
        desc = "Transformer encoder 2 layers d=128 4 heads seq 64, batch 16, AdamW"
    else:
        raise ValueError(name)
    loss_fn = nn.CrossEntropyLoss()
    forward = wrap(model) if wrap is not None else model

    def step():
        opt.zero_grad()
        loss = loss_fn(forward(x), y)
        loss.backward()
        opt.step()
        return loss
    return step, desc


def time_steps(step, min_time=0.3):
    n, start = 0, time.perf_counter()
    while True:
        step()
        n += 1
        el = time.perf_counter() - start
        if el >= min_time and n >= 3:
            return el / n


def rss_worker(lib_name, workload, threads, steps):
    lib = __import__(lib_name)
    lib.set_num_threads(threads)
    step, _ = make(lib, workload)
    for _ in range(steps):
        step()
    # VmHWM, not ru_maxrss: Linux carries ru_maxrss over fork+exec from the (large) parent
    with open("/proc/self/status") as f:
        print(next(int(line.split()[1]) for line in f if line.startswith("VmHWM:")))  # KiB


def import_time(lib_name, runs=5):
    env = dict(os.environ, PYTHONPATH=os.path.join(HERE, "..", "python"))
    ts = []
    for _ in range(runs):
        out = subprocess.run([sys.executable, "-c", f"import time; t = time.perf_counter(); import {lib_name}; "
                              "print(time.perf_counter() - t)"], capture_output=True, text=True, env=env, check=True)
        ts.append(float(out.stdout))
    return statistics.median(ts)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--only", default=",".join(WORKLOADS))
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--no-rss", action="store_true")
    p.add_argument("--rss-worker", nargs=2, metavar=("LIB", "WORKLOAD"))
    p.add_argument("--rss-steps", type=int, default=20)
    args = p.parse_args()
    if args.rss_worker:
        return rss_worker(*args.rss_worker, args.threads, args.rss_steps)
    import ember
    import torch
    libs = {"ember": ember, "torch": torch}
    for lib in libs.values():
        lib.set_num_threads(args.threads)
    names = args.only.split(",")
    print(f"## Training steps/s, {args.threads} thread(s) (median of {args.rounds} interleaved rounds)")
    print("| workload | ember steps/s | torch steps/s | ember/torch | ember peak RSS | torch peak RSS |")
    print("|---|---|---|---|---|---|")
    ratios = []
    for name in names:
        steps = {k: make(lib, name) for k, lib in libs.items()}
        for s, _ in steps.values():  # warm up
            for _ in range(3):
                s()
        samples = {k: [] for k in libs}
        for _ in range(args.rounds):
            for k, (s, _) in steps.items():
                samples[k].append(time_steps(s))
        med = {k: statistics.median(v) for k, v in samples.items()}
        ratio = med["torch"] / med["ember"]
        ratios.append(ratio)
        rss = {}
        if not args.no_rss:
            for k in libs:
                out = subprocess.run([sys.executable, __file__, "--rss-worker", k, name, "--threads", str(args.threads),
                                      "--rss-steps", str(args.rss_steps)], capture_output=True, text=True, check=True,
                                     env=dict(os.environ, PYTHONPATH=os.path.join(HERE, "..", "python")))
                rss[k] = f"{int(out.stdout.split()[-1]) / 1024:.0f} MiB"
        print(f"| {steps['ember'][1]} | {1 / med['ember']:.1f} | {1 / med['torch']:.1f} | {ratio:.2f}x | "
              f"{rss.get('ember', '')} | {rss.get('torch', '')} |", flush=True)
    gm = statistics.geometric_mean(ratios)
    print(f"\ngeometric mean ember/torch speed: {gm:.2f}x")
    if not args.no_rss:
        ie, it = import_time("ember"), import_time("torch")
        print(f"import time: ember {ie * 1e3:.0f} ms, torch {it * 1e3:.0f} ms ({ie / it:.2f} of torch's)")


if __name__ == "__main__":
    main()
