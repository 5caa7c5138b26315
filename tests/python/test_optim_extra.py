"""ASGD, Rprop and Adafactor against torch.optim: 20-step trajectories from identical weights for
each option combination, state layout and state_dict round trips (torch is the oracle; the tests
skip cleanly without it). SparseAdam, with the sparse gradients it needs, is tested in test_sparse.py."""
import copy
import itertools

import numpy as np
import pytest

import ember
import ember.optim as optim


@pytest.fixture
def torch():
    return pytest.importorskip("torch")


RS = np.random.RandomState(0)
W0 = RS.randn(4, 3)
B0 = RS.randn(3)
V0 = RS.randn(2, 3, 2)
S0 = np.array(RS.randn())
X = RS.randn(16, 4)
Y = RS.randn(16, 2)


def make_problem(lib, dtype):
    """Parameters of several ranks (0-d, vector, matrix, 3-d) in two groups, plus one without grad."""
    w, b, v, s = (lib.nn.Parameter(lib.tensor(a.astype(dtype))) for a in (W0, B0, V0, S0))
    unused = lib.nn.Parameter(lib.tensor(np.ones(2, dtype=dtype)))
    x, y = lib.tensor(X.astype(dtype)), lib.tensor(Y.astype(dtype))

    def loss_fn():
        h = (x @ w + b).tanh()
        return (((h @ v[0]) * s + h @ v[1] - y) ** 2).mean()
    return [w, b, v, s, unused], loss_fn


def run(lib, cls, kw, steps=20, dtype=np.float64, group_kw=None):
    params, loss_fn = make_problem(lib, dtype)
    groups = [{"params": params[:2]}, {"params": params[2:], **(group_kw or {})}]
    opt = getattr(lib.optim, cls)(groups, **kw)
    traj = []
    for _ in range(steps):
        opt.zero_grad()
        loss = loss_fn()
        loss.backward()
        opt.step()
        traj.append([p.detach().numpy().copy() for p in params])
    return opt, params, traj


def compare(cls, kw, torch, steps=20, dtype=np.float64, rtol=1e-9, atol=1e-11, group_kw=None):
    eo, ep, et = run(ember, cls, kw, steps, dtype, group_kw)
    # torch's single-tensor path is the reference: its foreach path rounds some scalars differently
    to, tp, tt = run(torch, cls, {**kw, "foreach": False}, steps, dtype, group_kw)
    for i, (a, b) in enumerate(zip(et, tt)):
        for x, y in zip(a, b):
            np.testing.assert_allclose(x, y, rtol=rtol, atol=atol, err_msg=f"{cls} {kw} step {i}")
    return eo, ep, to, tp


def _combos(**options):
    keys = list(options)
    return [dict(zip(keys, vals)) for vals in itertools.product(*options.values())]


@pytest.mark.parametrize("kw", _combos(lr=[0.05], lambd=[1e-4, 0.1], alpha=[0.75, 0.5], t0=[1e6, 5],
                                       weight_decay=[0, 0.1], maximize=[False, True], foreach=[None, True]))
def test_asgd_trajectory(torch, kw):
    rtol, atol = 1e-9, 1e-11
    eo, ep, to, tp = compare("ASGD", kw, torch, rtol=rtol, atol=atol)
    for pe, pt in zip(ep, tp):
        if pt in to.state:
            for k in ("ax", "eta", "mu", "step"):
                np.testing.assert_allclose(eo.state[pe][k].numpy(), to.state[pt][k].numpy(), rtol=rtol, atol=atol)


@pytest.mark.parametrize("kw", _combos(lr=[0.01, 0.3], etas=[(0.5, 1.2), (0.3, 2.0)],
                                       step_sizes=[(1e-6, 50), (1e-3, 0.05)], maximize=[False, True],
                                       foreach=[None, False]))
def test_rprop_trajectory(torch, kw):
    eo, ep, to, tp = compare("Rprop", kw, torch)
    for pe, pt in zip(ep, tp):
        if pt in to.state:
            for k in ("prev", "step_size", "step"):
                np.testing.assert_allclose(eo.state[pe][k].numpy(), to.state[pt][k].numpy(), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("kw", _combos(lr=[0.01, 0.1], beta2_decay=[-0.8, -0.5], eps=[(None, 1e-3), (1e-4, 1e-2)],
                                       d=[1.0, 1.5], weight_decay=[0.0, 0.1], maximize=[False, True],
                                       foreach=[None, False]))
def test_adafactor_trajectory(torch, kw):
    eo, ep, to, tp = compare("Adafactor", kw, torch, rtol=1e-8, atol=1e-8)
    for pe, pt in zip(ep, tp):
        if pt in to.state:
            assert sorted(eo.state[pe]) == sorted(to.state[pt])
            for k, v in to.state[pt].items():
                assert tuple(eo.state[pe][k].shape) == tuple(v.shape), k
                np.testing.assert_allclose(eo.state[pe][k].numpy(), v.numpy(), rtol=1e-8, atol=1e-12)


@pytest.mark.parametrize("cls,kw", [("ASGD", dict(lr=0.05, t0=3)), ("Rprop", dict(lr=0.1)),
                                    ("Adafactor", dict(lr=0.1)), ("Adafactor", dict(lr=0.1, eps=(1e-3, 1e-3)))])
def test_float32_and_group_options(torch, cls, kw):
    compare(cls, kw, torch, dtype=np.float32, rtol=2e-4, atol=1e-5)
    compare(cls, kw, torch, group_kw={"lr": 0.02})


def _torch_sd_to_ember(sd):
    out = copy.deepcopy(sd)
    for st in out["state"].values():
        for k, v in st.items():
            st[k] = ember.from_numpy(v.numpy().copy())
    return out


@pytest.mark.parametrize("cls,kw", [("ASGD", dict(lr=0.05, t0=3, weight_decay=0.1)),
                                    ("Rprop", dict(lr=0.05, etas=(0.4, 1.3))),
                                    ("Adafactor", dict(lr=0.1, weight_decay=0.05))])
def test_state_dict_round_trip(torch, cls, kw):
    eo, ep, et = run(ember, cls, kw, steps=5)
    to, tp, tt = run(torch, cls, kw, steps=5)
    esd, tsd = eo.state_dict(), to.state_dict()
    assert esd["param_groups"] == tsd["param_groups"]
    assert sorted(esd["state"]) == sorted(tsd["state"])
    for i in tsd["state"]:
        assert sorted(esd["state"][i]) == sorted(tsd["state"][i])
        for k, v in tsd["state"][i].items():
            assert esd["state"][i][k].dtype == getattr(ember, str(v.dtype).split(".")[1]), k
    # fresh optimizers loading torch's state (load_state_dict casts state to the parameter dtype,
    # except "step") continue alike in both libraries
    params, loss_fn = make_problem(ember, np.float64)
    tparams, t_loss_fn = make_problem(torch, np.float64)
    for p, t, src in zip(params, tparams, tp):
        with ember.no_grad():
            p.copy_(ember.from_numpy(src.detach().numpy().copy()))
        with torch.no_grad():
            t.copy_(src)
    opt = getattr(optim, cls)([{"params": params[:2]}, {"params": params[2:]}], **kw)
    opt.load_state_dict(_torch_sd_to_ember(tsd))
    topt = getattr(torch.optim, cls)([{"params": tparams[:2]}, {"params": tparams[2:]}], **kw)
    topt.load_state_dict(tsd)
    for i, (pe, pt) in enumerate(zip(params, tparams)):
        if pt in topt.state:
            for k, v in topt.state[pt].items():
                assert opt.state[pe][k].dtype == getattr(ember, str(v.dtype).split(".")[1]), k
    for _ in range(5):
        for o, f in ((opt, loss_fn), (topt, t_loss_fn)):
            o.zero_grad()
            f().backward()
            o.step()
    for p, t in zip(params, tparams):
        np.testing.assert_allclose(p.detach().numpy(), t.detach().numpy(), rtol=1e-9, atol=1e-11)
    # and ember's own state dict round-trips
    opt2 = getattr(optim, cls)([{"params": params[:2]}, {"params": params[2:]}], **kw)
    opt2.load_state_dict(opt.state_dict())
    for a, b in zip(opt.state.values(), opt2.state.values()):
        for k in a:
            np.testing.assert_array_equal(a[k].numpy(), b[k].numpy())


def test_argument_errors():
    p = [ember.nn.Parameter(ember.randn(2))]
    with pytest.raises(ValueError, match="Invalid learning rate"):
        optim.ASGD(p, lr=-1)
    with pytest.raises(ValueError, match="Invalid weight_decay"):
        optim.ASGD(p, weight_decay=-1)
    with pytest.raises(ValueError, match="Invalid eta values"):
        optim.Rprop(p, etas=(1.5, 1.2))
    with pytest.raises(ValueError, match="Invalid learning rate"):
        optim.Rprop(p, lr=-0.1)
    with pytest.raises(ValueError, match="beta2_decay should be <= 0"):
        optim.Adafactor(p, beta2_decay=0.5)
    with pytest.raises(ValueError, match="epsilon1 should be >= 0"):
        optim.Adafactor(p, eps=(-1, 1e-3))
    with pytest.raises(ValueError, match="Clipping threshold d should be >= 1"):
        optim.Adafactor(p, d=0.5)
    with pytest.raises(ValueError, match="Learning rate should be >= 0"):
        optim.Adafactor(p, lr=-1)


def test_closure_and_defaults(torch):
    for cls in ("ASGD", "Rprop", "Adafactor"):
        eo = getattr(optim, cls)([ember.nn.Parameter(ember.randn(2))])
        to = getattr(torch.optim, cls)([torch.nn.Parameter(torch.randn(2))])
        assert eo.defaults == to.defaults
        p = ember.nn.Parameter(ember.tensor([1.0, -2.0]))
        opt = getattr(optim, cls)([p], lr=0.1)

        def closure():
            opt.zero_grad()
            loss = (p * p).sum()
            loss.backward()
            return loss
        assert float(opt.step(closure)) == 5.0
