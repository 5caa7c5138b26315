"""The complex-number views and predicates of torch's API: is_complex, conj, real, imag, resolve_conj, ...
conj() of a complex tensor is a view with the conjugate bit flipped, as in PyTorch (Note [Conjugate views]
in csrc/ember/core/tensor_impl.h); resolve_conj() materializes it. The imaginary part of a conjugate view is a
view with the negative bit (is_neg(), resolve_neg()). real/imag are views of view_as_real's last dim."""

from . import _C
from ._C import _ops
from ._tensor import Tensor


def _tensor_arg(fn, input):
    if not isinstance(input, _C.TensorBase):
        raise TypeError(f"{fn}(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    return input


def is_complex(input):
    """Whether input's dtype is complex (complex64 or complex128)."""
    return _tensor_arg("is_complex", input).dtype.is_complex


def is_conj(input):
    """Whether input is a conjugate view (conj() of a complex tensor)."""
    return _tensor_arg("is_conj", input).is_conj()


def is_neg(input):
    """Whether input is a negative view (the imaginary part of a conjugate view)."""
    return _tensor_arg("is_neg", input).is_neg()


def conj(input):
    """The complex conjugate: a real tensor itself, a complex one as a view with the conjugate bit flipped."""
    if not _tensor_arg("conj", input).dtype.is_complex:
        return input
    if input.is_sparse:
        return _ops.conj_physical(input)
    return _ops.conj(input)


def resolve_conj(input):
    """input itself, or for a conjugate view a new tensor holding its values."""
    return _tensor_arg("resolve_conj", input).resolve_conj()


def resolve_neg(input):
    """input itself, or for a negative view a new tensor holding its values."""
    return _tensor_arg("resolve_neg", input).resolve_neg()


_conj_physical_op = _ops.conj_physical


def conj_physical(input, *, out=None):
    """The complex conjugate, computed: a real tensor itself (as torch returns it), unless out= is given."""
    if out is None and isinstance(input, _C.TensorBase) and not input.dtype.is_complex:
        return input
    return _conj_physical_op(input, out=out)


def _tensor_conj_physical(self):
    """The complex conjugate, computed: the tensor itself for a real dtype."""
    return self if not self.dtype.is_complex else _conj_physical_op(self)


def real(input):
    """The real part: a view of a complex tensor's real components; a real tensor itself."""
    if not _tensor_arg("real", input).dtype.is_complex:
        return input
    # a conjugate view's real parts are its storage's
    return _ops.view_as_real(_ops.conj(input) if input.is_conj() else input).select(-1, 0)


def imag(input):
    """The imaginary part: a view of a complex tensor's imaginary components (of a conjugate view: the stored
    ones under the negative bit)."""
    if not _tensor_arg("imag", input).dtype.is_complex:
        raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
    if input.is_conj():
        return _ops._neg_view(_ops.view_as_real(_ops.conj(input)).select(-1, 1))
    return _ops.view_as_real(input).select(-1, 1)


def view_as_real_copy(input, *, out=None):
    """view_as_real(input) as a new tensor."""
    r = _ops.view_as_real(input).clone()
    return r if out is None else out.resize_(r.shape).copy_(r)


def view_as_complex_copy(input, *, out=None):
    """view_as_complex(input) as a new tensor."""
    r = _ops.view_as_complex(input).clone()
    return r if out is None else out.resize_(r.shape).copy_(r)


def _stored(t):
    """t, or for a conjugate (negative) view the alias of its storage without the bits: the stored values,
    as the bytes of a storage or a checkpoint hold them."""
    if t.is_conj():
        t = _ops.conj(t)
    return _ops._neg_view(t) if t.is_neg() else t


def _with_bits(stored, conj, neg):
    """The view of stored values that reads them conjugated (complex only) and/or negated: _stored's inverse."""
    if conj and stored.dtype.is_complex:
        stored = _ops.conj(stored)
    return _ops._neg_view(stored) if neg else stored


def _set_real(self, value):
    real(self).copy_(value)


def _set_imag(self, value):
    imag(self).copy_(value)


def _complex(self):
    return complex(self.item())


Tensor.is_complex = is_complex
Tensor.conj = conj
Tensor.conj_physical = _tensor_conj_physical
Tensor.real = property(real, _set_real)
Tensor.imag = property(imag, _set_imag)
Tensor.__complex__ = _complex

__all__ = ["is_complex", "is_conj", "is_neg", "conj", "conj_physical", "resolve_conj", "resolve_neg", "real", "imag",
           "view_as_real_copy", "view_as_complex_copy"]
