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


@pytest.mark.parametrize("op", ["fmod", "remainder", "floor_divide"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_against_torch(op, dtype):
    rng = np.random.default_rng(0)
    a = np.array([x for x in SPECIAL for _ in SPECIAL] + list(rng.standard_normal(3000) * 1e4))
    b = np.array([y for _ in SPECIAL for y in SPECIAL] + list(rng.standard_normal(3000) * 3))
    a, b = a.astype(dtype), b.astype(dtype)
    fe, ft = getattr(ember, op), getattr(torch, op)
    ea, eb, ta, tb = ember.from_numpy(a), ember.from_numpy(b), torch.from_numpy(a), torch.from_numpy(b)
    same_bits(fe(ea, eb), ft(ta, tb))
    same_bits(fe(ea, ember.tensor(2.5, dtype=ea.dtype)), ft(ta, torch.tensor(2.5, dtype=ta.dtype)))  # broadcast
    same_bits(fe(ember.tensor(-7.5, dtype=ea.dtype), eb), ft(torch.tensor(-7.5, dtype=ta.dtype), tb))
    same_bits(fe(ea[::3], eb[1::3]), ft(ta[::3], tb[1::3]))  # strided
    same_bits(fe(ea.reshape(-1, 3).t(), eb.reshape(-1, 3).t()).contiguous(),
              ft(ta.reshape(-1, 3).t(), tb.reshape(-1, 3).t()).contiguous())
    x = ea.clone()
    getattr(x, op + "_")(eb)  # in place: the output is an input
    same_bits(x, ft(ta, tb))
