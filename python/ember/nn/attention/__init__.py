"""ember.nn.attention: which kernels scaled_dot_product_attention may use (torch.nn.attention).

PyTorch picks among several SDPA backends; Ember's CPU build has one, the MATH backend (the
composition in nn/_functional_attention.py). The switches are still kept per backend, as PyTorch's, so
that sdpa_kernel(...) nests and restores like torch's, and scaled_dot_product_attention raises torch's
"no kernel" errors when the enabled set leaves MATH out. The flash-attention implementation registry
keeps torch's semantics; Ember ships no implementation in it (FA3 / FA4 are CUDA kernels)."""
import contextlib
import enum
import logging

from ..._tensor import Tensor

__all__ = [
    "SDPBackend",
    "sdpa_kernel",
    "WARN_FOR_UNFUSED_KERNELS",
    "register_flash_attention_impl",
    "activate_flash_attention_impl",
    "list_flash_attention_impls",
    "current_flash_attention_impl",
    "restore_flash_attention_impl",
]

# Set to True to be warned why the fused kernels were not used (they never are on Ember's CPU build).
WARN_FOR_UNFUSED_KERNELS = False


class SDPBackend(enum.Enum):
    """The backends of scaled_dot_product_attention, with torch's values (for sdpa_kernel)."""

    ERROR = -1
    MATH = 0
    FLASH_ATTENTION = 1
    EFFICIENT_ATTENTION = 2
    CUDNN_ATTENTION = 3
    OVERRIDEABLE = 4

    def __int__(self):
        return self.value


# The selectable backends in the order torch lists them, and torch's default priority (by value).
_SELECTABLE = (SDPBackend.CUDNN_ATTENTION, SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION,
               SDPBackend.MATH, SDPBackend.OVERRIDEABLE)
_enabled = set(_SELECTABLE)
_priority = [1, 2, 0, 3, 4]


def _math_enabled():
    """Whether the one kernel Ember has may run (read by scaled_dot_product_attention)."""
    return SDPBackend.MATH in _enabled


def _check_kernel_available():
    """Raise torch's CPU error when the enabled backends leave out MATH: torch's CPU dispatcher tries
    flash (which Ember has not) then math, and with neither enabled finds no backend at all."""
    if SDPBackend.MATH in _enabled:
        return
    if SDPBackend.FLASH_ATTENTION not in _enabled:
        raise RuntimeError("No viable backend for scaled_dot_product_attention was found. This is likely due to "
                           "turning off both the math kernel and the fused kernels.")
    import warnings
    warnings.warn("Flash attention kernel not used because: Ember's CPU build has no flash attention kernel",
                  UserWarning, stacklevel=4)
    raise RuntimeError("No available kernel.  Aborting execution.")


def _cur_sdpa_kernel_backends(with_priority=False):
    backends = [b for b in _SELECTABLE if b in _enabled]
    if with_priority:
        backends.sort(key=lambda b: _priority.index(int(b)))
    return backends


def _sdpa_kernel(backends, set_priority=False):
    _enabled.clear()
    _enabled.update(b for b in _SELECTABLE if b in backends)
    if set_priority:
        order = [int(b) for b in backends]
        order += [p for p in _priority if p not in order]
        _priority[:] = order


@contextlib.contextmanager
def sdpa_kernel(backends, set_priority=False):
    """Context manager enabling only `backends` (one SDPBackend or a list) for scaled_dot_product_attention;
    with set_priority the list's order is their priority. The previous selection is restored on exit."""
    if not isinstance(backends, (list, SDPBackend)):
        raise AssertionError("Backend must be an instance of SDPBackend or a list of SDPBackend instances, got "
                             f"{type(backends).__name__}")
    if isinstance(backends, SDPBackend):
        backends = [backends]
    backends = list(dict.fromkeys(backends))
    previous = _cur_sdpa_kernel_backends(with_priority=set_priority)
    try:
        _sdpa_kernel(backends, set_priority)
        yield {}
    finally:
        _sdpa_kernel(previous, set_priority)


class SDPAParams:
    """The arguments of one scaled_dot_product_attention call, for the can_use_* checks (read-only)."""

    __slots__ = ("_query", "_key", "_value", "_attn_mask", "_dropout", "_is_causal", "_enable_gqa")

    def __init__(self, query, key, value, attn_mask, dropout, is_causal, enable_gqa):
        for name, t in (("query", query), ("key", key), ("value", value)):
            if not isinstance(t, Tensor):
                raise TypeError(f"SDPAParams(): {name} must be a Tensor, got {type(t).__name__}")
        if attn_mask is not None and not isinstance(attn_mask, Tensor):
            raise TypeError(f"SDPAParams(): attn_mask must be a Tensor or None, got {type(attn_mask).__name__}")
        self._query, self._key, self._value, self._attn_mask = query, key, value, attn_mask
        self._dropout, self._is_causal, self._enable_gqa = float(dropout), bool(is_causal), bool(enable_gqa)

    query = property(lambda self: self._query, doc="The query tensor.")
    key = property(lambda self: self._key, doc="The key tensor.")
    value = property(lambda self: self._value, doc="The value tensor.")
    attn_mask = property(lambda self: self._attn_mask, doc="The attention mask, or None.")
    dropout = property(lambda self: self._dropout, doc="The dropout probability.")
    is_causal = property(lambda self: self._is_causal, doc="Whether the attention is causal.")
    enable_gqa = property(lambda self: self._enable_gqa, doc="Whether grouped-query attention is enabled.")


def _check_params(params):
    if not isinstance(params, SDPAParams):
        raise TypeError(f"expected SDPAParams, got {type(params).__name__}")


def can_use_flash_attention(params, debug=False):
    """Whether FlashAttention can run these arguments: never on Ember (no CUDA kernels), as torch's CPU build."""
    _check_params(params)
    return False


def can_use_efficient_attention(params, debug=False):
    """Whether memory-efficient attention can run these arguments: never on Ember (no CUDA kernels)."""
    _check_params(params)
    return False


def _raise_kernel_warnings(params):
    """With WARN_FOR_UNFUSED_KERNELS set, warn that the fused kernels cannot run these arguments."""
    if WARN_FOR_UNFUSED_KERNELS:
        import warnings
        if not can_use_efficient_attention(params):
            warnings.warn("Efficient attention can't be used because:", stacklevel=2)
            can_use_efficient_attention(params, True)
        if not can_use_flash_attention(params):
            warnings.warn("Flash attention can't be used because:", stacklevel=2)
            can_use_flash_attention(params, True)


# ---- the flash-attention implementation registry: name -> the callable that installs it
_logger = logging.getLogger(__name__)
_flash_attention_impls = {}
_flash_attention_active = None  # (name, handle) of the activated implementation, if it returned a handle


def register_flash_attention_impl(impl, *, register_fn):
    """Register `register_fn`, the callable that installs flash attention implementation `impl`."""
    _flash_attention_impls[impl] = register_fn


def activate_flash_attention_impl(impl):
    """Install a registered flash attention implementation (restoring the default first); ValueError if unknown."""
    global _flash_attention_active
    restore_flash_attention_impl(_raise_warn=False)
    register_fn = _flash_attention_impls.get(impl)
    if register_fn is None:
        raise ValueError(f"Unknown flash attention impl '{impl}'. Available implementations: "
                         f"{list_flash_attention_impls()}")
    handle = register_fn()
    if handle is not None:
        _flash_attention_active = (impl, handle)


def list_flash_attention_impls():
    """The names of the registered flash attention implementations, sorted."""
    return sorted(_flash_attention_impls)


def current_flash_attention_impl():
    """The name of the activated flash attention implementation, or None for the default."""
    return None if _flash_attention_active is None else _flash_attention_active[0]


def restore_flash_attention_impl(_raise_warn=True):
    """Remove the activated flash attention implementation (its handle's remove()), back to the default."""
    global _flash_attention_active
    handle = None if _flash_attention_active is None else _flash_attention_active[1]
    if handle is not None:
        handle.remove()
    elif _raise_warn:
        _logger.warning("Trying to restore default FA2 impl when no custom impl was activated")
    _flash_attention_active = None
