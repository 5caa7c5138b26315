"""torch.LongTensor & co.: the legacy typed constructors and isinstance checks, against torch."""
import pytest

import ember

torch = pytest.importorskip("torch")

NAMES = ["FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor", "LongTensor", "IntTensor", "ShortTensor",
         "CharTensor", "ByteTensor", "BoolTensor"]


@pytest.mark.parametrize("name", NAMES)
def test_constructors_match_torch(name):
    E, T = getattr(ember, name), getattr(torch, name)
    assert str(E.dtype).split(".")[1] == str(T.dtype).split(".")[1]
    for args in [(), (3,), (2, 3), (0,)]:
        e, t = E(*args), T(*args)
        assert tuple(e.shape) == tuple(t.shape) and e.dtype is E.dtype
    assert tuple(E(ember.Size([2, 1])).shape) == tuple(T(torch.Size([2, 1])).shape)
    data = [[1, 0], [0, 1]]
    assert E(data).tolist() == T(data).tolist()
    assert E((1, 0)).tolist() == T((1, 0)).tolist()  # a tuple is data, not a size
    same = ember.zeros(2, dtype=E.dtype)
    assert E(same) is same


@pytest.mark.parametrize("name", NAMES)
def test_isinstance_is_a_dtype_check(name):
    E = getattr(ember, name)
    assert isinstance(ember.zeros(2, dtype=E.dtype), E)
    other = ember.float64 if E.dtype is not ember.float64 else ember.float32
    assert not isinstance(ember.zeros(2, dtype=other), E)
    assert not isinstance([1, 2], E)


def test_bad_arguments_raise_type_error():
    for args in [(ember.ones(2),), (2.5,), ([1, 2], 3), (2, "a")]:
        with pytest.raises(TypeError):
            ember.LongTensor(*args)
        with pytest.raises(TypeError):
            torch.LongTensor(*[torch.ones(2) if isinstance(a, ember.Tensor) else a for a in args])
    with pytest.raises(RuntimeError, match="device type"):
        ember.FloatTensor(2, device="cuda")
