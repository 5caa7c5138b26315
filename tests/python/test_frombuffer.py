"""ember.frombuffer against torch.frombuffer: shared memory, dtypes, count/offset, errors, warnings."""
import array
import mmap
import warnings

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")

DTYPES = ["uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64", "bool"]


def _np(t):
    return (t.float() if t.dtype in (ember.bfloat16, torch.bfloat16) else t).numpy()


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("count,offset", [(-1, 0), (2, 0), (1, 8), (-1, 16), (3, 4)])
def test_matches_torch(dtype, count, offset):
    data = bytes(np.random.default_rng(0).integers(0, 2, 32).astype(np.uint8)) if dtype == "bool" else \
        bytes(range(32))
    size = getattr(torch, dtype).itemsize
    if count < 0 and (32 - offset) % size:
        return
    e = ember.frombuffer(bytearray(data), dtype=getattr(ember, dtype), count=count, offset=offset)
    t = torch.frombuffer(bytearray(data), dtype=getattr(torch, dtype), count=count, offset=offset)
    assert e.shape == tuple(t.shape) and str(e.dtype).split(".")[1] == str(t.dtype).split(".")[1]
    np.testing.assert_array_equal(_np(e), _np(t))


def test_shares_memory_both_ways():
    buf = bytearray(b"\x01\x00\x00\x00\x02\x00\x00\x00")
    t = ember.frombuffer(buf, dtype=ember.int32)
    buf[0] = 9
    assert t.tolist() == [9, 2]
    t[1] = 7
    assert buf[4] == 7
    a = array.array("d", [1.5, 2.5])
    assert ember.frombuffer(a, dtype=ember.float64).tolist() == [1.5, 2.5]
    m = mmap.mmap(-1, 16)
    ember.frombuffer(m, dtype=ember.int64)[0] = 5
    assert m[0] == 5


def test_requires_grad_and_readonly_warning():
    assert ember.frombuffer(bytearray(8), dtype=ember.float32, requires_grad=True).requires_grad
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        assert ember.frombuffer(b"abcd", dtype=ember.uint8).tolist() == [97, 98, 99, 100]
    assert any(issubclass(x.category, UserWarning) and "not writable" in str(x.message) for x in w)


@pytest.mark.parametrize("args", [
    (bytearray(12), "int32", -1, 12), (bytearray(12), "int32", 5, 0), (bytearray(), "int32", -1, 0),
    (bytearray(12), "int64", -1, 2), ([1, 2], "int32", -1, 0), (bytearray(12), "int32", 0, 0),
    (bytearray(3), "int32", -1, 0), (bytearray(12), "int32", -1, -1)])
def test_errors_match_torch(args):
    buf, dtype, count, offset = args
    with pytest.raises(Exception) as te:
        torch.frombuffer(buf, dtype=getattr(torch, dtype), count=count, offset=offset)
    with pytest.raises(type(te.value)) as ee:
        ember.frombuffer(buf, dtype=getattr(ember, dtype), count=count, offset=offset)
    assert str(ee.value) == str(te.value)
