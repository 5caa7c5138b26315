"""rearrange: einops-style reordering, e.g. "b (h h1) w c -> b h (w h1) c", done as one reshape into the
elementary axes of the left side, one permute into the right side's order and one reshape into its
groups. '...' stands for the dimensions the pattern does not name; '1' or '()' for a dimension of size 1."""
import math

from .. import _C
from .._C import _ops

_ELLIPSIS = "…"  # one character for '...' once tokenized


def _parse_side(text):
    """The side as a list of groups: each a list of axis names ('…' for the ellipsis), with groups that
    came from parentheses marked by a tuple wrapper. A bare '1' is an empty group."""
    text = text.replace("...", _ELLIPSIS)
    groups, current, name, names_seen = [], None, "", set()

    def finish_name():
        nonlocal name
        if not name:
            return
        if name.isdecimal():
            if int(name) != 1:
                raise ValueError("rearrange only supports unnamed axes of size 1")
            if current is None:
                groups.append([])
        else:
            if name != _ELLIPSIS and not name.isidentifier():
                raise ValueError(f"Invalid axis identifier: {name}\nnot a valid python identifier")
            if name.startswith("_") or name.endswith("_"):
                raise ValueError(f"Invalid axis identifier: {name}\naxis name should should not start or end with "
                                 "underscore")
            if name == _ELLIPSIS and name in names_seen:
                raise ValueError("Expression may contain dots only inside ellipsis (...); only one ellipsis for tensor ")
            if name in names_seen:
                raise ValueError(f"Indexing expression contains duplicate dimension '{name}'")
            names_seen.add(name)
            (current if current is not None else groups).append(name if current is not None else [name])
        name = ""

    for ch in text:
        if ch == " ":
            finish_name()
        elif ch == "(":
            finish_name()
            if current is not None:
                raise ValueError("Axis composition is one-level (brackets inside brackets not allowed)")
            current = []
        elif ch == ")":
            finish_name()
            if current is None:
                raise ValueError("Brackets are not balanced")
            groups.append(tuple(current))
            current = None
        elif ch == _ELLIPSIS:
            finish_name()
            name = _ELLIPSIS
            finish_name()
        elif ch.isalnum() or ch == "_":
            name += ch
        else:
            raise ValueError(f"Unknown character '{ch}'")
    finish_name()
    if current is not None:
        raise ValueError(f"Imbalanced parentheses in expression: '{text}'")
    return [list(g) for g in groups], [isinstance(g, tuple) for g in groups], names_seen


def rearrange(tensor, pattern, **axes_lengths):
    """Reorders, splits and merges the dimensions of `tensor` (or of a stack of a list/tuple of tensors)
    as the einops-style `pattern` says; axes_lengths gives the sizes of split axes."""
    if not isinstance(tensor, _C.TensorBase):
        tensor = _ops.stack(list(tensor), 0)
    sides = pattern.split("->")
    if len(sides) != 2:
        raise ValueError("Pattern must contain a single '->' separator")
    left, left_paren, left_names = _parse_side(sides[0])
    right, right_paren, right_names = _parse_side(sides[1])
    if _ELLIPSIS in right_names and _ELLIPSIS not in left_names:
        raise ValueError(f"Ellipsis found in right side, but not left side of a pattern {pattern}")
    if any(p and _ELLIPSIS in g for g, p in zip(left, left_paren)):
        raise ValueError(f"Ellipsis is parenthesis in the left side is not allowed: {pattern}")
    for length in axes_lengths.values():
        if type(length) is not int:
            raise TypeError(f"rearrange axis lengths must be integers, got: {type(length)}")
    if left_names != right_names:
        raise ValueError("Identifiers only on one side of rearrange expression (should be on both): "
                         f"{(left_names ^ right_names) - {_ELLIPSIS}}")
    unmatched = set(axes_lengths) - left_names
    if unmatched:
        raise ValueError(f"Identifiers not found in rearrange expression: {unmatched}")

    ndim = tensor.dim()
    if _ELLIPSIS in left_names:
        if len(left) - 1 > ndim:
            raise ValueError(f"Number of dimensions in pattern ({len(left) - 1}) must be less than or equal to the "
                             f"number of dimensions in the tensor ({ndim})")
        ellipsis = [f"{_ELLIPSIS}{i}" for i in range(ndim - len(left) + 1)]
    elif len(left) != ndim:
        raise ValueError(f"Number of dimensions in pattern ({len(left)}) must be equal to the number of dimensions "
                         f"in the tensor ({ndim})")
    else:
        ellipsis = []

    def expand(groups, parenthesized):
        out = []
        for g, paren in zip(groups, parenthesized):
            if g == [_ELLIPSIS] and not paren:  # '...' alone: one group per dimension it stands for
                out.extend([e] for e in ellipsis)
            else:
                out.append([n for a in g for n in (ellipsis if a == _ELLIPSIS else [a])])
        return out

    left, right = expand(left, left_paren), expand(right, right_paren)
    sizes = {}
    for group, dim in zip(left, tensor.shape):
        known = [axes_lengths[a] for a in group if a in axes_lengths]
        unknown = [a for a in group if a not in axes_lengths]
        if len(unknown) > 1:
            raise ValueError(f"Could not infer sizes for {set(unknown)}")
        product = math.prod(known)
        if unknown:
            if product == 0 or dim % product:
                raise ValueError(f"Shape mismatch, can't divide axis of length {dim} in chunks of {product}")
            sizes[unknown[0]] = dim // product
        elif product != dim:
            raise ValueError(f"Shape mismatch, {dim} != {product}")
        sizes.update((a, axes_lengths[a]) for a in group if a in axes_lengths)

    order = [a for g in left for a in g]
    flat = tensor.reshape(tuple(sizes[a] for a in order))
    target = [a for g in right for a in g]
    flat = flat.permute(tuple(order.index(a) for a in target))
    return flat.reshape(tuple(math.prod(sizes[a] for a in g) for g in right))
