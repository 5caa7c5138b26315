"""fmod, remainder and floor_divide of floats take a vector path (SLEEF's fmod in blocks, then the
shared scalar rules of kernels/elementwise_math.h): against PyTorch on every pair of special values
(zeros of both signs, infinities, NaN, denormals, huge quotients), random data, a broadcast divisor,
non-contiguous operands and in-place forms."""
import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")

SPECIAL = [0.0, -0.0, 1.0, -1.0, 2.5, -2.5, 1e30, -1e30, 1e-30, 1e-45, -1e-45, float("inf"), -float("inf"),
           float("nan"), 7.0, -7.0, 3.0, 5e-324]


def same_bits(e, t):
    e, t = e.numpy(), t.numpy()
    ok = ((e == t) & (np.signbit(e) == np.signbit(t))) | (np.isnan(e) & np.isnan(t))
    assert ok.all(), list(zip(e[~ok][:5], t[~ok][:5]))


def reference(op, a, b):
    """PyTorch's scalar formulas over NumPy's exact fmod."""
    with np.errstate(all="ignore"):
        mod = np.fmod(a, b)
        adjust = (mod != 0) & ((b < 0) != (mod < 0))
        if op == "fmod":
            return mod
        if op == "remainder":
            return np.where(adjust, mod + b, mod)
        q = a / b
        div = (a - mod) / b - adjust.astype(a.dtype)
        fl = np.floor(div)
        fl = fl + (div - fl > 0.5).astype(a.dtype)
        return np.where(b == 0, q, np.where(div == 0, np.copysign(np.zeros_like(q), q), fl))


def exact_where_torch_flushes(op, e, t, a, b):
    """PyTorch's vector fmod (SLEEF's) gives NaN for some finite pairs where libm's fmod is exact
    (subnormal divisors, huge exponent gaps: fmod(1e30, 1e-30) in float32), for the elements its vector
    loop covers, so a value depends on its position; Ember takes the exact result there. Those elements
    are compared with PyTorch's formulas over NumPy's exact fmod, the rest with PyTorch itself."""
    e, t = e.numpy().copy(), t.numpy().copy()
    a, b = np.broadcast_arrays(a, b)
    a, b = a.reshape(e.shape), b.reshape(e.shape)
    flushed = np.isnan(t) & np.isfinite(a) & np.isfinite(b) & (b != 0)
    ref = reference(op, a, b)
    t[flushed] = ref[flushed]
    return ember.from_numpy(e), torch.from_numpy(t)


@pytest.mark.parametrize("op", ["fmod", "remainder", "floor_divide"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_against_torch(op, dtype):
    rng = np.random.default_rng(0)
    a = np.array([x for x in SPECIAL for _ in SPECIAL] + list(rng.standard_normal(3000) * 1e4))
    b = np.array([y for _ in SPECIAL for y in SPECIAL] + list(rng.standard_normal(3000) * 3))
    a, b = a.astype(dtype), b.astype(dtype)
    fe, ft = getattr(ember, op), getattr(torch, op)
    ea, eb, ta, tb = ember.from_numpy(a), ember.from_numpy(b), torch.from_numpy(a), torch.from_numpy(b)
    same_bits(*exact_where_torch_flushes(op, fe(ea, eb), ft(ta, tb), a, b))
    same_bits(fe(ea, ember.tensor(2.5, dtype=ea.dtype)), ft(ta, torch.tensor(2.5, dtype=ta.dtype)))  # broadcast
    same_bits(*exact_where_torch_flushes(op, fe(ember.tensor(-7.5, dtype=ea.dtype), eb),
                                         ft(torch.tensor(-7.5, dtype=ta.dtype), tb), np.array(-7.5, dtype), b))
    same_bits(*exact_where_torch_flushes(op, fe(ea[::3], eb[1::3]), ft(ta[::3], tb[1::3]), a[::3], b[1::3]))
    same_bits(*exact_where_torch_flushes(op, fe(ea.reshape(-1, 3).t(), eb.reshape(-1, 3).t()).contiguous(),
                                         ft(ta.reshape(-1, 3).t(), tb.reshape(-1, 3).t()).contiguous(),
                                         a.reshape(-1, 3).T, b.reshape(-1, 3).T))
    x = ea.clone()
    getattr(x, op + "_")(eb)  # in place: the output is an input
    same_bits(*exact_where_torch_flushes(op, x, ft(ta, tb), a, b))


@pytest.mark.parametrize("op", ["fmod", "remainder", "floor_divide"])
def test_subnormal_divisors_do_not_depend_on_position(op):
    for dtype, tiny in (("float32", 1e-45), ("float64", 5e-324)):
        for n in (1, 5, 9, 13, 300):
            got = getattr(ember, op)(ember.ones(n, dtype=getattr(ember, dtype)), tiny).numpy()
            np.testing.assert_array_equal(got, reference(op, np.ones(n, dtype), np.full(n, tiny, dtype)))
