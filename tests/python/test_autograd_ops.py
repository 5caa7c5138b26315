"""Gradients of every differentiable op in ops.yaml.

Each op with a `grad:` entry has samples here (the coverage test fails otherwise). Every sample is
checked with ember.autograd.gradcheck and gradgradcheck in float64 and, where torch is installed,
compared with PyTorch: forward values, which outputs require grad, first- and second-order
gradients for the same inputs and grad_outputs.

Samples avoid non-differentiable points (abs at 0, ties of max/min, sqrt at 0, integer points of
floor/round...). Inputs are small: gradcheck builds full Jacobians.
"""
import math
import os
import random
import zlib

import pytest
import yaml

import ember
from ember.autograd import gradcheck, gradgradcheck
from rnn_ref import gru_cell as _gru_cell, lstm_cell as _lstm_cell, lstm_seq as _lstm_seq

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def differentiable_ops():
    with open(os.path.join(ROOT, "ops.yaml")) as f:
        entries = yaml.safe_load(f)
    return sorted(e["func"].split("(")[0] for e in entries if e.get("grad"))


# ---------------------------------------------------------------- inputs
class A:
    """A float64 input that requires grad (unless grad=False). Values are drawn per sample from
    [lo, hi] (signed: random sign, magnitude in [lo, hi]; frac: k + f with f away from 0 and .5);
    `values` gives them explicitly. layout: contig, t (a transposed 2-D tensor), slice (every other
    element of the last dim)."""

    def __init__(self, shape, lo=-2.0, hi=2.0, *, kind="uniform", layout="contig", grad=True, values=None):
        self.shape, self.lo, self.hi, self.kind = tuple(shape), lo, hi, kind
        self.layout, self.grad, self.values = layout, grad, values

    def draw(self, rng):
        if self.values is not None:
            return self.values
        n = math.prod(self.shape)
        vals = []
        for _ in range(n):
            if self.kind == "signed":
                vals.append(rng.uniform(self.lo, self.hi) * rng.choice((-1, 1)))
            elif self.kind == "frac":
                vals.append(rng.randint(-2, 2) + rng.choice((1, -1)) * rng.uniform(0.1, 0.4))
            else:
                vals.append(rng.uniform(self.lo, self.hi))
        return _nest(vals, self.shape)

    def make(self, lib, vals):
        dt = lib.float64
        if self.layout == "t":
            t = lib.tensor(_transpose(vals), dtype=dt).t()
        elif self.layout == "slice":
            t = lib.tensor(_widen(vals), dtype=dt)[..., ::2]
        else:
            t = lib.tensor(vals, dtype=dt)
        t = t.detach()
        if self.grad:
            t.requires_grad_(True)
        return t


class C:
    """A constant input (indices, masks, conditions, a float tensor that needs no grad)."""

    def __init__(self, values, dtype="int64"):
        self.values, self.dtype = values, dtype

    def draw(self, rng):
        return self.values

    def make(self, lib, vals):
        return lib.tensor(vals, dtype=getattr(lib, self.dtype))


def _nest(flat, shape):
    if not shape:
        return flat[0]
    step = math.prod(shape[1:])
    return [_nest(flat[i * step:(i + 1) * step], shape[1:]) for i in range(shape[0])]


def _transpose(rows):
    return [list(r) for r in zip(*rows)]


def _widen(vals):
    if isinstance(vals, list) and vals and isinstance(vals[0], list):
        return [_widen(v) for v in vals]
    out = []
    for v in vals:
        out += [v, 0.0]
    return out


class S:
    """One sample: fn(lib, *tensors) -> tensor or tuple, on inputs `args`.
    gc / gg: run gradcheck / gradgradcheck (not for float32 round trips: finite differences need
    float64). values: compare forward values with torch (not for random ops). torch_grad: torch
    has the derivative too (it lacks some, e.g. of floor_divide and of acosh_); torch_gg: and the
    second derivative (it lacks those of grid_sampler and of cdist's direct form)."""

    def __init__(self, op, desc, fn, *args, gc=True, gg=True, values=True, torch_grad=True, torch_gg=True):
        self.op, self.desc, self.fn, self.args = op, desc, fn, args
        self.gc, self.gg, self.values, self.torch_grad = gc, gg and gc, values, torch_grad
        self.torch_gg = torch_gg  # torch differentiates this op's backward too (grid_sampler's it does not)

    @property
    def id(self):
        return f"{self.op}-{self.desc}"

    def inputs(self, lib):
        rng = random.Random(zlib.crc32(self.id.encode()))
        vals = [a.draw(rng) for a in self.args]
        return [a.make(lib, v) for a, v in zip(self.args, vals)]


def aten(lib, name):
    """An op that Python reaches only under an internal name (ember._C._ops._slice, torch.ops.aten.slice)."""
    if lib is ember:
        return getattr(ember._C._ops, "_" + name, None) or getattr(ember, name)
    return getattr(lib.ops.aten, name)


def seeded(lib, f):
    lib.manual_seed(0)
    return f()


SAMPLES = []


def add(*samples):
    SAMPLES.extend(samples)


# ---------------------------------------------------------------- unary elementwise
UNARY_DOMAINS = {
    "abs": dict(lo=0.3, hi=2.0, kind="signed"), "neg": {}, "exp": {}, "exp2": {}, "expm1": {},
    "log": dict(lo=0.5, hi=3.0), "log2": dict(lo=0.5, hi=3.0), "log10": dict(lo=0.5, hi=3.0),
    "log1p": dict(lo=-0.5, hi=2.0), "sqrt": dict(lo=0.5, hi=3.0), "rsqrt": dict(lo=0.5, hi=3.0),
    "sin": {}, "cos": {}, "tan": dict(lo=-1.2, hi=1.2), "asin": dict(lo=-0.9, hi=0.9),
    "acos": dict(lo=-0.9, hi=0.9), "atan": {}, "sinh": {}, "cosh": {}, "tanh": {}, "asinh": {},
    "acosh": dict(lo=1.2, hi=3.0), "atanh": dict(lo=-0.9, hi=0.9), "sigmoid": {}, "erf": {}, "erfc": {},
    "erfinv": dict(lo=-0.9, hi=0.9), "reciprocal": dict(lo=0.5, hi=2.0, kind="signed"),
    "floor": dict(kind="frac"), "ceil": dict(kind="frac"), "trunc": dict(kind="frac"), "frac": dict(kind="frac"),
    "sign": dict(lo=0.3, hi=2.0, kind="signed"), "sgn": dict(lo=0.3, hi=2.0, kind="signed"),
    "relu": dict(lo=0.2, hi=2.0, kind="signed"), "square": {}, "round": dict(kind="frac"), "nan_to_num": {},
}
TORCH_NO_INPLACE_GRAD = {"acosh", "asinh", "atanh"}  # torch: "the derivative for 'inplace version of acosh' ..."

for _name, _dom in UNARY_DOMAINS.items():
    add(S(_name, "2x3", lambda lib, x, n=_name: getattr(lib, n)(x), A((2, 3), **_dom)),
        S(_name, "noncontig_method", lambda lib, x, n=_name: getattr(x, n)(), A((3, 2), layout="t", **_dom)),
        S(_name, "0d", lambda lib, x, n=_name: getattr(lib, n)(x), A((), **_dom)),
        S(_name, "inplace", lambda lib, x, n=_name: getattr(x.clone(), n + "_")(), A((2, 3), **_dom),
          torch_grad=_name not in TORCH_NO_INPLACE_GRAD))

add(S("round.decimals", "one", lambda lib, x: lib.round(x, decimals=1), A((2, 3), values=[[0.12, -1.37, 2.21],
                                                                                         [0.61, -0.83, 3.44]])),
    S("round.decimals", "inplace_zero", lambda lib, x: x.clone().round_(decimals=0), A((3,), values=[0.3, -1.6, 2.2])),
    S("nan_to_num", "nonfinite", lambda lib, x: lib.nan_to_num(x, nan=1.0, posinf=3.0),
      A((2, 3), values=[[float("nan"), 1.5, float("inf")], [-float("inf"), -0.5, 0.25]])),
    S("nan_to_num", "inplace_nonfinite", lambda lib, x: x.clone().nan_to_num_(neginf=-7.0),
      A((4,), values=[float("nan"), 1.5, float("inf"), -float("inf")])),
    S("abs", "alias_absolute", lambda lib, x: lib.absolute(x), A((4,), lo=0.3, hi=2.0, kind="signed")),
    S("exp", "inplace_on_view", lambda lib, x: _inplace_on_view(x, lambda v: v.exp_()), A((3, 4))),
    S("sin", "after_view_inplace", lambda lib, x: _inplace_on_view(x, lambda v: v.sin_()).sum(0), A((3, 4))))


def _inplace_on_view(x, f):
    b = x.clone()
    f(b[1:, ::2])
    return b


# ---------------------------------------------------------------- binary elementwise
def _binary(name, a_dom=None, b_dom=None, scalar=2.5, inplace=True, method=True, torch_grad=True):
    a_dom, b_dom = a_dom or {}, b_dom or {}
    f = lambda lib, x, y: getattr(lib, name)(x, y)  # noqa: E731
    out = [S(name, "2x3", f, A((2, 3), **a_dom), A((2, 3), **b_dom)),
           S(name, "broadcast_row", f, A((2, 3), **a_dom), A((3,), **b_dom)),
           S(name, "broadcast_both", f, A((2, 1), **a_dom), A((1, 3), **b_dom)),
           S(name, "broadcast_0d", f, A((), **a_dom), A((2, 3), **b_dom)),
           S(name, "noncontig", f, A((2, 3), layout="t", **a_dom), A((2, 3), layout="slice", **b_dom)),
           S(name, "const_other", f, A((2, 3), **a_dom), A((2, 3), grad=False, **b_dom))]
    if scalar is not None:
        out.append(S(name, "scalar_other", lambda lib, x: getattr(lib, name)(x, scalar), A((2, 3), **a_dom)))
    if method:
        out.append(S(name, "method", lambda lib, x, y: getattr(x, name)(y), A((3,), **a_dom), A((3,), **b_dom)))
    if inplace:
        out += [S(name, "inplace", lambda lib, x, y: getattr(x.clone(), name + "_")(y), A((2, 3), **a_dom),
                  A((2, 3), **b_dom)),
                S(name, "inplace_broadcast", lambda lib, x, y: getattr(x.clone(), name + "_")(y), A((2, 3), **a_dom),
                  A((3,), **b_dom)),
                S(name, "inplace_into_const",
                  lambda lib, y: getattr(lib.full((2, 3), 1.25, dtype=lib.float64), name + "_")(y),
                  A((2, 3), **b_dom))]
    for smp in out:
        smp.torch_grad = torch_grad
    add(*out)


_binary("add")
_binary("sub")
_binary("mul")
_binary("div", b_dom=dict(lo=0.5, hi=2.0, kind="signed"))
_binary("true_divide", b_dom=dict(lo=0.5, hi=2.0, kind="signed"))
_binary("floor_divide", b_dom=dict(lo=0.5, hi=2.0, kind="signed"), torch_grad=False)
_binary("remainder", b_dom=dict(lo=0.5, hi=2.0, kind="signed"))
_binary("fmod", b_dom=dict(lo=0.5, hi=2.0, kind="signed"))
_binary("pow", a_dom=dict(lo=0.5, hi=2.0), scalar=3.0)
_binary("float_power", a_dom=dict(lo=0.5, hi=2.0), scalar=1.5, inplace=False)
_binary("atan2", b_dom=dict(lo=0.3, hi=2.0, kind="signed"), scalar=None)
_binary("hypot", a_dom=dict(lo=0.3, hi=2.0, kind="signed"), scalar=None)
_binary("minimum", scalar=None, inplace=False)
_binary("maximum", scalar=None, inplace=False)
_binary("fmin", scalar=None, inplace=False)
_binary("fmax", scalar=None, inplace=False)

add(S("add", "alpha", lambda lib, x, y: lib.add(x, y, alpha=-1.5), A((2, 3)), A((3,))),
    S("add", "inplace_alpha", lambda lib, x, y: x.clone().add_(y, alpha=2), A((2, 3)), A((2, 3))),
    S("add", "operator_scalar_left", lambda lib, x: 3.0 + x, A((2, 3))),
    S("add", "same_input_twice", lambda lib, x: x + x, A((2, 3))),
    S("sub", "alpha", lambda lib, x, y: lib.sub(x, y, alpha=0.5), A((2, 3)), A((2, 3))),
    S("sub", "operator_rsub", lambda lib, x: 1.0 - x, A((2, 3))),
    S("sub", "alias_subtract", lambda lib, x, y: lib.subtract(x, y), A((3,)), A((3,))),
    S("mul", "same_input_twice", lambda lib, x: x * x, A((2, 3))),
    S("mul", "operator_scalar_left", lambda lib, x: 2.0 * x, A((2, 3))),
    S("div", "rounding_trunc", lambda lib, x, y: lib.div(x, y, rounding_mode="trunc"), A((2, 3)),
      A((2, 3), lo=0.5, hi=2.0, kind="signed")),
    S("div", "rounding_floor", lambda lib, x, y: lib.div(x, y, rounding_mode="floor"), A((2, 3)),
      A((2, 3), lo=0.5, hi=2.0, kind="signed")),
    S("div", "operator_rdiv", lambda lib, x: 1.0 / x, A((2, 3), lo=0.5, hi=2.0, kind="signed")),
    S("pow", "scalar_exponents", lambda lib, x: (x ** 2, x ** 0.5, x ** -1.5, x ** 0), A((2, 3), lo=0.5, hi=2.0)),
    S("pow", "negative_base_integer_exponent", lambda lib, x: x ** 3, A((2, 3), lo=0.5, hi=2.0, kind="signed")),
    S("pow", "scalar_base", lambda lib, x: 2.0 ** x, A((2, 3))),
    S("pow", "inplace_scalar", lambda lib, x: x.clone().pow_(2.5), A((2, 3), lo=0.5, hi=2.0)),
    S("max.other", "2x3", lambda lib, x, y: lib.max(x, y), A((2, 3)), A((2, 3))),
    S("max.other", "broadcast", lambda lib, x, y: x.max(y), A((2, 3)), A((3,))),
    S("min.other", "2x3", lambda lib, x, y: lib.min(x, y), A((2, 3)), A((2, 3))),
    S("min.other", "broadcast", lambda lib, x, y: x.min(y), A((2, 1)), A((3,))))


def _clamp_vals():
    # values at least 0.1 away from the bounds used below (-0.5, 0.5)
    return [[-1.2, -0.31, 0.2], [0.65, 1.4, -0.05]]


add(S("clamp", "scalars", lambda lib, x: lib.clamp(x, -0.5, 0.5), A((2, 3), values=_clamp_vals())),
    S("clamp", "min_only", lambda lib, x: x.clamp(min=-0.5), A((2, 3), values=_clamp_vals())),
    S("clamp", "max_only", lambda lib, x: x.clamp(max=0.5), A((2, 3), values=_clamp_vals())),
    S("clamp", "tensor_bounds", lambda lib, x, lo, hi: lib.clamp(x, lo, hi), A((2, 3), values=_clamp_vals()),
      A((3,), values=[-0.5, -0.2, 0.0]), A((2, 1), values=[[0.5], [1.0]])),
    S("clamp", "tensor_min_only", lambda lib, x, lo: lib.clamp(x, min=lo), A((2, 3), values=_clamp_vals()),
      A((3,), values=[-0.5, -0.2, 0.0])),
    S("clamp", "inplace", lambda lib, x: x.clone().clamp_(-0.5, 0.5), A((2, 3), values=_clamp_vals())),
    S("clamp", "alias_clip", lambda lib, x: lib.clip(x, -0.5, 0.5), A((2, 3), values=_clamp_vals())),
    S("clamp_min", "scalar", lambda lib, x: lib.clamp_min(x, -0.5), A((2, 3), values=_clamp_vals())),
    S("clamp_min", "tensor", lambda lib, x, m: lib.clamp_min(x, m), A((2, 3), values=_clamp_vals()),
      A((3,), values=[-0.5, 0.0, 0.4])),
    S("clamp_min", "inplace", lambda lib, x: x.clone().clamp_min_(0.5), A((2, 3), values=_clamp_vals())),
    S("clamp_max", "scalar", lambda lib, x: lib.clamp_max(x, 0.5), A((2, 3), values=_clamp_vals())),
    S("clamp_max", "tensor", lambda lib, x, m: x.clamp_max(m), A((2, 3), values=_clamp_vals()),
      A((2, 1), values=[[0.0], [1.0]])),
    S("clamp_max", "inplace", lambda lib, x: x.clone().clamp_max_(-0.5), A((2, 3), values=_clamp_vals())),
    S("lerp", "tensor_weight", lambda lib, x, y, w: lib.lerp(x, y, w), A((2, 3)), A((2, 3)), A((2, 3), 0.0, 1.0)),
    S("lerp", "broadcast", lambda lib, x, y, w: lib.lerp(x, y, w), A((2, 3)), A((3,)), A((2, 1), 0.0, 1.0)),
    S("lerp", "scalar_weight", lambda lib, x, y: lib.lerp(x, y, 0.3), A((2, 3)), A((2, 3))),
    S("lerp", "inplace", lambda lib, x, y, w: x.clone().lerp_(y, w), A((2, 3)), A((2, 3)), A((3,), 0.0, 1.0)),
    S("where", "tensors", lambda lib, c, x, y: lib.where(c, x, y), C([[True, False, True], [False, False, True]],
                                                                     "bool"), A((2, 3)), A((2, 3))),
    S("where", "broadcast", lambda lib, c, x, y: lib.where(c, x, y), C([True, False, True], "bool"), A((2, 1)),
      A((2, 3))),
    S("where", "scalar_other", lambda lib, c, x: lib.where(c, x, 0.0), C([[True, False, True]], "bool"), A((2, 3))),
    S("where", "method", lambda lib, c, x, y: x.where(c, y), C([True, False, False], "bool"), A((3,)), A((3,))))

# ---------------------------------------------------------------- reductions
for _r in ("sum", "mean"):
    _rd = "sum.dim_IntList" if _r == "sum" else _r  # sum(x) and sum(x, dim) are two overloads
    add(S(_r, "all", lambda lib, x, r=_r: getattr(lib, r)(x), A((2, 3))),
        S(_rd, "dim", lambda lib, x, r=_r: getattr(lib, r)(x, 1), A((2, 3))),
        S(_rd, "dim_keepdim", lambda lib, x, r=_r: getattr(x, r)(dim=-1, keepdim=True), A((2, 3))),
        S(_rd, "dims", lambda lib, x, r=_r: getattr(lib, r)(x, (0, 2)), A((2, 3, 2))),
        S(_rd, "dims_keepdim_noncontig", lambda lib, x, r=_r: getattr(lib, r)(x, [0, 1], keepdim=True),
          A((3, 2), layout="t")),
        S(_r, "0d", lambda lib, x, r=_r: getattr(lib, r)(x), A(())),
        S(_rd, "0d_dim", lambda lib, x, r=_r: getattr(lib, r)(x, 0), A(())),
        S(_r, "dtype", lambda lib, x, r=_r: getattr(lib, r)(x, dtype=lib.float64), A((2, 3))))
add(S("sum.dim_IntList", "none_keepdim", lambda lib, x: lib.sum(x, None, True), A((2, 3))))

add(S("prod", "all", lambda lib, x: lib.prod(x), A((2, 3), 0.5, 1.5)),
    S("prod.dim_int", "dim", lambda lib, x: lib.prod(x, 1), A((2, 3), 0.5, 1.5, kind="signed")),
    S("prod.dim_int", "dim_keepdim", lambda lib, x: x.prod(0, keepdim=True), A((2, 3), 0.5, 1.5)),
    S("prod", "one_zero_all", lambda lib, x: lib.prod(x), A((2, 3), values=[[0.5, 0.0, 1.5], [2.0, -1.0, 0.7]])),
    S("prod.dim_int", "zeros_dim", lambda lib, x: lib.prod(x, 1),
      A((3, 3), values=[[0.5, 0.0, 1.5], [0.0, -1.0, 0.0], [1.1, 0.9, -1.3]])),
    S("prod", "two_zeros_all", lambda lib, x: lib.prod(x), A((2, 2), values=[[0.0, 1.5], [0.0, 2.0]])),
    S("prod", "0d", lambda lib, x: lib.prod(x), A(())),
    S("prod.dim_int", "noncontig_dim", lambda lib, x: lib.prod(x, 0), A((3, 2), 0.5, 1.5, layout="t")))

for _r in ("amax", "amin"):
    add(S(_r, "dim", lambda lib, x, r=_r: getattr(lib, r)(x, 1), A((2, 3))),
        S(_r, "dims_keepdim", lambda lib, x, r=_r: getattr(lib, r)(x, (0, 1), keepdim=True), A((2, 3))),
        S(_r, "all", lambda lib, x, r=_r: getattr(lib, r)(x), A((2, 3))),
        S(_r, "0d", lambda lib, x, r=_r: getattr(lib, r)(x), A(())),
        S(_r, "noncontig", lambda lib, x, r=_r: getattr(x, r)(0), A((2, 3), layout="slice")))

for _r in ("max", "min"):
    add(S(_r, "all", lambda lib, x, r=_r: getattr(lib, r)(x), A((2, 3))),
        S(_r, "0d", lambda lib, x, r=_r: getattr(x, r)(), A(())),
        S(_r + ".dim", "dim", lambda lib, x, r=_r: tuple(getattr(lib, r)(x, 1)), A((2, 3))),
        S(_r + ".dim", "keepdim", lambda lib, x, r=_r: tuple(getattr(x, r)(0, keepdim=True)), A((2, 3))),
        S(_r + ".dim", "values_only", lambda lib, x, r=_r: getattr(lib, r)(x, dim=-1).values, A((3, 2), layout="t")),
        S(_r + ".dim", "0d", lambda lib, x, r=_r: getattr(lib, r)(x, 0)[0], A(())))

for _r in ("var", "std"):
    add(S(_r, "all", lambda lib, x, r=_r: getattr(lib, r)(x), A((2, 3))),
        S(_r, "dim", lambda lib, x, r=_r: getattr(lib, r)(x, 1), A((2, 3))),
        S(_r, "unbiased_false", lambda lib, x, r=_r: getattr(lib, r)(x, 0, unbiased=False), A((2, 3))),
        S(_r, "correction_keepdim", lambda lib, x, r=_r: getattr(x, r)(dim=(0, 1), correction=2, keepdim=True),
          A((2, 3))),
        S(_r, "correction0_noncontig", lambda lib, x, r=_r: getattr(lib, r)(x, -1, correction=0),
          A((3, 2), layout="t")))
    add(S(_r + "_mean", "all", lambda lib, x, r=_r: getattr(lib, r + "_mean")(x), A((2, 3))),
        S(_r + "_mean", "dim", lambda lib, x, r=_r: getattr(lib, r + "_mean")(x, 1, keepdim=True), A((2, 3))),
        S(_r + "_mean", "correction", lambda lib, x, r=_r: getattr(lib, r + "_mean")(x, 0, correction=0), A((2, 3))),
        S(_r + "_mean", "first_only", lambda lib, x, r=_r: getattr(lib, r + "_mean")(x, 1)[0], A((2, 3))),
        S(_r + "_mean", "mean_only", lambda lib, x, r=_r: getattr(lib, r + "_mean")(x, 1)[1], A((2, 3))))

add(S("norm", "p2", lambda lib, x: lib.norm(x), A((2, 3))),
    S("norm", "p1", lambda lib, x: lib.norm(x, 1), A((2, 3), 0.3, 2.0, kind="signed")),
    S("norm", "pinf_dim", lambda lib, x: lib.norm(x, float("inf"), dim=1),
      A((2, 3), values=[[0.5, -1.7, 0.9], [1.1, 0.3, -0.2]])),
    S("norm", "p3_dim_keepdim", lambda lib, x: x.norm(3, dim=0, keepdim=True), A((2, 3), 0.3, 2.0, kind="signed")),
    S("norm", "p0.5", lambda lib, x: lib.norm(x, 0.5), A((2, 3), 0.3, 2.0, kind="signed")),
    S("norm", "p2_dims_noncontig", lambda lib, x: lib.norm(x, 2, dim=(0, 1)), A((3, 2), layout="t")),
    S("norm", "0d", lambda lib, x: lib.norm(x), A((), 0.3, 2.0, kind="signed")),
    S("logsumexp", "dim", lambda lib, x: lib.logsumexp(x, 1), A((2, 3))),
    S("logsumexp", "dims_keepdim", lambda lib, x: x.logsumexp((0, 1), keepdim=True), A((2, 3))),
    S("logsumexp", "noncontig", lambda lib, x: lib.logsumexp(x, 0), A((3, 2), layout="t")),
    S("logsumexp", "0d", lambda lib, x: lib.logsumexp(x, 0), A(())),
    S("cumsum", "dim0", lambda lib, x: lib.cumsum(x, 0), A((3, 2))),
    S("cumsum", "dim1_noncontig", lambda lib, x: x.cumsum(-1), A((2, 3), layout="t")),
    S("cumsum", "0d", lambda lib, x: lib.cumsum(x, 0), A(())),
    S("cumsum", "inplace", lambda lib, x: x.clone().cumsum_(1), A((2, 3))),
    S("cumprod", "dim1", lambda lib, x: lib.cumprod(x, 1), A((2, 3), 0.5, 1.5, kind="signed")),
    S("cumprod", "zeros", lambda lib, x: lib.cumprod(x, 1),
      A((3, 4), values=[[0.5, 0.0, 1.5, 2.0], [0.0, -1.0, 0.0, 1.2], [1.1, 0.9, -1.3, 0.0]])),
    S("cumprod", "zeros_dim0", lambda lib, x: x.cumprod(0), A((3, 2), values=[[0.5, 1.0], [0.0, 2.0], [1.5, -1.0]])),
    S("cumprod", "0d", lambda lib, x: lib.cumprod(x, 0), A(())),
    S("cumprod", "inplace", lambda lib, x: x.clone().cumprod_(0), A((3, 2), 0.5, 1.5)))

# non-differentiable points, compared with torch only (gradcheck does not apply there): which
# subgradient PyTorch picks
_TIES = [[1.0, 3.0, 3.0], [2.0, 2.0, -1.0]]
add(S("amax", "ties", lambda lib, x: lib.amax(x, 1), A((2, 3), values=_TIES), gc=False),
    S("amin", "ties_all", lambda lib, x: lib.amin(x), A((2, 2), values=[[1.0, 1.0], [1.0, 2.0]]), gc=False),
    S("max", "ties", lambda lib, x: lib.max(x), A((2, 3), values=_TIES), gc=False),
    S("min", "ties", lambda lib, x: x.min(), A((2, 3), values=[[1.0, -1.0, 3.0], [-1.0, 2.0, -1.0]]), gc=False),
    S("max.dim", "ties", lambda lib, x: tuple(lib.max(x, 1)), A((2, 3), values=_TIES), gc=False),
    S("min.dim", "ties", lambda lib, x: lib.min(x, 0)[0], A((2, 3), values=[[1.0, 3.0, 3.0], [1.0, 2.0, 3.0]]),
      gc=False),
    S("maximum", "ties", lambda lib, x, y: lib.maximum(x, y), A((3,), values=[1.0, 2.0, 3.0]),
      A((3,), values=[1.0, 0.0, 3.0]), gc=False),
    S("fmax", "ties_nan", lambda lib, x, y: lib.fmax(x, y), A((3,), values=[1.0, float("nan"), 3.0]),
      A((3,), values=[1.0, 0.5, float("nan")]), gc=False),
    S("clamp", "at_bounds", lambda lib, x: x.clamp(-1.0, 1.0), A((3,), values=[-1.0, 0.5, 1.0]), gc=False),
    S("clamp", "tensor_at_bounds", lambda lib, x, lo: lib.clamp(x, min=lo), A((3,), values=[-1.0, 0.5, 1.0]),
      A((3,), values=[-1.0, 0.0, 1.0]), gc=False),
    S("abs", "at_zero", lambda lib, x: x.abs(), A((3,), values=[0.0, -1.0, 2.0]), gc=False),
    S("relu", "at_zero", lambda lib, x: x.relu(), A((3,), values=[0.0, -1.0, 2.0]), gc=False),
    S("norm", "zero_vector", lambda lib, x: x.norm(), A((3,), values=[0.0, 0.0, 0.0]), gc=False),
    S("norm", "p1_at_zero", lambda lib, x: x.norm(1), A((3,), values=[0.0, -1.0, 2.0]), gc=False),
    S("std", "constant", lambda lib, x: x.std(), A((3,), values=[2.0, 2.0, 2.0]), gc=False),
    S("sqrt", "at_zero", lambda lib, x: x.sqrt(), A((2,), values=[0.0, 4.0]), gc=False),
    S("pow", "zero_base", lambda lib, x, y: x ** y, A((3,), values=[0.0, 0.0, 2.0]), A((3,), values=[2.0, 0.0, 0.5]),
      gc=False),
    S("pow", "zero_base_scalar", lambda lib, x: x ** 2.0, A((2,), values=[0.0, 1.5]), gc=False),
    S("div", "by_zero", lambda lib, x, y: x / y, A((2,), values=[1.0, 0.0]), A((2,), values=[0.0, 0.0]), gc=False),
    S("prod", "zeros_keepdim", lambda lib, x: x.prod(1, keepdim=True),
      A((2, 3), values=[[0.0, 2.0, 0.0], [3.0, 0.0, 1.0]]), gc=False),
    S("logsumexp", "inf", lambda lib, x: lib.logsumexp(x, 0), A((3,), values=[-float("inf"), 0.0, 1.0]), gc=False),
    S("floor", "at_integer", lambda lib, x: x.floor(), A((2,), values=[1.0, -2.0]), gc=False))

# ---------------------------------------------------------------- views and shape ops
add(S("view", "2x3_to_3x2", lambda lib, x: x.view(3, 2), A((2, 3))),
    S("view", "flat", lambda lib, x: x.view(-1), A((2, 3))),
    S("view", "0d_to_1", lambda lib, x: x.view([1, 1]), A(())),
    S("view", "inplace_through_view", lambda lib, x: _via(x, lambda b: b.view(6).mul_(2)), A((2, 3))),
    S("view_as", "basic", lambda lib, x, y: x.view_as(y), A((2, 3)), A((6,), grad=False)),
    S("reshape", "contig", lambda lib, x: lib.reshape(x, (3, 2)), A((2, 3))),
    S("reshape", "noncontig_copy", lambda lib, x: x.reshape(-1), A((2, 3), layout="t")),
    S("reshape_as", "basic", lambda lib, x, y: x.reshape_as(y), A((2, 3), layout="t"), A((6,), grad=False)),
    S("flatten", "all", lambda lib, x: lib.flatten(x), A((2, 3, 2))),
    S("flatten", "range", lambda lib, x: x.flatten(1, 2), A((2, 3, 2))),
    S("flatten", "0d", lambda lib, x: lib.flatten(x), A(())),
    S("unflatten", "basic", lambda lib, x: lib.unflatten(x, 1, (2, 2)), A((3, 4))),
    S("permute", "3d", lambda lib, x: lib.permute(x, (2, 0, 1)), A((2, 3, 2))),
    S("permute", "method_neg", lambda lib, x: x.permute(-1, 0), A((2, 3))),
    S("transpose", "basic", lambda lib, x: lib.transpose(x, 0, 1), A((2, 3))),
    S("transpose", "3d_neg", lambda lib, x: x.transpose(-1, 0), A((2, 3, 2))),
    S("transpose", "alias_swapaxes", lambda lib, x: lib.swapaxes(x, 0, 1), A((2, 3))),
    S("movedim", "int", lambda lib, x: lib.movedim(x, 0, 2), A((2, 3, 2))),
    S("movedim", "list", lambda lib, x: x.movedim((0, 1), (2, 0)), A((2, 3, 2))),
    S("t", "2d", lambda lib, x: lib.t(x), A((2, 3))),
    S("t", "1d", lambda lib, x: x.t(), A((3,))),
    S("t", "inplace_on_t", lambda lib, x: _via(x, lambda b: b.t().mul_(3)), A((2, 3))),
    S("expand", "row", lambda lib, x: x.expand(2, 3), A((3,))),
    S("expand", "col_keep", lambda lib, x: x.expand(-1, 3), A((2, 1))),
    S("expand", "new_dims", lambda lib, x: x.expand(2, 2, 3), A((1, 3))),
    S("expand", "0d", lambda lib, x: x.expand(4), A(())),
    S("expand_as", "basic", lambda lib, x, y: x.expand_as(y), A((2, 1)), A((2, 3), grad=False)),
    S("squeeze", "all", lambda lib, x: lib.squeeze(x), A((2, 1, 3, 1))),
    S("squeeze", "dim", lambda lib, x: x.squeeze(1), A((2, 1, 3))),
    S("squeeze", "dims", lambda lib, x: lib.squeeze(x, (0, 2)), A((1, 3, 1))),
    S("squeeze", "noop", lambda lib, x: x.squeeze(0), A((2, 3))),
    S("unsqueeze", "mid", lambda lib, x: lib.unsqueeze(x, 1), A((2, 3))),
    S("unsqueeze", "neg", lambda lib, x: x.unsqueeze(-1), A((2, 3))),
    S("unsqueeze", "0d", lambda lib, x: lib.unsqueeze(x, 0), A(())),
    S("narrow", "dim1", lambda lib, x: lib.narrow(x, 1, 1, 2), A((2, 4))),
    S("narrow", "neg_start", lambda lib, x: x.narrow(0, -2, 2), A((3, 2))),
    S("slice", "step", lambda lib, x: aten(lib, "slice")(x, 1, 0, 4, 2), A((2, 5))),
    S("slice", "defaults", lambda lib, x: aten(lib, "slice")(x), A((3, 2))),
    S("slice", "indexing", lambda lib, x: x[1:, ::2], A((3, 5))),
    S("slice", "neg_bounds", lambda lib, x: aten(lib, "slice")(x, 0, -2, None), A((3, 2))),
    S("select", "int", lambda lib, x: lib.select(x, 1, 2), A((2, 3))),
    S("select", "neg", lambda lib, x: x.select(0, -1), A((2, 3))),
    S("select", "indexing", lambda lib, x: x[1, 0], A((2, 3))),
    S("unbind", "dim0", lambda lib, x: tuple(lib.unbind(x)), A((3, 2))),
    S("unbind", "dim1_partial", lambda lib, x: x.unbind(1)[1], A((2, 3))),
    S("unbind", "iterate", lambda lib, x: tuple(r * (i + 1) for i, r in enumerate(x)), A((3, 2))),
    S("split", "uneven", lambda lib, x: tuple(lib.split(x, 2, 1)), A((2, 5))),
    S("split", "one_used", lambda lib, x: x.split(2)[1], A((5, 2))),
    S("split", "whole_and_empty", lambda lib, x, e: (x.split(4)[0] * 2, e.split(1)[0] + 1), A((3, 2)), A((0, 2))),
    S("split.sizes", "sizes", lambda lib, x: tuple(lib.split(x, [1, 3], 1)), A((2, 4))),
    S("split.sizes", "partial", lambda lib, x: x.split([2, 1])[0] * 2, A((3, 2))),
    S("chunk", "even", lambda lib, x: tuple(lib.chunk(x, 2, 1)), A((2, 4))),
    S("chunk", "uneven_partial", lambda lib, x: x.chunk(3)[2], A((5, 2))),
    S("as_strided", "window", lambda lib, x: lib.as_strided(x, (2, 2), (1, 2)), A((6,))),
    S("as_strided", "overlapping", lambda lib, x: lib.as_strided(x, (3, 2), (1, 1)), A((4,))),
    S("as_strided", "offset", lambda lib, x: x.as_strided((2,), (2,), 1), A((2, 3))),
    S("diagonal", "main", lambda lib, x: lib.diagonal(x), A((3, 3))),
    S("diagonal", "offset", lambda lib, x: x.diagonal(1), A((3, 4))),
    S("diagonal", "neg_offset_dims", lambda lib, x: lib.diagonal(x, -1, 2, 0), A((3, 2, 3))),
    S("diagonal", "inplace", lambda lib, x: _via(x, lambda b: b.diagonal().mul_(2)), A((3, 3))),
    S("unfold", "overlap", lambda lib, x: x.unfold(0, 2, 1), A((4,))),
    S("unfold", "step", lambda lib, x: x.unfold(1, 2, 2), A((2, 5))),
    S("unfold", "0d", lambda lib, x: x.unfold(0, 1, 1), A(())),
    S("contiguous", "noncontig", lambda lib, x: x.contiguous(), A((2, 3), layout="t")),
    S("contiguous", "contig", lambda lib, x: x.contiguous() * 1, A((2, 3))),
    S("alias", "basic", lambda lib, x: aten(lib, "alias")(x), A((2, 3))),
    S("cat", "dim0", lambda lib, x, y: lib.cat([x, y]), A((2, 3)), A((1, 3))),
    S("cat", "dim1_three", lambda lib, x, y, z: lib.cat((x, y, z), 1), A((2, 1)), A((2, 3)), A((2, 2))),
    S("cat", "const_middle", lambda lib, x, y, z: lib.cat((x, y, z), -1), A((2, 1)), A((2, 3), grad=False),
      A((2, 2))),
    S("cat", "alias_concat", lambda lib, x, y: lib.concat([x, y]), A((2,)), A((3,))),
    S("cat", "noncontig", lambda lib, x, y: lib.cat([x, y], 1), A((2, 3), layout="t"), A((2, 2), layout="slice")),
    S("cat", "same_twice", lambda lib, x: lib.cat([x, x * 2]), A((2,))),
    S("stack", "dim0", lambda lib, x, y: lib.stack([x, y]), A((2, 3)), A((2, 3))),
    S("stack", "dim_last", lambda lib, x, y: lib.stack([x, y], -1), A((2,)), A((2,))),
    S("stack", "0d", lambda lib, x, y: lib.stack([x, y]), A(()), A(())),
    S("flip", "dims", lambda lib, x: lib.flip(x, (0, 1)), A((2, 3))),
    S("flip", "one", lambda lib, x: x.flip(-1), A((2, 3))),
    S("roll", "dim", lambda lib, x: lib.roll(x, 1, 1), A((2, 3))),
    S("roll", "flat", lambda lib, x: lib.roll(x, -2), A((2, 3))),
    S("roll", "dims", lambda lib, x: x.roll((1, -1), (0, 1)), A((2, 3))),
    S("tril", "default", lambda lib, x: lib.tril(x), A((3, 3))),
    S("tril", "diag", lambda lib, x: x.tril(-1), A((3, 4))),
    S("tril", "inplace", lambda lib, x: x.clone().tril_(1), A((3, 3))),
    S("triu", "default", lambda lib, x: lib.triu(x), A((3, 3))),
    S("triu", "diag", lambda lib, x: x.triu(1), A((4, 3))),
    S("triu", "inplace", lambda lib, x: x.clone().triu_(-1), A((3, 3))))


def _via(x, f):
    """An in-place op through a view of a clone of x; returns the clone."""
    b = x.clone()
    f(b)
    return b


# ---------------------------------------------------------------- copies, casts, fills
add(S("clone", "basic", lambda lib, x: lib.clone(x), A((2, 3))),
    S("clone", "noncontig_method", lambda lib, x: x.clone(), A((2, 3), layout="t")),
    S("copy_", "same_shape", lambda lib, x, y: x.clone().copy_(y), A((2, 3)), A((2, 3))),
    S("copy_", "broadcast", lambda lib, x, y: x.clone().copy_(y), A((2, 3)), A((3,))),
    S("copy_", "into_const", lambda lib, x: lib.zeros(2, 3, dtype=lib.float64).copy_(x), A((2, 3))),
    S("copy_", "into_view", lambda lib, x, y: _via(x, lambda b: b[:, 1:].copy_(y)), A((2, 3)), A((2, 2))),
    S("copy_", "setitem", lambda lib, x, w: _setitem(lib, x, w), A((2, 3)), A((2,))),
    S("fill_", "basic", lambda lib, x: x.clone().fill_(1.5), A((2, 3))),
    S("fill_", "view", lambda lib, x: _via(x, lambda b: b[0].fill_(2.0)), A((2, 3))),
    S("zero_", "basic", lambda lib, x: x.clone().zero_(), A((2, 3))),
    S("zero_", "view", lambda lib, x: _via(x, lambda b: b[:, 1].zero_()), A((2, 3))),
    S("to_dtype", "copy", lambda lib, x: x.to(lib.float64, copy=True), A((2, 3))),
    S("to_dtype", "float32", lambda lib, x: x.to(lib.float32), A((4,), values=[0.5, -1.25, 2.0, 0.75]), gc=False),
    S("to_dtype", "roundtrip_float32", lambda lib, x: x.to(lib.float32).to(lib.float64),
      A((4,), values=[0.5, -1.25, 2.0, 0.75]), gc=False),
    S("to_dtype", "same_dtype_is_self", lambda lib, x: x.to(lib.float64) * 2, A((2, 3))),
    S("to_dtype", "method_double", lambda lib, x: x.double().float().double(), A((2,), values=[0.5, 0.25]), gc=False),
    S("masked_fill", "basic", lambda lib, x, m: lib.masked_fill(x, m, 0.5), A((2, 3)),
      C([[True, False, False], [False, True, True]], "bool")),
    S("masked_fill", "broadcast_mask", lambda lib, x, m: x.masked_fill(m, -1.0), A((2, 3)), C([False, True, False],
                                                                                            "bool")),
    S("masked_fill", "inplace", lambda lib, x, m: x.clone().masked_fill_(m, 2.0), A((2, 3)),
      C([[True, False, True]], "bool")),
    S("masked_fill", "broadcast_self", lambda lib, x, m: x.masked_fill(m, 1.5), A((3,)),
      C([[True, False, True], [False, False, True]], "bool")),
    S("masked_fill.Tensor", "value_grad", lambda lib, x, m, v: x.masked_fill(m, v), A((2, 3)),
      C([[True, False, True], [False, False, True]], "bool"), A(())),
    S("masked_fill.Tensor", "broadcast_self", lambda lib, x, m, v: lib.masked_fill(x, m, v), A((3,)),
      C([[True, False, True], [False, True, True]], "bool"), A(())))


def _setitem(lib, x, w):
    """x[0, 1:] = w * 5 on a fresh tensor (the setitem example of the autograd docs)."""
    z = lib.zeros(2, 3, dtype=lib.float64)
    z[0, 1:] = w * 5
    return z * x


# ---------------------------------------------------------------- random (gradients are zero)
add(S("uniform_", "basic", lambda lib, x: seeded(lib, lambda: x.clone().uniform_(-1, 1)), A((2, 3)), values=False),
    S("normal_", "basic", lambda lib, x: seeded(lib, lambda: x.clone().normal_(0, 2)), A((2, 3)), values=False),
    S("bernoulli_", "tensor_p", lambda lib, x, p: seeded(lib, lambda: x.clone().bernoulli_(p)), A((2, 3)),
      C([0.2, 0.5, 0.9], "float64"), values=False),
    S("random_", "range", lambda lib, x: seeded(lib, lambda: x.clone().random_(0, 10)), A((2, 3)), values=False),
    S("exponential_", "basic", lambda lib, x: seeded(lib, lambda: x.clone().exponential_(2.0)), A((2, 3)),
      values=False),
    S("cauchy_", "basic", lambda lib, x: seeded(lib, lambda: x.clone().cauchy_(0.5, 2.0)), A((2, 3)), values=False),
    S("log_normal_", "basic", lambda lib, x: seeded(lib, lambda: x.clone().log_normal_()), A((2, 3)), values=False),
    S("geometric_", "basic", lambda lib, x: seeded(lib, lambda: x.clone().geometric_(0.4)), A((2, 3)), values=False),
    S("bernoulli", "probs", lambda lib, x: seeded(lib, lambda: lib.bernoulli(x)), A((2, 3), 0.1, 0.9), values=False))

# ---------------------------------------------------------------- indexing
add(S("index_select", "dim0_repeat", lambda lib, x, i: lib.index_select(x, 0, i), A((3, 2)), C([2, 0, 2])),
    S("index_select", "dim1", lambda lib, x, i: x.index_select(1, i), A((2, 4)), C([3, 1])),
    S("index_select", "0d_index", lambda lib, x, i: lib.index_select(x, 0, i), A((3,)), C(1)),
    S("masked_select", "basic", lambda lib, x, m: lib.masked_select(x, m), A((2, 3)),
      C([[True, False, True], [False, True, True]], "bool")),
    S("masked_select", "broadcast_mask", lambda lib, x, m: x.masked_select(m), A((2, 3)), C([True, False, True],
                                                                                           "bool")),
    S("masked_select", "broadcast_self", lambda lib, x, m: lib.masked_select(x, m), A((3,)),
      C([[True, False, True], [False, True, True]], "bool")),
    S("index_put_", "values", lambda lib, x, v, i: x.clone().index_put_((i,), v), A((4, 2)), A((2, 2)), C([3, 0])),
    S("index_put_", "accumulate_dupes", lambda lib, x, v, i: x.clone().index_put_((i,), v, accumulate=True),
      A((4, 2)), A((3, 2)), C([1, 1, 3])),
    S("index_put_", "broadcast_values", lambda lib, x, v, i, j: x.clone().index_put_((i, j), v), A((3, 3)),
      A(()), C([0, 2]), C([1, 1])),
    S("index_put_", "setitem_mask", lambda lib, x, v, m: _put_mask(x, m, v), A((2, 3)), A((3,)),
      C([[True, False, True], [False, True, False]], "bool")),
    S("index", "tensor", lambda lib, x, i: x[i], A((4, 2)), C([3, 0, 3])),
    S("index", "dim1", lambda lib, x, i: x[:, i], A((2, 4)), C([[1, 2], [3, 1]])),
    S("index", "two_indices", lambda lib, x, i, j: x[i, j], A((3, 3)), C([0, 2, 2]), C([1, 1, 0])),
    S("index", "mask", lambda lib, x, m: x[m], A((2, 3)), C([[True, False, True], [False, True, True]], "bool")),
    S("index", "list", lambda lib, x: x[[1, 0, 1]], A((2, 3))),
    S("index", "aten", lambda lib, x, i: aten(lib, "index")(x, [i]), A((3,)), C([2, 2])))


def _put_mask(x, m, v):
    b = x.clone()
    b[m] = v * 2
    return b


# ---------------------------------------------------------------- matmul
add(S("matmul", "vec_vec", lambda lib, a, b: lib.matmul(a, b), A((3,)), A((3,))),
    S("matmul", "mat_vec", lambda lib, a, b: lib.matmul(a, b), A((2, 3)), A((3,))),
    S("matmul", "vec_mat", lambda lib, a, b: a.matmul(b), A((3,)), A((3, 2))),
    S("matmul", "mat_mat", lambda lib, a, b: a @ b, A((2, 3)), A((3, 2))),
    S("matmul", "noncontig", lambda lib, a, b: lib.matmul(a, b), A((2, 3), layout="t"), A((3, 2), layout="slice")),
    S("matmul", "batched_broadcast", lambda lib, a, b: lib.matmul(a, b), A((2, 2, 3)), A((3, 2))),
    S("matmul", "batch_broadcast_both", lambda lib, a, b: lib.matmul(a, b), A((2, 1, 2, 3)), A((3, 3, 2))),
    S("matmul", "vec_batched", lambda lib, a, b: lib.matmul(a, b), A((3,)), A((2, 3, 2))),
    S("matmul", "const_rhs", lambda lib, a, b: lib.matmul(a, b), A((2, 3)), A((3, 2), grad=False)))


# ---------------------------------------------------------------- tests
def _as_tuple(x):
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


# ---- NN core, gather/scatter, convolution and pooling (ops outside the foundation issue)
def _ops(lib, name):
    """ember._C._ops._<name> (an op Python reaches only internally) or torch's public equivalent."""
    return getattr(ember._C._ops, "_" + name) if lib is ember else None


IDX = C([[0, 1, 2], [2, 0, 1]])
add(S("softmax", "dim1", lambda lib, a: lib.softmax(a, 1), A((3, 4))),
    S("softmax", "dim0_noncontig", lambda lib, a: lib.softmax(a, 0), A((4, 3), layout="t")),
    S("log_softmax", "dim1", lambda lib, a: lib.log_softmax(a, 1), A((3, 4))),
    S("log_softmax", "3d_dim1", lambda lib, a: lib.log_softmax(a, 1), A((2, 3, 2))),
    S("native_layer_norm", "affine", lambda lib, x, w, b: lib.native_layer_norm(x, [4], w, b, 1e-5)[0],
      A((3, 4)), A((4,)), A((4,))),
    S("native_layer_norm", "2d_shape", lambda lib, x: lib.native_layer_norm(x, [2, 3], None, None, 1e-5)[0], A((2, 2, 3))),
    S("_lstm_cell", "both_outputs", lambda lib, g, c: _lstm_cell(lib, g, c), A((2, 12)), A((2, 3))),
    S("_lstm_cell", "h_only", lambda lib, g, c: _lstm_cell(lib, g, c)[0], A((3, 8)), A((3, 2))),
    S("_lstm_seq", "forward", lambda lib, x, h, c, w: _lstm_seq(lib, x, h, c, w), A((3, 2, 8)), A((2, 2)), A((2, 2)),
      A((8, 2))),
    S("_lstm_seq", "reverse_h_only", lambda lib, x, h, c, w: _lstm_seq(lib, x, h, c, w, True)[0],
      A((2, 3, 4)), A((3, 1)), A((3, 1)), A((4, 1))),
    S("_gru_cell", "step", lambda lib, a, b, h: _gru_cell(lib, a, b, h), A((2, 9)), A((2, 9)), A((2, 3))),
    S("native_batch_norm", "train", lambda lib, x, w, b: lib.native_batch_norm(x, w, b, None, None, True, 0.1, 1e-5)[0],
      A((4, 3, 2)), A((3,)), A((3,))),
    S("native_batch_norm", "eval", lambda lib, x, w, b: lib.native_batch_norm(
        x, w, b, lib.tensor([0.1, -0.2, 0.3], dtype=lib.float64), lib.tensor([1.5, 0.5, 2.0], dtype=lib.float64),
        False, 0.1, 1e-5)[0], A((4, 3)), A((3,)), A((3,))),
    S("gather", "dim0", lambda lib, a, i: lib.gather(a, 0, i), A((3, 3)), IDX),
    S("gather", "dim1", lambda lib, a, i: a.gather(1, i), A((3, 4)), IDX),
    S("scatter", "src", lambda lib, a, i, s: lib.scatter(a, 0, i, s), A((3, 3)), IDX, A((2, 3))),
    S("scatter.value", "value", lambda lib, a, i: a.scatter(0, i, 2.5), A((3, 3)), IDX),
    S("scatter_add", "dup", lambda lib, a, i, s: lib.scatter_add(a, 1, i, s), A((3, 3)), C([[0, 0, 2], [1, 1, 1]]),
      A((2, 3))),
    S("index_add", "alpha", lambda lib, a, i, s: lib.index_add(a, 0, i, s, alpha=2), A((4, 3)), C([0, 3, 0]),
      A((3, 3))),
    S("im2col", "2d", lambda lib, a: (_ops(lib, "im2col") or (lambda x, *r: lib.nn.functional.unfold(x, *r)))(
        a, [2, 2], [1, 1], [1, 0], [2, 1]), A((1, 2, 4, 3))),
    S("col2im", "2d", lambda lib, a: (_ops(lib, "col2im") or (lambda x, o, *r: lib.nn.functional.fold(x, o, *r)))(
        a, [4, 3], [2, 2], [1, 1], [1, 0], [2, 1]), A((1, 8, 6))),
    S("max_pool_with_indices", "2d", lambda lib, a: (
        ember._C._ops._max_pool_with_indices(a, [2, 2], [2, 1], [0, 1], [1, 1], False)[0] if lib is ember else
        lib.nn.functional.max_pool2d(a, [2, 2], [2, 1], [0, 1], 1, False)), A((1, 2, 4, 4), kind="signed", lo=0.1)),
    S("adaptive_max_pool_with_indices", "2d", lambda lib, a: (
        ember._C._ops._adaptive_max_pool_with_indices(a, [2, 3])[0] if lib is ember else
        lib.nn.functional.adaptive_max_pool2d(a, [2, 3])), A((1, 2, 5, 4), kind="signed", lo=0.1)),
    S("avg_pool_nd", "2d_ceil_no_pad_count", lambda lib, a: lib.nn.functional.avg_pool2d(
        a, 3, 2, 1, ceil_mode=True, count_include_pad=False), A((1, 2, 5, 4))),
    S("avg_pool_nd", "3d_divisor", lambda lib, a: lib.nn.functional.avg_pool3d(a, 2, (1, 2, 1), 1, divisor_override=3),
      A((1, 1, 3, 4, 3))),
    S("avg_pool_nd", "1d", lambda lib, a: lib.nn.functional.avg_pool1d(a, 3, 2, 1), A((2, 1, 6))),
    S("adaptive_avg_pool_nd", "2d", lambda lib, a: lib.nn.functional.adaptive_avg_pool2d(a, (2, 3)), A((1, 2, 5, 4))),
    S("adaptive_avg_pool_nd", "global_unbatched", lambda lib, a: lib.nn.functional.adaptive_avg_pool2d(a, 1), A((2, 3, 4))),
    S("adaptive_avg_pool_nd", "3d", lambda lib, a: lib.nn.functional.adaptive_avg_pool3d(a, (2, 1, 3)), A((1, 1, 3, 2, 4))))


def _pool_grad(lib, x, g, f):
    """a pooling's gradient with respect to its input, as a differentiable function of g."""
    x = x.detach().requires_grad_()
    return lib.autograd.grad(f(lib.nn.functional, x), x, g, create_graph=True)[0]


add(S("avg_pool_nd_backward", "2d", lambda lib, x, g: _pool_grad(lib, x, g, lambda F, t: F.avg_pool2d(
        t, 3, 2, 1, ceil_mode=True, count_include_pad=False)), A((1, 2, 5, 4), grad=False), A((1, 2, 3, 3))),
    S("adaptive_avg_pool_nd_backward", "2d", lambda lib, x, g: _pool_grad(
        lib, x, g, lambda F, t: F.adaptive_avg_pool2d(t, (2, 3))), A((1, 2, 5, 4), grad=False), A((1, 2, 2, 3))),
    S("adaptive_avg_pool_nd_backward", "global", lambda lib, x, g: _pool_grad(
        lib, x, g, lambda F, t: F.adaptive_avg_pool2d(t, 1)), A((1, 2, 5, 4), grad=False), A((1, 2, 1, 1))))


add(S("sort", "dim1", lambda lib, a: lib.sort(a, 1)[0], A((3, 4), kind="signed", lo=0.1)),
    S("sort.stable", "desc", lambda lib, a: lib.sort(a, stable=True, dim=0, descending=True)[0], A((4, 3), kind="signed", lo=0.1)),
    S("topk", "k2", lambda lib, a: lib.topk(a, 2)[0], A((3, 5), kind="signed", lo=0.1)),
    S("kthvalue", "k2", lambda lib, a: lib.kthvalue(a, 2, 1)[0], A((3, 5), kind="signed", lo=0.1)),
    S("median", "all", lambda lib, a: lib.median(a), A((3, 5), kind="signed", lo=0.1)),
    S("median.dim", "keepdim", lambda lib, a: lib.median(a, 1, True)[0], A((3, 5), kind="signed", lo=0.1)),
    S("mode", "dim1", lambda lib, a: lib.mode(a, 1)[0], A((3, 5), kind="signed", lo=0.1)))

# ---------------------------------------------------------------- neural-network ops (ember.nn.functional)
def nn_fn(lib, name):
    """An op PyTorch keeps in torch._C._nn (ops.yaml's python_module: nn)."""
    return getattr(lib._C._nn, name)


def _nn_act(name, values, *args, inplace=True):
    f = lambda lib, x: nn_fn(lib, name)(x, *args)  # noqa: E731
    out = [S(name, "2x3", f, A((2, 3), values=values)),
           S(name, "noncontig", lambda lib, x: nn_fn(lib, name)(x.t(), *args), A((3, 2), values=_transpose(values)))]
    if inplace:
        out.append(S(name, "inplace", lambda lib, x: nn_fn(lib, name + "_")(x * 1.0, *args), A((2, 3), values=values)))
    return out


_ACT_VALUES = [[-1.7, -0.6, 0.3], [0.8, 1.6, -0.25]]       # away from 0 and +-1
_HARD_VALUES = [[-4.2, -2.5, -0.7], [0.4, 2.2, 3.6]]        # away from +-3 (hardsigmoid, hardswish)
_SHRINK_VALUES = [[-1.3, -0.3, 0.2], [0.7, 1.1, -0.8]]      # away from +-0.5

TORCH_NO_DOUBLE_BACKWARD = {"hardsigmoid"}  # torch: "derivative for aten::hardsigmoid_backward is not implemented"

add(*_nn_act("hardtanh", [[-1.5, -0.5, 0.3], [0.7, 1.4, -0.2]]),
    S("hardtanh", "bounds", lambda lib, x: nn_fn(lib, "hardtanh")(x, -0.4, 0.6),
      A((2, 3), values=[[-1.5, -0.5, 0.3], [0.7, 1.4, -0.2]])),
    *_nn_act("leaky_relu", _ACT_VALUES), S("leaky_relu", "slope", lambda lib, x: nn_fn(lib, "leaky_relu")(x, 0.2),
                                          A((2, 3), values=_ACT_VALUES)),
    *_nn_act("elu", _ACT_VALUES), S("elu", "alpha_scale", lambda lib, x: nn_fn(lib, "elu")(x, 0.5, 1.5, 2.0),
                                    A((2, 3), values=_ACT_VALUES)),
    S("elu", "selu", lambda lib, x: lib.selu(x), A((2, 3), values=_ACT_VALUES)),
    S("elu", "celu", lambda lib, x: lib.celu(x, 2.0), A((2, 3), values=_ACT_VALUES)),
    *_nn_act("gelu", _ACT_VALUES, inplace=False),
    S("gelu", "tanh", lambda lib, x: nn_fn(lib, "gelu")(x, approximate="tanh"), A((2, 3), values=_ACT_VALUES)),
    *_nn_act("silu", _ACT_VALUES), *_nn_act("mish", _ACT_VALUES),
    *_nn_act("hardsigmoid", _HARD_VALUES), *_nn_act("hardswish", _HARD_VALUES),
    *_nn_act("softplus", _ACT_VALUES, inplace=False),
    S("softplus", "beta_threshold", lambda lib, x: nn_fn(lib, "softplus")(x, 2.0, 1.0), A((2, 3), values=_ACT_VALUES)),
    *_nn_act("softshrink", _SHRINK_VALUES, inplace=False),
    S("hardshrink", "2x3", lambda lib, x: lib.hardshrink(x), A((2, 3), values=_SHRINK_VALUES)),
    S("hardshrink", "method", lambda lib, x: x.hardshrink(0.25), A((2, 3), values=_SHRINK_VALUES)),
    S("threshold", "2x3", lambda lib, x: lib.threshold(x, 0.1, -2.0), A((2, 3), values=_ACT_VALUES)),
    S("threshold", "inplace", lambda lib, x: lib.threshold_(x * 1.0, 0.1, 0.5), A((2, 3), values=_ACT_VALUES)),
    *_nn_act("log_sigmoid", _ACT_VALUES, inplace=False),
    S("binary_cross_entropy", "mean", lambda lib, x, t: nn_fn(lib, "binary_cross_entropy")(x, t, None, 1),
      A((2, 3), 0.1, 0.9), A((2, 3), 0.1, 0.9)),
    S("binary_cross_entropy", "weight_none", lambda lib, x, t, w: nn_fn(lib, "binary_cross_entropy")(x, t, w, 0),
      A((2, 3), 0.1, 0.9), A((2, 3), 0.1, 0.9), C([[0.5, 1.0, 2.0], [1.5, 0.25, 1.0]], "float64")),
    S("binary_cross_entropy", "sum", lambda lib, x, t: nn_fn(lib, "binary_cross_entropy")(x, t, None, 2),
      A((4,), 0.1, 0.9), A((4,), 0.1, 0.9, grad=False)),
    S("embedding", "2d_indices", lambda lib, w: lib.embedding(w, lib.tensor([[0, 2], [4, 2]])), A((5, 3))),
    S("embedding", "0d_index", lambda lib, w: lib.embedding(w, lib.tensor(3)), A((5, 3))),
    # padding_idx and scale_grad_by_freq change the gradient on purpose: compared with torch, no gradcheck
    S("embedding", "padding_idx", lambda lib, w: lib.embedding(w, lib.tensor([[0, 2], [4, 2]]), 2), A((5, 3)),
      gc=False),
    S("embedding", "scale_grad_by_freq", lambda lib, w: lib.embedding(w, lib.tensor([0, 2, 2, 4, 2]), -1, True),
      A((5, 3)), gc=False))


def _la(name):
    return lambda lib, *a, **k: getattr(ember._C._ops if lib is ember else None, "_linalg_" + name, None)(*a, **k) \
        if lib is ember else getattr(lib.linalg, name)(*a, **k)


SPD = lambda lib, x: x @ x.mT + 4 * lib.eye(x.shape[-1], dtype=lib.float64)
add(S("linalg_det", "3x3", lambda lib, a: _la("det")(lib, a), A((3, 3))),
    S("linalg_inv", "3x3", lambda lib, a: _la("inv")(lib, a), A((3, 3), lo=1.0)),
    S("linalg_solve", "matrix", lambda lib, a, b: _la("solve")(lib, a, b), A((3, 3), lo=1.0), A((3, 2))),
    S("linalg_cholesky", "spd", lambda lib, a: _la("cholesky")(lib, SPD(lib, a)), A((3, 3))),
    S("linalg_qr", "tall", lambda lib, a: tuple(_la("qr")(lib, a)), A((4, 3))),
    S("linalg_eigh", "spd", lambda lib, a: (lambda r: (r[0], r[1].abs()))(_la("eigh")(lib, SPD(lib, a))), A((3, 3))),
    S("linalg_svd", "tall", lambda lib, a: tuple(t.abs() for t in _la("svd")(lib, a, False)), A((4, 3))))


# the LU family, triangular solves, slogdet and matrix_exp (ember.linalg's functions over the ops)
def _wc(lib, a):  # well conditioned: a dominant diagonal
    return a + 4 * lib.eye(a.shape[-1], dtype=lib.float64)


def _lu_solve(lib, a, b, left, adjoint):
    LU, piv = lib.linalg.lu_factor(_wc(lib, a))
    return lib.linalg.lu_solve(LU, piv, b, left=left, adjoint=adjoint)


def _tri(lib, a, b, **kw):
    return lib.linalg.solve_triangular(_wc(lib, a), b, **kw)


add(S("linalg_lu_factor_ex", "square", lambda lib, a: lib.linalg.lu_factor_ex(a)[0], A((3, 3))),
    S("linalg_lu_factor_ex", "batch", lambda lib, a: lib.linalg.lu_factor(a).LU, A((2, 3, 3))),
    S("linalg_lu_factor_ex", "tall_lu", lambda lib, a: tuple(lib.linalg.lu(a))[1:], A((4, 2))),
    S("linalg_lu_factor_ex", "wide_lu", lambda lib, a: tuple(lib.linalg.lu(a))[1:], A((2, 4))),
    S("linalg_lu_factor_ex", "method", lambda lib, a: a.lu()[0], A((3, 3))),
    S("linalg_lu_solve", "left", lambda lib, a, b: _lu_solve(lib, a, b, True, False), A((3, 3)), A((3, 2))),
    S("linalg_lu_solve", "left_adjoint", lambda lib, a, b: _lu_solve(lib, a, b, True, True), A((3, 3)), A((3, 2))),
    S("linalg_lu_solve", "right", lambda lib, a, b: _lu_solve(lib, a, b, False, False), A((3, 3)), A((2, 3))),
    S("linalg_lu_solve", "right_adjoint", lambda lib, a, b: _lu_solve(lib, a, b, False, True), A((3, 3)),
      A((2, 3))),
    S("linalg_lu_solve", "broadcast", lambda lib, a, b: _lu_solve(lib, a, b, True, False), A((3, 3)),
      A((2, 3, 1))),
    S("linalg_solve_triangular", "upper", lambda lib, a, b: _tri(lib, a, b, upper=True), A((3, 3)), A((3, 2))),
    S("linalg_solve_triangular", "lower_right", lambda lib, a, b: _tri(lib, a, b, upper=False, left=False),
      A((3, 3)), A((2, 3))),
    S("linalg_solve_triangular", "unit_broadcast", lambda lib, a, b: _tri(lib, a, b, upper=False,
                                                                          unitriangular=True),
      A((2, 3, 3)), A((3, 1))),
    S("linalg_cholesky_ex", "lower", lambda lib, a: lib.linalg.cholesky_ex(SPD(lib, a))[0], A((3, 3))),
    S("linalg_cholesky_ex", "upper", lambda lib, a: lib.linalg.cholesky_ex(SPD(lib, a), upper=True).L, A((3, 3))),
    S("linalg_slogdet", "positive", lambda lib, a: lib.linalg.slogdet(_wc(lib, a)).logabsdet, A((3, 3))),
    S("linalg_slogdet", "negative_batch", lambda lib, a: lib.linalg.slogdet(-_wc(lib, a))[1], A((2, 3, 3))),
    S("matrix_exp", "small", lambda lib, a: lib.linalg.matrix_exp(a), A((2, 2), lo=-0.2, hi=0.2)),
    S("matrix_exp", "scaled", lambda lib, a: lib.matrix_exp(a), A((3, 3), lo=-3.0, hi=3.0)),
    S("matrix_exp", "batch_method", lambda lib, a: a.matrix_exp(), A((2, 2, 2))),
    # no derivative in torch either (ember: NotImplementedError): forward values only
    S("linalg_ldl_factor_ex", "symmetric", lambda lib, a: tuple(lib.linalg.ldl_factor_ex(a + a.mT))[:2],
      A((3, 3), grad=False), gc=False),
    S("linalg_ldl_solve", "symmetric", lambda lib, a, b: lib.linalg.ldl_solve(
        *lib.linalg.ldl_factor(_wc(lib, a + a.mT)), b), A((3, 3), grad=False), A((3, 2), grad=False), gc=False),
    S("geqrf", "tall", lambda lib, a: tuple(lib.geqrf(a)), A((4, 3), grad=False), gc=False),
    # composites: torch.* spellings and the Householder products
    S("linalg_cholesky", "method_upper", lambda lib, a: SPD(lib, a).cholesky(upper=True), A((3, 3))),
    S("linalg_householder_product", "tall", lambda lib, a, t: lib.linalg.householder_product(a, t), A((4, 3)),
      A((2,), lo=0.5, hi=1.8)),
    S("orgqr", "square", lambda lib, a, t: lib.orgqr(a, t), A((3, 3)), A((3,), lo=0.5, hi=1.8)),
    S("ormqr", "left_transpose", lambda lib, a, t, c: lib.ormqr(a, t, c, True, True), A((4, 3)),
      A((3,), lo=0.5, hi=1.8), A((4, 2))),
    S("ormqr", "right", lambda lib, a, t, c: a.ormqr(t, c, left=False), A((3, 2)), A((2,), lo=0.5, hi=1.8),
      A((2, 3))),
    S("lu_unpack", "tall", lambda lib, a: tuple(lib.lu_unpack(*lib.linalg.lu_factor(a)))[1:], A((4, 3))),
    S("matrix_power", "negative", lambda lib, a: lib.linalg.matrix_power(_wc(lib, a), -2), A((3, 3))),
    S("matrix_power", "method_5", lambda lib, a: a.matrix_power(5), A((2, 2), lo=-0.8, hi=0.8)),
    S("logdet", "method", lambda lib, a: _wc(lib, a).logdet(), A((3, 3))),
    S("det", "batch", lambda lib, a: lib.det(a), A((2, 3, 3))),
    S("pinverse", "wide", lambda lib, a: lib.pinverse(a), A((2, 3))),
    S("cholesky_solve", "lower", lambda lib, b, a: lib.cholesky_solve(b, lib.linalg.cholesky(SPD(lib, a))),
      A((3, 2)), A((3, 3))),
    S("cholesky_inverse", "upper", lambda lib, a: lib.cholesky_inverse(lib.linalg.cholesky(SPD(lib, a), upper=True),
                                                                        upper=True), A((3, 3))),
    S("triangular_solve", "transpose", lambda lib, b, a: lib.triangular_solve(b, _wc(lib, a), True, True)[0],
      A((3, 2)), A((3, 3))),
    S("svd", "values", lambda lib, a: lib.svd(a)[1], A((4, 3))))


# ---- special functions (ember.special and the gamma/Bessel ops); sp(lib) is torch.special / ember.special
def sp(lib):
    return lib.special


for _name, _dom in {"lgamma": dict(lo=0.3, hi=3.0), "digamma": dict(lo=0.3, hi=3.0), "i0": {},
                    "sinc": dict(lo=0.2, hi=1.8, kind="signed")}.items():
    add(S(_name, "2x3", lambda lib, x, n=_name: getattr(lib, n)(x), A((2, 3), **_dom)),
        S(_name, "noncontig_method", lambda lib, x, n=_name: getattr(x, n)(), A((3, 2), layout="t", **_dom)),
        S(_name, "inplace", lambda lib, x, n=_name: getattr(x.clone(), n + "_")(), A((2, 3), **_dom)))
add(S("lgamma", "negative_noninteger", lambda lib, x: lib.lgamma(x), A((4,), values=[-0.5, -1.3, -2.7, 4.2])),
    S("digamma", "negative_noninteger", lambda lib, x: lib.digamma(x), A((3,), values=[-0.5, -1.3, -2.7])),
    S("polygamma", "n0_n1", lambda lib, x: (lib.polygamma(0, x), lib.polygamma(1, x)), A((2, 3), lo=0.3, hi=3.0)),
    S("polygamma", "n3_method", lambda lib, x: x.polygamma(3), A((3,), lo=0.5, hi=3.0)),
    S("mvlgamma", "p3", lambda lib, x: lib.mvlgamma(x, 3), A((2, 3), lo=1.5, hi=4.0)),
    S("mvlgamma", "method_p1", lambda lib, x: x.mvlgamma(1), A((3,), lo=0.5, hi=4.0)),
    S("igamma", "other", lambda lib, a, x: lib.igamma(a, x), A((2, 3), lo=0.5, hi=3.0, grad=False),
      A((2, 3), lo=0.2, hi=3.0)),
    S("igammac", "other_broadcast", lambda lib, a, x: lib.igammac(a, x), A((3,), lo=0.5, hi=3.0, grad=False),
      A((2, 3), lo=0.2, hi=3.0)),
    S("logit", "no_eps", lambda lib, x: lib.logit(x), A((2, 3), lo=0.1, hi=0.9)),
    S("logit", "eps_clamped", lambda lib, x: lib.logit(x, eps=0.2), A((4,), values=[0.05, 0.3, 0.6, 0.95])),
    S("logit", "inplace", lambda lib, x: x.clone().logit_(), A((3,), lo=0.1, hi=0.9)),
    S("sinc", "at_zero", lambda lib, x: lib.sinc(x), A((3,), values=[0.0, 0.4, -1.3]), gg=False),
    S("xlogy.Tensor", "at_zero_self", lambda lib, a, b: lib.xlogy(a, b), A((3,), values=[0.0, 0.0, 1.5]),
      A((3,), values=[2.0, 0.5, 3.0]), gc=False),
    S("special_i0e", "signed", lambda lib, x: sp(lib).i0e(x), A((2, 3), lo=0.2, hi=3.0, kind="signed")),
    S("special_i1", "signed", lambda lib, x: sp(lib).i1(x), A((2, 3), lo=0.2, hi=3.0, kind="signed")),
    S("special_i1", "at_zero", lambda lib, x: sp(lib).i1(x), A((2,), values=[0.0, 1.0]), gg=False),
    S("special_i1e", "signed", lambda lib, x: sp(lib).i1e(x), A((2, 3), lo=0.2, hi=3.0, kind="signed")),
    S("special_erfcx", "2x3", lambda lib, x: sp(lib).erfcx(x), A((2, 3))),
    S("special_ndtri", "2x3", lambda lib, x: sp(lib).ndtri(x), A((2, 3), lo=0.05, hi=0.95)),
    S("special_log_ndtr", "tails", lambda lib, x: sp(lib).log_ndtr(x), A((4,), values=[-8.0, -1.5, 0.3, 4.0])),
    S("special_ndtr", "2x3", lambda lib, x: sp(lib).ndtr(x), A((2, 3))),
    S("special_entr", "positive", lambda lib, x: sp(lib).entr(x), A((2, 3), lo=0.2, hi=3.0)),
    S("special_xlog1py", "both", lambda lib, a, b: sp(lib).xlog1py(a, b), A((2, 3)), A((2, 3), lo=-0.5, hi=2.0)),
    S("special_xlog1py.self_scalar", "scalar_x", lambda lib, b: sp(lib).xlog1py(2.0, b), A((3,), lo=-0.5, hi=2.0)),
    S("special_xlog1py.other_scalar", "scalar_y", lambda lib, a: sp(lib).xlog1py(a, 0.5), A((3,))),
    S("special_zeta", "q", lambda lib, x, q: sp(lib).zeta(x, q), A((3,), lo=1.5, hi=4.0, grad=False),
      A((2, 3), lo=0.5, hi=3.0)),
    S("special_zeta.self_scalar", "scalar_x", lambda lib, q: sp(lib).zeta(3.0, q), A((3,), lo=0.5, hi=3.0)))


# ---- more of torch.* (ops/math_extra.cpp): copysign has a formula, the rest are composites
_NAN = float("nan")
add(S("copysign.Tensor", "2x3", lambda lib, a, b: lib.copysign(a, b), A((2, 3), lo=0.3, hi=2.0, kind="signed"),
      A((2, 3), lo=0.3, hi=2.0, kind="signed")),
    S("copysign.Scalar", "method", lambda lib, a: a.copysign(-1.0), A((3,), lo=0.3, hi=2.0, kind="signed")),
    # (non-negative: torch's own ldexp gradient computes 2**e in integers, 0 for a negative e)
    S("ldexp.Tensor", "int_exponent", lambda lib, a: lib.ldexp(a, lib.tensor([1, 0, 3])), A((2, 3))),
    S("deg2rad", "inplace", lambda lib, a: a.clone().deg2rad_(), A((2, 3))),
    S("rad2deg", "2x3", lambda lib, a: lib.rad2deg(a), A((2, 3))),
    S("addcmul", "value", lambda lib, s_, a, b: lib.addcmul(s_, a, b, value=-0.5), A((2, 3)), A((3,)), A((2, 1))),
    S("addcdiv", "inplace", lambda lib, s_, a, b: s_.clone().addcdiv_(a, b, value=2), A((2, 3)), A((2, 3)),
      A((2, 3), lo=0.5, hi=2.0, kind="signed")),
    S("positive", "2x3", lambda lib, a: lib.positive(a) * 2, A((2, 3))),
    S("rsub.Tensor", "alpha", lambda lib, a, b: lib.rsub(a, b, alpha=2), A((2, 3)), A((3,))),
    S("rsub.Scalar", "scalar", lambda lib, a: lib.rsub(a, 3.0), A((2, 3))),
    S("aminmax", "dim", lambda lib, a: tuple(lib.aminmax(a, dim=1)), A((3, 4))),
    S("dist", "p3", lambda lib, a, b: lib.dist(a, b, 3), A((2, 3)), A((3,))),
    S("renorm", "clamped", lambda lib, a: lib.renorm(a, 2, 0, 1.0), A((3, 4))),
    S("msort", "2d", lambda lib, a: lib.msort(a), A((4, 3))),
    S("nanmedian", "all", lambda lib, a: lib.nanmedian(a), A((5,), values=[0.3, _NAN, -1.2, 2.2, 0.9])),
    S("nanmedian.dim", "dim", lambda lib, a: lib.nanmedian(a, 1)[0],
      A((2, 4), values=[[0.3, _NAN, -1.2, 2.2], [1.1, 0.2, _NAN, _NAN]]), gc=False),
    S("quantile", "linear", lambda lib, a: lib.quantile(a, lib.tensor([0.2, 0.7], dtype=lib.float64), dim=1), A((2, 5))),
    S("quantile.scalar", "midpoint", lambda lib, a: lib.quantile(a, 0.4, interpolation="midpoint"), A((7,))),
    S("nanquantile", "linear", lambda lib, a: lib.nanquantile(a, lib.tensor([0.3], dtype=lib.float64)),
      A((5,), values=[0.3, _NAN, -1.2, 2.2, 0.9]), gc=False),
    S("nanquantile.scalar", "dim", lambda lib, a: lib.nanquantile(a, 0.5, dim=0), A((4, 2))),
    S("cov", "weights", lambda lib, a, w: lib.cov(a, aweights=w), A((2, 5)), A((5,), lo=0.2, hi=2.0)),
    S("corrcoef", "3vars", lambda lib, a: lib.corrcoef(a), A((3, 6))),
    S("trapezoid.x", "x", lambda lib, y, x: lib.trapezoid(y, x), A((2, 4)), A((4,))),
    S("trapezoid.dx", "dx", lambda lib, y: lib.trapezoid(y, dx=0.5, dim=0), A((3, 2))),
    S("trapz.x", "x", lambda lib, y, x: lib.trapz(y, x), A((4,)), A((4,))),
    S("trapz.dx", "dx", lambda lib, y: lib.trapz(y, dx=2.0), A((3, 4))),
    S("cumulative_trapezoid.x", "x", lambda lib, y, x: lib.cumulative_trapezoid(y, x), A((2, 4)), A((4,))),
    S("cumulative_trapezoid.dx", "dx", lambda lib, y: lib.cumulative_trapezoid(y, dim=0), A((3, 2))),
    S("diagonal_scatter", "offset", lambda lib, a, b: lib.diagonal_scatter(a, b, 1), A((3, 4)), A((3,))),
    S("select_scatter", "dim1", lambda lib, a, b: lib.select_scatter(a, b, 1, 2), A((3, 4)), A((3,))),
    S("slice_scatter", "step", lambda lib, a, b: lib.slice_scatter(a, b, 1, 0, 4, 2), A((3, 4)), A((3, 2))),
    S("index_put", "accumulate", lambda lib, a, v: lib.index_put(a, (lib.tensor([0, 2, 0]),), v, True), A((3, 2)),
      A((3, 2))),
    S("put", "flat", lambda lib, a, v: a.put(lib.tensor([5, 0]), v), A((2, 3)), A((2,))),
    S("put_", "accumulate", lambda lib, a, v: a.clone().put_(lib.tensor([1, 1, 4]), v, accumulate=True), A((2, 3)),
      A((3,))),
    S("index_reduce", "prod", lambda lib, a, s_: lib.index_reduce(a, 0, lib.tensor([0, 2]), s_, "prod"), A((3, 2)),
      A((2, 2))),
    S("angle", "zero_grad", lambda lib, a: lib.angle(a), A((2, 3), lo=0.3, hi=2.0, kind="signed")))


# ---- complex numbers and the FFT primitives: real pairs in, real pairs out (view_as_real), so that the
# float64 gradcheck sees every complex gradient as its real and imaginary parts
def _cx(lib, a):
    return lib.view_as_complex(a)


add(S("view_as_complex", "exp", lambda lib, a: lib.view_as_real(_cx(lib, a).exp()), A((3, 2))),
    S("view_as_real", "scaled", lambda lib, a, b: lib.view_as_real(lib.complex(a, b)) * 2, A((3,)), A((3,))),
    S("complex", "square", lambda lib, a, b: lib.view_as_real(lib.complex(a, b) ** 2), A((2, 3)), A((3,))),
    S("polar", "parts", lambda lib, a, b: lib.view_as_real(lib.polar(a, b)), A((3,), lo=0.5, hi=2.0), A((3,))),
    S("conj_physical", "times_sin", lambda lib, a: lib.view_as_real(lib.conj_physical(_cx(lib, a)) * _cx(lib, a).sin()),
      A((3, 2))),
    S("_neg_view", "times_exp", lambda lib, a: lib._neg_view(a) * a.exp(), A((3,))),
    S("conj", "times_sin", lambda lib, a: lib.view_as_real(lib.conj(_cx(lib, a)) * _cx(lib, a).sin()), A((3, 2))),
    S("angle", "complex", lambda lib, a: lib.angle(_cx(lib, a)), A((4, 2), lo=0.3, hi=2.0, kind="signed")),
    S("sgn", "complex", lambda lib, a: lib.view_as_real(lib.sgn(_cx(lib, a))), A((4, 2), lo=0.3, hi=2.0, kind="signed")),
    S("abs", "complex", lambda lib, a: _cx(lib, a).abs(), A((4, 2), lo=0.3, hi=2.0, kind="signed")),
    S("_fft_c2c", "fft2", lambda lib, a: lib.view_as_real(lib.fft.fft2(_cx(lib, a), norm="ortho")), A((3, 4, 2))),
    S("_fft_r2c", "rfft", lambda lib, a: lib.view_as_real(lib.fft.rfft(a, norm="forward")), A((3, 6))),
    S("_fft_c2r", "irfft", lambda lib, a: lib.fft.irfft(_cx(lib, a), n=7), A((2, 4, 2))),
    # a loss that does not depend on the eigenvectors' phases (their gauge)
    S("linalg_eig", "gauge_free", lambda lib, a: (lambda r: lib.view_as_real(r[0]).sum(-1) + (r[1].abs() ** 2).sum(-2)
                                                  * lib.arange(3, dtype=a.dtype))(lib.linalg.eig(a)), A((3, 3))))


# ---- shape, indexing, scan, search and resampling ops ("Operators for neural networks")
# Ops with a grad: formula, and the differentiable composites (no formula of their own: gradients
# come from the ops they call), which are listed in DIFFERENTIABLE_COMPOSITES.
def _nnf(lib):
    if lib is ember:
        import ember.nn._functional_shape as m
        return m
    return lib.nn.functional


DIFFERENTIABLE_COMPOSITES = {
    "hstack", "vstack", "dstack", "column_stack", "tensor_split.indices", "tensor_split.sections",
    "tensor_split.tensor_indices_or_sections", "fliplr", "flipud", "rot90", "repeat", "tile",
    "repeat_interleave.self_Tensor", "repeat_interleave.self_int", "take", "take_along_dim", "diff", "diag",
    "diagflat", "trace", "meshgrid", "cartesian_prod", "combinations", "cross", "linalg_cross",
    "grid_sampler", "affine_grid_generator", "linear", "hsplit.int", "hsplit.array", "vsplit.int", "vsplit.array",
    "dsplit.int", "dsplit.array", "ravel", "broadcast_to", "sum_to_size", "nansum", "nanmean", "logaddexp",
    "logaddexp2", "xlogy.Scalar_Self", "xlogy.Scalar_Other", "mvlgamma", "special_ndtr",
    "special_xlog1py.self_scalar", "special_xlog1py.other_scalar", "special_zeta.self_scalar",
    "copysign.Scalar", "ldexp.Tensor", "deg2rad", "rad2deg", "addcmul", "addcdiv", "positive", "rsub.Tensor",
    "rsub.Scalar", "aminmax", "dist", "renorm", "msort", "nanmedian", "nanmedian.dim", "quantile", "quantile.scalar",
    "nanquantile", "nanquantile.scalar", "cov", "corrcoef", "trapezoid.x", "trapezoid.dx", "trapz.x", "trapz.dx",
    "cumulative_trapezoid.x", "cumulative_trapezoid.dx", "diagonal_scatter", "select_scatter", "slice_scatter",
    "index_put", "put", "put_", "index_reduce", "polar",
    "linalg_cholesky", "linalg_householder_product", "orgqr", "ormqr", "lu_unpack", "matrix_power", "logdet", "det",
    "pinverse", "cholesky_solve", "cholesky_inverse", "triangular_solve", "svd",
}
SR_IDX = C([[0, 1, 0, 2], [2, 2, 0, 1]])
add(S("hstack", "2d", lambda lib, a, b: lib.hstack([a, b]), A((2, 3)), A((2, 2))),
    S("hstack", "1d_0d", lambda lib, a, b: lib.hstack((a, b)), A((3,)), A(())),
    S("vstack", "mixed", lambda lib, a, b: lib.vstack([a, b]), A((3,)), A((2, 3))),
    S("dstack", "2d", lambda lib, a, b: lib.dstack([a, b]), A((2, 3)), A((2, 3, 2))),
    S("column_stack", "1d_2d", lambda lib, a, b: lib.column_stack([a, b]), A((3,)), A((3, 2))),
    S("tensor_split.sections", "dim1", lambda lib, a: lib.tensor_split(a, 2, 1), A((2, 5))),
    S("tensor_split.indices", "method", lambda lib, a: a.tensor_split([1, 3]), A((4, 2))),
    S("tensor_split.tensor_indices_or_sections", "tensor", lambda lib, a, i: lib.tensor_split(a, i), A((5,)),
      C([2, 3])),
    S("hsplit.int", "2d", lambda lib, a: lib.hsplit(a, 2), A((2, 4))),
    S("hsplit.array", "1d_method", lambda lib, a: a.hsplit([1, 3]), A((5,))),
    S("vsplit.int", "2d", lambda lib, a: lib.vsplit(a, 2), A((4, 2))),
    S("vsplit.array", "3d", lambda lib, a: lib.vsplit(a, [1]), A((3, 2, 2))),
    S("dsplit.int", "3d", lambda lib, a: a.dsplit(2), A((2, 1, 4))),
    S("dsplit.array", "3d", lambda lib, a: lib.dsplit(a, [2, 2]), A((1, 2, 3))),
    S("ravel", "noncontig", lambda lib, a: lib.ravel(a), A((3, 2), layout="t")),
    S("broadcast_to", "new_dims", lambda lib, a: lib.broadcast_to(a, (2, 3, 4)), A((3, 1))),
    S("sum_to_size", "keep_ones", lambda lib, a: a.sum_to_size(3, 1), A((2, 3, 4))),
    S("nansum", "dim_keepdim", lambda lib, a: lib.nansum(a, 1, True), A((3, 4))),
    S("nanmean", "all", lambda lib, a: a.nanmean(), A((2, 3))),
    S("logaddexp", "broadcast", lambda lib, a, b: lib.logaddexp(a, b), A((3, 1)), A((4,))),
    S("logaddexp2", "same", lambda lib, a, b: lib.logaddexp2(a, b), A((2, 3)), A((2, 3))),
    S("xlogy.Tensor", "positive", lambda lib, a, b: lib.xlogy(a, b), A((2, 3)), A((2, 3), lo=0.5)),
    S("xlogy.Scalar_Self", "scalar_x", lambda lib, b: lib.xlogy(2.0, b), A((3,), lo=0.5)),
    S("xlogy.Scalar_Other", "scalar_y", lambda lib, a: a.xlogy(3.0), A((2, 2))),
    S("fliplr", "basic", lambda lib, a: lib.fliplr(a), A((2, 3))),
    S("flipud", "noncontig", lambda lib, a: a.flipud(), A((3, 2), layout="t")),
    S("rot90", "k1", lambda lib, a: lib.rot90(a), A((2, 3))),
    S("rot90", "k3_dims", lambda lib, a: lib.rot90(a, 3, [2, 0]), A((2, 3, 2))),
    S("repeat", "expand_dims", lambda lib, a: a.repeat(2, 1, 2), A((2, 3))),
    S("tile", "short_dims", lambda lib, a: lib.tile(a, (2,)), A((2, 3))),
    S("repeat_interleave.self_int", "dim0", lambda lib, a: lib.repeat_interleave(a, 2, 0), A((2, 3))),
    S("repeat_interleave.self_Tensor", "flat", lambda lib, a, r: a.repeat_interleave(r), A((2, 2)), C([1, 0, 2, 1])),
    S("index_copy", "dim0", lambda lib, a, i, s: lib.index_copy(a, 0, i, s), A((4, 3)), C([3, 0]), A((2, 3))),
    S("index_copy", "inplace_dim1", lambda lib, a, i, s: a.clone().index_copy_(1, i, s), A((2, 4)), C([1]), A((2, 1))),
    S("index_fill.int_Scalar", "dim1", lambda lib, a, i: lib.index_fill(a, 1, i, 1.5), A((3, 4)), C([0, -1])),
    S("index_fill.int_Scalar", "inplace", lambda lib, a, i: a.clone().index_fill_(0, i, -2.0), A((3, 2)), C([1])),
    S("index_fill.int_Tensor", "value_grad", lambda lib, a, i, v: a.index_fill(1, i, v), A((3, 4)), C([2, 0, 2]),
      A(())),
    # (torch's gradient for value fails on a negative index: "INDICES element is out of DATA bounds")
    S("index_fill.int_Tensor", "value_grad_negative_index", lambda lib, a, i, v: a.index_fill(1, i, v), A((3, 4)),
      C([2, -2, -1]), A(()), torch_grad=False),
    S("index_fill.int_Tensor", "inplace", lambda lib, a, i, v: a.clone().index_fill_(0, i, v), A((3, 2)), C([1]),
      A(())),
    S("masked_scatter", "basic", lambda lib, a, m, s: lib.masked_scatter(a, m, s), A((2, 3)),
      C([[True, False, True], [False, True, True]], "bool"), A((6,))),
    S("masked_scatter", "broadcast_self", lambda lib, a, m, s: a.masked_scatter(m, s), A((3,)),
      C([[True, False, True], [False, True, False]], "bool"), A((2, 3))),
    S("masked_scatter", "inplace", lambda lib, a, m, s: a.clone().masked_scatter_(m, s), A((2, 3)),
      C([True, False, True], "bool"), A((5,))),
    S("take", "negative", lambda lib, a, i: lib.take(a, i), A((3, 4)), C([[0, -1], [5, 5]])),
    S("take_along_dim", "dim1", lambda lib, a, i: lib.take_along_dim(a, i, 1), A((3, 4)), C([[0, 3], [1, 1], [2, 0]])),
    S("take_along_dim", "flat", lambda lib, a, i: a.take_along_dim(i), A((2, 3)), C([5, 0, 0])))
for _red in ("sum", "prod", "mean", "amax", "amin"):
    _dom = dict(kind="signed", lo=0.3, hi=2.0)
    add(S("scatter_reduce.two", _red, lambda lib, a, s, r=_red: lib.scatter_reduce(a, 0, SR_IDX.make(lib, SR_IDX.values), s, r),
          A((3, 4), **_dom), A((2, 4), **_dom)),
        S("scatter_reduce.two", _red + "_exclude_self", lambda lib, a, s, r=_red: a.scatter_reduce(
            0, SR_IDX.make(lib, SR_IDX.values), s, r, include_self=False), A((3, 4), **_dom), A((2, 4), **_dom)),
        S("scatter_reduce.two", _red + "_inplace", lambda lib, a, s, r=_red: a.clone().scatter_reduce_(
            1, lib.tensor([[2, 2], [0, 1], [1, 1]]), s, r), A((3, 3), **_dom), A((3, 2), **_dom)))
add(S("scatter_reduce.two", "prod_zero", lambda lib, a, s: lib.scatter_reduce(a, 0, lib.tensor([0, 0, 1, 2]), s, "prod"),
      A((3,), values=[1.5, 0.0, -2.0]), A((4,), values=[0.0, 2.0, 3.0, -0.5])),
    # two zeros in a group: first order only (the second derivative is refused, as in torch)
    S("scatter_reduce.two", "prod_two_zeros", lambda lib, a, s: lib.scatter_reduce(a, 0, lib.tensor([0, 0, 1, 0]), s,
                                                                                   "prod"),
      A((2,), values=[0.0, 1.5]), A((4,), values=[0.0, 2.0, 3.0, -0.5]), gg=False),
    S("cummax", "dim1", lambda lib, a: lib.cummax(a, 1)[0], A((3, 4))),
    S("cummax", "0d", lambda lib, a: lib.cummax(a, 0)[0], A(())),
    S("cummin", "dim0_method", lambda lib, a: a.cummin(0).values, A((4, 3), layout="t")),
    S("logcumsumexp", "dim1", lambda lib, a: lib.logcumsumexp(a, 1), A((3, 4))),
    S("logcumsumexp", "dim0_wide_range", lambda lib, a: a.logcumsumexp(0), A((4,), values=[-30.0, 2.0, -1.0, 5.0])),
    S("diff", "n2_append", lambda lib, a, b: lib.diff(a, 2, append=b), A((2, 4)), A((2, 1))),
    S("diag_embed", "offset", lambda lib, a: lib.diag_embed(a, 1, 0, 2), A((2, 3))),
    S("diag", "vector", lambda lib, a: lib.diag(a, -1), A((3,))),
    S("diag", "matrix", lambda lib, a: a.diag(1), A((3, 4))),
    S("diagflat", "matrix", lambda lib, a: lib.diagflat(a), A((2, 2))),
    S("trace", "rect", lambda lib, a: lib.trace(a), A((3, 4))),
    S("meshgrid", "xy", lambda lib, a, b: lib.meshgrid(a, b, indexing="xy"), A((3,)), A((2,))),
    S("cartesian_prod", "two", lambda lib, a, b: lib.cartesian_prod(a, b), A((3,)), A((2,))),
    S("combinations", "with_replacement", lambda lib, a: lib.combinations(a, 2, True), A((3,))),
    S("cdist", "p2", lambda lib, a, b: lib.cdist(a, b), A((3, 2)), A((4, 2)), torch_gg=False),
    S("cdist", "p1", lambda lib, a, b: lib.cdist(a, b, 1.0), A((3, 2)), A((2, 2)), torch_gg=False),
    S("cdist", "p3_batched", lambda lib, a, b: lib.cdist(a, b, 3.0), A((2, 2, 2)), A((1, 3, 2)), torch_gg=False),
    S("cdist", "pinf", lambda lib, a, b: lib.cdist(a, b, float("inf")), A((2, 3)), A((3, 3)), torch_gg=False),
    S("cdist", "mm_path", lambda lib, a, b: lib.cdist(a, b, compute_mode="use_mm_for_euclid_dist"), A((3, 2)),
      A((2, 2))),
    S("cdist", "p0_5_const_x2", lambda lib, a, b: lib.cdist(a, b, 0.5), A((2, 3)), A((2, 3), grad=False),
      torch_gg=False),
    S("cdist", "p0", lambda lib, a, b: lib.cdist(a, b, 0.0), A((2, 3)), A((3, 3)), torch_gg=False),
    S("cdist", "mm_path_large", lambda lib, a, b: lib.cdist(a, b), A((26, 2)), A((2, 2))),
    S("cross", "dim1", lambda lib, a, b: lib.cross(a, b, dim=1), A((2, 3)), A((2, 3))),
    S("linalg_cross", "broadcast", lambda lib, a, b: lib.linalg.cross(a, b), A((1, 3)), A((2, 3))),
    S("upsample", "bilinear", lambda lib, a: _nnf(lib).interpolate(a, size=(3, 5), mode="bilinear"), A((1, 2, 2, 3))),
    S("upsample", "bilinear_align_scale", lambda lib, a: _nnf(lib).interpolate(
        a, scale_factor=1.5, mode="bilinear", align_corners=True), A((1, 1, 2, 3))),
    S("upsample", "bicubic", lambda lib, a: _nnf(lib).interpolate(a, size=(4, 3), mode="bicubic"), A((1, 1, 3, 3))),
    S("upsample", "nearest", lambda lib, a: _nnf(lib).interpolate(a, scale_factor=1.7, mode="nearest"), A((1, 2, 3))),
    # torch's nearest1d backward maps output i to input i >> 1 when out == 2 * in, its forward to
    # floor(i / 2.3): its gradient is not its forward's (torch.autograd.gradcheck fails there)
    S("upsample", "nearest_twice_size", lambda lib, a: _nnf(lib).interpolate(a, scale_factor=2.3, mode="nearest"),
      A((1, 2, 3)), torch_grad=False),
    S("upsample", "nearest_exact_2d", lambda lib, a: _nnf(lib).interpolate(a, size=(3, 2), mode="nearest-exact"),
      A((1, 1, 2, 3))),
    S("upsample", "linear_down", lambda lib, a: _nnf(lib).interpolate(a, size=3, mode="linear"), A((2, 1, 5))),
    S("upsample", "trilinear", lambda lib, a: _nnf(lib).interpolate(a, size=(2, 3, 2), mode="trilinear"),
      A((1, 1, 2, 2, 3))),
    S("upsample", "area", lambda lib, a: _nnf(lib).interpolate(a, size=(2, 2), mode="area"), A((1, 2, 3, 4))),
    S("upsample", "area_1d_up", lambda lib, a: _nnf(lib).interpolate(a, size=5, mode="area"), A((1, 2, 3))),
    S("upsample", "bilinear_antialias_down", lambda lib, a: _nnf(lib).interpolate(a, size=(2, 3), mode="bilinear",
                                                                               antialias=True), A((1, 2, 5, 4))),
    S("upsample", "bicubic_antialias_align", lambda lib, a: _nnf(lib).interpolate(
        a, scale_factor=(0.6, 1.5), mode="bicubic", align_corners=True, antialias=True), A((1, 1, 5, 3))),
    S("upsample", "nearest_exact_3d", lambda lib, a: _nnf(lib).interpolate(a, size=(3, 1, 2), mode="nearest-exact"),
      A((1, 1, 2, 2, 3))))


def _interp_grad(lib, x, g, **kw):
    """interpolate's gradient with respect to its input, as a differentiable function of g."""
    x = x if x.requires_grad else x.detach().requires_grad_()
    y = _nnf(lib).interpolate(x, **kw)
    return lib.autograd.grad(y, x, g, create_graph=True)[0]


add(S("upsample_backward", "bilinear", lambda lib, x, g: _interp_grad(lib, x, g, size=(3, 5), mode="bilinear"),
      A((1, 2, 2, 3)), A((1, 2, 3, 5))),
    S("upsample_backward", "bicubic_align", lambda lib, x, g: _interp_grad(
        lib, x, g, scale_factor=1.5, mode="bicubic", align_corners=True), A((1, 1, 3, 2)), A((1, 1, 4, 3))),
    S("upsample_backward", "nearest_1d", lambda lib, x, g: _interp_grad(lib, x, g, size=5, mode="nearest"),
      A((2, 1, 3)), A((2, 1, 5))),
    S("upsample_backward", "trilinear_down", lambda lib, x, g: _interp_grad(lib, x, g, size=(1, 2, 2),
                                                                             mode="trilinear"),
      A((1, 1, 2, 3, 3)), A((1, 1, 1, 2, 2))),
    # (torch's area gradient is adaptive_avg_pool2d_backward(g, x): it gives x a zero gradient, not None)
    S("upsample_backward", "bicubic_antialias", lambda lib, x, g: _interp_grad(lib, x, g, size=(2, 2), mode="bicubic",
                                                                                antialias=True),
      A((1, 1, 5, 4)), A((1, 1, 2, 2))),
    S("upsample_backward", "area", lambda lib, x, g: _interp_grad(lib, x, g, size=(2, 3), mode="area"),
      A((1, 1, 3, 4), grad=False), A((1, 1, 2, 3))))
for _mode in ("bilinear", "nearest"):
    for _pad in ("zeros", "border", "reflection"):
        add(S("grid_sampler", f"{_mode}_{_pad}", lambda lib, a, g, m=_mode, p=_pad: _nnf(lib).grid_sample(
            a, g, mode=m, padding_mode=p, align_corners=p == "border"), A((1, 2, 3, 4)), A((1, 2, 3, 2), -1.3, 1.3),
            torch_gg=False))
for _mode in (0, 1):  # the fused 2-D kernel's own node (torch: GridSampler2DBackward0); its double backward
    for _pad in (0, 1, 2):  # goes through the composite (torch raises there)
        add(S("grid_sampler_2d_fused", f"mode{_mode}_pad{_pad}", lambda lib, a, g, m=_mode, p=_pad: (
            ember._C._ops._grid_sampler_2d_fused(a, g, m, p, p == 2) if lib is ember else
            lib.grid_sampler_2d(a, g, m, p, p == 2)), A((1, 2, 3, 4)), A((1, 2, 3, 2), -1.3, 1.3), torch_gg=False))
for _pad in ("zeros", "border", "reflection"):
    add(S("grid_sampler", f"bicubic_{_pad}", lambda lib, a, g, p=_pad: _nnf(lib).grid_sample(
        a, g, mode="bicubic", padding_mode=p, align_corners=p == "reflection"), A((1, 2, 3, 4)),
        A((1, 2, 2, 2), -1.3, 1.3), torch_gg=False))
add(S("grid_sampler", "3d_bilinear", lambda lib, a, g: _nnf(lib).grid_sample(a, g, align_corners=False),
      A((1, 1, 2, 3, 2)), A((1, 2, 1, 2, 3), -1.1, 1.1), torch_gg=False),
    S("affine_grid_generator", "2d", lambda lib, t: _nnf(lib).affine_grid(t, [2, 1, 3, 2], align_corners=False),
      A((2, 2, 3))),
    S("affine_grid_generator", "3d_align", lambda lib, t: _nnf(lib).affine_grid(t, [1, 1, 2, 2, 3], align_corners=True),
      A((1, 3, 4))),
    # normal's gradients are zero by convention (torch's too), not d(mean + std * noise): no gradcheck
    S("normal.Tensor_Tensor", "zero_grads", lambda lib, m, s: seeded(lib, lambda: lib.normal(m, s)), A((2, 3)),
      A((2, 3), 0.5, 1.5), values=False, gc=False),
    S("normal.Tensor_float", "zero_grad", lambda lib, m: seeded(lib, lambda: lib.normal(m, 2.0)), A((2, 3)),
      values=False, gc=False),
    S("normal.float_Tensor", "zero_grad", lambda lib, s: seeded(lib, lambda: lib.normal(1.0, s)), A((3,), 0.5, 1.5),
      values=False, gc=False),
    S("poisson", "zero_grad", lambda lib, r: seeded(lib, lambda: lib.poisson(r)), A((2, 3), 0.5, 4.0), values=False),
    # (torch: "derivative for aten::bernoulli is not implemented"; Ember's is zero, as for bernoulli(p))
    S("bernoulli.p", "zero_grad", lambda lib, x: seeded(lib, lambda: lib.bernoulli(x, 0.3)), A((2, 3)), values=False,
      torch_grad=False),
    S("bernoulli_.float", "zero_grad", lambda lib, x: seeded(lib, lambda: x.clone().bernoulli_(0.4)), A((2, 3)),
      values=False),
    S("random_.to", "zero_grad", lambda lib, x: seeded(lib, lambda: x.clone().random_(5)), A((2, 3)), values=False))


def _view_inplace_then_write(lib, a):
    """x.t_()-style ops on a view of a clone, then a write through that view (its base's history)."""
    d = a * 1
    v = d[:, 1:3]
    v.transpose_(0, 1)
    v.mul_(2)
    return d


# ---- in-place view ops (x.unsqueeze_(0), x.t_(), ...): self takes the view's geometry
add(S("unsqueeze", "inplace", lambda lib, a: a.clone().unsqueeze_(1) * 2, A((2, 3))),
    S("unsqueeze", "inplace_on_view", lambda lib, a: (lambda w: w.unsqueeze_(0) * 3)((a * 1)[1]), A((3, 4))),
    S("squeeze", "inplace", lambda lib, a: a.clone().squeeze_(0), A((1, 3, 1))),
    S("t", "inplace", lambda lib, a: a.clone().t_(), A((2, 3))),
    S("transpose", "inplace_view_then_write", _view_inplace_then_write, A((3, 4))),
    S("transpose", "inplace_alias_swapaxes", lambda lib, a: a.clone().swapaxes_(0, 2), A((2, 1, 3))),
    S("as_strided", "inplace", lambda lib, a: a.clone().as_strided_((2, 2), (1, 2), 1), A((2, 3))))


add(S("channel_shuffle", "3groups", lambda lib, x: lib.channel_shuffle(x, 3), A((2, 6, 2))))
# the private backward ops, differentiable for double backward
add(S("relu_backward", "basic", lambda lib, g, y: ember._C._ops._relu_backward(g, y) if lib is ember else
      lib.ops.aten.threshold_backward(g, y, 0), A((2, 3)), A((2, 3), kind="signed", lo=0.1)),
    S("max_pool_with_indices_backward", "2d", lambda lib, g, x: (
        ember._C._ops._max_pool_with_indices_backward(g, x, ember._C._ops._max_pool_with_indices(
            x, [2, 2], [2, 2], [0, 0], [1, 1], False)[1]) if lib is ember else
        lib.ops.aten.max_pool2d_with_indices_backward(g, x, [2, 2], [2, 2], [0, 0], [1, 1], False,
                                                      lib.ops.aten.max_pool2d_with_indices(x, [2, 2], [2, 2])[1])),
      A((1, 2, 2, 2)), A((1, 2, 4, 5), kind="signed", lo=0.1)))

# nll_loss's one-pass row pick and its backward (differentiable in grad for double backward)
def _nll_pick(lib, x, t, w):
    if lib is ember:
        return ember._C._ops._nll_pick(x, t, w, -100)
    return lib.nn.functional.nll_loss(x, t, w, reduction="none")


def _nll_pick_backward(lib, g, x, t, w):
    if lib is ember:
        return ember._C._ops._nll_pick_backward(g, x, t, w, -100)
    return lib.ops.aten.nll_loss_backward(g, x, t, w, 0, -100, lib.tensor(1.0, dtype=x.dtype))


_NLL_T, _NLL_W = C([2, 0, -100, 1]), C([0.5, 2.0, 1.5], "float64")
add(S("nll_pick", "weighted", _nll_pick, A((4, 3)), _NLL_T, _NLL_W),
    S("nll_pick_backward", "weighted", _nll_pick_backward, A((4,)), A((4, 3)), _NLL_T, _NLL_W))

# addmm (linear's 2-D path): broadcast self, scaled terms, a transposed-layout mat2 as linear passes
add(S("addmm", "broadcast_bias", lambda lib, b, x, w: lib.addmm(b, x, w.t()), A((4,)), A((3, 5)), A((4, 5))),
    S("addmm", "scaled", lambda lib, s, x, w: lib.addmm(s, x, w, beta=0.5, alpha=2), A((3, 4)), A((3, 2)), A((2, 4))),
    S("addmm", "inplace", lambda lib, s, x, w: (s * 1).addmm_(x, w), A((2, 3)), A((2, 2)), A((2, 3))),
    S("linear", "3d_bias", lambda lib, x, w, b: lib.nn.functional.linear(x, w, b), A((2, 3, 4)), A((5, 4)), A((5,))))

# convolution: in float64 these run the im2col path (float32 takes oneDNN: test_conv.py)
add(S("convolution", "conv2d_stride_groups", lambda lib, x, w, b: lib.nn.functional.conv2d(x, w, b, 2, 1, 1, 2),
      A((2, 4, 5, 4)), A((2, 2, 3, 3)), A((2,))),
    S("convolution", "conv1d_dilated_unbatched", lambda lib, x, w: lib.nn.functional.conv1d(x, w, None, 1, 2, 2),
      A((2, 6)), A((3, 2, 2))),
    S("convolution", "conv_transpose2d_outpad", lambda lib, x, w, b: lib.nn.functional.conv_transpose2d(
        x, w, b, 2, 1, 1, 1, 1), A((1, 2, 3, 3)), A((2, 3, 2, 2)), A((3,))),
    S("convolution", "conv3d_small", lambda lib, x, w: lib.nn.functional.conv3d(x, w, None, 1, (1, 0, 0)),
      A((1, 2, 2, 3, 2)), A((2, 2, 2, 2, 1))))


def test_differentiable_composites_are_ops_without_formulas():
    with open(os.path.join(ROOT, "ops.yaml")) as f:
        entries = {e["func"].split("(")[0]: e for e in yaml.safe_load(f)}
    bad = sorted(n for n in DIFFERENTIABLE_COMPOSITES if n not in entries or entries[n].get("grad"))
    assert not bad, f"not ops.yaml ops without a grad: formula: {bad}"


def test_every_differentiable_op_has_samples():
    covered = {s.op for s in SAMPLES}
    missing = [op for op in differentiable_ops() if op not in covered]
    assert not missing, f"ops with a grad: formula but no sample in test_autograd_ops.py: {missing}"
    unknown = sorted(covered - set(differentiable_ops()) - DIFFERENTIABLE_COMPOSITES)
    assert not unknown, f"samples for ops that are not differentiable in ops.yaml: {unknown}"


def test_sample_ids_are_unique():
    ids = [s.id for s in SAMPLES]
    assert len(ids) == len(set(ids))


SKIPS = {}  # sample id -> reason (a forward bug, reported to the ops owner)


def _skip_known(sample):
    if sample.id in SKIPS:
        pytest.skip(SKIPS[sample.id])


@pytest.mark.parametrize("sample", [s for s in SAMPLES if s.gc], ids=lambda s: s.id)
def test_gradcheck(sample):
    _skip_known(sample)
    ins = sample.inputs(ember)
    assert gradcheck(lambda *a: sample.fn(ember, *a), tuple(ins))


@pytest.mark.parametrize("sample", [s for s in SAMPLES if s.gg], ids=lambda s: s.id)
def test_gradgradcheck(sample):
    _skip_known(sample)
    ins = sample.inputs(ember)
    ember.manual_seed(zlib.crc32(sample.id.encode()))
    assert gradgradcheck(lambda *a: sample.fn(ember, *a), tuple(ins))


def _grad_outputs(lib, outs, seed):
    rng = random.Random(seed)
    r = []
    for o in outs:
        vals = [rng.uniform(-1, 1) for _ in range(o.numel())]
        r.append(lib.tensor(vals, dtype=o.dtype).reshape(tuple(o.shape)))
    return r


def _to_list(t):
    if t is None:
        return None
    if getattr(t, "_is_zerotensor", lambda: False)():  # torch's efficient zeros have no storage
        import torch
        return torch.zeros(t.shape, dtype=t.dtype).tolist()
    return t.detach().tolist()


def _close(a, b, rtol=1e-7, atol=1e-9):
    if isinstance(a, list):
        return len(a) == len(b) and all(_close(x, y, rtol, atol) for x, y in zip(a, b))
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return a == b or abs(a - b) <= atol + rtol * abs(b)


def _both(sample, create_graph):
    """Run the sample in ember and torch; returns per library (outputs, inputs, grads)."""
    torch = pytest.importorskip("torch")
    r = {}
    for lib in (ember, torch):
        ins = sample.inputs(lib)
        outs = _as_tuple(sample.fn(lib, *ins))
        diff_outs = [o for o in outs if o.requires_grad]
        diff_ins = [i for i in ins if i.requires_grad]
        grads = None
        if diff_outs and (sample.torch_grad or lib is ember):
            gos = _grad_outputs(lib, diff_outs, zlib.crc32(sample.id.encode()))
            grads = lib.autograd.grad(diff_outs, diff_ins, gos, allow_unused=True, create_graph=create_graph)
        r[lib.__name__] = (outs, diff_ins, grads)
    return r["ember"], r["torch"]


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda s: s.id)
def test_matches_torch(sample):
    _skip_known(sample)
    (e_outs, _, e_grads), (t_outs, _, t_grads) = _both(sample, create_graph=False)
    assert len(e_outs) == len(t_outs)
    for e, t in zip(e_outs, t_outs):
        assert tuple(e.shape) == tuple(t.shape)
        assert str(e.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
        assert e.requires_grad == t.requires_grad, "outputs differ in requires_grad"
        if sample.values:
            assert _close(_to_list(e), _to_list(t)), f"forward values differ: {e} vs {t}"
    if not sample.torch_grad:
        return  # torch raises "derivative for ... is not implemented": nothing to compare with
    assert (e_grads is None) == (t_grads is None)
    if e_grads is None:
        return
    for k, (eg, tg) in enumerate(zip(e_grads, t_grads)):
        assert (eg is None) == (tg is None), f"input {k}: ember grad {eg}, torch grad {tg}"
        if eg is not None:
            assert str(eg.dtype).split(".")[-1] == str(tg.dtype).split(".")[-1]
            assert _close(_to_list(eg), _to_list(tg)), f"input {k}: gradients differ:\n{eg}\nvs\n{tg}"


NAME_DIFFERENCES = {  # sample id -> why its grad_fn name differs from torch's
    "_lstm_cell-both_outputs": "torch has no fused CPU LSTM cell op; the reference is its pointwise ops",
    "_lstm_cell-h_only": "torch has no fused CPU LSTM cell op; the reference is its pointwise ops",
    "_gru_cell-step": "torch has no fused CPU GRU cell op; the reference is its pointwise ops",
    "_lstm_seq-forward": "torch has no op for this layer recurrence; the reference is its step-by-step ops",
    "_lstm_seq-reverse_h_only": "torch has no op for this layer recurrence; the reference is its step-by-step ops",
    "div-operator_rdiv": "torch computes number / x as x.reciprocal() * number (MulBackward0)",
    "index_put_-setitem_mask": "ember's x[mask] = v writes through an alias view of x (CopySlices)",
    "max_pool_with_indices-2d": "one N-d max-pool op in ember; torch names a node per dimensionality",
    "adaptive_max_pool_with_indices-2d": "one N-d adaptive max-pool op in ember; torch names one per dimensionality",
    "avg_pool_nd-2d_ceil_no_pad_count": "one N-d average-pool op in ember; torch names a node per dimensionality",
    "avg_pool_nd-3d_divisor": "one N-d average-pool op in ember; torch names a node per dimensionality",
    "avg_pool_nd-1d": "ember pools 1-d directly; torch's avg_pool1d is a 2-d pool of an unsqueezed input",
    "adaptive_avg_pool_nd-2d": "one N-d adaptive average-pool op in ember; torch names one per dimensionality",
    "adaptive_avg_pool_nd-3d": "one N-d adaptive average-pool op in ember; torch names one per dimensionality",
    "adaptive_avg_pool_nd-global_unbatched": "ember's node is the pooling op (its kernel takes a mean); torch's a mean",
    "avg_pool_nd_backward-2d": "one N-d average-pool backward in ember; torch names one per dimensionality",
    "adaptive_avg_pool_nd_backward-2d": "one N-d adaptive average-pool backward in ember; torch names one per "
                                        "dimensionality",
    "adaptive_avg_pool_nd_backward-global": "ember's node is the pooling backward; torch's global pool is a mean "
                                            "(its backward a division)",
    "elu-celu": "ember computes celu with elu (EluBackward0; torch has a CeluBackward0 node)",
    "nll_pick-weighted": "ember's nll_loss is a composite around this row pick (torch: one NllLossBackward0)",
    "nll_pick_backward-weighted": "the row pick's backward (torch: NllLossBackwardBackward0)",
    "linalg_lu_factor_ex-tall_lu": "ember's linalg.lu unpacks lu_factor_ex's LU (torch: one LinalgLuBackward0 node)",
    "linalg_lu_factor_ex-wide_lu": "ember's linalg.lu unpacks lu_factor_ex's LU (torch: one LinalgLuBackward0 node)",
}


@pytest.mark.parametrize("sample", [s for s in SAMPLES if s.torch_grad], ids=lambda s: s.id)
def test_grad_fn_name_matches_torch(sample):
    _skip_known(sample)
    torch = pytest.importorskip("torch")
    if sample.id in NAME_DIFFERENCES:
        pytest.skip(NAME_DIFFERENCES[sample.id])
    if sample.op in DIFFERENTIABLE_COMPOSITES:
        pytest.skip("a composite has no node of its own: its grad_fn is that of the last op it calls")
    names = []
    for lib in (ember, torch):
        out = _as_tuple(sample.fn(lib, *sample.inputs(lib)))[0]
        names.append(type(out.grad_fn).__name__ if out.grad_fn is not None else None)
    assert names[0] == names[1]


@pytest.mark.parametrize("sample", [s for s in SAMPLES if s.gg], ids=lambda s: s.id)
def test_double_backward_matches_torch(sample):
    """Gradients of sum(grad_i * v_i) with respect to the inputs, as torch computes them (None
    and zeros are the same here: whether a linear op's gradient records a graph may differ)."""
    _skip_known(sample)
    torch = pytest.importorskip("torch")
    if not sample.torch_grad or not sample.torch_gg:
        pytest.skip("torch does not implement this derivative")
    if sample.op in TORCH_NO_DOUBLE_BACKWARD:
        pytest.skip("torch does not implement this second derivative")
    res = {}
    for lib, (outs, ins, grads) in zip((ember, torch), _both(sample, create_graph=True)):
        if grads is None:
            return
        pairs = [(g, i) for g, i in zip(grads, ins) if g is not None and g.requires_grad]
        if not pairs:
            res[lib.__name__] = None
            continue
        vs = _grad_outputs(lib, [g for g, _ in pairs], 7)
        total = sum((g * v).sum() for (g, _), v in zip(pairs, vs))
        gg = lib.autograd.grad(total, ins, allow_unused=True)
        res[lib.__name__] = [_to_list(g) if g is not None else _to_list(lib.zeros_like(i)) for g, i in zip(gg, ins)]
    e, t = res["ember"], res["torch"]
    if e is None or t is None:
        zero = lambda r: r is None or all(not any(_flat(x)) for x in r)  # noqa: E731
        assert zero(e) and zero(t), f"ember {e} vs torch {t}"
        return
    assert _close(e, t), f"second-order gradients differ:\n{e}\nvs\n{t}"
    del torch


def _flat(x):
    if isinstance(x, list):
        for y in x:
            yield from _flat(y)
    else:
        yield x


# ---------------------------------------------------------------- gradcheck itself
class _Doubler(ember.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return g * 2


class _WrongBackward(_Doubler):
    @staticmethod
    def backward(ctx, g):
        return g * 3


class _NanBackward(_Doubler):
    @staticmethod
    def backward(ctx, g):
        return g * float("nan")


class _Ignores(_Doubler):
    @staticmethod
    def backward(ctx, g):
        return ember.ones_like(g) * 2  # right at g = 1, but not multiplied by grad_output


class _Nondet(_Doubler):
    @staticmethod
    def backward(ctx, g):
        return g * (2 + ember.rand(g.shape, dtype=g.dtype) * 1e-9)


def _x(n=3):
    return ember.tensor([0.5, -1.0, 2.0][:n], dtype=ember.float64, requires_grad=True)


def test_gradcheck_passes_right_backward():
    assert gradcheck(_Doubler.apply, (_x(),)) is True
    assert gradgradcheck(_Doubler.apply, (_x(),)) is True


def test_gradcheck_fails_wrong_backward():
    from ember.autograd.gradcheck import GradcheckError
    assert issubclass(GradcheckError, RuntimeError)
    with pytest.raises(GradcheckError, match=r"Jacobian mismatch for output 0 with respect to input 0,\nnumerical:"):
        gradcheck(_WrongBackward.apply, (_x(),))
    with pytest.raises(RuntimeError):
        gradcheck(_WrongBackward.apply, (_x(),))
    assert gradcheck(_WrongBackward.apply, (_x(),), raise_exception=False) is False


def test_gradcheck_fails_nan_backward():
    with pytest.raises(RuntimeError, match="Jacobian mismatch"):
        gradcheck(_NanBackward.apply, (_x(),))


def test_gradcheck_fails_backward_not_scaled_by_grad_output():
    # a 1-element output: every Jacobian row is computed with grad_output 1, so only the
    # zero-grad_output check sees the bug
    with pytest.raises(RuntimeError, match="backward not multiplied by grad_output"):
        gradcheck(_Ignores.apply, (_x(1),))


def test_gradcheck_detects_nondeterminism():
    with pytest.raises(RuntimeError, match="Backward is not reentrant"):
        gradcheck(_Nondet.apply, (_x(),))
    assert gradcheck(_Nondet.apply, (_x(),), nondet_tol=1e-6)


def test_gradgradcheck_fails_wrong_double_backward():
    class WrongDouble(ember.autograd.Function):  # x**2 whose backward is right but not differentiable right
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * 2 * x.detach()

    assert gradcheck(WrongDouble.apply, (_x(),))
    with pytest.raises(RuntimeError, match="Jacobian mismatch"):
        gradgradcheck(WrongDouble.apply, (_x(),))


def test_gradcheck_defaults_match_torch():
    import inspect
    torch = pytest.importorskip("torch")
    for ours, theirs in ((gradcheck, torch.autograd.gradcheck), (gradgradcheck, torch.autograd.gradgradcheck)):
        ps, pt = inspect.signature(ours).parameters, inspect.signature(theirs).parameters
        assert list(ps) == list(pt)
        for name in pt:
            assert ps[name].default == pt[name].default, name
            assert ps[name].kind == pt[name].kind, name


def test_gradcheck_tolerances_are_applied():
    # analytical 2 * (1 + 5e-4) vs numerical 2: inside rtol=1e-3, outside rtol=1e-4
    class Off(_Doubler):
        @staticmethod
        def backward(ctx, g):
            return g * 2.001

    assert gradcheck(Off.apply, (_x(),))
    assert not gradcheck(Off.apply, (_x(),), rtol=1e-4, raise_exception=False)
    assert gradcheck(Off.apply, (_x(),), rtol=0, atol=3e-3)


def test_gradcheck_input_checks():
    x = ember.tensor([1.0, 2.0], dtype=ember.float64)
    with pytest.raises(ValueError, match="at least one input tensor to require gradient"):
        gradcheck(lambda t: t * 2, (x,))
    with pytest.warns(UserWarning, match="is not a double precision"):
        gradcheck(lambda t: t * 2, (ember.tensor([1.0, 2.0], requires_grad=True),), eps=1e-2, atol=1e-2, rtol=1e-2)
    e = ember.tensor([1.0], dtype=ember.float64).expand(3).detach().requires_grad_()
    with pytest.raises(RuntimeError, match="has a dimension with stride 0"):
        gradcheck(lambda t: t * 2, (e,))


def test_gradcheck_non_tensor_args_and_multiple_outputs():
    def f(x, k, y):
        return x * k, x * y, (x > 0)
    assert gradcheck(f, (_x(), 3.0, _x().detach().requires_grad_()))


def test_gradcheck_does_not_disturb_input():
    x = _x()
    v = x._version
    gradcheck(lambda t: t.exp(), (x,))
    assert x.tolist() == [0.5, -1.0, 2.0] and x._version == v and x.grad is None


def test_lerp_scalar_weight_gradient_is_exact_in_float64():
    # the formula once computed 1 - weight on the wrapped number alone, which rounds in float32
    torch = pytest.importorskip("torch")
    a = ember.zeros(3, dtype=ember.float64, requires_grad=True)
    ember.lerp(a, ember.ones(3, dtype=ember.float64), 0.3).sum().backward()
    t = torch.zeros(3, dtype=torch.float64, requires_grad=True)
    torch.lerp(t, torch.ones(3, dtype=torch.float64), 0.3).sum().backward()
    assert a.grad.tolist() == t.grad.tolist()
