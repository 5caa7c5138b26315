"""Views: results share storage with their base (writes through a view are visible in the base and
in other views), in-place ops through any view bump the shared `_version`, and ops that must copy
do not alias. The Ember-only checks need no torch; the value checks after writes compare with torch."""
import numpy as np
import pytest

import ember
from parity import Sample, T, check, has_torch

# name -> fn(t) returning a view of the (2, 3, 4) float32 tensor t
VIEWS = {
    "view": lambda t: t.view(6, 4),
    "view_flat": lambda t: t.view(-1),
    "view_dtype": lambda t: t.view(_lib(t).int32),
    "view_as": lambda t: t.view_as(t.new_zeros(4, 6)),
    "reshape": lambda t: t.reshape(4, 6),
    "reshape_as": lambda t: t.reshape_as(t.new_zeros(24)),
    "flatten": lambda t: t.flatten(1),
    "unflatten": lambda t: t.unflatten(2, (2, 2)),
    "permute": lambda t: t.permute(2, 0, 1),
    "transpose": lambda t: t.transpose(0, 2),
    "swapaxes": lambda t: t.swapaxes(0, 1),
    "swapdims": lambda t: t.swapdims(1, 2),
    "movedim": lambda t: t.movedim(0, -1),
    "moveaxis": lambda t: t.moveaxis((0, 1), (2, 0)),
    "t": lambda t: t[0].t(),
    "T": lambda t: t[0].T,
    "mT": lambda t: t.mT,
    "expand": lambda t: t[:, :1].expand(2, 5, 4),
    "expand_as": lambda t: t[:1].expand_as(t),
    "squeeze": lambda t: t[:, :1].squeeze(1),
    "squeeze_all": lambda t: t[:1, :1].squeeze(),
    "unsqueeze": lambda t: t.unsqueeze(1),
    "narrow": lambda t: t.narrow(2, 1, 2),
    "select": lambda t: t.select(1, 2),
    "unbind": lambda t: t.unbind(1)[1],
    "split": lambda t: t.split(2, dim=2)[1],
    "split_sizes": lambda t: t.split([1, 2], dim=1)[1],
    "chunk": lambda t: t.chunk(2, dim=2)[0],
    "as_strided": lambda t: t.as_strided((3, 3), (4, 1), 2),
    "diagonal": lambda t: t.diagonal(0, 1, 2),
    "diagonal_offset": lambda t: t.diagonal(1, -1, -2),
    "unfold": lambda t: t.unfold(2, 2, 1),
    "alias": lambda t: ember.alias(t) if isinstance(t, ember.Tensor) else t.view_as(t),  # torch has no torch.alias
    "getitem_int": lambda t: t[1],
    "getitem_slices": lambda t: t[1:, ::2, None, ..., -1],
    "getitem_ellipsis": lambda t: t[..., 1:3],
    "getitem_none": lambda t: t[None, :, 0],
    "getitem_0d_index": lambda t: t[t.new_ones((), dtype=_lib(t).int64)],
    "contiguous_of_contiguous": lambda t: t.contiguous(),
}


def _lib(t):
    """The library a tensor belongs to (the same lambdas run on ember and torch tensors)."""
    if isinstance(t, ember.Tensor):
        return ember
    import torch
    return torch


def _base(lib=ember):
    return lib.arange(24, dtype=lib.float32).reshape(2, 3, 4)


@pytest.mark.parametrize("name", list(VIEWS))
def test_view_shares_storage_and_writes_are_visible(name):
    base = _base()
    v = VIEWS[name](base)
    assert v._storage_ptr() == base._storage_ptr(), "a view shares its base's storage"
    before = base.clone()
    v.fill_(0 if name == "view_dtype" else -1.0)  # (expanded views: every alias gets the same value)
    assert (base != before).any().item(), "the write through the view is visible in the base"
    # re-deriving the view from the base sees the write
    w = VIEWS[name](base)
    assert (w == (0 if name == "view_dtype" else -1.0)).all().item()
    # a write through the base is seen by the existing view
    base.fill_(5.0)
    if name != "view_dtype":
        assert (v == 5.0).all().item()


@pytest.mark.parametrize("name", list(VIEWS))
def test_view_write_matches_torch(name):
    if not has_torch():
        pytest.skip("torch is not installed")

    def fn(lib, b):
        v = VIEWS[name](b)
        v.mul_(2) if name != "view_dtype" else v.add_(1)
        if v.dim() > 0 and v.numel() > 0 and name not in ("expand", "expand_as", "view_dtype"):
            v[(0,) * v.dim()] = 100.0
        return v, b
    check(fn, Sample(T((2, 3, 4), "float32", data=np.arange(24.0).reshape(2, 3, 4))))


def test_views_of_views_share_storage():
    base = _base()
    v = base.transpose(0, 2)[1:].unsqueeze(0).narrow(2, 1, 2)
    v.zero_()  # v covers base[:, 1:3, 1:]
    assert v._storage_ptr() == base._storage_ptr()
    expected = np.arange(24.0).reshape(2, 3, 4)
    expected[:, 1:3, 1:] = 0
    assert base.tolist() == expected.tolist()


@pytest.mark.parametrize("name", list(VIEWS))
def test_version_counter_is_shared(name):
    base = _base()
    v = VIEWS[name](base)
    v0 = base._version
    assert v._version == v0
    if name == "view_dtype":
        v.add_(1)
    elif name in ("expand", "expand_as"):
        v.fill_(1)  # (arithmetic in place on an expanded view is an error, fill_ is not)
    else:
        v.mul_(1)
    assert base._version > v0 and v._version == base._version
    # and the other way round: an in-place op on the base bumps the view's version
    v1 = v._version
    base.add_(0)
    assert v._version > v1


INPLACE_THROUGH_VIEW = {
    "add_": lambda v: v.add_(1),
    "sub_ op": lambda v: v.__isub__(1),
    "mul_": lambda v: v.mul_(2),
    "copy_": lambda v: v.copy_(v.new_zeros(v.shape)),
    "fill_": lambda v: v.fill_(3),
    "zero_": lambda v: v.zero_(),
    "clamp_": lambda v: v.clamp_(0, 5),
    "masked_fill_": lambda v: v.masked_fill_(v > 3, 0),
    "index_put_": lambda v: v.index_put_((ember.tensor([0]),), ember.tensor(9.0)),
    "setitem": lambda v: v.__setitem__(0, 1.0),
    "setitem_mask": lambda v: v.__setitem__(v > 2, 1.0),
    "uniform_": lambda v: v.uniform_(),
    "normal_": lambda v: v.normal_(),
    "cumsum_": lambda v: v.cumsum_(0),
    "tril_": lambda v: v.tril_(),
    "sqrt_": lambda v: v.sqrt_(),
    "out=": lambda v: ember.add(v, 1, out=v),
    "sum(out=)": lambda v: ember.sum(v.new_ones(v.shape), 0, keepdim=True, out=v[:1]),
}


@pytest.mark.parametrize("op", list(INPLACE_THROUGH_VIEW))
def test_inplace_op_through_view_bumps_version(op):
    base = ember.arange(12, dtype=ember.float32).reshape(3, 4)
    v = base.t()[1:]  # a non-contiguous view
    other = base[0]   # a second view
    before = (base._version, v._version, other._version)
    INPLACE_THROUGH_VIEW[op](v)
    after = (base._version, v._version, other._version)
    assert all(a > b for a, b in zip(after, before)), (before, after)
    assert len(set(after)) == 1


def test_out_of_place_ops_do_not_bump_version():
    base = ember.arange(6, dtype=ember.float32)
    v = base.view(2, 3)
    ver = base._version
    _ = v + 1, v.sum(), v.t().contiguous(), v.clone(), v.reshape(3, 2), v[[0, 1]]
    assert base._version == ver


COPIES = {
    "reshape_of_transposed": lambda t: t.transpose(0, 1).reshape(-1),
    "flatten_of_transposed": lambda t: t.transpose(1, 2).flatten(),
    "contiguous_of_transposed": lambda t: t.transpose(0, 1).contiguous(),
    "clone": lambda t: t.clone(),
    "advanced_index": lambda t: t[[0, 1]],
    "mask_index": lambda t: t[t > 3],
    "flip": lambda t: t.flip(0),
    "roll": lambda t: t.roll(1, 0),
    "cat": lambda t: ember.cat([t]),
    "to_other_dtype": lambda t: t.to(ember.float64),
    "to_copy": lambda t: t.to(ember.float32, copy=True),
}


@pytest.mark.parametrize("name", list(COPIES))
def test_ops_that_copy_do_not_alias(name):
    base = _base()
    r = COPIES[name](base)
    r.fill_(-7)
    assert (base == _base()).all().item(), f"{name} wrote into its input"


def test_to_same_dtype_and_contiguous_return_self():
    t = _base()
    assert t.to(ember.float32) is t
    assert t.to(dtype=ember.float32, device="cpu") is t
    assert t.contiguous() is t
    assert t.float() is t
    assert t.type_as(t) is t
    assert t.to(ember.float32, copy=True) is not t
    tt = t.transpose(0, 1)
    c = tt.contiguous()
    assert c is not tt and c.is_contiguous() and c._storage_ptr() != tt._storage_ptr()
    assert t.contiguous(memory_format=ember.contiguous_format) is t
    assert tt.contiguous(memory_format=ember.contiguous_format).is_contiguous(memory_format=ember.contiguous_format)
    assert repr(ember.preserve_format) == "ember.preserve_format"


def test_view_dtype_reinterprets_bits():
    x = ember.tensor([1.0, -2.0], dtype=ember.float32)
    bits = x.view(ember.int32)
    assert bits.tolist() == np.array([1.0, -2.0], dtype=np.float32).view(np.int32).tolist()
    y = ember.zeros(4, dtype=ember.uint8).view(ember.int32)
    assert y.shape == (1,)
    z = ember.tensor([1, 2], dtype=ember.int64).view(ember.int16)
    assert z.shape == (8,) and z.tolist()[:4] == [1, 0, 0, 0]


def test_unbind_split_chunk_return_views_of_base():
    base = _base()
    for parts in (base.unbind(0), base.split(1, 2), base.chunk(3, 1), base.split([1, 3], 2)):
        assert isinstance(parts, tuple)
        for p in parts:
            assert p._storage_ptr() == base._storage_ptr()


LAYOUTS = [
    # the strides of results: PyTorch keeps a dense input's layout for elementwise results and clones,
    # and writes some ops (masked_fill, tril) row-major
    lambda lib, x: x.t().clone().stride(), lambda lib, x: (x.t() + 1).stride(), lambda lib, x: (x.t() * x.t()).stride(),
    lambda lib, x: x.t().exp().stride(), lambda lib, x: (x.t() > 2).stride(), lambda lib, x: x.t().to(lib.float64).stride(),
    lambda lib, x: lib.where(x.t() > 1, x.t(), 0.0).stride(), lambda lib, x: x[:, ::2].clone().stride(),
    lambda lib, x: (x[:, ::2] + 1).stride(), lambda lib, x: x.t().contiguous().stride(), lambda lib, x: x.t().reshape(12).stride(),
    lambda lib, x: lib.empty_like(x[:, ::2]).stride(), lambda lib, x: x.t().cumsum(0).stride(),
    lambda lib, x: x.t().tril().stride(), lambda lib, x: x.t().flip(0).stride(), lambda lib, x: x.t().masked_fill(x.t() > 1, 0).stride(),
    lambda lib, x: x.t().clamp(0, 5).stride(), lambda lib, x: x.t().nan_to_num().stride(), lambda lib, x: x.t().round().stride(),
    lambda lib, x: x.t()[[0, 1]].stride(), lambda lib, x: (x.t() + lib.ones(4, 1)).stride(),
    lambda lib, x: (x.reshape(3, 2, 2).permute(2, 0, 1) * 2).stride(), lambda lib, x: x.t().sum(0).stride(),
]


@pytest.mark.parametrize("i", range(len(LAYOUTS)))
def test_result_layouts_match_torch(i):
    if not has_torch():
        pytest.skip("torch is not installed")
    check(LAYOUTS[i], Sample(T((3, 4), "float32")))


def test_overlapping_outputs():
    if not has_torch():
        pytest.skip("torch is not installed")
    x = T((3, 4), "float32")
    # allowed: full overlap (out is the input), and interleaved strided views (PyTorch cannot tell)
    for fn in [lambda lib, a: lib.add(a, 1, out=a), lambda lib, a: lib.add(a[:, :2], 1, out=a[:, 1:3]),
               lambda lib, a: a.t().add_(a.t()), lambda lib, a: lib.exp(a[0], out=a[1]),
               lambda lib, a: lib.neg(a[0], out=a[0])]:
        check(fn, Sample(x))
    # partial overlap of two dense blocks is an error
    for fn in [lambda lib, a: a.view(-1)[1:].add_(a.view(-1)[:-1]), lambda lib, a: a[1:].copy_(a[:-1]),
               lambda lib, a: lib.add(a.view(-1)[:6], 1, out=a.view(-1)[3:9]),
               lambda lib, a: lib.mul(a[0], a[0], out=a.view(-1)[2:6])]:
        check(fn, Sample(x), expect_error=True)
