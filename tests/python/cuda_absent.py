"""What asking for a GPU raises where there is none, as PyTorch: its CPU-only build raises
AssertionError("Torch not compiled with CUDA enabled"), its CUDA build on a machine without a GPU a
RuntimeError ("Found no NVIDIA driver ..." / "No CUDA GPUs are available"). Tests of that behaviour
skip where a GPU is present."""
import re

import pytest

import ember

if ember.cuda._is_compiled():
    NO_GPU_ERROR, NO_GPU_MATCH = RuntimeError, "NVIDIA driver|No CUDA GPUs"
else:
    NO_GPU_ERROR, NO_GPU_MATCH = AssertionError, "not compiled with CUDA enabled"

needs_no_gpu = pytest.mark.skipif(ember.cuda.is_available(), reason="a GPU is present")


def raises_no_gpu():
    return pytest.raises(NO_GPU_ERROR, match=NO_GPU_MATCH)


_CPU_BUILD_SAYS = re.compile(r"not compiled with CUDA|compiled without CUDA support")


def same_absence(ember_error, torch_error):
    """Whether two exceptions say the same thing about the GPU not being there: torch here is a
    CPU-only build ("not compiled with CUDA"), Ember a CUDA build on a machine without a GPU ("Found
    no NVIDIA driver ..."). Parity tests accept that pair where they compare exception types."""
    return (ember.cuda._is_compiled() and _CPU_BUILD_SAYS.search(str(torch_error)) is not None
            and isinstance(ember_error, RuntimeError) and re.search(NO_GPU_MATCH, str(ember_error)) is not None)
