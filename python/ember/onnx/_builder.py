"""What the op symbolics (the _ops_* modules) build with: the GraphBuilder that collects ONNX
nodes, constants and initializers, the node/value views of the traced graph, and the registry of
symbolics by op name. The conversion pass itself is _convert.py."""
import numpy as np
from onnx import TensorProto, helper, numpy_helper

from .errors import OnnxExporterError, UnsupportedOperatorError

# ember dtype name -> (ONNX element type, numpy dtype used to build constants)
DTYPES = {
    "float32": (TensorProto.FLOAT, np.float32), "float64": (TensorProto.DOUBLE, np.float64),
    "float16": (TensorProto.FLOAT16, np.float16), "bfloat16": (TensorProto.BFLOAT16, np.float32),
    "int64": (TensorProto.INT64, np.int64), "int32": (TensorProto.INT32, np.int32),
    "int16": (TensorProto.INT16, np.int16), "int8": (TensorProto.INT8, np.int8),
    "uint8": (TensorProto.UINT8, np.uint8), "uint16": (TensorProto.UINT16, np.uint16),
    "uint32": (TensorProto.UINT32, np.uint32), "uint64": (TensorProto.UINT64, np.uint64),
    "bool": (TensorProto.BOOL, np.bool_), "complex64": (TensorProto.COMPLEX64, np.complex64),
    "complex128": (TensorProto.COMPLEX128, np.complex128),
}
FLOATING = ("float32", "float64", "float16", "bfloat16")
INT64_MAX = np.iinfo(np.int64).max
INT64_MIN = np.iinfo(np.int64).min

# op name ("add", "sum.dim_IntList") -> symbolic(g, node); filled by the _ops_* modules.
SYMBOLICS = {}


def symbolic(*names):
    """Register the decorated function as the ONNX form of the named ops."""
    def register(fn):
        for name in names:
            SYMBOLICS[name] = fn
        return fn
    return register


def onnx_type(dtype):
    try:
        return DTYPES[dtype][0]
    except KeyError:
        raise OnnxExporterError(f"dtype {dtype} has no ONNX element type") from None


class Val:
    """A tensor argument of a node: its value id and what the trace saw of it."""
    __slots__ = ("id", "dtype", "shape", "scope")

    def __init__(self, vid, dtype, shape, scope):
        self.id, self.dtype, self.shape, self.scope = vid, dtype, list(shape), scope

    @property
    def rank(self):
        return len(self.shape)

    def __repr__(self):
        return f"%{self.id}({self.dtype}{self.shape})"


class Node:
    """A traced node as a symbolic sees it: decoded args in schema order and its output values."""
    __slots__ = ("op", "args", "outputs")

    def __init__(self, op, args, outputs):
        self.op, self.args, self.outputs = op, args, outputs

    @property
    def out(self):
        return self.outputs[0]


class GraphBuilder:
    """Collects ONNX nodes, constants and initializers; the API the symbolics emit through."""

    def __init__(self, opset, tensors):
        self.opset = opset
        self.nodes = []
        self.tensors = tensors          # name -> ember.Tensor (params and constants)
        self.used_params = {}           # param name -> ember.Tensor, in first-use order
        self._names = set()
        self._counts = {}
        self._const_cache = {}
        self._produced = {}             # ONNX name -> (node, output index) for outputs of this node
        self.op_name = ""               # the traced op being converted, for error messages
        self._poisoned = {}             # names of outputs with no ONNX form -> (op, why)
        self.last_step = {}             # poisoned per-step states -> (last step, steps, last state's name)

    # ---- names
    def reserve(self, name):
        if name in self._names:
            raise ValueError(f"the ONNX name {name!r} is used twice (input/output names must be unique)")
        self._names.add(name)
        return name

    def fresh(self, hint):
        k = self._counts.get(hint, 0)
        while f"{hint}_{k}" in self._names:
            k += 1
        self._counts[hint] = k + 1
        return self.reserve(f"{hint}_{k}")

    # ---- emitting
    def op(self, op_type, *inputs, outputs=1, **attrs):
        """Append an ONNX node; None inputs are omitted optional inputs. Returns its output name(s)."""
        inputs = list(inputs)
        while inputs and inputs[-1] is None:  # trailing optionals are left out, not named "" (ORT crashes on
            inputs.pop()                      # an empty trailing LayerNormalization bias)
        names = [self.fresh(op_type.lower()) for _ in range(outputs)]
        attrs = {k: v for k, v in attrs.items() if v is not None}
        node = helper.make_node(op_type, ["" if i is None else i for i in inputs], names,
                                name=self.fresh(f"node_{op_type}"), **attrs)
        self.nodes.append(node)
        for k, name in enumerate(names):
            self._produced[name] = (node, k)
        return names[0] if outputs == 1 else names

    def const(self, value, dtype):
        """A Constant holding `value` (number, nested list or ndarray) as ember dtype `dtype`."""
        array = np.asarray(value, dtype=DTYPES[dtype][1])
        key = (dtype, array.shape, array.tobytes())
        name = self._const_cache.get(key)
        if name is None:
            name = self.op("Constant", value=self._tensor_proto(array, dtype, "value"))
            self._const_cache[key] = name
        return name

    def ints(self, values):
        return self.const(np.asarray(values, np.int64).reshape(-1), "int64")

    def scalar(self, x, dtype):
        return self.const(np.asarray(x).reshape(()), dtype)

    @staticmethod
    def _tensor_proto(array, dtype, name):
        if dtype == "bfloat16":  # numpy has no bfloat16: make_tensor rounds the float32 values
            return helper.make_tensor(name, TensorProto.BFLOAT16, array.shape, array.reshape(-1).tolist())
        return numpy_helper.from_array(array, name)

    # ---- values
    def t(self, v, dtype=None):
        """The ONNX name of tensor argument `v`, cast to ember dtype `dtype` when given."""
        if v is None:
            return None
        entry = v.scope.env.get(v.id)
        if entry is None:
            raise OnnxExporterError(f"{self.op_name}: value %{v.id} is used before any node produces it")
        kind, x = entry
        if kind == "const":  # a captured tensor: folded into a Constant of the wanted dtype
            return self.const(_to_numpy(x), dtype or v.dtype)
        if kind == "param":
            self.used_params.setdefault(x, self.tensors[x])
        if x in self._poisoned:
            op, why = self._poisoned[x]
            raise UnsupportedOperatorError(f"aten::{op}", self.opset, None, f"{why} (used by {self.op_name})")
        name = x
        return name if dtype is None or dtype == v.dtype else self.cast(name, dtype)

    def poison(self, why):
        """A name for an op output that has no ONNX form: exporting fails only if something uses it."""
        name = self.fresh("unavailable")
        self._poisoned[name] = (self.op_name, why)
        return name

    def name_of(self, v):
        """The ONNX name bound to a node-made value (None for inputs, params, constants)."""
        entry = v.scope.env.get(v.id)
        return entry[1] if entry and entry[0] == "node" else None

    def cast(self, name, dtype):
        return self.op("Cast", name, to=onnx_type(dtype))

    def shape_of(self, name, start=None, end=None):
        return self.op("Shape", name, start=start, end=end)

    def reduce(self, op_type, x, axes, keepdims):
        """Reduce over `axes` (None: all). ReduceSum takes axes as an input from opset 13, the
        others from 18."""
        if axes is None:
            return self.op(op_type, x, keepdims=int(keepdims))
        if op_type == "ReduceSum" or self.opset >= 18:
            return self.op(op_type, x, self.ints(axes), keepdims=int(keepdims))
        return self.op(op_type, x, axes=list(axes), keepdims=int(keepdims))

    def unsupported(self, reason=None, since=None):
        return UnsupportedOperatorError(f"aten::{self.op_name}", self.opset, since, reason)


def _to_numpy(tensor):
    t = tensor.detach()
    if str(t.dtype) == "ember.bfloat16":
        t = t.float()
    return t.contiguous().numpy()


def norm_dim(d, rank):
    """A possibly negative dim as a non-negative one (rank 0 treated as rank 1, as torch does)."""
    r = max(rank, 1)
    if not -r <= d < r:
        raise OnnxExporterError(f"dim {d} is out of range for a tensor of rank {rank}")
    return d % r
