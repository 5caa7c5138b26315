"""Ember's code generator: reads ops.yaml, writes the C++ API, Tensor methods and Python bindings.

Usage: python gen.py ops.yaml OUT_DIR

Outputs (all headed `// @generated from ops.yaml`):
  ember/generated/ops.h            ember::op, ember::op_, ember::op_out declarations
  ember/generated/native.h         ember::native::* declarations (the bodies we write by hand)
  ember/generated/tensor_methods.h method declarations, included inside class Tensor
  ember/generated/kernels.h        the elementwise kernel enums and X-macro lists
  generated_ops.cpp                ember::* forwarding functions, Tensor methods, generated kernels' bodies
  generated_python.cpp             Python bindings: one vectorcall function per Python name
                                   (tables: ember._C._ops, Tensor methods, ember._C._nn, ember._C._special)

ops.yaml keys read here besides those its header lists: `python_module: nn` binds the function in
ember._C._nn (PyTorch's torch._C._nn: ops that live in torch.nn.functional only) instead of the
ember namespace, and `python_module: special` in ember._C._special (torch._C._special); `inplace_function: true` also binds op_ as a Python function (torch.selu_).
`autocast: lower_precision_fp | fp32 | promote | disabled` gives the op torch's CPU autocast cast policy
(`autocast_cuda:` the CUDA one where it differs: also `none` and `banned`)
(autocast_prelude below).
The default `int reduction=Mean` of the losses is 1 in C++ and, as in PyTorch's bindings, 0 in Python.
"""
import os
import re
import sys

import yaml

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import autograd as ag  # noqa: E402
import jit  # noqa: E402

HEADER = "// @generated from ops.yaml by tools/codegen/gen.py. Do not edit.\n"

# schema type -> (C++ parameter type, Python argument-parser accessor)
CPP_TYPES = {
    "Tensor": ("const Tensor&", "tensor"),
    "Tensor?": ("const Tensor&", "tensor_opt"),
    "Tensor[]": ("TensorList", "tensorlist"),
    "Scalar": ("const Scalar&", "scalar"),
    "Scalar?": ("std::optional<Scalar>", "scalar_opt"),
    "int": ("int64_t", "int64"),
    "int?": ("std::optional<int64_t>", "int64_opt"),
    "int[]": ("IntArrayRef", "intlist"),
    "int[]?": ("OptionalIntArrayRef", "intlist_opt"),
    "float": ("double", "float64"),
    "float?": ("std::optional<double>", "float64_opt"),
    "bool": ("bool", "boolean"),
    "bool?": ("std::optional<bool>", "boolean_opt"),
    "str": ("std::string_view", "string"),
    "str?": ("std::optional<std::string_view>", "string_opt"),
    "ScalarType": ("ScalarType", "dtype"),
    "ScalarType?": ("std::optional<ScalarType>", "dtype_opt"),
    "Generator?": ("Generator*", "generator"),
    "TensorOptions": ("const TensorOptions&", "options"),
    "MemoryFormat?": ("std::optional<MemoryFormat>", "memory_format_opt"),
}


CPP_RENAMES = {"std": "std_dev"}


class Param:
    def __init__(self, text, kwonly):
        m = re.match(r"^(\S+)\s+(\w+)(?:=(.*))?$", text.strip())
        assert m, text
        raw_type, self.name, self.default = m.group(1), m.group(2), m.group(3)
        # the Python keyword is the schema's name; C++ renames names that would shadow a namespace
        # (normal's `std` is `std_dev` in C++ and in its grad: formulas)
        self.py_name = self.name
        self.name = CPP_RENAMES.get(self.name, self.name)
        self.mutable = "!" in raw_type
        t = re.sub(r"\([a-z!]+\)", "", raw_type)  # drop alias annotations
        self.list_size = None
        lm = re.match(r"^int\[(\d+)\](\??)$", t)
        if lm:
            self.list_size, t = int(lm.group(1)), "int[]" + lm.group(2)
        assert t in CPP_TYPES, f"unknown type {t} in {text}"
        self.type = t
        self.kwonly = kwonly

    def cpp_type(self):
        return CPP_TYPES[self.type][0]

    def cpp_default(self):
        d = self.default
        if self.type == "TensorOptions":
            return "{}"
        if d is None:
            return None
        if d == "None":
            return {"Tensor?": "Tensor()", "Generator?": "nullptr"}.get(self.type, "std::nullopt")
        if d == "Mean":  # int reduction=Mean, as PyTorch's schemas: at::Reduction::Mean
            return "1"
        if d in ("True", "False"):
            return d.lower()
        if d.startswith("["):
            return "{" + d[1:-1] + "}"  # int[] dims=[0,1] -> {0,1}
        if d.startswith('"'):
            return d
        return d


def split_params(text):
    """Split a schema's parameter list on the commas outside brackets (int[] dims=[0,1])."""
    out, depth, cur = [], 0, ""
    for ch in text:
        if ch == "," and depth == 0:
            out.append(cur)
            cur = ""
            continue
        depth += ch in "[(" and 1 or 0
        depth -= ch in "])" and 1 or 0
        cur += ch
    out.append(cur)
    return out


class Op:
    def __init__(self, entry):
        self.entry = entry
        m = re.match(r"^([\w.]+)\((.*)\)\s*->\s*(.+)$", entry["func"])
        assert m, entry["func"]
        full, params, ret = m.groups()
        self.name, _, self.overload = full.partition(".")
        self.params = []
        kwonly = False
        for p in [p.strip() for p in split_params(params) if p.strip()]:
            if p == "*":
                kwonly = True
                continue
            self.params.append(Param(p, kwonly))
        self.ret = ret.strip()
        self.variants = entry.get("variants", ["function", "method"])
        self.inplace = entry.get("inplace", False)
        self.out = entry.get("out", False)
        self.kernel = entry.get("kernel")
        # body: ops/conv.cpp -- where the hand-written ember::native body lives (tools/codegen/locate_bodies.py)
        self.body = entry.get("body")
        self.python_name = entry.get("python", self.name)
        # python_module: nn binds the function in ember._C._nn (PyTorch's torch._C._nn) instead of ember
        self.python_module = entry.get("python_module")
        # inplace_function: true also binds op_ as a Python function (torch.selu_), not only as a method
        self.inplace_function = entry.get("inplace_function", False)
        self.aliases = entry.get("aliases", [])
        # doc: the one-line description that heads help() (and the .pyi stub's docstring)
        self.doc = entry.get("doc")
        self.is_self_inplace = self.name.endswith("_")  # copy_, fill_, normal_, ...
        self.is_view = "(a)" in self.ret

    # --- C++ signatures ---
    def cpp_params(self, with_defaults, skip_self=False, prefix=()):
        ps = self.params[1:] if skip_self else self.params
        # cpp_defaults: false — no C++ default arguments, for an overload whose defaults would make
        # a short call ambiguous with its main op's (ember::arange(5), ember::norm(t))
        with_defaults = with_defaults and self.entry.get("cpp_defaults", True)
        out = list(prefix)
        # C++ allows defaults only on a trailing run of parameters
        last_required = max([i for i, p in enumerate(ps) if p.cpp_default() is None], default=-1)
        for i, p in enumerate(ps):
            s = f"{p.cpp_type()} {p.name}"
            if with_defaults and i > last_required and p.cpp_default() is not None:
                s += f" = {p.cpp_default()}"
            out.append(s)
        return ", ".join(out)

    def arg_names(self, skip_self=False):
        ps = self.params[1:] if skip_self else self.params
        return ", ".join(p.name for p in ps)

    def cpp_ret(self):
        r = self.ret
        if r == "()":  # returns nothing: void in C++, None in Python
            return "void"
        if r.startswith("("):
            n = len([x for x in r.strip("()").split(",")])
            return "std::tuple<" + ", ".join(["Tensor"] * n) + ">"
        if r == "Tensor[]":
            return "std::vector<Tensor>"
        if "!" in r:
            return "const Tensor&"
        return "Tensor"

    def n_outputs(self):
        return len(self.ret.strip("()").split(",")) if self.ret.startswith("(") else 1

    def out_prefix(self):
        """The out= parameters of the C++ op_out: `out`, or out0, out1, ... for a tuple result."""
        n = self.n_outputs()
        return ["const Tensor& out"] if n == 1 else [f"const Tensor& out{i}" for i in range(n)]

    def out_names(self):
        n = self.n_outputs()
        return "out" if n == 1 else ", ".join(f"out{i}" for i in range(n))

    def out_ret(self):
        return "const Tensor&" if self.n_outputs() == 1 else self.cpp_ret()

    def tuple_field_names(self):
        if not self.ret.startswith("(") or self.ret == "()":
            return None
        names = [x.strip().split()[1] if len(x.strip().split()) > 1 else None for x in self.ret.strip("()").split(",")]
        return names if all(names) else None


def load(path):
    """The ops of ops.yaml, each with .section: the `# ---- name` header it sits under (for its docstring)."""
    ops = [Op(e) for e in yaml.safe_load(open(path))]
    sections, current = [], ""
    for line in open(path):
        m = re.match(r"^# ---- (.+?)(?:\s\(|:\s|;|\.\s|\s----|$)", line.rstrip("\n"))
        if m:
            current = m.group(1).strip()
        elif line.startswith("- {func:"):
            sections.append(current)
    assert len(sections) == len(ops), "every op is one '- {func: ...}' line"
    undocumented = sorted({op.name for op in ops if not (isinstance(op.doc, str) and op.doc.strip())})
    if undocumented:
        sys.exit(f"gen.py: ops.yaml entries without a one-line `doc:` description: {', '.join(undocumented)}\n"
                 "add one per op (or run tools/codegen/add_docs.py MAPPING.tsv ops.yaml)")
    for op, sec in zip(ops, sections):
        op.section = sec
    return ops


def c_string(text):
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def summary(overloads):
    """The one-line description of a Python name bound to `overloads` [(op, inplace_variant)]."""
    text = overloads[0][0].doc.strip()
    if overloads[0][1]:  # the in-place variant (abs_) of a functional op
        text = text.rstrip(".") + ", in place."
    return text


def docstring(pyname, overloads, sigs):
    """help() text of a generated binding: the op's one-line description, each overload's signature,
    then where it comes from."""
    lines = [summary(overloads), ""] + [f"{sig} -> {op.ret}" for sig, (op, _) in zip(sigs, overloads)]
    sections = sorted({op.section for op, _ in overloads if op.section})
    origin = f"{', '.join(sections)} op" if sections else "op"
    if pyname.startswith("_"):
        lines += ["", f"Ember's internal {pyname}: {origin}, declared in ops.yaml (used by ember's Python layer)."]
    else:
        lines += ["", f"Ember's {pyname}: {origin}, declared in ops.yaml (PyTorch's semantics: see torch's {pyname})."]
    return "\n".join(lines)


# ---------------------------------------------------------------- C++ API
# ops that declare their own (Tensor self, Scalar other) overload in ops.yaml (xlogy.Scalar_Other, ...):
# the generated C++ convenience overload would collide with it
EXPLICIT_SCALAR_OTHER = set()


def scalar_convenience(op):
    """True when the binary kernel op gets a generated C++ overload taking a Scalar `other`."""
    return bool(op.kernel and op.kernel.startswith("binary") and op.name not in EXPLICIT_SCALAR_OTHER
                and op.params[1].name in ("other", "exponent"))


def gen_headers(ops, out):
    decl, native, methods = [], [], []
    for op in ops:
        ret = op.cpp_ret()
        decl.append(where(op))
        native.append(where(op))
        decl.append(f"EMBER_API {ret} {op.name}({op.cpp_params(True)});")
        native.append(f"{ret} {op.name}({op.cpp_params(False)});")
        if op.inplace:
            ip = op.cpp_params(True, skip_self=True, prefix=["const Tensor& self"])
            decl.append(f"EMBER_API const Tensor& {op.name}_({ip});")
            native.append(f"const Tensor& {op.name}_({op.cpp_params(False)});")
        if op.out:
            op_ = op.cpp_params(True, prefix=op.out_prefix())
            decl.append(f"EMBER_API {op.out_ret()} {op.name}_out({op_});")
            native.append(f"{op.out_ret()} {op.name}_out({op.cpp_params(False, prefix=op.out_prefix())});")
        if scalar_convenience(op):
            # C++ convenience: a Scalar on the right (t + 2.0), wrapped as PyTorch wraps numbers.
            sp = op.cpp_params(True).replace("const Tensor& other", "const Scalar& other", 1)
            sp = re.sub(r"const Tensor& (exponent)", r"const Scalar& \1", sp)
            decl.append(f"EMBER_API Tensor {op.name}({sp});")
        if "method" in op.variants:
            const = " const"
            if op.params and op.params[0].name == "self":
                methods.append(f"{ret} {op.name}({op.cpp_params(True, skip_self=True)}){const};")
                if op.inplace:
                    methods.append(f"const Tensor& {op.name}_({op.cpp_params(True, skip_self=True)}){const};")
                if scalar_convenience(op):
                    sp = op.cpp_params(True, skip_self=True).replace("const Tensor& other", "const Scalar& other", 1)
                    methods.append(f"Tensor {op.name}({sp}){const};")
                    if op.inplace:
                        methods.append(f"const Tensor& {op.name}_({sp}){const};")

    with open(os.path.join(out, "ember/generated/ops.h"), "w") as f:
        f.write(HEADER + '#pragma once\n#include "ember/core/tensor.h"\n\nnamespace ember {\n')
        f.write("\n".join(decl) + "\n}  // namespace ember\n")
    with open(os.path.join(out, "ember/generated/native.h"), "w") as f:
        f.write(HEADER + '#pragma once\n#include "ember/core/tensor.h"\n\nnamespace ember::native {\n')
        f.write("\n".join(native) + "\n}  // namespace ember::native\n")
    with open(os.path.join(out, "ember/generated/tensor_methods.h"), "w") as f:
        f.write(HEADER + "// Included inside class Tensor.\n" + "\n".join(methods) + "\n")

    kernels = [op.kernel for op in ops if op.kernel] + [k for op in ops for k in op.entry.get("extra_kernels", [])]
    unary = sorted({k.split()[1] for k in kernels if k.startswith("unary")})
    binary = sorted({k.split()[1] for k in kernels if k.startswith("binary")})
    with open(os.path.join(out, "ember/generated/kernels.h"), "w") as f:
        f.write(HEADER + "#pragma once\n\nnamespace ember {\n")
        f.write("#define EMBER_UNARY_KERNELS(_) " + " ".join(f"_({k})" for k in unary) + "\n")
        f.write("#define EMBER_BINARY_KERNELS(_) " + " ".join(f"_({k})" for k in binary) + "\n")
        f.write("enum class UnaryKernel : int { " + ", ".join(unary) + " };\n")
        f.write("enum class BinaryKernel : int { " + ", ".join(binary) + " };\n}  // namespace ember\n")


KERNEL_FILES = {"unary": "kernels/cpu/isa/unary.cpp", "binary": "kernels/cpu/isa/binary.cpp"}


def where(op):
    """A comment saying where an op's body is: the hand-written file, or the kernel functor."""
    if op.kernel:
        kind, functor = op.kernel.split()
        return f"// {op.entry['func'].split('(')[0]}: generated on TensorIter, functor {functor} in csrc/ember/{KERNEL_FILES[kind]}"
    return f"// {op.entry['func'].split('(')[0]}: body in csrc/ember/{op.body or '?'}"


def kernel_body(op, mode):
    """Body of a generated elementwise native function. mode: functional | inplace | out."""
    kind, functor = op.kernel.split()
    flags = []
    if op.entry.get("promote") == "float":
        flags.append("kPromoteToFloat")
    if op.entry.get("result") == "bool":
        flags.append("kResultBool")
    if op.entry.get("reduced_float") is False:
        flags.append("kNoReducedFloat")
    flag = " | ".join(flags) or "0"
    first = op.params[0].name  # self, or x for the torch.special ops whose schema names it so
    out = {"functional": "Tensor()", "inplace": first, "out": "out"}[mode]
    m = {"functional": "OutMode::Functional", "inplace": "OutMode::Inplace", "out": "OutMode::Out"}[mode]
    if kind == "unary":
        call = f'unary_op(UnaryKernel::{functor}, {flag}, {first}, {out}, {m}, "{op.name}")'
    else:
        other = op.params[1].name
        alpha = "alpha" if any(p.name == "alpha" for p in op.params) else "Scalar(1)"
        call = f'binary_op(BinaryKernel::{functor}, {flag}, {first}, {other}, {alpha}, {out}, {m}, "{op.name}")'
    return f"return {call};" if mode == "functional" else f"{call};\n  return {out};"


# ops.yaml's `sparse:` key. Without it an op refuses sparse COO arguments with a NotImplementedError
# naming the op (before its body could read the storage a sparse tensor doesn't have);
# `dispatch` hands calls with a sparse argument to ember::sparse::<op>[_] (ember/sparse/sparse_ops.h);
# `accept` means the native body takes sparse arguments itself.
# `values`: a zero-preserving elementwise op (f(0) == 0) runs on the coalesced values of a sparse
# self (other Tensor arguments must then be dense 0-d).
SPARSE_MODES = (None, "dispatch", "accept", "values")


def tensor_params(op):
    """The names of an op's tensor parameters: single tensors (Tensor, Tensor?) and lists (Tensor[])."""
    return ([p.name for p in op.params if p.type in ("Tensor", "Tensor?")],
            [p.name for p in op.params if p.type == "Tensor[]"])


def out_params(op):
    """The names of an op's out= tensors."""
    return [n.strip() for n in op.out_names().split(",")]


def sparse_guard(op, name, mode):
    """The lines that route or refuse sparse arguments (one not-taken branch for dense ones)."""
    sparse = op.entry.get("sparse")
    assert sparse in SPARSE_MODES, f"{op.entry['func']}: unknown sparse mode {sparse}"
    if sparse == "accept":
        return []
    single, lists = tensor_params(op)
    if not single and not lists:
        return []
    if mode == "out":  # a sparse out= must be refused before the body resizes it
        single = single + out_params(op)
    cond = " || ".join([f"{n}.is_sparse()" for n in single] + [f"::ember::sparse::any_sparse({n})" for n in lists])
    if sparse == "dispatch" and mode != "out":
        call = f"::ember::sparse::{name}({op.arg_names()})"
        return [f"  if (EMBER_UNLIKELY({cond})) return {call};"]
    if sparse == "values" and mode != "out":
        first = op.params[0].name
        others = [n for n in single if n != first]
        args = ", ".join(["v_"] + [p.name for p in op.params[1:]])
        fn = op.name + ("_" if mode == "inplace" else "")
        check = "".join(f"::ember::sparse::check_scalar_operand(\"{name}\", {n}); " for n in others)
        mapper = "map_values_" if mode == "inplace" else "map_values"
        return [f"  if (EMBER_UNLIKELY({cond})) {{ {check}return ::ember::sparse::{mapper}(\"{name}\", {first}, "
                f"[&](const Tensor& v_) {{ return ember::{fn}({args}); }}); }}"]
    return [f"  if (EMBER_UNLIKELY({cond})) ::ember::sparse::unsupported(\"{name}\");"]


# Ops that may take CUDA tensors: their bodies reach device memory only through TensorIter, kernel
# stubs (a device without an entry raises NotImplementedError), views, item()/host_int64_values (which
# copy to the host first) and other ops (each guarded itself). Every other op's entry refuses CUDA
# arguments, so a body that loops over host pointers never sees device memory. An op opts in or out
# with ops.yaml's `cuda: yes|no`; by default the generated elementwise ops (`kernel:`) and the bodies
# in these files are in.
CUDA_BODY_FILES = {"ops/views.cpp", "ops/elementwise.cpp", "ops/copy.cpp", "ops/creation.cpp", "ops/reduce.cpp",
                   "ops/overloads.cpp", "ops/shape_ops.cpp", "random/random_ops.cpp", "ops/indexing.cpp",
                   "ops/scatter.cpp", "ops/blas.cpp", "ops/linalg.cpp", "ops/nn_core.cpp", "ops/nn_loss.cpp",
                   "ops/optim.cpp", "ops/nn_dropout.cpp", "ops/conv.cpp", "ops/pooling.cpp", "ops/padding.cpp",
                   "ops/nn_embedding.cpp", "ops/nn_rnn.cpp", "ops/nn_activation.cpp", "ops/nn_norm.cpp",
                   "ops/math_extra.cpp", "ops/special.cpp", "ops/cumulative.cpp", "ops/cross.cpp", "ops/search.cpp",
                   "ops/interp.cpp", "ops/complex.cpp", "ops/distance.cpp"}


def cuda_capable(op):
    flag = op.entry.get("cuda")
    if flag is not None:
        assert flag in (True, False), f"{op.entry['func']}: cuda: must be yes or no"
        return flag
    return bool(op.kernel) or op.entry.get("body") in CUDA_BODY_FILES


def cuda_guard(op, name, mode):
    """The line that refuses CUDA (and meta) arguments of an op without a CUDA path (one not-taken
    branch): a meta tensor has no data, and the ops that may take CUDA tensors are those whose bodies
    reach the data only through kernel stubs (which do nothing on meta) or by copying it to the host."""
    if cuda_capable(op):
        return []
    single, lists = tensor_params(op)
    if mode == "out":
        single = single + out_params(op)
    if not single and not lists:
        return []
    # meta: yes marks a host-only body that is safe on meta (it reaches data only through void kernel stubs
    # or checks is_meta() first): then only CUDA tensors are refused
    meta_ok = "true" if op.entry.get("meta") is True else "false"
    cond = " || ".join(f"::ember::refused_device({n}, {meta_ok}, &d_)" for n in single + lists)
    return [f"  {{ ::ember::Device d_; if (EMBER_UNLIKELY({cond})) ::ember::no_kernel_for(\"{name}\", d_); }}"]


def conj_guard(op, fname, mode):
    """(cold function, guard line) that resolve conjugate and negative views (Note [Conjugate views],
    ember/ops/conj.h) before an op that does not read the bits: one flag test per tensor argument on the
    hot path. A tensor the op updates in place is worked on as a resolved copy that goes back through
    copy_; an out= tensor with a bit takes the result the same way."""
    if ag.is_view_op(op) or op.entry.get("conj") == "aware":
        return "", []
    singles, lists = tensor_params(op)
    outs = out_params(op) if mode == "out" else []
    if not singles and not lists:
        return "", []
    mutating = op.params[0].type == "Tensor" and (
        mode == "inplace" or (mode == "functional" and op.is_self_inplace and op.params[0].mutable))
    cond = " || ".join([f"{n}.has_math_bits()" for n in outs + singles] + [f"::ember::any_math_bits({n})" for n in lists])
    cold = f"{fname}__{op.overload or 'base'}_{mode}_conj"
    body = []
    args = []
    for p in op.params:
        if p.type in ("Tensor", "Tensor?"):
            args.append(p.name if (mutating and p is op.params[0]) else f"::ember::resolve_bits({p.name})")
        elif p.type == "Tensor[]" and p.mutable:
            body.append(f'  ::ember::refuse_math_bits_mutation({p.name}, "{fname}");')
            args.append(p.name)
        elif p.type == "Tensor[]":
            args.append(f"::ember::resolve_bits({p.name})")
        else:
            args.append(p.name)
    call_args = ", ".join(args)
    if mode == "out":
        body += [f"  Tensor {n}_c_ = ::ember::out_stand_in_for_bits({n});" for n in outs]
        body.append(f"  ember::{fname}_out({', '.join(n + '_c_' for n in outs)}{', ' if args else ''}{call_args});")
        body += [f"  ::ember::out_write_back_through_bits({n}, {n}_c_);" for n in outs]
        ret = op.out_ret()
        body.append("  return out;" if len(outs) == 1 else f"  return {ret}({', '.join(outs)});")
        params = op.cpp_params(False, prefix=op.out_prefix())
    elif mutating:
        self_name = op.params[0].name
        rest = "".join(", " + a for a in args[1:])
        body.append(f"  if (!{self_name}.has_math_bits()) return ember::{fname}({self_name}{rest});")
        body.append(f"  Tensor tmp_ = ::ember::resolve_bits({self_name});")
        body.append(f"  ember::{fname}(tmp_{rest});")
        body.append(f"  return ::ember::write_back_through_bits({self_name}, tmp_);")
        ret = "const Tensor&"
        params = op.cpp_params(False)
    else:
        ret = op.cpp_ret()
        body.append(f"  return ember::{fname}({call_args});")
        params = op.cpp_params(False)
    call_names = (op.out_names() + (", " + op.arg_names() if op.params else "")) if mode == "out" else op.arg_names()
    fn = f"static __attribute__((noinline, cold)) {ret} {cold}({params}) {{\n" + "\n".join(body) + "\n}"
    return fn, [f"  if (EMBER_UNLIKELY({cond})) return {cold}({call_names});"]


def record_line(op, name):
    """Opens the profiler's range for an op entry (ember/profiler/profiler.h): one branch when off."""
    return f'  EMBER_RECORD_OP("aten::{name}"' + "".join(f", {p.name}" for p in op.params) + ");"


def traced_entry(op, ret, fname, params, call_args, variant, body, prelude=""):
    """An op entry as two functions: the body, and the public entry that records the call when a
    jit trace is running on the thread (ember/jit/tracer.h) and otherwise just calls the body.
    `prelude` opens the public entry (the autocast check of autocast_prelude)."""
    schema = op.entry["func"].split("(")[0]
    impl = f"{fname}__{op.overload or 'base'}_body"
    argnames = [a.strip() for a in call_args.split(",") if a.strip()]
    rec = " ".join(f"tc_.arg({a});" for a in argnames)
    if ret == "void":
        traced = f"{impl}({call_args});\n    tc_.result_void();\n    return;"
    else:
        traced = f"{'const Tensor&' if ret == 'const Tensor&' else 'auto'} r_ = {impl}({call_args});\n    tc_.result(r_);\n    return r_;"
    return [f"static inline {ret} {impl}({params}) {{\n" + "\n".join(body) + "\n}",
            f"{ret} {fname}({params}) {{\n{prelude}"
            f"  if (EMBER_UNLIKELY(::ember::jit::tracing())) {{\n"
            f"    ::ember::jit::TracedCall tc_(\"{schema}\", ::ember::jit::Variant::{variant});\n"
            f"    if (tc_.recording()) {{ {rec} }}\n"
            f"    {traced}\n  }}\n"
            f"  return {impl}({call_args});\n}}"]


# ops.yaml's `autocast:` key: torch's autocast cast policy of the op on the CPU (ember/autograd/autocast.h)
# (`disabled`: no casts, autocast suspended in the body: an op PyTorch runs as one kernel, built here
# from autocast ops); `autocast_cuda:` the op's policy on CUDA where PyTorch's CUDA lists differ (default:
# the CPU's; `none`: not on the CUDA lists, `banned`: raises inside CUDA autocast)
AUTOCAST_POLICIES = {"lower_precision_fp": "LowerPrecisionFp", "fp32": "Fp32", "promote": "Promote", "disabled": "Disabled",
                     "none": "None", "banned": "Banned"}


def autocast_prelude(op):
    """(cold function, check) for an autocast op's functional entry: inside an enabled torch.autocast
    region whose device (the inputs': CUDA when one is on a GPU) lists the op, the entry hands its
    arguments to the cold function, which casts the floating Tensor arguments and calls the entry again
    with autocast suspended. Autocast off costs one relaxed load and a not-taken branch; the casts' code
    stays out of the entry (noinline, cold)."""
    cpu = op.entry.get("autocast", "none")
    cuda = op.entry.get("autocast_cuda", cpu)
    if cpu == "none" and cuda == "none":
        return "", ""
    for policy in (cpu, cuda):
        assert policy in AUTOCAST_POLICIES, f"{op.entry['func']}: unknown autocast policy {policy}"
    assert cpu != "banned", f"{op.entry['func']}: banned is a CUDA policy"
    name = f"{op.name}__{op.overload or 'base'}_autocast"
    ns = "::ember::autocast::"
    tensors = [f"&{p.name}" for p in op.params if p.type in ("Tensor", "Tensor?")]
    lists = [f"&{p.name}" for p in op.params if p.type == "Tensor[]"]
    inputs = f"{{{', '.join(tensors)}}}" + (f", {{{', '.join(lists)}}}" if lists else "")
    policies = f"{ns}Policy::{AUTOCAST_POLICIES[cpu]}, {ns}Policy::{AUTOCAST_POLICIES[cuda]}"
    args = ", ".join(f"ac_.cast({p.name})" if p.type in ("Tensor", "Tensor?", "Tensor[]") else p.name
                     for p in op.params)
    body = (f"  const {ns}Device dev_ = {ns}device_of({inputs});\n"
            f"  const {ns}Policy policy_ = {ns}policy_for(dev_, {policies});\n")
    if "disabled" in (cpu, cuda):
        body += (f"  if (policy_ == {ns}Policy::Disabled) {{\n"
                 f"    {ns}Suspend suspend_;\n"
                 f"    return ember::{op.name}({op.arg_names()});\n  }}\n")
    if cuda == "banned":
        body += f'  if (policy_ == {ns}Policy::Banned) {ns}banned("{op.name}", dev_);\n'
    body += (f"  {ns}Redispatch ac_(policy_, dev_, {inputs});\n"
             f"  return ember::{op.name}({args});\n")
    cold = (f"static __attribute__((noinline, cold)) {op.cpp_ret()} {name}({op.cpp_params(False)}) {{\n{body}}}")
    check = (f"  if (EMBER_UNLIKELY({ns}maybe_active()) && {ns}active() &&\n"
             f"      {ns}policy_for({ns}device_of({inputs}), {policies}) != {ns}Policy::None)\n"
             f"    return {name}({op.arg_names()});\n")
    return cold, check


def gen_ops_cpp(ops, out):
    ag.assign_node_names(ops)
    o = [HEADER, '#include "ember/generated/ops.h"', '#include "ember/generated/native.h"',
         '#include "ember/profiler/profiler.h"', '#include "ember/jit/tracer.h"',
         '#include "ember/iter/elementwise.h"', '#include "ember/autograd/formulas.h"',
         '#include "ember/autograd/autocast.h"', '#include "ember/ops/conj.h"',
         '#include "ember/sparse/sparse_ops.h"', '#include "ember/kernels/registry.h"', "",
         "namespace ember {",
         "// whether a tensor (of a list) is on a device the op refuses, which it stores in *d (cuda_guard's",
         "// test): CUDA, and meta unless meta_ok (ops marked meta: yes)",
         "static inline bool refused_device(const Tensor& t, bool meta_ok, Device* d) {",
         "  if (EMBER_LIKELY(!t.off_host()) || (meta_ok && t.is_meta())) return false;",
         "  *d = t.device();",
         "  return true;",
         "}",
         "static inline bool refused_device(TensorList ts, bool meta_ok, Device* d) {",
         "  for (const Tensor& t : ts)",
         "    if (refused_device(t, meta_ok, d)) return true;",
         "  return false;",
         "}", "namespace autograd::generated {"]
    for op in ops:
        if op.node:
            o.append(ag.gen_node(op))
    o.append("}  // namespace autograd::generated\n")
    for op in ops:
        ret = op.cpp_ret()
        names = op.arg_names()
        call = f"native::{op.name}({names})"
        o.append(where(op))
        if op.is_self_inplace and "!" in op.ret:
            body = ag.inplace_body(op, call)
        else:
            body = ag.functional_body(op, call)
        autocast_fn, autocast_check = autocast_prelude(op)
        if autocast_fn:
            o.append(autocast_fn)
        conj_fn, conj_line = conj_guard(op, op.name, "functional")
        if conj_fn:
            o.append(conj_fn)
        guard = sparse_guard(op, op.name, "functional") + cuda_guard(op, op.name, "functional")
        o.extend(traced_entry(op, ret, op.name, op.cpp_params(False), names, "Functional",
                              conj_line + [record_line(op, op.name)] + guard + body, autocast_check))
        if op.inplace:
            conj_fn, conj_line = conj_guard(op, op.name + "_", "inplace")
            if conj_fn:
                o.append(conj_fn)
            body = (conj_line + [record_line(op, op.name + "_")] + sparse_guard(op, op.name + "_", "inplace")
                    + cuda_guard(op, op.name + "_", "inplace")
                    + ag.inplace_body(op, f"native::{op.name}_({names})"))
            o.extend(traced_entry(op, "const Tensor&", op.name + "_", op.cpp_params(False), names, "Inplace", body))
        if op.out:
            conj_fn, conj_line = conj_guard(op, op.name, "out")
            if conj_fn:
                o.append(conj_fn)
            body = (conj_line + [record_line(op, op.name)] + sparse_guard(op, op.name, "out") + cuda_guard(op, op.name, "out")
                    + ag.out_body(op, f"native::{op.name}_out({op.out_names()}, {names})"))
            o.extend(traced_entry(op, op.out_ret(), op.name + "_out", op.cpp_params(False, prefix=op.out_prefix()),
                                  f"{op.out_names()}, {names}", "Out", body))
        if scalar_convenience(op):
            sp = op.cpp_params(False).replace("const Tensor& other", "const Scalar& other", 1)
            o.append(f"Tensor {op.name}({sp}) {{ return ember::{op.name}({names.replace('other', 'scalar_to_tensor(other)', 1)}); }}")
        if "method" in op.variants and op.params and op.params[0].name == "self":
            rest = op.arg_names(skip_self=True)
            args = "*this" + (", " + rest if rest else "")
            o.append(f"{ret} Tensor::{op.name}({op.cpp_params(False, skip_self=True)}) const {{ return ember::{op.name}({args}); }}")
            if op.inplace:
                o.append(f"const Tensor& Tensor::{op.name}_({op.cpp_params(False, skip_self=True)}) const "
                         f"{{ return ember::{op.name}_({args}); }}")
            if scalar_convenience(op):
                sp = op.cpp_params(False, skip_self=True).replace("const Tensor& other", "const Scalar& other", 1)
                sargs = args.replace("other", "scalar_to_tensor(other)", 1)
                o.append(f"Tensor Tensor::{op.name}({sp}) const {{ return ember::{op.name}({sargs}); }}")
                if op.inplace:
                    o.append(f"const Tensor& Tensor::{op.name}_({sp}) const {{ return ember::{op.name}_({sargs}); }}")
    o.append("\nnamespace native {")
    for op in ops:
        if not op.kernel:
            continue
        o.append(f"Tensor {op.name}({op.cpp_params(False)}) {{\n  {kernel_body(op, 'functional')}\n}}")
        if op.inplace:
            o.append(f"const Tensor& {op.name}_({op.cpp_params(False)}) {{\n  {kernel_body(op, 'inplace')}\n}}")
        if op.out:
            o.append(f"const Tensor& {op.name}_out({op.cpp_params(False, prefix=['const Tensor& out'])}) {{\n"
                     f"  {kernel_body(op, 'out')}\n}}")
    o.append("}  // namespace native\n}  // namespace ember\n")
    with open(os.path.join(out, "generated_ops.cpp"), "w") as f:
        f.write("\n".join(o))


# ---------------------------------------------------------------- Python bindings
OPTIONS_PY = ["ScalarType? dtype=None", "Layout? layout=None", "Device? device=None",
              "bool? pin_memory=False", "bool requires_grad=False"]


def py_signature(op, method, with_out):
    """The signature string the runtime parser reads, in PyTorch's Python spelling."""
    parts, seen_star = [], False
    params = op.params[1:] if method else op.params
    for p in params:
        if p.kwonly and not seen_star:
            parts.append("*")
            seen_star = True
        if p.type == "TensorOptions":
            parts.extend(OPTIONS_PY)
            continue
        t = p.type
        if p.list_size is not None:
            t = t.replace("int[]", f"int[{p.list_size}]")
        name = "input" if (p.name == "self" and not method) else p.py_name
        default = p.default
        if default == "Mean":
            # PyTorch's Python bindings read the symbolic default `Mean` as 0 (no reduction):
            # torch.kl_div(x, t) is elementwise while at::kl_div(x, t) averages. Ember does the same.
            default = "0"
        parts.append(f"{t} {name}" + (f"={default}" if default is not None else ""))
    if with_out:
        if not seen_star:
            parts.append("*")
        parts.append("Tensor? out=None" if op.n_outputs() == 1 else "Tensor[]? out=None")
    return f"{op.python_name}({', '.join(parts)})"


def py_call(op, method, inplace_variant):
    """C++ expression that calls the op from parsed Python arguments `r`."""
    args, i = [], 0
    params = op.params[1:] if method else op.params
    if method:
        args.append("self")
    # the default device (set_default_device) serves factories, not the *_like / new_* ones, whose
    # device is their tensor's, as in PyTorch
    like = method or any(p.type.startswith("Tensor") and p.type != "TensorOptions" for p in op.params)
    for p in params:
        acc = CPP_TYPES[p.type][1]
        args.append(f"r.{acc}({i}, false)" if p.type == "TensorOptions" and like else f"r.{acc}({i})")
        i += 5 if p.type == "TensorOptions" else 1
    name = op.name + ("_" if inplace_variant else "")
    return f"ember::{name}({', '.join(args)})", i


def py_wrap(op, expr, method, self_returning):
    if self_returning:
        # a method returns self; a function (torch.selu_(x)) returns its first argument, x itself
        obj = "self_obj" if method else "r.obj(0)"
        return f"{expr};\n      return ember::py::incref({obj});"
    r = op.ret
    if r == "()":
        return f"{expr};\n      Py_RETURN_NONE;"
    if r.startswith("("):
        names = op.tuple_field_names()
        if names:
            fields = ", ".join(f'"{n}"' for n in names)
            return f'return ember::py::wrap_named({expr}, "{op.python_name}", {{{fields}}});'
        return f"return ember::py::wrap_tuple({expr});"
    if r == "Tensor[]":
        return f"return ember::py::wrap_list({expr});"
    if any(p.type == "TensorOptions" for p in op.params):
        return f"return ember::py::wrap(r.pinned_if_asked({expr}));"  # pin_memory=True
    return f"return ember::py::wrap({expr});"


def gen_binding(pyname, overloads, method, prefix=""):
    """overloads: list of (op, inplace_variant)."""
    sigs, cases = [], []
    for k, (op, inplace_variant) in enumerate(overloads):
        with_out = op.out and not inplace_variant and not op.is_self_inplace
        sig = py_signature(op, method, with_out)
        sig = sig.replace(f"{op.python_name}(", f"{pyname}(", 1)
        sigs.append(sig)
        expr, n = py_call(op, method, inplace_variant)
        if method:
            self_ret = inplace_variant or op.is_self_inplace
        else:
            self_ret = inplace_variant or (op.is_self_inplace and "!" in op.ret)
        body = []
        # an out= call allocates on out's device, never the default one
        out_expr = re.sub(r"r\.options\((\d+)\)", r"r.options(\1, false)", expr)
        if with_out and op.n_outputs() == 1:
            out_args = out_expr.replace(f"ember::{op.name}(", f"ember::{op.name}_out(r.tensor({n}), ", 1)
            body.append(f"if (!r.is_none({n})) {{\n        {out_args};\n        return ember::py::incref(r.obj({n}));\n      }}")
        elif with_out:
            # out=(values, indices): the tensors are written and returned, as a named tuple when named
            k_ = op.n_outputs()
            outs = ", ".join(f"outs_[{i}]" for i in range(k_))
            out_args = out_expr.replace(f"ember::{op.name}(", f"ember::{op.name}_out({outs}, ", 1)
            names_ = op.tuple_field_names() or []
            fields = ", ".join(f'"{x}"' for x in names_)
            body.append(f"if (!r.is_none({n})) {{\n        auto outs_ = r.tensorlist({n});\n"
                        f"        if (outs_.size() != {k_}) EMBER_FAIL(Type, \"expected tuple of {k_} elements but got \", outs_.size());\n"
                        f"        {out_args};\n"
                        f"        return ember::py::wrap_out_tuple(r.obj({n}), \"{op.python_name}_out\", {{{fields}}});\n      }}")
        if not method and op.is_self_inplace:
            # torch.fill_(x, v) returns x itself
            body.append(f"{expr};\n      return ember::py::incref(r.obj(0));")
        else:
            body.append(py_wrap(op, expr, method, self_ret))
        cases.append(f"    case {k}: {{\n      " + "\n      ".join(body) + "\n    }")
    fn = f"py_{'m' if method else 'f'}_{prefix}{pyname}"
    gen_binding.last_sigs = sigs
    sig_list = ", ".join('"' + s.replace('"', '\\"') + '"' for s in sigs)
    self_decl = ("  const ember::Tensor& self = ember::py::unpack(self_obj);\n" if method else "")
    return fn, f"""static PyObject* {fn}(PyObject* self_obj, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {{
  EMBER_PY_TRY
  static ember::py::ArgParser parser({{{sig_list}}}, {str(method).lower()});
{self_decl}  ember::py::ParsedArgs r;
  switch (parser.parse(self_obj, args, nargs, kwnames, r)) {{
    case -1: return r.override_result;  // an argument's __torch_function__ answered
{chr(10).join(cases)}
  }}
  Py_RETURN_NONE;
  EMBER_PY_CATCH
}}
"""


# python_module -> (binding-name prefix, C table name): ops that PyTorch binds outside torch's namespace
SUBMODULE_TABLES = {"nn": ("nn_", "ember_generated_nn_functions"),
                    "special": ("special_", "ember_generated_special_functions")}


def python_groups(ops):
    """The Python names the bindings define, each with its overloads [(op, inplace_variant)]: the
    ember functions, the Tensor methods, and {python_module: functions} (also read by stubs.py)."""
    funcs, meths = {}, {}
    sub_funcs = {m: {} for m in SUBMODULE_TABLES}
    for op in ops:
        names = [op.python_name] + op.aliases
        fgroup = sub_funcs[op.python_module] if op.python_module else funcs
        for n in names:
            if "function" in op.variants:
                fgroup.setdefault(n, []).append((op, False))
                if op.inplace and op.inplace_function:
                    fgroup.setdefault(n + "_", []).append((op, True))
            if "method" in op.variants and op.params and op.params[0].name == "self":
                meths.setdefault(n, []).append((op, False))
                if op.inplace:
                    meths.setdefault(n + "_", []).append((op, True))
    return funcs, meths, sub_funcs


def gen_python(ops, out):
    funcs, meths, sub_funcs = python_groups(ops)
    code = [HEADER, '#include "python/arg_parser.h"', '#include "ember/generated/ops.h"', ""]
    tables = [("ember_generated_functions", funcs, False, ""), ("ember_generated_methods", meths, True, "")]
    tables += [(table, sub_funcs[m], False, prefix) for m, (prefix, table) in SUBMODULE_TABLES.items()]
    for table_name, group, method, prefix in tables:
        rows = []
        for pyname, ovs in group.items():
            fn, body = gen_binding(pyname, ovs, method, prefix)
            code.append(body)
            doc = c_string(docstring(pyname, ovs, gen_binding.last_sigs))
            rows.append(f'  {{"{pyname}", (PyCFunction)(void (*)(void)){fn}, METH_FASTCALL | METH_KEYWORDS, {doc}}},')
        code.append(f"PyMethodDef {table_name}[] = {{\n" + "\n".join(rows) + "\n  {nullptr, nullptr, 0, nullptr}};")
    code.append(gen_return_types(ops))
    with open(os.path.join(out, "generated_python.cpp"), "w") as f:
        f.write("\n".join(code) + "\n")


def gen_return_types(ops):
    """The table of named results (torch.return_types): <op> and, with out=, <op>_out."""
    rows, seen = [], set()
    for op in ops:
        names = op.tuple_field_names() if op.ret.startswith("(") else None
        if not names:
            continue
        assert len(names) <= 6, op.name
        for n in [op.python_name] + ([op.python_name + "_out"] if op.out else []):
            if n not in seen:
                seen.add(n)
                rows.append(f'  {{"{n}", {{{", ".join(chr(34) + x + chr(34) for x in names)}}}}},')
    return ("const ember::py::GeneratedReturnType ember::py::generated_return_types[] = {\n" + "\n".join(rows)
            + "\n  {nullptr, {}}};")


def main():
    src, out = sys.argv[1], sys.argv[2]
    os.makedirs(os.path.join(out, "ember/generated"), exist_ok=True)
    ops = load(src)
    EXPLICIT_SCALAR_OTHER.update(op.name for op in ops if len(op.params) >= 2 and op.params[0].type == "Tensor"
                                 and op.params[1].type == "Scalar" and op.params[1].name == "other")
    gen_headers(ops, out)
    gen_ops_cpp(ops, out)
    gen_python(ops, out)
    jit.gen_jit(ops, out)


if __name__ == "__main__":
    main()
