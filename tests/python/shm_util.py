"""Leak checks for Ember's named shared-memory segments (/dev/shm/ember_<creator pid>_...)."""
import os
import time


def _ours(name):
    # a concurrent test run may hold segments of its own: count those created here, by our children,
    # or by processes that are gone (nobody may still hold those for long)
    try:
        pid = int(name.split("_")[1])
    except (IndexError, ValueError):
        return False
    if pid == os.getpid():
        return True
    try:
        with open(f"/proc/{pid}/stat") as f:
            return int(f.read().rsplit(")", 1)[1].split()[1]) == os.getpid()
    except (OSError, IndexError, ValueError):
        return True  # the creator has exited


def ember_segments():
    return {f for f in os.listdir("/dev/shm") if f.startswith("ember_")}


def assert_no_new_segments(before, timeout=5.0):
    deadline = time.monotonic() + timeout
    while True:
        new = sorted(f for f in ember_segments() - before if _ours(f))
        if not new:
            return
        if time.monotonic() > deadline:
            raise AssertionError(f"leaked shared-memory segments: {new}")
        time.sleep(0.05)
