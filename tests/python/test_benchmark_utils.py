"""ember.utils.benchmark (torch.utils.benchmark): Timer's measurements, Measurement's statistics and
repr, and Compare's tables, against torch's on the same recorded times (the timing itself is only
checked for shape: the machines are shared and noisy)."""
import json
import os
import subprocess
import sys

import pytest

import ember
import ember.utils.benchmark as benchmark

PROBE = r'''
import json, random, sys
def build(bm):
    r, ms = random.Random(0), []
    for label in ("add", "mul"):
        for threads in (1, 4):
            for sub in ("small", "large"):
                for desc in ("float", "double"):
                    base = (3e-6 if sub == "small" else 2.5e-3) * (1.3 if desc == "double" else 1) / threads
                    noise = 0.4 if (sub == "large" and desc == "double") else 0.02
                    times = [base * (1 + noise * r.random()) * 100 for _ in range(20)]
                    spec = bm.TaskSpec(stmt="x + y", setup="pass", label=label, sub_label=sub, description=desc,
                                       num_threads=threads)
                    ms.append(bm.Measurement(100, times, spec))
    return ms
def show(bm):
    ms = build(bm)
    out = [repr(ms[0]).split("\n", 1)[1], repr(ms[7]).split("\n", 1)[1], ms[3].median, ms[3].iqr, ms[3].mean,
           ms[7].significant_figures, ms[7].has_warnings, ms[0].has_warnings]
    c = bm.Compare(ms)
    out.append(str(c))
    c.trim_significant_figures(); out.append(str(c))
    c.highlight_warnings(); out.append(str(c))
    c.colorize(); out.append(str(c))
    c.colorize(rowwise=True); out.append(str(c))
    out += [bm.select_unit(t) for t in (3e-10, 3e-7, 4e-4, 0.2, 12.0)]
    m1 = bm.Measurement(10, [1e-3, 2e-3], ms[0].task_spec)
    m2 = bm.Measurement(5, [1e-3], ms[0].task_spec)
    out.append([(m.number_per_run, m.times) for m in bm.Measurement.merge([m1, m2])])
    single = bm.Measurement(7, [1e-3], bm.TaskSpec("f(x)", "import math\nx = 1", description="one"))
    out.append(repr(single).split("\n", 1)[1])
    return out
if sys.argv[1] == "torch":
    import torch.utils.benchmark as bm
else:
    sys.path.insert(0, sys.argv[2]); import ember.utils.benchmark as bm
print(json.dumps(show(bm)))
'''


def _run_probe(which):
    root = os.path.join(os.path.dirname(__file__), "..", "..", "python")
    out = subprocess.run([sys.executable, "-c", PROBE, which, root], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def test_statistics_repr_and_tables_match_torch():
    pytest.importorskip("torch")
    ours, theirs = _run_probe("ember"), _run_probe("torch")
    assert len(ours) == len(theirs)
    for i, (a, b) in enumerate(zip(ours, theirs)):
        if isinstance(a, float):
            assert a == pytest.approx(b, rel=1e-12), i
        else:
            assert a == b, (i, a, b)


def test_measurement_and_helpers():
    spec = benchmark.TaskSpec("x + 1", "pass", label="lab", sub_label="sub")
    m = benchmark.Measurement(4, [4e-6, 8e-6, 6e-6, 5e-6], spec)
    assert m.times == [1e-6, 2e-6, 1.5e-6, 1.25e-6]
    assert m.median == pytest.approx(1.375e-6) and m.mean == pytest.approx(1.4375e-6)
    assert m.label == "lab" and m.title == "lab: sub" and m.as_row_name == "sub" and m.env == "Unspecified env"
    assert m.has_warnings and not m.meets_confidence(0.1)
    assert benchmark.trim_sigfig(3.14159, 2) == pytest.approx(3.1)
    assert benchmark.select_unit(2.5e-5) == ("us", 1e-6) and benchmark.unit_to_english("ms") == "millisecond"
    assert benchmark.ordered_unique([3, 1, 3, 2, 1]) == [3, 1, 2]
    with pytest.raises(AttributeError):
        m.no_such_field
    with pytest.raises(ValueError, match="Expected an instance of `Measurement`"):
        benchmark.Compare([1])


def test_timer_measures_and_restores_threads():
    before = ember.get_num_threads()
    t = benchmark.Timer("x.sum()", setup="y = 2", globals={"x": ember.ones(8)}, label="sum", num_threads=1)
    one = t.timeit(50)
    assert one.number_per_run == 50 and len(one.raw_times) == 1 and one.median > 0
    seen = []
    blocked = t.blocked_autorange(callback=lambda n, s: seen.append((n, s)), min_run_time=0.01)
    assert blocked.number_per_run >= 1 and len(blocked.times) == len(seen) and sum(blocked.raw_times) >= 0.01
    adaptive = benchmark.Timer("torch.ones(2) + 1").adaptive_autorange(min_run_time=0.01, max_run_time=0.5)
    assert adaptive.median > 0 and len(adaptive.times) >= 1
    assert ember.get_num_threads() == before
    assert "sum" in repr(blocked) and "thread" in repr(blocked)
    with pytest.raises(NotImplementedError, match="blocked_autorange"):
        t.repeat()
    with pytest.raises(NotImplementedError, match="blocked_autorange"):
        t.autorange()
    with pytest.raises(ValueError, match="only a `str` stmt"):
        benchmark.Timer(lambda: None)
    with pytest.raises(ValueError, match="global_setup is C\\+\\+ only"):
        benchmark.Timer("pass", global_setup="int x;")
    with pytest.raises(ValueError, match="Invalid language"):
        benchmark.Timer("pass", language="fortran")
