"""Forward-mode AD with dual tensors: inside `with dual_level():`, make_dual(x, t) carries the
tangent t through every op that has a forward formula (elementwise ops, matmul, views, sum/mean);
unpack_dual(y) returns (primal, tangent)."""
import collections

from .. import _C

UnpackedDualTensor = collections.namedtuple("UnpackedDualTensor", ["primal", "tangent"])

_current_level = None


def enter_dual_level():
    global _current_level
    _current_level = _C._enter_dual_level()
    return _current_level


def exit_dual_level(*, level=None):
    global _current_level
    if level is None:
        level = _current_level
    if level is None:
        raise RuntimeError("Trying to exit a forward AD level that was not the last one that was created. "
                           "This is not supported.")
    _C._exit_dual_level(level)
    _current_level = None


class dual_level:
    def __enter__(self):
        return enter_dual_level()

    def __exit__(self, *exc):
        exit_dual_level()


def make_dual(tensor, tangent, *, level=None):
    if _current_level is None:
        raise RuntimeError("To create a dual Tensor, you need to first enter a dual level using "
                           "ember.autograd.forward_ad.dual_level")
    if not (tensor.is_floating_point() and tangent.is_floating_point()):
        raise ValueError(f"Expected primal to be floating point or complex, but got: {tensor.dtype}")
    if tuple(tangent.shape) != tuple(tensor.shape):
        raise RuntimeError(
            "Trying to set a forward gradient that has a different size than that of the original Tensor, this is "
            f"not supported. Tensor is of size {list(tensor.shape)} while the given forward gradient is of size "
            f"{list(tangent.shape)}.")
    return _C._make_dual(tensor, tangent)


def unpack_dual(tensor, *, level=None):
    primal, tangent = _C._unpack_dual(tensor)
    return UnpackedDualTensor(primal, tangent)
