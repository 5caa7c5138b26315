"""Small top-level helpers of the ember namespace."""
from . import _C
from ._C import _ops
from ._tensor_str import set_printoptions  # noqa: F401  (ember.set_printoptions)


class layout:
    """Tensor memory layout: ember.strided (dense) or ember.sparse_coo."""

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return "ember." + self.name


strided = layout("strided")
sparse_coo = layout("sparse_coo")


class memory_format:
    """A memory format: row-major (contiguous_format), a dense input's own strides (preserve_format),
    or channels varying fastest for 4-d / 5-d tensors (channels_last, channels_last_3d)."""

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return "ember." + self.name


contiguous_format = memory_format("contiguous_format")
preserve_format = memory_format("preserve_format")
channels_last = memory_format("channels_last")
channels_last_3d = memory_format("channels_last_3d")


def is_tensor(obj):
    """True when the object is an Ember tensor."""
    return isinstance(obj, _C.TensorBase)


def is_floating_point(t):
    """True when the tensor's dtype is a floating-point type."""
    return t.is_floating_point()


def is_nonzero(t):
    """Truth value of a one-element tensor (raises for other sizes)."""
    if t.numel() != 1:
        raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
    return bool(t.item())


def numel(t):
    """Number of elements of a tensor."""
    return t.numel()


def set_default_dtype(d):
    """Set the floating-point dtype that new tensors get by default."""
    _C.set_default_dtype(d)


def _check_device_available(d):
    """For the Python-level constructors that build on the CPU: a device other than the CPU raises
    PyTorch's error when it cannot be used (AssertionError on a build without CUDA, RuntimeError without
    a GPU), and NotImplementedError when it can, rather than quietly building on the CPU."""
    _C._check_device(d)
    raise NotImplementedError(f"this constructor builds on the CPU only: create the tensor there and move it "
                              f"with .to('{d}')")


def _checked_device(device):
    """The device `device` names (None stays None), after checking it can be used (PyTorch's errors)."""
    if device is None:
        return None
    d = device if isinstance(device, _C.device) else _C.device(device)
    if d.type != "cpu":
        _C._check_device(d)
    return d


def as_tensor(data, dtype=None, device=None):
    """Share memory with `data` when possible (a Tensor or NumPy array of the right dtype and device)."""
    _checked_device(device)
    if isinstance(data, _C.TensorBase):
        return data.to(dtype=dtype, device=device) if dtype is not None or device is not None else data
    if type(data).__module__ == "numpy" and type(data).__name__ == "ndarray":
        t = _C.from_numpy(data)
        return t.to(dtype=dtype, device=device) if dtype is not None or device is not None else t
    return _ops.tensor(data, dtype=dtype, device=device)


def memory_stats():
    """Current and peak bytes held by CPU tensors, and allocation counts."""
    return _C._memory_stats()
