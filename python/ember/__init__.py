"""Ember: tensors with eager execution, autograd and neural networks, on a C++ core.

The API follows PyTorch's name for name: `import ember as torch` runs PyTorch programs that use
what Ember implements.
"""
import os as _os

# Idle OpenMP threads sleep instead of spinning (set before libgomp starts with _C). Spinning wins
# ~4% on an idle machine, but when another process holds a core, spinning threads stall every
# parallel region: the main job measured 229 vs 2,660 images/s on a loaded 2-core machine.
_os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

from . import _C  # noqa: E402
from ._C import (  # noqa: F401
    Generator, default_generator, device, dtype, from_dlpack, from_numpy, get_default_dtype,
    get_num_threads, promote_types, can_cast, result_type, set_num_threads,
)
from ._C import (  # noqa: F401  dtype objects
    bfloat16, bool, complex64, complex128, float16, float32, float64, int8, int16, int32, int64, uint8,
)
from ._C._ops import *  # noqa: F401,F403  every generated op (ember.add, ember.zeros, ...)
from ._C._ops import tensor  # noqa: F401
from ._tensor import Tensor, Size  # noqa: F401
from ._functional import (  # noqa: F401
    adjoint, cartesian_prod, einsum, frombuffer, meshgrid, nonzero, split, tensordot, unique, unique_consecutive,
)
from ._dtype_info import finfo, iinfo  # noqa: F401
from . import autograd, linalg  # noqa: F401
from .linalg import _chain_matmul as chain_matmul, _torch_lu as lu  # noqa: F401  (torch.functional's)
from . import nn  # noqa: F401
from .autograd.grad_mode import enable_grad, inference_mode, no_grad, set_grad_enabled  # noqa: F401
from ._C import is_grad_enabled, is_inference_mode_enabled  # noqa: F401
from .autograd.anomaly_mode import is_anomaly_check_nan_enabled, is_anomaly_enabled  # noqa: F401
from ._random import manual_seed, seed, initial_seed, get_rng_state, set_rng_state  # noqa: F401
from ._utils import (  # noqa: F401
    as_tensor, is_tensor, is_floating_point, is_nonzero, numel, set_default_dtype, strided, sparse_coo, layout,
    set_printoptions, memory_stats, memory_format, contiguous_format, preserve_format, channels_last, channels_last_3d,
)

# PyTorch's dtype aliases
float = float32
double = float64
half = float16
long = int64
int = int32
short = int16
cfloat = complex64
cdouble = complex128

from . import multiprocessing, nn, optim, utils  # noqa: E402,F401  (ember.vision is imported on demand)
from . import serialization  # noqa: E402,F401
from .serialization import save, load  # noqa: E402,F401
from . import cpu, profiler  # noqa: E402,F401
from . import amp  # noqa: E402,F401
from .amp import GradScaler, autocast  # noqa: E402,F401
from .amp._state import *  # noqa: E402,F401,F403  (is_autocast_enabled, set_autocast_dtype, ...)
from .amp.grad_scaler import _amp_foreach_non_finite_check_and_unscale_, _amp_update_scale_  # noqa: E402,F401
from . import accelerator, backends, cuda, fft, futures, onnx, random, special, testing  # noqa: E402,F401
from .cuda import OutOfMemoryError  # noqa: E402,F401
from ._flags import (  # noqa: E402,F401
    use_deterministic_algorithms, are_deterministic_algorithms_enabled, is_deterministic_algorithms_warn_only_enabled,
    set_deterministic_debug_mode, get_deterministic_debug_mode, set_float32_matmul_precision,
    get_float32_matmul_precision,
)
from ._comparison import allclose, isclose, equal  # noqa: E402,F401
from ._legacy_types import *  # noqa: E402,F401,F403  (FloatTensor, LongTensor, ...)
from . import compiler, jit  # noqa: E402,F401
from .jit import compile  # noqa: E402,F401


# Heavier namespaces load on first use (`ember.distributions.Normal`, like torch's attribute access),
# so `import ember` stays fast; `import ember.distributions` works as usual.
_LAZY_SUBMODULES = ("distributions", "vision", "serialize", "distributed", "func", "hub", "functional", "fx",
                    "overrides")


def __getattr__(name):
    if name in _LAZY_SUBMODULES:
        import importlib
        return importlib.import_module(f"{__name__}.{name}")
    if name == "Storage":  # torch.Storage follows the default dtype (FloatStorage, DoubleStorage, ...)
        from .storage import legacy_storage_class
        return legacy_storage_class(get_default_dtype())
    if name == "binomial":  # samples with ember.distributions' sampler, which sits above this package
        import importlib
        return importlib.import_module(f"{__name__}._binomial").binomial
    if name == "vmap":  # torch.vmap is torch.func.vmap
        import importlib
        return importlib.import_module(f"{__name__}.func").vmap
    raise AttributeError(f"module 'ember' has no attribute '{name}'")

from .version import __version__  # noqa: E402,F401

# Python-level torch.* names: constants and runtime switches, the *_copy family, atleast_*/block_diag/
# histogram, asarray and other constructors, windows, the NN functions torch also has at top level, and
# the complex views/predicates as they are on real tensors.
from ._runtime import *  # noqa: E402,F401,F403
from ._view_copy import *  # noqa: E402,F401,F403
from ._functional_extra import *  # noqa: E402,F401,F403
from ._functional_extra import _assert  # noqa: E402,F401
from ._creation import *  # noqa: E402,F401,F403
from ._nn_aliases import *  # noqa: E402,F401,F403
from ._conj import *  # noqa: E402,F401,F403
from ._C._ops import _neg_view  # noqa: E402,F401  (torch._neg_view: the negative bit's view)
from ._spectral import *  # noqa: E402,F401,F403  (stft, istft and their Tensor methods)
from . import sparse  # noqa: E402  (torch.sparse)
from .sparse import sparse_coo_tensor  # noqa: E402,F401
from ._lobpcg import lobpcg  # noqa: E402,F401
from ._lowrank import pca_lowrank, svd_lowrank  # noqa: E402,F401
from ._broadcast import broadcast_shapes  # noqa: E402,F401
from . import signal  # noqa: E402,F401  (torch.signal.windows)
from . import masked  # noqa: E402,F401  (torch.masked reductions)
from .jit import Future, fork, wait  # noqa: E402,F401  (torch.fork/wait/Future are jit's at top level)

# Storages (ember.UntypedStorage, TypedStorage, FloatStorage & co.), Tensor.untyped_storage()/storage()
from .storage import *  # noqa: E402,F401,F403
from . import _tensor_storage  # noqa: E402,F401  (installs Tensor.untyped_storage, storage, set_, ...)
from ._tensor_extras import *  # noqa: E402,F401,F403  (detach_, slice_inverse; Tensor.apply_/map_)

# torch.return_types, torch.torch_version: modules over what is defined above
from . import return_types, torch_version  # noqa: E402,F401
