"""ember.onnx's op table, op by op: each case is recorded by a stand-in tracer (Recorder: the exact
args ops.yaml's schema takes) and traced by ember.jit.trace, exported, checked with onnx.checker
and run with onnxruntime against Ember's eager result."""
import math
import os
import re

import numpy as np
import pytest
import yaml

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

import ember  # noqa: E402
from ember import _C  # noqa: E402
from ember.onnx import _convert, errors  # noqa: E402
from test_onnx_export import export_bytes, run_ort  # noqa: E402

_OPS_YAML = os.path.join(os.path.dirname(__file__), "..", "..", "ops.yaml")


def _schemas():
    """ops.yaml name -> (parameter names, keyword-only names, eager callable)."""
    table = {}
    with open(_OPS_YAML) as fh:
        entries = yaml.safe_load(fh)
    for entry in entries:
        func = entry["func"]
        name = func.split("(")[0]
        body = func[len(name) + 1:func.rindex(") ->")]
        params, kwonly, keyword = [], set(), False
        for tok in (t.strip() for t in re.split(r",\s*(?![^()]*\))", body)):
            if tok == "*":
                keyword = True
                continue
            pname = tok.split("=")[0].split()[-1]
            params.append(pname)
            if keyword:
                kwonly.add(pname)
        py = entry.get("python", name.split(".")[0])
        fn = None
        for mod in (_C._ops, _C._nn):
            for candidate in (py, "_" + py):
                fn = fn or getattr(mod, candidate, None)
        table[name] = (params, kwonly, fn or getattr(ember.Tensor, py.lstrip("_"), None))
    return table


SCHEMAS = _schemas()


# ---------------------------------------------------------------- a stand-in tracer
class H(int):
    """A value handle of the recorder."""


class D(str):
    """A ScalarType argument."""


class Recorder:
    """Writes a graph in the JSON form of csrc/ember/jit/README.md while running each op eagerly,
    so the exporter can be tested on exactly the args a trace records (schema order, defaults filled)."""

    def __init__(self):
        self.values, self.inputs, self.params, self.constants, self.nodes = [], [], [], [], []
        self.tensors, self.eager, self.calls = {}, {}, []

    def _new(self, t):
        vid = H(len(self.values))
        self.values.append({"dtype": str(t.dtype).rsplit(".", 1)[-1], "shape": list(t.shape)})
        self.eager[vid] = t
        return vid

    def input(self, name, t):
        v = self._new(t)
        self.inputs.append({"value": v, "name": name, "dtype": self.values[v]["dtype"],
                            "shape": list(t.shape), "requires_grad": False})
        return v

    def params_of(self, module):
        return {name: self.param(name, t) for name, t in module.state_dict().items()}

    def param(self, name, t):
        v = self._new(t)
        self.params.append({"value": v, "name": name})
        self.tensors[name] = t
        return v

    def const(self, t):
        v = self._new(t)
        name = f"__constant_{len(self.constants)}"
        self.constants.append({"value": v, "name": name})
        self.tensors[name] = t
        return v

    def _arg(self, a):
        if a is None:
            return {"none": None}, None
        if isinstance(a, H):
            return {"value": int(a)}, self.eager[a]
        if isinstance(a, D):
            return {"dtype": str(a)}, getattr(ember, a)
        if isinstance(a, bool):
            return {"bool": a}, a
        if isinstance(a, int):
            return {"int": a}, a
        if isinstance(a, float):
            return {"float": a if math.isfinite(a) else str(a)}, a
        if isinstance(a, str):
            return {"str": a}, a
        if isinstance(a, dict):  # TensorOptions
            return {"options": a}, a
        if isinstance(a, list) and a and all(isinstance(x, H) for x in a):
            return {"values": [int(x) for x in a]}, [self.eager[x] for x in a]
        if isinstance(a, list):
            return {"ints": list(a)}, list(a)
        raise TypeError(a)

    def __call__(self, op, args, fn):
        """Record `op` with schema-ordered `args`; `fn` runs it eagerly on the same args."""
        encoded, eager = zip(*[self._arg(a) for a in args]) if args else ((), ())
        out = fn(*eager)
        outs = list(out) if isinstance(out, (tuple, list)) else [out]
        ids = [self._new(t) for t in outs]
        self.calls.append((fn, list(args), ids))
        self.nodes.append({"op": op, "variant": "functional", "args": list(encoded), "outputs": [int(i) for i in ids]})
        return ids if isinstance(out, (tuple, list)) else ids[0]

    def op(self, name, *args):
        """Record ops.yaml op `name` with args in schema order, run eagerly by its binding."""
        params, kwonly, fn = SCHEMAS[name]
        assert len(args) == len(params), (name, params)

        def call(*eager):
            pos = [a for p, a in zip(params, eager) if p not in kwonly]
            kw = {p: a for p, a in zip(params, eager) if p in kwonly}
            return fn(*pos, **kw)
        return self(name, list(args), call)

    def replay(self, out):
        """A function of the recorded inputs that makes the same calls again (for ember.jit.trace)."""
        def run(*inputs):
            env = dict(self.eager)
            env.update({H(i["value"]): t for i, t in zip(self.inputs, inputs)})

            def resolve(a):
                if isinstance(a, H):
                    return env[a]
                if isinstance(a, D):
                    return getattr(ember, a)
                if isinstance(a, list) and a and all(isinstance(x, H) for x in a):
                    return [env[x] for x in a]
                return a
            for fn, args, ids in self.calls:
                result = fn(*[resolve(a) for a in args])
                env.update(zip(ids, result if isinstance(result, (tuple, list)) else [result]))
            return tuple(env[o] for o in out) if isinstance(out, (tuple, list)) else env[out]
        return run

    def graph(self, out, static_shapes=False):
        spec = {"tuple": [{"value": int(v)} for v in out]} if isinstance(out, (tuple, list)) else {"value": int(out)}
        return {"format": "ember.jit.graph", "version": 1, "num_values": len(self.values), "values": self.values,
                "inputs": self.inputs, "params": self.params, "constants": self.constants, "nodes": self.nodes,
                "output": spec, "static_shapes": static_shapes,
                "static_shapes_reason": "x.size(0) at model.py:3" if static_shapes else ""}


def to_onnx(rec, out, **kw):
    kw.setdefault("opset", ember.onnx.DEFAULT_OPSET)
    for key in ("input_names", "output_names", "dynamic_axes"):
        kw.setdefault(key, None)
    kw.setdefault("export_params", True)
    kw.setdefault("keep_initializers_as_inputs", False)
    model = _convert.convert(rec.graph(out, kw.pop("static_shapes", False)), rec.tensors,
                             producer_version=ember.__version__, **kw)
    _convert.check(model)
    return model


def assert_matches(model, rec, out, inputs):
    got = run_ort(model, *[rec.eager[i] for i in inputs])
    outs = out if isinstance(out, (tuple, list)) else [out]
    assert len(got) == len(outs)
    for g_, o in zip(got, outs):
        expected = rec.eager[o]
        assert list(g_.shape) == list(expected.shape)
        np.testing.assert_allclose(g_, expected.float().numpy() if expected.dtype == ember.bfloat16 else
                                   expected.numpy(), rtol=1e-4, atol=1e-5)


# ---------------------------------------------------------------- op by op
def _x(r, *shape, low=None, high=None, name="x", dtype=None):
    if dtype is not None and dtype != ember.float32:
        t = ember.randint(-5, 6, shape).to(dtype)
    elif low is None:
        t = ember.randn(*shape)
    else:
        t = ember.rand(*shape) * (high - low) + low
    return r.input(name, t)


_UNARY_DOMAIN = {"log": (0.1, 3), "sqrt": (0.1, 3), "rsqrt": (0.1, 3), "log2": (0.1, 3), "log10": (0.1, 3),
                 "log1p": (-0.5, 3), "asin": (-0.9, 0.9), "acos": (-0.9, 0.9), "atanh": (-0.9, 0.9),
                 "acosh": (1.1, 3), "reciprocal": (0.5, 2)}
_UNARY = ["abs", "neg", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "rsqrt", "sin", "cos", "tan",
          "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh", "sigmoid", "tanh", "erf", "erfc",
          "reciprocal", "floor", "ceil", "round", "trunc", "frac", "sign", "sgn", "square", "relu", "silu", "mish",
          "selu", "relu6", "hardsigmoid", "hardswish", "log_sigmoid", "softsign", "tanhshrink", "isnan", "isinf",
          "isfinite", "logical_not"]


def _unary_case(name):
    def case(r):
        lo, hi = _UNARY_DOMAIN.get(name, (-3, 3))
        x = _x(r, 3, 5, low=lo, high=hi)
        return r.op(name, x), [x]
    return case


def _binary(name, *extra, dtype=None, positive_rhs=False):
    def case(r):
        x = _x(r, 3, 4, dtype=dtype)
        if positive_rhs and dtype is not None:  # integer divisors of both signs, never zero
            y = r.input("y", ember.tensor([3, -2, 5, -4], dtype=dtype))
        else:
            y = _x(r, 4, name="y", dtype=dtype, **({"low": 0.5, "high": 2.0} if positive_rhs else {}))
        return r.op(name, x, y, *extra), [x, y]
    return case


def _conv_case(r):
    x = _x(r, 2, 4, 9, 9)
    w = r.param("w", ember.randn(6, 2, 3, 3))
    b = r.param("b", ember.randn(6))
    return r.op("conv2d", x, w, b, [2, 1], [1, 2], [1, 2], 2), [x]


def _conv_same_case(r):
    x = _x(r, 1, 3, 8, 7)
    w = r.param("w", ember.randn(4, 3, 4, 3))
    return r.op("conv2d.padding", x, w, None, [1, 1], "same", [1, 2], 1), [x]


def _conv1d_unbatched_case(r):
    x = _x(r, 3, 10)
    w = r.param("w", ember.randn(5, 3, 3))
    return r.op("conv1d", x, w, None, [1], [1], [1], 1), [x]


def _conv_transpose_case(r):
    x = _x(r, 2, 4, 5, 5)
    w = r.param("w", ember.randn(4, 3, 3, 3))
    b = r.param("b", ember.randn(3))
    return r.op("conv_transpose2d", x, w, b, [2, 2], [1, 1], [1, 0], 1, [1, 1]), [x]


def _gemm_like(name):
    def case(r):
        if name == "addmm":
            c, a, b = _x(r, 4, name="c"), _x(r, 3, 5, name="a"), _x(r, 5, 4, name="b")
            return r.op(name, c, a, b, 0.5, 2.0), [c, a, b]
        c, a, b = _x(r, 2, 3, 4, name="c"), _x(r, 2, 3, 5, name="a"), _x(r, 2, 5, 4, name="b")
        return r.op(name, c, a, b, 0.5, 2.0), [c, a, b]
    return case


def _pad_case(mode):
    def case(r):
        x = _x(r, 1, 2, 4, 5)
        return r.op("pad", x, [1, 2, 2, 1], mode, 0.5 if mode == "constant" else None), [x]
    return case


def _loss(name, *extra, target="float", shape=(4, 5)):
    def case(r):
        x = _x(r, *shape)
        if target == "class":
            t = r.input("t", ember.tensor([0, 4, 2, 4]))
        elif target == "prob":
            t = r.input("t", ember.softmax(ember.randn(*shape), -1))
        else:
            t = _x(r, *shape, name="t")
        if name == "nll_loss":
            x = r.op("log_softmax", x, 1, None)
        return r.op(name, x, t, *extra), [r.inputs[0]["value"], t]
    return case


_OPTIONS = {"dtype": None, "device": "cpu", "requires_grad": False}


def _one(build, *shape, **kw):
    """A case on one random input x of `shape`: build(r, x) records the ops and returns the output."""
    def case(r):
        x = _x(r, *shape, **kw)
        return build(r, x), [x]
    return case


def _two(build, shape_a, shape_b):
    """A case on inputs a and b: build(r, a, b) records the ops."""
    def case(r):
        a, b = _x(r, *shape_a, name="a"), _x(r, *shape_b, name="b")
        return build(r, a, b), [a, b]
    return case


OP_CASES = {f"unary-{n}": _unary_case(n) for n in _UNARY}
OP_CASES.update({
    "add-alpha": _binary("add", 2.5), "sub-alpha": _binary("sub", -1.5), "mul": _binary("mul"),
    "div": _binary("div", None, positive_rhs=True), "div-floor": _binary("div", "floor", positive_rhs=True),
    "div-trunc": _binary("div", "trunc", positive_rhs=True),
    "int-div-floor": _binary("div", "floor", dtype=ember.int64, positive_rhs=True),
    "int-div-trunc": _binary("div", "trunc", dtype=ember.int64, positive_rhs=True),
    "int-true-div": _binary("div", None, dtype=ember.int64, positive_rhs=True),
    "remainder": _binary("remainder", positive_rhs=True),
    "int-remainder": _binary("remainder", dtype=ember.int64, positive_rhs=True),
    "fmod": _binary("fmod", positive_rhs=True), "pow": _binary("pow", positive_rhs=True),
    "maximum": _binary("maximum"), "minimum": _binary("minimum"), "hypot": _binary("hypot"),
    **{f"cmp-{n}": _binary(n) for n in ("eq", "ne", "lt", "le", "gt", "ge")},
    "logical_and": _binary("logical_and"), "logical_xor": _binary("logical_xor"),
    "bitwise_and-int": _binary("bitwise_and", dtype=ember.int64),
    "int-plus-float": lambda r: (lambda x, y: (r.op("add", x, y, 1), [x, y]))(
        _x(r, 3, 4, dtype=ember.int64), _x(r, 4, name="y")),
    "lt-int-vs-python-float": _one(lambda r, x: r.op("lt", x, r.const(ember.tensor(0.5, dtype=ember.float64))),
                                   3, 4, dtype=ember.int64),
    "clamp": _one(lambda r, x: r.op("clamp", x, r.const(ember.tensor(-0.5)), r.const(ember.tensor(0.7))), 3, 4),
    "clamp-tensor-bounds": _two(lambda r, a, b: r.op("clamp", a, b, None), (3, 4), (4,)),
    "where": lambda r: (lambda c, x, y: (r.op("where", r.op("gt", c, y), x, y), [c, x, y]))(
        _x(r, 3, 4, name="c"), _x(r, 3, 4), _x(r, 4, name="y")),
    "masked_fill": _one(lambda r, x: r.op("masked_fill", x, r.op("lt", x, r.const(ember.tensor(0.0))), -1.5), 3, 4),
    "lerp": _two(lambda r, a, b: r.op("lerp", a, b, r.op("sigmoid", a)), (3,), (3,)),
    # activations with parameters
    "gelu-tanh": _one(lambda r, x: r.op("gelu", x, "tanh"), 3, 4),
    "leaky_relu": _one(lambda r, x: r.op("leaky_relu", x, 0.2), 3, 4),
    "elu": _one(lambda r, x: r.op("elu", x, 0.7, 1.5, 2.0), 3, 4),
    "celu": _one(lambda r, x: r.op("celu", x, 0.7), 3, 4),
    "softplus": _one(lambda r, x: r.op("softplus", x, 2.0, 3.0), 3, 4),
    "softshrink": _one(lambda r, x: r.op("softshrink", x, 0.5), 3, 4),
    "hardshrink": _one(lambda r, x: r.op("hardshrink", x, 0.5), 3, 4),
    "hardtanh": _one(lambda r, x: r.op("hardtanh", x, -0.5, 0.8), 3, 4),
    "threshold": _one(lambda r, x: r.op("threshold", x, 0.1, -2.0), 3, 4),
    "glu": _one(lambda r, x: r.op("glu", x, 1), 3, 6),
    "prelu": _one(lambda r, x: r.op("prelu", x, r.param("w", ember.rand(3))), 2, 3, 4),
    # reductions
    "sum": _one(lambda r, x: r.op("sum", x, None), 3, 4),
    "sum-dims": _one(lambda r, x: r.op("sum.dim_IntList", x, [0, -1], True, None), 3, 4, 5),
    "sum-int": _one(lambda r, x: r.op("sum.dim_IntList", x, [1], False, None), 3, 4, dtype=ember.int32),
    "mean": _one(lambda r, x: r.op("mean", x, [1], False, None), 3, 4),
    "mean-all": _one(lambda r, x: r.op("mean", x, None, False, None), 3, 4),
    "prod-dim": _one(lambda r, x: r.op("prod.dim_int", x, 1, False, None), 3, 4),
    "amax": _one(lambda r, x: r.op("amax", x, [1], True), 3, 4),
    "amin": _one(lambda r, x: r.op("amin", x, [], False), 3, 4),
    "max-dim": _one(lambda r, x: r.op("max.dim", x, 1, False), 3, 4),
    "min-dim": _one(lambda r, x: r.op("min.dim", x, -1, True), 3, 4),
    "max-all": _one(lambda r, x: r.op("max", x), 3, 4),
    "argmax": _one(lambda r, x: r.op("argmax", x, 1, False), 3, 4),
    "argmin-flat": _one(lambda r, x: r.op("argmin", x, None, False), 3, 4),
    "var": _one(lambda r, x: r.op("var", x, [1], None, False, None), 3, 6),
    "std-correction0": _one(lambda r, x: r.op("std", x, [0, 1], None, True, 0), 3, 6),
    "logsumexp": _one(lambda r, x: r.op("logsumexp", x, [1], False), 3, 4),
    "all": _one(lambda r, x: r.op("all", r.op("gt", x, r.const(ember.tensor(-2.0))), [1], False), 3, 4),
    "any": _one(lambda r, x: r.op("any", r.op("gt", x, r.const(ember.tensor(1.0))), None, False), 3, 4),
    "norm": _one(lambda r, x: r.op("norm", x, 2, [1], False, None), 3, 4),
    "cumsum": _one(lambda r, x: r.op("cumsum", x, 1, None), 3, 4),
    # matrix products
    "matmul-broadcast": _two(lambda r, a, b: r.op("matmul", a, b), (2, 3, 4,), (4, 5,)),
    "matmul-vec": _two(lambda r, a, b: r.op("matmul", a, b), (3, 4,), (4,)),
    "mm": _two(lambda r, a, b: r.op("mm", a, b), (3, 4,), (4, 5,)),
    "bmm": _two(lambda r, a, b: r.op("bmm", a, b), (2, 3, 4,), (2, 4, 5,)),
    "addmm": _gemm_like("addmm"), "baddbmm": _gemm_like("baddbmm"),
    "outer": _two(lambda r, a, b: r.op("outer", a, b), (3,), (4,)),
    "einsum": _two(lambda r, a, b: r.op("einsum", "bij, bjk -> bik", [a, b]), (2, 3, 4,), (2, 4, 5,)),
    "linear-3d": _one(lambda r, x: r.op("linear", x, r.param("w", ember.randn(5, 4)), r.param("b", ember.randn(5))),
                      2, 3, 4),
    # shapes
    "view": _one(lambda r, x: r.op("view", x, [4, -1]), 2, 3, 4),
    "reshape-zero": _one(lambda r, x: r.op("reshape", x, [0, 5]), 0, 5),
    "view_as": _two(lambda r, a, b: r.op("view_as", a, b), (2, 6), (3, 4)),
    "flatten-middle": _one(lambda r, x: r.op("flatten", x, 1, 2), 2, 3, 4, 5),
    "flatten-all": _one(lambda r, x: r.op("flatten", x, 0, -1), 2, 3, 4),
    "unflatten": _one(lambda r, x: r.op("unflatten", x, 1, [2, -1]), 3, 8, 2),
    "permute": _one(lambda r, x: r.op("permute", x, [2, 0, 1]), 2, 3, 4),
    "transpose": _one(lambda r, x: r.op("transpose", x, 0, -1), 2, 3, 4),
    "t": _one(lambda r, x: r.op("t", x), 3, 4),
    "movedim": _one(lambda r, x: r.op("movedim", x, [0], [2]), 2, 3, 4),
    "expand": _one(lambda r, x: r.op("expand", x, [2, -1, 4]), 3, 1),
    "expand_as": _two(lambda r, a, b: r.op("expand_as", a, b), (3, 1), (2, 3, 4)),
    "squeeze-all": _one(lambda r, x: r.op("squeeze", x, None), 1, 3, 1, 4),
    "squeeze-dims": _one(lambda r, x: r.op("squeeze", x, [0, 1]), 1, 3, 1, 4),
    "unsqueeze": _one(lambda r, x: r.op("unsqueeze", x, -1), 3, 4),
    "narrow-negative": _one(lambda r, x: r.op("narrow", x, 1, -3, 3), 3, 6),
    "narrow": _one(lambda r, x: r.op("narrow", x, 0, 1, 2), 4, 6),
    "slice-step": _one(lambda r, x: r.op("slice", x, 1, 1, None, 2), 3, 7),
    "slice-negative": _one(lambda r, x: r.op("slice", x, 0, -3, -1, 1), 5, 2),
    "select": _one(lambda r, x: r.op("select", x, 1, -1), 3, 4),
    "split": _one(lambda r, x: r.op("split", x, 3, 1), 2, 8),
    "split-sizes": _one(lambda r, x: r.op("split.sizes", x, [1, 4], 0), 5, 2),
    "chunk": _one(lambda r, x: r.op("chunk", x, 3, -1), 2, 7),
    "unbind": _one(lambda r, x: r.op("unbind", x, 1), 2, 3, 2),
    "cat": _two(lambda r, a, b: r.op("cat", [a, b], 1), (2, 3,), (2, 5,)),
    "stack": _two(lambda r, a, b: r.op("stack", [a, b], -1), (2, 3,), (2, 3,)),
    "flip": _one(lambda r, x: r.op("flip", x, [0, -1]), 3, 4),
    "tril": _one(lambda r, x: r.op("tril", x, -1), 4, 4),
    "triu": _one(lambda r, x: r.op("triu", x, 1), 2, 4, 5),
    "repeat": _one(lambda r, x: r.op("repeat", x, [2, 1, 3]), 2, 3),
    "tile": _one(lambda r, x: r.op("tile", x, [2]), 2, 3),
    "roll": _one(lambda r, x: r.op("roll", x, [1, -2], [0, 1]), 3, 5),
    "roll-flat": _one(lambda r, x: r.op("roll", x, [4], []), 3, 5),
    "index_select": _one(lambda r, x: r.op("index_select", x, 1, r.const(ember.tensor([2, 0, 2]))), 3, 4),
    "gather": _one(lambda r, x: r.op("gather", x, 1, r.const(ember.tensor([[0, 1], [3, 3], [2, 0]])), False), 3, 4),
    "index": _one(lambda r, x: r.op("index", x, [r.const(ember.tensor([2, 0]))]), 3, 4),
    "pad-constant": _pad_case("constant"), "pad-reflect": _pad_case("reflect"), "pad-replicate": _pad_case("replicate"),
    "to_dtype": _one(lambda r, x: r.op("to_dtype", x, D("int32"), False), 3, 4, low=-5, high=5),
    "full_like": _one(lambda r, x: r.op("add", r("full_like", [x, 2.5, _OPTIONS, None],
                                                 lambda t, v, o, m: ember.full_like(t, v)), x, 1), 3, 4),
    "contiguous": _one(lambda r, x: r.op("contiguous", r.op("t", x)), 3, 4),
    "clone": _one(lambda r, x: r.op("clone", x, None), 3, 4),
    # nn
    "conv2d-stride-dilation-groups": _conv_case, "conv2d-same": _conv_same_case,
    "conv1d-unbatched": _conv1d_unbatched_case, "conv_transpose2d": _conv_transpose_case,
    "max_pool2d-ceil": _one(lambda r, x: r.op("max_pool2d", x, [3, 3], [2, 2], [1, 1], [1, 1], True), 1, 2, 8, 8),
    "max_pool1d": _one(lambda r, x: r.op("max_pool1d", x, [2], [], [0], [1], False), 2, 3, 8),
    "avg_pool2d": _one(lambda r, x: r.op("avg_pool_nd", x, [3, 3], [2, 2], [1, 1], False, True, None), 1, 2, 7, 7),
    "avg_pool2d-exclude-pad": _one(lambda r, x: r.op("avg_pool_nd", x, [3, 3], [2, 2], [1, 1], False, False, None),
                                   1, 2, 7, 7),
    "adaptive_avg_pool2d": _one(lambda r, x: r.op("adaptive_avg_pool_nd", x, [2, 3]), 1, 2, 6, 9),
    "group_norm": _one(lambda r, x: r.op("group_norm", x, 2, r.param("w", ember.rand(4)), r.param("b", ember.randn(4)),
                                         1e-5, True), 2, 4, 3, 3),
    "instance_norm": _one(lambda r, x: r.op("instance_norm", x, None, None, None, None, True, 0.1, 1e-5, True),
                          2, 3, 4, 4),
    "layer_norm-2d-no-affine": _one(lambda r, x: r.op("layer_norm", x, [3, 4], None, None, 1e-5, True), 2, 3, 4),
    "rms_norm": _one(lambda r, x: r.op("rms_norm", x, [4], r.param("w", ember.rand(4)), None), 2, 3, 4),
    "local_response_norm": _one(lambda r, x: r.op("local_response_norm", x, 3, 1e-2, 0.75, 2.0), 1, 5, 3, 3),
    "normalize": _one(lambda r, x: r.op("normalize", x, 2.0, 1, 1e-12), 3, 4),
    "softmax": _one(lambda r, x: r.op("softmax", x, 0, None), 3, 4),
    "log_softmax": _one(lambda r, x: r.op("log_softmax", x, -1, None), 3, 4),
    "dropout-eval": _one(lambda r, x: r.op("dropout", x, 0.5, False), 3, 4),
    "one_hot": lambda r: (lambda x: (r.op("one_hot", x, 6), [x]))(r.input("x", ember.tensor([[0, 5], [3, 1]]))),
    "mse_loss": _loss("mse_loss", 1), "l1_loss-sum": _loss("l1_loss", 2),
    "smooth_l1_loss": _loss("smooth_l1_loss", 1, 0.5),
    "huber_loss-none": _loss("huber_loss", 0, 0.7),
    "bce_with_logits": _loss("binary_cross_entropy_with_logits", None, None, 1, target="prob"),
    "nll_loss": _loss("nll_loss", None, 1, -100, target="class"),
    "cross_entropy": _loss("cross_entropy_loss", None, 1, -100, 0.0, target="class"),
    "cross_entropy-probs": _loss("cross_entropy_loss", None, 2, -100, 0.0, target="prob"),
})


@pytest.mark.parametrize("case", sorted(OP_CASES))
def test_op_matches_onnxruntime(case):
    ember.manual_seed(5)
    rec = Recorder()
    out, inputs = OP_CASES[case](rec)
    for opset in range(ember.onnx.MIN_OPSET, ember.onnx.MAX_OPSET + 1):  # opset-dependent forms (Reduce*, Gelu)
        try:
            proto = to_onnx(rec, out, opset=opset)
        except errors.UnsupportedOperatorError as e:  # only where ONNX added the op later, and saying so
            assert e.supported_version is not None and opset < e.supported_version, e
            continue
        assert_matches(proto, rec, out, inputs)
    # the same calls traced by ember.jit.trace (parameters are captured as constants there)
    traced = export_bytes(rec.replay(out), tuple(rec.eager[i["value"]] for i in rec.inputs))
    assert_matches(traced, rec, out, [i["value"] for i in rec.inputs])


def test_fusion_group_is_inlined():
    # what ember.compile's fuser makes: prim::FusionGroup whose subgraph inputs are the node's args
    ember.manual_seed(7)
    inner = Recorder()
    a, b = inner.input("a", ember.randn(3, 4)), inner.input("b", ember.randn(4))
    y = inner.op("mul", inner.op("add", a, b, 1), inner.op("sigmoid", a))
    sub = inner.graph(y)
    rec = Recorder()
    x = rec.input("x", inner.eager[a])
    bias = rec.param("bias", inner.eager[b])
    fused = rec._new(inner.eager[y])
    rec.nodes.append({"op": "prim::FusionGroup", "variant": "functional", "outputs": [int(fused)], "subgraph": sub,
                      "args": [{"value": int(x)}, {"value": int(bias)}]})
    out = rec.op("relu", fused)
    proto = to_onnx(rec, out)
    assert [i.name for i in proto.graph.initializer] == ["bias"]
    assert_matches(proto, rec, out, [x])
