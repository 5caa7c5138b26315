"""ember.backends.opt_einsum: the opt_einsum package, which torch uses (when installed) to order an
einsum's contractions. Ember's einsum contracts left to right whatever the flags say (the order
changes the cost, not the result); the flags are validated and kept as torch's are."""
import contextlib

try:
    import opt_einsum as _opt_einsum
except ImportError:
    _opt_einsum = None

__all__ = ["is_available", "get_opt_einsum", "set_flags", "flags"]


def is_available():
    """Whether the opt_einsum package is installed."""
    return _opt_einsum is not None


def get_opt_einsum():
    """The opt_einsum package, or None when it is not installed."""
    return _opt_einsum


enabled = is_available()
strategy = "auto" if is_available() else None


def _set_enabled(value):
    global enabled
    if not is_available() and value:
        raise ValueError(f"opt_einsum is not available, so setting `enabled` to {value} will not reap the benefits of "
                         "calculating an optimal path for einsum. torch.einsum will fall back to contracting from left "
                         "to right. To enable this optimal path calculation, please install opt-einsum.")
    enabled = value


def _set_strategy(value):
    global strategy
    if not is_available():
        raise ValueError(f"opt_einsum is not available, so setting `strategy` to {value} will not be meaningful. "
                         "torch.einsum will bypass path calculation and simply contract from left to right. Please "
                         "install opt_einsum or unset `strategy`.")
    if not enabled:
        raise ValueError(f"opt_einsum is not enabled, so setting a `strategy` to {value} will not be meaningful. "
                         "torch.einsum will bypass path calculation and simply contract from left to right. Please "
                         "set `enabled` to `True` as well or unset `strategy`.")
    if value not in ["auto", "greedy", "optimal"]:
        raise ValueError(f"`strategy` must be one of the following: [auto, greedy, optimal] but is {value}")
    strategy = value


def set_flags(_enabled=None, _strategy=None):
    """Set the flags given (None keeps one); returns the previous (enabled, strategy)."""
    orig = (enabled, strategy if is_available() else None)
    if _enabled is not None:
        _set_enabled(_enabled)
    if _strategy is not None:
        _set_strategy(_strategy)
    return orig


@contextlib.contextmanager
def flags(enabled=None, strategy=None):
    """The flags given, within a `with` block."""
    orig = set_flags(enabled, strategy)
    try:
        yield
    finally:
        set_flags(*orig)
