"""Anomaly detection: nodes remember the forward stack that made them; a failing backward warns
with it, and (check_nan) a node returning NaN gradients raises, naming the node."""
import warnings

from .. import _C


class detect_anomaly:
    """Context manager enabling anomaly detection within its block."""

    def __init__(self, check_nan=True):
        self.prev = _C.is_anomaly_enabled()
        self.check_nan = check_nan
        self.prev_check_nan = _C.is_anomaly_check_nan_enabled()
        warnings.warn("Anomaly Detection has been enabled. This mode will increase the runtime and should only be "
                      "enabled for debugging.", stacklevel=2)

    def __enter__(self):
        _C._set_anomaly_enabled(True, self.check_nan)

    def __exit__(self, *exc):
        _C._set_anomaly_enabled(self.prev, self.prev_check_nan)


class set_detect_anomaly:
    """set_detect_anomaly(mode, check_nan=True): takes effect at once; as a context manager, the
    previous setting comes back on exit."""

    def __init__(self, mode, check_nan=True):
        self.prev = _C.is_anomaly_enabled()
        self.prev_check_nan = _C.is_anomaly_check_nan_enabled()
        _C._set_anomaly_enabled(bool(mode), bool(check_nan))

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        _C._set_anomaly_enabled(self.prev, self.prev_check_nan)


def is_anomaly_enabled():
    """True when autograd's anomaly detection is on."""
    return _C.is_anomaly_enabled()


def is_anomaly_check_nan_enabled():
    """True when anomaly mode also checks backward results for NaN."""
    return _C.is_anomaly_check_nan_enabled()
