"""Every op of ops.yaml x every dtype against torch (function, method, in-place and out= variants,
aliases, error inputs), driven by opdb.OPS; plus the ops.yaml completeness check."""
import inspect

import pytest

import ember
from opdb import OPS, OPS_BY_NAME, YAML_OPS
from parity import Sample, T, TensorSpec, check, get_torch, lib_dtype


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
            module = ember._C._ops if n.startswith("_") else ember
            if e.get("python_module"):  # functions PyTorch keeps in torch._C._nn / torch._C._special
                module = getattr(ember._C, "_" + e["python_module"])
            if "function" in variants and not hasattr(module, n):
                missing.append(f"{module.__name__}.{n}")
            if "function" in variants and e.get("inplace_function") and not hasattr(module, n + "_"):
                missing.append(f"{module.__name__}.{n}_")
            if "method" in variants:
                if not hasattr(x, n):
                    missing.append(f"Tensor.{n}")
                if e.get("inplace") and not hasattr(x, n + "_"):
                    missing.append(f"Tensor.{n}_")
    assert not missing, missing


def test_generated_bindings_have_docstrings():
    """help() shows each generated function's and method's one-line description (ops.yaml's doc:), its
    signatures (one line per overload) and where it comes from."""
    x = ember.zeros(2)
    bad = []
    for name, e in YAML_OPS.items():
        py = e.get("python", name.split(".")[0])
        variants = e.get("variants", ["function", "method"])
        module = getattr(ember._C, "_" + e["python_module"]) if e.get("python_module") else ember._C._ops
        objs = []
        if "function" in variants:
            objs.append(getattr(module, py))
        if "method" in variants and e["func"].split("(")[1].startswith("Tensor self") and hasattr(x, py):
            objs.append(getattr(type(x), py))
        for obj in objs:
            if inspect.isfunction(obj):  # a Python-level wrapper over the op (Tensor.nonzero's as_tuple=)
                continue
            doc = obj.__doc__ or ""
            lines = doc.splitlines()
            # the one-line description (ops.yaml's doc:), a blank line, then the signatures
            if not (len(lines) > 2 and lines[0].strip() == e["doc"] and not lines[1]
                    and lines[2].startswith(py + "(") and " -> " in lines[2] and "declared in ops.yaml" in doc):
                bad.append(f"{py}: {doc[:60]!r}")
    assert not bad, bad


def test_numpy_style_keyword_aliases(torch):
    """PyTorch also accepts axis=, keepdims=, x=/a=/x1= and x2= for dim, keepdim, input, other."""
    x = T((2, 3), "float32")
    for fn in [lambda lib, t: lib.sum(t, axis=0), lambda lib, t: t.sum(axis=1, keepdims=True),
               lambda lib, t: lib.mean(t, axis=(0, 1)), lambda lib, t: lib.amax(t, axis=0),
               lambda lib, t: lib.max(t, axis=0), lambda lib, t: lib.cumsum(t, axis=1),
               lambda lib, t: lib.argmax(t, axis=1), lambda lib, t: lib.var(t, axis=0),
               lambda lib, t: lib.add(x=t, other=t), lambda lib, t: lib.add(t, x2=t), lambda lib, t: lib.sum(a=t),
               lambda lib, t: lib.squeeze(t, axis=0), lambda lib, t: lib.mul(x1=t, x2=2)]:
        check(fn, Sample(x))
    check(lambda lib, t: lib.flip(t, axis=0), Sample(x), expect_error=True)  # dims, not dim


REDUCTIONS = {
    "sum": lambda lib, x, **k: lib.sum(x, **k), "mean": lambda lib, x, **k: lib.mean(x, **k),
    "prod": lambda lib, x, **k: lib.prod(x, **k), "cumsum": lambda lib, x, **k: lib.cumsum(x, **k),
    "cumprod": lambda lib, x, **k: lib.cumprod(x, **k), "amax": lambda lib, x, **k: lib.amax(x, **k),
    "std": lambda lib, x, **k: lib.std(x, **k), "logsumexp": lambda lib, x, **k: lib.logsumexp(x, **k),
    "all": lambda lib, x, **k: lib.all(x, **k), "count_nonzero": lambda lib, x, **k: lib.count_nonzero(x, **k),
    "argmin": lambda lib, x, **k: lib.argmin(x, **k), "var_mean": lambda lib, x, **k: lib.var_mean(x, **k),
    "max": lambda lib, x, **k: lib.max(x, **k), "norm": lambda lib, x, **k: lib.norm(x, 2, **k),
}


@pytest.mark.parametrize("seed", range(6))
def test_reductions_on_random_configurations(seed, torch):
    """Random shapes (0-4 dims, sizes 1-5), layouts, dims, keepdim and dtype= for the reductions."""
    import random

    from parity import ALL_DTYPES, DType
    rng = random.Random(seed)
    for i in range(120):
        name = rng.choice(sorted(REDUCTIONS))
        d = rng.choice(ALL_DTYPES)
        nd = rng.randint(0, 4)
        shape = tuple(rng.choice([1, 2, 3, 5]) for _ in range(nd))
        layout = rng.choice([None, "T" if nd >= 2 else None, "step" if nd else None, "expand" if nd else None,
                             "permute" if nd == 3 else None])
        k = {}
        if name in ("cumsum", "cumprod"):
            k["dim"] = rng.randint(-nd, nd - 1) if nd else 0
        elif name in ("argmin", "max", "prod"):
            if nd and rng.random() < 0.7:
                k["dim"], k["keepdim"] = rng.randint(-nd, nd - 1), rng.random() < 0.5
        elif name == "logsumexp":
            k["dim"] = tuple(sorted(rng.sample(range(nd), rng.randint(1, nd)))) if nd else 0
            k["keepdim"] = rng.random() < 0.5
        elif nd and rng.random() < 0.7:
            k["dim"] = tuple(sorted(rng.sample(range(nd), rng.randint(1, min(nd, 2 if name == "norm" else nd)))))
            if name != "count_nonzero":
                k["keepdim"] = rng.random() < 0.5
        if name in ("sum", "mean", "prod", "cumsum", "cumprod") and rng.random() < 0.4:
            k["dtype"] = DType(rng.choice(ALL_DTYPES))
        s = Sample(T(shape, d, layout=layout, key=(seed, i), low=-2, high=2), **k)
        check(REDUCTIONS[name], s, label=name)
