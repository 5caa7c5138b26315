"""Compare: Measurements laid out as torch.utils.benchmark's tables, one per label: a column per
description, a row per sub-label (or statement), rows grouped by thread count, medians in one unit."""
import enum
import math

from .common import Measurement, ordered_unique, select_unit, trim_sigfig, unit_to_english

__all__ = ["Colorize", "Compare"]

_BEST, _GOOD, _BAD, _VERY_BAD = "\033[92m", "\033[34m", "\033[2m\033[91m", "\033[31m"
_BOLD, _END = "\033[1m", "\033[0m"


class Colorize(enum.Enum):
    """Whether and how Compare colours each cell against the best: none, within its row or its column."""
    NONE = "none"
    COLUMNWISE = "columnwise"
    ROWWISE = "rowwise"


def _color(text, value, best):
    if value <= best * 1.01 or value <= best + 100e-9:
        return _BEST + _BOLD + text + _END * 2
    if value <= best * 1.1:
        return _GOOD + _BOLD + text + _END * 2
    if value >= best * 5:
        return _VERY_BAD + _BOLD + text + _END * 2
    if value >= best * 2:
        return _BAD + text + _END * 2
    return text


class _Table:
    """One label's results as rows (thread count, env, row name) by columns (description)."""

    def __init__(self, results, colorize, trim, highlight):
        self.results, self.colorize, self.trim, self.highlight = results, colorize, trim, highlight
        self.label = results[0].label
        self.unit, self.scale = select_unit(min(r.median for r in results))
        rows = ordered_unique((r.num_threads, r.env, r.as_row_name) for r in results)
        self.row_keys = sorted(rows, key=lambda k: (k[0], k[1]))  # threads, then env; names keep their order
        self.col_keys = ordered_unique(r.description for r in results)
        self.cells = {(r.num_threads, r.env, r.as_row_name, r.description): r for r in results}

    def _grid(self):
        return [[self.cells.get(key + (c,)) for c in self.col_keys] for key in self.row_keys]

    def _formats(self, grid):
        """A number format per column: digits before the point from the largest value, after it from
        the measurements' significant figures when trimming (else one)."""
        fmts = []
        for j in range(len(self.col_keys)):
            col = [row[j] for row in grid if row[j] is not None]
            lead = [max(int(math.ceil(math.log10(m.median / self.scale))), 1) if m.median > 0 else 1 for m in col]
            unit_digits = max(lead)
            decimals = min(max(m.significant_figures - d, 0) for d, m in zip(lead, col)) if self.trim else 1
            width = unit_digits + decimals + (1 if decimals else 0)
            highlight = self.highlight and any(m.has_warnings for m in col)  # room for "(! NN%)"
            fmts.append((width, decimals, highlight))
        return fmts

    def _cell(self, m, fmt):
        width, decimals, highlight = fmt
        pad = 7 if highlight else 0
        if m is None:
            return " " * (width + pad)
        value = m.median / self.scale
        if self.trim:
            value = trim_sigfig(value, m.significant_figures)
        warn = f" (! {m.iqr / m.median * 100:.0f}%)" if highlight and m.has_warnings else ""
        return f"{value:>{width}.{decimals}f}{warn:>{pad}}"

    def render(self):
        grid = self._grid()
        fmts = self._formats(grid)
        envs = {r.env for r in self.results}
        show_env = len(envs) > 1
        env_width = max(len(e) for e in envs) if show_env else 0
        texts = [[""] + [c or "" for c in self.col_keys]]
        prior_env, prior_threads, separators = None, None, {}
        for i, (key, row) in enumerate(zip(self.row_keys, grid)):
            threads, env, name = key
            if threads != prior_threads:
                separators[i] = threads
                prior_threads, prior_env = threads, None
            env_text = f"({env})" if show_env and env != prior_env else ""
            prior_env = env
            texts.append(["  " + env_text.ljust(env_width + 4) + name] +
                         [self._cell(m, f) for m, f in zip(row, fmts)])
        widths = [max(len(t[j]) for t in texts) for j in range(len(texts[0]))]
        lines = ["  |  ".join(t.center(w) for t, w in zip(texts[0], widths))]
        overall = len(lines[0])
        for i, (t, row) in enumerate(zip(texts[1:], grid)):
            if i in separators:
                lines.append(f"{separators[i]} threads: ".ljust(overall, "-"))
            cells = [t[0].ljust(widths[0])]
            present = [m.median for m in row if m is not None]
            for j, (text, m) in enumerate(zip(t[1:], row)):
                text = text.center(widths[j + 1])
                if self.colorize != Colorize.NONE and m is not None:
                    if self.colorize == Colorize.ROWWISE:
                        best = min(present)
                    else:  # the best of the column among the rows of this thread count
                        best = min(r[j].median for k, r in zip(self.row_keys, grid)
                                   if r[j] is not None and k[0] == self.row_keys[i][0])
                    text = _color(text, m.median, best)
                cells.append(text)
            lines.append("  |  ".join(cells))
        head = f"[{(' ' + (self.label or '') + ' ').center(overall - 2, '-')}]"
        tail = ["", f"Times are in {unit_to_english(self.unit)}s ({self.unit})."]
        if self.highlight and any(m.has_warnings for m in self.results):
            tail.append("(! XX%) Measurement has high variance, where XX is the IQR / median * 100.")
        return "\n".join([head] + lines + tail) + "\n"


class Compare:
    """Tables of Measurements, one per label (print(compare) or str(compare))."""

    def __init__(self, results):
        self._results = []
        self.extend_results(results)
        self._trim_significant_figures = False
        self._colorize = Colorize.NONE
        self._highlight_warnings = False

    def extend_results(self, results):
        """Add Measurements (each must be one)."""
        for r in results:
            if not isinstance(r, Measurement):
                raise ValueError(f"Expected an instance of `Measurement`, got {type(r)} instead.")
        self._results.extend(results)

    def trim_significant_figures(self):
        """Show each median to the figures its spread supports."""
        self._trim_significant_figures = True

    def colorize(self, rowwise=False):
        """Colour cells against the best of their column (or row)."""
        self._colorize = Colorize.ROWWISE if rowwise else Colorize.COLUMNWISE

    def highlight_warnings(self):
        """Mark cells whose spread (IQR / median) is large."""
        self._highlight_warnings = True

    def _render(self):
        merged = Measurement.merge(self._results)
        by_label = {}
        for m in merged:
            by_label.setdefault(m.label, []).append(m)
        return [_Table(group, self._colorize, self._trim_significant_figures, self._highlight_warnings).render()
                for group in by_label.values()]

    def __str__(self):
        return "\n".join(self._render())

    def print(self):
        """Print the tables."""
        print(str(self))
