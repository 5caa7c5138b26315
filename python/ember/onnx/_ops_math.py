"""ONNX forms of the elementwise ops, activations, reductions and matrix products.

Elementwise inputs are cast to the traced result dtype first: ONNX ops want one element type,
while torch promotes (a float32 tensor times a Python 2 arrives as float32 * a float64 constant)."""
import math

import numpy as np

from ._builder import FLOATING, norm_dim, symbolic

_UNARY = {
    "abs": "Abs", "neg": "Neg", "exp": "Exp", "log": "Log", "sqrt": "Sqrt", "sin": "Sin", "cos": "Cos",
    "tan": "Tan", "asin": "Asin", "acos": "Acos", "atan": "Atan", "sinh": "Sinh", "cosh": "Cosh",
    "asinh": "Asinh", "acosh": "Acosh", "atanh": "Atanh", "sigmoid": "Sigmoid", "tanh": "Tanh", "erf": "Erf",
    "reciprocal": "Reciprocal", "floor": "Floor", "ceil": "Ceil", "round": "Round", "sign": "Sign",
    "sgn": "Sign", "relu": "Relu", "softsign": "Softsign", "selu": "Selu",
}


def _x(g, n, k=0):
    """Argument k cast to the node's result dtype."""
    return g.t(n.args[k], n.out.dtype)


def _s(g, n, x):
    """A scalar constant in the node's result dtype."""
    return g.scalar(x, n.out.dtype)


for _name, _op_type in _UNARY.items():
    symbolic(_name)(lambda g, n, _op_type=_op_type: g.op(_op_type, _x(g, n)))


@symbolic("isnan", "isinf")
def _float_predicate(g, n):
    return g.op("IsNaN" if n.op == "isnan" else "IsInf", g.t(n.args[0]))


@symbolic("isfinite")
def _isfinite(g, n):
    x = g.t(n.args[0])
    return g.op("Not", g.op("Or", g.op("IsNaN", x), g.op("IsInf", x)))


@symbolic("logical_not")
def _logical_not(g, n):
    return g.op("Not", g.t(n.args[0], "bool"))


@symbolic("rsqrt")
def _rsqrt(g, n):
    return g.op("Reciprocal", g.op("Sqrt", _x(g, n)))


@symbolic("square")
def _square(g, n):
    x = _x(g, n)
    return g.op("Mul", x, x)


@symbolic("exp2")
def _exp2(g, n):
    return g.op("Pow", _s(g, n, 2.0), _x(g, n))


@symbolic("expm1")
def _expm1(g, n):
    return g.op("Sub", g.op("Exp", _x(g, n)), _s(g, n, 1.0))


@symbolic("log2", "log10")
def _log_base(g, n):
    return g.op("Div", g.op("Log", _x(g, n)), _s(g, n, math.log(2.0 if n.op == "log2" else 10.0)))


@symbolic("log1p")
def _log1p(g, n):
    return g.op("Log", g.op("Add", _x(g, n), _s(g, n, 1.0)))


@symbolic("erfc")
def _erfc(g, n):
    return g.op("Sub", _s(g, n, 1.0), g.op("Erf", _x(g, n)))


def _trunc(g, x):
    return g.op("Mul", g.op("Sign", x), g.op("Floor", g.op("Abs", x)))


@symbolic("trunc")
def _trunc_op(g, n):
    x = _x(g, n)
    return _trunc(g, x) if n.out.dtype in FLOATING else g.op("Identity", x)


@symbolic("frac")
def _frac(g, n):
    x = _x(g, n)
    return g.op("Sub", x, _trunc(g, x))


# ---- activations
@symbolic("silu")
def _silu(g, n):
    x = _x(g, n)
    return g.op("Mul", x, g.op("Sigmoid", x))


@symbolic("mish")
def _mish(g, n):
    x = _x(g, n)
    return g.op("Mul", x, g.op("Tanh", g.op("Softplus", x)))


@symbolic("gelu")
def _gelu(g, n):
    x, approximate = _x(g, n), n.args[1]
    if g.opset >= 20:
        return g.op("Gelu", x, approximate=approximate)
    if approximate == "tanh":  # 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
        cube = g.op("Mul", g.op("Mul", x, x), x)
        inner = g.op("Mul", _s(g, n, math.sqrt(2.0 / math.pi)), g.op("Add", x, g.op("Mul", cube, _s(g, n, 0.044715))))
        gate = g.op("Tanh", inner)
    else:  # 0.5 x (1 + erf(x / sqrt 2))
        gate = g.op("Erf", g.op("Mul", x, _s(g, n, 1.0 / math.sqrt(2.0))))
    return g.op("Mul", g.op("Mul", x, _s(g, n, 0.5)), g.op("Add", gate, _s(g, n, 1.0)))


@symbolic("hardsigmoid")
def _hardsigmoid(g, n):
    return g.op("HardSigmoid", _x(g, n), alpha=1.0 / 6.0, beta=0.5)


@symbolic("hardswish")
def _hardswish(g, n):
    return g.op("HardSwish", _x(g, n))


@symbolic("log_sigmoid")
def _log_sigmoid(g, n):  # -softplus(-x): no overflow for large |x|
    return g.op("Neg", g.op("Softplus", g.op("Neg", _x(g, n))))


@symbolic("tanhshrink")
def _tanhshrink(g, n):
    x = _x(g, n)
    return g.op("Sub", x, g.op("Tanh", x))


def _clip(g, n, x, lo, hi):
    return g.op("Clip", x, None if lo is None else _s(g, n, lo), None if hi is None else _s(g, n, hi))


@symbolic("hardtanh")
def _hardtanh(g, n):
    return _clip(g, n, _x(g, n), n.args[1], n.args[2])


@symbolic("relu6")
def _relu6(g, n):
    return _clip(g, n, _x(g, n), 0.0, 6.0)


@symbolic("leaky_relu")
def _leaky_relu(g, n):
    return g.op("LeakyRelu", _x(g, n), alpha=float(n.args[1]))


@symbolic("elu")
def _elu(g, n):  # scale * (x if x > 0 else alpha * (exp(input_scale * x) - 1))
    x, alpha, scale, input_scale = _x(g, n), float(n.args[1]), float(n.args[2]), float(n.args[3])
    if input_scale == 1.0:
        y = g.op("Elu", x, alpha=alpha)
    else:
        negative = g.op("Elu", g.op("Mul", x, _s(g, n, input_scale)), alpha=alpha)
        y = g.op("Where", g.op("Greater", x, _s(g, n, 0.0)), x, negative)
    return y if scale == 1.0 else g.op("Mul", y, _s(g, n, scale))


@symbolic("celu")
def _celu(g, n):
    if n.out.dtype != "float32":  # ONNX Celu is float32-only
        x = g.t(n.args[0], "float32")
        return g.cast(g.op("Celu", x, alpha=float(n.args[1])), n.out.dtype)
    return g.op("Celu", _x(g, n), alpha=float(n.args[1]))


@symbolic("softplus")
def _softplus(g, n):  # log(1 + exp(beta x)) / beta, and x itself where beta x > threshold
    x, beta, threshold = _x(g, n), float(n.args[1]), float(n.args[2])
    bx = x if beta == 1.0 else g.op("Mul", x, _s(g, n, beta))
    soft = g.op("Softplus", bx)
    if beta != 1.0:
        soft = g.op("Div", soft, _s(g, n, beta))
    return g.op("Where", g.op("Greater", bx, _s(g, n, threshold)), x, soft)


@symbolic("softshrink", "hardshrink")
def _shrink(g, n):
    lambd = float(n.args[1])
    return g.op("Shrink", _x(g, n), lambd=lambd, bias=lambd if n.op == "softshrink" else 0.0)


@symbolic("threshold")
def _threshold(g, n):
    x = _x(g, n)
    return g.op("Where", g.op("Greater", x, _s(g, n, n.args[1])), x, _s(g, n, n.args[2]))


@symbolic("glu")
def _glu(g, n):
    x = _x(g, n)
    dim = norm_dim(n.args[1], n.args[0].rank)
    half = n.args[0].shape[dim] // 2
    a, b = g.op("Split", x, g.ints([half, half]), axis=dim, outputs=2)
    return g.op("Mul", a, g.op("Sigmoid", b))


@symbolic("prelu")
def _prelu(g, n):
    x, w = n.args
    slope = g.t(w, n.out.dtype)
    if w.rank == 1 and w.shape[0] != 1 and x.rank >= 2:  # torch applies the weight along dim 1
        slope = g.op("Reshape", slope, g.ints([w.shape[0]] + [1] * (x.rank - 2)))
    return g.op("PRelu", _x(g, n), slope)


# ---- binary
def _alpha(g, n, other):
    alpha = n.args[2]
    return other if alpha == 1 else g.op("Mul", other, _s(g, n, alpha))


@symbolic("add")
def _add(g, n):
    return g.op("Add", _x(g, n), _alpha(g, n, _x(g, n, 1)))


@symbolic("sub")
def _sub(g, n):
    return g.op("Sub", _x(g, n), _alpha(g, n, _x(g, n, 1)))


@symbolic("mul")
def _mul(g, n):
    if n.out.dtype == "bool":
        return g.op("And", _x(g, n), _x(g, n, 1))
    return g.op("Mul", _x(g, n), _x(g, n, 1))


def _floor_div(g, n, a, b):
    if n.out.dtype in FLOATING:
        return g.op("Floor", g.op("Div", a, b))
    # integer Div truncates: step down by one where the remainder is non-zero and the signs differ
    q = g.op("Div", a, b)
    zero = _s(g, n, 0)
    inexact = g.op("Not", g.op("Equal", g.op("Mod", a, b, fmod=1), zero))
    signs_differ = g.op("Xor", g.op("Less", a, zero), g.op("Less", b, zero))
    return g.op("Sub", q, g.cast(g.op("And", inexact, signs_differ), n.out.dtype))


@symbolic("div", "true_divide", "floor_divide")
def _div(g, n):
    a, b = _x(g, n), _x(g, n, 1)
    mode = "floor" if n.op == "floor_divide" else (n.args[2] if n.op == "div" else None)
    if mode == "floor":
        return _floor_div(g, n, a, b)
    q = g.op("Div", a, b)
    return _trunc(g, q) if mode == "trunc" and n.out.dtype in FLOATING else q


@symbolic("remainder")
def _remainder(g, n):  # the sign of the divisor, as Python's %
    a, b = _x(g, n), _x(g, n, 1)
    if n.out.dtype in FLOATING:
        return g.op("Sub", a, g.op("Mul", g.op("Floor", g.op("Div", a, b)), b))
    return g.op("Mod", a, b, fmod=0)


@symbolic("fmod")
def _fmod(g, n):
    return g.op("Mod", _x(g, n), _x(g, n, 1), fmod=1)


@symbolic("pow", "float_power")
def _pow(g, n):
    return g.op("Pow", _x(g, n), _x(g, n, 1))


@symbolic("hypot")
def _hypot(g, n):
    a, b = _x(g, n), _x(g, n, 1)
    return g.op("Sqrt", g.op("Add", g.op("Mul", a, a), g.op("Mul", b, b)))


@symbolic("maximum", "max.other", "fmax")
def _maximum(g, n):
    return g.op("Max", _x(g, n), _x(g, n, 1))


@symbolic("minimum", "min.other", "fmin")
def _minimum(g, n):
    return g.op("Min", _x(g, n), _x(g, n, 1))


_KIND = {"bool": 0, "complex64": 3, "complex128": 3}


def _kind(dtype):
    return _KIND.get(dtype, 2 if dtype in FLOATING else 1)


def common_dtype(g, vals):
    """torch's type promotion of tensor operands: dimensioned tensors decide, zero-dim ones and
    captured Python numbers (0-dim constants) only when of a higher kind (bool < int < float)."""
    def promote(a, b):
        if a == b:
            return a
        if {a, b} == {"float16", "bfloat16"}:
            return "float32"
        if "bfloat16" in (a, b):
            other = b if a == "bfloat16" else a
            return "bfloat16" if _kind(other) < 2 else other
        return str(np.promote_types(a, b))

    def is_number(v):
        return v.rank == 0 and v.scope.env.get(v.id, ("",))[0] == "const"

    levels = [[v for v in vals if v.rank > 0], [v for v in vals if v.rank == 0 and not is_number(v)],
              [v for v in vals if is_number(v)]]
    result = None
    for level, group in enumerate(levels):
        if not group:
            continue
        d = group[0].dtype
        for v in group[1:]:
            d = promote(d, v.dtype)
        if result is None:
            result = d
        elif _kind(d) > _kind(result):  # a number of a higher kind takes the default dtype of its kind
            result = d if level < 2 else {1: "int64", 2: "float32", 3: "complex64"}[_kind(d)]
    return result


_COMPARE = {"eq": "Equal", "lt": "Less", "le": "LessOrEqual", "gt": "Greater", "ge": "GreaterOrEqual"}


@symbolic("eq", "ne", "lt", "le", "gt", "ge")
def _compare(g, n):
    a, b = n.args[:2]
    dtype = common_dtype(g, [a, b])
    out = g.op(_COMPARE.get(n.op, "Equal"), g.t(a, dtype), g.t(b, dtype))
    return g.op("Not", out) if n.op == "ne" else out


@symbolic("logical_and", "logical_or", "logical_xor")
def _logical(g, n):
    op_type = {"logical_and": "And", "logical_or": "Or", "logical_xor": "Xor"}[n.op]
    return g.op(op_type, g.t(n.args[0], "bool"), g.t(n.args[1], "bool"))


@symbolic("bitwise_and", "bitwise_or", "bitwise_xor")
def _bitwise(g, n):
    word = n.op.split("_")[1]
    if n.out.dtype == "bool":
        return g.op(word.capitalize(), _x(g, n), _x(g, n, 1))
    if g.opset < 18:
        raise g.unsupported(since=18)
    return g.op("Bitwise" + word.capitalize(), _x(g, n), _x(g, n, 1))


@symbolic("bitwise_not")
def _bitwise_not(g, n):
    if n.out.dtype == "bool":
        return g.op("Not", _x(g, n))
    if g.opset < 18:
        raise g.unsupported(since=18)
    return g.op("BitwiseNot", _x(g, n))


@symbolic("clamp")
def _clamp(g, n):
    x, lo, hi = _x(g, n), n.args[1], n.args[2]
    if all(b is None or b.rank == 0 for b in (lo, hi)):  # Clip wants scalar bounds
        return g.op("Clip", x, g.t(lo, n.out.dtype), g.t(hi, n.out.dtype))
    if lo is not None:
        x = g.op("Max", x, g.t(lo, n.out.dtype))
    return x if hi is None else g.op("Min", x, g.t(hi, n.out.dtype))


@symbolic("clamp_min")
def _clamp_min(g, n):
    return g.op("Max", _x(g, n), _x(g, n, 1))


@symbolic("clamp_max")
def _clamp_max(g, n):
    return g.op("Min", _x(g, n), _x(g, n, 1))


@symbolic("lerp")
def _lerp(g, n):
    a, b, w = _x(g, n), _x(g, n, 1), _x(g, n, 2)
    return g.op("Add", a, g.op("Mul", w, g.op("Sub", b, a)))


def _operand(g, n, arg):
    return _s(g, n, arg) if isinstance(arg, (int, float, bool)) else g.t(arg, n.out.dtype)


@symbolic("where", "where.ScalarSelf", "where.ScalarOther", "where.Scalar")
def _where(g, n):
    cond, a, b = n.args
    return g.op("Where", g.t(cond, "bool"), _operand(g, n, a), _operand(g, n, b))


@symbolic("masked_fill")
def _masked_fill(g, n):
    x, mask, value = n.args
    return g.op("Where", g.t(mask, "bool"), _operand(g, n, value), _x(g, n))


# ---- reductions
def _dims(dim, rank):
    """A reduction's dims: None / [] mean every dim."""
    if dim is None or (isinstance(dim, list) and not dim):
        return None
    dims = dim if isinstance(dim, list) else [dim]
    return sorted({norm_dim(d, rank) for d in dims})


def _reduce(g, n, op_type, dim, keepdim, x=None):
    x = _x(g, n) if x is None else x
    if n.args[0].rank == 0:
        return g.op("Identity", x)
    return g.reduce(op_type, x, _dims(dim, n.args[0].rank), keepdim)


@symbolic("sum", "sum.dim_IntList", "mean", "prod", "prod.dim_int", "amax", "amin", "max", "min", "logsumexp")
def _reduction(g, n):
    op_type = {"sum": "ReduceSum", "mean": "ReduceMean", "prod": "ReduceProd", "amax": "ReduceMax",
               "amin": "ReduceMin", "max": "ReduceMax", "min": "ReduceMin",
               "logsumexp": "ReduceLogSumExp"}[n.op.split(".")[0]]
    whole = n.op in ("sum", "prod", "max", "min")
    if op_type in ("ReduceMax", "ReduceMin") and n.out.dtype == "bool":  # no bool Max/Min before opset 20
        x = g.t(n.args[0], "int32")
        y = _reduce(g, n, op_type, None if whole else n.args[1], False if whole else n.args[2], x)
        return g.cast(y, "bool")
    return _reduce(g, n, op_type, None if whole else n.args[1], False if whole else n.args[2])


@symbolic("all", "any")
def _all_any(g, n):
    x = g.t(n.args[0], "int32")
    y = _reduce(g, n, "ReduceMin" if n.op == "all" else "ReduceMax", n.args[1], n.args[2], x)
    return g.cast(y, "bool")


@symbolic("max.dim", "min.dim")
def _max_dim(g, n):
    x, dim, keepdim = n.args
    d = norm_dim(dim, x.rank)
    name = g.t(x)
    if x.rank == 0:
        return [g.op("Identity", name), g.const(0, "int64")]
    big = n.op == "max.dim"
    values = g.reduce("ReduceMax" if big else "ReduceMin", name, [d], keepdim)
    indices = g.op("ArgMax" if big else "ArgMin", name, axis=d, keepdims=int(keepdim))
    return [values, indices]


@symbolic("argmax", "argmin")
def _argmax(g, n):
    x, dim, keepdim = n.args
    name = g.t(x)
    if dim is None:  # over the flattened tensor
        flat = g.op("Reshape", name, g.ints([-1]))
        return g.op("ArgMax" if n.op == "argmax" else "ArgMin", flat, axis=0, keepdims=0)
    return g.op("ArgMax" if n.op == "argmax" else "ArgMin", name, axis=norm_dim(dim, x.rank),
                keepdims=int(keepdim))


def _count(g, x_name, dims):
    """How many elements a reduction over `dims` sees, from the runtime shape (dims may be dynamic)."""
    shape = g.shape_of(x_name)
    if dims is not None:
        shape = g.op("Gather", shape, g.ints(dims), axis=0)
    return g.op("ReduceProd", shape, keepdims=0)


def _variance(g, n, x, dim, correction, keepdim):
    dims = _dims(dim, n.args[0].rank)
    mean = g.reduce("ReduceMean", x, dims, True)
    diff = g.op("Sub", x, mean)
    total = g.reduce("ReduceSum", g.op("Mul", diff, diff), dims, keepdim)
    count = g.cast(_count(g, x, dims), n.out.dtype)
    if correction:
        count = g.op("Sub", count, _s(g, n, correction))
    return g.op("Div", total, count), mean


@symbolic("var", "std", "var.unbiased", "std.unbiased")
def _var(g, n):
    x = _x(g, n)
    if n.op.endswith(".unbiased"):
        dim, correction, keepdim = None, 1 if n.args[1] else 0, False
    else:
        _, dim, unbiased, keepdim, correction = n.args
        correction = correction if correction is not None else (0 if unbiased is False else 1)
    var, _ = _variance(g, n, x, dim, correction, keepdim)
    return g.op("Sqrt", var) if n.op.startswith("std") else var


@symbolic("norm")
def _norm(g, n):
    x, p, dim, keepdim = _x(g, n), n.args[1], n.args[2], n.args[3]
    dims = _dims(dim, n.args[0].rank)
    if p == 2:
        return g.reduce("ReduceL2", x, dims, keepdim)
    if p == 1:
        return g.reduce("ReduceL1", x, dims, keepdim)
    if p in (math.inf, -math.inf):
        return g.reduce("ReduceMax" if p > 0 else "ReduceMin", g.op("Abs", x), dims, keepdim)
    raise g.unsupported(f"p={p} (only 1, 2 and inf have an ONNX form here)")


@symbolic("cumsum")
def _cumsum(g, n):
    return g.op("CumSum", _x(g, n), g.const(norm_dim(n.args[1], n.args[0].rank), "int64"))


# ---- matrix products
@symbolic("matmul", "mm", "bmm", "mv", "dot", "inner")
def _matmul(g, n):
    if n.op == "inner" and n.args[1].rank > 1:
        raise g.unsupported("inner of a matrix operand")
    return g.op("MatMul", _x(g, n), _x(g, n, 1))


@symbolic("outer")
def _outer(g, n):
    return g.op("Mul", g.op("Unsqueeze", _x(g, n), g.ints([1])), _x(g, n, 1))


@symbolic("addmm", "addmv", "baddbmm")
def _addmm(g, n):
    c, a, b, beta, alpha = n.args
    if n.op == "addmm":
        return g.op("Gemm", _x(g, n, 1), _x(g, n, 2), _x(g, n), alpha=float(alpha), beta=float(beta))
    prod = g.op("MatMul", _x(g, n, 1), _x(g, n, 2))
    if alpha != 1:
        prod = g.op("Mul", prod, _s(g, n, alpha))
    if beta == 0:
        return prod
    bias = _x(g, n) if beta == 1 else g.op("Mul", _x(g, n), _s(g, n, beta))
    return g.op("Add", bias, prod)


@symbolic("einsum")
def _einsum(g, n):
    return g.op("Einsum", *[g.t(v, n.out.dtype) for v in n.args[1]], equation=n.args[0].replace(" ", ""))
