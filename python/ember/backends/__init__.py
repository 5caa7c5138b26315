"""ember.backends: the backend switches of torch.backends. Ember runs on the CPU only, so the CUDA,
cuDNN, MPS, MIOpen, cuSPARSELt, NNPACK and KleidiAI backends report themselves absent; their flags
still read and write as PyTorch's do (programs set cudnn.benchmark unconditionally), with the same
checks."""
from ._flags import _Flag, _FlagModule, _install_flags, _set_flags  # noqa: F401
from . import cpu, cuda, cudnn, cusparselt, kleidiai, mha, miopen, mkl, mkldnn, mps, nnpack, openmp  # noqa: F401
from . import opt_einsum, python_native, quantized  # noqa: F401
