"""Handles that remove hooks (module hooks, optimizer hooks)."""
import weakref
from collections import OrderedDict

__all__ = ["RemovableHandle"]


class RemovableHandle:
    """Removes a hook from the ordered dict(s) it was registered in.

    hooks_dict: the dict holding the hook under ``self.id``; extra_dict: one dict or a list of dicts
    keyed by the same id (with_kwargs / always_call flags) cleaned up together with it.
    """

    next_id = 0

    def __init__(self, hooks_dict, *, extra_dict=None):
        self.hooks_dict_ref = weakref.ref(hooks_dict)
        self.id = RemovableHandle.next_id
        RemovableHandle.next_id += 1
        if isinstance(extra_dict, dict):
            extra_dict = [extra_dict]
        self.extra_dict_ref = tuple(weakref.ref(d) for d in (extra_dict or ()))

    def remove(self):
        for ref in (self.hooks_dict_ref,) + self.extra_dict_ref:
            d = ref()
            if d is not None:
                d.pop(self.id, None)

    def __getstate__(self):
        return (self.hooks_dict_ref(), self.id, tuple(ref() for ref in self.extra_dict_ref))

    def __setstate__(self, state):
        hooks = state[0] if state[0] is not None else OrderedDict()
        self._keep = hooks  # a weakref alone would let an unpickled dict die at once
        self.hooks_dict_ref = weakref.ref(hooks)
        self.id = state[1]
        RemovableHandle.next_id = max(RemovableHandle.next_id, self.id + 1)
        extras = state[2] if len(state) > 2 and state[2] is not None else ()
        self.extra_dict_ref = tuple(weakref.ref(d) for d in extras if d is not None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


def add_hook(hooks_dict, hook, *, extra_dict=None):
    """Stores `hook` in `hooks_dict` under a new handle's id and returns the handle that removes it."""
    handle = RemovableHandle(hooks_dict, extra_dict=extra_dict)
    hooks_dict[handle.id] = hook
    return handle
