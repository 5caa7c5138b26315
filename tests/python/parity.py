"""Parity helper: run the same callable against Ember and PyTorch and compare the results.

In the spirit of tinygrad's `helper_test_op` and PyTorch's OpInfo: a test writes the op once as
`fn(lib, *tensors, **kw)` (so one lambda runs with lib=ember and lib=torch), describes its inputs
as `Sample`s built from `TensorSpec`s (NumPy data generated once and materialised in both
libraries), and `check(fn, sample)` compares

  * values: allclose with dtype-appropriate tolerances, NaN == NaN, infinities exact;
    integers and bools exactly,
  * dtypes (ember.float32 <-> torch.float32 by name) and shapes,
  * the inputs after the call (in-place ops), and whether a result *is* an input (self-returning ops),
  * errors: when torch raises, Ember must raise the same kind of exception
    (NotImplementedError / IndexError / TypeError / ValueError / RuntimeError).

Torch is imported lazily (`get_torch()` skips the test when it is absent), so Ember-only tests can
import this module freely.
"""
import itertools
import math
import zlib

import numpy as np
import pytest

import ember

# ---------------------------------------------------------------- dtypes
FLOATS = ("float32", "float64", "float16", "bfloat16")
SIGNED_INTS = ("int8", "int16", "int32", "int64")
INTS = SIGNED_INTS + ("uint8",)
INTEGRAL = INTS + ("bool",)
ALL_DTYPES = FLOATS + INTEGRAL
REDUCED = ("float16", "bfloat16")

# (rtol, atol) per dtype: torch.testing's defaults (float16 rtol is 1 ulp near 1.0).
TOLERANCES = {
    "float16": (1e-3, 1e-5),
    "bfloat16": (1.6e-2, 1e-5),
    "float32": (1.3e-6, 1e-5),
    "float64": (1e-7, 1e-7),
}

_torch = None


def get_torch():
    """torch, or skip the calling test when it is not installed."""
    global _torch
    if _torch is None:
        _torch = pytest.importorskip("torch")
    return _torch


def has_torch():
    try:
        get_torch()
        return True
    except pytest.skip.Exception:
        return False


def dtype_name(d):
    """'float32' for ember.float32 and torch.float32 alike."""
    return str(d).split(".")[-1]


def lib_dtype(lib, name):
    return getattr(lib, name)


def is_torch(lib):
    return lib is not ember


# ---------------------------------------------------------------- deterministic data
def _rng(*key):
    return np.random.default_rng(zlib.crc32(repr(key).encode()))


def _round_bf16(a):
    """Round float64 values to the nearest bfloat16 (ties to even), returned as float64."""
    f = np.asarray(a, dtype=np.float32)
    u = f.view(np.uint32).astype(np.uint64)
    nan = np.isnan(f)
    u = (u + 0x7FFF + ((u >> 16) & 1)) & 0xFFFF0000
    r = np.asarray(np.asarray(u, dtype=np.uint32).view(np.float32), dtype=np.float64)
    return np.where(nan, np.nan, r)


def quantize(a, dtype):
    """Make float data exactly representable in `dtype`, so both libraries start from identical values."""
    a = np.asarray(a, dtype=np.float64)
    if dtype == "float16":
        with np.errstate(over="ignore"):
            return a.astype(np.float16).astype(np.float64)
    if dtype == "bfloat16":
        return _round_bf16(a)
    if dtype == "float32":
        with np.errstate(over="ignore"):
            return a.astype(np.float32).astype(np.float64)
    return a


SPECIAL_FLOATS = [float("nan"), float("inf"), float("-inf"), 0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, 2.5, -2.5,
                  3.75, -7.25, 1e-3, 100.0, -100.0]


def random_array(shape, dtype, low=None, high=None, key=(), special=False, nonzero=False):
    """NumPy data for a tensor of `dtype`: float64 for float dtypes (already quantized), int64, or bool."""
    rng = _rng(tuple(shape), dtype, low, high, key)
    n = int(np.prod(shape)) if len(shape) else 1
    if dtype == "bool":
        return np.asarray(rng.integers(0, 2, size=shape)).astype(bool)
    if dtype in INTS:
        lo = -9 if low is None else low
        hi = 9 if high is None else high
        if dtype == "uint8":
            lo, hi = max(lo, 0), max(hi, 1)
        a = np.asarray(rng.integers(int(lo), int(hi) + 1, size=shape), dtype=np.int64)
        if nonzero:
            a[a == 0] = 1
        return a
    lo = -5.0 if low is None else low
    hi = 5.0 if high is None else high
    a = np.asarray(rng.uniform(lo, hi, size=shape), dtype=np.float64)
    if special and n:
        flat = a.reshape(-1)
        sp = np.array(SPECIAL_FLOATS)
        k = min(len(sp), flat.size)
        flat[:k] = sp[:k]
    if nonzero:
        a[a == 0] = 1.0
    return quantize(a, dtype)


# ---------------------------------------------------------------- layouts
def _layout_base(shape, layout):
    """(shape of the storage tensor, transform applied to it) for a layout name."""
    shape = tuple(shape)
    if layout in (None, "contig"):
        return shape, None
    if layout == "T":  # transposed: strides reversed in the last two dims
        assert len(shape) >= 2
        return shape[:-2] + (shape[-1], shape[-2]), lambda t: t.transpose(-2, -1)
    if layout == "step":  # every other element of the last dim (a slice with step 2)
        assert len(shape) >= 1
        return shape[:-1] + (2 * shape[-1],), lambda t: t[..., ::2]
    if layout == "offset":  # a slice that starts past the storage's beginning
        assert len(shape) >= 1
        return (shape[0] + 2,) + shape[1:], lambda t: t[2:]
    if layout == "expand":  # stride 0 in the first dim
        assert len(shape) >= 1
        return (1,) + shape[1:], lambda t: t.expand(*shape)
    if layout == "permute":  # a 3-d tensor whose dims were rotated
        assert len(shape) == 3
        return (shape[2], shape[0], shape[1]), lambda t: t.permute(1, 2, 0)
    raise ValueError(layout)


class TensorSpec:
    """A tensor described once and materialised identically in both libraries."""

    def __init__(self, shape, dtype, low=None, high=None, layout=None, data=None, special=False, nonzero=False,
                 key=()):
        self.shape, self.dtype, self.layout = tuple(shape), dtype, layout
        base_shape, self.transform = _layout_base(self.shape, layout)
        if data is not None:
            d = np.asarray(data)
            if dtype in FLOATS:
                d = quantize(d.astype(np.float64), dtype)
            elif dtype == "bool":
                d = d.astype(bool)
            else:
                d = d.astype(np.int64)
            assert d.shape == base_shape, (d.shape, base_shape)
            self.data = d
        else:
            self.data = random_array(base_shape, dtype, low, high, key=(key, layout), special=special,
                                     nonzero=nonzero)

    def make(self, lib):
        a = np.array(self.data, order="C", copy=True)  # (np.ascontiguousarray makes 0-d arrays 1-d)
        if is_torch(lib):
            t = lib.from_numpy(a).to(lib_dtype(lib, self.dtype))
        else:
            t = ember.from_numpy(a.copy()).to(lib_dtype(ember, self.dtype))
        if self.transform is not None:
            t = self.transform(t)
        return t

    def __repr__(self):
        lay = "" if self.layout in (None, "contig") else f", {self.layout}"
        return f"T{self.shape}:{self.dtype}{lay}"


def T(shape, dtype, **kw):
    return TensorSpec(shape, dtype, **kw)


class DType:
    """A dtype argument: becomes lib.<name>."""

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return self.name


class Sample:
    """Positional and keyword arguments for one call; TensorSpecs/DTypes inside are materialised per library."""

    def __init__(self, *args, name=None, **kwargs):
        self.args, self.kwargs, self.name = args, kwargs, name

    def materialize(self, lib):
        def conv(v):
            if isinstance(v, TensorSpec):
                return v.make(lib)
            if isinstance(v, DType):
                return lib_dtype(lib, v.name)
            if isinstance(v, list):
                return [conv(x) for x in v]
            if isinstance(v, tuple):
                return tuple(conv(x) for x in v)
            return v
        return [conv(a) for a in self.args], {k: conv(v) for k, v in self.kwargs.items()}

    def tensor_dtypes(self):
        out = []
        for v in itertools.chain(self.args, self.kwargs.values()):
            if isinstance(v, TensorSpec):
                out.append(v.dtype)
        return out

    def __repr__(self):
        parts = [repr(a) for a in self.args] + [f"{k}={v!r}" for k, v in self.kwargs.items()]
        return (f"[{self.name}] " if self.name else "") + "(" + ", ".join(parts) + ")"


# ---------------------------------------------------------------- comparison
def _np_of(t):
    """NumPy copy of an ember or torch tensor (bfloat16 widened to float32)."""
    if dtype_name(t.dtype) == "bfloat16":
        t = t.float()
    if is_torch_tensor(t):
        return t.detach().numpy().copy()
    return np.array(t.numpy(), copy=True)


def is_torch_tensor(x):
    return _torch is not None and isinstance(x, _torch.Tensor)


def tolerance(dtype, rtol=None, atol=None):
    r, a = TOLERANCES.get(dtype, (0.0, 0.0))
    return (r if rtol is None else rtol), (a if atol is None else atol)


def assert_tensor_close(e, t, rtol=None, atol=None, path="result", check_dtype=True):
    assert isinstance(e, ember.Tensor), f"{path}: expected an ember.Tensor, got {type(e).__name__}"
    dn = dtype_name(t.dtype)
    if check_dtype:
        assert dtype_name(e.dtype) == dn, f"{path}: dtype {dtype_name(e.dtype)} != torch's {dn}"
    assert tuple(e.shape) == tuple(t.shape), f"{path}: shape {tuple(e.shape)} != torch's {tuple(t.shape)}"
    a, b = _np_of(e), _np_of(t)
    complex_ = a.dtype.kind == "c" or b.dtype.kind == "c"
    if complex_ or dn in FLOATS or a.dtype.kind == "f" or b.dtype.kind == "f":
        # complex values: the real twin's tolerance, on both parts
        name = {"complex64": "float32", "complex128": "float64"}.get(dn, dn if dn in FLOATS else dtype_name(e.dtype))
        rt, at = tolerance(name, rtol, atol)
        wide = np.complex128 if complex_ else np.float64
        a64, b64 = a.astype(wide), b.astype(wide)
        ok = np.isclose(a64, b64, rtol=rt, atol=at, equal_nan=True)
        if not ok.all():
            bad = np.argwhere(~ok)[:5]
            detail = "; ".join(f"at {tuple(i)}: ember {a64[tuple(i)]!r} torch {b64[tuple(i)]!r}" for i in bad)
            raise AssertionError(f"{path}: {int((~ok).sum())} of {ok.size} values differ ({dn}, rtol={rt}, "
                                 f"atol={at}): {detail}")
    else:
        if not np.array_equal(a, b):
            ne = np.argwhere(a != b)[:5]
            detail = "; ".join(f"at {tuple(i)}: ember {a[tuple(i)]!r} torch {b[tuple(i)]!r}" for i in ne)
            raise AssertionError(f"{path}: {int((a != b).sum())} of {a.size} values differ ({dn}): {detail}")


def assert_same(e, t, rtol=None, atol=None, path="result", check_dtype=True, values=True):
    """Compare an Ember result with PyTorch's: tensors, tuples/lists (named fields too), numbers, dtypes, None."""
    torch = get_torch()
    if isinstance(t, torch.Tensor):
        if values:
            assert_tensor_close(e, t, rtol, atol, path, check_dtype)
        else:
            assert isinstance(e, ember.Tensor), f"{path}: expected an ember.Tensor, got {type(e).__name__}"
            assert dtype_name(e.dtype) == dtype_name(t.dtype), f"{path}: dtype {e.dtype} != {t.dtype}"
            assert tuple(e.shape) == tuple(t.shape), f"{path}: shape {tuple(e.shape)} != {tuple(t.shape)}"
        return
    if isinstance(t, torch.Size):
        assert tuple(e) == tuple(t), f"{path}: {e} != {t}"
        return
    if isinstance(t, torch.dtype):
        assert dtype_name(e) == dtype_name(t), f"{path}: {e} != {t}"
        return
    if isinstance(t, (tuple, list)):
        assert isinstance(e, (tuple, list)), f"{path}: expected a sequence, got {type(e).__name__}"
        assert isinstance(e, tuple) == isinstance(t, tuple), \
            f"{path}: {type(e).__name__} where torch returns {type(t).__name__}"
        assert len(e) == len(t), f"{path}: length {len(e)} != torch's {len(t)}"
        fields = getattr(type(t), "_fields", None) or _struct_fields(t)
        if fields:
            for f in fields:
                assert hasattr(e, f), f"{path}: no field {f!r} (torch returns {type(t).__name__})"
        for i, (x, y) in enumerate(zip(e, t)):
            assert_same(x, y, rtol, atol, f"{path}[{i}]", check_dtype, values)
        return
    if t is None:
        assert e is None, f"{path}: expected None, got {e!r}"
        return
    if isinstance(t, (bool, int, float)):
        assert type(e) is type(t), f"{path}: {type(e).__name__} {e!r} where torch gives {type(t).__name__} {t!r}"
        if values:
            if isinstance(t, float):
                assert (math.isnan(e) and math.isnan(t)) or math.isclose(e, t, rel_tol=1e-6, abs_tol=1e-9) or e == t, \
                    f"{path}: {e!r} != {t!r}"
            else:
                assert e == t, f"{path}: {e!r} != {t!r}"
        return
    assert e == t, f"{path}: {e!r} != {t!r}"


def _struct_fields(t):
    """Field names of a torch.return_types struct sequence (values/indices, ...)."""
    if getattr(type(t), "n_fields", None) is None:
        return None
    names = []
    for name in ("values", "indices", "mean", "std", "var"):
        if hasattr(t, name):
            names.append(name)
    return names


# ---------------------------------------------------------------- exceptions
# The most specific of these that an exception is an instance of: its "kind" for parity.
_KINDS = (NotImplementedError, IndexError, TypeError, ValueError, ZeroDivisionError, OverflowError, RuntimeError)


def error_kind(exc):
    for k in _KINDS:
        if isinstance(exc, k):
            return k.__name__
    return type(exc).__name__


def _run(fn, lib, sample):
    args, kwargs = sample.materialize(lib)
    return args, kwargs, fn(lib, *args, **kwargs)


def check(fn, sample, rtol=None, atol=None, check_inputs=True, values=True, check_dtype=True,
          expect_error=False, same_object=None, label=None):
    """Run `fn` on `sample` with torch and with ember and compare everything.

    expect_error: torch must raise for this sample (an error_inputs entry) and Ember the same kind.
    same_object: index of an argument the result must *be* (in-place methods return self).
    Returns the Ember result (None on a matched error).
    """
    torch = get_torch()
    if label:
        sample = _Labelled(sample, label)
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            targs, tkwargs, tres = _run(fn, torch, sample)
            terr = None
        except (RuntimeError, IndexError, TypeError, ValueError, OverflowError) as ex:
            terr = ex
        if terr is not None:
            try:
                _run(fn, ember, sample)
            except Exception as ex:  # noqa: BLE001 - compare kinds
                ek, tk = error_kind(ex), error_kind(terr)
                assert ek == tk, (f"{sample}: ember raised {type(ex).__name__}({ex}) where torch raises "
                                  f"{type(terr).__name__}({terr})")
                return None
            raise AssertionError(f"{sample}: ember did not raise; torch raises {type(terr).__name__}: {terr}")
        assert not expect_error, f"{sample}: torch did not raise for an error input"
        try:
            eargs, ekwargs, eres = _run(fn, ember, sample)
        except Exception as ex:  # noqa: BLE001
            raise AssertionError(f"{sample}: ember raised {type(ex).__name__}: {ex}; torch returned "
                                 f"{_short(tres)}") from ex
    try:
        assert_same(eres, tres, rtol, atol, check_dtype=check_dtype, values=values)
        if same_object is not None:
            assert eres is eargs[same_object], "ember's result is not the input object (in-place ops return self)"
            assert tres is targs[same_object]
        if check_inputs:
            for i, (ea, ta) in enumerate(zip(eargs, targs)):
                if isinstance(ta, torch.Tensor):
                    assert_same(ea, ta, rtol, atol, path=f"input {i} after the call", values=values)
    except AssertionError as ex:
        raise AssertionError(f"{sample}: {ex}") from None
    return eres


class _Labelled:
    """A sample whose repr names the variant under test (function, method, out=, ...)."""

    def __init__(self, sample, label):
        self.sample, self.label = sample, label

    def materialize(self, lib):
        return self.sample.materialize(lib)

    def __repr__(self):
        return f"{self.label} {self.sample!r}"


def _short(x):
    s = repr(x)
    return s if len(s) < 200 else s[:200] + "..."


def check_error(fn, sample):
    """torch must raise for `sample`, and Ember the same kind of exception."""
    return check(fn, sample, expect_error=True)


# ---------------------------------------------------------------- sample generators
# Shapes for unary ops (each with a layout); BIG is above the 32768-element parallel threshold.
BIG = 40_000
UNARY_SHAPES = [
    ((), None), ((0,), None), ((1,), None), ((7,), None), ((3, 4), None), ((3, 4), "T"), ((2, 3, 4), "step"),
    ((4, 3), "expand"), ((5, 3), "offset"), ((2, 3, 4), "permute"), ((0, 3), None), ((BIG,), None),
    ((300, 150), "T"),
]

# (lhs shape, lhs layout, rhs shape, rhs layout) for binary ops
BINARY_SHAPES = [
    ((5,), None, (5,), None),
    ((3, 1), None, (1, 4), None),
    ((5,), None, (2, 5), None),
    ((2, 5), None, (5,), None),
    ((), None, (3,), None),
    ((3,), None, (), None),
    ((), None, (), None),
    ((1,), None, (4,), None),
    ((0,), None, (0,), None),
    ((0, 3), None, (1, 3), None),
    ((3, 4), "T", (3, 4), None),
    ((3, 4), None, (3, 4), "step"),
    ((4, 5), "expand", (4, 5), "T"),
    ((2, 3, 4), "permute", (3, 4), None),
    ((BIG,), None, (BIG,), None),
    ((200, 200), "T", (200, 200), None),
    ((BIG // 100, 100), None, (100,), None),
]


def unary_samples(dtype, low=None, high=None, special=True, shapes=UNARY_SHAPES, **kw):
    out = []
    for i, (shape, layout) in enumerate(shapes):
        out.append(Sample(T(shape, dtype, low=low, high=high, layout=layout, key=i), **kw))
    if special and dtype in FLOATS:
        vals = SPECIAL_FLOATS if special is True else special
        out.append(Sample(T((len(vals),), dtype, data=vals), name="special", **kw))
    return out


def binary_samples(dtype, low=None, high=None, rhs_low=None, rhs_high=None, nonzero_rhs=False, scalars=True,
                   special=True, shapes=BINARY_SHAPES, rhs_dtype=None):
    """Tensor-tensor pairs over broadcast/awkward shapes, plus Python scalars on the right."""
    rd = rhs_dtype or dtype
    out = []
    for i, (sa, la, sb, lb) in enumerate(shapes):
        out.append(Sample(T(sa, dtype, low=low, high=high, layout=la, key=(i, 0)),
                          T(sb, rd, low=rhs_low, high=rhs_high, layout=lb, key=(i, 1), nonzero=nonzero_rhs)))
    if special and dtype in FLOATS and rd in FLOATS:
        sp = SPECIAL_FLOATS
        n = len(sp)
        out.append(Sample(T((n, 1), dtype, data=np.array(sp).reshape(n, 1)), T((1, n), rd, data=np.array(sp).reshape(1, n)),
                          name="special"))
    if scalars:
        x = T((3, 4), dtype, low=low, high=high, key="s")
        y = T((3, 4), rd, low=rhs_low, high=rhs_high, key="s2", nonzero=nonzero_rhs)
        for s in scalar_values(dtype, nonzero=nonzero_rhs, low=rhs_low, high=rhs_high):
            out.append(Sample(x, s, name="scalar"))
        for s in (2, 2.5, True):  # a number first: allowed for add/sub/mul/div/remainder/pow/bitwise_*
            out.append(Sample(s, y, name="scalar first"))
    return out


def scalar_values(dtype, nonzero=False, low=None, high=None):
    vals = [2, -3, 2.5, True, False, 0, 0.0, -1.5]
    if low is not None and low >= 0:
        vals = [v for v in vals if v >= 0]
    if nonzero:
        vals = [v for v in vals if v != 0]
    return vals


def reduction_samples(dtype, low=None, high=None, dims=True):
    """(input, kwargs) samples for reductions: full, per dim, multiple dims, keepdim, empty, strided, large."""
    out = []
    sh = [((), None), ((5,), None), ((3, 4), None), ((3, 4), "T"), ((2, 3, 4), "permute"), ((2, 3, 4), "step"),
          ((4, 3), "expand"), ((0,), None), ((2, 0), None), ((BIG,), None), ((300, 200), None)]
    # above 2 * 32768 elements a full reduction is split across threads (Ember's other sum path)
    sh.append(((70_000,), None))
    if dtype not in REDUCED:
        # (PyTorch's half/bfloat16 sums over a transposed tensor this size keep partial sums in the
        # reduced type and lose ~0.1 to cancellation; Ember's float32 accumulation does not compare)
        sh.append(((200, 300), "T"))
    for i, (shape, layout) in enumerate(sh):
        x = T(shape, dtype, low=low, high=high, layout=layout, key=i)
        out.append(Sample(x))
        if dims and len(shape) >= 1:
            out.append(Sample(x, 0))
            out.append(Sample(x, -1, keepdim=True))
        if dims and len(shape) >= 2:
            out.append(Sample(x, dim=1, keepdim=False))
        if dims and len(shape) == 3:
            out.append(Sample(x, (0, 2)))
            out.append(Sample(x, (2, 0), True))
    return out
