"""x[index] and x[index] = value against torch: basic indices (ints, slices, None, Ellipsis, bools)
make views; tensors, lists and masks are advanced indexing (copies on read, index_put_ on write)."""
import numpy as np
import pytest

import ember
from parity import ALL_DTYPES, Sample, T, check


def _lib(t):
    if isinstance(t, ember.Tensor):
        return ember
    import torch
    return torch


class I:
    """An index tensor built per library: I([0, 2]) -> lib.tensor([0, 2]) (dtype inferred or given)."""

    def __init__(self, data, dtype=None):
        self.data, self.dtype = data, dtype

    def make(self, lib):
        return lib.tensor(self.data, dtype=getattr(lib, self.dtype) if self.dtype else None)

    def __repr__(self):
        return f"I({self.data}{', ' + self.dtype if self.dtype else ''})"


def _materialize(index, lib):
    if isinstance(index, I):
        return index.make(lib)
    if isinstance(index, tuple):
        return tuple(_materialize(i, lib) for i in index)
    if isinstance(index, list):
        return [_materialize(i, lib) for i in index]
    return index


BASIC = [
    1, -1, 0, slice(1, None), slice(None, None, 2), (1, 2), (1, slice(None), 3),
    (slice(1, None), slice(None, None, 2), None, Ellipsis, -1), None, Ellipsis, (Ellipsis, None),
    (None, Ellipsis, None), (Ellipsis, 1), (1, Ellipsis, 2), True, False, (slice(None), True),
    (slice(None), 0), (0, 0, 0), slice(-100, 100), slice(5, 2), slice(2, 2), (slice(None, None, 3), 1),
    (slice(1, -1), slice(None), slice(-2, None)), I(1), (I(1), I(-1)), (0, I(2)), I(True), I(False),
    (slice(None), None, 1, None), np.int64(1), (np.int32(0), slice(None, 2)), (Ellipsis, Ellipsis),
    (0, Ellipsis, Ellipsis), (True, 1), (None, False),
]
BASIC_ERRORS = [
    5, -6, (0, 0, 0, 0), (0, 5), 1.5, "a", slice(None, None, 0), slice(None, None, -1),
    (0, 0, 0, None, 0),
    I(1.0), {1: 2},
]


def _get(lib, x, index):
    return x[_materialize(index, lib)]


@pytest.mark.parametrize("index", BASIC, ids=[repr(i) for i in BASIC])
def test_basic_getitem(index):
    for layout in (None, "T", "step"):
        s = Sample(T((5, 4, 6), "float32", layout="permute" if layout == "T" else layout), index=index)
        check(lambda lib, x, index: _get(lib, x, index), s)


@pytest.mark.parametrize("index", BASIC, ids=[repr(i) for i in BASIC])
def test_basic_getitem_is_a_view(index):
    x = ember.arange(120, dtype=ember.float32).reshape(5, 4, 6)
    r = x[_materialize(index, ember)]
    bools = [i for i in (index if isinstance(index, tuple) else (index,))
             if i is True or i is False or (isinstance(i, I) and isinstance(i.data, bool))]
    if bools:  # a boolean index is advanced indexing in PyTorch: a copy
        assert r._storage_ptr() != x._storage_ptr()
    else:
        assert r._storage_ptr() == x._storage_ptr()


@pytest.mark.parametrize("index", BASIC_ERRORS, ids=[repr(i) for i in BASIC_ERRORS])
def test_basic_getitem_errors(index):
    check(lambda lib, x, index: _get(lib, x, index), Sample(T((5, 4, 6), "float32"), index=index), expect_error=True)


def test_zero_dim_indexing():
    x = T((), "float32")
    for index in (None, Ellipsis, (), True, False, (None, None), I(True)):
        check(lambda lib, x, index: _get(lib, x, index), Sample(x, index=index))
    for index in (0, slice(None), I(0)):
        check(lambda lib, x, index: _get(lib, x, index), Sample(x, index=index), expect_error=True)


ADVANCED = [
    I([0, 2]), I([[0, 1], [4, 3]]), I([-1, 0, -5]), (I([0, 1]), I([1, 2])), (I([[0], [1]]), I([1, 2, 3])),
    (slice(None), I([3, 0])), (I([0, 1]), slice(None), I([2, 5])), (1, I([0, 3])), (I([0, 1]), 2),
    (Ellipsis, I([5, 1])), (None, I([0, 1])), (I([0, 1]), None, I([1, 1])), [0, 2, 4], [[0, 1], [1, 2]],
    ([0, 1], [2, 3]), I([], "int64"), I([0, 1], "int32"), I([0, 1], "int16"), I([0, 1], "int8"),
    I([True, False, True, False, True]), (I([True, False, True, False, True]), slice(None), 0),
    (slice(None), I([True, False, False, True])), (I([True, False, True, False, True]), I([0, 1, 2])),
    [True, False, True, False, True], I([[True, False, True, False]] * 5), (I([[True] * 4] * 5), 1),
    (I(1), I([0, 1])), (I([0, 1]), Ellipsis), (slice(1, 4), I([0, 2]), slice(None, None, 2)),
    np.array([0, 3]), (np.array([0, 1]), np.array([2, 2])), np.array([True, False, True, False, True]),
    I([0, 1], "int64"), np.array([0.0, 1.0]),
    (I([0, 1], "uint8"),), [0.5, 1.7], [[0, 1], [1, 2]], [0, [1, 2]], [0] * 40, [I([0, 1]), 2], np.array(2),
]
ADVANCED_ERRORS = [
    I([0, 5]), I([-6]), I([0.0, 1.0]), I([True, False]), (I([0, 1]), I([0, 1, 2])),
    I([[True, False, True]]), (I([0]), I([0]), I([0]), I([0])), [0, 5], I([0, 1], "int16"), I([0, 1], "int8"),
]


@pytest.mark.parametrize("index", ADVANCED, ids=[repr(i) for i in ADVANCED])
@pytest.mark.parametrize("dtype", ["float32", "int64", "bool", "float16"])
def test_advanced_getitem(index, dtype):
    for layout in (None, "permute"):
        s = Sample(T((5, 4, 6), dtype, layout=layout), index=index)
        r = check(lambda lib, x, index: _get(lib, x, index), s)
        if r is not None and r.numel():
            x = s.args[0].make(ember)
            assert r._storage_ptr() != x._storage_ptr(), "advanced indexing copies"


@pytest.mark.parametrize("index", ADVANCED_ERRORS, ids=[repr(i) for i in ADVANCED_ERRORS])
def test_advanced_getitem_errors(index):
    check(lambda lib, x, index: _get(lib, x, index), Sample(T((5, 4, 6), "float32"), index=index), expect_error=True)


def _set(lib, x, index, value):
    v = value.make(lib) if isinstance(value, (I, type(T((1,), "float32")))) else value
    x[_materialize(index, lib)] = v
    return x


SET_VALUES = [3, 2.5, True, T((), "float64"), T((), "float32"), T((6,), "float32"), T((1, 6), "int32"),
              T((1, 1, 6), "float32"), I([1.5]), [1, 2, 3, 4, 5, 6], np.ones(6), None, "a", (1, 2)]


@pytest.mark.parametrize("index", BASIC + ADVANCED, ids=[repr(i) for i in BASIC + ADVANCED])
def test_setitem(index):
    for value in SET_VALUES:
        for dtype in ("float32", "int32"):
            s = Sample(T((5, 4, 6), dtype, layout=None), index=index, value=value)
            check(lambda lib, x, index, value: _set(lib, x, index, value), s)


def test_setitem_through_non_contiguous_and_broadcast():
    x = T((5, 4, 6), "float32", layout="permute")
    for index, value in [((slice(None), 0), T((6,), "float32")), (I([0, 2]), T((1, 4, 6), "float32")),
                         (I([[True] * 6] * 4), 7.0), ((I([0, 1]), I([2, 3])), T((2, 6), "float64")),
                         ((Ellipsis, I([0, 0])), T((2,), "float32"))]:
        check(lambda lib, x, index, value: _set(lib, x, index, value), Sample(x, index=index, value=value))


def test_setitem_errors():
    x = T((5, 4, 6), "float32")
    for index, value in [(0, T((3,), "float32")), (I([0, 1]), T((3, 6), "float32")), (I([9]), 1.0),
                         (I([True, False]), 1.0), (slice(None), "a"), (0, T((4, 7), "float32"))]:
        check(lambda lib, x, index, value: _set(lib, x, index, value), Sample(x, index=index, value=value),
              expect_error=True)
    check(lambda lib, x: x.__delitem__(0), Sample(x), expect_error=True)


def test_setitem_bumps_version_and_writes_through_views():
    x = ember.zeros(4, 5)
    v = x[1:]
    ver = x._version
    v[0, 1] = 3.0
    assert x[1, 1].item() == 3.0 and x._version > ver
    ver = x._version
    v[ember.tensor([0, 2])] = 1.0
    assert x[1].tolist() == [1.0] * 5 and x[3].tolist() == [1.0] * 5 and x._version > ver
    ver = x._version
    v[v > 0.5] = -1.0
    assert x._version > ver and (x[1:] <= 0).all().item()


def test_index_put_accumulate_with_duplicates():
    for dtype in ALL_DTYPES:
        if dtype == "bool":
            continue
        s = Sample(T((5,), dtype), (I([0, 0, 2, 0]),), T((4,), dtype), True)
        check(lambda lib, x, idx, v, acc: x.index_put_(tuple(i.make(lib) for i in idx), v, acc), s)


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_getitem_all_dtypes(dtype):
    s = Sample(T((4, 5), dtype, layout="T"))
    check(lambda lib, x: (x[1], x[:, 2], x[::2, 1:], x[lib.tensor([0, 3])], x[x != x[0, 0]]), s)
