"""help() text: every public function, class, Tensor method and property of the namespaces that
tools/api_surface.py measures has a one-line description; ops.yaml's `doc:` keys and the script
that writes them (tools/codegen/add_docs.py)."""
import inspect
import os
import re
import subprocess
import sys
import types

import pytest

import ember

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
sys.path.insert(0, os.path.join(ROOT, "tools"))
sys.path.insert(0, os.path.join(ROOT, "tools", "codegen"))
import add_docs  # noqa: E402
import api_surface  # noqa: E402

# a line that is only a signature: nanobind renders `name(args) -> ret` above a function's docstring
_SIGNATURE = re.compile(r"^[\w.]*\(.*\)(\s*->.*)?$")


def description(doc):
    """The first line of `doc` that is neither blank nor a bare signature ('' when there is none)."""
    for line in (doc or "").splitlines():
        line = line.strip()
        if line and not _SIGNATURE.match(line):
            return line
    return ""


def is_description(line):
    # a phrase, not a lone word or a placeholder
    return len(line.split()) >= 2 and not line.lower().startswith(("todo", "xxx", "fixme"))


def _own_doc(obj):
    # a class's docstring is its own: the base class's does not describe it
    return obj.__dict__.get("__doc__") if isinstance(obj, type) else getattr(obj, "__doc__", None)


def _defined_in_ember(obj):
    mod = getattr(obj, "__module__", None)
    return mod is None or (isinstance(mod, str) and mod.split(".")[0] == "ember")


def _public_callables():
    """(qualified name, object) of every public callable each measured namespace defines (Tensor aside)."""
    seen = set()
    for label, path in api_surface.NAMESPACES:
        if label == "Tensor":
            continue
        ns = api_surface.resolve("ember", path)
        if ns is None:
            continue
        for name in sorted(dir(ns)):
            if name.startswith("_"):
                continue
            try:
                obj = getattr(ns, name)
            except Exception:  # noqa: BLE001 - an attribute that raises is no API to document
                continue
            if isinstance(obj, types.ModuleType) or not callable(obj) or not _defined_in_ember(obj):
                continue
            if id(obj) not in seen:
                seen.add(id(obj))
                yield f"{label}.{name}", obj


def test_public_functions_and_classes_have_descriptions():
    bad = [name for name, obj in _public_callables() if not is_description(description(_own_doc(obj)))]
    assert not bad, f"{len(bad)} without a one-line description: {bad}"


def test_tensor_methods_and_properties_have_descriptions():
    bad = []
    for name in sorted(dir(ember.Tensor)):
        if name.startswith("_"):
            continue
        raw = inspect.getattr_static(ember.Tensor, name)
        if isinstance(raw, property) or callable(raw) or isinstance(raw, (staticmethod, classmethod)):
            if not is_description(description(getattr(raw, "__doc__", None))):
                bad.append(name)
    assert not bad, f"{len(bad)} Tensor attributes without a one-line description: {bad}"


def test_walk_sees_every_kind_of_callable():
    """The walk above reaches generated ops, nanobind functions, Python functions and classes."""
    names = dict(_public_callables())
    assert names["torch.add"] is ember.add and names["torch.get_default_dtype"] is ember.get_default_dtype
    assert names["nn.Linear"] is ember.nn.Linear
    assert names["optim.lr_scheduler.StepLR"] is ember.optim.lr_scheduler.StepLR
    assert description(ember.get_default_dtype.__doc__) != ember.get_default_dtype.__doc__.splitlines()[0]


def test_description_rejects_what_is_not_one():
    assert description("add(Tensor input) -> Tensor\n\nElementwise sum.") == "Elementwise sum."
    assert description("(self) -> object") == ""
    assert not is_description(description(None)) and not is_description("TODO fill in")
    assert not is_description("Sum.") and is_description("Elementwise sum.")


def test_generated_op_help_starts_with_its_description():
    lines = ember.add.__doc__.splitlines()
    assert lines[0] == "Elementwise sum input + alpha * other, with broadcasting." and lines[1] == ""
    assert lines[2].startswith("add(Tensor input, Tensor other")
    # the in-place method says so; the nn.functional builtins carry theirs too
    assert ember.Tensor.abs_.__doc__.splitlines()[0] == "Elementwise absolute value, in place."
    assert ember._C._nn.gelu.__doc__.splitlines()[0].startswith("Gaussian error linear unit")


# ---------------------------------------------------------------- ops.yaml doc: keys

SAMPLE = (
    "# header\n"
    '- {func: "abs(Tensor self) -> Tensor", kernel: unary Abs, out: true}\n'
    '- {func: "max(Tensor self) -> Tensor", doc: "Old text.", variants: [function]}\n'
    '- {func: "max.dim(Tensor self, int dim) -> (Tensor values, Tensor indices)"}\n'
    "- {func: 'gelu(Tensor self, *, str approximate=\"none\") -> Tensor', python_module: nn}\n"
    "\n# ---- section\n"
)


def _run_add_docs(tmp_path, mapping, text):
    m, y = tmp_path / "docs.tsv", tmp_path / "ops.yaml"
    m.write_text(mapping)
    y.write_bytes(text.encode())
    rc = add_docs.main(["add_docs.py", str(m), str(y)])
    return rc, y.read_bytes().decode()


def test_add_docs_inserts_updates_and_is_idempotent(tmp_path):
    import yaml
    mapping = "# comment\nabs\tElementwise absolute value.\nmax\tLargest \"element\".\ngelu\tGELU\\ unit.\n"
    rc, once = _run_add_docs(tmp_path, mapping, SAMPLE)
    assert rc == 0
    lines = once.splitlines()
    assert lines[1] == ('- {func: "abs(Tensor self) -> Tensor", doc: "Elementwise absolute value.", '
                        "kernel: unary Abs, out: true}")
    assert lines[2] == '- {func: "max(Tensor self) -> Tensor", doc: "Largest \\"element\\".", variants: [function]}'
    assert ', doc: "Largest' in lines[3]  # every overload gets its name's text
    # everything else is unchanged, byte for byte, and YAML reads the quoted text back
    assert re.sub(r', doc: "(?:[^"\\]|\\.)*"', "", once) == re.sub(r', doc: "Old text."', "", SAMPLE)
    entries = yaml.safe_load(once)
    assert [e["doc"] for e in entries] == ["Elementwise absolute value.", 'Largest "element".',
                                           'Largest "element".', "GELU\\ unit."]
    rc, twice = _run_add_docs(tmp_path, mapping, once)
    assert rc == 0 and twice == once


def test_add_docs_reports_entries_left_without_a_description(tmp_path, capsys):
    rc, text = _run_add_docs(tmp_path, "abs\tElementwise absolute value.\n", SAMPLE)
    assert rc == 1
    err = capsys.readouterr().err
    # max.dim has none (max's own doc: is kept as it is, but does not cover its overload)
    assert err.split(":")[-1].split() == ["gelu,", "max"]
    assert ', doc: "Old text."' in text
    with pytest.raises(SystemExit, match="op_name<TAB>description"):
        _run_add_docs(tmp_path, "abs Elementwise absolute value.\n", SAMPLE)


def test_every_ops_yaml_entry_has_a_doc():
    import yaml
    with open(os.path.join(ROOT, "ops.yaml")) as f:
        entries = yaml.safe_load(f)
    bad = [e["func"].split("(")[0] for e in entries if not is_description(str(e.get("doc", "")))]
    assert not bad, bad


def test_codegen_refuses_an_entry_without_doc(tmp_path):
    y = tmp_path / "ops.yaml"
    y.write_text('# ---- unary\n- {func: "abs(Tensor self) -> Tensor", kernel: unary Abs}\n')
    gen = os.path.join(ROOT, "tools", "codegen", "gen.py")
    r = subprocess.run([sys.executable, gen, str(y), str(tmp_path / "out")], capture_output=True, text=True)
    assert r.returncode != 0 and "without a one-line `doc:` description: abs" in r.stderr
