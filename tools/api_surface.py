"""How much of PyTorch's public API Ember has, namespace by namespace.

For each namespace below, torch's public names are the module's `__all__` where it defines one, else
the names in dir() that do not start with '_' (for Tensor: dir(torch.Tensor)). Names LEFT_OUT lists on purpose
(with a reason each: quantized and sparse tensors, TorchScript IR classes, ...) are counted apart. A dir() listing also
holds what the module merely imported (math, typing.Optional, numpy as np, torch, ...): names bound
to a module that is not the namespace's own submodule, or to a class or function defined outside
torch, are dropped, since they are no API. A
name counts as present when the matching Ember object has it (getattr chain from `ember`, importing
submodules as needed); a namespace Ember lacks counts all its names as missing.

    PYTHONPATH=python python3 tools/api_surface.py            # the coverage table (markdown)
    PYTHONPATH=python python3 tools/api_surface.py --missing nn.functional
    PYTHONPATH=python python3 tools/api_surface.py --left-out       # what is left out on purpose, and why

Without torch importable it says so and exits 0.
"""
import argparse
import importlib
import sys
import types
import typing

# (row label, path below the package root; '' is the root itself)
NAMESPACES = [
    ("torch", ""),
    ("Tensor", "Tensor"),
    ("nn", "nn"),
    ("nn.functional", "nn.functional"),
    ("nn.init", "nn.init"),
    ("nn.utils", "nn.utils"),
    ("optim", "optim"),
    ("optim.lr_scheduler", "optim.lr_scheduler"),
    ("linalg", "linalg"),
    ("fft", "fft"),
    ("special", "special"),
    ("masked", "masked"),
    ("distributions", "distributions"),
    ("func", "func"),
    ("autograd", "autograd"),
    ("cuda", "cuda"),
    ("amp", "amp"),
    ("testing", "testing"),
    ("utils.data", "utils.data"),
    ("utils.checkpoint", "utils.checkpoint"),
    ("nn.utils.parametrize", "nn.utils.parametrize"),
    ("backends", "backends"),
    ("onnx", "onnx"),
    ("jit", "jit"),
    ("distributed", "distributed"),
    ("distributed.algorithms.join", "distributed.algorithms.join"),
    ("distributed.device_mesh", "distributed.device_mesh"),
    ("distributed.optim", "distributed.optim"),
    ("nn.parallel", "nn.parallel"),
    ("utils.tensorboard", "utils.tensorboard"),
    ("random", "random"),
    ("functional", "functional"),
    ("return_types", "return_types"),
    ("compiler", "compiler"),
    ("hub", "hub"),
    ("fx", "fx"),
    ("overrides", "overrides"),
    ("utils.benchmark", "utils.benchmark"),
]

# Names Ember leaves out on purpose, with the reason: (namespace, regular expression on the name, reason).
# They are shown in their own column and don't count against coverage; a name Ember has is never "left out"
# (test_api_surface checks that), so an entry that becomes implemented must be deleted here.
_JIT_IR = ("AliasDb|AnyType|Argument|ArgumentSpec|AwaitType|Block|BoolType|BufferDict|CallStack|Capsule|ClassType|"
           "Code|CompilationUnit|CompleteArgumentSpec|ComplexType|ConcreteModuleType|ConcreteModuleTypeBuilder|"
           "DeepCopyMemoTable|DeserializationStorageContext|DeviceObjType|DictType|EnumType|ErrorReport|"
           "ExecutionPlan|FileCheck|FloatType|FunctionSchema|FutureType|Gradient|Graph|GraphExecutorState|"
           "IODescriptor|InferredType|IntType|InterfaceType|JITException|ListType|LiteScriptModule|ModuleDict|Node|"
           "NoneType|NumberType|OptionalType|ParameterDict|PyObjectType|PyTorchFileReader|PyTorchFileWriter|"
           "RRefType|ScriptClass|ScriptClassFunction|ScriptDict|ScriptDictIterator|ScriptDictKeyIterator|"
           "ScriptFunction|ScriptList|ScriptListIterator|ScriptMethod|ScriptModule|ScriptModuleSerializer|"
           "ScriptObject|ScriptObjectProperty|SerializationStorageContext|StaticModule|StreamObjType|StringType|"
           "SymBoolType|SymIntType|TensorType|TracingState|TupleType|Type|UnionType|Use|Value|import_ir_module|"
           "import_ir_module_from_buffer|merge_type_from_type_comment|parse_ir|parse_schema|parse_type_comment|"
           "unify_type_list")
LEFT_OUT = [
    ("masked", "MaskedTensor|masked_tensor|as_masked_tensor|is_masked_tensor",
     "MaskedTensor, a prototype subclass in PyTorch (the masked reductions are in)"),
    ("torch", _JIT_IR, "TorchScript's IR and compiler classes (ember.jit has its own IR: the graph issue's)"),
    ("torch", "AVG|SUM|AggregationType|BenchmarkConfig|BenchmarkExecutionStats|ThroughputBenchmark|LockingLogger|"
              "NoopLogger", "torch.monitor / ThroughputBenchmark internals of TorchScript's runtime"),
    ("torch", "DispatchKey|DispatchKeySet|ExcludeDispatchKeyGuard|DisableTorchFunction|DisableTorchFunctionSubclass|"
              "Tag|OperatorInfo|FatalError", "PyTorch's dispatcher and __torch_function__ internals"),
    ("torch", "SymInt|SymFloat|SymBool", "torch.compile's symbolic shapes (Ember has no tracing compiler)"),
    ("torch", r"qint8|qint32|quint8|quint4x2|quint2x4|qscheme|q_.*|quantize.*|quantized_.*|dequantize|int_repr|"
              r"fake_quantize.*|fbgemm_.*|choose_qparams_optimized|fused_moving_avg_obs_fake_quant|empty_quantized",
     "quantized tensors: not in Ember's scope"),
    ("torch", r"sparse_.*|.*indices_copy|values_copy|smm|spmm|hspmm|sspaddmm|saddmm|dsmm|hsmm|resize_as_sparse_",
     "the compressed sparse layouts (CSR/CSC/BSR/BSC) and the sparse kernels Ember lacks: Ember has sparse COO "
     "(sparse_coo_tensor, ember.sparse) for sparse gradients"),
    ("torch", r"cudnn_.*|miopen_.*|mkldnn_.*", "vendor-library entry points (cuDNN/MIOpen/oneDNN internals)"),
    ("torch", r"u?int[1-7]|bits.*|bit|float8_.*|float4_e2m1fn_x2",
     "sub-byte and float8 dtypes (storage-only in PyTorch too)"),
    ("torch", r"uint(16|32|64)|hash_tensor",
     "PyTorch's limited-support unsigned dtypes (most ops have no kernel for them in PyTorch either: uint32 x + x "
     "raises there) and hash_tensor, whose result is uint64"),
    ("Tensor", "hash_tensor", "its result is uint64, one of PyTorch's limited-support unsigned dtypes Ember lacks"),
    ("Tensor", "index", "functorch.dim's first-class dimensions (Tensor.index binds positions to Dim objects)"),
    ("torch", r"complex32|chalf", "complex32 (ComplexHalf), experimental in PyTorch: Ember's complex dtypes are "
                                  "complex64 and complex128"),
    ("Tensor", r"chalf", "complex32 (ComplexHalf), experimental in PyTorch: Ember's complex dtypes are complex64 and "
                         "complex128"),
    ("torch", "Stream|Event|AcceleratorError", "device streams/events: the CUDA issues'"),
    ("torch", "export|cpp", "namespaces outside this issue (torch.export: the graph issue's)"),
    ("Tensor", r"dequantize|int_repr|q_.*|qscheme", "quantized tensors: not in Ember's scope"),
    ("Tensor", r"ccol_indices|col_indices|crow_indices|row_indices|indices|values|coalesce|is_coalesced|dense_dim|"
               r"sparse_dim|sparse_mask|sparse_resize_.*|to_sparse.*|smm|sspaddmm|resize_as_sparse_|to_padded_tensor",
     "the compressed sparse layouts (CSR/CSC/BSR/BSC), in-place sparse resizing, nested tensors: Ember has "
     "sparse COO"),
    ("Tensor", "ipu|xpu|mtia|is_xla|to_mkldnn|record_stream", "other accelerators' device moves (CUDA: the CUDA issues')"),
    ("Tensor", "symeig|eig|lstsq|solve|reinforce|volatile", "removed from PyTorch (they only raise there)"),
    ("nn", "intrinsic|qat|quantizable|quantized",
     "quantized and quantization-aware-training modules (torch.nn.quantized, qat, ...): quantized tensors are not in "
     "Ember's scope"),
    ("nn.functional", "BroadcastingList[123]|boolean_dispatch|assert_int_or_pair",
     "TorchScript annotation and dispatch helpers"),
    ("nn.functional", "handle_torch_function|has_torch_function.*", "__torch_function__ machinery (no tensor subclass dispatch)"),
    ("nn.functional", "reproducibility_notes|sparse_support_notes|tf32_notes", "fragments of PyTorch's docstrings"),
    ("nn.functional", "scaled_mm|scaled_grouped_mm|grouped_mm|ScalingType|SwizzleType",
     "float8 / grouped GEMM APIs for GPUs (the CUDA issues')"),
    ("nn.utils", "convert_conv[23]d_weight_memory_format", "channels_last memory format: Ember has none"),
    ("testing", "FileCheck", "TorchScript IR checker (the graph issue's)"),
    ("distributed", "Reducer|Logger",
     "DDP's C++ internals (torch's Reducer takes precomputed bucket indices and per-bucket size limits, Logger "
     "records a Reducer's construction data): Ember's DDP has its own C++ reducer, which buckets by a size cap and "
     "has another constructor and methods"),
    ("utils.benchmark", "Fuzzer|FuzzedParameter|FuzzedTensor|FuzzedSparseTensor|ParameterAlias|CallgrindStats|"
                        "FunctionCount|FunctionCounts|CopyIfCallgrind",
     "the benchmark fuzzers and Valgrind/Callgrind instruction counting (Timer, Measurement and Compare are in)"),
    ("distributed.optim", "DistributedOptimizer",
     "optimizes parameters held by other processes through torch.distributed.rpc remote references (RRef): Ember "
     "has no RPC framework"),
    ("utils.data", "DFIterDataPipe|DataChunk|IterDataPipe|MapDataPipe|functional_datapipe|guaranteed_datapipes_determinism|"
                   "non_deterministic|runtime_validation|runtime_validation_disabled|argument_validation",
     "DataPipes: deprecated in PyTorch (moved out to torchdata)"),
]


def left_out(label, name):
    """The reason `name` of namespace `label` is deliberately left out, or None."""
    import re
    for ns, pattern, reason in LEFT_OUT:
        if ns == label and re.fullmatch(pattern, name):
            return reason
    return None

_MISSING = object()


def resolve(root, path):
    """The object at `root`.`path` (getattr first, then importing the submodule), or None."""
    obj, name = importlib.import_module(root), root
    for part in path.split(".") if path else []:
        name = f"{name}.{part}"
        nxt = getattr(obj, part, _MISSING)
        if nxt is _MISSING and isinstance(obj, types.ModuleType):
            try:
                nxt = importlib.import_module(name)
            except ImportError:
                return None
        if nxt is _MISSING:
            return None
        obj = nxt
    return obj


def _defined_outside(value, root, modname):
    """True for what module `modname` only imported: any module that is not its own submodule
    (math, numpy, torch itself, a sibling like torch.nn.grad), foreign classes/functions, typing."""
    if isinstance(value, types.ModuleType):
        return not value.__name__.startswith(modname + ".")
    if value is typing.TYPE_CHECKING:
        return True
    mod = getattr(value, "__module__", None)
    if not isinstance(mod, str) or not (isinstance(value, type) or callable(value)):
        return False  # plain data (constants, dicts of notes) belongs to the module that holds it
    return mod.split(".")[0] not in (root, "torch")


# Namespaces whose dir() grows with what else was imported (torch.distributed gains `run`, `elastic`, ...
# once a test imports them): their submodules are not counted, so the table does not depend on import order.
_NO_SUBMODULES = {"distributed"}


def torch_names(path):
    """Sorted public names of torch's namespace `path`."""
    obj = resolve("torch", path)
    if isinstance(obj, types.ModuleType) and hasattr(obj, "__all__"):
        return sorted(set(n for n in obj.__all__ if not n.startswith("_")))
    names = [n for n in dir(obj) if not n.startswith("_")]
    if isinstance(obj, types.ModuleType):
        names = [n for n in names
                 if not _defined_outside(getattr(obj, n, None), "torch", obj.__name__)]
        if path in _NO_SUBMODULES:
            names = [n for n in names if not isinstance(getattr(obj, n, None), types.ModuleType)]
    return sorted(set(names))


def ember_has(obj, name):
    if obj is None:
        return False
    try:
        return getattr(obj, name, _MISSING) is not _MISSING
    except Exception:  # noqa: BLE001 - an attribute that raises on access is not there for a program
        return False


def measure():
    """[(label, torch names counted, names Ember has, names Ember lacks, names left out)] in NAMESPACES order;
    the counted names exclude the ones LEFT_OUT lists (and Ember lacks)."""
    rows = []
    for label, path in NAMESPACES:
        names = torch_names(path)
        obj = resolve("ember", path)
        have = [n for n in names if ember_has(obj, n)]
        out = [n for n in names if n not in have and left_out(label, n)]
        lack = [n for n in names if n not in have and n not in out]
        rows.append((label, [n for n in names if n not in out], have, lack, out))
    return rows


def coverage(have, names):
    return 100.0 * len(have) / len(names) if names else 100.0


def table(rows):
    out = ["| namespace | torch names | left out | in Ember | coverage % |", "|---|---:|---:|---:|---:|"]
    tot_n = tot_h = tot_o = 0
    for label, names, have, _, left in rows:
        out.append(f"| {label} | {len(names) + len(left)} | {len(left)} | {len(have)} | {coverage(have, names):.1f} |")
        tot_n += len(names)
        tot_h += len(have)
        tot_o += len(left)
    out.append(f"| **total** | {tot_n + tot_o} | {tot_o} | {tot_h} | {100.0 * tot_h / tot_n:.1f} |")
    return "\n".join(out)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--missing", metavar="NS", help="list the names Ember lacks in namespace NS")
    ap.add_argument("--left-out", action="store_true", help="list the names left out on purpose, with reasons")
    args = ap.parse_args(argv)
    try:
        import torch  # noqa: F401
    except ImportError:
        print("api_surface: torch is not importable; nothing to compare against (skipped)")
        return 0
    if args.missing is not None and args.missing not in dict(NAMESPACES):
        ap.error(f"unknown namespace {args.missing!r}; one of: {', '.join(l for l, _ in NAMESPACES)}")
    import torch as _t
    rows = measure()
    if args.left_out:
        for label, _, _, _, left in rows:
            for n in left:
                print(f"{label}.{n}: {left_out(label, n)}")
    elif args.missing is not None:
        for label, names, have, lack, _ in rows:
            if label == args.missing:
                print(f"# {label}: {len(lack)} of {len(names)} torch names missing")
                print("\n".join(lack))
    else:
        print(f"Ember vs PyTorch {_t.__version__}\n")
        print(table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
