"""ember.futures.Future against torch.futures.Future: completion, chaining, errors, collect_all and
wait_all, completion from another thread. The same script runs on both libraries where torch is
installed; the rest needs no torch."""
import threading
import time

import pytest

import ember
from ember.futures import Future, collect_all, wait_all


def _script(lib):
    """What a user observes of a library's futures, as a list of plain values."""
    F, collect, wait = lib.futures.Future, lib.futures.collect_all, lib.futures.wait_all
    seen = []
    f = F()
    seen.append(f.done())
    f.set_result(3)
    seen += [f.done(), f.wait(), f.value()]
    try:
        f.set_result(4)
    except RuntimeError as e:
        seen.append(("twice", "only be marked completed once" in str(e)))
    g = F()
    try:
        g.set_exception(3)
    except AssertionError:
        seen.append("set_exception needs an exception")
    g.set_exception(ValueError("boom"))
    for call in (g.wait, g.value):
        try:
            call()
        except ValueError as e:
            seen.append(("error", str(e)))
    h = F()
    order = []
    h.add_done_callback(lambda fut: order.append(("cb", fut.value())))
    child = h.then(lambda fut: fut.value() + 1)
    grandchild = child.then(lambda fut: fut.value() * 10)
    seen.append(child.done())
    h.set_result(1)
    seen += [order, child.wait(), grandchild.wait()]
    late = []
    h.add_done_callback(lambda fut: late.append(fut.value()))  # already done: runs at once
    seen.append(late)
    bad = F()
    chained = bad.then(lambda fut: 1 / 0)
    bad.set_result(0)
    try:
        chained.wait()
    except RuntimeError as e:
        seen.append(("then error", "ZeroDivisionError" in str(e)))
    upstream = F()
    passes = upstream.then(lambda fut: fut.value())  # the callback re-raises the upstream error
    upstream.set_exception(KeyError("k"))
    try:
        passes.wait()
    except RuntimeError as e:
        seen.append(("upstream error", "KeyError" in str(e)))
    a, b = F(), F()
    al = collect([a, b])
    a.set_result("x")
    seen.append(al.done())
    b.set_result("y")
    seen.append([x.value() for x in al.wait()])
    seen.append(wait([a, b]))
    c, d = F(), F()
    c.set_result(1)
    d.set_exception(KeyError("k"))
    try:
        wait([c, d])
    except KeyError as e:
        seen.append(("wait_all", str(e)))
    seen.append(collect([]).wait())
    return seen


def test_futures_behave_as_documented():
    seen = _script(ember)
    assert seen[:4] == [False, True, 3, 3]
    assert ("twice", True) in seen and "set_exception needs an exception" in seen
    assert ("error", "boom") in seen
    assert [("cb", 1)] in seen and 2 in seen and 20 in seen and [1] in seen
    assert ("then error", True) in seen and ("upstream error", True) in seen
    assert ["x", "y"] in seen and ("wait_all", "'k'") in seen and [] == seen[-1]


def test_futures_match_torch():
    torch = pytest.importorskip("torch")
    assert _script(ember) == _script(torch)


def test_value_before_completion_raises():
    with pytest.raises(RuntimeError):
        Future().value()


def test_generic_annotation():
    assert Future[ember.Tensor] == Future[ember.Tensor]  # hooks annotate -> Future[Tensor]


def test_completed_from_another_thread():
    f = Future()
    ran_on = []
    child = f.then(lambda fut: ran_on.append(threading.current_thread().name) or fut.value() * 2)

    def later():
        time.sleep(0.05)
        f.set_result(21)
    t = threading.Thread(target=later, name="completer")
    t.start()
    assert child.wait() == 42  # waits without holding up the other thread
    t.join()
    assert ran_on == ["completer"]  # callbacks run where the future is completed


def test_collect_all_checks_its_arguments():
    with pytest.raises(TypeError):
        collect_all([Future(), 3])
    assert wait_all([]) == []
