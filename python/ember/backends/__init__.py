"""ember.backends: the backend switches of torch.backends. Ember runs on the CPU only, so the CUDA,
cuDNN and MPS backends report themselves absent; their flags still read and write as PyTorch's do
(programs set cudnn.benchmark unconditionally), with the same bool checks."""
from ._flags import _Flag, _FlagModule, _install_flags, _set_flags  # noqa: F401
from . import cpu, cuda, cudnn, mkl, mkldnn, mps, openmp  # noqa: F401
