"""ZeroRedundancyOptimizer and Join (uneven inputs) in 2 Gloo processes, against a single-process
reference that averages the same gradients: ZeRO trains exactly as the wrapped optimizer, shards its
state, consolidates and reloads it; DDP inside Join averages over the initial world size or over the
ranks still running, and every rank ends with the last joiner's model."""
import os

import numpy as np
import pytest

import dist_util
import dist_workers

import ember

pytestmark = pytest.mark.skipif(os.name != "posix", reason="multi-process tests need fork/exec on POSIX")


def _reference(batches_per_rank, optimizer, divide_by_initial=True, extra=None):
    """Single process: each step averages the gradients of the ranks that still have a batch."""
    net = dist_workers._uneven_model()
    opt = optimizer(net.parameters())
    data = [dist_workers.uneven_batches(r, n) for r, n in enumerate(batches_per_rank)]
    world = len(batches_per_rank)
    for step in range(max(batches_per_rank)):
        active = [r for r in range(world) if step < batches_per_rank[r]]
        total = [ember.zeros_like(p) for p in net.parameters()]
        for r in active:
            net.zero_grad()
            net(ember.tensor(data[r][step].tolist())).pow(2).mean().backward()
            for t, p in zip(total, net.parameters()):
                t.add_(p.grad)
        for t, p in zip(total, net.parameters()):
            p.grad = t / (world if divide_by_initial else len(active))
        opt.step()
    if extra is not None:  # one more step outside Join, both ranks: the mean of their batch-0 gradients
        total = [ember.zeros_like(p) for p in net.parameters()]
        for r in range(world):
            net.zero_grad()
            net(ember.tensor(dist_workers.uneven_batches(r, 1)[0].tolist())).pow(2).mean().backward()
            for t, p in zip(total, net.parameters()):
                t.add_(p.grad)
        for t, p in zip(total, net.parameters()):
            p.grad = t / world
        opt.step()
    return [p.detach().numpy() for p in net.parameters()], opt


@pytest.mark.parametrize("bucket_view", [False, True])
def test_zero_matches_the_wrapped_optimizer(bucket_view):
    res = dist_util.run("zero_optimizer", 2, bucket_view, timeout=180)
    adam = lambda ps: ember.optim.Adam(ps, lr=0.01)  # noqa: E731
    net = dist_workers._uneven_model()
    opt = adam(net.parameters())
    sched = ember.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
    data = [dist_workers.uneven_batches(r, 5) for r in range(2)]

    def step(i):
        total = [ember.zeros_like(p) for p in net.parameters()]
        for r in range(2):
            net.zero_grad()
            net(ember.tensor(data[r][i].tolist())).pow(2).mean().backward()
            for t, p in zip(total, net.parameters()):
                t.add_(p.grad)
        for t, p in zip(total, net.parameters()):
            p.grad = t / 2
        opt.step()
    for i in range(4):
        step(i)
        sched.step()
    ref_state = {k: {n: v.clone() for n, v in st.items()} for k, st in opt.state_dict()["state"].items()}
    step(4)
    for r in res:
        for a, b in zip(r["params"], net.parameters()):
            np.testing.assert_allclose(a, b.detach().numpy(), rtol=1e-5, atol=1e-6)
        assert r["lr"] == 0.0025 and "consolidate_state_dict(to=" in r["early"]
    # the state is sharded: each rank holds the state of its own share only
    # dealt largest first to the lightest rank: W1 (30) to rank 0; W2 (10), b1 (5), b2 (2) to rank 1
    assert [r["local"][0] for r in res] == [1, 3] and [r["local"][0] for r in res] == [r["local"][1] for r in res]
    got = res[0]["state"]
    assert sorted(got) == sorted(ref_state) == [0, 1, 2, 3]
    for k, st in ref_state.items():
        for name in ("exp_avg", "exp_avg_sq"):
            np.testing.assert_allclose(got[k][name], st[name].numpy(), rtol=1e-5, atol=1e-7)
    assert res[0]["groups"][0]["params"] == [0, 1, 2, 3] and res[0]["groups"][0]["lr"] == 0.0025


@pytest.mark.parametrize("divide", [True, False])
def test_join_with_uneven_inputs(divide):
    res = dist_util.run("join_uneven", 2, divide, False, False, timeout=180)
    ref, _ = _reference([2, 4], lambda ps: ember.optim.SGD(ps, lr=0.1), divide, extra=True)
    assert [r["steps"] for r in res] == [2, 4]
    for r in res:
        for a, b in zip(r["params"], ref):
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_join_with_ddp_and_zero():
    res = dist_util.run("join_uneven", 2, True, True, False, timeout=180)
    ref, _ = _reference([2, 4], lambda ps: ember.optim.Adam(ps, lr=0.01), True, extra=True)
    for r in res:
        for a, b in zip(r["params"], ref):
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_join_can_throw_on_every_rank():
    res = dist_util.run("join_uneven", 2, True, False, True, timeout=180)
    assert "exhausted all inputs" in res[0]["error"] and res[0]["steps"] == 2
    assert "Detected at least one rank that exhausted inputs" in res[1]["error"] and res[1]["steps"] == 2


def test_join_keeps_buffers_and_parameters_in_step():
    a, b = dist_util.run("join_uneven", 2, True, False, False, True, timeout=180)
    assert [a["steps"], b["steps"]] == [2, 4] and len(a["buffers"]) == 3
    for x, y in zip(a["params"] + a["buffers"], b["params"] + b["buffers"]):
        np.testing.assert_array_equal(x, y)
