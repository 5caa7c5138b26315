"""OpInfos for the fused optimizer updates of ops/optim.cpp (imported at the end of opdb.py).

Each sample is one param group of three parameters; the reference is torch.optim's single-tensor
functional implementation (foreach=False). The function returns every list it updates in place
(parameters and state), and check() also compares the mutated inputs.
"""
from opdb import OpInfo, add
from parity import Sample, T, is_torch


_OPT_SHAPES = [(3, 4), (5,), (2, 3, 2)]


def _opt_lists(dt, n_state, key, positive=()):
    """[params, grads, state lists...] as TensorSpecs; lists in `positive` hold non-negative values."""
    out = []
    for k in range(2 + n_state):
        low, high = (0.0, 1.0) if k in positive else (None, None)
        out.append([T(s, dt, low=low, high=high, key=(key, k, i)) for i, s in enumerate(_OPT_SHAPES)])
    return out


def _steps(values=(0.0, 3.0, 9.0)):
    return [T((), "float32", data=v) for v in values]


def _fused_fn(name, torch_fn):
    def fn(lib, *args, **kw):
        if is_torch(lib):
            return torch_fn(lib, *args, **kw)
        getattr(lib._C._ops, name)(*args)
        # the parameters and every state list (not the gradients)
        return tuple(args[0]) + tuple(t for a in args[2:] if isinstance(a, list) for t in a)
    return fn


def _torch_opt(lib, module):
    import importlib
    return getattr(importlib.import_module("torch.optim." + module), module)


def _t_sgd(lib, p, g, b, lr, momentum, dampening, wd, nesterov, maximize, first):
    bufs = [None] * len(p) if first and momentum != 0 else list(b)
    _torch_opt(lib, "sgd")(p, g, bufs, foreach=False, weight_decay=wd, momentum=momentum, lr=lr, dampening=dampening,
                           nesterov=nesterov, maximize=maximize)
    if momentum != 0:
        for dst, src in zip(b, bufs):
            dst.copy_(src)
    return tuple(p) + tuple(b)


def _sgd_samples(dt):
    p, g, b = _opt_lists(dt, 1, "sgd")
    return [Sample(p, g, [], 0.1, 0.0, 0.0, 0.0, False, False, False),
            Sample(p, g, b, 0.1, 0.9, 0.0, 0.01, True, False, False),
            Sample(p, g, b, 0.05, 0.9, 0.1, 0.0, False, True, False),
            Sample(p, g, b, 0.1, 0.8, 0.0, 0.1, False, False, True)]


def _t_adam(lib, p, g, m, v, vmax, steps, lr, b1, b2, wd, eps, amsgrad, maximize, decoupled):
    _torch_opt(lib, "adam")(p, g, m, v, vmax, steps, foreach=False, decoupled_weight_decay=decoupled, amsgrad=amsgrad,
                            beta1=b1, beta2=b2, lr=lr, weight_decay=wd, eps=eps, maximize=maximize)
    return tuple(p) + tuple(m) + tuple(v) + tuple(vmax) + tuple(steps)


def _adam_samples(dt):
    p, g, m, v, vmax = _opt_lists(dt, 3, "adam", positive=(3, 4))
    return [Sample(p, g, m, v, [], _steps(), 1e-2, 0.9, 0.999, 0.0, 1e-8, False, False, False),
            Sample(p, g, m, v, vmax, _steps(), 1e-2, 0.8, 0.99, 0.1, 1e-6, True, True, False),
            Sample(p, g, m, v, vmax, _steps(), 1e-2, 0.9, 0.999, 0.01, 1e-8, True, False, True)]


def _t_rmsprop(lib, p, g, sq, gavg, buf, steps, lr, alpha, eps, wd, momentum, centered, maximize):
    _torch_opt(lib, "rmsprop")(p, g, sq, gavg, buf, steps, foreach=False, maximize=maximize, lr=lr, alpha=alpha,
                               eps=eps, weight_decay=wd, momentum=momentum, centered=centered)
    return tuple(p) + tuple(sq) + tuple(gavg) + tuple(buf) + tuple(steps)


def _rmsprop_samples(dt):
    p, g, sq, gavg, buf = _opt_lists(dt, 3, "rmsprop", positive=(2,))
    # a centered square average must dominate the squared mean gradient
    sq = [T(s.shape, dt, low=1.0, high=2.0, key=("rms-sq", i)) for i, s in enumerate(sq)]
    gavg = [T(s.shape, dt, low=-0.5, high=0.5, key=("rms-g", i)) for i, s in enumerate(gavg)]
    return [Sample(p, g, sq, [], [], _steps(), 1e-2, 0.99, 1e-8, 0.0, 0.0, False, False),
            Sample(p, g, sq, gavg, buf, _steps(), 1e-2, 0.9, 1e-6, 0.1, 0.9, True, True)]


def _t_adagrad(lib, p, g, sums, steps, lr, wd, lr_decay, eps, maximize):
    _torch_opt(lib, "adagrad")(p, g, sums, steps, foreach=False, lr=lr, weight_decay=wd, lr_decay=lr_decay, eps=eps,
                               maximize=maximize)
    return tuple(p) + tuple(sums) + tuple(steps)


def _adagrad_samples(dt):
    p, g, s = _opt_lists(dt, 1, "adagrad", positive=(2,))
    return [Sample(p, g, s, _steps(), 0.1, 0.0, 0.0, 1e-10, False),
            Sample(p, g, s, _steps(), 0.1, 0.1, 0.01, 1e-6, True)]


def _t_adadelta(lib, p, g, sq, acc, steps, lr, rho, eps, wd, maximize):
    _torch_opt(lib, "adadelta")(p, g, sq, acc, steps, foreach=False, lr=lr, rho=rho, eps=eps, weight_decay=wd,
                                maximize=maximize)
    return tuple(p) + tuple(sq) + tuple(acc) + tuple(steps)


def _adadelta_samples(dt):
    p, g, sq, acc = _opt_lists(dt, 2, "adadelta", positive=(2, 3))
    return [Sample(p, g, sq, acc, _steps(), 1.0, 0.9, 1e-6, 0.0, False),
            Sample(p, g, sq, acc, _steps(), 0.5, 0.95, 1e-4, 0.1, True)]


def _t_adamax(lib, p, g, m, u, steps, lr, b1, b2, eps, wd, maximize):
    _torch_opt(lib, "adamax")(p, g, m, u, steps, foreach=False, maximize=maximize, eps=eps, beta1=b1, beta2=b2, lr=lr,
                              weight_decay=wd)
    return tuple(p) + tuple(m) + tuple(u) + tuple(steps)


def _adamax_samples(dt):
    p, g, m, u = _opt_lists(dt, 2, "adamax", positive=(3,))
    return [Sample(p, g, m, u, _steps(), 2e-3, 0.9, 0.999, 1e-8, 0.0, False),
            Sample(p, g, m, u, _steps(), 2e-3, 0.8, 0.99, 1e-6, 0.1, True)]


def _t_nadam(lib, p, g, m, v, mu, steps, lr, b1, b2, wd, eps, psi, decoupled, maximize):
    _torch_opt(lib, "nadam")(p, g, m, v, mu, steps, decoupled_weight_decay=decoupled, foreach=False, maximize=maximize,
                             beta1=b1, beta2=b2, lr=lr, weight_decay=wd, momentum_decay=psi, eps=eps)
    return tuple(p) + tuple(m) + tuple(v) + tuple(mu) + tuple(steps)


def _nadam_samples(dt):
    p, g, m, v = _opt_lists(dt, 2, "nadam", positive=(3,))
    mu = [T((), "float32", data=x) for x in (1.0, 0.5, 0.3)]
    return [Sample(p, g, m, v, mu, _steps(), 2e-3, 0.9, 0.999, 0.0, 1e-8, 4e-3, False, False),
            Sample(p, g, m, v, mu, _steps(), 2e-3, 0.9, 0.99, 0.1, 1e-6, 4e-3, True, True),
            Sample(p, g, m, v, mu, _steps(), 2e-3, 0.8, 0.999, 0.1, 1e-8, 1e-2, False, False)]


def _t_radam(lib, p, g, m, v, steps, lr, b1, b2, wd, eps, decoupled, maximize):
    _torch_opt(lib, "radam")(p, g, m, v, steps, decoupled_weight_decay=decoupled, foreach=False, maximize=maximize,
                             beta1=b1, beta2=b2, lr=lr, weight_decay=wd, eps=eps)
    return tuple(p) + tuple(m) + tuple(v) + tuple(steps)


def _radam_samples(dt):
    p, g, m, v = _opt_lists(dt, 2, "radam", positive=(3,))
    # steps 0, 3 stay below the rectification threshold (rho_t <= 5), 9 is above it
    return [Sample(p, g, m, v, _steps(), 1e-3, 0.9, 0.999, 0.0, 1e-8, False, False),
            Sample(p, g, m, v, _steps(), 1e-3, 0.9, 0.99, 0.1, 1e-6, True, True),
            Sample(p, g, m, v, _steps((10.0, 20.0, 100.0)), 1e-3, 0.8, 0.999, 0.1, 1e-8, False, False)]


for _name, _module, _torch_ref, _samples in (
        ("_fused_sgd_", "sgd", _t_sgd, _sgd_samples), ("_fused_adam_", "adam", _t_adam, _adam_samples),
        ("_fused_rmsprop_", "rmsprop", _t_rmsprop, _rmsprop_samples),
        ("_fused_adagrad_", "adagrad", _t_adagrad, _adagrad_samples),
        ("_fused_adadelta_", "adadelta", _t_adadelta, _adadelta_samples),
        ("_fused_adamax_", "adamax", _t_adamax, _adamax_samples), ("_fused_nadam_", "nadam", _t_nadam, _nadam_samples),
        ("_fused_radam_", "radam", _t_radam, _radam_samples)):
    add(OpInfo(_name, _samples, dtypes=("float32", "float64"), function=_fused_fn(_name, _torch_ref),
               tol={"float32": (1e-5, 1e-6), "float64": (1e-12, 1e-12)}))
