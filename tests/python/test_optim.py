"""ember.optim: optimizer trajectories and state dicts against torch.optim, the Optimizer API, and
the lr schedulers' sequences (torch as the oracle; those tests skip cleanly without it)."""
import warnings

import numpy as np
import pytest

import ember
import ember.nn as nn
import ember.optim as optim
from ember.optim import lr_scheduler


@pytest.fixture
def torch():
    return pytest.importorskip("torch")


RS = np.random.RandomState(0)
W0 = RS.randn(4, 3).astype(np.float32)
B0 = RS.randn(3).astype(np.float32)
V0 = RS.randn(3, 2).astype(np.float32)
X = RS.randn(16, 4).astype(np.float32)
Y = RS.randn(16, 2).astype(np.float32)


def make_problem(lib, dtype=np.float32):
    """A small two-layer model as raw parameters; two param groups."""
    w = lib.nn.Parameter(lib.tensor(W0.astype(dtype)))
    b = lib.nn.Parameter(lib.tensor(B0.astype(dtype)))
    v = lib.nn.Parameter(lib.tensor(V0.astype(dtype)))
    unused = lib.nn.Parameter(lib.tensor(np.ones(2, dtype=dtype)))  # never gets a gradient
    x, y = lib.tensor(X.astype(dtype)), lib.tensor(Y.astype(dtype))

    def loss_fn():
        return (((x @ w + b).tanh() @ v - y) ** 2).mean()
    return [w, b, v, unused], loss_fn


def run(lib, name, kw, steps=10, groups=True, dtype=np.float32):
    if name == "LBFGS":
        # L-BFGS takes max_iter iterations per step; on this non-convex problem its iterates are
        # chaotic in flat directions after ~15 iterations (rounding differences grow while the
        # losses still agree), so compare the first 3 steps
        steps = min(steps, 3)
    params, loss_fn = make_problem(lib, dtype)
    if groups and name != "LBFGS":
        spec = [{"params": params[:2]}, {"params": params[2:], "lr": kw.get("lr", 1e-3) * 0.5}]
    else:
        spec = params[:3]
    opt = getattr(lib.optim, name)(spec, **kw)
    losses = []
    for _ in range(steps):
        def closure():
            opt.zero_grad()
            loss = loss_fn()
            loss.backward()
            return loss
        if name == "LBFGS":
            losses.append(float(opt.step(closure)))
        else:
            losses.append(float(closure()))
            opt.step()
    return [p.detach().numpy().copy() for p in params], losses, opt


CONFIGS = [
    ("SGD", dict(lr=0.1)),
    ("SGD", dict(lr=0.1, momentum=0.9)),
    ("SGD", dict(lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.01)),
    ("SGD", dict(lr=0.05, momentum=0.5, dampening=0.3, weight_decay=0.1, maximize=True)),
    ("Adam", dict(lr=0.05)),
    ("Adam", dict(lr=0.05, betas=(0.8, 0.99), amsgrad=True, weight_decay=0.1)),
    ("Adam", dict(lr=0.05, maximize=True, eps=1e-6)),
    ("Adam", dict(lr=0.05, weight_decay=0.1, decoupled_weight_decay=True)),
    ("AdamW", dict(lr=0.05)),
    ("AdamW", dict(lr=0.05, amsgrad=True, weight_decay=0.2)),
    ("RMSprop", dict(lr=0.01)),
    ("RMSprop", dict(lr=0.01, alpha=0.9, centered=True, momentum=0.9, weight_decay=0.1)),
    ("RMSprop", dict(lr=0.01, momentum=0.5, maximize=True)),
    ("Adagrad", dict(lr=0.1)),
    ("Adagrad", dict(lr=0.1, lr_decay=0.01, weight_decay=0.1, initial_accumulator_value=0.1, eps=1e-8)),
    ("Adadelta", dict()),
    ("Adadelta", dict(lr=0.5, rho=0.95, weight_decay=0.1, maximize=True)),
    ("Adamax", dict(lr=0.05)),
    ("Adamax", dict(lr=0.05, betas=(0.8, 0.9), weight_decay=0.1)),
    ("NAdam", dict(lr=0.05)),
    ("NAdam", dict(lr=0.05, weight_decay=0.1, momentum_decay=0.01)),
    ("NAdam", dict(lr=0.05, weight_decay=0.1, decoupled_weight_decay=True)),
    ("RAdam", dict(lr=0.05)),
    ("RAdam", dict(lr=0.05, weight_decay=0.1, decoupled_weight_decay=True, betas=(0.9, 0.9))),
    ("LBFGS", dict(lr=1, max_iter=5)),
    ("LBFGS", dict(lr=1, max_iter=5, history_size=3, line_search_fn="strong_wolfe")),
]


@pytest.mark.parametrize("name,kw", CONFIGS, ids=[f"{n}{i}" for i, (n, _) in enumerate(CONFIGS)])
def test_trajectory_matches_torch(torch, name, kw):
    ep, el, eopt = run(ember, name, kw)
    tp, tl, topt = run(torch, name, kw)
    for a, b in zip(ep, tp):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(el, tl, rtol=1e-5, atol=1e-6)
    # the same state, in the same layout
    es, ts = eopt.state_dict(), topt.state_dict()
    assert es["param_groups"] == ts["param_groups"]
    assert list(es["state"]) == list(ts["state"])
    for k in ts["state"]:
        assert list(es["state"][k]) == list(ts["state"][k]), k
        for key, tv in ts["state"][k].items():
            ev = es["state"][k][key]
            if isinstance(tv, torch.Tensor):
                assert str(ev.dtype)[6:] == str(tv.dtype)[6:] and tuple(ev.shape) == tuple(tv.shape), key
                np.testing.assert_allclose(ev.numpy(), tv.numpy(), rtol=1e-4, atol=1e-5, err_msg=key)
            elif isinstance(tv, (int, float)) and not isinstance(tv, bool):
                assert ev == pytest.approx(tv, rel=1e-4), key


def test_float64_trajectory(torch):
    for name, kw in (("Adam", dict(lr=0.05, amsgrad=True)), ("SGD", dict(lr=0.1, momentum=0.9)),
                     ("RMSprop", dict(lr=0.01, centered=True))):
        ep, _, eopt = run(ember, name, kw, dtype=np.float64)
        tp, _, _ = run(torch, name, kw, dtype=np.float64)
        assert ep[0].dtype == np.float64
        for a, b in zip(ep, tp):
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


def _to_ember_state(torch, sd):
    def conv(v):
        if isinstance(v, torch.Tensor):
            return ember.from_numpy(v.numpy().copy())
        if isinstance(v, dict):
            return {k: conv(x) for k, x in v.items()}
        if isinstance(v, list):
            return [conv(x) for x in v]
        return v
    return conv(sd)


def _to_torch_state(torch, sd):
    def conv(v):
        if isinstance(v, ember.Tensor):
            return torch.from_numpy(v.numpy().copy())
        if isinstance(v, dict):
            return {k: conv(x) for k, x in v.items()}
        if isinstance(v, list):
            return [conv(x) for x in v]
        return v
    return conv(sd)


@pytest.mark.parametrize("name,kw", [("Adam", dict(lr=0.05, amsgrad=True)), ("SGD", dict(lr=0.1, momentum=0.9)),
                                     ("NAdam", dict(lr=0.05)), ("Adagrad", dict(lr=0.1))])
def test_state_dict_interchange(torch, name, kw):
    """A torch optimizer's state_dict loads into the ember optimizer (and back) and training continues identically."""
    _, _, topt = run(torch, name, kw, steps=4)
    tparams = [p for g in topt.param_groups for p in g["params"]]
    eparams = [nn.Parameter(ember.from_numpy(p.detach().numpy().copy())) for p in tparams]
    eopt = getattr(optim, name)([{"params": eparams[:2]}, {"params": eparams[2:]}], **kw)
    eopt.load_state_dict(_to_ember_state(torch, topt.state_dict()))
    assert eopt.param_groups[1]["lr"] == topt.param_groups[1]["lr"]
    assert eopt.state[eparams[0]]["step" if name != "SGD" else "momentum_buffer"] is not None
    # continue both on the same problem
    _, eloss = make_problem(ember)
    _, tloss = make_problem(torch)
    x, y = ember.from_numpy(X), ember.from_numpy(Y)
    tx, ty = torch.from_numpy(X), torch.from_numpy(Y)
    for _ in range(3):
        for opt, ps, xx, yy in ((eopt, eparams, x, y), (topt, tparams, tx, ty)):
            opt.zero_grad()
            (((xx @ ps[0] + ps[1]).tanh() @ ps[2] - yy) ** 2).mean().backward()
            opt.step()
    for a, b in zip(eparams, tparams):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-5, atol=1e-6)
    # and back: ember's state_dict loads into torch
    t2 = getattr(torch.optim, name)([{"params": tparams[:2]}, {"params": tparams[2:]}], **kw)
    t2.load_state_dict(_to_torch_state(torch, eopt.state_dict()))
    assert t2.state_dict()["param_groups"] == eopt.state_dict()["param_groups"]


def test_optimizer_api(torch):
    w, b = nn.Parameter(ember.ones(2)), nn.Parameter(ember.zeros(2))
    opt = optim.SGD([w], lr=0.1, momentum=0.9)
    assert repr(opt) == repr(torch.optim.SGD([torch.nn.Parameter(torch.ones(2))], lr=0.1, momentum=0.9))
    assert opt.defaults["lr"] == 0.1 and opt.param_groups[0]["nesterov"] is False
    opt.add_param_group({"params": b, "lr": 0.01})
    assert opt.param_groups[1]["lr"] == 0.01 and opt.param_groups[1]["momentum"] == 0.9
    with pytest.raises(ValueError, match="some parameters appear in more than one parameter group"):
        opt.add_param_group({"params": [w]})
    with pytest.raises(TypeError, match="param_group must be a dict, but got list"):
        opt.add_param_group([w])
    with pytest.raises(TypeError, match="ordering of tensors in sets will change"):
        opt.add_param_group({"params": {nn.Parameter(ember.ones(1))}})
    with pytest.raises(ValueError, match="optimizer got an empty parameter list"):
        optim.Adam([])
    with pytest.raises(TypeError, match="params argument given to the optimizer should be an iterable"):
        optim.Adam(w)
    with pytest.raises(ValueError, match="can't optimize a non-leaf Tensor"):
        optim.Adam([w * 2])
    with pytest.raises(TypeError, match="optimizer can only optimize Tensors"):
        optim.SGD([1.0])
    with pytest.raises(ValueError, match="Invalid learning rate: -1"):
        optim.Adam([w], lr=-1)
    with pytest.raises(ValueError, match="Invalid beta parameter at index 1: 1.0"):
        optim.Adam([w], betas=(0.9, 1.0))
    with pytest.raises(ValueError, match="Nesterov momentum requires a momentum and zero dampening"):
        optim.SGD([w], nesterov=True)
    with pytest.raises(ValueError, match="LBFGS doesn't support per-parameter options"):
        optim.LBFGS([{"params": [w]}, {"params": [b]}])
    with pytest.warns(UserWarning, match="duplicate parameters"):
        optim.SGD([w, w], lr=0.1)
    named = optim.SGD([("w", w), ("b", b)], lr=0.1)
    assert named.param_groups[0]["param_names"] == ["w", "b"]
    assert named.state_dict()["param_groups"][0]["param_names"] == ["w", "b"]
    # step: no autograd record, in-place version bump, closure loss
    (w * w).sum().backward()
    v0 = w._version
    loss = opt.step(lambda: ember.tensor(3.0))
    assert loss.item() == 3.0 and w.is_leaf and w.grad_fn is None and w._version > v0
    assert np.allclose(w.detach().numpy(), 0.8)
    opt.zero_grad(set_to_none=False)
    assert w.grad.tolist() == [0.0, 0.0]
    opt.zero_grad()
    assert w.grad is None
    opt.step()  # no gradients: nothing happens
    assert np.allclose(w.detach().numpy(), 0.8)
    with pytest.raises(ValueError, match="different number of parameter groups"):
        opt.load_state_dict({"state": {}, "param_groups": [{"params": [0]}]})
    with pytest.raises(ValueError, match="doesn't match the size of optimizer's group"):
        opt.load_state_dict({"state": {}, "param_groups": [{"params": [0, 1]}, {"params": [2]}]})


def test_optimizer_hooks():
    w = nn.Parameter(ember.ones(2))
    opt = optim.SGD([w], lr=0.5)
    calls = []
    h = opt.register_step_pre_hook(lambda o, args, kwargs: calls.append("pre"))
    opt.register_step_post_hook(lambda o, args, kwargs: calls.append("post"))
    g = optim.register_optimizer_step_pre_hook(lambda o, args, kwargs: calls.append("global"))
    opt.register_state_dict_post_hook(lambda o, sd: calls.append("sd"))
    opt.register_load_state_dict_post_hook(lambda o: calls.append("load"))
    opt.step()
    g.remove()
    h.remove()
    opt.step()
    opt.load_state_dict(opt.state_dict())
    assert calls == ["global", "pre", "post", "post", "sd", "load"]
    opt2 = optim.SGD([w], lr=0.5)
    opt2.register_step_pre_hook(lambda o, args, kwargs: (args, {"closure": lambda: 42}))
    assert opt2.step() == 42


def test_fused_update_dtypes_and_layouts():
    """Non-contiguous and half parameters go through the working-copy path of the fused ops."""
    base = ember.arange(12.0).reshape(3, 4)
    p = nn.Parameter(base.t())  # a transposed view: not contiguous
    q = nn.Parameter(ember.arange(12.0).reshape(3, 4).t().contiguous())
    for t in (p, q):
        t.grad = ember.ones(4, 3)
    o1, o2 = optim.Adam([p], lr=0.1), optim.Adam([q], lr=0.1)
    for _ in range(3):
        o1.step()
        o2.step()
    assert np.allclose(p.detach().numpy(), q.detach().numpy()) and not p.is_contiguous()
    assert np.allclose(base.numpy().T, p.detach().numpy())  # updated through the view
    h = nn.Parameter(ember.ones(3, dtype=ember.float16))
    h.grad = ember.full((3,), 0.5, dtype=ember.float16)
    ho = optim.SGD([h], lr=0.5, momentum=0.9)
    ho.step()
    ho.step()
    # buffer 0.5 then 0.95: p = 1 - 0.5 * 0.5 - 0.5 * 0.95
    assert h.dtype is ember.float16 and np.allclose(h.detach().numpy().astype(np.float32), 0.275, atol=1e-3)
    assert ho.state[h]["momentum_buffer"].dtype is ember.float16
    with pytest.raises(RuntimeError, match="expected 1 tensors in grads"):
        ember._C._ops._fused_sgd_([h], [], [], 0.1, 0.0, 0.0, 0.0, False, False, False)


def test_adagrad_state_at_construction_and_lbfgs_state(torch):
    w = nn.Parameter(ember.ones(2))
    opt = optim.Adagrad([w], initial_accumulator_value=0.5)
    assert opt.state[w]["step"].item() == 0 and opt.state[w]["sum"].tolist() == [0.5, 0.5]
    _, _, eopt = run(ember, "LBFGS", dict(max_iter=4), steps=2)
    _, _, topt = run(torch, "LBFGS", dict(max_iter=4), steps=2)
    es, ts = eopt.state_dict()["state"][0], topt.state_dict()["state"][0]
    assert list(es) == list(ts) and es["n_iter"] == ts["n_iter"] and es["func_evals"] == ts["func_evals"]


# ---------------------------------------------------------------- schedulers
def _sched_run(lib, make_sched, opt_name="SGD", steps=25, metrics=None, opt_kw=None, groups=2, epochs=None):
    ps = [lib.nn.Parameter(lib.ones(1)) for _ in range(groups)]
    kw = opt_kw or ({"lr": 0.1, "momentum": 0.9} if opt_name == "SGD" else {"lr": 0.1})
    opt = getattr(lib.optim, opt_name)([{"params": [p], "lr": kw["lr"] * (i + 1)} for i, p in enumerate(ps)],
                                       **{k: v for k, v in kw.items() if k != "lr"}, lr=kw["lr"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sched = make_sched(lib.optim.lr_scheduler, opt)
        out = [[g["lr"] for g in opt.param_groups]]
        moms = []
        for i in range(steps):
            opt.step()
            if metrics is not None:
                sched.step(metrics[i])
            elif epochs is not None:
                sched.step(epochs[i])
            else:
                sched.step()
            out.append(list(sched.get_last_lr()))
            assert out[-1] == [g["lr"] for g in opt.param_groups]
            moms.append([g.get("momentum", g.get("betas", (None,))[0]) for g in opt.param_groups])
    return out, moms, sched


SCHEDULERS = [
    ("StepLR", lambda S, o: S.StepLR(o, 3, gamma=0.5), {}),
    ("MultiStepLR", lambda S, o: S.MultiStepLR(o, [2, 5, 5, 9], gamma=0.3), {}),
    ("ExponentialLR", lambda S, o: S.ExponentialLR(o, 0.9), {}),
    ("CosineAnnealingLR", lambda S, o: S.CosineAnnealingLR(o, T_max=6, eta_min=0.01), {}),
    ("CosineAnnealingWarmRestarts", lambda S, o: S.CosineAnnealingWarmRestarts(o, T_0=3, T_mult=2, eta_min=0.001),
     {}),
    ("CosineAnnealingWarmRestarts-epochs", lambda S, o: S.CosineAnnealingWarmRestarts(o, T_0=4, T_mult=2),
     {"epochs": [0.5 * i for i in range(25)]}),
    ("OneCycleLR", lambda S, o: S.OneCycleLR(o, max_lr=1.0, total_steps=25), {}),
    ("OneCycleLR-linear3", lambda S, o: S.OneCycleLR(o, max_lr=[1.0, 2.0], epochs=5, steps_per_epoch=5,
                                                     anneal_strategy="linear", three_phase=True), {}),
    ("OneCycleLR-adam", lambda S, o: S.OneCycleLR(o, max_lr=0.5, total_steps=30, pct_start=0.4),
     {"opt_name": "Adam"}),
    ("CyclicLR", lambda S, o: S.CyclicLR(o, 0.01, 0.1, step_size_up=4), {}),
    ("CyclicLR-tri2", lambda S, o: S.CyclicLR(o, [0.01, 0.02], 0.1, step_size_up=3, step_size_down=5,
                                              mode="triangular2"), {}),
    ("CyclicLR-exp", lambda S, o: S.CyclicLR(o, 0.01, 0.1, step_size_up=3, mode="exp_range", gamma=0.9), {}),
    ("CyclicLR-adam", lambda S, o: S.CyclicLR(o, 0.01, 0.1, step_size_up=3), {"opt_name": "Adam"}),
    ("LinearLR", lambda S, o: S.LinearLR(o, start_factor=0.25, end_factor=0.9, total_iters=6), {}),
    ("ConstantLR", lambda S, o: S.ConstantLR(o, factor=0.5, total_iters=4), {}),
    ("PolynomialLR", lambda S, o: S.PolynomialLR(o, total_iters=10, power=2.0), {}),
    ("LambdaLR", lambda S, o: S.LambdaLR(o, [lambda e: 0.9 ** e, lambda e: 1 / (e + 1)]), {}),
    ("MultiplicativeLR", lambda S, o: S.MultiplicativeLR(o, lambda e: 0.95), {}),
    ("SequentialLR", lambda S, o: S.SequentialLR(o, [S.LinearLR(o, 0.1, total_iters=4), S.ExponentialLR(o, 0.8),
                                                     S.StepLR(o, 2)], milestones=[5, 12]), {}),
    ("ChainedScheduler", lambda S, o: S.ChainedScheduler([S.ConstantLR(o, 0.5, total_iters=3),
                                                          S.ExponentialLR(o, 0.9)]), {}),
    ("ChainedCosine", lambda S, o: S.ChainedScheduler([S.CosineAnnealingLR(o, 5), S.StepLR(o, 4, 0.5)]), {}),
    ("ReduceLROnPlateau", lambda S, o: S.ReduceLROnPlateau(o, patience=2, factor=0.5, cooldown=1, min_lr=0.02),
     {"metrics": [1.0, 0.9, 0.95, 0.95, 0.96, 0.97, 0.5, 0.6, 0.7, 0.8, 0.9] * 3}),
    ("ReduceLROnPlateau-max", lambda S, o: S.ReduceLROnPlateau(o, mode="max", threshold_mode="abs", threshold=0.1,
                                                               patience=1, min_lr=[0.0, 0.05]),
     {"metrics": [1.0, 1.05, 1.2, 1.1, 1.0, 1.3, 1.3, 1.3] * 4}),
]


@pytest.mark.parametrize("name,make,extra", SCHEDULERS, ids=[s[0] for s in SCHEDULERS])
def test_scheduler_matches_torch(torch, name, make, extra):
    el, em, es = _sched_run(ember, make, **extra)
    tl, tm, ts = _sched_run(torch, make, **extra)
    np.testing.assert_allclose(np.array(el, dtype=np.float64), np.array(tl, dtype=np.float64), rtol=1e-12, atol=0)
    if em and em[0][0] is not None:  # cycled momentum / beta1
        np.testing.assert_allclose(np.array(em, dtype=np.float64), np.array(tm, dtype=np.float64), rtol=1e-12)
    esd, tsd = es.state_dict(), ts.state_dict()
    assert sorted(esd) == sorted(tsd)


def test_scheduler_state_dict_roundtrip():
    def make(o):
        return lr_scheduler.CosineAnnealingLR(o, T_max=10)
    w = nn.Parameter(ember.ones(1))
    o = optim.SGD([w], lr=1.0)
    s = make(o)
    for _ in range(4):
        o.step()
        s.step()
    sd = s.state_dict()
    assert "optimizer" not in sd and sd["last_epoch"] == 4 and sd["base_lrs"] == [1.0]
    o2 = optim.SGD([nn.Parameter(ember.ones(1))], lr=1.0)
    s2 = make(o2)
    s2.load_state_dict(sd)
    o2.param_groups[0]["lr"] = o.param_groups[0]["lr"]
    for _ in range(3):
        o.step()
        s.step()
        o2.step()
        s2.step()
    assert s.get_last_lr() == s2.get_last_lr()
    lam = lr_scheduler.LambdaLR(optim.SGD([w], lr=1.0), lambda e: 0.5)
    assert lam.state_dict()["lr_lambdas"] == [None]


def test_scheduler_warnings_and_errors():
    w = nn.Parameter(ember.ones(1))
    o = optim.SGD([w], lr=1.0)
    s = lr_scheduler.StepLR(o, 2)
    with pytest.warns(UserWarning, match=r"Detected call of `lr_scheduler.step\(\)` before `optimizer.step\(\)`"):
        s.step()
    o2 = optim.SGD([w], lr=1.0)
    s2 = lr_scheduler.ExponentialLR(o2, 0.5)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        o2.step()
        s2.step()  # the right order: no warning
    with pytest.warns(UserWarning, match="please use `get_last_lr\\(\\)`"):
        s2.get_lr()
    with pytest.warns(UserWarning, match="The epoch parameter in `scheduler.step\\(\\)` was not necessary"):
        s2.step(5)
    assert s2.get_last_lr() == [0.5 ** 5]  # the closed form
    with pytest.raises(TypeError, match="int is not an Optimizer"):
        lr_scheduler.StepLR(3, 2)
    with pytest.raises(KeyError, match="param 'initial_lr' is not specified in param_groups\\[0\\]"):
        lr_scheduler.StepLR(optim.SGD([w], lr=1.0), 2, last_epoch=3)
    with pytest.raises(ValueError, match="Factor should be < 1.0"):
        lr_scheduler.ReduceLROnPlateau(o, factor=1.5)
    with pytest.raises(ValueError, match="You must define either total_steps OR"):
        lr_scheduler.OneCycleLR(o, 1.0)
    with pytest.raises(ValueError, match="Tried to step 4 times"):
        oc = lr_scheduler.OneCycleLR(optim.SGD([w], lr=1.0, momentum=0.9), 1.0, total_steps=3)
        for _ in range(4):
            oc.step()
    with pytest.raises(ValueError, match="optimizer must support momentum or beta1"):
        lr_scheduler.CyclicLR(optim.Adagrad([w]), 0.1, 1.0)
    with pytest.raises(ValueError, match="Sequential Schedulers expects number of schedulers provided to be one"):
        lr_scheduler.SequentialLR(o, [lr_scheduler.StepLR(o, 2)], milestones=[3])
    with pytest.raises(ValueError, match="Expected positive integer T_0"):
        lr_scheduler.CosineAnnealingWarmRestarts(o, 0)
