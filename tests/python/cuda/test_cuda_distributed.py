"""ember.distributed's NCCL backend on the one GPU a verification machine has: a world of one rank
(every collective must leave the data as it was, staging copies and list outputs included), the
errors PyTorch gives, and DistributedDataParallel on the GPU against plain training. Skips without a
GPU or without NCCL (scripts/gpu_check.sh runs it on one)."""
import numpy as np
import pytest

import ember
import ember.distributed as dist

pytestmark = pytest.mark.skipif(not (ember.cuda.is_available() and dist.is_nccl_available()),
                                reason="no CUDA GPU or no NCCL")


@pytest.fixture
def nccl_world():
    dist.init_process_group("nccl", store=dist.HashStore(), rank=0, world_size=1)
    try:
        yield
    finally:
        dist.destroy_process_group()


def test_every_collective_in_a_world_of_one(nccl_world):
    assert dist.get_backend() == "nccl" and dist.get_world_size() == 1
    base = ember.arange(12.).reshape(3, 4)
    for op in (dist.ReduceOp.SUM, dist.ReduceOp.AVG, dist.ReduceOp.MAX, dist.ReduceOp.MIN, dist.ReduceOp.PRODUCT):
        t = base.cuda()
        dist.all_reduce(t, op=op)
        assert ember.equal(t.cpu(), base), op
    t = base.cuda().t()  # non-contiguous: a staging copy, written back
    dist.all_reduce(t)
    assert ember.equal(t.cpu(), base.t())
    for dtype in (ember.float16, ember.bfloat16, ember.float64, ember.int64, ember.int32, ember.uint8, ember.bool,
                  ember.complex64):
        t = base.to(dtype).cuda()
        dist.all_reduce(t)
        assert ember.equal(t.cpu(), base.to(dtype)), dtype
    t = base.cuda()
    dist.broadcast(t, src=0)
    dist.reduce(t, dst=0)
    assert ember.equal(t.cpu(), base)
    outs = [ember.zeros(3, 4, device="cuda")]
    dist.all_gather(outs, base.cuda())
    assert ember.equal(outs[0].cpu(), base)
    flat = ember.zeros(3, 4, device="cuda")
    dist.all_gather_into_tensor(flat, base.cuda())
    assert ember.equal(flat.cpu(), base)
    out = ember.zeros(3, 4, device="cuda")
    dist.reduce_scatter_tensor(out, base.cuda())
    assert ember.equal(out.cpu(), base)
    g = [ember.zeros(3, 4, device="cuda")]
    dist.gather(base.cuda(), g, dst=0)
    assert ember.equal(g[0].cpu(), base)
    s = ember.zeros(3, 4, device="cuda")
    dist.scatter(s, [base.cuda()], src=0)
    assert ember.equal(s.cpu(), base)
    a2a = ember.zeros(3, 4, device="cuda")
    dist.all_to_all_single(a2a, base.cuda())
    assert ember.equal(a2a.cpu(), base)
    dist.barrier()
    objs = [None]
    dist.all_gather_object(objs, {"rank": 0, "t": ember.ones(2)})
    assert objs[0]["rank"] == 0 and ember.equal(objs[0]["t"], ember.ones(2))
    lst = [{"a": 1}, [2, 3]]
    dist.broadcast_object_list(lst, src=0)
    assert lst == [{"a": 1}, [2, 3]]


def test_async_work_orders_the_callers_stream(nccl_world):
    t = ember.ones(1 << 20, device="cuda")
    work = dist.all_reduce(t, async_op=True)
    work.wait()
    assert t.sum().item() == float(1 << 20)
    ember.cuda.synchronize()
    assert work.is_completed()


def test_errors(nccl_world):
    with pytest.raises(RuntimeError, match="No backend type associated with device type cpu"):
        dist.all_reduce(ember.ones(2))
    with pytest.raises(RuntimeError, match="Cannot use ReduceOp.BAND with NCCL"):
        dist.all_reduce(ember.ones(2, dtype=ember.int64, device="cuda"), op=dist.ReduceOp.BAND)
    with pytest.raises(RuntimeError, match="recv"):
        dist.recv(ember.ones(2, device="cuda"))  # from any source
    with pytest.raises(ValueError, match="twice"):
        dist.init_process_group("nccl", store=dist.HashStore(), rank=0, world_size=1)


def test_gloo_refuses_gpu_tensors():
    dist.init_process_group("gloo", store=dist.HashStore(), rank=0, world_size=1)
    try:
        with pytest.raises(RuntimeError, match="expects CPU tensors"):
            dist.all_reduce(ember.ones(2, device="cuda"))
    finally:
        dist.destroy_process_group()


def test_ddp_on_the_gpu_matches_plain_training(nccl_world):
    def train(wrap):
        ember.manual_seed(0)
        model = ember.nn.Sequential(ember.nn.Linear(10, 16), ember.nn.ReLU(), ember.nn.Linear(16, 3)).cuda()
        net = ember.nn.parallel.DistributedDataParallel(model, device_ids=[0]) if wrap else model
        opt = ember.optim.SGD(net.parameters(), lr=0.1)
        g = ember.Generator().manual_seed(1)
        x, y = ember.randn(32, 10, generator=g).cuda(), ember.randint(0, 3, (32,), generator=g).cuda()
        for _ in range(5):
            opt.zero_grad()
            ember.nn.functional.cross_entropy(net(x), y).backward()
            opt.step()
        return [p.detach().cpu() for p in model.parameters()]
    for a, b in zip(train(True), train(False)):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-6, atol=1e-7)
