"""Process-wide switches of PyTorch's top-level API: deterministic algorithms, float32 matmul
precision and warn-always. Ember's CPU kernels are deterministic and compute float32 matmuls in full float32; the
float32 matmul precision reaches cuBLAS (TF32 unless "highest") on the GPU."""
import warnings

_deterministic = {"mode": False, "warn_only": False}
_matmul_precision = ["highest"]


def use_deterministic_algorithms(mode, *, warn_only=False):
    """Make ops that have no deterministic implementation raise (or warn)."""
    if not isinstance(mode, bool):
        raise TypeError(f"use_deterministic_algorithms(): argument 'mode' (position 1) must be bool, not "
                        f"{type(mode).__name__}")
    if not isinstance(warn_only, bool):
        raise TypeError(f"use_deterministic_algorithms(): argument 'warn_only' must be bool, not "
                        f"{type(warn_only).__name__}")
    _deterministic["mode"] = mode
    _deterministic["warn_only"] = warn_only  # kept even with mode off, as in PyTorch
    from . import _C  # the C++ ops read it too (GPU atomics, cuDNN's algorithm choice)
    _C._set_deterministic_algorithms(mode, warn_only)


def are_deterministic_algorithms_enabled():
    """True when use_deterministic_algorithms(True) is in effect."""
    return _deterministic["mode"]


def is_deterministic_algorithms_warn_only_enabled():
    """True when nondeterministic ops only warn instead of raising."""
    return _deterministic["warn_only"]


def set_deterministic_debug_mode(debug_mode):
    """0/"default": off, 1/"warn": deterministic with warnings, 2/"error": deterministic."""
    names = {"default": 0, "warn": 1, "error": 2}
    if isinstance(debug_mode, str):
        if debug_mode not in names:
            raise RuntimeError(f"invalid value of debug_mode, expected one of `default`, `warn`, `error`, but got "
                               f"{debug_mode}")
        debug_mode = names[debug_mode]
    elif isinstance(debug_mode, int) and not isinstance(debug_mode, bool):
        if debug_mode not in (0, 1, 2):
            raise RuntimeError(f"invalid value of debug_mode, expected 0, 1, or 2, but got {debug_mode}")
    else:
        raise TypeError(f"debug_mode must be str or int, but got {type(debug_mode)}")
    use_deterministic_algorithms(debug_mode != 0, warn_only=debug_mode == 1)


def get_deterministic_debug_mode():
    """The deterministic debug mode: 0 (off), 1 (warn) or 2 (error)."""
    if not _deterministic["mode"]:
        return 0
    return 1 if _deterministic["warn_only"] else 2


def set_float32_matmul_precision(precision):
    """"highest", "high" or "medium"; anything else warns and changes nothing, as in PyTorch."""
    if not isinstance(precision, str):
        raise RuntimeError(f"set_float32_matmul_precision expects a str, but got {type(precision).__name__}")
    if precision not in ("highest", "high", "medium"):
        warnings.warn(f"{precision} is not one of 'highest', 'high', or 'medium'; the current "
                      "set_float32_matmul_precision call has no effect.", stacklevel=2)
        return
    _matmul_precision[0] = precision
    from . import _C  # cuBLAS reads TF32 from the core: "high" and "medium" allow it, as PyTorch
    _, fp16, bf16 = _C._cuda_matmul_flags()
    _C._cuda_set_matmul_flags(precision != "highest", fp16, bf16)


def get_float32_matmul_precision():
    """The float32 matmul precision setting: 'highest', 'high' or 'medium'."""
    return _matmul_precision[0]


_warn_always = [False]


def set_warn_always(b, /):
    """When on, warnings Ember gives once per process (asarray's requires_grad, meshgrid's indexing)
    are given every time."""
    if not isinstance(b, bool):
        raise RuntimeError(f"setWarnOnlyOnce expects a bool, but got {type(b).__name__}")
    _warn_always[0] = b


def is_warn_always_enabled():
    """Whether once-per-process warnings are given every time (set_warn_always)."""
    return _warn_always[0]
