"""Shared helpers of the torch-namespace tests: run one callable with torch and with ember and compare
results (values, dtypes, shapes), exception types, and gradients."""
import numpy as np

import ember
from cuda_absent import same_absence
from parity import assert_same, get_torch

torch = get_torch()  # skips the importing test module without torch

LIBS = (torch, ember)
RNG = np.random.default_rng(18)


def _run(fn, lib):
    try:
        return "ok", fn(lib)
    except Exception as e:  # noqa: BLE001 - the outcome is what is compared
        return "error", e


def same(fn, **kw):
    """fn(lib) with both libraries: the same result (values, dtypes, shapes) or the same exception type."""
    (tk, tv), (ek, ev) = (_run(fn, lib) for lib in LIBS)
    if tk == "error":
        assert ek == "error", f"torch raised {type(tv).__name__}: {tv}; ember returned {ev!r}"
        if same_absence(ev, tv):
            return None
        assert type(ev).__name__ == type(tv).__name__, f"ember raised {type(ev).__name__}: {ev}; torch {tv!r}"
        return None
    if ek == "error":
        raise ev
    assert_same(_detached(ev), _detached(tv), **kw)
    return ev


def arr(*shape, dtype=np.float64, low=-2.0, high=2.0):
    return RNG.uniform(low, high, shape).astype(dtype)


def lib_tensor(lib, a, requires_grad=False):
    t = lib.tensor(a)
    return t.requires_grad_() if requires_grad else t


def same_grads(fn, *arrays, **kw):
    """fn(lib, *leaves) forward and backward (weighted sum of every output) in both libraries."""
    results = []
    for lib in LIBS:
        leaves = [lib_tensor(lib, a, requires_grad=True) for a in arrays]
        out = fn(lib, *leaves)
        outs = out if isinstance(out, (tuple, list)) else [out]
        total = sum((o * lib.tensor(np.linspace(0.5, 1.5, o.numel()).reshape(tuple(o.shape)), dtype=o.dtype)).sum()
                    for o in outs if o is not None and o.requires_grad)
        total.backward()
        results.append((out, [leaf.grad for leaf in leaves]))
    (tout, tgrads), (eout, egrads) = results
    tout, eout = _detached(tout), _detached(eout)
    assert_same(eout, tout, **kw)
    assert_same(egrads, tgrads, **kw)


def _detached(x):
    if isinstance(x, (tuple, list)):
        return type(x)(_detached(v) for v in x) if not hasattr(x, "_fields") else type(x)(*map(_detached, x))
    return x.detach() if hasattr(x, "detach") else x
