"""The .pyi stubs of ember._C (tools/codegen/stubs.py, written by the build beside the extension):
they parse, cover every generated op, Tensor method and nanobind function, carry the overloads and
out= of the schemas, and mypy type-checks a program against them (when mypy is installed)."""
import ast
import os
import re
import subprocess
import sys
import textwrap
import types

import pytest

import ember

PACKAGE = os.path.dirname(ember.__file__)
STUBS = os.path.join(os.path.dirname(ember._C.__file__), "_C")


def _stub(name):
    with open(os.path.join(STUBS, name)) as f:
        return ast.parse(f.read(), filename=name)


def _defs(body):
    """{name: [FunctionDef, ...]} of a module's or class's body."""
    out = {}
    for node in body:
        if isinstance(node, ast.FunctionDef):
            out.setdefault(node.name, []).append(node)
    return out


def _tensor_base(tree):
    return next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "TensorBase")


def _generated(module):
    """The names a binding table put in `module` (builtin functions, not nanobind's)."""
    return [n for n in dir(module) if isinstance(getattr(module, n), types.BuiltinFunctionType)]


def test_stub_files_parse_and_ship_with_py_typed():
    submodules = [n for n, v in vars(ember._C).items() if isinstance(v, types.ModuleType)]
    assert {"_ops", "_nn", "_special"} <= set(submodules)
    assert sorted(os.listdir(STUBS)) == sorted(["__init__.pyi"] + [n + ".pyi" for n in submodules])
    for name in os.listdir(STUBS):
        _stub(name)
    assert os.path.exists(os.path.join(PACKAGE, "py.typed"))
    # no __init__.py beside the stubs: the directory must never shadow the extension at import time
    assert not os.path.exists(os.path.join(STUBS, "__init__.py"))
    assert type(ember._C).__name__ == "module" and ember._C.__file__.endswith((".so", ".pyd"))


@pytest.mark.parametrize("stub, module", [("_ops.pyi", ember._C._ops), ("_nn.pyi", ember._C._nn),
                                          ("_special.pyi", ember._C._special)])
def test_every_generated_function_is_in_the_stub(stub, module):
    defs = _defs(_stub(stub).body)
    names = _generated(module)
    assert names and not [n for n in names if n not in defs]
    for name in names:
        doc = getattr(module, name).__doc__
        # one stub overload (at least) per schema overload the runtime parser knows
        n_sigs = len([line for line in doc.splitlines() if line.startswith(name + "(")])
        assert len(defs[name]) >= n_sigs, name
        if len(defs[name]) > 1:
            assert all(any(getattr(d, "id", None) == "overload" for d in f.decorator_list) for f in defs[name]), name
        # the one-line description is the stub's docstring; out= where the binding takes it
        assert ast.get_docstring(defs[name][0]) == doc.splitlines()[0], name
        if "Tensor? out=None" in doc or "Tensor[]? out=None" in doc:
            assert any("out" in [a.arg for a in f.args.kwonlyargs] for f in defs[name]), name


def test_every_tensor_method_and_extension_function_is_in_the_stub():
    tree = _stub("__init__.pyi")
    members = _defs(_tensor_base(tree).body)
    methods = [n for n, v in vars(ember._C.TensorBase).items()
               if type(v).__name__ in ("method_descriptor", "nb_method") or isinstance(v, property)]
    missing = [n for n in methods if n not in members and not n.startswith("__")]
    assert len(methods) > 300 and not missing, missing
    # the operators are typed, not stubgen's bare slot wrappers
    for op in ("__add__", "__matmul__", "__getitem__", "__eq__"):
        assert members[op][0].returns is not None, op
    functions = _defs(tree.body)
    nanobind = [n for n in dir(ember._C) if type(getattr(ember._C, n)).__name__ == "nb_func"]
    assert nanobind and not [n for n in nanobind if n not in functions]
    classes = {n.name for n in tree.body if isinstance(n, ast.ClassDef)}
    assert {"dtype", "device", "Generator", "TensorBase"} <= classes


def test_every_schema_type_has_an_annotation():
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "tools", "codegen"))
    import gen
    import stubs
    assert not [t for t in gen.CPP_TYPES if t not in stubs.ANNOTATION and t != "TensorOptions"]


def test_overloads_and_types_follow_the_schemas():
    ops = _defs(_stub("_ops.pyi").body)
    # ember.zeros((2, 3)) and ember.zeros(2, 3): the parser's varargs rule is two overloads
    assert [ast.unparse(f.args.vararg) for f in ops["zeros"] if f.args.vararg] == ["size: builtins.int"]
    add = ops["add"][0]
    assert ast.unparse(add.args.args[1].annotation) == "Tensor | _Number"  # add(x, 2) parses
    atan2 = ops["atan2"][0]
    assert ast.unparse(atan2.args.args[1].annotation) == "Tensor"  # atan2(x, 2) does not
    assert ast.unparse(ops["sort"][0].returns) == "_sort_result"  # (values, indices) named tuple
    assert ast.unparse(ops["split"][0].returns) == "list[Tensor]"


SAMPLE = """\
import ember

x = ember.randn(3, 4, requires_grad=True)
y = ember.add(x, x, alpha=2)
total: ember.Tensor = y.sum()
linear = ember.nn.Linear(4, 2)
out = linear(x)
values, indices = ember.max(x, 1)
best: ember.Tensor = ember.max(x, dim=1).values
z = x.view(2, 6).permute(1, 0).contiguous()
n: int = x.dim()
w = (x @ x.t() + 1) * 2
rows: int = x.shape[0]
kind: ember.dtype = x.dtype
reveal_type(ember.matmul(x, x.t()).relu_())
reveal_type(ember.zeros(2, 3, dtype=ember.float64).sum(0, keepdim=True))
"""

BAD = """\
import ember

x = ember.randn(3, 4)
ember.add(x, "a")
x.sum(dim="0")
ember.zeros(2, 3, dtype="float32")
name: str = x.dim()
"""


def _mypy(tmp_path, source):
    pytest.importorskip("mypy")
    (tmp_path / "prog.py").write_text(source)
    env = dict(os.environ, MYPYPATH=os.path.dirname(PACKAGE))
    r = subprocess.run([sys.executable, "-m", "mypy", "--follow-imports=silent", "--no-error-summary",
                        "--cache-dir", str(tmp_path / ".mypy_cache"), "prog.py"],
                       cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    return r.returncode, r.stdout + r.stderr


def test_mypy_accepts_a_program_against_the_stubs(tmp_path):
    rc, out = _mypy(tmp_path, SAMPLE + BAD.split("\n", 3)[3])
    lines = out.splitlines()
    errors = [l for l in lines if ": error:" in l]
    # the good half checks clean, with the ops' results typed as ember.Tensor (not Any)
    first_bad = SAMPLE.count("\n") + 1
    assert [l for l in errors if int(l.split(":")[1]) < first_bad] == [], out
    revealed = [l.split("Revealed type is ")[1] for l in lines if "Revealed type is" in l]
    assert revealed == ['"ember._tensor.Tensor"', '"ember._tensor.Tensor"'], out
    # the bad half is caught, line by line
    bad_lines = sorted({int(l.split(":")[1]) for l in errors})
    assert bad_lines == list(range(first_bad, first_bad + 4)), out
    assert rc == 1
    assert re.search(r'Argument 2 to "add" has incompatible type "str"', out)
