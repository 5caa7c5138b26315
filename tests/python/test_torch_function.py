"""PyTorch's __torch_function__ protocol on Ember's generated functions and Tensor methods: a call whose
arguments match no signature, with an argument that is not a Tensor but has __torch_function__ (a
tensor-like type, torch.fx's Proxy), is answered by that type; compared with torch where it is installed."""
import pytest

import ember


class Logged:
    """A tensor-like that answers every call with what it was given."""

    def __init__(self, tag):
        self.tag = tag

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        return (cls.__name__, func.__name__, tuple(t.__name__ for t in types),
                tuple(a.tag if isinstance(a, Logged) else type(a).__name__ for a in args), tuple(sorted(kwargs or {})))


class LoggedChild(Logged):
    """A subclass: asked before its base class."""


class Declines:
    """Answers NotImplemented, so the next type is asked, then TypeError."""

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        return NotImplemented


def calls(lib):
    x = lib.ones(2)
    return [
        lambda: lib.add(Logged("a"), 2),
        lambda: lib.add(x, Logged("b"), alpha=3),
        lambda: lib.cat([x, Logged("c")], dim=0),
        lambda: lib.stack((Logged("d"), Logged("e"))),
        lambda: x.add(Logged("f")),
        lambda: x.mul_(Logged("g")),
        lambda: lib.where(x > 0, Logged("h"), x),
        lambda: lib.add(Logged("i"), LoggedChild("j")),
        lambda: lib.nn.functional.gelu(Logged("k")) if lib is ember else ("Logged", "gelu", ("Logged",), ("k",), ()),
        lambda: lib.sum(Logged("l"), dim=0, keepdim=True),
    ]


def test_calls_go_to_the_tensor_like():
    got = [f() for f in calls(ember)]
    assert got[0] == ("Logged", "add", ("Logged",), ("a", "int"), ())
    assert got[1] == ("Logged", "add", ("Logged",), ("Tensor", "b"), ("alpha",))
    assert got[4] == ("Logged", "add", ("Logged",), ("Tensor", "f"), ())  # a method: the tensor comes first
    assert got[7][0] == "LoggedChild" and got[7][2] == ("LoggedChild", "Logged")  # the subclass first
    torch = pytest.importorskip("torch")
    expected = [f() for f in calls(torch)]
    assert [g[:4] for g in got] == [e[:4] for e in expected]
    assert [g[4] for g in got] == [e[4] for e in expected]


def test_no_answer_and_no_protocol_raise_type_error():
    with pytest.raises(TypeError, match="no implementation found for 'ember.add' on types that implement "
                                        r"__torch_function__: \[<class '.*Declines'>\]"):
        ember.add(Declines(), 1)
    with pytest.raises(TypeError, match=r"add\(\): argument 'input' \(position 1\) must be Tensor, not object"):
        ember.add(object(), 1)
    torch = pytest.importorskip("torch")
    with pytest.raises(TypeError):
        torch.add(Declines(), 1)


def test_matching_calls_never_ask():
    class Loud:
        @classmethod
        def __torch_function__(cls, *a, **k):
            raise AssertionError("asked")

    x = ember.arange(3.0)
    assert ember.add(x, 1).tolist() == [1.0, 2.0, 3.0]
    with pytest.raises(AssertionError, match="asked"):
        ember.add(x, Loud())


# ---- ember.overrides: the protocol from Python
class Tagged:
    """A tensor-like that answers with the function's name and its arguments."""

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        return ("Tagged", func.__name__, len(args), tuple(sorted(kwargs or {})))


def overrides_cases(lib):
    o = lib.overrides

    @o.wrap_torch_function(lambda a, b=None: (a, b))
    def scaled(a, b=None):
        return "own"

    def manual(a, b):
        if o.has_torch_function((a, b)):
            return o.handle_torch_function(manual, (a, b), a, b)
        return "own"

    t = lib.ones(2)
    return [scaled(1), scaled(Tagged(), b=2), scaled(1, Tagged()), manual(t, 2), manual(t, Tagged()),
            o.has_torch_function((t, 1)), o.has_torch_function((t, Tagged())), o.has_torch_function([]),
            o.has_torch_function((lib.nn.Parameter(lib.ones(1)),)),
            o.is_tensor_like(t), o.is_tensor_like(Tagged()), o.is_tensor_like(3), o.is_tensor_like(None),
            o.is_tensor_method_or_property(lib.Tensor.add), o.is_tensor_method_or_property(lib.add),
            o.resolve_name(lib.add), o.resolve_name(lib.Tensor.add), o.resolve_name(lib.nn.functional.relu),
            lib.add in o.get_overridable_functions()[lib], lib.Tensor.add in o.get_overridable_functions()[lib.Tensor]]


def test_overrides_helpers():
    got = overrides_cases(ember)
    assert got[:5] == ["own", ("Tagged", "scaled", 1, ("b",)), ("Tagged", "scaled", 2, ()), "own",
                       ("Tagged", "manual", 2, ())]
    assert got[5:] == [False, True, False, False, True, True, False, False, True, False, "ember.add",
                       "ember.Tensor.add", "ember.nn.functional.relu", True, True]
    with pytest.raises(TypeError, match="no implementation found for 'ember.add' on types that implement "
                                        "__torch_function__"):
        ember.overrides.handle_torch_function(ember.add, (Declines(),), Declines(), 1)
    assert ember.overrides.get_ignored_functions() and ember.nn.functional.relu not in \
        ember.overrides.get_overridable_functions()[ember.nn.functional]
    with ember.overrides.enable_reentrant_dispatch():
        pass
    torch = pytest.importorskip("torch")
    theirs = [str(v).replace("torch", "ember") if isinstance(v, str) else v for v in overrides_cases(torch)]
    assert got == theirs


def test_a_handler_that_calls_back_gets_the_argument_error():
    class Echo:  # calls the function again with itself, as torch.Tensor's own __torch_function__ does
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            return func(*args, **(kwargs or {}))

    with pytest.raises(TypeError, match=r"add\(\): argument 'input' \(position 1\) must be Tensor, not Echo"):
        ember.add(Echo(), 1)
    torch = pytest.importorskip("torch")
    with pytest.raises(TypeError, match="must be Tensor"):  # a torch tensor given to Ember: no endless recursion
        ember.add(torch.ones(2), 1)
    with pytest.raises(TypeError):
        ember.cat([ember.ones(2), torch.ones(2)])
