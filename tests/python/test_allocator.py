"""The CPU allocator: freed tensors leave the live count at once, large blocks are reused (and
never handed out twice), the cache is bounded by EMBER_CPU_CACHE_MB and can be emptied."""
import os
import subprocess
import sys

import pytest

import ember

MIB = 1 << 20
# scripts/sanitize.sh builds without the allocator's caches (so ASan sees every free): nothing to test
pytestmark = pytest.mark.skipif(os.environ.get("EMBER_SANITIZED") == "1", reason="allocator caches are off in "
                                "sanitizer builds")


def _cached():
    return ember.cpu.memory_reserved() - ember.cpu.memory_allocated()


def test_freed_at_once_and_block_reused():
    base = ember.cpu.memory_allocated()
    x = ember.empty(MIB)  # 4 MiB: a cached size class
    ptr = x.data_ptr()
    assert ember.cpu.memory_allocated() == base + 4 * MIB
    del x
    assert ember.cpu.memory_allocated() == base  # a freed tensor stops counting at once, cached or not
    assert _cached() >= 4 * MIB
    y = ember.zeros(MIB)  # same size: the kept block comes back, and zeros() still zeroes it
    assert y.data_ptr() == ptr
    assert float(y.abs().sum()) == 0.0
    z = ember.ones(MIB)
    assert z.data_ptr() != ptr  # y is alive: never handed out twice


def test_small_blocks_are_not_cached_and_empty_cache_releases():
    ember.cpu.empty_cache()
    assert _cached() == 0
    ember.empty(1000)  # freed at once; below 1 MiB: straight back to malloc
    assert _cached() == 0
    ember.empty(3 * MIB)
    assert _cached() == 12 * MIB
    ember.cpu.empty_cache()
    assert _cached() == 0


def test_budget_bounds_the_cache():
    code = ("import ember; [ember.empty(1 << 20) for _ in range(8)]; "  # eight 4 MiB blocks freed
            "print(ember.cpu.memory_reserved() - ember.cpu.memory_allocated())")
    for mb, expect in (("0", 0), ("10", 8 * (1 << 20))):
        env = dict(os.environ, EMBER_CPU_CACHE_MB=mb, PYTHONPATH=os.pathsep.join(sys.path))
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
        assert out.returncode == 0, out.stderr
        assert int(out.stdout.split()[-1]) <= expect
        if mb == "10":
            assert int(out.stdout.split()[-1]) > 0
