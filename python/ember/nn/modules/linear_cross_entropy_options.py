"""LinearCrossEntropyOptions: opting linear_cross_entropy into its chunked path, which walks the batch in
chunks so that the (N, num_classes) logits never exist at once (an LLM vocabulary head's memory peak)."""
import dataclasses
from typing import NamedTuple

from ... import _C

__all__ = ["LinearCrossEntropyOptions"]


class _AutoDefault(NamedTuple):
    acc_policy: str
    chunking_method: str


# What "auto" resolves to per (device type, input dtype), as torch's table: low-precision input on CPU
# accumulates in float32 ("accurate"); anything not listed takes the fallback.
_AUTO_DEFAULTS = {
    ("cuda", _C.bfloat16): _AutoDefault("compact", "aspect_ratio:2"),
    ("cuda", _C.float16): _AutoDefault("compact", "aspect_ratio:2"),
    ("cpu", _C.bfloat16): _AutoDefault("accurate", "aspect_ratio"),
    ("cpu", _C.float16): _AutoDefault("accurate", "aspect_ratio"),
}
_AUTO_FALLBACK = _AutoDefault("compact", "aspect_ratio:2")
_ACC_POLICIES = {"auto", "accurate", "balanced", "compact"}


def _ceil_div(a, b):
    return -(-a // b)


@dataclasses.dataclass(slots=True, frozen=True)
class LinearCrossEntropyOptions:
    """Settings of linear_cross_entropy's chunked path (batch chunk size or its heuristic, accumulation)."""

    # allow a second backward (retain_graph=True) of the mean / sum losses, at the cost of keeping the
    # precomputed gradients instead of consuming them
    allow_retain_graph: bool = False
    # rows per chunk; None: one chunk (or what chunking_method picks)
    batch_chunk_size: int | None = None
    # "auto", "aspect_ratio" or "aspect_ratio:N" (chunk logits sized like the input, divided by N), or None
    chunking_method: str | None = "auto"
    # which intermediates are kept in acc_dtype: "accurate" | "balanced" | "compact" | "auto"
    acc_policy: str = "auto"
    # the accumulation dtype; None: float32 for float16/bfloat16 input under "auto", else the input's dtype
    acc_dtype: object = None

    def __post_init__(self):
        if self.acc_policy not in _ACC_POLICIES:
            raise ValueError(f"invalid acc_policy: {self.acc_policy!r}")
        if self.chunking_method is not None and self.chunking_method != "auto":
            name, sep, factor = self.chunking_method.partition(":")
            factor = factor if sep else "1"
            if not (name == "aspect_ratio" and factor.isdigit() and int(factor) > 0):
                raise ValueError(f"invalid chunking_method: {self.chunking_method!r}")
        size = self.batch_chunk_size
        if not (size is None or (isinstance(size, int) and size > 0)):
            raise ValueError(f"batch_chunk_size must be positive int or None, got {size!r}")
        if self.acc_dtype is not None and self.acc_dtype not in (_C.float16, _C.bfloat16, _C.float32, _C.float64):
            raise ValueError("acc_dtype must be one of {None, float16, bfloat16, float32, float64}, "
                             f"got {self.acc_dtype!r}. Pass acc_dtype=None to let the op pick "
                             "automatically.")

    @staticmethod
    def _resolve_auto_acc_dtype(dtype, device):
        # float32 accumulation for low-precision input where a mixed-precision matmul exists (Ember: the CPU)
        if device is None or dtype not in (_C.float16, _C.bfloat16):
            return None
        return _C.float32 if device.type == "cpu" else None

    def _compute_batch_chunk_size(self, num_batches, in_features, num_classes, method=None):
        method = str(method if method is not None else self.chunking_method)
        if not method.startswith("aspect_ratio"):
            raise AssertionError(f"unhandled chunking_method: {method!r}")
        factor = int(method.split(":", 1)[1]) if ":" in method else 1
        # a chunk's (rows, num_classes) logits as large as the (num_batches, in_features) input
        target = _ceil_div(num_batches, _ceil_div(num_classes, in_features))
        chunk_size = 1 << (target - 1).bit_length()  # the next power of two
        return min(chunk_size // factor, num_batches)

    def _adjust(self, num_batches, in_features, num_classes, dtype, device=None):
        """These options with "auto" and None resolved for one call (shapes, dtype, device)."""
        acc_policy, chunking_method = self.acc_policy, self.chunking_method
        if chunking_method == "auto" and self.batch_chunk_size is not None:
            chunking_method = None  # an explicit chunk size wins over the heuristic
        if acc_policy == "auto" or chunking_method == "auto":
            auto = _AUTO_DEFAULTS.get((device.type, dtype), _AUTO_FALLBACK) if device is not None else _AUTO_FALLBACK
            acc_policy = auto.acc_policy if acc_policy == "auto" else acc_policy
            chunking_method = auto.chunking_method if chunking_method == "auto" else chunking_method
        batch_chunk_size = num_batches if self.batch_chunk_size is None else min(self.batch_chunk_size, num_batches)
        if chunking_method is not None:
            batch_chunk_size = self._compute_batch_chunk_size(num_batches, in_features, num_classes, chunking_method)
            if self.batch_chunk_size is not None and self.batch_chunk_size != batch_chunk_size:
                raise ValueError(f"batch_chunk_size (={self.batch_chunk_size}) and chunking_method "
                                 f"('{chunking_method}') give different chunk sizes ({self.batch_chunk_size} vs "
                                 f"{batch_chunk_size}); pass only one.")
        if self.acc_dtype is None:
            auto_acc = self._resolve_auto_acc_dtype(dtype, device) if self.acc_policy == "auto" else None
            acc_dtype = auto_acc if auto_acc is not None else dtype
        else:
            acc_dtype = self.acc_dtype
        return dataclasses.replace(self, acc_policy=acc_policy, chunking_method=chunking_method,
                                   batch_chunk_size=max(1, batch_chunk_size), acc_dtype=acc_dtype)
