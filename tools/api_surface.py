"""How much of PyTorch's public API Ember has, namespace by namespace.

For each namespace below, torch's public names are the module's `__all__` where it defines one, else
the names in dir() that do not start with '_' (for Tensor: dir(torch.Tensor)). A dir() listing also
holds what the module merely imported (math, typing.Optional, numpy as np, torch, ...): names bound
to a module that is not the namespace's own submodule, or to a class or function defined outside
torch, are dropped, since they are no API. A
name counts as present when the matching Ember object has it (getattr chain from `ember`, importing
submodules as needed); a namespace Ember lacks counts all its names as missing.

    PYTHONPATH=python python3 tools/api_surface.py            # the coverage table (markdown)
    PYTHONPATH=python python3 tools/api_surface.py --missing nn.functional

Without torch importable it says so and exits 0.
"""
import argparse
import importlib
import sys
import types
import typing

# (row label, path below the package root; '' is the root itself)
NAMESPACES = [
    ("torch", ""),
    ("Tensor", "Tensor"),
    ("nn", "nn"),
    ("nn.functional", "nn.functional"),
    ("nn.init", "nn.init"),
    ("nn.utils", "nn.utils"),
    ("optim", "optim"),
    ("optim.lr_scheduler", "optim.lr_scheduler"),
    ("linalg", "linalg"),
    ("fft", "fft"),
    ("special", "special"),
    ("distributions", "distributions"),
    ("func", "func"),
    ("autograd", "autograd"),
    ("cuda", "cuda"),
    ("amp", "amp"),
    ("testing", "testing"),
    ("utils.data", "utils.data"),
    ("utils.checkpoint", "utils.checkpoint"),
    ("nn.utils.parametrize", "nn.utils.parametrize"),
    ("backends", "backends"),
    ("onnx", "onnx"),
    ("jit", "jit"),
    ("distributed", "distributed"),
    ("nn.parallel", "nn.parallel"),
]

_MISSING = object()


def resolve(root, path):
    """The object at `root`.`path` (getattr first, then importing the submodule), or None."""
    obj, name = importlib.import_module(root), root
    for part in path.split(".") if path else []:
        name = f"{name}.{part}"
        nxt = getattr(obj, part, _MISSING)
        if nxt is _MISSING and isinstance(obj, types.ModuleType):
            try:
                nxt = importlib.import_module(name)
            except ImportError:
                return None
        if nxt is _MISSING:
            return None
        obj = nxt
    return obj


def _defined_outside(value, root, modname):
    """True for what module `modname` only imported: any module that is not its own submodule
    (math, numpy, torch itself, a sibling like torch.nn.grad), foreign classes/functions, typing."""
    if isinstance(value, types.ModuleType):
        return not value.__name__.startswith(modname + ".")
    if value is typing.TYPE_CHECKING:
        return True
    mod = getattr(value, "__module__", None)
    if not isinstance(mod, str) or not (isinstance(value, type) or callable(value)):
        return False  # plain data (constants, dicts of notes) belongs to the module that holds it
    return mod.split(".")[0] not in (root, "torch")


# Namespaces whose dir() grows with what else was imported (torch.distributed gains `run`, `elastic`, ...
# once a test imports them): their submodules are not counted, so the table does not depend on import order.
_NO_SUBMODULES = {"distributed"}


def torch_names(path):
    """Sorted public names of torch's namespace `path`."""
    obj = resolve("torch", path)
    if isinstance(obj, types.ModuleType) and hasattr(obj, "__all__"):
        return sorted(set(n for n in obj.__all__ if not n.startswith("_")))
    names = [n for n in dir(obj) if not n.startswith("_")]
    if isinstance(obj, types.ModuleType):
        names = [n for n in names
                 if not _defined_outside(getattr(obj, n, None), "torch", obj.__name__)]
        if path in _NO_SUBMODULES:
            names = [n for n in names if not isinstance(getattr(obj, n, None), types.ModuleType)]
    return sorted(set(names))


def ember_has(obj, name):
    if obj is None:
        return False
    try:
        return getattr(obj, name, _MISSING) is not _MISSING
    except Exception:  # noqa: BLE001 - an attribute that raises on access is not there for a program
        return False


def measure():
    """[(label, torch names, names Ember has, names Ember lacks)] in NAMESPACES order."""
    rows = []
    for label, path in NAMESPACES:
        names = torch_names(path)
        obj = resolve("ember", path)
        have = [n for n in names if ember_has(obj, n)]
        lack = [n for n in names if not ember_has(obj, n)]
        rows.append((label, names, have, lack))
    return rows


def coverage(have, names):
    return 100.0 * len(have) / len(names) if names else 100.0


def table(rows):
    out = ["| namespace | torch names | in Ember | coverage % |", "|---|---:|---:|---:|"]
    tot_n = tot_h = 0
    for label, names, have, _ in rows:
        out.append(f"| {label} | {len(names)} | {len(have)} | {coverage(have, names):.1f} |")
        tot_n += len(names)
        tot_h += len(have)
    out.append(f"| **total** | {tot_n} | {tot_h} | {100.0 * tot_h / tot_n:.1f} |")
    return "\n".join(out)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--missing", metavar="NS", help="list the names Ember lacks in namespace NS")
    args = ap.parse_args(argv)
    try:
        import torch  # noqa: F401
    except ImportError:
        print("api_surface: torch is not importable; nothing to compare against (skipped)")
        return 0
    if args.missing is not None and args.missing not in dict(NAMESPACES):
        ap.error(f"unknown namespace {args.missing!r}; one of: {', '.join(l for l, _ in NAMESPACES)}")
    import torch as _t
    rows = measure()
    if args.missing is not None:
        for label, names, have, lack in rows:
            if label == args.missing:
                print(f"# {label}: {len(lack)} of {len(names)} torch names missing")
                print("\n".join(lack))
    else:
        print(f"Ember vs PyTorch {_t.__version__}\n")
        print(table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
