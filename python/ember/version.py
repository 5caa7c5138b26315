"""Ember's version (as torch.version.__version__), in a module of its own so that layers below
`ember` (ember.onnx writes it into exported models) can read it without importing the top."""
from .torch_version import TorchVersion

__version__ = TorchVersion("0.1.0")  # compares as a version: ember.__version__ >= (0, 1)

# the toolkits this build was compiled with, as torch.version reports them (None: not built with it)
hip = None
debug = False


def _compiled_cuda():
    from . import _C
    return _C._cuda_compiled_version() or None


cuda = _compiled_cuda()
