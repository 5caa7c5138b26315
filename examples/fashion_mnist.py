"""Train a CNN on Fashion-MNIST with Ember (or, with --backend torch, the identical model with PyTorch).

    PYTHONPATH=python python3 examples/fashion_mnist.py [--backend ember|torch] [--epochs 3] [--nproc N]
                                                        [--device cpu|cuda]

--device picks where the model trains: cuda when a GPU is available (default), else the CPU.

--nproc N trains data-parallel in N processes (DistributedDataParallel over Gloo, started by
ember.distributed.run, or torch.distributed.run with --backend torch): the same global batch, each
process a shard of every batch (DistributedSampler), gradients averaged during backward.

Prints a progress bar per epoch, the train loss, test accuracy, images/s and elapsed time; writes a
checkpoint (safetensors) and a PNG plot of the loss and accuracy curves to --out.
"""
import argparse
import gzip
import os
import struct
import subprocess
import sys
import time

import numpy as np

DATA_DIR = "/usr/share/datasets/fashion-mnist"


def read_idx(path):
    """An IDX file (raw or gzip) as a NumPy array."""
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        data = f.read()
    zero, dtype_code, ndim = struct.unpack(">HBB", data[:4])
    if zero != 0 or dtype_code != 0x08:
        raise ValueError(f"{path}: not an unsigned-byte IDX file")
    shape = struct.unpack(">" + "I" * ndim, data[4:4 + 4 * ndim])
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * ndim).reshape(shape)


def load_split(root, train):
    prefix = "train" if train else "t10k"
    for suffix in ("", ".gz"):
        img = os.path.join(root, f"{prefix}-images-idx3-ubyte{suffix}")
        lbl = os.path.join(root, f"{prefix}-labels-idx1-ubyte{suffix}")
        if os.path.exists(img) and os.path.exists(lbl):
            return read_idx(img), read_idx(lbl)
    sys.exit(f"Fashion-MNIST not found under {root}: install the Debian package dataset-fashion-mnist "
             "(apt-get install dataset-fashion-mnist)")


def build_model(nn):
    return nn.Sequential(
        nn.Conv2d(1, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(64 * 7 * 7, 128), nn.ReLU(), nn.Dropout(0.25), nn.Linear(128, 10))


def progress(epoch, done, total, loss, start):
    width = 30
    filled = int(width * done / total)
    rate = done / max(time.perf_counter() - start, 1e-9)
    sys.stdout.write(f"\repoch {epoch} [{'#' * filled}{'.' * (width - filled)}] {done}/{total} "
                     f"loss {loss:.4f} {rate:,.0f} img/s")
    sys.stdout.flush()


def save_plot(history, path, backend):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib not installed: skipping the plot")
        return
    epochs = [h["epoch"] for h in history]
    fig, (a, b) = plt.subplots(1, 2, figsize=(9, 3.5))
    a.plot(epochs, [h["loss"] for h in history], marker="o")
    a.set_xlabel("epoch")
    a.set_ylabel("train loss")
    b.plot(epochs, [100 * h["acc"] for h in history], marker="o", color="tab:green")
    b.set_xlabel("epoch")
    b.set_ylabel("test accuracy (%)")
    fig.suptitle(f"Fashion-MNIST CNN ({backend})")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    print(f"wrote {path}")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--backend", choices=["ember", "torch"], default="ember")
    p.add_argument("--epochs", type=int, default=4)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--threads", type=int, default=os.cpu_count())
    p.add_argument("--data", default=DATA_DIR)
    p.add_argument("--out", default="out")
    p.add_argument("--limit", type=int, default=0, help="train on the first N images only (quick runs)")
    p.add_argument("--nproc", type=int, default=1, help="data-parallel processes on this machine (DDP over Gloo)")
    p.add_argument("--device", default=None, help="cpu or cuda (default: cuda when a GPU is available; DDP: cpu)")
    args = p.parse_args()
    if args.nproc > 1 and "RANK" not in os.environ:
        # relaunch this script as N workers through the launcher (torchrun's interface)
        # the workers get every option but --nproc (they know they are workers from RANK; and the
        # launcher's parser, like torchrun's, would take --nproc for an abbreviation of its own option)
        argv, rest = [], iter(sys.argv[1:])
        for a in rest:
            if a == "--nproc":
                next(rest, None)  # and its value
            elif not a.startswith("--nproc="):
                argv.append(a)
        cmd = [sys.executable, "-m", f"{args.backend}.distributed.run", "--nproc-per-node", str(args.nproc),
               os.path.abspath(__file__), *argv]
        sys.exit(subprocess.call(cmd))
    distributed = "RANK" in os.environ and int(os.environ.get("WORLD_SIZE", "1")) > 1

    if args.backend == "torch":
        import torch
    else:
        import ember as torch  # the same program runs on both
    nn = torch.nn
    device = args.device or ("cuda" if torch.cuda.is_available() and not distributed else "cpu")
    on_gpu = torch.device(device).type == "cuda"
    torch.manual_seed(0)
    rank, world = 0, 1
    if distributed:
        torch.distributed.init_process_group("gloo")
        rank, world = torch.distributed.get_rank(), torch.distributed.get_world_size()
        args.threads = max(1, args.threads // world)  # the cores are shared by the workers
    torch.set_num_threads(args.threads)
    log = print if rank == 0 else (lambda *a, **k: None)

    xtr, ytr = load_split(args.data, True)
    xte, yte = load_split(args.data, False)
    if args.limit:
        xtr, ytr = xtr[:args.limit], ytr[:args.limit]
    mean, std = 0.2860, 0.3530  # Fashion-MNIST training-set statistics
    to_x = lambda a: torch.from_numpy(((a.astype(np.float32) / 255.0 - mean) / std)[:, None].copy())
    to_y = lambda a: torch.from_numpy(a.astype(np.int64))
    train = torch.utils.data.TensorDataset(to_x(xtr), to_y(ytr))
    sampler = torch.utils.data.distributed.DistributedSampler(train, seed=0) if distributed else None
    # the global batch stays --batch-size: each of the `world` processes takes its share
    loader = torch.utils.data.DataLoader(train, batch_size=args.batch_size // world, shuffle=sampler is None,
                                         sampler=sampler, pin_memory=on_gpu)
    test_x, test_y = to_x(xte), to_y(yte)

    model = build_model(nn).to(device)
    net = nn.parallel.DistributedDataParallel(model) if distributed else model
    opt = torch.optim.Adam(net.parameters(), lr=args.lr)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=args.epochs)
    loss_fn = nn.CrossEntropyLoss()
    log(f"{args.backend}: {sum(p.numel() for p in model.parameters()):,} parameters, {len(train):,} training "
        f"images, " + (f"on {device}" if on_gpu else f"{args.threads} threads")
        + (f" x {world} processes (DDP, gloo)" if distributed else ""))

    history = []
    t_total = time.perf_counter()
    for epoch in range(1, args.epochs + 1):
        model.train()
        if sampler is not None:
            sampler.set_epoch(epoch)
        start = time.perf_counter()
        seen, loss_sum = 0, 0.0
        for i, (x, y) in enumerate(loader):
            x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
            opt.zero_grad()
            loss = loss_fn(net(x), y)
            loss.backward()
            opt.step()
            seen += x.shape[0] * world
            loss_sum += loss.item() * x.shape[0] * world
            if rank == 0 and (i % 20 == 0 or seen >= len(train)):
                progress(epoch, min(seen, len(train)), len(train), loss_sum / seen, start)
        if distributed:  # the epoch's loss over every rank's shard
            total = torch.tensor([loss_sum / world, seen / world], dtype=torch.float64)
            torch.distributed.all_reduce(total)
            loss_sum, seen = total[0].item(), int(total[1].item())
        train_time = time.perf_counter() - start
        sched.step()
        model.eval()
        correct = 0
        with torch.no_grad():
            for j in range(rank * 1000, test_x.shape[0], 1000 * world):  # each rank a share of the test set
                xb, yb = test_x[j:j + 1000].to(device), test_y[j:j + 1000].to(device)
                correct += (model(xb).argmax(1) == yb).sum().item()
        if distributed:
            c = torch.tensor([correct])
            torch.distributed.all_reduce(c)
            correct = c.item()
        acc = correct / test_x.shape[0]
        history.append({"epoch": epoch, "loss": loss_sum / seen, "acc": acc})
        log(f"\repoch {epoch}: train loss {loss_sum / seen:.4f}  test accuracy {100 * acc:.2f}%  "
              f"{seen / train_time:,.0f} img/s  epoch {train_time:.1f}s  elapsed {time.perf_counter() - t_total:.1f}s")

    if rank != 0:  # every rank holds the same model: rank 0 writes the results
        torch.distributed.destroy_process_group()
        return
    os.makedirs(args.out, exist_ok=True)
    model = model.cpu()  # the outputs below (checkpoint, traced graph) are CPU artifacts
    ckpt = os.path.join(args.out, f"fashion_mnist_{args.backend}.safetensors")
    if args.backend == "torch":
        try:
            from safetensors.torch import save_file
        except ImportError:
            save_file = None
    else:
        from ember.safetensors import save_file
    if save_file is not None:
        save_file({k: v.contiguous() for k, v in model.state_dict().items()}, ckpt)
        print(f"wrote {ckpt}")
    if args.backend == "ember":
        # the trained model as a graph that C++ serves without Python (examples/cpp/serve_traced.cpp)
        traced = torch.jit.trace(model.eval(), test_x[:8])
        graph_path = os.path.join(args.out, "fashion_mnist_ember_traced.pt")
        torch.jit.save(traced, graph_path)
        from ember.safetensors import save_file as save_probe
        with torch.no_grad():
            save_probe({"input": test_x[:100].contiguous(), "output": traced(test_x[:100]).contiguous()},
                       os.path.join(args.out, "fashion_mnist_ember_probe.safetensors"))
        print(f"wrote {graph_path} (serve it from C++: examples/cpp/serve_traced.cpp)")
    save_plot(history, os.path.join(args.out, f"fashion_mnist_{args.backend}.png"), args.backend)
    print(f"final test accuracy {100 * history[-1]['acc']:.2f}% in {time.perf_counter() - t_total:.1f}s")
    if distributed:
        torch.distributed.destroy_process_group()


if __name__ == "__main__":
    main()
