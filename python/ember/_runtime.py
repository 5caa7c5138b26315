"""Process and runtime switches of torch's top level: the default device (CPU only), the default
tensor type, inter-op threads, flush-denormal, warn-always, build facts (has_lapack, ...), small
predicates (typename, is_storage, get_device, ...) and the sym_* helpers, which on plain Python
numbers (Ember has no symbolic shapes) are the ordinary operations."""
import builtins
import importlib
import importlib.util
import math
import os
import sys
import threading

from . import _C
from ._flags import is_warn_always_enabled, set_warn_always  # noqa: F401  (exported from here)

# ---- constants and build facts ----
e = math.e
pi = math.pi
inf = math.inf
nan = math.nan
newaxis = None

has_lapack = True  # linalg runs on OpenBLAS's LAPACK (csrc/ember/ops/linalg_lapack.cpp)
has_mkl = False  # OpenBLAS, not MKL (as ember.backends.mkl says)
has_openmp = True  # every parallel loop is an OpenMP one
has_spectral = importlib.util.find_spec("ember.fft") is not None  # true once an FFT namespace ships


def is_vulkan_available():
    """False: Ember has no Vulkan backend."""
    return False


# ---- default device ----
# per thread, as PyTorch's: None (the CPU) or the device set by set_default_device / `with ember.device(...)`,
# with the devices the open `with` blocks replaced
_device_state = threading.local()


def _current_default():
    return getattr(_device_state, "device", None)


def _as_device(device):
    # a device that cannot be used (CUDA without a GPU) raises at the first factory call, as in PyTorch
    return device if isinstance(device, _C.device) else _C.device(device)


def _use_default_device(d):
    _device_state.device = d
    _C._set_default_device(None if d is None or d.type == "cpu" else d)


def set_default_device(device):
    """The device factory functions (ember.empty, zeros, tensor, rand, ..., and so the layers of
    ember.nn) allocate on when they are given none; None or "cpu" restores the CPU. Other ops and
    C++ factories are not affected, as in PyTorch."""
    _use_default_device(None if device is None else _as_device(device))


def get_default_device():
    """The device factory functions allocate on: the CPU, or the one set in a `with ember.device(...)`."""
    return _current_default() or _C.device("cpu")


def _device_enter(self):
    """`with ember.device("cpu"):` makes it the default device inside the block."""
    if not hasattr(_device_state, "stack"):
        _device_state.stack = []
    _device_state.stack.append(_current_default())
    _use_default_device(self)
    return self


def _device_exit(self, *exc):
    _use_default_device(_device_state.stack.pop())


_C.device.__enter__ = _device_enter
_C.device.__exit__ = _device_exit


def set_default_tensor_type(t, /):
    """Sets the default dtype from a tensor type (ember.DoubleTensor or "torch.DoubleTensor"):
    floating types only, and CPU ones."""
    import warnings
    warnings.warn("torch.set_default_tensor_type() is deprecated as of PyTorch 2.1, please use "
                  "torch.set_default_dtype() and torch.set_default_device() as alternatives.", UserWarning,
                  stacklevel=2)
    if isinstance(t, str):
        name = t
        if ".cuda." in name:
            raise TypeError(f"type {name} not available. Torch not compiled with CUDA enabled.")
        module, _, cls = name.rpartition(".")
        if module not in ("torch", "ember"):
            importlib.import_module(module)  # an unknown module raises ModuleNotFoundError, as in PyTorch
        t = getattr(sys.modules["ember"], cls, None)  # the legacy types (ember.DoubleTensor, ...)
        if not isinstance(t, type):
            raise TypeError(f"invalid type: '{name}'")
    dtype = getattr(t, "dtype", None)
    if not isinstance(t, type) or not isinstance(dtype, _C.dtype):
        raise TypeError("invalid type object: only floating-point types are supported as the default type")
    if not dtype.is_floating_point:
        raise TypeError("only floating-point types are supported as the default type")
    _C.set_default_dtype(dtype)


# ---- threads and floating-point mode ----
_interop_threads = [None]  # Ember runs ops on the calling thread; the count is kept for programs that read it


def get_num_interop_threads():
    """The inter-op thread count (Ember runs ops on the calling thread; the count is recorded)."""
    return _interop_threads[0] or os.cpu_count() or 1


def set_num_interop_threads(num):
    """Sets the inter-op thread count, once per process, as PyTorch."""
    if not isinstance(num, int) or isinstance(num, bool) or num <= 0:
        raise RuntimeError("set_num_interop_threads expects a positive integer")
    if _interop_threads[0] is not None:
        raise RuntimeError("Error: cannot set number of interop threads after parallel work has started or "
                           "set_num_interop_threads called")
    _interop_threads[0] = num


def init_num_threads():
    """Applies the intra-op thread count to OpenMP in the calling thread (a new thread starts with
    OpenMP's default)."""
    _C.set_num_threads(_C.get_num_threads())


_MXCSR_FTZ_DAZ = 0x8040  # flush-to-zero (bit 15) and denormals-are-zero (bit 6)
_MXCSR_OFFSET = 28  # glibc's x86-64 fenv_t: x87 state (28 bytes), then the SSE control/status register


def _libm():
    import ctypes
    import platform
    if sys.platform != "linux" or platform.machine() not in ("x86_64", "AMD64"):
        return None
    try:
        return ctypes.CDLL("libm.so.6")
    except OSError:
        return None


def set_flush_denormal(mode):
    """Treats denormal floats as zero (inputs and results) in the calling thread's SSE unit; True
    when the CPU mode was set (x86-64 Linux), False where Ember cannot set it."""
    if not isinstance(mode, bool):
        raise RuntimeError(f"flush_denormal expects a bool, but got {type(mode).__name__}")
    import ctypes
    libm = _libm()
    if libm is None:
        return False
    env = ctypes.create_string_buffer(32)
    if libm.fegetenv(env) != 0:
        return False
    mxcsr = int.from_bytes(env.raw[_MXCSR_OFFSET:_MXCSR_OFFSET + 4], "little")
    mxcsr = mxcsr | _MXCSR_FTZ_DAZ if mode else mxcsr & ~_MXCSR_FTZ_DAZ
    ctypes.memmove(ctypes.addressof(env) + _MXCSR_OFFSET, mxcsr.to_bytes(4, "little"), 4)
    return libm.fesetenv(env) == 0


def set_anomaly_enabled(enabled, check_nan=True):
    """Turns autograd anomaly detection on or off (check_nan: NaN gradients raise)."""
    _C._set_anomaly_enabled(bool(enabled), bool(check_nan))


# ---- predicates on objects ----

def typename(obj, /):
    """'ember.FloatTensor' for a tensor, else the object's (or its class's) qualified name."""
    if isinstance(obj, _C.TensorBase):
        return obj.type()
    module = getattr(obj, "__module__", "") or ""
    if hasattr(obj, "__qualname__"):
        qualname = obj.__qualname__
    elif hasattr(obj, "__name__"):
        qualname = obj.__name__
    else:
        module, qualname = obj.__class__.__module__ or "", obj.__class__.__qualname__
    return qualname if module in ("", "builtins") else f"{module}.{qualname}"


def is_storage(obj, /):
    """True for Ember's storage objects: ember.UntypedStorage, TypedStorage and the legacy FloatStorage & co."""
    storage = sys.modules["ember.storage"]  # loaded by ember/__init__; importing it here would be a cycle
    return isinstance(obj, (storage.TypedStorage, storage.UntypedStorage))


def _tensor_arg(fn, input):
    if not isinstance(input, _C.TensorBase):
        raise TypeError(f"{fn}(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    return input


def get_device(input):
    """-1 for a CPU tensor, else the device index."""
    return _tensor_arg("get_device", input).get_device()


def is_inference(input):
    """Whether input is an inference-mode tensor."""
    return _tensor_arg("is_inference", input).is_inference()


def is_distributed(input):
    """Whether the tensor is sharded by the legacy THD backend: never, for any tensor."""
    _tensor_arg("is_distributed", input)
    return False


def is_same_size(input, other):
    """Whether input and other have the same shape."""
    return tuple(_tensor_arg("is_same_size", input).shape) == tuple(_tensor_arg("is_same_size", other).shape)


def is_signed(input):
    """Whether input's dtype is signed."""
    return _tensor_arg("is_signed", input).is_signed()


def get_device_module(device=None):
    """The ember submodule of a device type: ember.cpu for "cpu" (and for None: Ember has no
    accelerator), ember.cuda for "cuda", ..."""
    if device is None:
        kind = "cpu"
    elif isinstance(device, _C.device):
        kind = device.type
    elif isinstance(device, str):
        kind = _C.device(device).type
    else:
        raise RuntimeError(f"Invalid value of device '{device}', expect torch.device, str, or None")
    module = getattr(sys.modules["ember"], kind, None)
    if module is None or not isinstance(module, type(sys)):
        raise RuntimeError(f"Device '{kind}' does not have a corresponding module registered as 'ember.{kind}'.")
    return module


def thread_safe_generator():
    """The calling DataLoader thread worker's own generator; None elsewhere (the default generator is
    then used). Ember's DataLoader workers are processes, so this is None there too."""
    from .utils.data import get_worker_info
    info = get_worker_info()
    if info is not None and getattr(info, "worker_method", None) == "thread" and getattr(info, "rng", None):
        return info.rng.torch_generator
    return None


# ---- sym_* helpers: symbolic-shape-aware in PyTorch, plain arithmetic on Python numbers ----

def _number_types():
    try:
        import numpy as np
        return (np.integer, np.floating, int, float), (np.floating, float)
    except ImportError:
        return (int, float), (float,)


def sym_int(a):
    """int(a) (PyTorch's symbolic-shape-aware cast; Ember's sizes are plain ints)."""
    return builtins.int(a)


def sym_float(a):
    """float(a) (PyTorch's symbolic-shape-aware cast)."""
    return builtins.float(a)


def _sym_extreme(pick, a, b):
    numbers, floats = _number_types()
    for v in (a, b):
        if not isinstance(v, numbers):
            raise AssertionError(f"expected {numbers}, got {type(v)}")
    # any float argument makes the result a float, unlike builtins.max
    return builtins.float(pick(a, b)) if isinstance(a, floats) or isinstance(b, floats) else pick(a, b)


def sym_max(a, b):
    """max(a, b), a float when either is a float."""
    return _sym_extreme(builtins.max, a, b)


def sym_min(a, b):
    """min(a, b), a float when either is a float."""
    return _sym_extreme(builtins.min, a, b)


def sym_not(a):
    """not a."""
    return not a


def sym_ite(b, t, f):
    """t if b else f; b must be a bool and t, f of one type."""
    if not isinstance(b, builtins.bool):
        raise AssertionError(f"expected SymBool or bool, got {type(b)}")
    if type(t) is not type(f):
        raise AssertionError(f"type mismatch: {type(t)} vs {type(f)}")
    return t if b else f


def sym_sqrt(a):
    """Square root of a plain number (math.sqrt: Ember has no symbolic shapes)."""
    return math.sqrt(a)


def sym_sum(*args):
    """sym_sum(a, b, c) or sym_sum([a, b, c])."""
    if len(args) == 1 and isinstance(args[0], (list, tuple)):
        args = args[0]
    return builtins.sum(args)


_INT64_MIN, _INT64_MAX = -(1 << 63), (1 << 63) - 1


def sym_constrain_range(size, *, min=None, max=None):
    """Asserts min <= size <= max (PyTorch records it for a symbolic size; a concrete int is checked)."""
    lo = _INT64_MIN if min is None else min
    hi = _INT64_MAX if max is None else max
    if isinstance(size, int) and not lo <= size <= hi:
        raise RuntimeError(f"Invalid value range for {size} between [{lo}, {hi}].")


def sym_constrain_range_for_size(size, *, min=None, max=None):
    """sym_constrain_range for a size: min defaults to 0 and max must allow sizes of 2 and more."""
    if max is not None and max < 2:
        raise RuntimeError(f"Max value to constrain_range_for_size must be greater than 2. got: {max}")
    sym_constrain_range(size, min=0 if min is None else min, max=max)


def sym_fresh_size(expr):
    """expr itself (PyTorch makes a fresh symbolic size; a concrete one is kept)."""
    return expr


__all__ = [
    "e", "pi", "inf", "nan", "newaxis", "has_lapack", "has_mkl", "has_openmp", "has_spectral", "is_vulkan_available",
    "set_default_device", "get_default_device", "set_default_tensor_type", "get_num_interop_threads",
    "set_num_interop_threads", "init_num_threads", "set_flush_denormal", "set_warn_always", "is_warn_always_enabled",
    "set_anomaly_enabled", "typename", "is_storage", "get_device", "is_inference", "is_distributed",
    "get_device_module", "sym_int", "sym_float", "sym_max", "sym_min", "sym_not", "sym_ite", "sym_sqrt", "sym_sum",
    "is_same_size", "is_signed", "sym_constrain_range", "sym_constrain_range_for_size", "sym_fresh_size",
    "thread_safe_generator"
]
