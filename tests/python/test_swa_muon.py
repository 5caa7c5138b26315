"""ember.optim.Muon, ember.optim.swa_utils and swap_in_optimizer_params_and_state against torch 2.13."""
import copy

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")


def _np(t):
    return t.detach().numpy()


# ---------------------------------------------------------------- Muon

def _muon_run(lib, shape, steps=5, dtype="float32", **kw):
    w0 = np.random.RandomState(0).randn(*shape).astype(np.float32)
    p = lib.nn.Parameter(lib.tensor(w0).to(getattr(lib, dtype)))
    opt = lib.optim.Muon([p], **kw)
    rs = np.random.RandomState(1)
    for _ in range(steps):
        target = lib.tensor(rs.randn(*shape).astype(np.float32)).to(getattr(lib, dtype))
        loss = ((p - target) ** 2).sum()
        opt.zero_grad()
        loss.backward()
        opt.step()
    return p, opt


@pytest.mark.parametrize("shape", [(6, 4), (4, 6), (5, 5), (1, 7)])
@pytest.mark.parametrize("kw", [dict(), dict(lr=0.02), dict(lr=0.02, nesterov=False),
                                dict(lr=0.05, weight_decay=0.01, adjust_lr_fn="match_rms_adamw"),
                                dict(lr=0.03, adjust_lr_fn="original", momentum=0.5),
                                dict(lr=0.01, ns_steps=3, ns_coefficients=(3.0, -3.2, 1.2), eps=1e-5)])
def test_muon_trajectory_matches_torch(shape, kw):
    p_t, opt_t = _muon_run(torch, shape, **kw)
    p_e, opt_e = _muon_run(ember, shape, **kw)
    np.testing.assert_allclose(_np(p_e), _np(p_t), rtol=1e-6, atol=1e-6)
    buf_t = opt_t.state[opt_t.param_groups[0]["params"][0]]["momentum_buffer"]
    buf_e = opt_e.state[opt_e.param_groups[0]["params"][0]]["momentum_buffer"]
    np.testing.assert_allclose(_np(buf_e), _np(buf_t), rtol=1e-6, atol=1e-6)


def test_muon_bfloat16_parameters_match_torch():
    for nesterov in (True, False):
        p_t, _ = _muon_run(torch, (5, 3), dtype="bfloat16", lr=0.02, nesterov=nesterov)
        p_e, _ = _muon_run(ember, (5, 3), dtype="bfloat16", lr=0.02, nesterov=nesterov)
        assert p_e.dtype == ember.bfloat16
        np.testing.assert_array_equal(_np(p_e.float()), _np(p_t.float()))


def test_muon_defaults_and_groups_match_torch():
    pt = torch.nn.Parameter(torch.zeros(2, 3))
    pe = ember.nn.Parameter(ember.zeros(2, 3))
    dt, de = torch.optim.Muon([pt]).defaults, ember.optim.Muon([pe]).defaults
    assert dt == de
    assert repr(ember.optim.Muon([pe])).startswith("Muon (")


@pytest.mark.parametrize("kw", [dict(lr=-1.0), dict(momentum=-0.1), dict(weight_decay=-1.0),
                                dict(adjust_lr_fn="bogus")])
def test_muon_constructor_errors_match_torch(kw):
    with pytest.raises(ValueError) as et:
        torch.optim.Muon([torch.nn.Parameter(torch.zeros(2, 2))], **kw)
    with pytest.raises(ValueError) as ee:
        ember.optim.Muon([ember.nn.Parameter(ember.zeros(2, 2))], **kw)
    assert str(ee.value) == str(et.value)


@pytest.mark.parametrize("shape", [(3,), (2, 2, 2)])
def test_muon_rejects_non_matrices_as_torch(shape):
    with pytest.raises(ValueError) as et:
        torch.optim.Muon([torch.nn.Parameter(torch.zeros(*shape))])
    with pytest.raises(ValueError) as ee:
        ember.optim.Muon([ember.nn.Parameter(ember.zeros(*shape))])
    assert str(ee.value).replace("ember.", "torch.") == str(et.value)


def test_muon_step_errors_match_torch():
    for lib in (torch, ember):
        p = lib.nn.Parameter(lib.ones(3, 2))
        p.grad = lib.ones(3, 2)
        with pytest.raises(ValueError, match="less than 100"):
            lib.optim.Muon([p], ns_steps=100).step()
        with pytest.raises(ValueError, match="exactly 3 values"):
            lib.optim.Muon([p], ns_coefficients=(1.0, 2.0)).step()


def test_muon_state_dict_round_trip_with_torch():
    p_t, opt_t = _muon_run(torch, (4, 3), steps=2, lr=0.02)
    p_e, opt_e = _muon_run(ember, (4, 3), steps=2, lr=0.02)
    sd_e = opt_e.state_dict()
    assert sd_e["param_groups"] == opt_t.state_dict()["param_groups"]
    # ember's state into a fresh ember optimizer, then three more steps: still torch's trajectory
    q = ember.nn.Parameter(p_e.detach().clone())
    opt_q = ember.optim.Muon([q], lr=0.02)
    opt_q.load_state_dict(copy.deepcopy(sd_e))
    for lib, param, opt in ((torch, p_t, opt_t), (ember, q, opt_q)):
        for _ in range(3):
            opt.zero_grad()
            (param ** 3).sum().backward()
            opt.step()
    np.testing.assert_allclose(_np(q), _np(p_t), rtol=1e-6, atol=1e-6)


def test_muon_skips_parameters_without_grad():
    p = ember.nn.Parameter(ember.ones(2, 2))
    opt = ember.optim.Muon([p])
    opt.step()
    assert len(opt.state) == 0
    np.testing.assert_array_equal(_np(p), np.ones((2, 2), np.float32))


# ---------------------------------------------------------------- averaging functions

def test_avg_fns_match_torch():
    rs = np.random.RandomState(3)
    a, b = rs.randn(3, 4).astype(np.float32), rs.randn(3, 4).astype(np.float32)
    for name, args in (("get_ema_avg_fn", (0.9,)), ("get_swa_avg_fn", ())):
        ft = getattr(torch.optim.swa_utils, name)(*args)
        fe = getattr(ember.optim.swa_utils, name)(*args)
        for n in (1, 4):
            rt = ft(torch.tensor(a), torch.tensor(b), torch.tensor(n))
            re = fe(ember.tensor(a), ember.tensor(b), ember.tensor(n))
            np.testing.assert_allclose(_np(re), _np(rt), rtol=1e-6)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
@pytest.mark.parametrize("n", [3, "tensor"])
def test_multi_avg_fns_match_torch(dtype, n):
    rs = np.random.RandomState(4)
    arrays = [(rs.randn(3, 2) * 10).astype(dtype) for _ in range(4)]
    for make in ("get_ema_multi_avg_fn", "get_swa_multi_avg_fn"):
        results = []
        for lib in (torch, ember):
            fn = getattr(lib.optim.swa_utils, make)(*((0.75,) if "ema" in make else ()))
            avg = [lib.tensor(arrays[0]), lib.tensor(arrays[1])]
            cur = [lib.tensor(arrays[2]), lib.tensor(arrays[3])]
            try:
                fn(avg, cur, lib.tensor(3) if n == "tensor" else n)
                results.append([_np(t) for t in avg])
            except RuntimeError as e:  # torch's integer SWA path refuses both forms of n
                results.append(str(e))
        if isinstance(results[0], str):
            assert results[1] == results[0]
            continue
        for g, w in zip(results[1], results[0]):
            assert g.dtype == w.dtype
            np.testing.assert_allclose(g, w, rtol=1e-6)


@pytest.mark.parametrize("decay", [-0.1, 1.5])
def test_ema_decay_errors_match_torch(decay):
    for name in ("get_ema_avg_fn", "get_ema_multi_avg_fn"):
        with pytest.raises(ValueError) as et:
            getattr(torch.optim.swa_utils, name)(decay)
        with pytest.raises(ValueError) as ee:
            getattr(ember.optim.swa_utils, name)(decay)
        assert str(ee.value) == str(et.value)


# ---------------------------------------------------------------- AveragedModel

def _twin_nets():
    """The same network in torch and ember, with equal weights and buffers."""
    torch.manual_seed(0)
    nets = [lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.BatchNorm1d(4), lib.nn.ReLU(), lib.nn.Linear(4, 2))
            for lib in (torch, ember)]
    with ember.no_grad():
        for (_, a), (_, b) in zip(nets[0].state_dict().items(), nets[1].state_dict().items()):
            b.copy_(ember.tensor(_np(a)))
    return nets


def _train_and_average(lib, model, averaged, steps=4):
    opt = lib.optim.SGD(model.parameters(), lr=0.1)
    rs = np.random.RandomState(5)
    for _ in range(steps):
        x = lib.tensor(rs.randn(8, 3).astype(np.float32))
        opt.zero_grad()
        model(x).pow(2).mean().backward()
        opt.step()
        averaged.update_parameters(model)


@pytest.mark.parametrize("kind", ["swa", "ema_avg", "ema_multi", "swa_multi", "buffers", "buffers_ema"])
def test_averaged_model_matches_torch(kind):
    states = []
    for lib, model in zip((torch, ember), _twin_nets()):
        su = lib.optim.swa_utils
        kw = {"swa": {}, "ema_avg": dict(avg_fn=su.get_ema_avg_fn(0.8)),
              "ema_multi": dict(multi_avg_fn=su.get_ema_multi_avg_fn(0.8)),
              "swa_multi": dict(multi_avg_fn=su.get_swa_multi_avg_fn()),
              "buffers": dict(use_buffers=True),
              "buffers_ema": dict(use_buffers=True, multi_avg_fn=su.get_ema_multi_avg_fn(0.5))}[kind]
        averaged = su.AveragedModel(model, **kw)
        _train_and_average(lib, model, averaged)
        state = {k: _np(v) for k, v in averaged.state_dict().items()}
        averaged.eval()
        state["__out__"] = _np(averaged(lib.tensor(np.random.RandomState(6).randn(5, 3).astype(np.float32))))
        states.append(state)
    st, se = states
    assert list(se) == list(st)
    for k in st:
        assert se[k].dtype == st[k].dtype, k
        np.testing.assert_allclose(se[k], st[k], rtol=1e-5, atol=1e-6, err_msg=k)


def test_averaged_model_details_match_torch():
    for lib in (torch, ember):
        model = lib.nn.Linear(2, 2)
        averaged = lib.optim.swa_utils.AveragedModel(model)
        assert averaged.n_averaged.dtype == lib.int64 and averaged.n_averaged.shape == ()
        assert [n for n, _ in averaged.named_parameters()] == ["module.weight", "module.bias"]
        assert averaged.module is not model
        with pytest.raises(AssertionError, match="Only one of avg_fn and multi_avg_fn"):
            lib.optim.swa_utils.AveragedModel(model, avg_fn=lambda *a: a[0], multi_avg_fn=lambda *a: None)


# ---------------------------------------------------------------- update_bn

def test_update_bn_matches_torch():
    rs = np.random.RandomState(7)
    batches = [rs.randn(6, 3).astype(np.float32) * 3 + 1 for _ in range(3)]
    results = []
    for lib, model in zip((torch, ember), _twin_nets()):
        model.eval()
        loader = [(lib.tensor(b), 0) for b in batches[:2]] + [lib.tensor(batches[2])]
        lib.optim.swa_utils.update_bn(loader, model)
        bn = model[1]
        results.append((_np(bn.running_mean), _np(bn.running_var), int(bn.num_batches_tracked), bn.momentum,
                        model.training))
    (mt, vt, nt, momt, trt), (me, ve, ne, mome, tre) = results
    assert (ne, mome, tre) == (nt, momt, trt) == (3, 0.1, False)
    np.testing.assert_allclose(me, mt, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(ve, vt, rtol=1e-5, atol=1e-6)


def test_update_bn_statistics_are_cumulative_means():
    rs = np.random.RandomState(8)
    batches = [rs.randn(5, 4).astype(np.float32) * 2 + 3 for _ in range(4)]
    for lib in (torch, ember):
        bn = lib.nn.BatchNorm1d(4, momentum=0.3)
        lib.optim.swa_utils.update_bn([lib.tensor(b) for b in batches], bn)
        np.testing.assert_allclose(_np(bn.running_mean), np.mean([b.mean(0) for b in batches], 0), rtol=1e-5)
        np.testing.assert_allclose(_np(bn.running_var), np.mean([b.var(0, ddof=1) for b in batches], 0), rtol=1e-5)
        assert bn.momentum == 0.3 and bn.training


def test_update_bn_without_batchnorm_does_nothing():
    model = ember.nn.Linear(2, 2)
    ember.optim.swa_utils.update_bn([object()], model)  # the loader is never read


# ---------------------------------------------------------------- SWALR

def _lrs(lib, sched_kw, steps=14, groups=2):
    params = [lib.nn.Parameter(lib.zeros(1)) for _ in range(groups)]
    opt = lib.optim.SGD([{"params": [p], "lr": 0.5 + i} for i, p in enumerate(params)], lr=1.0)
    sched = lib.optim.swa_utils.SWALR(opt, **sched_kw)
    lrs = [sched.get_last_lr()]
    for _ in range(steps):
        opt.step()
        sched.step()
        lrs.append(sched.get_last_lr())
    return lrs, sched, opt


@pytest.mark.parametrize("kw", [dict(swa_lr=0.05), dict(swa_lr=[0.05, 0.2], anneal_epochs=4),
                                dict(swa_lr=0.1, anneal_strategy="linear", anneal_epochs=5),
                                dict(swa_lr=0.1, anneal_epochs=0), dict(swa_lr=0.3, anneal_epochs=1)])
def test_swalr_matches_torch(kw):
    lt, st, _ = _lrs(torch, kw)
    le, se, opt = _lrs(ember, kw)
    np.testing.assert_allclose(np.array(le), np.array(lt), rtol=1e-12)
    assert [g["swa_lr"] for g in opt.param_groups] == [g["swa_lr"] for g in st.optimizer.param_groups]
    sd_t, sd_e = st.state_dict(), se.state_dict()
    assert set(sd_t) == set(sd_e)
    for key in ("anneal_epochs", "_anneal_strategy", "last_epoch", "_step_count"):
        assert sd_e[key] == sd_t[key]


def test_swalr_state_dict_restores_anneal_function():
    _, sched, opt = _lrs(ember, dict(swa_lr=0.1, anneal_strategy="linear"), steps=2)
    other = ember.optim.swa_utils.SWALR(opt, swa_lr=0.1)
    assert other.anneal_func is other._cosine_anneal
    other.load_state_dict(sched.state_dict())
    assert other.anneal_func is other._linear_anneal


@pytest.mark.parametrize("kw", [dict(swa_lr=0.1, anneal_strategy="exp"), dict(swa_lr=0.1, anneal_epochs=-1),
                                dict(swa_lr=0.1, anneal_epochs=2.0), dict(swa_lr=[0.1, 0.2, 0.3])])
def test_swalr_errors_match_torch(kw):
    for lib in (torch, ember):
        opt = lib.optim.SGD([lib.nn.Parameter(lib.zeros(1))], lr=1.0)
        with pytest.raises(ValueError) as e:
            lib.optim.swa_utils.SWALR(opt, **kw)
        if lib is torch:
            msg = str(e.value)
        else:
            assert str(e.value) == msg


def test_swalr_get_lr_outside_step_warns():
    _, sched, _ = _lrs(ember, dict(swa_lr=0.1), steps=1)
    with pytest.warns(UserWarning, match="get_last_lr"):
        sched.get_lr()


# ---------------------------------------------------------------- swap_in_optimizer_params_and_state

def _adam(lib):
    p = lib.nn.Parameter(lib.tensor([1.0, -2.0, 3.0]))
    q = lib.nn.Parameter(lib.tensor([[0.5, 0.25]]))
    opt = lib.optim.Adam([{"params": [p]}, {"params": [q], "lr": 0.01}], lr=0.1)
    (p.sum() * 2 + (q ** 2).sum()).backward()
    opt.step()
    return opt, p, q


def test_swap_in_runs_step_on_swapped_tensors_like_torch():
    out = []
    for lib in (torch, ember):
        opt, p, q = _adam(lib)
        live_p, live_state = p.detach().clone(), copy.deepcopy(opt.state_dict())
        sd = copy.deepcopy(opt.state_dict())
        sd["param_groups"][0]["lr"] = 0.5
        new_p = lib.tensor([0.0, 0.0, 0.0], requires_grad=True)
        new_q = lib.tensor([[1.0, 1.0]], requires_grad=True)
        new_p.grad, new_q.grad = lib.ones(3), lib.ones(1, 2)
        groups_before = opt.param_groups[0]["params"]
        with lib.optim.swap_in_optimizer_params_and_state(opt, {"p": new_p, "q": new_q}, sd):
            assert opt.param_groups[0]["lr"] == 0.5
            assert opt.param_groups[0]["params"][0] is new_p
            opt.step()
        assert opt.param_groups[0]["params"] is groups_before
        assert opt.param_groups[0]["lr"] == 0.1
        np.testing.assert_array_equal(_np(p), _np(live_p))
        np.testing.assert_array_equal(_np(opt.state[p]["exp_avg"]), _np(live_state["state"][0]["exp_avg"]))
        out.append((_np(new_p), _np(new_q), _np(sd["state"][0]["exp_avg"]), float(sd["state"][0]["step"])))
    for e, t in zip(out[1], out[0]):
        np.testing.assert_allclose(e, t, rtol=1e-6)


def test_swap_in_errors_match_torch():
    cases = [lambda sd: "not a dict", lambda sd: {**sd, "state": []},
             lambda sd: {**sd, "param_groups": sd["param_groups"][:1]},
             lambda sd: {**sd, "param_groups": [sd["param_groups"][0], {**sd["param_groups"][1], "extra": 1}]},
             lambda sd: {**sd, "state": {**sd["state"], 7: {}}},
             lambda sd: {**sd, "state": {0: 1}}]
    for make in cases:
        msgs = []
        for lib in (torch, ember):
            opt, p, q = _adam(lib)
            sd = make(copy.deepcopy(opt.state_dict()))
            with pytest.raises(RuntimeError) as e:
                with lib.optim.swap_in_optimizer_params_and_state(opt, {"p": p, "q": q}, sd):
                    pass
            msgs.append(str(e.value))
        assert msgs[1] == msgs[0]
    for lib in (torch, ember):
        p = lib.nn.Parameter(lib.zeros(1))
        opt = lib.optim.SGD([p], lr=0.1)
        with pytest.raises(RuntimeError, match="requires initialized optimizer state"):
            with lib.optim.swap_in_optimizer_params_and_state(opt, {"p": p}, opt.state_dict()):
                pass
