"""ember.return_types: the named-tuple types ops return (torch.return_types): max(values, indices),
linalg_eigh(eigenvalues, eigenvectors), ..., and <name>_out for out= calls; isinstance works on them."""
from . import _C

globals().update(_C._return_types())


def _python_side():
    """The types built in Python (linalg, histogram, ...) that call themselves ember.return_types.<name>."""
    from . import _functional_extra, linalg
    for mod in (linalg, _functional_extra):
        for value in vars(mod).values():
            if isinstance(value, type) and value.__module__ == __name__ and issubclass(value, tuple):
                for t in (value, getattr(value, "_out_type", None)):
                    if t is not None:
                        globals().setdefault(t.__name__, t)


_python_side()
all_return_types = [v for k, v in sorted(globals().items()) if isinstance(v, type) and issubclass(v, tuple)
                    and not k.startswith("_")]
