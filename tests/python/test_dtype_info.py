"""ember.finfo / ember.iinfo against torch.finfo / torch.iinfo."""
import pytest

torch = pytest.importorskip("torch")

import ember  # noqa: E402

FLOATS = [(ember.float32, torch.float32), (ember.float64, torch.float64), (ember.float16, torch.float16),
          (ember.bfloat16, torch.bfloat16)]
INTS = [(ember.uint8, torch.uint8), (ember.int8, torch.int8), (ember.int16, torch.int16),
        (ember.int32, torch.int32), (ember.int64, torch.int64)]
FINFO_ATTRS = ["bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution", "dtype"]
IINFO_ATTRS = ["bits", "max", "min", "dtype"]


@pytest.fixture(autouse=True)
def _restore_default_dtype():
    yield
    torch.set_default_dtype(torch.float32)
    ember.set_default_dtype(ember.float32)


def same_text(e, t):
    assert repr(e) == repr(t).replace("torch.", "ember.")
    assert str(e) == str(t).replace("torch.", "ember.")


@pytest.mark.parametrize("ed,td", FLOATS, ids=str)
def test_finfo_matches_torch(ed, td):
    e, t = ember.finfo(ed), torch.finfo(td)
    for a in FINFO_ATTRS:
        ev, tv = getattr(e, a), getattr(t, a)
        assert type(ev) is type(tv), a
        assert ev == tv, a
    same_text(e, t)
    assert ember.finfo(type=ed) == e


@pytest.mark.parametrize("ed,td", INTS, ids=str)
def test_iinfo_matches_torch(ed, td):
    e, t = ember.iinfo(ed), torch.iinfo(td)
    for a in IINFO_ATTRS:
        ev, tv = getattr(e, a), getattr(t, a)
        assert type(ev) is type(tv), a
        assert ev == tv, a
    same_text(e, t)
    assert ember.iinfo(type=ed) == e


def test_public_attributes_match_torch():
    def public(o):
        return sorted(n for n in dir(o) if not n.startswith("_"))
    assert public(ember.finfo(ember.float32)) == public(torch.finfo(torch.float32))
    assert public(ember.iinfo(ember.int32)) == public(torch.iinfo(torch.int32))


@pytest.mark.parametrize("ed,td", FLOATS, ids=str)
def test_finfo_values_are_the_dtype_limits(ed, td):
    fi = ember.finfo(ed)
    one = ember.tensor(1.0, dtype=ed)
    assert (one + fi.eps).item() > 1.0
    assert (one + fi.eps / 2).item() == 1.0
    assert ember.tensor(fi.max, dtype=ed).item() == fi.max
    assert ember.tensor(fi.min, dtype=ed).item() == fi.min
    assert ember.tensor(fi.tiny, dtype=ed).item() == fi.tiny
    assert ember.isinf(ember.tensor(fi.max, dtype=ed) * 2).item()


def test_finfo_default_dtype():
    same_text(ember.finfo(), torch.finfo())
    assert ember.finfo() == ember.finfo(ember.float32)
    torch.set_default_dtype(torch.float64)
    ember.set_default_dtype(ember.float64)
    same_text(ember.finfo(), torch.finfo())
    assert ember.finfo() == ember.finfo(ember.float64)


def test_python_scalar_types():
    same_text(ember.finfo(float), torch.finfo(float))
    same_text(ember.iinfo(int), torch.iinfo(int))


def _error(fn):
    with pytest.raises(Exception) as info:
        fn()
    return info.type


@pytest.mark.parametrize("ed,td", INTS + [(ember.bool, torch.bool)], ids=str)
def test_finfo_rejects_non_float(ed, td):
    assert _error(lambda: ember.finfo(ed)) is _error(lambda: torch.finfo(td)) is TypeError


@pytest.mark.parametrize("ed,td", FLOATS + [(ember.bool, torch.bool)], ids=str)
def test_iinfo_rejects_non_int(ed, td):
    assert _error(lambda: ember.iinfo(ed)) is _error(lambda: torch.iinfo(td)) is TypeError


@pytest.mark.parametrize("bad", ["float32", None, 1.5, []], ids=repr)
def test_bad_arguments(bad):
    assert _error(lambda: ember.finfo(bad)) is _error(lambda: torch.finfo(bad))
    assert _error(lambda: ember.iinfo(bad)) is _error(lambda: torch.iinfo(bad))
    assert _error(lambda: ember.iinfo()) is _error(lambda: torch.iinfo())
    assert _error(lambda: ember.iinfo(float)) is _error(lambda: torch.iinfo(float))
    assert _error(lambda: ember.finfo(int)) is _error(lambda: torch.finfo(int))


def test_equality_and_hashing_like_torch():
    for (ea, ta) in FLOATS:
        for (eb, tb) in FLOATS:
            assert (ember.finfo(ea) == ember.finfo(eb)) == (torch.finfo(ta) == torch.finfo(tb))
            assert (ember.finfo(ea) != ember.finfo(eb)) == (torch.finfo(ta) != torch.finfo(tb))
    for (ea, ta) in INTS:
        for (eb, tb) in INTS:
            assert (ember.iinfo(ea) == ember.iinfo(eb)) == (torch.iinfo(ta) == torch.iinfo(tb))
    assert ember.finfo(ember.float32) == ember.finfo(ember.float32)
    assert ember.finfo(ember.float32) != ember.finfo(ember.float16)
    assert (ember.finfo() == 1) == (torch.finfo() == 1)
    assert (ember.finfo() == ember.iinfo(ember.int32)) == (torch.finfo() == torch.iinfo(torch.int32))
    assert _error(lambda: hash(ember.finfo())) is _error(lambda: hash(torch.finfo()))
    assert _error(lambda: hash(ember.iinfo(ember.int8))) is _error(lambda: hash(torch.iinfo(torch.int8)))


def test_attributes_are_read_only_like_torch():
    for a in FINFO_ATTRS:
        assert _error(lambda: setattr(ember.finfo(), a, 1)) is _error(lambda: setattr(torch.finfo(), a, 1))
    for a in IINFO_ATTRS:
        assert (_error(lambda: setattr(ember.iinfo(ember.int8), a, 1))
                is _error(lambda: setattr(torch.iinfo(torch.int8), a, 1)))
