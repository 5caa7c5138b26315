"""The `*_copy` family (torch.t_copy, torch.narrow_copy, ...): each view op's result as a new
contiguous tensor that shares no memory with its input (what functionalized programs call instead
of views). They are the view followed by a contiguous clone, so autograd flows through both.
Also split_with_sizes and the unsafe_* splits, whose results are the plain splits' views."""
from . import _C
from ._C import _ops
from ._tensor import Tensor
from ._utils import contiguous_format

_TRUE = None  # a 0-d True, made on first use: `where(True, r, r, out=out)` writes r into out, resizing it


def _fresh(view):
    return _ops.clone(view, memory_format=contiguous_format)


def _write_out(result, out):
    """out= as torch's generated out variants: same dtype required, resized to the result's shape."""
    global _TRUE
    if out.dtype != result.dtype:
        raise RuntimeError(f"Expected out tensor to have dtype {_dtype_word(result.dtype)}, but got "
                           f"{_dtype_word(out.dtype)} instead")
    if _TRUE is None:
        _TRUE = _ops.tensor(True)
    return _ops.where(_TRUE, result, result, out=out)


def _dtype_word(dtype):
    # c10's type names, which torch's dtype-mismatch message uses
    return {"float32": "float", "float64": "double", "float16": "c10::Half", "bfloat16": "c10::BFloat16",
            "int64": "long int", "int32": "int", "int16": "short int", "int8": "signed char",
            "uint8": "unsigned char", "bool": "bool"}.get(str(dtype).split(".")[-1], str(dtype))


def _single(view, out):
    result = _fresh(view)
    return result if out is None else _write_out(result, out)


def _many(name, views, out):
    results = tuple(_fresh(v) for v in views)
    if out is None:
        return results
    if len(out) != len(results):
        raise RuntimeError(f"{name}_out() expected an out= argument of size {len(results)}, got size {len(out)}")
    for r, o in zip(results, out):
        o.copy_(r)  # list outs are copied into as they are (not resized), as in PyTorch
    return None  # torch's list-out copies return nothing


def detach(input):
    """A view of input's data outside the autograd graph (torch.detach; the method is Tensor.detach)."""
    return input.detach()


def alias_copy(input, *, out=None):
    """input as a new contiguous tensor (torch.alias's copy)."""
    return _single(input, out)


def as_strided_scatter(input, src, size, stride, storage_offset=None):
    """A copy of input whose elements at the as_strided(size, stride, storage_offset) view are src's:
    the inverse of as_strided_copy (gradients: src gets that view of grad, input the rest)."""
    output = input.clone()
    region = output.as_strided(size, stride, storage_offset)
    if tuple(region.shape) != tuple(src.shape):
        raise RuntimeError(f"expected src to have a size equal to the slice of self. src size = {list(src.shape)}, "
                           f"slice size = {list(region.shape)}")
    region.copy_(src)
    return output


def detach_copy(input, *, out=None):
    """input.detach() as a new contiguous tensor."""
    return _single(input.detach(), out)


def as_strided_copy(input, size, stride, storage_offset=None, *, out=None):
    """input.as_strided(size, stride, storage_offset) as a new contiguous tensor."""
    return _single(input.as_strided(size, stride, storage_offset), out)


def diagonal_copy(input, offset=0, dim1=0, dim2=1, *, out=None):
    """input.diagonal(offset, dim1, dim2) as a new contiguous tensor."""
    return _single(input.diagonal(offset, dim1, dim2), out)


def expand_copy(input, size, *, implicit=False, out=None):
    """input.expand(size) as a new contiguous tensor."""
    return _single(input.expand(list(size)), out)  # `implicit` only marks traced broadcasts


def narrow_copy(input, dim, start, length, *, out=None):
    """input.narrow(dim, start, length) as a new contiguous tensor."""
    if isinstance(dim, int) and dim >= max(input.dim(), 1):  # torch checks this side before wrapping (RuntimeError)
        raise RuntimeError(f"narrow_copy(): Expected dim < {max(input.dim(), 1)} (the number of dimensions), "
                           f"but got dim={dim}")
    if isinstance(start, _C.TensorBase):
        start = int(start.item())
    return _single(input.narrow(dim, start, length), out)


def permute_copy(input, dims, *, out=None):
    """input.permute(dims) as a new contiguous tensor."""
    return _single(input.permute(list(dims)), out)


def select_copy(input, dim, index, *, out=None):
    """input.select(dim, index) as a new contiguous tensor."""
    return _single(input.select(dim, index), out)


def slice_copy(input, dim=0, start=None, end=None, step=1, *, out=None):
    """input[start:end:step] along dim as a new contiguous tensor."""
    if step <= 0:
        raise RuntimeError("slice step must be positive")
    return _single(_ops._slice(input, dim, start, end, step), out)


def squeeze_copy(input, dim=None, *, out=None):
    """input.squeeze(dim) as a new contiguous tensor."""
    return _single(input.squeeze() if dim is None else input.squeeze(dim), out)


def t_copy(input, *, out=None):
    """input.t() as a new contiguous tensor."""
    return _single(input.t(), out)


def transpose_copy(input, dim0, dim1, *, out=None):
    """input.transpose(dim0, dim1) as a new contiguous tensor."""
    return _single(input.transpose(dim0, dim1), out)


def unfold_copy(input, dimension, size, step, *, out=None):
    """input.unfold(dimension, size, step) as a new contiguous tensor."""
    return _single(input.unfold(dimension, size, step), out)


def unsqueeze_copy(input, dim, *, out=None):
    """input.unsqueeze(dim) as a new contiguous tensor."""
    return _single(input.unsqueeze(dim), out)


def view_copy(input, size, *, out=None):
    """size: a shape, or a dtype to reinterpret the bytes as (torch's view_copy.dtype)."""
    view = input.view(size) if isinstance(size, _C.dtype) else input.view(_int_list("view_copy", "size", size))
    return _single(view, out)


def _int_list(fn, arg, value):
    if isinstance(value, int):
        return [value]
    if isinstance(value, (list, tuple)) and all(isinstance(v, int) for v in value):
        return list(value)
    raise TypeError(f"{fn}(): argument '{arg}' must be tuple of ints, not {type(value).__name__}")


def _int_arg(fn, arg, value):
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    raise TypeError(f"{fn}(): argument '{arg}' (position 2) must be int, not {type(value).__name__}")


def split_copy(input, split_size, dim=0, *, out=None):
    """input.split(split_size, dim), each piece a new contiguous tensor."""
    return _many("split_copy_Tensor", input.split(_int_arg("split_copy", "split_size", split_size), dim), out)


def split_with_sizes_copy(input, split_sizes, dim=0, *, out=None):
    """split_with_sizes(input, split_sizes, dim), each piece a new contiguous tensor."""
    return _many("split_with_sizes_copy", split_with_sizes(input, split_sizes, dim), out)


def unbind_copy(input, dim=0, *, out=None):
    """input.unbind(dim), each slice a new contiguous tensor."""
    return _many("unbind_copy_int", input.unbind(dim), out)


def split_with_sizes(input, split_sizes, dim=0):
    """Views of consecutive pieces of `input` along dim, of the given sizes (which must sum to its size)."""
    return input.split(_int_list("split_with_sizes", "split_sizes", split_sizes), dim)


def unsafe_split(input, split_size, dim=0):
    """torch.split with an int size; "unsafe" because PyTorch skips the views' version tracking."""
    return input.split(_int_arg("unsafe_split", "split_size", split_size), dim)


def unsafe_split_with_sizes(input, split_sizes, dim=0):
    """split_with_sizes without PyTorch's view tracking (here: the same views)."""
    return split_with_sizes(input, split_sizes, dim)


def unsafe_chunk(input, chunks, dim=0):
    """input.chunk(chunks, dim) without PyTorch's view tracking (here: the same views)."""
    return input.chunk(chunks, dim)


# Tensor methods of the same names (torch has these four and narrow_copy as methods)
Tensor.split_with_sizes = split_with_sizes
Tensor.unsafe_split = unsafe_split
Tensor.unsafe_split_with_sizes = unsafe_split_with_sizes
Tensor.unsafe_chunk = unsafe_chunk
Tensor.narrow_copy = narrow_copy
Tensor.as_strided_scatter = as_strided_scatter

__all__ = [
    "detach", "as_strided_scatter", "alias_copy", "as_strided_copy", "detach_copy", "diagonal_copy", "expand_copy",
    "narrow_copy", "permute_copy", "select_copy", "slice_copy", "split_copy", "split_with_sizes_copy", "squeeze_copy",
    "t_copy", "transpose_copy", "unbind_copy", "unfold_copy", "unsqueeze_copy", "view_copy", "split_with_sizes",
    "unsafe_split", "unsafe_split_with_sizes", "unsafe_chunk"
]
