"""Sweep PyTorch's ModuleInfo database (torch.testing._internal.common_modules) against Ember: a bug
finder, not a test. Each module is built in both libraries from the same constructor arguments, Ember's
gets torch's state_dict, and forward outputs, input gradients and parameter gradients are compared,
in training and eval mode.

    PYTHONPATH=python python3 tools/module_sweep.py [--dtypes float64] [--only nn.Conv2d,nn.LSTM]
"""
import argparse
import signal
import sys
import warnings

import numpy as np
import torch
from torch.testing._internal.common_modules import module_db

import ember

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from opinfo_sweep import _Skip, _Timeout, compare, to_ember  # noqa: E402

RANDOM = ("Dropout", "Fractional", "RReLU", "AlphaDropout")


def flat(x, kind):
    if isinstance(x, kind):
        return [x]
    if isinstance(x, (list, tuple)):
        return [y for v in x for y in flat(v, kind)]
    if isinstance(x, dict):
        return [y for v in x.values() for y in flat(v, kind)]
    return []


def run_one(info, mi, dtype, training):
    tcls = info.module_cls
    ecls = getattr(ember.nn, tcls.__name__, None)
    if ecls is None:
        return "no ember class"
    c_args, c_kw = mi.constructor_input.args, mi.constructor_input.kwargs
    if mi.forward_input is None:
        return None
    f_args, f_kw = mi.forward_input.args, mi.forward_input.kwargs
    torch.manual_seed(0)
    tm = tcls(*c_args, **c_kw).to(dtype)
    em = ecls(*to_ember(c_args), **to_ember(c_kw)).to(getattr(ember, str(dtype).split(".")[1]))
    tm.train(training)
    em.train(training)
    ef_args, ef_kw = to_ember(f_args), to_ember(f_kw)
    tf_args = [a.detach().clone().requires_grad_(a.is_floating_point()) if isinstance(a, torch.Tensor) else a
               for a in f_args]
    ef_args = [to_ember(a.detach()).requires_grad_(True) if isinstance(a, torch.Tensor) and a.is_floating_point()
               else e for a, e in zip(f_args, ef_args)]
    lazy = "Lazy" in tcls.__name__
    if lazy:  # materialize both, then copy torch's parameters over
        with torch.no_grad():
            tm(*[a.detach() if isinstance(a, torch.Tensor) else a for a in tf_args], **f_kw)
        with ember.no_grad():
            em(*[a.detach() if isinstance(a, ember.Tensor) else a for a in ef_args], **ef_kw)
    sd = {k: to_ember(v) for k, v in tm.state_dict().items()}
    missing = em.load_state_dict(sd, strict=False)
    if missing.missing_keys or missing.unexpected_keys:
        return f"state_dict keys differ: missing {missing.missing_keys} unexpected {missing.unexpected_keys}"
    t_err = e_err = None
    try:
        t_out = tm(*tf_args, **f_kw)
    except Exception as exc:  # noqa: BLE001
        t_err = exc
    try:
        e_out = em(*ef_args, **ef_kw)
    except Exception as exc:  # noqa: BLE001
        e_err = exc
    if t_err is not None:
        return None if e_err is not None else f"torch raised {type(t_err).__name__}, ember did not"
    if e_err is not None:
        return f"ember raised {type(e_err).__name__}: {str(e_err).splitlines()[0][:160]}"
    d = compare(t_out, e_out, None, 20.0)
    if d:
        return "forward: " + d
    t_outs = [o for o in flat(t_out, torch.Tensor) if o.requires_grad]
    e_outs = [o for o in flat(e_out, ember.Tensor) if o.requires_grad]
    if len(t_outs) != len(e_outs):
        return f"{len(t_outs)} differentiable outputs in torch, {len(e_outs)} in ember"
    if not t_outs:
        return None
    rng = np.random.default_rng(0)
    gs = [rng.standard_normal(tuple(o.shape)) for o in t_outs]
    t_leaves = [a for a in tf_args if isinstance(a, torch.Tensor) and a.requires_grad] + list(tm.parameters())
    e_leaves = [a for a in ef_args if isinstance(a, ember.Tensor) and a.requires_grad] + list(em.parameters())
    tg = torch.autograd.grad(t_outs, t_leaves, [torch.tensor(g, dtype=o.dtype) for g, o in zip(gs, t_outs)],
                             allow_unused=True)
    eg = ember.autograd.grad(e_outs, e_leaves, [ember.tensor(g).to(o.dtype) for g, o in zip(gs, e_outs)],
                             allow_unused=True)
    names = [f"input{i}" for i in range(len(t_leaves) - len(list(tm.parameters())))] + \
        [n for n, _ in tm.named_parameters()]
    for name, a, b in zip(names, tg, eg):
        if a is None and b is None:
            continue
        if a is None or b is None:
            if (a is None and not bool((b == 0).all())) or (b is None and bool((a != 0).any())):
                return f"grad {name}: None in {'torch' if a is None else 'ember'}"
            continue
        d = compare(a, b, None, 50.0)
        if d:
            return f"grad {name}: {d}"
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dtypes", default="float64,float32")
    ap.add_argument("--only", default="")
    ap.add_argument("--timeout", type=int, default=60)
    a = ap.parse_args()
    infos = [m for m in module_db if not a.only or m.name in a.only.split(",")]
    torch.set_num_threads(1)

    def handler(signum, frame):
        raise _Timeout()

    signal.signal(signal.SIGALRM, handler)
    total = ok = 0
    bad = {}
    for info in infos:
        if any(r in info.name for r in RANDOM):
            continue
        for dt in a.dtypes.split(","):
            dtype = getattr(torch, dt)
            for training in (True, False):
                try:
                    inputs = info.module_inputs_func(info, device="cpu", dtype=dtype, requires_grad=False,
                                                     training=training)
                except Exception:  # noqa: BLE001
                    continue
                for i, mi in enumerate(inputs):
                    total += 1
                    signal.alarm(a.timeout)
                    try:
                        with warnings.catch_warnings():
                            warnings.simplefilter("ignore")
                            msg = run_one(info, mi, dtype, training)
                    except _Skip:
                        msg = None
                    except _Timeout:
                        msg = "TIMEOUT"
                    except Exception as exc:  # noqa: BLE001
                        msg = f"harness: {type(exc).__name__}: {str(exc)[:160]}"
                    finally:
                        signal.alarm(0)
                    if msg:
                        bad.setdefault((info.name, dt, training), []).append((i, msg, mi.desc))
                    else:
                        ok += 1
    for (name, dt, tr), lst in sorted(bad.items()):
        i, msg, desc = lst[0]
        print(f"{name} [{dt}{' train' if tr else ' eval'}] {len(lst)} bad: #{i} ({desc}) {msg}")
    print(f"\n{total} module inputs, {ok} ok, {sum(len(v) for v in bad.values())} problems")


if __name__ == "__main__":
    main()
