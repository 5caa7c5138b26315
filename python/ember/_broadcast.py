"""torch.broadcast_shapes: the shape that tensors of the given shapes broadcast to, without making
any tensor."""
import operator
from collections.abc import Sequence

from ._tensor import Size

__all__ = ["broadcast_shapes"]


def broadcast_shapes(*shapes):
    """The broadcast of the shapes (ints stand for 1-D shapes; None is skipped), as an ember.Size.
    RuntimeError names the first shape that does not broadcast; a negative size is a ValueError."""
    shapes = [(s,) if isinstance(s, int) else s for s in shapes if s is not None]
    for s in shapes:
        if not isinstance(s, Sequence):
            raise RuntimeError(f"Input shapes should be of type ints, a tuple of ints, or a list of ints, got {s}")
    out = [1] * max((len(s) for s in shapes), default=0)
    for i, s in enumerate(shapes):
        for d in range(-1, -len(s) - 1, -1):  # aligned from the right
            if s[d] == out[d]:
                continue
            if out[d] == 1:  # so far every shape had 1 (or nothing) here: this one sets the size
                if s[d] < 0:
                    raise ValueError("Attempting to broadcast a dimension with negative length!")
                out[d] = s[d]
            elif s[d] != 1:
                raise RuntimeError(f"Attempting to broadcast a dimension of length {s[d]} at {d}! Mismatching "
                                   f"argument at index {i} had {s}; but expected shape should be broadcastable "
                                   f"to {out}")
    sizes = []
    for j, n in enumerate(out):  # torch.Size's own check: every size an integer
        try:
            sizes.append(operator.index(n))
        except TypeError:
            raise TypeError(f"ember.Size() takes an iterable of 'int' (item {j} is '{type(n).__name__}')") from None
    return Size(sizes)
