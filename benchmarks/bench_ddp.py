"""Data-parallel training on the CPU, Ember vs PyTorch: DistributedDataParallel over Gloo at 1..N
processes on bench_training's workloads (global throughput, medians of interleaved rounds), the
share of all-reduce time hidden behind backward (Ember's reducer counts it), and all_reduce itself
(latency and bus bandwidth by size).

    PYTHONPATH=python python3 benchmarks/bench_ddp.py [--only mlp,lenet] [--nprocs 1,2] [--rounds 3]
        [--hook allreduce|fp16|powersgd]   (a communication hook on both sides; PowerSGD at rank 1)

Each process gets cores/nproc threads; every configuration runs in fresh processes, Ember's and
PyTorch's rounds alternate so machine noise hits both alike.
"""
import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from bench_training import WORKLOADS, make  # noqa: E402

BATCH = {"mlp": 64, "lenet": 64, "resnet": 32, "lstm": 32, "transformer": 16}


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def launch(nproc, args):
    """Runs this file with `args` as `nproc` ranks; rank 0's JSON line."""
    port = free_port()
    env = dict(os.environ, MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), WORLD_SIZE=str(nproc),
               PYTHONPATH=os.path.join(HERE, "..", "python") + os.pathsep + os.environ.get("PYTHONPATH", ""))
    procs = [subprocess.Popen([sys.executable, __file__, *args], env=dict(env, RANK=str(r), LOCAL_RANK=str(r)),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for r in range(nproc)]
    try:
        outs = [p.communicate(timeout=300) for p in procs]
    except subprocess.TimeoutExpired:  # a configuration that hangs (torch's PowerSGD on Gloo can): reported, not waited for
        for p in procs:
            p.kill()
        return None
    for p, (out, err) in zip(procs, outs):
        if p.returncode != 0:
            if "--train-worker" in args:  # reported in the table (torch's PowerSGD on Gloo can fail)
                lines = [ln for ln in err.strip().splitlines() if ln.strip()]
                return {"error": lines[-1][:160] if lines else f"exit code {p.returncode}"}
            raise RuntimeError(f"worker failed ({' '.join(args)}):\n{err[-3000:]}")
    return json.loads(outs[0][0].strip().splitlines()[-1])


# ------------------------------------------------------------------ workers
def register_hook(lib, ddp, hook):
    """The same stock communication hook on either library's DDP."""
    if hook == "allreduce":
        return
    hooks = __import__(f"{lib.__name__}.distributed.algorithms.ddp_comm_hooks", fromlist=["x"])
    if hook == "fp16":
        ddp.register_comm_hook(None, hooks.default_hooks.fp16_compress_hook)
    elif hook == "powersgd":
        state = hooks.powerSGD_hook.PowerSGDState(process_group=None, matrix_approximation_rank=1,
                                                  start_powerSGD_iter=2)
        ddp.register_comm_hook(state, hooks.powerSGD_hook.powerSGD_hook)
    else:
        raise ValueError(f"unknown hook {hook!r}")


def train_worker(lib_name, workload, steps, threads, hook="allreduce"):
    lib = __import__(lib_name)
    lib.set_num_threads(threads)
    dist = lib.distributed
    dist.init_process_group("gloo")
    holder = {}

    def wrap(model):
        holder["ddp"] = lib.nn.parallel.DistributedDataParallel(model)
        register_hook(lib, holder["ddp"], hook)
        return holder["ddp"]
    step, _ = make(lib, workload, wrap=wrap)
    for _ in range(3):
        step()
    ddp = holder["ddp"]
    before = ddp._reducer_stats() if lib_name == "ember" else None
    times = []
    for _ in range(steps):
        t = time.perf_counter()
        step()
        times.append(time.perf_counter() - t)
    res = {"step": statistics.median(times)}
    if before is not None:
        after = ddp._reducer_stats()
        comm = after["comm_ns"] - before["comm_ns"]
        exposed = after["exposed_ns"] - before["exposed_ns"]
        res["hidden"] = max(0.0, 1 - exposed / comm) if comm > 0 else None  # waking up costs a little
        res["comm_ms"] = comm / 1e6 / steps
    # every rank's step time: the slowest rank sets the pace
    t = lib.tensor([res["step"]], dtype=lib.float64)
    dist.all_reduce(t, op=dist.ReduceOp.MAX)
    res["step"] = t.item()
    if dist.get_rank() == 0:
        print(json.dumps(res), flush=True)
    dist.barrier()
    # skip teardown: torch's gloo group sometimes aborts in its destructor at exit (resnet, 2 ranks)
    os._exit(0)


def allreduce_worker(lib_name, sizes, iters):
    lib = __import__(lib_name)
    lib.set_num_threads(1)
    dist = lib.distributed
    dist.init_process_group("gloo")
    res = {}
    for nbytes in sizes:
        t = lib.ones(max(1, nbytes // 4))
        for _ in range(3):
            dist.all_reduce(t)
        n = iters if nbytes <= 1 << 20 else max(5, iters // 20)
        times = []
        for _ in range(n):
            dist.barrier()
            s = time.perf_counter()
            dist.all_reduce(t)
            times.append(time.perf_counter() - s)
        times.sort()
        # the median, and the fastest fifth: on a small shared VM some calls stall for a scheduler
        # quantum (both libraries), and the low quantile shows the cost without the stall
        res[str(nbytes)] = [statistics.median(times), times[len(times) // 5]]
    if dist.get_rank() == 0:
        print(json.dumps(res), flush=True)
    dist.barrier()
    os._exit(0)


# ------------------------------------------------------------------ driver
def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--train-worker":
        return train_worker(sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]), sys.argv[6])
    if len(sys.argv) > 1 and sys.argv[1] == "--allreduce-worker":
        return allreduce_worker(sys.argv[2], [int(s) for s in sys.argv[3].split(",")], int(sys.argv[4]))
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--only", default="mlp,lenet,resnet,transformer")
    p.add_argument("--nprocs", default="1,2")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--no-allreduce", action="store_true")
    p.add_argument("--hook", default="allreduce", choices=["allreduce", "fp16", "powersgd"])
    args = p.parse_args()
    try:
        import torch  # noqa: F401
        libs = ["ember", "torch"]
    except ImportError:
        libs = ["ember"]
    cores = os.cpu_count()
    print(f"{cores} cores; each process cores/nproc threads; medians of {args.rounds} interleaved rounds "
          f"x {args.steps} steps (the slowest rank's); communication hook: {args.hook}")
    print(f"{'workload':<12} {'procs':>5} {'ember samples/s':>16} {'torch samples/s':>16} {'ratio':>6} "
          f"{'ember allreduce ms/step':>24} {'hidden':>7}")
    for w in args.only.split(","):
        assert w in WORKLOADS, w
        for nproc in [int(n) for n in args.nprocs.split(",")]:
            threads = max(1, cores // nproc)
            runs = {lib: [] for lib in libs}
            for _ in range(args.rounds):
                for lib in libs:
                    runs[lib].append(launch(nproc, ["--train-worker", lib, w, str(args.steps), str(threads),
                                                    args.hook]))
            bad = {lib: ("hung (no step in 300 s)" if r is None else r["error"]) for lib in libs for r in runs[lib]
                   if r is None or "error" in r}
            if bad:
                good = ", ".join(f"{lib} {[round(nproc * BATCH[w] / r['step']) for r in runs[lib] if r and 'step' in r]}"
                                 for lib in libs)
                print(f"{w:<12} {nproc:>5} failed: " + "; ".join(f"{lib}: {why}" for lib, why in bad.items())
                      + f" (samples/s of the rounds that finished: {good})", flush=True)
                continue
            step = {lib: statistics.median(r["step"] for r in runs[lib]) for lib in libs}
            thr = {lib: nproc * BATCH[w] / step[lib] for lib in libs}
            hidden = [r["hidden"] for r in runs["ember"] if r.get("hidden") is not None]
            comm = statistics.median(r["comm_ms"] for r in runs["ember"])
            ratio = f"{thr['ember'] / thr['torch']:.2f}x" if "torch" in thr else "-"
            hid = f"{100 * statistics.median(hidden):.0f}%" if hidden and nproc > 1 else "-"
            print(f"{w:<12} {nproc:>5} {thr['ember']:>16,.0f} {thr.get('torch', float('nan')):>16,.0f} {ratio:>6} "
                  f"{comm:>24.2f} {hid:>7}", flush=True)
    if args.no_allreduce:
        return
    sizes = [4, 1 << 10, 1 << 16, 1 << 20, 1 << 22, 1 << 24]
    print("\nall_reduce (SUM, float32) at 2 processes, us: median / 20th percentile; torch/ember of the medians;"
          "\nbus bandwidth = 2(n-1)/n x bytes / median time")
    print(f"{'bytes':>10} {'ember us':>14} {'torch us':>14} {'ratio':>6} {'ember GB/s':>11} {'torch GB/s':>11}")
    res = {lib: [] for lib in libs}
    for _ in range(args.rounds):
        for lib in libs:
            res[lib].append(launch(2, ["--allreduce-worker", lib, ",".join(map(str, sizes)), "200"]))
    for nb in sizes:
        t = {lib: statistics.median(r[str(nb)][0] for r in res[lib]) for lib in libs}
        low = {lib: statistics.median(r[str(nb)][1] for r in res[lib]) for lib in libs}
        bw = {lib: (nb / t[lib]) / 1e9 for lib in libs}  # 2(n-1)/n = 1 at n = 2
        cell = {lib: f"{t[lib] * 1e6:.0f} / {low[lib] * 1e6:.0f}" for lib in libs}
        ratio = f"{t['torch'] / t['ember']:.2f}x" if "torch" in t else "-"
        print(f"{nb:>10} {cell['ember']:>14} {cell.get('torch', '-'):>14} {ratio:>6} {bw['ember']:>11.2f} "
              f"{bw.get('torch', float('nan')):>11.2f}", flush=True)


if __name__ == "__main__":
    main()
