"""NumPy and DLPack interop: zero-copy in both directions (a write on either side is visible on the
other), dtypes, strides, lifetimes, and PyTorch's errors. The NumPy checks need no torch."""
import gc

import numpy as np
import pytest

import ember
from parity import get_torch

NP_DTYPES = {
    "float32": np.float32, "float64": np.float64, "float16": np.float16, "int8": np.int8, "int16": np.int16,
    "int32": np.int32, "int64": np.int64, "uint8": np.uint8, "bool": np.bool_,
}


def _array(dtype, shape=(3, 4)):
    a = np.arange(int(np.prod(shape))).reshape(shape) % 5
    return a.astype(NP_DTYPES[dtype])


def _one(dtype):
    return True if dtype == "bool" else 7


# ---------------------------------------------------------------- from_numpy / numpy()
@pytest.mark.parametrize("dtype", list(NP_DTYPES))
def test_from_numpy_shares_memory_both_ways(dtype):
    a = _array(dtype)
    t = ember.from_numpy(a)
    assert str(t.dtype) == f"ember.{dtype}" and tuple(t.shape) == a.shape
    assert t.tolist() == a.tolist()
    a[1, 2] = _one(dtype)
    assert t[1, 2].item() == a[1, 2].item()
    t[0, 0] = _one(dtype)
    assert a[0, 0] == _one(dtype)
    assert t.data_ptr() == a.ctypes.data


@pytest.mark.parametrize("view", ["T", "step", "offset", "2d_step", "0d", "empty", "single"])
def test_from_numpy_keeps_strides(view):
    base = np.arange(48, dtype=np.float32).reshape(6, 8)
    a = {"T": base.T, "step": base[:, ::3], "offset": base[2:, 1:], "2d_step": base[::2, ::4],
         "0d": np.array(5.0, dtype=np.float32), "empty": base[:0], "single": base[3:4, 5:6]}[view]
    t = ember.from_numpy(a)
    assert tuple(t.shape) == a.shape and t.tolist() == a.tolist()
    if a.size:
        assert t.stride() == tuple(s // a.itemsize for s in a.strides) or a.ndim == 0
        t.fill_(-1)
        assert (a == -1).all()


def test_from_numpy_keeps_the_array_alive():
    a = np.arange(5.0)
    t = ember.from_numpy(a)
    del a
    gc.collect()
    assert t.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0]


def test_from_numpy_errors():
    with pytest.raises(ValueError):
        ember.from_numpy(np.arange(5.0)[::-1])  # negative strides
    with pytest.raises(TypeError):
        ember.from_numpy([1, 2, 3])
    with pytest.raises(TypeError):  # (PyTorch has uint16; Ember has no such dtype)
        ember.from_numpy(np.zeros(2, dtype=np.uint16))
    with pytest.raises(ValueError):
        ember.from_numpy(np.arange(3, dtype=">f4"))  # non-native byte order


def test_from_numpy_errors_match_torch():
    torch = get_torch()
    for bad in (np.arange(5.0)[::-1], np.array([1 + 2j], dtype=np.complex128)[:0].astype(object), [1, 2]):
        kinds = []
        for lib in (torch, ember):
            try:
                lib.from_numpy(bad)
                kinds.append(None)
            except Exception as ex:  # noqa: BLE001
                kinds.append(type(ex).__name__)
        assert kinds[0] == kinds[1], (bad, kinds)


@pytest.mark.parametrize("dtype", list(NP_DTYPES))
def test_numpy_shares_memory_both_ways(dtype):
    t = ember.from_numpy(_array(dtype).copy())
    t2 = t.clone()
    a = t2.numpy()
    assert a.dtype == NP_DTYPES[dtype] and a.shape == tuple(t2.shape)
    a[2, 3] = _one(dtype)
    assert t2[2, 3].item() == a[2, 3].item()
    t2[1, 1] = _one(dtype)
    assert a[1, 1] == _one(dtype)
    assert a.ctypes.data == t2.data_ptr()


@pytest.mark.parametrize("view", ["T", "step", "select", "0d", "empty", "expand"])
def test_numpy_of_views(view):
    base = ember.arange(24, dtype=ember.float32).reshape(4, 6)
    t = {"T": base.t(), "step": base[:, ::2], "select": base[2], "0d": base[1, 1], "empty": base[:0],
         "expand": base[:1].expand(3, 6)}[view]
    a = t.numpy()
    assert a.shape == tuple(t.shape) and a.tolist() == t.tolist()
    if t.numel() and view != "expand":
        a[...] = -3
        assert (t == -3).all().item() and (base == -3).sum().item() == t.numel()


def test_numpy_keeps_the_tensor_alive():
    t = ember.arange(6, dtype=ember.float64)
    a = t.numpy()
    del t
    gc.collect()
    assert a.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]


def test_numpy_errors():
    with pytest.raises(TypeError):
        ember.ones(2, dtype=ember.bfloat16).numpy()
    torch = get_torch()
    with pytest.raises(TypeError):
        torch.ones(2, dtype=torch.bfloat16).numpy()


def test_array_protocol():
    t = ember.arange(6, dtype=ember.int32).reshape(2, 3)
    a = np.asarray(t)
    assert a.dtype == np.int32 and a.tolist() == t.tolist()
    a[0, 0] = 9
    assert t[0, 0].item() == 9, "np.asarray shares memory (Tensor.__array__ returns numpy())"
    c = np.array(t)
    c[0, 1] = 9
    assert t[0, 1].item() == 1, "np.array copies"
    f = np.asarray(t, dtype=np.float64)
    assert f.dtype == np.float64 and f.tolist() == [[9.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
    assert np.add(t, 1).tolist() == [[10, 2, 3], [4, 5, 6]]
    assert np.concatenate([t, t]).shape == (4, 3)


def test_as_tensor_shares_numpy_memory():
    a = np.zeros(3, dtype=np.float32)
    t = ember.as_tensor(a)
    a[0] = 5
    assert t[0].item() == 5.0
    t2 = ember.as_tensor(a, dtype=ember.float64)  # another dtype: a copy
    a[1] = 6
    assert t2[1].item() == 0.0
    x = ember.ones(2)
    assert ember.as_tensor(x) is x


def test_numpy_roundtrip_matches_torch():
    torch = get_torch()
    for dtype in NP_DTYPES:
        a = _array(dtype)
        e, t = ember.from_numpy(a.copy()), torch.from_numpy(a.copy())
        assert str(e.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
        assert np.array_equal(e.numpy(), t.numpy())
        assert np.array_equal(ember.tensor(a).numpy(), torch.tensor(a).numpy())


# ---------------------------------------------------------------- DLPack
DL_DTYPES = list(NP_DTYPES) + ["bfloat16"]


@pytest.mark.parametrize("dtype", list(NP_DTYPES))
def test_dlpack_numpy_to_ember_shares_memory(dtype):
    a = _array(dtype)
    t = ember.from_dlpack(a)
    assert tuple(t.shape) == a.shape and t.tolist() == a.tolist()
    a[0, 1] = _one(dtype)
    assert t[0, 1].item() == a[0, 1].item()
    t[2, 2] = _one(dtype)
    assert a[2, 2] == _one(dtype)


@pytest.mark.parametrize("dtype", list(NP_DTYPES))
def test_dlpack_ember_to_numpy_shares_memory(dtype):
    t = ember.from_numpy(_array(dtype).copy())
    a = np.from_dlpack(t)
    assert a.dtype == NP_DTYPES[dtype] and a.tolist() == t.tolist()
    a[1, 0] = _one(dtype)
    assert t[1, 0].item() == a[1, 0].item()
    t[0, 3] = _one(dtype)
    assert a[0, 3] == _one(dtype)


@pytest.mark.parametrize("dtype", DL_DTYPES)
def test_dlpack_ember_to_torch_and_back_shares_memory(dtype):
    torch = get_torch()
    e = ember.arange(12).reshape(3, 4).to(getattr(ember, dtype))
    t = torch.from_dlpack(e)
    assert str(t.dtype) == f"torch.{dtype}" and t.tolist() == e.tolist()
    t[0, 0] = 1
    assert e[0, 0].item() == t[0, 0].item()
    e[2, 3] = 0
    assert t[2, 3].item() == e[2, 3].item()
    # and torch -> ember
    t2 = torch.arange(12).reshape(3, 4).to(getattr(torch, dtype))
    e2 = ember.from_dlpack(t2)
    assert str(e2.dtype) == f"ember.{dtype}" and e2.tolist() == t2.tolist()
    e2[1, 1] = 0
    assert t2[1, 1].item() == e2[1, 1].item()
    t2[1, 2] = 1
    assert e2[1, 2].item() == t2[1, 2].item()


@pytest.mark.parametrize("view", ["T", "step", "offset", "0d", "empty", "expand"])
def test_dlpack_views(view):
    torch = get_torch()
    base_e = ember.arange(24, dtype=ember.float32).reshape(4, 6)
    base_t = torch.arange(24, dtype=torch.float32).reshape(4, 6)
    pick = {"T": lambda b: b.t(), "step": lambda b: b[:, ::2], "offset": lambda b: b[1:, 2:],
            "0d": lambda b: b[1, 1], "empty": lambda b: b[:0], "expand": lambda b: b[:1].expand(3, 6)}[view]
    e, t = pick(base_e), pick(base_t)
    te = torch.from_dlpack(e)
    assert te.shape == t.shape and te.tolist() == t.tolist()
    et = ember.from_dlpack(t)
    assert tuple(et.shape) == tuple(t.shape) and et.tolist() == t.tolist()
    ne = np.from_dlpack(e)
    assert ne.shape == tuple(e.shape) and ne.tolist() == e.tolist()
    if e.numel() and view != "expand":
        te.fill_(-5)
        assert (e == -5).all().item() and (base_e == -5).sum().item() == e.numel()


def test_dlpack_capsules_are_consumed_once():
    t = ember.ones(3)
    cap = t.__dlpack__()
    u = ember.from_dlpack(cap)
    assert u.tolist() == [1.0, 1.0, 1.0]
    with pytest.raises(RuntimeError):
        ember.from_dlpack(cap)
    with pytest.raises(TypeError):
        ember.from_dlpack([1, 2])
    assert t.__dlpack_device__() == (1, 0)


def test_dlpack_keeps_producer_alive():
    torch = get_torch()
    t = torch.arange(4.0)
    e = ember.from_dlpack(t)
    del t
    gc.collect()
    assert e.tolist() == [0.0, 1.0, 2.0, 3.0]
    e2 = ember.arange(4.0)
    t2 = torch.from_dlpack(e2)
    del e2
    gc.collect()
    assert t2.tolist() == [0.0, 1.0, 2.0, 3.0]


def test_empty_arrays_with_zero_strides():
    # NumPy gives empty arrays zero strides; the tensor is still contiguous and writable in place
    a = np.array(np.zeros((0, 3)), order="C", copy=True)
    t = ember.from_numpy(a)
    assert t.is_contiguous() and tuple(t.shape) == (0, 3)
    t.add_(1)
    t.fill_(2)
    assert (t + 1).shape == (0, 3)
