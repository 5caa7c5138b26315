"""Anomaly detection: backward raises as soon as a node returns NaN, naming the node."""
from .. import _C


class detect_anomaly:
    def __init__(self, check_nan=True):
        self.check_nan = check_nan

    def __enter__(self):
        self.prev = _C.is_anomaly_enabled()
        _C._set_anomaly_enabled(self.check_nan)

    def __exit__(self, *exc):
        _C._set_anomaly_enabled(self.prev)


class set_detect_anomaly:
    def __init__(self, mode, check_nan=True):
        self.prev = _C.is_anomaly_enabled()
        _C._set_anomaly_enabled(bool(mode) and check_nan)

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        _C._set_anomaly_enabled(self.prev)


def is_anomaly_enabled():
    return _C.is_anomaly_enabled()
