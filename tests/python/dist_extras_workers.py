"""Worker side of tests/python/test_distributed_extras.py: `python dist_extras_workers.py FN TMPDIR` runs
FN(rank, world_size, tmpdir, *args) as RANK of WORLD_SIZE (from the environment) and pickles its result to
TMPDIR/RANK.pkl. Most functions take `lib` ("ember" or "torch") and run the same code on either library,
so the test compares Ember with PyTorch on the same inputs; results are plain Python and numpy values."""
import datetime
import importlib
import os
import pickle
import sys
import time
import warnings

import numpy as np


def _lib(name):
    T = importlib.import_module(name)
    importlib.import_module(name + ".distributed")
    return T, T.distributed


def plain(v):
    """Tensors as (dtype name, numpy array); containers recursively."""
    if hasattr(v, "numpy") and hasattr(v, "dtype") and not isinstance(v, np.ndarray):
        dtype = str(v.dtype).split(".")[-1]
        v = v.detach()
        return (dtype, (v.float() if dtype in ("bfloat16", "float16") else v).numpy().copy())
    if isinstance(v, (list, tuple)):
        return [plain(x) for x in v]
    if isinstance(v, dict):
        return {k: plain(x) for k, x in v.items()}
    return v


def _err(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - the class name is the result
        return type(e).__name__
    return None


# ------------------------------------------------------------------ a group's low-level methods
def low_level(rank, ws, tmp, lib):
    T, dist = _lib(lib)
    R = dist.ReduceOp
    pg = dist.group.WORLD
    out = {}

    def x(k):
        return T.arange(6, dtype=T.float32).reshape(2, 3) + 10 * rank + k

    t = x(0)
    o = dist.AllreduceOptions()
    o.reduceOp = R.MAX
    pg.allreduce([t], o).wait()
    out["allreduce_max"] = t
    t = x(1)
    pg.allreduce([t]).wait()
    out["allreduce_list"] = t
    t = x(2)
    pg.allreduce(t).wait()
    out["allreduce_tensor"] = t
    t = x(3)
    pg.allreduce([t], R.PRODUCT).wait()
    out["allreduce_op"] = t
    a, b = x(4), x(5) * 2
    pg.allreduce([a, b]).wait()
    out["allreduce_two"] = [a, b]
    ts = [x(6), T.ones(4, dtype=T.float32) * rank]
    pg.allreduce_coalesced(ts, dist.AllreduceCoalescedOptions()).wait()
    out["allreduce_coalesced"] = ts
    t = x(8)
    bo = dist.BroadcastOptions()
    bo.rootRank = ws - 1
    pg.broadcast([t], bo).wait()
    out["broadcast"] = t
    a, b = x(9), x(10)
    bo = dist.BroadcastOptions()
    bo.rootTensor = 1
    pg.broadcast([a, b], bo).wait()
    out["broadcast_two"] = [a, b]
    t = x(11)
    pg.broadcast(t, 0).wait()
    out["broadcast_tensor"] = t
    t = x(12)
    ro = dist.ReduceOptions()
    ro.rootRank, ro.reduceOp = 1, R.MIN
    pg.reduce([t], ro).wait()
    out["reduce"] = t if rank == 1 else None
    outs = [[T.zeros(2, 3) for _ in range(ws)]]
    pg.allgather(outs, [x(13)]).wait()
    out["allgather"] = outs[0]
    outs = [T.zeros(2, 3) for _ in range(ws)]
    pg.allgather(outs, x(14)).wait()
    out["allgather_tensor"] = outs
    big = T.zeros(ws * 2, 3)
    pg._allgather_base(big, x(15)).wait()
    out["allgather_base"] = big
    outs = [[T.zeros(3), T.zeros(1, 2, dtype=T.float32)] for _ in range(ws)]
    pg.allgather_coalesced(outs, [T.arange(3.) + rank, T.ones(1, 2) * rank]).wait()
    out["allgather_coalesced"] = outs
    go = dist.GatherOptions()
    go.rootRank = 0
    g = [[T.zeros(2, 3) for _ in range(ws)]] if rank == 0 else []
    pg.gather(g, [x(16)], go).wait()
    out["gather"] = g[0] if g else None
    so = dist.ScatterOptions()
    so.rootRank = 1
    s = T.zeros(2, 3)
    pg.scatter([s], [[x(17) + 100 * i for i in range(ws)]] if rank == 1 else [], so).wait()
    out["scatter"] = s
    rs = T.zeros(2, 3)
    rso = dist.ReduceScatterOptions()
    rso.reduceOp = R.MAX
    pg.reduce_scatter([rs], [[x(18) + i for i in range(ws)]], rso).wait()
    out["reduce_scatter"] = rs
    rs = T.zeros(2, 3)
    pg._reduce_scatter_base(rs, T.cat([x(19) + i for i in range(ws)])).wait()
    out["reduce_scatter_base"] = rs
    outs = [T.zeros(2, 3) for _ in range(ws)]
    pg.alltoall(outs, [x(20) + 100 * i for i in range(ws)], dist.AllToAllOptions()).wait()
    out["alltoall"] = outs
    o = T.zeros(ws * 2, 3)
    pg.alltoall_base(o, T.cat([x(21) + 100 * i for i in range(ws)]), [], []).wait()
    out["alltoall_base"] = o
    pg.barrier(dist.BarrierOptions()).wait()
    if rank == 0:
        pg.send([x(22)], 1, 7).wait()
    elif rank == 1:
        r = T.zeros(2, 3)
        pg.recv([r], 0, 7).wait()
        out["recv"] = r
    if rank == 1:
        pg.send([x(23)], 0, 8).wait()
    elif rank == 0:
        r = T.zeros(2, 3)
        w = pg.recv_anysource([r], 8)
        w.wait()
        out["recv_anysource"] = [r, w._source_rank() if hasattr(w, "_source_rank") else w.source_rank()]
    pg.barrier().wait()
    bo = dist.BroadcastOptions()
    bo.rootRank = ws + 1
    bad_tensor = dist.BroadcastOptions()
    bad_tensor.rootTensor = 3
    out["errors"] = {
        "bad_root": _err(lambda: pg.broadcast([x(0)], bo).wait()),
        "bad_root_tensor": _err(lambda: pg.broadcast([x(0)], bad_tensor).wait()),
        "empty": _err(lambda: pg.allreduce([]).wait()),
        "two_sizes": _err(lambda: pg.allreduce([x(0), T.ones(2)]).wait()),
        "reduce_two": _err(lambda: pg.reduce([x(0), x(1)], dist.ReduceOptions()).wait()),
    }
    # ProcessGroupGloo made directly from a store: from a timeout, and from options naming a device
    store = dist.FileStore(os.path.join(tmp, f"direct_{lib}"), ws)
    direct = dist.ProcessGroupGloo(dist.PrefixStore("one", store), rank, ws, datetime.timedelta(seconds=20))
    t = x(24)
    direct.allreduce([t]).wait()
    out["direct_allreduce"] = t
    opts = dist.ProcessGroupGloo._Options()
    opts._timeout = datetime.timedelta(seconds=15)
    opts._devices = [dist.ProcessGroupGloo.create_device(interface="lo")]
    direct2 = dist.ProcessGroupGloo(dist.PrefixStore("two", store), rank, ws, opts)
    t = x(25)
    bo = dist.BroadcastOptions()
    bo.rootRank = 1
    direct2.broadcast([t], bo).wait()
    out["direct_broadcast"] = t
    outs = [T.zeros(2, 3) for _ in range(ws)]
    direct2.allgather(outs, x(26)).wait()
    out["direct_allgather"] = outs
    direct2.barrier().wait()
    out["direct_info"] = [direct.rank(), direct.size(), direct.name(), direct.options._timeout,
                          direct2.options._timeout]
    return plain(out)


# ------------------------------------------------------------------ the new collectives, stores' queues
def extras(rank, ws, tmp, lib, port):
    T, dist = _lib(lib)
    out = {}
    inp = T.arange(2, dtype=T.int64) + 1 + 2 * rank
    cat = T.zeros(ws * 2, dtype=T.int64)
    dist.all_gather_single(cat, inp)
    out["all_gather_single"] = cat
    rs_in = T.arange(ws * 2, dtype=T.float32) * (rank + 1)
    rs_out = T.zeros(2)
    dist.reduce_scatter_single(rs_out, rs_in)
    out["reduce_scatter_single"] = rs_out
    # the stacked forms (output (ws, 2), input (ws, 2)): torch's Gloo raises, Ember's takes them
    stack = T.zeros(ws, 2, dtype=T.int64)
    rs_stack = T.zeros(2)
    out["stacked"] = [_err(lambda: dist.all_gather_single(stack, inp)), stack,
                      _err(lambda: dist.reduce_scatter_single(rs_stack, rs_in.reshape(ws, 2), op=dist.ReduceOp.MAX)),
                      rs_stack]
    w = dist.all_gather_single(T.zeros(ws * 2, dtype=T.int64), inp, async_op=True)
    out["async_work"] = w.wait()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ins = [T.ones(2, 2) * (rank + 1), T.arange(3.) + rank]
        outs = [[T.zeros(2, 2), T.zeros(3)] for _ in range(ws)]
        r = dist.all_gather_coalesced(outs, ins)
        out["all_gather_coalesced"] = [r, outs]
        outs2 = [[T.zeros(2, 2), T.zeros(3)] for _ in range(ws)]
        fut = dist.all_gather_coalesced(outs2, [t * 10 for t in ins], async_op=True)
        fut.wait()
        out["all_gather_coalesced_async"] = [type(fut).__name__, outs2]
        c = [T.tensor([1 + 2j, rank - 1j], dtype=T.complex64)]
        couts = [[T.zeros(2, dtype=T.complex64)] for _ in range(ws)]
        dist.all_gather_coalesced(couts, c)
        out["all_gather_coalesced_complex"] = couts
        out["coalesced_errors"] = [
            _err(lambda: dist.all_gather_coalesced(outs, [T.ones(2), T.ones(2, dtype=T.int64)])),
            _err(lambda: dist.all_gather_coalesced("x", ins)),
        ]
        o = T.zeros(ws * 2, dtype=T.int64)
        dist.all_gather_into_tensor(o, inp)
        o2 = T.zeros(2)
        dist.reduce_scatter_tensor(o2, rs_in)
        out["deprecated"] = [o, o2]
    out["warnings"] = [(w.category.__name__, str(w.message).replace(f"`{lib}.", "`LIB."), os.path.basename(w.filename))
                       for w in caught]
    out["backend_config"] = dist.get_backend_config()
    g = dist.new_group(list(range(ws)))
    out["backend_config_group"] = dist.get_backend_config(g)
    # a queue between processes on a TCPStore: rank 0 pops (waiting for the values), rank 1 pushes
    store = dist.TCPStore("127.0.0.1", port, ws, rank == 0, datetime.timedelta(seconds=20))
    if rank == 1:
        time.sleep(0.5)
        for v in ("a", b"b", "c"):
            store.queue_push("q", v)
        store.set("pushed", "1")
    elif rank == 0:
        popped = [store.queue_pop("q") for _ in range(2)]
        store.wait(["pushed"])
        length = store.queue_len("q")
        popped.append(store.queue_pop("q", block=False))
        try:
            store.queue_pop("q", block=False)
            empty = None
        except dist.QueueEmptyError as e:
            empty = [type(e).__name__, isinstance(e, dist.DistStoreError), str(e)]
        out["queue"] = [popped, length, store.queue_len("q"), empty]
    dist.barrier()
    return plain(out)


def _err_msg(fn, lib):
    """(exception class name, message with the library's names spelled LIB), or None when fn returns."""
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - the class and message are the result
        return [type(e).__name__, " ".join(str(e).replace(lib, "LIB").split())]
    return None


def non_member(rank, ws, tmp, lib):
    """Collectives on a group this rank is not in: None, and torch's "does not belong" warning."""
    T, dist = _lib(lib)
    g = dist.new_group([0])
    out = {}
    if rank == 1:
        calls = {
            "all_reduce": lambda: dist.all_reduce(T.ones(2), group=g),
            "broadcast": lambda: dist.broadcast(T.ones(2), 0, group=g),
            "all_gather": lambda: dist.all_gather([T.ones(2)], T.ones(2), group=g),
            "all_gather_single": lambda: dist.all_gather_single(T.zeros(2), T.ones(2), group=g),
            "reduce_scatter_single": lambda: dist.reduce_scatter_single(T.zeros(2), T.ones(2), group=g),
            "all_gather_coalesced": lambda: dist.all_gather_coalesced([[T.zeros(2)]], [T.ones(2)], group=g),
            "barrier": lambda: dist.barrier(group=g),
            "all_gather_object": lambda: dist.all_gather_object([None], 1, group=g),
        }
        for name, call in calls.items():
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                r = call()
            out[name] = [r, [str(w.message) for w in caught if "deprecated" not in str(w.message)]]
    dist.barrier()
    return out


def gather_coalesced_checks(rank, ws, tmp, lib):
    """all_gather_coalesced's argument checks (every one raises on every rank, before any exchange) and its
    async result: a Future whose value is the output lists."""
    T, dist = _lib(lib)
    ins = [T.ones(2, 2) * (rank + 1), T.arange(3.) + rank]

    def outs(*shapes, dtype=None):
        return [[T.zeros(*s, dtype=dtype or T.float32) for s in shapes] for _ in range(ws)]
    out = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        out["errors"] = {
            "same_numel_other_shape": _err_msg(lambda: dist.all_gather_coalesced(outs((4,), (3,)), ins), lib),
            "dtype": _err_msg(lambda: dist.all_gather_coalesced(outs((2, 2), (3,), dtype=T.float64), ins), lib),
            "one_list": _err_msg(lambda: dist.all_gather_coalesced(outs((2, 2), (3,))[:1], ins), lib),
            "short_list": _err_msg(lambda: dist.all_gather_coalesced(outs((2, 2)), ins), lib),
            "tuple_input": _err_msg(lambda: dist.all_gather_coalesced(outs((2, 2), (3,)), tuple(ins)), lib),
            "tuple_output": _err_msg(lambda: dist.all_gather_coalesced([tuple(o) for o in outs((2, 2), (3,))], ins),
                                     lib),
        }
        o = outs((2, 2), (3,))
        fut = dist.all_gather_coalesced(o, ins, async_op=True)
        value = fut.wait()
        same = all(v is t for vs, ts in zip(value, o) for v, t in zip(vs, ts))  # the caller's own tensors
        out["async"] = [type(fut).__name__, plain(value), same]
    return out


# ------------------------------------------------------------------ post-local SGD
def post_local_sgd(rank, ws, tmp, lib):
    T, dist = _lib(lib)
    averagers = importlib.import_module(f"{lib}.distributed.algorithms.model_averaging.averagers")
    pls = importlib.import_module(f"{lib}.distributed.algorithms.ddp_comm_hooks.post_localSGD_hook")
    from importlib import import_module
    PostLocalSGDOptimizer = import_module(f"{lib}.distributed.optim").PostLocalSGDOptimizer
    net = T.nn.Sequential(T.nn.Linear(4, 3), T.nn.Tanh(), T.nn.Linear(3, 1))
    with T.no_grad():
        for i, p in enumerate(net.parameters()):
            p.copy_(T.tensor(np.random.RandomState(i).randn(*p.shape).astype(np.float32)))
    ddp = T.nn.parallel.DistributedDataParallel(net)
    subgroup, _ = dist.new_subgroups(group_size=1)
    state = pls.PostLocalSGDState(process_group=None, subgroup=subgroup, start_localSGD_iter=2)
    ddp.register_comm_hook(state, pls.post_localSGD_hook)
    opt = PostLocalSGDOptimizer(T.optim.SGD(ddp.parameters(), lr=0.1, momentum=0.5),
                                averagers.PeriodicModelAverager(period=3, warmup_steps=2))
    steps = []
    for step in range(8):
        x = T.tensor(np.random.RandomState(100 * step + rank).randn(5, 4).astype(np.float32))
        opt.zero_grad()
        ddp(x).pow(2).mean().backward()
        opt.step()
        steps.append([p.detach().numpy().copy() for p in net.parameters()])
    sd = opt.state_dict()
    return {"steps": steps, "iter": state.iter, "averager_step": opt.averager.step, "sd_step": sd["step"],
            "repr": repr(opt).splitlines()[0]}


# ------------------------------------------------------------------ Ember only: split_group, shrink_group
def split(rank, ws, tmp):
    import ember
    import ember.distributed as dist
    out = {}
    a = dist.split_group(split_ranks=[[2, 0], [1]])
    t = ember.ones(1) * (rank + 1)
    dist.all_reduce(t, group=a)
    out["a"] = [dist.get_process_group_ranks(a), a.rank(), a.size(), t.item(), dist.get_backend_config(a)]
    b = dist.split_group(split_ranks=[[1, 0]])
    out["b"] = None if b is None else [dist.get_process_group_ranks(b), b.rank()]
    if b is not None:
        t = ember.ones(1) * (rank + 1)
        dist.all_reduce(t, group=b)
        out["b"].append(t.item())
    pair = dist.new_group([0, 2])
    if rank in (0, 2):  # a split of a subgroup: its group ranks [1] are global rank 2
        c = dist.split_group(pair, [[1]])
        out["c"] = None if c is None else [dist.get_process_group_ranks(c), c.size()]
    else:
        out["c"] = _err(lambda: dist.split_group(pair, [[0]]))
    out["errors"] = [_err(lambda: dist.split_group(split_ranks=[])),
                     _err(lambda: dist.split_group(split_ranks=[[0, 0]])),
                     _err(lambda: dist.split_group(split_ranks=[[0, 1], [1, 2]])),
                     _err(lambda: dist.split_group(split_ranks=[[0, 7]])),
                     _err(lambda: dist.split_group(split_ranks=[[0]], backend="cuda:nccl")),
                     _err(lambda: dist.split_group(split_ranks=[[0]], timeout=5))]
    dist.barrier()
    return out


def shrink(rank, ws, tmp):
    import ember
    import ember.distributed as dist
    out = {}
    g = dist.new_group(list(range(ws)))
    if rank != 0:  # rank 0 leaves g: the others make g without it
        s = dist.shrink_group([0], group=g)
        t = ember.ones(1) * rank
        dist.all_reduce(t, group=s)
        out["group"] = [dist.get_process_group_ranks(s), s.rank(), s.size(), t.item()]
    dist.barrier()
    if rank == 1:  # rank 1 leaves the world
        out["_exit"] = True
        return out
    w = dist.shrink_group([1])
    t = ember.ones(1) * (rank + 1)
    dist.all_reduce(t)
    out["world"] = [w is dist.group.WORLD, dist.get_rank(), dist.get_world_size(),
                    dist.get_process_group_ranks(dist.group.WORLD), t.item()]
    h = dist.new_group([0, 1])  # groups after the shrink use the new numbering
    t = ember.ones(1) * (rank + 1)
    dist.all_reduce(t, group=h)
    out["after"] = [dist.get_process_group_ranks(h), t.item()]
    out["errors"] = [_err(lambda: dist.shrink_group([dist.get_rank()])), _err(lambda: dist.shrink_group([0, 0])),
                     _err(lambda: dist.shrink_group([5])), _err(lambda: dist.shrink_group([0, 1])),
                     _err(lambda: dist.shrink_group([0], shrink_flags=7)), _err(lambda: dist.shrink_group((0,)))]
    return out


def breakpoints(rank, ws, tmp, timeout_s=60):
    import ember.distributed as dist
    x = 41 + rank  # noqa: F841 - read from pdb on rank 0
    start, error = time.time(), None
    try:
        dist.breakpoint(rank=0, timeout_s=timeout_s)  # pdb's `up` lands here
    except Exception as e:  # noqa: BLE001 - the class name is the result
        error = type(e).__name__
    waited = time.time() - start
    if error is None:
        for _ in range(2):
            dist.breakpoint(rank=0, skip=2)  # this call site's first 2 passes are skipped: no pdb
    return {"waited": waited, "error": error}


def options_timeout(rank, ws, tmp):
    """An AllreduceOptions timeout: wait() gives up at it; the operation still completes when rank 1 joins."""
    import ember
    import ember.distributed as dist
    pg = dist.group.WORLD
    t = ember.ones(2) * (rank + 1)
    out = {}
    if rank == 0:
        opts = dist.AllreduceOptions()
        opts.timeout = datetime.timedelta(seconds=0.3)
        work = pg.allreduce([t], opts)
        start = time.time()
        out["error"] = _err(work.wait)
        out["gave_up_after"] = time.time() - start
        work.wait(datetime.timedelta(seconds=20))
        out["completed"] = [work.is_completed(), t.tolist()]
    else:
        time.sleep(1.5)
        pg.allreduce([t]).wait()
    return out


def main():
    fn, tmp = sys.argv[1], sys.argv[2]
    rank, ws = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    with open(os.path.join(tmp, "args.pkl"), "rb") as f:
        args = pickle.load(f)
    lib = args[0] if args and args[0] in ("ember", "torch") else "ember"
    _, dist = _lib(lib)
    dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=20))
    result = globals()[fn](rank, ws, tmp, *args)
    with open(os.path.join(tmp, f"{rank}.pkl"), "wb") as f:
        pickle.dump(result, f)
    sys.stdout.flush()
    if isinstance(result, dict) and result.get("_exit"):
        os._exit(0)  # left the world: no teardown with the others
    if dist.is_initialized():
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
