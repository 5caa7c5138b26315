"""Makes `torch` mean ember and `torchvision` mean ember.vision for unmodified PyTorch programs.

The packages torch/ and torchvision/ next to this file replace themselves in sys.modules with
ember's; the finder below maps every submodule import (torch.nn.functional, torch.utils.data,
torchvision.transforms, ...) onto the same ember module object, so classes are never loaded twice.
"""
import importlib
import importlib.abc
import importlib.util
import sys

ALIASES = {"torch": "ember", "torchvision": "ember.vision"}


class _AliasLoader(importlib.abc.Loader):
    def __init__(self, target):
        self.target = target

    def create_module(self, spec):
        return importlib.import_module(self.target)

    def exec_module(self, module):
        pass  # already executed under its ember name


class _AliasFinder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path=None, target=None):
        head, _, rest = fullname.partition(".")
        if head not in ALIASES or not rest:
            return None
        real = ALIASES[head] + "." + rest
        if real not in sys.modules:
            try:
                found = importlib.util.find_spec(real)
            except (ImportError, ValueError):
                found = None
            if found is None:
                return None  # ModuleNotFoundError names the torch module the program asked for
        return importlib.util.spec_from_loader(fullname, _AliasLoader(real))


def install(name):
    if not any(isinstance(f, _AliasFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, _AliasFinder())
    module = importlib.import_module(ALIASES[name])
    sys.modules[name] = module
    return module
