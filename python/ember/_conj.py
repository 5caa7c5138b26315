"""The complex-number views and predicates of torch's API (is_complex, conj, real, imag, ...; angle is an ops.yaml op)
as they behave on real tensors, so code written for both kinds runs: a real tensor is its own
conjugate and real part, has no imaginary part, and never carries a lazy conjugate or negative bit.
Ember's dtypes are all real (dtype.is_complex is False for each), so these are exact for every tensor
Ember can make; a complex dtype would need its own kernels here."""

from . import _C
from ._C import _ops
from ._tensor import Tensor


def _tensor_arg(fn, input):
    if not isinstance(input, _C.TensorBase):
        raise TypeError(f"{fn}(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    return input


def _real_only(fn, input):
    """input, after checking it is a real tensor (the only kind whose result here is exact)."""
    if _tensor_arg(fn, input).dtype.is_complex:
        raise NotImplementedError(f"{fn}: complex tensors are not supported")
    return input


def is_complex(input):
    """True when the tensor's dtype is a complex type."""
    return _tensor_arg("is_complex", input).dtype.is_complex


def is_conj(input):
    """Whether input is a lazily conjugated view: never, for a real tensor."""
    _real_only("is_conj", input)
    return False


def is_neg(input):
    """Whether input is a lazily negated view (PyTorch's conj of imaginary parts): never here."""
    _real_only("is_neg", input)
    return False


def conj(input):
    """The complex conjugate: a real tensor itself."""
    return _real_only("conj", input)


def resolve_conj(input):
    """Materializes a lazy conjugation: a real tensor has none, so it is returned as is."""
    return _real_only("resolve_conj", input)


def resolve_neg(input):
    """The tensor with a pending negation bit applied (Ember keeps none: the tensor itself)."""
    return _real_only("resolve_neg", input)


def conj_physical(input, *, out=None):
    """The conjugate, computed eagerly: a real tensor itself (copied into out when given)."""
    _real_only("conj_physical", input)
    if out is None:
        return input
    if out.dtype != input.dtype:
        raise RuntimeError(f"Found dtype {_type_name(out.dtype)} but expected {_type_name(input.dtype)}")
    return _ops.where(_ops.tensor(True), input, input, out=out)


def _conj_physical_(self):
    """Conjugate the values in place (a no-op for real tensors)."""
    _real_only("conj_physical_", self)
    return self


def real(input):
    """The real part: a real tensor itself."""
    return _real_only("real", input)


def imag(input):
    """Imaginary part of a complex tensor (a view)."""
    _real_only("imag", input)
    raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")


def _type_name(dtype):
    # c10's ScalarType names, as torch's messages print them
    return _ops.empty((), dtype=dtype).type().split(".")[-1][:-len("Tensor")]


Tensor.is_complex = is_complex
Tensor.is_conj = is_conj
Tensor.is_neg = is_neg
Tensor.conj = conj
Tensor.resolve_conj = resolve_conj
Tensor.resolve_neg = resolve_neg
Tensor.conj_physical = conj_physical
Tensor.conj_physical_ = _conj_physical_
Tensor.real = property(real, lambda self, value: self.copy_(value))  # setting the real part of a real tensor
Tensor.imag = property(imag, lambda self, value: imag(self))

__all__ = ["is_complex", "is_conj", "is_neg", "conj", "resolve_conj", "resolve_neg", "conj_physical", "real", "imag"]
