"""ember.utils.benchmark (torch.utils.benchmark): Timer for timing statements with warm-up, fixed thread
counts and blocks of runs sized against the timer's overhead; Measurement with medians, IQRs and
significant figures; Compare for side-by-side tables. (PyTorch's fuzzers and Callgrind collection are
not provided.)"""
from . import utils  # noqa: F401
from .utils.common import (Measurement, TaskSpec, ordered_unique, select_unit, set_torch_threads,  # noqa: F401
                           trim_sigfig, unit_to_english)
from .utils.compare import Colorize, Compare  # noqa: F401
from .utils.timer import Language, Timer, timer  # noqa: F401

__all__ = ["Timer", "timer", "Language", "Measurement", "TaskSpec", "Compare", "Colorize", "select_unit",
           "unit_to_english", "trim_sigfig", "ordered_unique", "set_torch_threads"]
