"""Every ember::Error kind reaches Python as PyTorch's exception type, with its message, through both
entry points of the C++ module: the hand-written bindings (generated ops, indexing: EMBER_PY_CATCH)
and the nanobind-bound functions (nanobind's exception translator). Both use one mapping
(csrc/python/exceptions.cpp)."""
import pytest

import ember

torch = pytest.importorskip("torch")


def _raised(fn, lib):
    with pytest.raises(Exception) as info:
        fn(lib)
    return type(info.value), str(info.value)


def _ember_spelling(message):
    # PyTorch names itself in a few messages; Ember says the same with its own name
    return message.replace("Torch", "Ember").replace("torch.", "ember.")


# (name, ErrorKind, call): raised by C++ code under a hand-written binding
HAND_WRITTEN = [
    ("add of mismatched shapes", "Runtime", lambda T: T.zeros(2) + T.zeros(3)),
    ("index out of bounds", "Index", lambda T: T.zeros(3)[5]),
    ("mask of the wrong shape", "Index", lambda T: T.zeros(3)[T.tensor([True, False])]),
    ("assign a str", "Type", lambda T: T.zeros(3).__setitem__(0, "a")),
    ("negative slice step", "Value", lambda T: T.zeros(3)[::-1]),
    ("round of an integer tensor", "NotImplemented", lambda T: T.round(T.tensor([1, 2]), decimals=1)),
    ("lerp of integer tensors", "NotImplemented", lambda T: T.lerp(T.tensor([1]), T.tensor([2]), 0.5)),
] + ([] if ember.cuda._is_compiled() else [  # a CUDA build raises the CUDA build's error (test_creation.py)
    ("a CUDA tensor without CUDA", "Assertion", lambda T: T.zeros(2, device="cuda")),
])

# raised by C++ code under a nanobind-bound function
NANOBIND = [
    ("item of 3 elements", "Runtime", lambda T: T.zeros(3).item()),
    ("bad device string", "Runtime", lambda T: T.device("cpu", -2)),
    ("size of a missing dim", "Index", lambda T: T.zeros(3).size(5)),
    ("stride of a missing dim", "Index", lambda T: T.zeros(3).stride(-3)),
    ("integer default dtype", "Type", lambda T: T.set_default_dtype(T.int64)),
]

PYTHON_TYPE = {
    "Runtime": RuntimeError, "Index": IndexError, "Type": TypeError, "Value": ValueError,
    "NotImplemented": NotImplementedError, "Assertion": AssertionError,
}


@pytest.mark.parametrize("name,kind,call", HAND_WRITTEN + NANOBIND, ids=[c[0] for c in HAND_WRITTEN + NANOBIND])
def test_error_kind_matches_torch(name, kind, call):
    ember_type, ember_msg = _raised(call, ember)
    torch_type, torch_msg = _raised(call, torch)
    assert ember_type is PYTHON_TYPE[kind] is torch_type
    assert ember_msg == _ember_spelling(torch_msg)


def test_every_kind_is_covered_through_the_hand_written_bindings():
    # (a CUDA build has no AssertionError case: its one, "not compiled with CUDA", is a RuntimeError there)
    assert {kind for _, kind, _ in HAND_WRITTEN} == set(PYTHON_TYPE) - ({"Assertion"} if ember.cuda._is_compiled() else set())


def test_cpp_exceptions_keep_their_types_after_a_caught_error():
    # the translator must leave nothing behind: a later error of another kind has its own type
    with pytest.raises(IndexError):
        ember.zeros(3).size(5)
    with pytest.raises(TypeError):
        ember.set_default_dtype(ember.int64)
    assert ember.get_default_dtype() is ember.float32
