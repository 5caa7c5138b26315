"""Worker side of tests/python/test_distributed.py: `python dist_workers.py FN TMPDIR` runs FN as
RANK of WORLD_SIZE (from the environment) and pickles its result to TMPDIR/RANK.pkl."""
import datetime
import os
import pickle
import sys
import time

import numpy as np

import ember
import ember.distributed as dist
import ember.nn as nn

DTYPES = ["float32", "float64", "float16", "bfloat16", "int64", "int32", "int8", "uint8", "bool"]
SHAPES = [(), (0,), (7,), (3, 5), (1000,)]


def make_input(rank, dtype, shape, seed=0):
    """Rank `rank`'s values: small integers (exact in every dtype, no overflow in products of 4)."""
    rs = np.random.RandomState(seed * 1000 + rank * 7 + len(shape))
    if dtype == "bool":
        return rs.randint(0, 2, size=shape).astype(bool)
    lo = 0 if dtype == "uint8" else -3
    return rs.randint(lo, 4, size=shape).astype(np.float64)


def to_ember(a, dtype):
    return ember.tensor(a.tolist() if a.ndim else a.item(), dtype=getattr(ember, dtype)).reshape(a.shape)


def to_numpy(t):
    if t.dtype in (ember.bfloat16, ember.float16):
        t = t.float()
    return t.numpy().copy()


def noncontig(a, dtype):
    """The same values in a transposed (non-contiguous) tensor."""
    t = to_ember(a.T.copy(), dtype).t() if a.ndim == 2 else to_ember(a, dtype)
    return t


# ------------------------------------------------------------------ collectives
def collectives(rank, ws):
    R = dist.ReduceOp
    out = {}
    for dtype in DTYPES:
        ops = ["MAX", "MIN", "BOR"] if dtype == "bool" else ["SUM", "PRODUCT", "MIN", "MAX"]
        if dtype in ("float32", "float64", "float16", "bfloat16"):
            ops.append("AVG")
        if dtype in ("int64", "int32", "int8", "uint8"):
            ops += ["BAND", "BOR", "BXOR"]
        for shape in SHAPES:
            for op in ops:
                t = noncontig(make_input(rank, dtype, shape), dtype)
                dist.all_reduce(t, op=getattr(R, op))
                out[("all_reduce", dtype, shape, op)] = to_numpy(t)
            for root in range(ws):
                t = noncontig(make_input(rank, dtype, shape), dtype)
                dist.broadcast(t, src=root)
                out[("broadcast", dtype, shape, root)] = to_numpy(t)
            if dtype != "bool":
                t = noncontig(make_input(rank, dtype, shape), dtype)
                dist.reduce(t, dst=ws - 1, op=R.SUM)
                out[("reduce", dtype, shape)] = to_numpy(t)
            x = noncontig(make_input(rank, dtype, shape), dtype)
            outs = [ember.zeros(shape, dtype=getattr(ember, dtype)) for _ in range(ws)]
            dist.all_gather(outs, x)
            out[("all_gather", dtype, shape)] = [to_numpy(o) for o in outs]
            big = ember.zeros((ws,) + shape, dtype=getattr(ember, dtype))
            dist.all_gather_into_tensor(big, x)
            out[("all_gather_into_tensor", dtype, shape)] = to_numpy(big)
            gl = [ember.zeros(shape, dtype=getattr(ember, dtype)) for _ in range(ws)] if rank == 0 else None
            dist.gather(x, gl, dst=0)
            out[("gather", dtype, shape)] = [to_numpy(o) for o in gl] if gl else None
            sl = [to_ember(make_input(100 + i, dtype, shape), dtype) for i in range(ws)] if rank == 1 else None
            y = ember.zeros(shape, dtype=getattr(ember, dtype))
            dist.scatter(y, sl, src=1)
            out[("scatter", dtype, shape)] = to_numpy(y)
    # reduce-scatter and all-to-all on 2-D (rows split across ranks)
    for dtype in ["float32", "int64", "float64"]:
        inp = to_ember(make_input(rank, dtype, (ws * 3, 4)), dtype)
        o = ember.zeros(3, 4, dtype=getattr(ember, dtype))
        dist.reduce_scatter_tensor(o, inp, op=R.SUM)
        out[("reduce_scatter_tensor", dtype)] = to_numpy(o)
        o = ember.zeros(ws * 3, 4, dtype=getattr(ember, dtype))
        dist.all_to_all_single(o, inp)
        out[("all_to_all_single", dtype)] = to_numpy(o)
        # uneven: rank r sends r+i+1 rows to rank i
        in_splits = [rank + i + 1 for i in range(ws)]
        out_splits = [i + rank + 1 for i in range(ws)]
        inp = to_ember(make_input(rank, dtype, (sum(in_splits), 2)), dtype)
        o = ember.zeros(sum(out_splits), 2, dtype=getattr(ember, dtype))
        dist.all_to_all_single(o, inp, out_splits, in_splits)
        out[("all_to_all_uneven", dtype)] = to_numpy(o)
    # async: several queued, then waited in reverse
    ts = [ember.full((5,), float(rank + i)) for i in range(4)]
    works = [dist.all_reduce(t, async_op=True) for t in ts]
    for w in reversed(works):
        w.wait()
    out["async"] = [to_numpy(t) for t in ts]
    out["async_done"] = all(w.is_completed() and w.is_success() for w in works)
    # point to point in a ring, both orders; any-source recv
    nxt, prv = (rank + 1) % ws, (rank - 1) % ws
    buf = ember.zeros(4)
    sw = dist.isend(ember.full((4,), float(rank)), nxt)
    rw = dist.irecv(buf, prv)
    rw.wait()
    sw.wait()
    out["ring"] = to_numpy(buf)
    if rank == 0:
        got = []
        for _ in range(ws - 1):
            b = ember.zeros(2, dtype=ember.int64)
            src = dist.recv(b, tag=7)
            got.append((src, b.tolist()))
        out["any_source"] = sorted(got)
    else:
        dist.send(ember.tensor([rank, rank * 10]), 0, tag=7)
    # objects (through the restricted unpickler)
    objs = [None] * ws
    dist.all_gather_object(objs, {"rank": rank, "t": ember.arange(rank + 1), "s": "x" * rank})
    out["all_gather_object"] = [(o["rank"], o["t"].tolist(), o["s"]) for o in objs]
    lst = [None, None, None] if rank else [1, "two", {"three": ember.ones(2)}]
    dist.broadcast_object_list(lst, src=0)
    out["broadcast_object_list"] = [lst[0], lst[1], lst[2]["three"].tolist()]
    # a subgroup of the even ranks
    g = dist.new_group([r for r in range(ws) if r % 2 == 0])
    if rank % 2 == 0:
        t = ember.tensor([float(rank)])
        dist.all_reduce(t, group=g)
        out["subgroup"] = (t.item(), dist.get_rank(g), dist.get_world_size(g))
    else:
        out["subgroup"] = (g == dist.GroupMember.NON_GROUP_MEMBER, dist.get_rank(g))
    # object point to point, subgroups of 2 consecutive ranks
    if rank == 0:
        dist.send_object_list([{"a": ember.ones(2)}, "b"], dst=ws - 1)
    elif rank == ws - 1:
        got = [None, None]
        out["recv_object_list"] = (dist.recv_object_list(got, src=0), got[0]["a"].tolist(), got[1])
    mine, subs = dist.new_subgroups(2)
    t = ember.tensor([float(rank)])
    dist.all_reduce(t, group=mine)
    out["new_subgroups"] = (len(subs), t.item(), dist.get_pg_count())
    dist.barrier()
    return out


# ------------------------------------------------------------------ DDP
def _model(seed):
    ember.manual_seed(seed)
    # per-sample layers only: BatchNorm's statistics are per rank under DDP (as in torch), so a
    # model with it would not match single-process training on the global batch
    return nn.Sequential(nn.Linear(6, 32), nn.Tanh(), nn.Linear(32, 32), nn.LayerNorm(32), nn.ReLU(),
                         nn.Linear(32, 3))


def _data():
    ember.manual_seed(123)
    return ember.randn(8, 16, 6, dtype=ember.float64).float(), ember.randint(0, 3, (8, 16))


def reference_training(accumulate):
    """Single-process training on the global batch: what DDP must reproduce."""
    model = _model(0)
    model.train()
    opt = ember.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    X, Y = _data()
    for step in range(X.shape[0] // accumulate):
        opt.zero_grad()
        for k in range(accumulate):
            i = step * accumulate + k
            loss = nn.functional.cross_entropy(model(X[i]), Y[i]) / accumulate
            loss.backward()
        opt.step()
    return [to_numpy(p.detach()) for p in model.parameters()]


def ddp_training(rank, ws, accumulate, bucket_cap_mb):
    model = _model(rank + 10)  # different initial weights per rank: DDP broadcasts rank 0's...
    ref_init = _model(0)
    with ember.no_grad():  # ...so give rank 0 the reference's
        if rank == 0:
            for p, q in zip(model.parameters(), ref_init.parameters()):
                p.copy_(q)
    ddp = nn.parallel.DistributedDataParallel(model, bucket_cap_mb=bucket_cap_mb)
    opt = ember.optim.SGD(ddp.parameters(), lr=0.05, momentum=0.9)
    X, Y = _data()
    per = X.shape[1] // ws
    for step in range(X.shape[0] // accumulate):
        opt.zero_grad()
        for k in range(accumulate):
            i = step * accumulate + k
            xs, ys = X[i][rank * per:(rank + 1) * per], Y[i][rank * per:(rank + 1) * per]
            ctx = ddp.no_sync() if k < accumulate - 1 else _null()
            with ctx:
                loss = nn.functional.cross_entropy(ddp(xs), ys) / accumulate
                loss.backward()
        opt.step()
    return {"params": [to_numpy(p.detach()) for p in model.parameters()],
            "buckets": ddp._get_bucket_indices(), "stats": ddp._reducer_stats(),
            "keys": list(ddp.state_dict().keys())}


class _null:
    def __enter__(self):
        return self

    def __exit__(self, *a):
        return False


class _Branchy(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(4, 4)
        self.b = nn.Linear(4, 4)  # used on rank 0 only
        self.c = nn.Linear(4, 4)  # never used

    def forward(self, x, use_b):
        y = self.a(x)
        return self.b(y) if use_b else y


def ddp_unused(rank, ws, find_unused):
    ember.manual_seed(0)
    m = _Branchy()
    ddp = nn.parallel.DistributedDataParallel(m, find_unused_parameters=find_unused)
    x = ember.ones(2, 4) * (rank + 1)
    out = {}
    try:
        for it in range(2):
            ddp.zero_grad()
            ddp(x, rank == 0).sum().backward()
        out["grads"] = {n: (None if p.grad is None else to_numpy(p.grad)) for n, p in m.named_parameters()}
    except RuntimeError as e:
        out["error"] = str(e)
    return out


def ddp_sparse(rank, ws):
    """An embedding with sparse gradients under DDP: each rank looks up other rows; SparseAdam steps."""
    ember.manual_seed(0)
    emb = nn.Embedding(8, 3, sparse=True)
    ddp = nn.parallel.DistributedDataParallel(emb)
    opt = ember.optim.SparseAdam(ddp.parameters(), lr=0.1)
    grads = []
    for it in range(2):
        opt.zero_grad()
        ddp(ember.tensor([1, 2 + rank + it])).pow(2).sum().backward()
        grads.append((emb.weight.grad.is_sparse, to_numpy(emb.weight.grad.to_dense())))
        opt.step()
    return {"grads": grads, "weight": to_numpy(emb.weight.detach())}


# ------------------------------------------------------------------ communication hooks
def _hook_grads(rank, setup):
    """Gradients of one backward of a fixed model on this rank's data, DDP set up by `setup`."""
    rs = np.random.RandomState(0)
    w1, w2 = rs.randn(8, 4).astype(np.float32), rs.randn(3, 8).astype(np.float32)
    x = np.random.RandomState(10 + rank).randn(6, 4).astype(np.float32)
    m = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 3))
    with ember.no_grad():
        m[0].weight.copy_(ember.tensor(w1))
        m[2].weight.copy_(ember.tensor(w2))
        m[0].bias.fill_(0.1)
        m[2].bias.fill_(-0.2)
    model = m if setup is None else nn.parallel.DistributedDataParallel(m, bucket_cap_mb=0.00005)
    if setup is not None:
        setup(model)
    model(ember.tensor(x)).pow(2).sum().backward()
    return [to_numpy(p.grad) for p in m.parameters()]


def comm_hooks(rank, ws):
    from ember.distributed.algorithms.ddp_comm_hooks import (DDPCommHookType, default_hooks as dh,
                                                            register_ddp_comm_hook)
    from ember.futures import Future
    out = {"local": _hook_grads(rank, None), "none": _hook_grads(rank, lambda d: None)}
    out["allreduce"] = _hook_grads(rank, lambda d: d.register_comm_hook(None, dh.allreduce_hook))
    out["fp16"] = _hook_grads(rank, lambda d: d.register_comm_hook(None, dh.fp16_compress_hook))
    out["bf16"] = _hook_grads(rank, lambda d: register_ddp_comm_hook(DDPCommHookType.BF16_COMPRESS, d))
    out["noop"] = _hook_grads(rank, lambda d: register_ddp_comm_hook(DDPCommHookType.NOOP, d))
    out["wrapped"] = _hook_grads(rank, lambda d: d.register_comm_hook(
        dist.group.WORLD, dh.fp16_compress_wrapper(dh.allreduce_hook)))
    out["builtin_fp16"] = _hook_grads(
        rank, lambda d: d._register_builtin_comm_hook(dist.BuiltinCommHookType.FP16_COMPRESS))
    calls = []

    def max_hook(state, bucket: dist.GradBucket) -> Future[ember.Tensor]:
        state.append((bucket.index(), bucket.is_last(), [tuple(p.shape) for p in bucket.parameters()],
                      [tuple(g.shape) for g in bucket.gradients()]))
        fut = dist.all_reduce(bucket.buffer(), op=dist.ReduceOp.MAX, async_op=True).get_future()
        return fut.then(lambda f: f.value()[0])
    out["max"] = _hook_grads(rank, lambda d: d.register_comm_hook(calls, max_hook))
    out["calls"] = calls

    errors = {}

    def error_of(setup):
        try:
            _hook_grads(rank, setup)
        except Exception as e:  # noqa: BLE001 - the test checks the type
            return [c.__name__ for c in type(e).__mro__], str(e)
        return None
    errors["not_callable"] = error_of(lambda d: d.register_comm_hook(None, 3))
    errors["bad_return_annotation"] = error_of(
        lambda d: d.register_comm_hook(None, lambda_annotated))
    errors["twice"] = error_of(lambda d: (d.register_comm_hook(None, dh.allreduce_hook),
                                          d.register_comm_hook(None, dh.allreduce_hook)))
    errors["not_a_future"] = error_of(lambda d: d.register_comm_hook(None, lambda s, b: b.buffer()))

    def short(state, bucket):
        f = Future()
        f.set_result(bucket.buffer()[:1])
        return f
    errors["wrong_size"] = error_of(lambda d: d.register_comm_hook(None, short))
    out["errors"] = errors

    # futures of collectives and of point-to-point work (completed when waited for)
    t = ember.full((3,), float(rank + 1))
    fut = dist.all_reduce(t, async_op=True).get_future()
    chained = fut.then(lambda f: f.value()[0] * 2)
    out["future"] = (to_numpy(fut.wait()[0]), to_numpy(chained.wait()), fut.done())
    if rank == 0:
        works = [dist.isend(ember.full((2,), float(k)), 1, tag=k) for k in range(2)]
    else:
        bufs = [ember.zeros(2) for _ in range(2)]
        works = [dist.irecv(b, 0, tag=k) for k, b in enumerate(bufs)]
    futs = [w.get_future().then(lambda f: True) for w in works]
    out["p2p"] = ember.futures.wait_all(futs)
    if rank == 1:
        out["p2p_values"] = [to_numpy(b) for b in bufs]
    return out


def lambda_annotated(state, bucket) -> int:
    return None


def destroy_while_callback_runs(rank, ws):
    """Rank 0 destroys its group while the group's thread is inside a Python then() callback (which let
    go of the GIL to sleep): the destruction waits for the callback instead of deadlocking with it."""
    import threading
    if rank == 1:
        time.sleep(0.3)  # rank 0 attaches its callback before the collective can finish
        dist.all_reduce(ember.ones(3))
        return None
    started = threading.Event()

    def slow(f):
        started.set()
        time.sleep(0.5)
        return f.value()[0].tolist()
    fut = dist.all_reduce(ember.ones(3), async_op=True).get_future().then(slow)
    assert started.wait(20)
    dist.destroy_process_group()
    return fut.wait()


# ------------------------------------------------------------------ faults
def dies_before_collective(rank, ws):
    dist.barrier()  # everyone is up (a rank dying inside init_process_group fails init instead)
    if rank == ws - 1:
        os._exit(3)
    t0 = time.time()
    try:
        dist.all_reduce(ember.ones(10))
        dist.all_reduce(ember.ones(10))
        return {"error": None}
    except RuntimeError as e:
        return {"error": f"{type(e).__name__}: {e}", "seconds": time.time() - t0}


def raises_before_collective(rank, ws):
    dist.barrier()
    if rank == 0:
        raise ValueError("rank 0 gave up")
    t0 = time.time()
    try:
        dist.all_reduce(ember.ones(10))
        return {"error": None}
    except RuntimeError as e:
        return {"error": f"{type(e).__name__}: {e}", "seconds": time.time() - t0}


def mismatched(rank, ws):
    out = {}
    for name, call in [("shape", lambda: dist.all_reduce(ember.ones(3 + rank))),
                       ("dtype", lambda: dist.all_reduce(ember.ones(3, dtype=ember.float32 if rank else ember.int32))),
                       ("op", lambda: dist.all_reduce(ember.ones(3)) if rank else dist.broadcast(ember.ones(3), 0))]:
        try:
            call()
            out[name] = None
        except RuntimeError as e:
            out[name] = f"{type(e).__name__}: {e}"
    t = ember.ones(2)
    dist.all_reduce(t)  # the group still works afterwards
    out["after"] = t.tolist()
    return out


def double_init(rank, ws):
    try:
        dist.init_process_group("gloo")
    except ValueError as e:
        return str(e)
    return None


def timeout_small(rank, ws):
    """Rank 1 never joins the second collective: rank 0 fails after its 2 s timeout."""
    if rank == 1:
        time.sleep(6)
        return None
    t0 = time.time()
    try:
        dist.all_reduce(ember.ones(4))
    except RuntimeError as e:
        return {"error": str(e), "seconds": time.time() - t0}
    return {"error": None}


# ------------------------------------------------------------------ SyncBatchNorm
def sync_batchnorm(rank, ws, x, w, momentum):
    """Each rank normalizes its slice of x's batch with the group's statistics."""
    per = x.shape[0] // ws
    bn = nn.SyncBatchNorm(x.shape[1], momentum=momentum).double()
    with ember.no_grad():
        bn.weight.copy_(ember.arange(x.shape[1], dtype=ember.float64) * 0.5 + 1)
        bn.bias.fill_(0.25)
    xi = ember.tensor(x[rank * per:(rank + 1) * per], requires_grad=True)
    out = {}
    for step in range(2):
        xi.grad = None
        bn.zero_grad()
        y = bn(xi)
        (y * ember.tensor(w[rank * per:(rank + 1) * per])).sum().backward()
    out["y"] = y.detach().numpy()
    out["grad_x"] = xi.grad.numpy()
    out["grad_w"], out["grad_b"] = bn.weight.grad.numpy(), bn.bias.grad.numpy()
    out["running"] = (bn.running_mean.numpy(), bn.running_var.numpy(), int(bn.num_batches_tracked))
    bn.eval()
    out["eval"] = bn(xi).detach().numpy()
    return out


def complex_collectives(rank, ws):
    z = ember.tensor([1 + 2j, -3j], dtype=ember.complex128) * (rank + 1)
    out = {}
    t = z.clone()
    dist.all_reduce(t)
    out["sum"] = t.numpy()
    t = z.clone()
    dist.broadcast(t, src=1)
    out["bcast"] = t.numpy()
    outs = [ember.zeros(2, dtype=ember.complex128) for _ in range(ws)]
    dist.all_gather(outs, z.to(ember.complex128))
    out["gather"] = [o.numpy() for o in outs]
    try:
        dist.all_reduce(z.clone(), op=dist.ReduceOp.MAX)
    except RuntimeError as e:
        out["max_error"] = str(e)
    return out


def ddp_on_mesh(rank, ws):
    """DDP over the dp dimension of a 2x2 mesh: gradients averaged over each column only."""
    from ember.distributed.device_mesh import init_device_mesh
    from ember.nn.parallel import DistributedDataParallel as DDP
    mesh = init_device_mesh("cpu", (2, 2), mesh_dim_names=("dp", "tp"))
    ember.manual_seed(0)
    model = DDP(nn.Linear(3, 2), device_mesh=mesh["dp"])
    opt = ember.optim.SGD(model.parameters(), lr=0.1)
    rs = np.random.RandomState(rank)
    for _ in range(3):
        x = ember.tensor(rs.randn(4, 3).tolist())
        opt.zero_grad()
        model(x).pow(2).sum().backward()
        opt.step()
    errors = []
    for kw in ({"device_mesh": mesh}, {"device_mesh": mesh["dp"], "process_group": dist.group.WORLD}):
        try:
            DDP(nn.Linear(3, 2), **kw)
            errors.append(None)
        except Exception as e:  # noqa: BLE001
            errors.append(type(e).__name__)
    return {"params": [p.detach().numpy().copy() for p in model.parameters()], "errors": tuple(errors),
            "mesh_group": dist.get_process_group_ranks(model.process_group),
            "expected_group": [rank % 2, rank % 2 + 2]}


def ddp_powersgd(rank, ws):
    """Plain DDP vs PowerSGD hooks: at full rank the approximation is exact (same parameters), at rank 1
    every rank still ends with the same parameters, and the state's counters follow torch's rules."""
    from ember.distributed.algorithms.ddp_comm_hooks import powerSGD_hook as powerSGD
    from ember.nn.parallel import DistributedDataParallel as DDP

    def train(setup, steps=5):
        ember.manual_seed(0)
        net = nn.Sequential(nn.Linear(20, 16), nn.ReLU(), nn.Linear(16, 4))
        model = DDP(net, bucket_cap_mb=0.0002)  # two buckets: (b2, w2) and (b1, w1)
        state = setup(model)
        opt = ember.optim.SGD(model.parameters(), lr=0.05)
        x = ember.tensor(np.random.RandomState(rank).randn(8, 20).tolist())  # each rank's fixed batch
        losses = []
        for _ in range(steps):
            opt.zero_grad()
            loss = model(x).pow(2).mean()
            loss.backward()
            opt.step()
            losses.append(loss.item())
        return [p.detach().numpy().copy() for p in net.parameters()], losses, state

    def hook(fn, **kw):
        def setup(model):
            state = powerSGD.PowerSGDState(process_group=None, start_powerSGD_iter=2, **kw)
            model.register_comm_hook(state, fn)
            return state
        return setup

    out = {}
    out["plain"] = train(lambda m: None)[0]
    out["full"] = train(hook(powerSGD.powerSGD_hook, matrix_approximation_rank=16, min_compression_rate=0))[0]
    out["full_batched_shapes"] = train(hook(powerSGD.powerSGD_hook, matrix_approximation_rank=16,
                                            min_compression_rate=0, batch_tensors_with_same_shape=True))[0]
    out["batched_full"] = train(hook(powerSGD.batched_powerSGD_hook, matrix_approximation_rank=64,
                                     use_error_feedback=False))[0]
    params, losses, state = train(hook(powerSGD.powerSGD_hook, matrix_approximation_rank=1, min_compression_rate=2),
                                  steps=8)
    out["rank1"], out["rank1_losses"] = params, losses
    out["rank1_state"] = (state.iter, state.compression_stats(), sorted(state.error_dict), sorted(state.p_memory_dict))
    params, losses, state = train(hook(powerSGD.batched_powerSGD_hook, matrix_approximation_rank=1), steps=8)
    out["batched1"], out["batched1_state"] = params, (state.iter, state.compression_stats())
    import pickle
    clone = pickle.loads(pickle.dumps(state))
    out["pickled"] = (clone.iter, clone.process_group is dist.group.WORLD, sorted(clone.q_memory_dict))
    try:
        powerSGD.PowerSGDState(None, start_powerSGD_iter=1)
        out["bad_start"] = None
    except ValueError as e:
        out["bad_start"] = str(e)
    return out


def nested_wait_in_callback(rank, ws):
    """A then() callback that blocks on a collective of its own group raises (that thread runs it)."""
    fut = dist.all_reduce(ember.ones(2), async_op=True).get_future()
    child = fut.then(lambda f: dist.all_reduce(ember.ones(1), async_op=True).get_future().wait())
    try:
        child.wait()
        return None
    except RuntimeError as e:
        msg = str(e)
    t = ember.ones(1)
    dist.all_reduce(t)  # the group still works afterwards
    return msg, t.item()


def _uneven_model():
    ember.manual_seed(0)
    return nn.Sequential(nn.Linear(6, 5), nn.Tanh(), nn.Linear(5, 2))


def uneven_batches(rank, n):
    """Rank r's n batches (4 samples each): the same arrays the single-process reference uses."""
    rs = np.random.RandomState(100 + rank)
    return [rs.randn(4, 6) for _ in range(n)]


def zero_optimizer(rank, ws, bucket_view):
    """DDP + ZeroRedundancyOptimizer(Adam) for 4 steps, an lr scheduler included; the consolidated
    state_dict; a fresh ZeRO loading it continues identically."""
    from ember.distributed.optim import ZeroRedundancyOptimizer
    from ember.nn.parallel import DistributedDataParallel as DDP
    net = _uneven_model()
    model = DDP(net)
    opt = ZeroRedundancyOptimizer(net.parameters(), ember.optim.Adam, lr=0.01, parameters_as_bucket_view=bucket_view)
    sched = ember.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
    for x in uneven_batches(rank, 4):
        opt.zero_grad()
        model(ember.tensor(x.tolist())).pow(2).mean().backward()
        opt.step()
        sched.step()
    local_params = sum(len(g["params"]) for g in opt.optim.param_groups)
    local_states = len(opt.optim.state)
    try:
        opt.state_dict()
        early = None
    except RuntimeError as e:
        early = str(e)
    opt.consolidate_state_dict(to=0)
    sd = opt.state_dict() if rank == 0 else None
    holder = [sd]
    dist.broadcast_object_list(holder, src=0)
    sd = holder[0]
    state = {k: {n: (v.numpy().copy() if hasattr(v, "numpy") else v) for n, v in st.items()}
             for k, st in sd["state"].items()}  # before opt2 steps: loading shares the tensors, as in torch
    opt2 = ZeroRedundancyOptimizer(net.parameters(), ember.optim.Adam, lr=0.01)
    opt2.load_state_dict(sd)
    x = ember.tensor(uneven_batches(rank, 5)[4].tolist())
    opt2.zero_grad()
    model(x).pow(2).mean().backward()
    opt2.step()
    return {"params": [p.detach().numpy().copy() for p in net.parameters()], "local": (local_params, local_states),
            "early": early, "lr": opt.param_groups[0]["lr"],
            "state": state, "groups": sd["param_groups"]}


def join_uneven(rank, ws, divide, with_zero, throw, batchnorm=False):
    """Rank r trains on 2 + 2r batches inside Join; returns its final parameters (and buffers)."""
    from ember.distributed.algorithms.join import Join
    from ember.distributed.optim import ZeroRedundancyOptimizer
    from ember.nn.parallel import DistributedDataParallel as DDP
    net = _uneven_model()
    if batchnorm:
        net.insert(1, nn.BatchNorm1d(5))
    model = DDP(net)
    opt = (ZeroRedundancyOptimizer(net.parameters(), ember.optim.Adam, lr=0.01) if with_zero
           else ember.optim.SGD(net.parameters(), lr=0.1))
    joinables = [model, opt] if with_zero else [model]
    steps = 0
    try:
        with Join(joinables, throw_on_early_termination=throw, divide_by_initial_world_size=divide):
            for x in uneven_batches(rank, 2 + 2 * rank):
                opt.zero_grad()
                model(ember.tensor(x.tolist())).pow(2).mean().backward()
                opt.step()
                steps += 1
    except RuntimeError as e:
        return {"error": str(e), "steps": steps}
    buffers = [b.numpy().copy() for b in net.buffers()]  # every rank now holds the last joiner's
    # the group still works, and training outside Join runs as usual
    x = ember.tensor(uneven_batches(rank, 1)[0].tolist())
    opt.zero_grad()
    model(x).pow(2).mean().backward()
    opt.step()
    return {"params": [p.detach().numpy().copy() for p in net.parameters()], "steps": steps,
            "buffers": buffers}


def main():
    fn, tmp = sys.argv[1], sys.argv[2]
    rank, ws = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    with open(os.path.join(tmp, "args.pkl"), "rb") as f:
        args = pickle.load(f)
    timeout = datetime.timedelta(seconds=2 if fn == "timeout_small" else 20)
    dist.init_process_group("gloo", timeout=timeout)
    result = globals()[fn](rank, ws, *args)
    with open(os.path.join(tmp, f"{rank}.pkl"), "wb") as f:
        pickle.dump(result, f)
    sys.stdout.flush()
    if fn in ("dies_before_collective", "raises_before_collective", "timeout_small"):
        os._exit(0)  # peers are gone: skip the teardown barrier-free exit path
    if dist.is_initialized():
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
