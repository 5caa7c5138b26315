"""Every hand-written op in ops.yaml names the file that holds its body (`body:`), and that file does
define ember::native::<op>: the generated files copy the name, so grep leads from a declaration to
its body. Fix a failure with `python tools/codegen/locate_bodies.py --write`."""
import copy
import os
import sys

import pytest

yaml = pytest.importorskip("yaml")
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tools", "codegen"))
import locate_bodies  # noqa: E402


@pytest.fixture(scope="module")
def entries_and_defs():
    with open(os.path.join(ROOT, "ops.yaml")) as f:
        entries = yaml.safe_load(f)
    return entries, locate_bodies.native_definitions()


def test_every_body_is_where_ops_yaml_says(entries_and_defs):
    entries, defs = entries_and_defs
    bad = locate_bodies.check(entries, defs)
    assert not bad, "ops.yaml body: keys out of date (run tools/codegen/locate_bodies.py --write):\n" + "\n".join(
        f"  {f}: says {have!r}, defined in {want}" for f, have, want in bad)


def test_the_check_catches_a_wrong_or_missing_body(entries_and_defs):
    entries, defs = entries_and_defs
    hand = [e for e in entries if "kernel" not in e]
    wrong = copy.deepcopy(hand[:3])
    wrong[0]["body"] = "ops/no_such_file.cpp"
    del wrong[1]["body"]
    wrong[2]["kernel"] = "unary Abs"  # a kernel op must not claim a hand-written body
    assert [w["func"] for w in wrong] == [f for f, _, _ in locate_bodies.check(wrong, defs)]


def test_macro_generated_bodies_are_found():
    text = "#define MK(N) Tensor conv##N##d(const Tensor& x) { return x; }\nMK(1)\nMK(2)\n"
    assert locate_bodies.macro_names(text) == ["conv1d", "conv2d"]
