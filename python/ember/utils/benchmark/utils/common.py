"""What a benchmark measured (Measurement), what it ran (TaskSpec), and the number formatting helpers
torch.utils.benchmark shares between Timer and Compare."""
import collections
import contextlib
import dataclasses
import math
import statistics
import textwrap

from .... import _C

__all__ = ["TaskSpec", "Measurement", "select_unit", "unit_to_english", "trim_sigfig", "ordered_unique",
           "set_torch_threads"]

_MAX_SIGFIGS = 4
_MIN_CI = 25e-9  # seconds: no measurement is trusted to better than 25 ns
_IQR_WARN, _IQR_GROSS_WARN = 0.1, 0.25


@dataclasses.dataclass(frozen=True, repr=False)
class TaskSpec:
    """What a Timer runs and how it is labelled (everything but its globals)."""
    stmt: str
    setup: str
    global_setup: str = ""
    label: str = None
    sub_label: str = None
    description: str = None
    env: str = None
    num_threads: int = 1

    @property
    def title(self):
        """The label (or the one-line statement), with the sub-label after a colon."""
        suffix = f": {self.sub_label}" if self.sub_label else ""
        if self.label is not None:
            return self.label + suffix
        if "\n" not in self.stmt:
            return self.stmt + suffix
        return "stmt:" + (f" ({self.sub_label})" if self.sub_label else "") + "\n" + textwrap.indent(self.stmt, "  ")

    def setup_str(self):
        """The setup as a summary line (or an indented block); empty for none."""
        if not self.setup or self.setup == "pass":
            return ""
        return f"setup:\n{textwrap.indent(self.setup, '  ')}" if "\n" in self.setup else f"setup: {self.setup}"

    def summarize(self):
        """Title, description and setup, the head of a Measurement's repr."""
        parts = [p for p in (self.title, self.description or "", self.setup_str()) if p]
        return "\n".join(p + "\n" if "\n" in p else p for p in parts)


_TASK_FIELDS = tuple(f.name for f in dataclasses.fields(TaskSpec))


def _quantile(sorted_values, q):
    """Linear interpolation between order statistics (numpy's and torch.quantile's default)."""
    pos = q * (len(sorted_values) - 1)
    lo = math.floor(pos)
    hi = min(lo + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (pos - lo)


@dataclasses.dataclass(repr=False)
class Measurement:
    """Times of one statement: raw_times[i] is the seconds `number_per_run` runs took; median, mean,
    iqr and significant_figures are per run. TaskSpec's fields read through (m.label, m.stmt, ...)."""
    number_per_run: int
    raw_times: list
    task_spec: TaskSpec
    metadata: dict = None

    def __post_init__(self):
        self._stats = None

    def __getattr__(self, name):
        if name in _TASK_FIELDS:
            return getattr(self.task_spec, name)
        raise AttributeError(f"'Measurement' object has no attribute '{name}'")

    @property
    def times(self):
        """Seconds per run, one per measurement."""
        return [t / self.number_per_run for t in self.raw_times]

    def _get(self):
        if self._stats is None and self.raw_times:
            s = sorted(self.times)
            stats = {"sorted": s, "median": _quantile(s, 0.5), "mean": statistics.fmean(s),
                     "p25": _quantile(s, 0.25), "p75": _quantile(s, 0.75)}
            rel = (stats["p75"] - stats["p25"]) / stats["median"]
            warnings = ()
            for limit, why in ((_IQR_GROSS_WARN, "This suggests significant environmental influence."),
                               (_IQR_WARN, "This could indicate system fluctuation.")):
                if not rel < limit:
                    warnings = (f"  WARNING: Interquartile range is {rel * 100:.1f}% of the median measurement.\n"
                                f"           {why}",)
                    break
            stats["warnings"] = warnings
            self._stats = stats
        return self._stats or {"sorted": [], "median": -1.0, "mean": -1.0, "p25": -1.0, "p75": -1.0, "warnings": ()}

    @property
    def median(self):
        """Median seconds per run."""
        return self._get()["median"]

    @property
    def mean(self):
        """Mean seconds per run."""
        return self._get()["mean"]

    @property
    def iqr(self):
        """Interquartile range of the seconds per run."""
        st = self._get()
        return st["p75"] - st["p25"]

    @property
    def significant_figures(self):
        """How many figures of the median to trust (1-4), from a 90% confidence interval over the
        interquartile measurements."""
        s = self._get()["sorted"]
        mid = s[len(s) // 4:math.ceil(3 * len(s) / 4)]
        std = statistics.pstdev(mid) if len(mid) > 1 else 0.0
        ci = max(1.645 * std / math.sqrt(len(mid)), _MIN_CI) if mid else _MIN_CI
        return min(max(math.floor(math.log10(self.median / ci)), 1), _MAX_SIGFIGS)

    @property
    def has_warnings(self):
        """Whether the spread is large enough to doubt the median (IQR over 10% of it)."""
        return bool(self._get()["warnings"])

    def meets_confidence(self, threshold=_IQR_WARN):
        """Whether IQR / median is under `threshold`."""
        return self.iqr / self.median < threshold

    @property
    def title(self):
        """The task's title."""
        return self.task_spec.title

    @property
    def env(self):
        """The env label, or "Unspecified env"."""
        return "Unspecified env" if self.task_spec.env is None else self.task_spec.env

    @property
    def as_row_name(self):
        """The name of this measurement's row in a Compare table."""
        return self.sub_label or self.stmt or "[Unknown]"

    def __repr__(self):
        st = self._get()
        n = len(st["sorted"])
        unit, scale = select_unit(st["median"])
        lines = [object.__repr__(self), self.task_spec.summarize(),
                 f"  {'Median: ' if n > 1 else ''}{st['median'] / scale:.2f} {unit}"]
        if n >= 4:
            lines.append(f"  IQR:    {self.iqr / scale:.2f} {unit} ({st['p25'] / scale:.2f} to {st['p75'] / scale:.2f})")
        per = "per measurement," if n > 1 else ","
        lines.append(f"  {n} measurement{'s' if n > 1 else ''}, {self.number_per_run} runs {per} "
                     f"{self.num_threads} thread{'s' if self.num_threads > 1 else ''}")
        lines.extend(st["warnings"])
        return "\n".join(lines).strip()

    @staticmethod
    def merge(measurements):
        """One Measurement per TaskSpec from replicates: their per-run times pooled (number_per_run 1,
        no metadata)."""
        groups = collections.defaultdict(list)
        for m in measurements:
            groups[m.task_spec].extend(m.times)
        return [Measurement(1, times, spec) for spec, times in groups.items()]


def select_unit(t):
    """(unit, seconds per unit) that gives `t` seconds a magnitude of 1 to 999: ns, us, ms or s."""
    unit = {-3: "ns", -2: "us", -1: "ms"}.get(int(math.log10(t) // 3) if t > 0 else -3, "s")
    return unit, {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1}[unit]


def unit_to_english(u):
    """"us" -> "microsecond", and so on."""
    return {"ns": "nanosecond", "us": "microsecond", "ms": "millisecond", "s": "second"}[u]


def trim_sigfig(x, n):
    """`x` rounded to `n` significant figures (3.14159, 2 -> 3.1)."""
    if n != int(n):
        raise AssertionError("Number of significant figures must be an integer")
    scale = 10 ** (math.ceil(math.log10(abs(x))) - n)
    return float(round(x / scale) * scale)


def ordered_unique(elements):
    """The distinct elements in first-seen order."""
    return list(dict.fromkeys(elements))


@contextlib.contextmanager
def set_torch_threads(n):
    """Run the block with `n` intra-op threads, then restore the previous count."""
    prior = _C.get_num_threads()
    try:
        _C.set_num_threads(n)
        yield
    finally:
        _C.set_num_threads(prior)
