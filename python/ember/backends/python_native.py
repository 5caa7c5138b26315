"""ember.backends.python_native: switches of the kernels that torch's Python DSLs (Triton, CuteDSL)
register over its built-in ops. Ember registers no such kernels and neither DSL is available, so
every operation list is empty; the switches are kept (per DSL, per op name, per dispatch key) with
torch's queries and context managers, for code that sets or reads them."""
import contextlib
import functools
import sys
import types

_ALL_DSLS = ("cutedsl", "triton")

# what is switched off: DSL names, op names, dispatch keys
_disabled_dsls = set()
_disabled_ops = set()
_disabled_dispatch_keys = set()


def _check_dsl(name):
    if name not in _ALL_DSLS:
        raise ValueError(f"Unknown DSL: {name}. Available DSLs: {list(_ALL_DSLS)}")


class DSLController:
    """The switch of one DSL's kernels: enabled / disable() / enable() / disabled()."""

    def __init__(self, dsl_name):
        self._dsl_name = dsl_name

    @property
    def name(self):
        return self._dsl_name

    @property
    def available(self):
        """Whether the DSL's runtime is installed and usable: never on Ember."""
        return False

    @property
    def version(self):
        return None

    @property
    def enabled(self):
        return self._dsl_name not in _disabled_dsls

    @enabled.setter
    def enabled(self, value):
        if value:
            self.enable()
        else:
            self.disable()

    def disable(self):
        _check_dsl(self._dsl_name)
        _disabled_dsls.add(self._dsl_name)

    def enable(self):
        _disabled_dsls.discard(self._dsl_name)

    @contextlib.contextmanager
    def disabled(self):
        """The DSL off within a `with` block."""
        was_enabled = self.enabled
        try:
            self.disable()
            yield
        finally:
            if was_enabled:
                self.enable()

    def __repr__(self):
        return (f"DSLController({self._dsl_name}, {'available' if self.available else 'unavailable'}, "
                f"{'enabled' if self.enabled else 'disabled'})")


class _PythonNativeModule(types.ModuleType):
    """The module: DSL controllers appear as attributes named after their DSL."""

    @property
    def available_dsls(self):
        return []

    @property
    def all_dsls(self):
        return list(_ALL_DSLS)

    def get_dsl_operations(self, dsl_name):
        """The sorted names of the operations a DSL overrides: none on Ember."""
        return []

    def disable_operations(self, *op_symbols):
        _disabled_ops.update(op_symbols)

    def enable_operations(self, *op_symbols):
        _disabled_ops.difference_update(op_symbols)

    def disable_dispatch_keys(self, *dispatch_keys):
        _disabled_dispatch_keys.update(dispatch_keys)

    def enable_dispatch_keys(self, *dispatch_keys):
        _disabled_dispatch_keys.difference_update(dispatch_keys)

    @contextlib.contextmanager
    def operations_disabled(self, *op_symbols):
        """The operations off within a `with` block; those already off stay off after it."""
        already = {op for op in op_symbols if op in _disabled_ops}
        self.disable_operations(*op_symbols)
        try:
            yield
        finally:
            again = [op for op in op_symbols if op not in already]
            if again:
                self.enable_operations(*again)

    def is_operation_disabled(self, op_symbol):
        return op_symbol in _disabled_ops

    def is_dsl_disabled(self, dsl_name):
        return dsl_name in _disabled_dsls

    @functools.lru_cache(maxsize=16)  # noqa: B019 - one controller per DSL, as torch hands out
    def _get_dsl_controller(self, name):
        return DSLController(name)

    def __getattr__(self, name):
        if name in _ALL_DSLS:
            return self._get_dsl_controller(name)
        raise AttributeError(f"module '{self.__name__}' has no attribute '{name}'")

    def __dir__(self):
        public = {"available_dsls", "all_dsls", "get_dsl_operations", "disable_operations", "enable_operations",
                  "disable_dispatch_keys", "enable_dispatch_keys", "operations_disabled", "is_operation_disabled",
                  "is_dsl_disabled"}
        return sorted(set(super().__dir__()) | public | set(_ALL_DSLS))


sys.modules[__name__].__class__ = _PythonNativeModule
