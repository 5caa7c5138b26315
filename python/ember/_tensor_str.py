"""Tensor printing, character for character the same as PyTorch's.

The layout rules reproduced here (PyTorch 2.x behaviour):

* One formatter per tensor decides the text of every element, so that all columns line up. For
  floating tensors it looks at the nonzero finite elements only: if all are whole numbers the
  tensor prints in "integer mode" (``1.``, ``-3.``); scientific notation is chosen when the largest
  magnitude exceeds 1e8, the smallest is under 1e-4, or their ratio exceeds 1000 (unless the
  ``sci_mode`` print option forces a choice). The width is that of the widest of those elements.
* Tensors with more than ``threshold`` elements are summarized: along every dimension longer than
  ``2 * edgeitems`` only the first and last ``edgeitems`` entries are kept, with ``...`` between
  them. The formatter then only sees the kept entries, which keeps printing cheap.
* Rows of a 1-d vector are wrapped so that a line holds as many ``width + 2`` wide entries as fit
  in ``linewidth`` minus the indentation.
* Suffixes (``size=``, ``dtype=``, ``grad_fn=``/``requires_grad=``) follow the contents, each moving
  to a new line when it would overflow ``linewidth``.
"""
import contextlib
import math

from . import _C

_DEFAULTS = {"precision": 4, "threshold": 1000, "edgeitems": 3, "linewidth": 80}
_PROFILES = {
    "default": _DEFAULTS,
    "short": {"precision": 2, "threshold": 1000, "edgeitems": 2, "linewidth": 80},
    "full": {"precision": 4, "threshold": math.inf, "edgeitems": 3, "linewidth": 80},
}


class _PrintOptions:
    __slots__ = ("precision", "threshold", "edgeitems", "linewidth", "sci_mode")

    def __init__(self):
        for k, v in _DEFAULTS.items():
            setattr(self, k, v)
        self.sci_mode = None

    def as_dict(self):
        return {k: getattr(self, k) for k in self.__slots__}


PRINT_OPTS = _PrintOptions()


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None, profile=None, sci_mode=None):
    """Set the options used to print tensors (same meaning as torch.set_printoptions).

    precision: digits after the decimal point (default 4); threshold: element count above which
    tensors are summarized (default 1000); edgeitems: entries kept at each end of a summarized
    dimension (default 3); linewidth: characters per line (default 80); profile: "default",
    "short" or "full" presets, overridden by the explicit options; sci_mode: True/False forces
    scientific notation on/off, None (the default, and what every call without it restores) lets
    the formatter decide.
    """
    if profile is not None and profile in _PROFILES:
        for k, v in _PROFILES[profile].items():
            setattr(PRINT_OPTS, k, v)
    for k, v in (("precision", precision), ("threshold", threshold), ("edgeitems", edgeitems),
                 ("linewidth", linewidth)):
        if v is not None:
            setattr(PRINT_OPTS, k, v)
    PRINT_OPTS.sci_mode = sci_mode


def get_printoptions():
    """The current print options, as a dict that set_printoptions(**d) accepts."""
    return PRINT_OPTS.as_dict()


@contextlib.contextmanager
def printoptions(**kwargs):
    """Temporarily change the print options (arguments as for set_printoptions)."""
    saved = get_printoptions()
    set_printoptions(**kwargs)
    try:
        yield
    finally:
        set_printoptions(**saved)


# ---------------------------------------------------------------------------------------------
# element formatting

class _Formatter:
    """Decides how every element of one tensor is written, from a flat list of its (kept) values."""

    def __init__(self, values, floating):
        self.floating = floating
        self.int_mode = True
        self.sci_mode = False
        self.width = 1
        if not floating:
            for v in values:
                self.width = max(self.width, len(str(v)))
            return
        finite = [v for v in values if v != 0 and math.isfinite(v)]
        if not finite:
            return
        mags = [abs(v) for v in finite]
        lo, hi = min(mags), max(mags)
        self.int_mode = all(v.is_integer() for v in finite)
        if PRINT_OPTS.sci_mode is None:
            self.sci_mode = hi / lo > 1000.0 or hi > 1.0e8 or lo < 1.0e-4
        else:
            self.sci_mode = PRINT_OPTS.sci_mode
        p = PRINT_OPTS.precision
        if self.sci_mode:
            texts = [f"{v:.{p}e}" for v in finite]
            self.width = max(self.width, max(len(s) for s in texts))
        elif self.int_mode:
            # whole numbers get a trailing "." to show the tensor is floating
            self.width = max(self.width, max(len(f"{v:.0f}") for v in finite) + 1)
        else:
            self.width = max(self.width, max(len(f"{v:.{p}f}") for v in finite))

    def __call__(self, v):
        if self.floating:
            p = PRINT_OPTS.precision
            if self.sci_mode:
                s = f"{v:{self.width}.{p}e}"
            elif self.int_mode:
                s = f"{v:.0f}"
                if math.isfinite(v):
                    s += "."
            else:
                s = f"{v:.{p}f}"
        else:
            s = str(v)
        return s.rjust(self.width)


class _ComplexFormatter:
    """Complex elements: the real parts formatted together, the imaginary parts together, then
    joined as re+imj (the imaginary part's padding dropped, its sign kept)."""

    def __init__(self, values):
        self.re = _Formatter([v.real for v in values], True)
        self.im = _Formatter([v.imag for v in values], True)
        self.width = self.re.width + self.im.width + 1

    def __call__(self, v):
        im = self.im(v.imag).lstrip() + "j"
        if im[0] not in "+-":
            im = "+" + im
        return (self.re(v.real) + im).rjust(self.width)


# ---------------------------------------------------------------------------------------------
# layout

def _flatten(nested, depth, out):
    if depth == 0:
        out.append(nested)
    elif depth == 1:
        out.extend(nested)
    else:
        for x in nested:
            _flatten(x, depth - 1, out)
    return out


def _layout(vals, ndim, level, indent, cut, fmt):
    """Text of the nested list `vals` (dims level..ndim-1 of the kept data); cut[d] marks dims
    whose middle was dropped, so that "..." goes after the first edgeitems entries."""
    e = PRINT_OPTS.edgeitems
    if level == ndim - 1:
        items = [fmt(v) for v in vals]
        if cut[level]:
            items = items[:e] + [" ..."] + items[e:]
        per_line = max(1, math.floor((PRINT_OPTS.linewidth - indent) / (fmt.width + 2)))
        lines = [", ".join(items[i:i + per_line]) for i in range(0, len(items), per_line)]
        return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"
    parts = [_layout(v, ndim, level + 1, indent + 1, cut, fmt) for v in vals]
    if cut[level]:
        parts = parts[:e] + ["..."] + parts[e:]
    sep = "," + "\n" * (ndim - level - 1) + " " * (indent + 1)
    return "[" + sep.join(parts) + "]"


def _contents(t, indent):
    """The bracketed contents of a non-empty tensor."""
    ndim = t.dim()
    shape = tuple(t.shape)
    summarize = t.numel() > PRINT_OPTS.threshold
    e = PRINT_OPTS.edgeitems
    if summarize and not e and ndim > 0:
        return "[...]"
    data = t
    cut = [False] * ndim
    if summarize:
        for d, n in enumerate(shape):
            if n > 2 * e:
                data = _C._ops.cat([data.narrow(d, 0, e), data.narrow(d, n - e, e)], d)
                cut[d] = True
    vals = data.tolist()
    flat = _flatten(vals, ndim, [])
    fmt = _ComplexFormatter(flat) if data.is_complex() else _Formatter(flat, data.is_floating_point())
    if ndim == 0:
        return fmt(vals)
    return _layout(vals, ndim, 0, indent, cut, fmt)


def _with_suffixes(text, suffixes, indent, force_newline=False):
    out = [text]
    # length of the last line, counted the way PyTorch does (two more than its characters)
    last = len(text) - text.rfind("\n") + 1
    for s in suffixes:
        if force_newline or last + len(s) + 2 > PRINT_OPTS.linewidth:
            force_newline = False
            out.append(",\n" + " " * indent + s)
            last = indent + len(s)
        else:
            out.append(", " + s)
            last += len(s) + 2
    out.append(")")
    return "".join(out)


def _grad_fn_name(t):
    try:
        fn = getattr(t, "grad_fn", None)
    except RuntimeError:
        return "Invalid"
    if fn is None:
        return None
    name_method = getattr(fn, "name", None)
    name = name_method() if callable(name_method) else type(fn).__name__
    return name.rsplit("::", 1)[-1]


# classes printed as "tensor(...)" rather than by their own name; ember.Tensor registers itself here
# (this module sits below it, so cannot import it)
_PLAIN_CLASSES = {_C.TensorBase}


def _register_plain_class(cls):
    _PLAIN_CLASSES.add(cls)


def _is_plain(t):
    cls = type(t)
    return cls in _PLAIN_CLASSES or (cls.__name__ == "Parameter" and cls.__module__.startswith("ember"))


def _sparse_contents(data, indent):
    """indices=tensor(...),\n values=tensor(...) of a sparse COO tensor, each aligned under its prefix."""
    parts = []
    for name, part in (("indices", data._indices()), ("values", data._values())):
        prefix = name + "=tensor("
        text = _contents(part, indent + len(prefix)) if part.numel() else "[]"
        if part.numel() == 0:
            text += ", size=" + str(tuple(part.shape))
        parts.append(prefix + text + ")")
    return (",\n" + " " * indent).join(parts)


def _str(t, tensor_contents=None):
    prefix = "tensor(" if _is_plain(t) else type(t).__name__ + "("
    indent = len(prefix)
    data = t.detach() if hasattr(t, "detach") else t
    if getattr(data, "is_conj", None) is not None and (data.is_conj() or data.is_neg()):
        data = data.resolve_conj().resolve_neg()  # a conjugate (negative) view prints its values
    suffixes = []
    default_dtype = _C.get_default_dtype()
    default_complex = _C.complex128 if default_dtype == _C.float64 else _C.complex64
    if data.device.type != "cpu":  # first, as PyTorch's; the values print from a host copy
        suffixes.append(f"device='{data.device}'")
        if data.device.type != "meta":
            data = data.cpu()
    if data.device.type == "meta":  # no values: "...", the size always, the dtype unless the default
        suffixes.append("size=" + str(tuple(data.shape)))
        if data.dtype != default_dtype:
            suffixes.append("dtype=" + str(data.dtype))
        body = "..." if tensor_contents is None else tensor_contents
    elif data.is_sparse:
        body = _sparse_contents(data, indent) if tensor_contents is None else tensor_contents
        suffixes += ["size=" + str(tuple(data.shape)), "nnz=" + str(data._nnz())]
        if data.dtype not in (default_dtype, default_complex, _C.int64, _C.bool):
            suffixes.append("dtype=" + str(data.dtype))
        suffixes.append("layout=" + str(data.layout))
    elif data.numel() == 0:
        # NumPy-like: the shape is shown unless it is (0,), and the dtype unless it is the
        # default one (nothing in an empty tensor hints at it)
        if data.dim() != 1:
            suffixes.append("size=" + str(tuple(data.shape)))
        if data.dtype != default_dtype:
            suffixes.append("dtype=" + str(data.dtype))
        body = "[]" if tensor_contents is None else tensor_contents
    else:
        if not PRINT_OPTS.edgeitems:
            suffixes.append("size=" + str(tuple(data.shape)))
        if data.dtype not in (default_dtype, default_complex, _C.int64, _C.bool):
            suffixes.append("dtype=" + str(data.dtype))
        body = _contents(data, indent) if tensor_contents is None else tensor_contents
    grad_fn = _grad_fn_name(t)
    if grad_fn is not None:
        suffixes.append(f"grad_fn=<{grad_fn}>")
    elif getattr(t, "requires_grad", False):
        suffixes.append("requires_grad=True")
    return _with_suffixes(prefix + body, suffixes, indent, force_newline=data.is_sparse)
