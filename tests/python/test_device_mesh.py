"""DeviceMesh and init_device_mesh in 4 processes (Gloo, loopback): layout, slicing, groups along each
dimension, flattening, explicit and 3-d meshes, errors; each rank's answers equal torch's where torch is
installed. DDP over a mesh's dimension averages within that dimension only."""
import importlib.util
import os

import pytest

import dist_util

pytestmark = pytest.mark.skipif(os.name != "posix", reason="multi-process tests need fork/exec on POSIX")

_PROBE = ("import sys; sys.path.insert(0, {here!r}); sys.argv = ['mesh_probe'] + sys.argv[1:]; "
          "import mesh_probe; mesh_probe.main()").format(here=dist_util.HERE)


@pytest.fixture(scope="module")
def ember_answers():
    return dist_util.run_script(_PROBE, 4, "ember", timeout=180)


def test_mesh_layout_groups_and_slices(ember_answers):
    r0, r1, r2, r3 = ember_answers
    assert r0["2d"][1] == [[0, 1], [2, 3]]
    assert [r["2d"][6] for r in ember_answers] == [(0, 0), (0, 1), (1, 0), (1, 1)]
    assert r3["2d"][9:11] == ([1, 3], [2, 3])          # dp group: the column, tp group: the row
    assert r1["tp"][1] == [0, 1] and r1["dp"][1] == [1, 3]
    assert [r["sums"] for r in ember_answers] == [(3.0, 4.0), (3.0, 6.0), (7.0, 4.0), (7.0, 6.0)]
    assert [r["flat"][4] for r in ember_answers] == [10.0] * 4
    assert r0["explicit"][2] is None and r1["explicit"][2] == (0, 1) and r3["explicit"][2] == (0, 0)
    assert r2["from_group"] is None and r1["from_group"][2] == (1,)
    assert r0["2d"][0] == "DeviceMesh((dp=2, tp=2), 'cpu', stride=(2, 1))"
    assert r0["errors"] == ("RuntimeError", "RuntimeError", "KeyError", "KeyError", "KeyError", "RuntimeError",
                            "RuntimeError", "RuntimeError", "RuntimeError")


@pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="torch not installed")
def test_every_rank_answers_as_torch(ember_answers):
    torch_answers = dist_util.run_script(_PROBE, 4, "torch", timeout=180)
    for rank, (mine, theirs) in enumerate(zip(ember_answers, torch_answers)):
        for key in theirs:
            assert mine[key] == theirs[key], (rank, key, mine[key], theirs[key])


def test_ddp_over_one_mesh_dimension():
    a = dist_util.run("ddp_on_mesh", 4)
    for r in a:
        assert r["mesh_group"] == r["expected_group"]
    # ranks of one dp column end with equal parameters, the two columns differ (their data differ)
    assert all((x == y).all() for x, y in zip(a[0]["params"], a[2]["params"]))
    assert all((x == y).all() for x, y in zip(a[1]["params"], a[3]["params"]))
    assert any((x != y).any() for x, y in zip(a[0]["params"], a[1]["params"]))
    assert a[0]["errors"] == ("RuntimeError", "RuntimeError")
