"""ember.broadcast_shapes against torch.broadcast_shapes: results (an ember.Size), and the kind and
words of the errors for shapes that do not broadcast, negative sizes and arguments of the wrong type."""
import itertools

import numpy as np
import pytest

import ember
from parity import get_torch

CASES = [
    (), (2,), (0,), ((2,),), ([],), ((2, 3), (3,)), (1, (2, 1), [3, 1, 1]), ((2, 1), (1, 3), (4, 1, 1)),
    ((0,), (1,)), ((1, 0), (5, 1)), ((True,),), (True,), (None,), (None, None), ((2,), None, (3, 1)),
    (range(3),), ((5, 1, 4), (4,), 1, [1, 1, 1, 1]),
    # errors: mismatches (RuntimeError), negative sizes (ValueError), wrong types (RuntimeError/TypeError)
    ((2,), 3), ((0,), (3,)), ((2,), (0,)), ((5, 3), (4, 3)), ((2,), (3,), (4,)), ((2, 3), (2, 1), (3, 3)),
    ((-1,),), (-1,), ((2, -1), (2, 1)), ((1, -1),), ((3,), (-1,)), ((2, 1), (-1,)), ((-2,), (-2,)),
    ("a",), ((2.0,),), (2.0,), ({2: 1},), ((2, 3), "ab"), (((2,),),), ((2,), object()), (np.int64(3),),
]


def _call(lib, case):
    try:
        return ("ok", tuple(lib.broadcast_shapes(*case)))
    except Exception as e:  # noqa: BLE001 - the error is what is compared
        return (type(e), str(e).replace("torch.", "").replace("ember.", ""))


@pytest.mark.parametrize("case", CASES, ids=[repr(c) for c in CASES])
def test_matches_torch(case):
    torch = get_torch()
    assert _call(ember, case) == _call(torch, case)


def test_returns_a_size():
    s = ember.broadcast_shapes((2, 1), ember.Size([3]))
    assert type(s) is ember.Size and s == (2, 3) and repr(s) == "ember.Size([2, 3])"
    assert type(ember.broadcast_shapes()) is ember.Size
    assert ember.broadcast_shapes((np.int64(3),), (np.int64(1),)) == (3,)


@pytest.mark.parametrize("shapes", list(itertools.combinations([(3, 1, 5), (4, 1), (1, 5), (2, 1, 1, 1), (), (1,)], 3)))
def test_agrees_with_broadcasting_tensors(shapes):
    tensors = [ember.zeros(s) for s in shapes]
    assert ember.broadcast_shapes(*shapes) == ember.broadcast_tensors(*tensors)[0].shape
