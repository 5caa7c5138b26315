"""API surface against PyTorch (tools/api_surface.py): each namespace keeps at least the share of
torch's public names it has today, and the names Ember has are the same kind of thing as torch's."""
import math
import os
import sys
import types

import pytest

torch = pytest.importorskip("torch")

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "tools"))
import api_surface  # noqa: E402

# Coverage % (of the names not left out on purpose) measured against torch 2.13.0, rounded down. The floors only go up: raise one when a
# namespace gains names, never lower one to let a removal through.
FLOORS = {
    "torch": 99,
    "Tensor": 98,
    "nn": 99,
    "nn.functional": 100,
    "nn.init": 100,
    "nn.utils": 100,
    "optim": 94,
    "optim.lr_scheduler": 100,
    "linalg": 100,
    "fft": 100,
    "special": 100,
    "masked": 100,
    "distributions": 100,
    "func": 100,
    "autograd": 100,
    "cuda": 84,
    "amp": 100,
    "testing": 100,
    "utils.data": 100,
    "utils.checkpoint": 100,
    "nn.utils.parametrize": 100,
    "backends": 100,
    "onnx": 62,
    "jit": 88,
    "distributed": 100,
    "distributed.algorithms.join": 100,
    "distributed.device_mesh": 100,
    "distributed.optim": 100,
    "nn.parallel": 100,
    "utils.tensorboard": 100,
    "random": 100,
    "functional": 100,
    "return_types": 98,
    "compiler": 33,
    "hub": 100,
    "fx": 100,
    "overrides": 81,
    "utils.benchmark": 100,
}

_ROWS = {label: (names, have, lack, left) for label, names, have, lack, left in api_surface.measure()}


def test_every_namespace_has_a_floor():
    assert sorted(FLOORS) == sorted(_ROWS)


@pytest.mark.parametrize("label", [label for label, _ in api_surface.NAMESPACES])
def test_coverage_floor(label):
    names, have, lack, _ = _ROWS[label]
    assert names, f"torch lists no public names in {label}"
    pct = api_surface.coverage(have, names)
    assert math.floor(pct) >= FLOORS[label], (
        f"{label}: {pct:.1f}% < floor {FLOORS[label]}%; missing now: {lack}")


@pytest.mark.parametrize("label,path", api_surface.NAMESPACES)
def test_present_names_are_the_same_kind(label, path):
    """Each torch name Ember defines reads without error and is not a dead placeholder: callable in
    torch => callable in Ember, and classes stay classes, modules stay modules, None only if torch's is."""
    t_obj, e_obj = api_surface.resolve("torch", path), api_surface.resolve("ember", path)
    if e_obj is None:
        pytest.skip(f"ember has no {label}")
    e_dir = set(dir(e_obj))
    bad = []
    for name in api_surface.torch_names(path):
        if name not in e_dir:
            continue
        tv = getattr(t_obj, name)
        try:
            ev = getattr(e_obj, name)
        except Exception as exc:  # noqa: BLE001 - any failure to read a listed name is the bug
            bad.append(f"{name}: reading it raises {type(exc).__name__}: {exc}")
            continue
        if ev is None and tv is not None:
            bad.append(f"{name}: None in ember")
        elif callable(tv) and not callable(ev):
            bad.append(f"{name}: callable in torch, {type(ev).__name__} in ember")
        elif isinstance(tv, type) and not isinstance(ev, type):
            bad.append(f"{name}: a class in torch, {type(ev).__name__} in ember")
        elif isinstance(tv, types.ModuleType) and not isinstance(ev, types.ModuleType):
            bad.append(f"{name}: a module in torch, {type(ev).__name__} in ember")
    assert not bad, f"{label}: " + "; ".join(bad)


def test_tool_output(capsys):
    """The table lists every namespace in order with its counts; --missing lists exactly the gaps."""
    assert api_surface.main([]) == 0
    out = capsys.readouterr().out
    lines = [ln for ln in out.splitlines() if ln.startswith("| ") and not ln.startswith("| namespace")]
    assert [ln.split(" | ")[0][2:] for ln in lines[:-1]] == [label for label, _ in api_surface.NAMESPACES]
    for ln in lines[:-1]:
        label, n, o, h, _ = [c.strip() for c in ln.strip("|").split("|")]
        names, have, _, left = _ROWS[label]
        assert (int(n), int(o), int(h)) == (len(names) + len(left), len(left), len(have))
    gappy = next(label for label, _ in api_surface.NAMESPACES if _ROWS[label][2])
    assert api_surface.main(["--missing", gappy]) == 0
    listed = capsys.readouterr().out.splitlines()[1:]
    assert listed == _ROWS[gappy][2] == sorted(listed)
    with pytest.raises(SystemExit):
        api_surface.main(["--missing", "no.such.namespace"])
    assert api_surface.main(["--left-out"]) == 0
    reasons = capsys.readouterr().out.splitlines()
    assert len(reasons) == sum(len(r[3]) for r in _ROWS.values()) and all(": " in r for r in reasons)


def test_left_out_entries_are_live():
    """Each LEFT_OUT pattern still matches a torch name Ember lacks: one that matches nothing (renamed in
    torch, or implemented in Ember since) is stale and must go."""
    import re
    for ns, pattern, reason in api_surface.LEFT_OUT:
        assert reason
        assert any(re.fullmatch(pattern, n) for n in _ROWS[ns][3]), f"stale LEFT_OUT entry: {ns} {pattern}"


def test_left_out_names_are_really_absent():
    for label, (names, have, lack, left) in _ROWS.items():
        assert not set(left) & set(have), label
