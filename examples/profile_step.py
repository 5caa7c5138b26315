"""Profile one training step of a small Fashion-MNIST CNN and draw its timeline.

    PYTHONPATH=python python3 examples/profile_step.py [--backend ember|torch] [--device cpu|cuda]
                                                       [--batch 64] [--out DIR]

Figure 1 of the PyTorch paper (Paszke et al., 2019): every op of the forward pass, the autograd
nodes of the backward pass and the optimizer's ops, laid out on the time axis at their nesting
depth, with the memory held by tensors below. With --device cuda (the default when a GPU is
available) the GPU's kernels get their own rows under the host's, coloured by the phase that
launched them: the host runs ahead of the device, which is the figure's point. Writes
DIR/profile_step.trace.json (open it in https://ui.perfetto.dev or chrome://tracing) and
DIR/profile_step.png (needs matplotlib), and prints the key_averages table. Uses random images
when the dataset is missing.
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
    ev = getattr(ev, "linked", None) or ev  # device work: the phase of the op that launched it
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
    everything = [e for e in events if e.name != "[memory]"]
    evs = [e for e in everything if int(e.device_type) == 0]  # the host's ranges (DeviceType.CPU)
    device = [e for e in everything if int(e.device_type) != 0]
    t0 = min(e.time_range.start for e in everything)
    depth = {}
    for e in sorted(evs, key=lambda e: e.time_range.start):
        depth[e.id] = 0 if e.cpu_parent is None else depth.get(e.cpu_parent.id, 0) + 1
    host_depth = max(depth.values())
    streams = sorted({(e.device_index, e.thread) for e in device})
    for e in device:  # one row per GPU stream, below the host's rows
        depth[e.id] = host_depth + 2 + streams.index((e.device_index, e.thread))
    max_depth = max(depth.values())
    fig, (ax, axm) = plt.subplots(2, 1, figsize=(16, 3 + 0.45 * max_depth), sharex=True,
                                  gridspec_kw={"height_ratios": [max(max_depth, 3), 2]})
    total_ms = max(e.time_range.end for e in everything) / 1e3 - t0 / 1e3
    for e in evs + device:
        start, width = (e.time_range.start - t0) / 1e3, e.time_range.elapsed_us() / 1e3
        phase = phase_of(e)
        color = "#BBBBBB" if e.is_user_annotation else PHASES.get(phase, "#8172B3")
        y = -depth[e.id]
        ax.broken_barh([(start, width)], (y - 0.4, 0.8), facecolors=color, edgecolors="black", linewidth=0.2)
        if width > total_ms / 40:  # label the boxes wide enough to hold a name
            label = e.name.replace("autograd::engine::evaluate_function: ", "")
            ax.text(start + width / 2, y, label[: max(3, int(width / total_ms * 160))], ha="center", va="center",
                    fontsize=6, clip_on=True)
    ticks = [(-d, f"depth {d}") for d in range(host_depth + 1)]
    ticks += [(-(host_depth + 2 + i), f"GPU {dev} stream {st}") for i, (dev, st) in enumerate(streams)]
    ax.set_yticks([t for t, _ in ticks], [label for _, label in ticks])
    if device:
        host_end = max(e.time_range.end for e in evs if e.cpu_parent is None) / 1e3 - t0 / 1e3
        device_end = max(e.time_range.end for e in device) / 1e3 - t0 / 1e3
        ax.axvline(host_end, color="black", linestyle=":", linewidth=0.8)
        title += f" - host done at {host_end:.2f} ms, GPU at {device_end:.2f} ms"
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
    p.add_argument("--device", default=None, help="cpu or cuda (default: cuda when a GPU is available)")
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
    device = args.device or ("cuda" if lib.cuda.is_available() else "cpu")
    on_gpu = lib.device(device).type == "cuda"
    x = lib.tensor(x_np).reshape(args.batch, 1, 28, 28).to(device)
    y = lib.tensor(y_np).to(device)
    model = build_model(lib.nn).to(device)
    opt = lib.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    train_step(lib, model, opt, x, y)  # warm up: the first step allocates the momentum buffers
    activities = [lib.profiler.ProfilerActivity.CPU] + ([lib.profiler.ProfilerActivity.CUDA] if on_gpu else [])
    if on_gpu:
        lib.cuda.synchronize()
    with lib.profiler.profile(activities=activities, record_shapes=True, profile_memory=True) as prof:
        with lib.profiler.record_function("train_step"):
            loss = train_step(lib, model, opt, x, y)
    print(f"one training step on a batch of {args.batch} ({source}) on {device}, loss {loss.item():.4f}, "
          f"{args.backend}\n")
    print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=15))
    if on_gpu:
        print(prof.key_averages().table(sort_by="self_cuda_time_total", row_limit=15))
    os.makedirs(args.out, exist_ok=True)
    trace = os.path.join(args.out, "profile_step.trace.json")
    prof.export_chrome_trace(trace)
    print(f"trace: {trace} ({len(prof.events())} events)")
    png = os.path.join(args.out, "profile_step.png")
    if args.backend != "ember":
        print("the timeline PNG is drawn for the ember backend only")
    elif draw_timeline(prof.events(), png, f"One training step ({args.backend} on {device}, "
                                           f"batch {args.batch}, {source})"):
        print(f"timeline: {png}")


if __name__ == "__main__":
    main()
