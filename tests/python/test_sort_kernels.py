"""The CPU sort kernels (radix sort of order-preserving keys; topk by selection) against torch:
stable indices with ties, signed zeros, infinities and NaN, every dtype, sizes on both sides of the
small-row cutoff, both orders."""
import numpy as np
import pytest

import ember
from parity import get_torch

DTYPES = ["float32", "float64", "float16", "bfloat16", "int8", "int16", "int32", "int64", "uint8", "bool"]


def _data(dtype, n, rs):
    if dtype.startswith(("float", "bfloat")):
        if n % 2:  # many ties and every special value
            return rs.choice([np.nan, -np.inf, np.inf, -0.0, 0.0, 1.5, -2.0, 3.25, 1e-3], size=n)
        return rs.randn(n) * 3
    if dtype == "bool":
        return rs.randint(0, 2, n)
    if dtype == "uint8":
        return rs.randint(0, 256, n)
    return rs.randint(-100, 100, n)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", [0, 1, 5, 63, 64, 65, 300, 5000])
def test_sort_and_topk_match_torch(dtype, n):
    torch = get_torch()
    x = _data(dtype, n, np.random.RandomState(n))
    for descending in (False, True):
        a = torch.sort(torch.tensor(x).to(getattr(torch, dtype)), descending=descending, stable=True)
        b = ember.sort(ember.tensor(x).to(getattr(ember, dtype)), descending=descending, stable=True)
        np.testing.assert_array_equal(b[1].numpy(), a[1].numpy())
        np.testing.assert_array_equal(b[0].double().numpy(), a[0].double().numpy())
        if n and dtype != "bool":
            k = min(7, n)
            a = torch.topk(torch.tensor(x).to(getattr(torch, dtype)), k, largest=descending)
            b = ember.topk(ember.tensor(x).to(getattr(ember, dtype)), k, largest=descending)
            np.testing.assert_array_equal(b[0].double().numpy(), a[0].double().numpy())


def test_batched_rows_and_dims():
    torch = get_torch()
    x = np.random.RandomState(0).randint(0, 50, (6, 200, 3)).astype(np.float32)
    for dim in (0, 1, 2):
        a = torch.sort(torch.tensor(x), dim=dim, stable=True)
        b = ember.sort(ember.tensor(x), dim=dim, stable=True)
        np.testing.assert_array_equal(b[1].numpy(), a[1].numpy())
        a = torch.topk(torch.tensor(x), 2, dim=dim)
        b = ember.topk(ember.tensor(x), 2, dim=dim)
        np.testing.assert_array_equal(b[0].numpy(), a[0].numpy())
