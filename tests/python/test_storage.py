"""ember.UntypedStorage / TypedStorage / legacy XxxStorage and the Tensor storage methods, against torch 2.13."""
import copy
import pickle
import warnings

import pytest

import ember
import ember.storage

torch = pytest.importorskip("torch")


@pytest.fixture(autouse=True)
def _quiet_typed_storage_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        yield


def _raises_like(fn_ember, fn_torch):
    with pytest.raises(Exception) as te:
        fn_torch()
    with pytest.raises(type(te.value)):
        fn_ember()


DTYPES = ["float32", "float64", "float16", "bfloat16", "int64", "int32", "int16", "int8", "uint8", "bool"]


def test_top_level_names_match_torch():
    theirs = {n for n in dir(torch) if n.endswith("Storage")}
    # complex and quantized storages need dtypes Ember does not have
    missing = {n for n in theirs if not hasattr(ember, n) and not n.startswith(("Complex", "Q"))}
    assert missing == set()
    assert ember.FloatStorage.__module__ == "ember" and ember.UntypedStorage.__module__ == "ember.storage"
    assert isinstance(ember.UntypedStorage(1), ember.StorageBase)
    assert not isinstance(ember.FloatStorage(1), ember.StorageBase)


@pytest.mark.parametrize("name", DTYPES)
def test_tensor_storage_values_and_sizes(name):
    data = [0, 1, 0, 1, 1] if name == "bool" else [0, 1, 2, 3, 4]
    e = ember.tensor(data, dtype=getattr(ember, name))
    t = torch.tensor(data, dtype=getattr(torch, name))
    es, ts = e.storage(), t.storage()
    assert type(es) is ember.TypedStorage
    assert es.tolist() == ts.tolist() and list(es) == list(ts)
    assert (es.size(), len(es), es.nbytes(), es.element_size()) == (ts.size(), len(ts), ts.nbytes(), ts.element_size())
    assert es.dtype == e.dtype and str(es.device) == str(ts.device)
    assert es[1] == ts[1] and type(es[1]) is type(ts[1]) and es[-1] == ts[-1]
    assert es.type() == ts.type().replace("torch", "ember")
    assert e.storage_type().__name__ == t.storage_type().__name__
    assert es.pickle_storage_type() == ts.pickle_storage_type()
    assert repr(es) == repr(ts).replace("torch", "ember")
    eu, tu = e.untyped_storage(), t.untyped_storage()
    assert eu.tolist() == tu.tolist() and eu.nbytes() == tu.nbytes() and eu.element_size() == 1
    assert repr(eu) == repr(tu).replace("torch", "ember")


def test_storage_data_ptr_and_identity():
    e = ember.arange(6.0)
    u = e.untyped_storage()
    assert u.data_ptr() == e.data_ptr() == e.storage().data_ptr()
    # one UntypedStorage object per storage, as torch; TypedStorage wrappers are fresh objects
    assert u is e.untyped_storage() and e[2:].untyped_storage() is u and e.view(2, 3).untyped_storage() is u
    assert u == e.untyped_storage()
    t = torch.arange(6.0)
    assert (e.storage() == e.storage()) == (t.storage() == t.storage())
    assert (ember.UntypedStorage(3) == ember.UntypedStorage(3)) == (torch.UntypedStorage(3) == torch.UntypedStorage(3))
    assert e.storage()._untyped_storage is u and e.storage().untyped() is u
    assert hash(u) == hash(e.untyped_storage())


def test_writes_through_storage_show_in_tensor_and_back():
    e, t = ember.arange(6.0), torch.arange(6.0)
    for x in (e, t):
        s = x.storage()
        s[1] = 10
        s[2:4] = 7.5
        x[5] = -1.0
    assert e.tolist() == t.tolist() and e.storage().tolist() == t.storage().tolist()
    for x in (e, t):
        u = x.untyped_storage()
        u[0] = 0x55
        u[4:6] = 3
    assert e.tolist() == t.tolist()
    eu, tu = e.untyped_storage(), t.untyped_storage()
    eu.fill_(0), tu.fill_(0)
    assert e.tolist() == t.tolist() == [0.0] * 6
    e.storage().fill_(2), t.storage().fill_(2)
    assert e.tolist() == t.tolist()


def test_views_with_offsets_share_the_whole_storage():
    e, t = ember.arange(12.0), torch.arange(12.0)
    for ev, tv in ((e[3:], t[3:]), (e.view(3, 4)[1:, 2:], t.view(3, 4)[1:, 2:]), (e.view(3, 4).t(), t.view(3, 4).t()),
                   (e[::2], t[::2])):
        assert ev.untyped_storage().nbytes() == tv.untyped_storage().nbytes() == 48
        assert ev.storage().tolist() == tv.storage().tolist()
        assert ev.storage().data_ptr() == e.data_ptr()
        assert ev.storage_offset() == tv.storage_offset()
    # a uint8 view of a float tensor reads the float's bytes
    eb, tb = e.view(ember.uint8)[5:], t.view(torch.uint8)[5:]
    assert eb.storage().tolist() == tb.storage().tolist() and eb.storage().size() == 48
    ev = e.view(3, 4)[1:, 2:]
    ev.storage()[0] = 100.0
    assert e[0].item() == 100.0


def test_untyped_storage_constructors():
    assert ember.UntypedStorage().nbytes() == torch.UntypedStorage().nbytes() == 0
    assert ember.UntypedStorage(5).nbytes() == 5
    assert ember.UntypedStorage([1, 2, 300, -1]).tolist() == torch.UntypedStorage([1, 2, 300, -1]).tolist()
    assert ember.UntypedStorage(4, device="cpu").device.type == "cpu"
    _raises_like(lambda: ember.UntypedStorage("abc"), lambda: torch.UntypedStorage("abc"))
    _raises_like(lambda: ember.UntypedStorage(-1), lambda: torch.UntypedStorage(-1))
    _raises_like(lambda: ember.UntypedStorage(ember.tensor([1, 2])), lambda: torch.UntypedStorage(torch.tensor([1, 2])))
    _raises_like(lambda: ember.UntypedStorage(2, dtype=ember.float32), lambda: torch.UntypedStorage(2, dtype=torch.float))


@pytest.mark.parametrize("name", DTYPES)
def test_typed_storage_constructors(name):
    data = [True, False, True] if name == "bool" else [1, 2, 3]
    e = ember.TypedStorage(data, dtype=getattr(ember, name))
    t = torch.TypedStorage(data, dtype=getattr(torch, name))
    assert e.tolist() == t.tolist() and e.dtype == getattr(ember, name)
    assert ember.TypedStorage(4, dtype=getattr(ember, name)).size() == 4
    legacy = getattr(ember, t.pickle_storage_type())
    s = legacy(data)
    assert type(s) is ember.TypedStorage and s.tolist() == t.tolist() and isinstance(s, legacy)
    assert legacy(3).size() == 3 and legacy().size() == 0 and legacy.dtype == getattr(ember, name)


def test_typed_storage_constructor_details():
    assert ember.TypedStorage().dtype == ember.get_default_dtype()
    assert ember.TypedStorage([1.5, 2.7], dtype=ember.int32).tolist() == \
        torch.TypedStorage([1.5, 2.7], dtype=torch.int32).tolist()
    u = ember.UntypedStorage(9)
    w = ember.TypedStorage(wrap_storage=u, dtype=ember.float32)
    assert w.size() == torch.TypedStorage(wrap_storage=torch.UntypedStorage(9), dtype=torch.float32).size() == 2
    assert w.untyped() is u and w.data_ptr() == u.data_ptr()
    w.fill_(1.0)
    assert u.tolist()[:8] == list(torch.tensor([1.0, 1.0]).view(torch.uint8).tolist())
    assert ember.FloatStorage(wrap_storage=ember.UntypedStorage(8)).size() == 2
    cases = [
        (lambda m: m.TypedStorage(2, 3, dtype=m.float32)),
        (lambda m: m.TypedStorage(2.5, dtype=m.float32)),
        (lambda m: m.TypedStorage([1, "a"], dtype=m.float32)),
        (lambda m: m.TypedStorage(wrap_storage=m.UntypedStorage(8))),
        (lambda m: m.TypedStorage([1], dtype=m.float32, wrap_storage=m.UntypedStorage(8))),
        (lambda m: m.FloatStorage(2, dtype=m.int32)),
    ]
    for case in cases:
        _raises_like(lambda: case(ember), lambda: case(torch))


def test_indexing_errors_match_torch():
    def cases(m):
        s = m.IntStorage([1, 2])
        u = m.UntypedStorage([1, 2])
        return [lambda: s[2], lambda: s[-3], lambda: s[True], lambda: s[1.0], lambda: s[0:1],
                lambda: s.__setitem__(5, 1), lambda: s.__setitem__(0, "x"),
                lambda: u[5], lambda: u[1.0], lambda: u[0:2:2], lambda: u.__setitem__(0, 1.5),
                lambda: u.fill_(1.7), lambda: u.copy_(m.UntypedStorage(3)), lambda: u.copy_(m.zeros(2))]
    for ours, theirs in zip(cases(ember), cases(torch)):
        _raises_like(ours, theirs)


def test_untyped_slices_alias():
    for m in (ember, torch):
        u = m.UntypedStorage([1, 2, 3, 4])
        s = u[1:3]
        assert type(s) is m.UntypedStorage and s.tolist() == [2, 3] and s.data_ptr() - u.data_ptr() == 1
        s[0] = 9
        assert u.tolist() == [1, 9, 3, 4]
        assert not s.resizable() and u.resizable()
        assert u[-1] == 4 and u[10:].tolist() == []


def test_copy_clone_and_conversions():
    e = ember.FloatStorage([1.0, 2.0])
    t = torch.FloatStorage([1.0, 2.0])
    # copy_ copies bytes, not values
    assert e.copy_(ember.IntStorage([1, 2])).tolist() == t.copy_(torch.IntStorage([1, 2])).tolist()
    _raises_like(lambda: e.copy_(ember.DoubleStorage([1, 2])), lambda: t.copy_(torch.DoubleStorage([1, 2])))
    e, t = ember.FloatStorage([1.5, -2.0, 0.0]), torch.FloatStorage([1.5, -2.0, 0.0])
    for conv in ("double", "float", "half", "bfloat16", "long", "int", "short", "char", "byte", "bool"):
        a, b = getattr(e, conv)(), getattr(t, conv)()
        assert a.tolist() == b.tolist() and str(a.dtype).split(".")[1] == str(b.dtype).split(".")[1], conv
    eu, tu = ember.UntypedStorage([1, 0, 0, 0, 200]), torch.UntypedStorage([1, 0, 0, 0, 200])
    assert eu.float().tolist() == tu.float().tolist() and eu.bool().tolist() == tu.bool().tolist()
    c = e.clone()
    assert c.tolist() == e.tolist() and c.data_ptr() != e.data_ptr()
    assert e.cpu() is e and eu.cpu() is eu
    d = copy.deepcopy(e)
    assert d.tolist() == e.tolist() and d.data_ptr() != e.data_ptr()
    assert ember.FloatStorage([1.0, 2.5]).type("ember.IntStorage").tolist() == [1, 2]
    assert ember.FloatStorage([1.0, 2.5]).type(ember.DoubleStorage).dtype == ember.float64


@pytest.mark.parametrize("name", ["float32", "int64", "bool", "bfloat16"])
def test_pickle_round_trip(name):
    e = ember.tensor([1, 0, 1], dtype=getattr(ember, name))
    s = pickle.loads(pickle.dumps(e.storage()))
    assert type(s) is ember.TypedStorage and s.dtype == e.dtype and s.tolist() == e.tolist()
    assert s.data_ptr() != e.data_ptr()
    # legacy storages come back as TypedStorage, as torch's do
    t = pickle.loads(pickle.dumps(torch.IntStorage([1, 2])))
    s = pickle.loads(pickle.dumps(ember.IntStorage([1, 2])))
    assert type(s) is ember.TypedStorage and type(t) is torch.TypedStorage and s.tolist() == t.tolist()
    u = pickle.loads(pickle.dumps(e.untyped_storage()))
    assert type(u) is ember.UntypedStorage and u.tolist() == e.untyped_storage().tolist()


def test_legacy_isinstance_and_is_storage():
    e = ember.arange(3.0)
    assert isinstance(e.storage(), ember.FloatStorage) and not isinstance(e.storage(), ember.IntStorage)
    assert isinstance(ember.FloatStorage(1), ember.TypedStorage)
    for m, x in ((ember, e), (torch, torch.arange(3.0))):
        assert m.is_storage(x.storage()) and m.is_storage(x.untyped_storage()) and m.is_storage(m.FloatStorage(1))
        assert not m.is_storage(x) and not m.is_storage([1])
    assert ember.Storage is ember.FloatStorage
    ember.set_default_dtype(ember.float64)
    try:
        assert ember.Storage is ember.DoubleStorage
    finally:
        ember.set_default_dtype(ember.float32)


def test_storage_deprecation_warning_text():
    ember.storage._set_always_warn_typed_storage_removal(True)
    torch.storage._set_always_warn_typed_storage_removal(True)
    try:
        with warnings.catch_warnings(record=True) as ours:
            warnings.simplefilter("always")
            ember.arange(2.0).storage()
        with warnings.catch_warnings(record=True) as theirs:
            warnings.simplefilter("always")
            torch.arange(2.0).storage()
        assert [str(w.message) for w in ours] == [str(w.message) for w in theirs]
        assert ours[0].category is theirs[0].category is UserWarning
        assert ours[0].filename == __file__  # points at the caller
        with warnings.catch_warnings(record=True) as ours:
            warnings.simplefilter("always")
            ember.arange(2.0).untyped_storage()
        assert not ours
    finally:
        ember.storage._set_always_warn_typed_storage_removal(False)
        torch.storage._set_always_warn_typed_storage_removal(False)


def test_share_memory_and_pinned():
    e = ember.arange(4.0)
    u = e.untyped_storage()
    assert not u.is_shared() and not e.storage().is_shared() and not u.is_pinned()
    assert u.share_memory_() is u
    assert e.is_shared() and u.is_shared() and e.storage().is_shared()
    e[0] = 5.0
    assert e.storage()[0] == 5.0
    s = ember.IntStorage([1, 2])
    assert s.share_memory_() is s and s.is_shared() and s.tolist() == [1, 2]


def test_resize_grows_in_place():
    for m in (ember, torch):
        u = m.UntypedStorage([1, 2, 3])
        assert u.resize_(5) is u and u.nbytes() == 5 and u.tolist()[:3] == [1, 2, 3]
        s = m.IntStorage([1, 2])
        assert s.resize_(4) is None and s.size() == 4 and s.tolist()[:2] == [1, 2]
    x = ember.tensor([1, 2, 3], dtype=ember.uint8)
    x.untyped_storage().resize_(8)
    assert x._storage_nbytes() == 8 and x.untyped_storage().nbytes() == 8 and x.tolist() == [1, 2, 3]
    _raises_like(lambda: ember.UntypedStorage([1, 2])[0:1].resize_(4), lambda: torch.UntypedStorage([1, 2])[0:1].resize_(4))
    with pytest.raises(RuntimeError):
        ember.UntypedStorage(2).resize_(-1)


def test_from_buffer():
    for order in ("native", "little", "big"):
        assert ember.UntypedStorage.from_buffer(b"abcd", order, dtype=ember.int16).tolist() == \
            torch.UntypedStorage.from_buffer(b"abcd", order, dtype=torch.int16).tolist()
        assert ember.IntStorage.from_buffer(b"abcdabcd", order).tolist() == \
            torch.IntStorage.from_buffer(b"abcdabcd", order).tolist()
    assert ember.UntypedStorage.from_buffer(b"abcd", "big", dtype=ember.int16, count=1, offset=2).tolist() == \
        torch.UntypedStorage.from_buffer(b"abcd", "big", dtype=torch.int16, count=1, offset=2).tolist()
    assert ember.TypedStorage.from_buffer(b"abcd", "little", dtype=ember.int16).tolist() == [25185, 25699]
    with pytest.raises(ValueError):
        ember.IntStorage.from_buffer(b"abc", "little")


def test_is_set_to_matches_torch():
    e, t = ember.arange(6.0), torch.arange(6.0)
    pairs = [(lambda x: x, lambda x: x), (lambda x: x, lambda x: x[:]), (lambda x: x, lambda x: x.view(2, 3)),
             (lambda x: x.view(6), lambda x: x), (lambda x: x, lambda x: x.clone()),
             (lambda x: x[1:], lambda x: x[1:]), (lambda x: x[1:], lambda x: x[2:])]
    for f, g in pairs:
        assert f(e).is_set_to(g(e)) == f(t).is_set_to(g(t))
    _raises_like(lambda: e.is_set_to([1]), lambda: t.is_set_to([1]))


def _layout(x):
    return tuple(x.shape), tuple(x.stride()), x.storage_offset(), x.tolist()


@pytest.mark.parametrize("case", [
    lambda m, x: ((x.view(2, 3)[1:],), {}),
    lambda m, x: ((), {}),
    lambda m, x: ((x.untyped_storage(),), {}),
    lambda m, x: ((x.untyped_storage(), 2, (2, 2)), {}),
    lambda m, x: ((x.untyped_storage(), 1, (2, 2), (1, 2)), {}),
    lambda m, x: ((x.storage(), 1, (2,)), {}),
    lambda m, x: ((), {"source": x.untyped_storage(), "storage_offset": 1, "size": (2,)}),
    lambda m, x: ((m.UntypedStorage(5),), {}),
])
def test_set_matches_torch(case):
    results = []
    for m in (ember, torch):
        x = m.arange(6.0)
        t = m.zeros(3)
        view_of_t = t[1:]
        args, kwargs = case(m, x)
        assert t.set_(*args, **kwargs) is t
        shape, stride, offset, values = _layout(t)
        if 0 not in shape and shape != (1,):  # (1,): a fresh 5-byte storage holds garbage
            assert t.untyped_storage().data_ptr() == x.data_ptr() or not args
        results.append((shape, stride, offset, values if shape != (1,) else None, view_of_t.tolist()))
    assert results[0] == results[1]


def test_set_aliases_and_grows_storage():
    for m in (ember, torch):
        x = m.arange(6.0)
        t = m.zeros(3).set_(x.untyped_storage())
        t[0] = 7.0
        assert x[0].item() == 7.0 and t.untyped_storage() is x.untyped_storage()
        t = m.zeros(3).set_(x.untyped_storage(), 5, (2,))  # past the end: the storage grows
        assert t.storage_offset() == 5 and x.untyped_storage().nbytes() >= 28 and t[0].item() == 5.0


def test_set_errors_match_torch():
    def cases(m):
        x = m.arange(6.0)
        return [lambda: m.zeros(3).set_(m.arange(3)), lambda: m.zeros(3).set_(m.IntStorage([1, 2])),
                lambda: m.zeros(3).set_(x.untyped_storage(), -1, (2,)),
                lambda: m.zeros(3, requires_grad=True).set_(x), lambda: m.zeros(3).set_([1]),
                lambda: m.zeros(3).set_(x, 1), lambda: m.zeros(3).set_(x.untyped_storage(), 0, (2, 3), (1,)),
                lambda: m.zeros(3).set_(x.untyped_storage(), 0, None, (1,))]
    for ours, theirs in zip(cases(ember), cases(torch)):
        _raises_like(ours, theirs)
    with pytest.raises(RuntimeError, match="Could not set tensor of type long int to a tensor of type float"):
        ember.zeros(3).set_(ember.arange(3))
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        ember.zeros(3, requires_grad=True).set_(ember.arange(3.0))


def test_storage_identity_survives_share_and_resize():
    for m in (ember, torch):
        t = m.arange(4.0)
        u = t.untyped_storage()
        u.share_memory_()
        assert t.untyped_storage() is u and t.data_ptr() == u.data_ptr()
        x = m.tensor([1, 2, 3], dtype=m.uint8)
        ux = x.untyped_storage()
        ux.resize_(64)
        assert x.untyped_storage() is ux and x.tolist() == [1, 2, 3]
