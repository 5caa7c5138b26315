"""Sweep PyTorch's own OpInfo database against Ember: a bug finder, not a test.

For every OpInfo whose name resolves in ember (``ember.add``, ``ember.nn.functional.conv2d``,
``ember.linalg.svd``, ...), every sample input torch generates for a dtype is run through torch and
through Ember, and the results are compared (shape, dtype, values with torch.testing's tolerances,
or both raising).  Prints one line per op with a problem and a summary.

Needs torch (2.13, CPU) and its test extras (``pip install expecttest``).

    PYTHONPATH=python python3 tools/opinfo_sweep.py [--dtypes float32,int64] [--only add,sub] [--grad]
        [--variant function|method|inplace] [--errors] [--reference] [--conj-inputs]
"""
import argparse
import dataclasses
import math
import signal
import sys
import traceback
import types
import warnings

import numpy as np
import torch
from torch.testing._internal.common_methods_invocations import op_db

import ember

# Ops whose results are random or undefined, or that only exist to test the test harness.
SKIP_SUBSTR = ("rand", "normal", "bernoulli", "multinomial", "dropout", "empty", "uniform",
               "exponential", "geometric", "cauchy", "log_normal", "poisson", "_refs", "alpha_dropout")


def resolve(root, name):
    obj = root
    for part in name.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    return obj


def method_variant(op, inplace):
    """Ember's Tensor method for the OpInfo's method (or in-place method) variant, called as f(self, *args)."""
    f = op.inplace_variant if inplace else op.method_variant
    name = getattr(f, "__name__", None)
    if f is None or name is None or name == "<lambda>" or not hasattr(ember.Tensor, name):
        return None
    return lambda x, *a, **k: getattr(x, name)(*a, **k)


def ember_variant(op):
    """Ember's counterpart of op.op: the same name in ember, a Tensor method for dunder ops, or the
    OpInfo's lambda re-bound so that its ``torch`` global means ember."""
    f = op.op
    if isinstance(f, types.FunctionType) and f.__name__ == "<lambda>":
        g = dict(f.__globals__)
        g["torch"] = ember
        return types.FunctionType(f.__code__, g, f.__name__, f.__defaults__, f.__closure__)
    if resolve(torch, op.name) is f:
        return resolve(ember, op.name)
    name = getattr(f, "__name__", "")
    if name.startswith("__") and hasattr(ember.Tensor, name):
        return getattr(ember.Tensor, name)
    return None


CONJ_INPUTS = False  # --conj-inputs


def to_ember(x, as_conj=True):
    if isinstance(x, torch.Tensor):
        if x.layout != torch.strided:
            raise _Skip("layout")
        if x.device.type != "cpu":
            raise _Skip("device")
        t = x.detach()
        if as_conj and t.is_neg():  # torch's negative view: the same in Ember
            e = to_ember(t._neg_view(), True)._neg_view()
            if x.requires_grad:
                e.requires_grad_(True)
            return e
        if as_conj and (t.is_conj() or (CONJ_INPUTS and t.is_complex())):
            # torch's conjugate view (or, with --conj-inputs, any complex input) as an Ember conjugate view
            # of the same values: the conjugates stored, the bit set
            e = to_ember(t.conj() if t.is_conj() else t.conj_physical(), False).conj()
            if x.requires_grad:
                e.requires_grad_(True)
            return e
        dt = str(t.dtype).split(".")[1]
        if dt == "bfloat16":
            e = ember.tensor(t.float().contiguous().numpy()).to(ember.bfloat16)
        elif dt in ("float8_e4m3fn", "float8_e5m2", "uint16", "uint32", "uint64", "complex32"):
            raise _Skip(dt)
        else:
            e = ember.tensor(t.contiguous().numpy())
        if not t.is_contiguous() and t.numel() > 1 and all(s >= 0 for s in t.stride()):
            # the same strides over a copy of the memory they span (overlapping/expanded ones included)
            extent = 1 + sum((n - 1) * s for n, s in zip(t.shape, t.stride()))
            span = torch.as_strided(t, (extent,), (1,), t.storage_offset())
            e = to_ember(span, as_conj).as_strided(tuple(t.shape), tuple(t.stride()))
        if x.requires_grad:
            e.requires_grad_(True)
        return e
    if isinstance(x, torch.dtype):
        return getattr(ember, str(x).split(".")[1])
    if isinstance(x, torch.device):
        return ember.device(str(x))
    if isinstance(x, torch.memory_format):
        return getattr(ember, str(x).split(".")[1])
    if isinstance(x, torch.Size):
        return tuple(x)
    if isinstance(x, (list, tuple)):
        conv = [to_ember(v) for v in x]
        return type(x)(conv) if not hasattr(x, "_fields") else type(x)(*conv)
    if isinstance(x, dict):
        return {k: to_ember(v) for k, v in x.items()}
    if isinstance(x, torch.Generator) or callable(x) and not isinstance(x, type):
        raise _Skip("callable/generator arg")
    if dataclasses.is_dataclass(x) and not isinstance(x, type):
        # an options object (LinearCrossEntropyOptions): Ember's class of the same name, fields converted
        twin = resolve(ember.nn, type(x).__name__) or resolve(ember.nn.functional, type(x).__name__)
        if twin is None:
            raise _Skip(f"options object {type(x).__name__}")
        return twin(**{f.name: to_ember(getattr(x, f.name)) for f in dataclasses.fields(x)})
    return x


class _Skip(Exception):
    pass


class _Timeout(Exception):
    pass


def to_numpy(x):
    if isinstance(x, torch.Tensor):
        x = x.detach()
        if x.layout != torch.strided:
            x = x.to_dense()
        return (str(x.dtype).split(".")[1], tuple(x.shape),
                x.float().numpy() if x.dtype == torch.bfloat16 else x.resolve_conj().resolve_neg().numpy())
    if isinstance(x, ember.Tensor):
        x = x.detach()
        if getattr(x, "is_sparse", False):
            x = x.to_dense()
        dt = str(x.dtype).split(".")[1]
        return (dt, tuple(x.shape),
                x.float().numpy() if dt == "bfloat16" else x.resolve_conj().resolve_neg().numpy())
    return None


TOL = {"float16": (1e-3, 1e-5), "bfloat16": (1.6e-2, 1e-5), "float32": (1.3e-6, 1e-5),
       "float64": (1e-7, 1e-7), "complex64": (1.3e-6, 1e-5), "complex128": (1e-7, 1e-7)}


def compare(t_out, e_out, op, rtol_scale):
    """None when equal, else a short description."""
    if isinstance(t_out, (list, tuple)):
        if not isinstance(e_out, (list, tuple)) or len(t_out) != len(e_out):
            return f"structure: torch {type(t_out).__name__}[{len(t_out)}] vs ember {type(e_out).__name__}"
        for i, (a, b) in enumerate(zip(t_out, e_out)):
            d = compare(a, b, op, rtol_scale)
            if d:
                return f"[{i}] {d}"
        return None
    if isinstance(t_out, torch.Tensor):
        if not isinstance(e_out, ember.Tensor):
            return f"type: ember returned {type(e_out).__name__}"
        tdt, tsh, tv = to_numpy(t_out)
        edt, esh, ev = to_numpy(e_out)
        if tdt != edt:
            return f"dtype: torch {tdt} vs ember {edt}"
        if tsh != esh:
            return f"shape: torch {tsh} vs ember {esh}"
        if tv.size == 0:
            return None
        if tdt in TOL:
            rtol, atol = TOL[tdt]
            rtol *= rtol_scale
            atol *= rtol_scale
            ok = np.isclose(ev, tv, rtol=rtol, atol=atol, equal_nan=True)
            if not ok.all():
                idx = np.argwhere(~ok)[0]
                return (f"values ({int((~ok).sum())}/{ok.size} differ; at {tuple(idx)} "
                        f"torch {tv[tuple(idx)]!r} ember {ev[tuple(idx)]!r})")
        else:
            if not np.array_equal(ev, tv):
                ok = ev == tv
                idx = np.argwhere(~ok)[0] if ok.ndim else ()
                return f"values (exact; at {tuple(idx)} torch {tv[tuple(idx)]!r} ember {ev[tuple(idx)]!r})"
        return None
    if isinstance(t_out, (bool, int, float, complex)):
        if isinstance(e_out, ember.Tensor):
            return f"type: torch {type(t_out).__name__} vs ember Tensor"
        if isinstance(t_out, float) and math.isnan(t_out) and isinstance(e_out, float) and math.isnan(e_out):
            return None
        if t_out != e_out and not (isinstance(t_out, float) and math.isclose(t_out, e_out, rel_tol=1e-5)):
            return f"scalar: torch {t_out!r} vs ember {e_out!r}"
        return None
    if isinstance(t_out, (torch.dtype,)):
        return None if str(t_out).split(".")[1] == str(e_out).split(".")[1] else f"dtype obj {t_out} vs {e_out}"
    return None


def sweep(ops, dtypes, grad, timeout, verbose, variant="function", reference=False):
    problems = {}
    counts = {"ops": 0, "samples": 0, "ok": 0, "skipped_ops": []}

    def handler(signum, frame):
        raise _Timeout()

    signal.signal(signal.SIGALRM, handler)
    for op in ops:
        full = op.name + (("." + op.variant_test_name) if op.variant_test_name else "")
        if any(s in op.name for s in SKIP_SUBSTR):
            continue
        if variant == "function":
            efn, tfn = ember_variant(op), op.op
        else:
            efn = method_variant(op, variant == "inplace")
            tf = op.inplace_variant if variant == "inplace" else op.method_variant
            tfn = (lambda f: (lambda x, *a, **k: f(x, *a, **k)))(tf) if tf is not None else None
        if efn is None:
            counts["skipped_ops"].append(op.name)
            continue
        counts["ops"] += 1
        for dt in dtypes:
            tdt = getattr(torch, dt)
            if tdt not in op.supported_dtypes("cpu"):
                continue
            try:
                gen = op.reference_inputs if reference else op.sample_inputs
                samples = list(gen("cpu", tdt, requires_grad=grad and tdt.is_floating_point))
            except Exception as exc:  # noqa: BLE001
                continue
            for si, s in enumerate(samples):
                counts["samples"] += 1
                signal.alarm(timeout)
                try:
                    t_in = s.input
                    t_args, t_kwargs = s.args, s.kwargs
                    try:
                        e_in = to_ember(t_in)
                        e_args = to_ember(t_args)
                        e_kwargs = to_ember(t_kwargs)
                    except _Skip:
                        continue
                    t_err = e_err = None
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        try:
                            t_out = tfn(t_in.clone() if variant == "inplace" and isinstance(t_in, torch.Tensor)
                                        else t_in, *t_args, **t_kwargs)
                        except Exception as exc:  # noqa: BLE001
                            t_err = exc
                        try:
                            e_out = efn(e_in.clone() if variant == "inplace" and isinstance(e_in, ember.Tensor)
                                        else e_in, *e_args, **e_kwargs)
                        except _Timeout:
                            raise
                        except Exception as exc:  # noqa: BLE001
                            e_err = exc
                    if t_err is not None:
                        continue  # torch refuses: error-kind parity is tested elsewhere
                    if e_err is not None:
                        msg = f"ember raised {type(e_err).__name__}: {str(e_err).splitlines()[0][:160]}"
                    else:
                        if grad and tdt.is_floating_point:
                            msg = grad_compare(t_in, t_args, t_out, e_in, e_args, e_out)
                        else:
                            msg = compare(t_out, e_out, op, 10.0 if dt in ("float16", "bfloat16") else 4.0)
                    if msg:
                        problems.setdefault((full, dt), []).append((si, msg, describe(s)))
                    else:
                        counts["ok"] += 1
                except _Timeout:
                    problems.setdefault((full, dt), []).append((si, "TIMEOUT", describe(s)))
                except Exception as exc:  # noqa: BLE001
                    problems.setdefault((full, dt), []).append((si, f"harness: {exc!r}"[:200], describe(s)))
                finally:
                    signal.alarm(0)
        if verbose:
            print("done", full, file=sys.stderr, flush=True)
    return problems, counts


def sweep_errors(ops):
    """op.error_inputs: torch documents each bad input with the exception type it raises; Ember must raise
    the same type (a subclass counts, as pytest.raises would)."""
    problems, total, ok = {}, 0, 0
    for op in ops:
        efn = ember_variant(op)
        if efn is None or any(s in op.name for s in SKIP_SUBSTR):
            continue
        try:
            errs = list(op.error_inputs("cpu"))
        except Exception:  # noqa: BLE001
            continue
        for i, ei in enumerate(errs):
            s = ei.sample_input
            try:
                args = (to_ember(s.input), *to_ember(s.args))
                kwargs = to_ember(s.kwargs)
            except (_Skip, RuntimeError, TypeError, ValueError):
                continue
            total += 1
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    efn(*args, **kwargs)
            except Exception as exc:  # noqa: BLE001
                if isinstance(exc, ei.error_type):
                    ok += 1
                else:
                    problems.setdefault(op.name, []).append(
                        f"#{i} ember {type(exc).__name__} ({str(exc)[:80]}) where torch raises "
                        f"{ei.error_type.__name__} ({ei.error_regex[:60]})")
                continue
            problems.setdefault(op.name, []).append(f"#{i} ember did not raise; torch raises "
                                                    f"{ei.error_type.__name__} ({ei.error_regex[:80]}) :: {describe(s)}")
    for name, lst in sorted(problems.items()):
        print(f"{name}: {len(lst)} bad: {lst[0]}")
    print(f"\n{total} error inputs, {ok} raise torch's exception type")


def grad_compare(t_in, t_args, t_out, e_in, e_args, e_out):
    def flat(x, kind):
        if isinstance(x, kind):
            return [x]
        if isinstance(x, (list, tuple)):
            return [y for v in x for y in flat(v, kind)]
        return []
    t_outs = [o for o in flat(t_out, torch.Tensor) if o.requires_grad and o.dtype.is_floating_point]
    e_outs = [o for o in flat(e_out, ember.Tensor) if o.requires_grad]
    if not t_outs:
        return None
    if len(e_outs) != len(t_outs):
        return f"grad: {len(t_outs)} differentiable outputs in torch, {len(e_outs)} in ember"
    t_leaves = [x for x in flat([t_in, t_args], torch.Tensor) if x.requires_grad]
    e_leaves = [x for x in flat([e_in, e_args], ember.Tensor) if x.requires_grad]
    rng = np.random.default_rng(0)
    gs = [rng.standard_normal(tuple(o.shape)).astype(np.float64) for o in t_outs]
    try:
        tg = torch.autograd.grad(t_outs, t_leaves, [torch.tensor(g, dtype=o.dtype) for g, o in zip(gs, t_outs)],
                                 allow_unused=True)
    except Exception:  # noqa: BLE001
        return None
    try:
        eg = ember.autograd.grad(e_outs, e_leaves,
                                 [ember.tensor(g).to(o.dtype) for g, o in zip(gs, e_outs)], allow_unused=True)
    except Exception as exc:  # noqa: BLE001
        return f"grad: ember raised {type(exc).__name__}: {str(exc).splitlines()[0][:160]}"
    for i, (a, b) in enumerate(zip(tg, eg)):
        if a is None and b is None:
            continue
        if a is None:
            a = torch.zeros(())
        if b is None:
            b = ember.zeros(())
        d = compare(a, b, None, 20.0)
        if d and "shape" not in d:
            return f"grad[{i}]: {d}"
    return None


def describe(s):
    def d(x):
        if isinstance(x, torch.Tensor):
            nc = "" if x.is_contiguous() else " nc"
            return f"T{tuple(x.shape)}{nc}"
        if isinstance(x, (list, tuple)):
            return "[" + ",".join(d(v) for v in x) + "]"
        return repr(x)[:40]
    return f"in={d(s.input)} args={d(list(s.args))} kw={ {k: d(v) for k, v in s.kwargs.items()} }"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dtypes", default="float32,float64,int64,bool")
    ap.add_argument("--only", default="")
    ap.add_argument("--start", default="")
    ap.add_argument("--grad", action="store_true")
    ap.add_argument("--timeout", type=int, default=20)
    ap.add_argument("-v", action="store_true")
    ap.add_argument("--errors", action="store_true", help="check op.error_inputs' exception types instead")
    ap.add_argument("--reference", action="store_true", help="op.reference_inputs (more, larger samples)")
    ap.add_argument("--variant", default="function", choices=("function", "method", "inplace"))
    ap.add_argument("--conj-inputs", action="store_true",
                    help="hand Ember every complex tensor as a conjugate view of the same values")
    a = ap.parse_args()
    global CONJ_INPUTS
    CONJ_INPUTS = a.conj_inputs
    ops = op_db
    if a.only:
        names = set(a.only.split(","))
        ops = [o for o in ops if o.name in names]
    if a.start:
        ops = [o for o in ops if o.name >= a.start]
    torch.set_num_threads(1)
    if a.errors:
        return sweep_errors(ops)
    problems, counts = sweep(ops, a.dtypes.split(","), a.grad, a.timeout, a.v, a.variant, a.reference)
    for (name, dt), lst in sorted(problems.items()):
        si, msg, desc = lst[0]
        print(f"{name} [{dt}] {len(lst)} bad: #{si} {msg} :: {desc}")
    print(f"\n{counts['ops']} ops, {counts['samples']} samples, {counts['ok']} ok, "
          f"{sum(len(v) for v in problems.values())} problems in {len(problems)} (op, dtype) pairs")
    print("not in ember:", " ".join(sorted(set(counts["skipped_ops"]))))


if __name__ == "__main__":
    main()
