"""A short fuzzing campaign over every op in ops.yaml (tests/fuzz/fuzz_ops.py): generated calls with
edge values must return or raise an ordinary exception, never crash, hang or raise SystemError.
The long campaigns run with scripts/sanitize.sh (ASan + UBSan)."""
import os
import sys

import pytest

pytest.importorskip("hypothesis")
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fuzz"))
import fuzz_ops  # noqa: E402


def test_schemas_parse_for_every_op():
    ops = fuzz_ops.load_ops()
    assert len(ops) > 300
    for op in ops:  # every argument type is generated, or left at its default on purpose
        for a in op["args"]:
            assert a["type"].rstrip("?") in fuzz_ops.KNOWN_TYPES, (op["name"], a)


def test_short_campaign():
    calls = int(os.environ.get("EMBER_FUZZ_CALLS", "1500"))
    report = fuzz_ops.campaign(calls, seed=int(os.environ.get("EMBER_FUZZ_SEED", "0")), timeout=30, progress=False)
    assert report["calls"] == calls
    assert report["ok"] > calls // 5, report  # the generator reaches real work, not only argument errors
    assert not report["failures"], report["failures"][:3]
