"""Profile one training step of a small Fashion-MNIST CNN and draw its timeline.

    PYTHONPATH=python python3 examples/profile_step.py [--backend ember|torch] [--batch 64] [--out DIR]

The CPU analogue of Figure 1 of the PyTorch paper (Paszke et al., 2019): every op of the forward
pass, the autograd nodes of the backward pass and the optimizer's ops, laid out on the time axis
at their nesting depth, with the memory held by tensors below. Writes DIR/profile_step.trace.json
(open it in https://ui.perfetto.dev or chrome://tracing) and DIR/profile_step.png (needs
matplotlib), and prints the key_averages table. Uses random images when the dataset is missing.
"""
import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fashion_mnist import DATA_DIR, build_model, read_idx  # noqa: E402

PHASES = {"forward": "#4C72B0", "backward": "#DD8452", "optimizer.step": "#55A868"}


def load_batch(batch):
    img = os.path.join(DATA_DIR, "train-images-idx3-ubyte.gz")
    lbl = os.path.join(DATA_DIR, "train-labels-idx1-ubyte.gz")
    if os.path.exists(img) and os.path.exists(lbl):
        x, y = read_idx(img)[:batch], read_idx(lbl)[:batch]
        return (x.astype(np.float32) / 255.0 - 0.2860) / 0.3530, y.astype(np.int64), "Fashion-MNIST"
    print(f"Fashion-MNIST not found under {DATA_DIR}: using random images")
    rng = np.random.default_rng(0)
    return rng.standard_normal((batch, 28, 28), dtype=np.float32), rng.integers(0, 10, batch), "random data"


def train_step(lib, model, opt, x, y):
    rf = lib.profiler.record_function
    with rf("forward"):
        loss = lib.nn.functional.cross_entropy(model(x), y)
    with rf("backward"):
        opt.zero_grad()
        loss.backward()
    with rf("optimizer.step"):
        opt.step()
    return loss


def phase_of(ev):
    while ev is not None:
        if ev.name in PHASES:
            return ev.name
        ev = ev.cpu_parent
    return None


def draw_timeline(events, path, title):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: skipping the PNG")
        return False
    evs = [e for e in events if e.name != "[memory]"]
    t0 = min(e.time_range.start for e in evs)
    depth = {}
    for e in sorted(evs, key=lambda e: e.time_range.start):
        depth[e.id] = 0 if e.cpu_parent is None else depth.get(e.cpu_parent.id, 0) + 1
    max_depth = max(depth.values())
    fig, (ax, axm) = plt.subplots(2, 1, figsize=(16, 3 + 0.45 * max_depth), sharex=True,
                                  gridspec_kw={"height_ratios": [max(max_depth, 3), 2]})
    total_ms = max(e.time_range.end for e in evs) / 1e3 - t0 / 1e3
    for e in evs:
        start, width = (e.time_range.start - t0) / 1e3, e.time_range.elapsed_us() / 1e3
        phase = phase_of(e)
        color = "#BBBBBB" if e.is_user_annotation else PHASES.get(phase, "#8172B3")
        y = -depth[e.id]
        ax.broken_barh([(start, width)], (y - 0.4, 0.8), facecolors=color, edgecolors="black", linewidth=0.2)
        if width > total_ms / 40:  # label the boxes wide enough to hold a name
            label = e.name.replace("autograd::engine::evaluate_function: ", "")
            ax.text(start + width / 2, y, label[: max(3, int(width / total_ms * 160))], ha="center", va="center",
                    fontsize=6, clip_on=True)
    ax.set_yticks([-d for d in range(max_depth + 1)], [f"depth {d}" for d in range(max_depth + 1)])
    ax.set_title(title, loc="left")
    handles = [plt.Rectangle((0, 0), 1, 1, color=c) for c in PHASES.values()] + \
              [plt.Rectangle((0, 0), 1, 1, color="#BBBBBB")]
    ax.legend(handles, list(PHASES) + ["record_function range"], loc="lower right", bbox_to_anchor=(1.0, 1.0),
              ncol=4, fontsize=7, frameon=False)
    mem = sorted(events._memory_records, key=lambda r: r[1])
    if mem:
        xs = [(r[1] - t0) / 1e3 for r in mem]
        ys = [r[3] / 2 ** 20 for r in mem]
        axm.step(xs, ys, where="post", color="#C44E52")
        axm.fill_between(xs, ys, step="post", alpha=0.3, color="#C44E52")
    axm.set_ylabel("tensor memory (MiB)")
    axm.set_xlabel("time (ms)")
    fig.tight_layout()
    fig.savefig(path, dpi=130)
    plt.close(fig)
    return True


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--backend", choices=("ember", "torch"), default="ember")
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--out", default="profile_out")
    args = p.parse_args()
    if args.backend == "torch":
        import torch as lib
    else:
        sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
        import ember as lib
    lib.manual_seed(0)
    lib.set_num_threads(args.threads)
    x_np, y_np, source = load_batch(args.batch)
    x = lib.tensor(x_np).reshape(args.batch, 1, 28, 28)
    y = lib.tensor(y_np)
    model = build_model(lib.nn)
    opt = lib.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    train_step(lib, model, opt, x, y)  # warm up: the first step allocates the momentum buffers
    with lib.profiler.profile(activities=[lib.profiler.ProfilerActivity.CPU], record_shapes=True,
                              profile_memory=True) as prof:
        with lib.profiler.record_function("train_step"):
            loss = train_step(lib, model, opt, x, y)
    print(f"one training step on a batch of {args.batch} ({source}), loss {loss.item():.4f}, {args.backend}\n")
    print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=15))
    os.makedirs(args.out, exist_ok=True)
    trace = os.path.join(args.out, "profile_step.trace.json")
    prof.export_chrome_trace(trace)
    print(f"trace: {trace} ({len(prof.events())} events)")
    png = os.path.join(args.out, "profile_step.png")
    if args.backend != "ember":
        print("the timeline PNG is drawn for the ember backend only")
    elif draw_timeline(prof.events(), png, f"One training step ({args.backend}, "
                                                                       f"batch {args.batch}, {source})"):
        print(f"timeline: {png}")


if __name__ == "__main__":
    main()
