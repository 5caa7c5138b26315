"""Module-level bool flags of ember.backends.* that validate assignments as PyTorch's setters do
(a module of its own: the backend submodules use it, and the package imports the submodules)."""
import contextlib
import sys
import types


class _Flag:
    """A module-level bool flag that rejects non-bools as PyTorch's setters do."""

    def __init__(self, setter_name, default, on_change=None):
        self.setter_name, self.value, self.on_change = setter_name, default, on_change

    def __get__(self, obj, objtype=None):
        return self.value

    def __set__(self, obj, value):
        if not isinstance(value, bool):
            raise RuntimeError(f"{self.setter_name} expects a bool, but got {type(value).__name__}")
        self.value = value
        if self.on_change is not None:  # the C++ side reads it too
            self.on_change()


class _FlagModule(types.ModuleType):
    """Module class whose _Flag attributes validate assignments (module.flag = value)."""


def _install_flags(module_name, **flags):
    """Turns module `module_name` into a _FlagModule subclass holding `flags` (name -> _Flag)."""
    module = sys.modules[module_name]
    module.__class__ = type(module.__class__.__name__, (_FlagModule,), dict(flags))
    return module


@contextlib.contextmanager
def _set_flags(module, **values):
    """Sets module flags for a `with` block and restores them after, as torch.backends.*.flags does."""
    saved = {k: getattr(module, k) for k in values}
    try:
        for k, v in values.items():
            setattr(module, k, v)
        yield
    finally:
        for k, v in saved.items():
            setattr(module, k, v)
