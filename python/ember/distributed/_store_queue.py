"""Queues on key-value stores (torch's Store.queue_push / queue_pop / queue_len) and QueueEmptyError.

Built from the store's own atomic operations, so they work on every Ember store (TCPStore, FileStore,
HashStore, PrefixStore) and between processes: a push takes the next slot number from a counter
(`add`) and writes the value there; a pop claims the oldest unclaimed slot with a per-slot counter
(the first `add` to reach 1 owns it, so two poppers never get the same value) and waits for the
value when its pusher has not written it yet. Claims happen in slot order, so the count of claims
is the queue's head. The queue's keys live under "<key>/__queue__/" (torch, whose stores have native
queues, does not count them in num_keys; Ember's stores do).
"""
import datetime
import time

from .. import _C

_D = _C._distributed


class QueueEmptyError(_D.DistStoreError):
    """Store.queue_pop(key, block=False) found the queue empty."""


QueueEmptyError.__module__ = "ember.distributed"


def _k(key, part):
    return f"{key}/__queue__/{part}"


def queue_push(self, key, value):
    """Append a value (str or bytes) to the queue named `key`."""
    slot = self.add(_k(key, "tail"), 1) - 1
    self.set(_k(key, f"slot/{slot}"), value)


def queue_len(self, key):
    """Number of values waiting in the queue named `key` (0 for a queue never pushed to)."""
    head = self.add(_k(key, "head"), 0)
    return max(self.add(_k(key, "tail"), 0) - head, 0)


def queue_pop(self, key, block=True):
    """Remove and return the oldest value of the queue `key`; when it is empty, wait up to the store's
    timeout (DistStoreError after it) or, with block=False, raise QueueEmptyError."""
    deadline = time.monotonic() + self.timeout.total_seconds()
    slot = self.add(_k(key, "head"), 0)
    while True:
        if slot >= self.add(_k(key, "tail"), 0):
            if not block:
                raise QueueEmptyError("queue is empty")
            left = deadline - time.monotonic()
            if left <= 0:
                raise _D.DistStoreError(f"queue_pop: timeout after {self.timeout}, queue {key!r} is empty")
            try:  # until its pusher writes it (checking again now and then: another popper may take it first)
                self.wait([_k(key, f"slot/{slot}")], datetime.timedelta(seconds=min(left, 0.5)))
            except _D.DistStoreError:
                pass
            continue
        if self.add(_k(key, f"claim/{slot}"), 1) == 1:
            self.add(_k(key, "head"), 1)
            value = self.get(_k(key, f"slot/{slot}"))  # waits when the pusher has the slot but no value yet
            self.delete_key(_k(key, f"slot/{slot}"))
            return value
        slot += 1  # another rank popped it


def _install():
    for fn in (queue_push, queue_pop, queue_len):
        setattr(_D.Store, fn.__name__, fn)


_install()
