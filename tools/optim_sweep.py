"""Sweep PyTorch's OptimizerInfo database (torch.testing._internal.common_optimizers) against Ember: a
bug finder, not a test. For every optimizer configuration torch lists, the same parameters get the same
gradients for a few steps (with an lr scheduler where torch's config has none), and the parameters and
the state_dict's state are compared.

    PYTHONPATH=python python3 tools/optim_sweep.py [--only Adam,SGD] [--steps 5]
"""
import argparse
import warnings

import numpy as np
import torch
from torch.testing._internal.common_optimizers import optim_db

import ember


def to_ember_kw(kw):
    out = {}
    for k, v in kw.items():
        if isinstance(v, torch.Tensor):
            v = ember.tensor(v.detach().numpy())
        elif isinstance(v, tuple):
            v = tuple(ember.tensor(x.detach().numpy()) if isinstance(x, torch.Tensor) else x for x in v)
        out[k] = v
    return out


def run(info, oi, steps, dtype="float64"):
    name = info.optim_cls.__name__
    ecls = getattr(ember.optim, name, None)
    if ecls is None:
        return "no ember class"
    kw = dict(oi.kwargs)
    if kw.get("differentiable") or kw.get("capturable"):  # torch-only modes (graph capture, autograd through step)
        kw = {k: v for k, v in kw.items() if k not in ("differentiable", "capturable")}
    rng = np.random.default_rng(0)
    shapes = [(4, 3), (3,), (2, 2, 2)]
    init = [rng.standard_normal(s) for s in shapes]
    grads = [[rng.standard_normal(s) for s in shapes] for _ in range(steps)]
    results = []
    for lib, k in ((torch, kw), (ember, to_ember_kw(kw))):
        params = [lib.tensor(v, dtype=getattr(lib, dtype), requires_grad=True) for v in init]
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                opt = (info.optim_cls if lib is torch else ecls)(params, **k)
                for st in range(steps):
                    def closure():
                        opt.zero_grad()
                        for p, g in zip(params, grads[st]):
                            p.grad = lib.tensor(g, dtype=getattr(lib, dtype))
                        return lib.tensor(float(sum((x ** 2).sum() for x in grads[st])))
                    for p, g in zip(params, grads[st]):
                        p.grad = lib.tensor(g, dtype=getattr(lib, dtype))
                    opt.step(closure) if name == "LBFGS" else opt.step()
        except Exception as exc:  # noqa: BLE001
            results.append(exc)
            continue
        results.append([p.detach().numpy().copy() for p in params])
    t, e = results
    if isinstance(t, Exception):
        return None if isinstance(e, Exception) else f"torch raised {type(t).__name__}: {str(t)[:100]}, ember did not"
    if isinstance(e, Exception):
        return f"ember raised {type(e).__name__}: {str(e)[:160]}"
    for i, (a, b) in enumerate(zip(t, e)):
        if not np.allclose(a, b, rtol=1e-7, atol=1e-9, equal_nan=True):
            j = np.unravel_index(np.argmax(np.abs(a - b)), a.shape)
            return f"param {i} differs after {steps} steps: at {j} torch {a[j]!r} ember {b[j]!r}"
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", default="")
    ap.add_argument("--steps", type=int, default=5)
    a = ap.parse_args()
    total = ok = 0
    for info in optim_db:
        if a.only and info.name not in a.only.split(","):
            continue
        if info.name == "SparseAdam":
            continue
        for oi in info.optim_inputs_func(device="cpu", dtype=torch.float64):
            total += 1
            msg = run(info, oi, a.steps)
            if msg:
                print(f"{info.name} ({oi.desc}) {oi.kwargs}: {msg}"[:400])
            else:
                ok += 1
    print(f"\n{total} optimizer configurations, {ok} ok")


if __name__ == "__main__":
    main()
