"""Every op of ops.yaml x every dtype against torch (function, method, in-place and out= variants,
aliases, error inputs), driven by opdb.OPS; plus the ops.yaml completeness check."""
import pytest

import ember
from opdb import OPS, OPS_BY_NAME, YAML_OPS
from parity import TensorSpec, check, get_torch, lib_dtype


@pytest.fixture
def torch():
    return get_torch()


def test_every_ops_yaml_op_has_an_opdb_entry():
    missing = [name for name in YAML_OPS if name not in OPS_BY_NAME]
    assert not missing, f"ops.yaml ops without an OpInfo in tests/python/opdb.py: {missing}"
    assert len(OPS) == len(OPS_BY_NAME), "duplicate OpInfo entries"


def _out_variant(fn, out_dtype=None, layout=None):
    """fn called with out=: the out tensor is allocated empty (or transposed, of the right shape)."""
    def f(lib, *a, **k):
        r = fn(lib, *a, **k)
        dt = r.dtype if out_dtype is None else lib_dtype(lib, out_dtype)
        if layout == "T" and r.dim() == 2:
            o = lib.empty(r.shape[1], r.shape[0], dtype=dt).t()
        else:
            o = lib.empty(0, dtype=dt)
        ret = fn(lib, *a, out=o, **k)
        assert ret is o, "a function called with out= must return the out tensor"
        return o
    return f


def _first_is_tensor(sample):
    return bool(sample.args) and isinstance(sample.args[0], TensorSpec)


def run_op(op, dtype):
    rtol, atol = op.tolerance(dtype)
    kw = dict(rtol=rtol, atol=atol, values=op.values)
    for i, s in enumerate(op.samples(dtype)):
        if op.function:
            check(op.function, s, label="function", **kw)
        if op.method and _first_is_tensor(s):
            check(op.method, s, same_object=0 if op.self_inplace else None, label="method", **kw)
        if op.inplace and _first_is_tensor(s):
            check(op.inplace, s, same_object=0, label="inplace", **kw)
        if op.out and op.function and i < 10 and op.out_filter(s, dtype):
            check(_out_variant(op.function), s, label="out=", **kw)
            if i < 4:
                check(_out_variant(op.function, layout="T"), s, label="out=(transposed)", **kw)
                for od in op.out_dtypes or ("float64", "bool"):
                    check(_out_variant(op.function, od), s, label=f"out=({od})", **kw)


CASES = [(op, dt) for op in OPS for dt in op.dtypes]


@pytest.mark.parametrize("op,dtype", CASES, ids=[f"{op.name}-{dt}" for op, dt in CASES])
def test_op(op, dtype, torch):
    run_op(op, dtype)


ERROR_OPS = [op for op in OPS if op.errors()]


@pytest.mark.parametrize("op", ERROR_OPS, ids=[op.name for op in ERROR_OPS])
def test_op_errors(op, torch):
    for s in op.errors():
        if op.function:
            check(op.function, s, expect_error=True, label="function")
        if op.method and _first_is_tensor(s):
            check(op.method, s, expect_error=True, label="method")
        if op.inplace and _first_is_tensor(s):
            # the in-place form may accept what the function rejects: compare, do not demand an error
            check(op.inplace, s, label="inplace")


ALIAS_OPS = [(op, a) for op in OPS for a in op.aliases]


@pytest.mark.parametrize("op,alias", ALIAS_OPS, ids=[f"{op.name}-{a}" for op, a in ALIAS_OPS])
def test_alias(op, alias, torch):
    variants = op.entry.get("variants", ["function", "method"])
    for dtype in ("float32", "int64"):
        for s in op.samples(dtype)[:op.alias_samples]:
            if "function" in variants:
                check(lambda lib, *a, **k: getattr(lib, alias)(*a, **k), s)
            if "method" in variants and _first_is_tensor(s):
                check(lambda lib, x, *a, **k: getattr(x, alias)(*a, **k), s)
                if op.entry.get("inplace"):
                    check(lambda lib, x, *a, **k: getattr(x, alias + "_")(*a, **k), s, same_object=0)


def test_declared_variants_exist():
    """Each variant ops.yaml declares is reachable under its Python name (private `_names` in ember._C._ops)."""
    x = ember.zeros(2)
    missing = []
    for name, e in YAML_OPS.items():
        py = e.get("python", name.split(".")[0])
        variants = e.get("variants", ["function", "method"])
        names = [py] + e.get("aliases", [])
        for n in names:
            if "function" in variants and not hasattr(ember._C._ops if n.startswith("_") else ember, n):
                missing.append(f"ember.{n}")
            if "method" in variants:
                if not hasattr(x, n):
                    missing.append(f"Tensor.{n}")
                if e.get("inplace") and not hasattr(x, n + "_"):
                    missing.append(f"Tensor.{n}_")
    assert not missing, missing
