"""Data-parallel training on one or several machines: DistributedDataParallel over Gloo (CPU) or
NCCL (--device cuda, the default when a GPU is available: one GPU per process, LOCAL_RANK's).

One machine, 2 processes:

    PYTHONPATH=python python3 -m ember.distributed.run --nproc-per-node 2 examples/ddp_train.py --epochs 2

Two machines (run on each; A is node 0's address, reachable from node 1, port P free on A):

    node 0:  python3 -m ember.distributed.run --nnodes 2 --node-rank 0 --nproc-per-node 2 \\
                 --master-addr A --master-port P examples/ddp_train.py
    node 1:  python3 -m ember.distributed.run --nnodes 2 --node-rank 1 --nproc-per-node 2 \\
                 --master-addr A --master-port P examples/ddp_train.py

Every process reads RANK / WORLD_SIZE / MASTER_ADDR / MASTER_PORT from the launcher; Gloo connects
the ranks over TCP (GLOO_SOCKET_IFNAME=eth0 picks the interface when the host name does not resolve
to the right one). Each rank trains on its DistributedSampler shard; gradients are averaged during
backward, so all replicas stay identical; rank 0 evaluates and writes the checkpoint. The same file
runs with PyTorch: --backend torch (and torch.distributed.run / torchrun as the launcher).
"""
import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fashion_mnist import DATA_DIR, build_model, load_split  # noqa: E402


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--backend", choices=["ember", "torch"], default="ember")
    p.add_argument("--epochs", type=int, default=2)
    p.add_argument("--batch-size", type=int, default=128, help="global batch (split across the processes)")
    p.add_argument("--lr", type=float, default=2e-3)
    p.add_argument("--limit", type=int, default=0)
    p.add_argument("--data", default=DATA_DIR)
    p.add_argument("--save", default="")
    p.add_argument("--device", default=None,
                   help="cpu (Gloo) or cuda (NCCL, GPU LOCAL_RANK); default: cuda when a GPU is available")
    args = p.parse_args()
    if args.backend == "torch":
        import torch
    else:
        import ember as torch
    on_gpu = (args.device or ("cuda" if torch.cuda.is_available() else "cpu")) == "cuda"
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    device = torch.device("cuda", local_rank) if on_gpu else torch.device("cpu")
    if on_gpu:
        torch.cuda.set_device(local_rank)
    pg_backend = "nccl" if on_gpu else "gloo"
    from_launcher = "RANK" in os.environ
    if from_launcher:
        torch.distributed.init_process_group(pg_backend)
    else:  # plain `python ddp_train.py`: a world of one
        torch.distributed.init_process_group(pg_backend, store=torch.distributed.HashStore(), rank=0, world_size=1)
    rank, world = torch.distributed.get_rank(), torch.distributed.get_world_size()
    local = int(os.environ.get("LOCAL_WORLD_SIZE", "1"))  # processes sharing this machine's cores
    torch.set_num_threads(max(1, os.cpu_count() // local))
    torch.manual_seed(0)

    xtr, ytr = load_split(args.data, True)
    xte, yte = load_split(args.data, False)
    if args.limit:
        xtr, ytr = xtr[:args.limit], ytr[:args.limit]
    norm = lambda a: torch.from_numpy(((a.astype(np.float32) / 255.0 - 0.2860) / 0.3530)[:, None].copy())
    train = torch.utils.data.TensorDataset(norm(xtr), torch.from_numpy(ytr.astype(np.int64)))
    sampler = torch.utils.data.distributed.DistributedSampler(train, seed=0)
    loader = torch.utils.data.DataLoader(train, batch_size=args.batch_size // world, sampler=sampler)

    model = build_model(torch.nn).to(device)
    ddp = torch.nn.parallel.DistributedDataParallel(model, device_ids=[local_rank] if on_gpu else None)
    opt = torch.optim.Adam(ddp.parameters(), lr=args.lr)
    loss_fn = torch.nn.CrossEntropyLoss()
    if rank == 0:
        print(f"{args.backend}: {world} processes on {world // local} node(s) ({pg_backend}, {device.type}), "
              f"{len(train):,} images, global batch {args.batch_size}")
    train_seconds = 0.0
    for epoch in range(1, args.epochs + 1):
        sampler.set_epoch(epoch)
        model.train()
        start = time.perf_counter()
        total = torch.zeros(2, dtype=torch.float64, device=device)
        for x, y in loader:
            x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
            opt.zero_grad()
            loss = loss_fn(ddp(x), y)
            loss.backward()
            opt.step()
            total += torch.stack([loss.detach().double() * x.shape[0], total.new_tensor(x.shape[0])])
        torch.distributed.all_reduce(total)
        train_seconds += time.perf_counter() - start
        if rank == 0:
            model.eval()
            with torch.no_grad():
                xt = norm(xte).to(device)
                acc = (model(xt).argmax(1) == torch.from_numpy(yte.astype(np.int64)).to(device)).float().mean().item()
            print(f"epoch {epoch}: train loss {total[0].item() / total[1].item():.4f}  test accuracy {100 * acc:.2f}%  "
                  f"{total[1].item() * epoch / train_seconds:,.0f} img/s (training)", flush=True)
    if rank == 0 and args.save:
        torch.save(model.state_dict(), args.save)
        print(f"wrote {args.save}")
    torch.distributed.destroy_process_group()


if __name__ == "__main__":
    main()
