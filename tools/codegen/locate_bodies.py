"""Finds where each ops.yaml op's hand-written body lives and records it as the op's `body:` key.

    python tools/codegen/locate_bodies.py [--write]     (from the repository root)

An op without `kernel:` is written by hand as ember::native::<name> (or <name>_ / <name>_out) in some
.cpp under csrc/ember; the generator copies `body:` into the generated files so that `grep` leads from
an op's declaration to its body. Without --write it lists ops whose `body:` is missing or wrong (what
tests/python/test_codegen_bodies.py checks) and exits 1 if there are any.
"""
import os
import re
import sys

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SRC = os.path.join(ROOT, "csrc", "ember")
# a definition at column 0: return type, name, parameter list opening
DEF = re.compile(r"^(?:const\s+)?[\w:<>,&\s]+?[\s&*](\w+)\(", re.M)


def native_definitions():
    """name -> set of files (relative to csrc/ember) defining ember::native::name."""
    found = {}
    for d, _, files in os.walk(SRC):
        for f in files:
            if not f.endswith(".cpp"):
                continue
            path = os.path.join(d, f)
            text = open(path, encoding="utf-8").read()
            if "namespace ember::native" not in text and "namespace native" not in text:
                continue
            rel = os.path.relpath(path, SRC)
            for name in list(m.group(1) for m in DEF.finditer(text)) + macro_names(text):
                found.setdefault(name, set()).add(rel)
    return found


def macro_names(text):
    """Functions a file defines through its own macros: EMBER_ADDX(addmv, ...) whose first parameter
    names the function, or EMBER_CONV(2) whose body pastes conv##N##d."""
    names = []
    for m in re.finditer(r"^#define (\w+)\((\w+)[^)]*\)((?:.*\\\n)*.*)", text, re.M):
        macro, param, body = m.groups()
        pasted = re.findall(r"(\w*)##" + param + r"##(\w*)", body)
        for inv in re.finditer(r"^" + macro + r"\((\w+)", text, re.M):
            arg = inv.group(1)
            names += [pre + arg + post for pre, post in pasted] or [arg]
    return names


def op_name(entry):
    return entry["func"].split("(")[0].split(".")[0]


def expected_body(entry, defs):
    """The file defining the op's native function(s), or None if it has a generated (kernel) body."""
    if "kernel" in entry:
        return None
    name = op_name(entry)
    for candidate in (name, name + "_", name + "_out"):
        if candidate in defs:
            return sorted(defs[candidate])[0]
    return "?"


def check(entries, defs):
    bad = []
    for e in entries:
        want = expected_body(e, defs)
        if want is None:
            if "body" in e:
                bad.append((e["func"], e["body"], "a kernel op has a generated body"))
            continue
        name = op_name(e)
        files = set().union(*(defs.get(c, set()) for c in (name, name + "_", name + "_out")))
        if e.get("body") not in files:
            bad.append((e["func"], e.get("body"), want))
    return bad


def write(path, entries, defs):
    lines = open(path, encoding="utf-8").read().split("\n")
    it = iter(entries)
    for i, line in enumerate(lines):
        if not line.startswith("- {"):
            continue
        e = next(it)
        want = expected_body(e, defs)
        line = re.sub(r", body: [\w/.]+\}$", "}", line)
        if want and want != "?":
            line = line[:-1] + f", body: {want}}}"
        lines[i] = line
    open(path, "w", encoding="utf-8").write("\n".join(lines))


def main():
    path = os.path.join(ROOT, "ops.yaml")
    entries = yaml.safe_load(open(path, encoding="utf-8"))
    defs = native_definitions()
    if "--write" in sys.argv:
        write(path, entries, defs)
        entries = yaml.safe_load(open(path, encoding="utf-8"))
    bad = check(entries, defs)
    for func, have, want in bad:
        print(f"{func}: body {have!r}, defined in {want}")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
