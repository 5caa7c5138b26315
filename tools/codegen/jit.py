"""The boxed form of every op for ember::jit (generated_jit.cpp): one function per (schema,
variant) that reads a node's arguments, calls the C++ op and stores its results in the
interpreter's environment. Helpers live in csrc/ember/jit/boxing.h."""

import os

HEADER = "// @generated from ops.yaml by tools/codegen/jit.py. Do not edit.\n"

# schema type -> expression reading argument k (locals for lists are declared separately)
CONVERT = {
    "Tensor": "ten(e, a[{k}])",
    "Tensor?": "ten(e, a[{k}])",
    "Scalar": "scal(a[{k}])",
    "Scalar?": "oscal(a[{k}])",
    "int": "integer(a[{k}])",
    "int?": "ointeger(a[{k}])",
    "int[]": "ints(a[{k}])",
    "int[]?": "oints(a[{k}])",
    "float": "real(a[{k}])",
    "float?": "oreal(a[{k}])",
    "bool": "boolean(a[{k}])",
    "bool?": "oboolean(a[{k}])",
    "str": "str(a[{k}])",
    "str?": "ostr(a[{k}])",
    "ScalarType": "dtype(a[{k}])",
    "ScalarType?": "odtype(a[{k}])",
    "Generator?": "nullptr",
    "TensorOptions": "options(a[{k}])",
    "MemoryFormat?": "omemory_format(a[{k}])",
}


def boxed(op, fname, variant, idx):
    n_out = op.n_outputs() if variant == "Out" else 0
    lines, args = [], []
    for k in range(n_out):
        args.append(f"ten(e, a[{k}])")
    for j, p in enumerate(op.params):
        k = n_out + j
        if p.type == "Tensor[]":
            lines.append(f"  auto l{k} = tens(e, a[{k}]);")
            args.append(f"l{k}")
        else:
            args.append(CONVERT[p.type].format(k=k))
    total = n_out + len(op.params)
    call = f"ember::{fname}({', '.join(args)})"
    ret = op.out_ret() if variant == "Out" else ("const Tensor&" if variant == "Inplace" else op.cpp_ret())
    body = [f"  const auto& a = n.args;", f"  need_args(n, {total});"] + lines
    if ret == "void":
        body.append(f"  {call};")
    else:
        body.append(f"  put(e, n, {call});")
    return f"static void jit_{idx}(Env& e, const Node& n) {{\n" + "\n".join(body) + "\n}"


def gen_jit(ops, out):
    fns, table = [], []
    for op in ops:
        schema = op.entry["func"].split("(")[0]
        forms = [(op.name, "Functional")]
        if op.inplace:
            forms.append((op.name + "_", "Inplace"))
        if op.out:
            forms.append((op.name + "_out", "Out"))
        for fname, variant in forms:
            idx = len(table)
            fns.append(boxed(op, fname, variant, idx))
            nargs = len(op.params) + (op.n_outputs() if variant == "Out" else 0)
            table.append(f'    {{"{schema}", Variant::{variant}, &jit_{idx}, {nargs}}},')
    o = [HEADER, '#include "ember/jit/boxing.h"', '#include "ember/generated/ops.h"', "",
         "namespace ember::jit {", "namespace {"]
    o += fns
    o += ["}  // namespace", "", "const BoxedEntry* boxed_ops(size_t* n) {",
          "  static const BoxedEntry table[] = {"] + table + ["  };",
          "  *n = sizeof(table) / sizeof(table[0]);", "  return table;", "}", "}  // namespace ember::jit"]
    with open(os.path.join(out, "generated_jit.cpp"), "w") as f:
        f.write("\n".join(o) + "\n")
