#!/usr/bin/env python3
"""Rejects a named IntArrayRef (a local, member or global) built from a braced list or from an
IntArrayRef of one: the view outlives the temporary array it points into (see core/array_ref.h).
GCC cannot diagnose this (clang does, through EMBER_LIFETIME_BOUND); this check runs as a ctest.

    python3 tools/lint/check_array_ref.py [ROOT]      exit status 1 and the offending lines if any
"""
import pathlib
import re
import sys

VIEW = r"\b(?:const\s+)?(?:ember::)?(?:Optional)?IntArrayRef\s+\w+"
BRACED_VIEW = r"(?:ember::)?IntArrayRef\s*(?:\(\s*)?\{"  # IntArrayRef{...} or IntArrayRef({...})
PATTERNS = [
    re.compile(VIEW + r"\s*=\s*\{"),  # IntArrayRef s = {2, 3};
    re.compile(VIEW + r"\s*\{[^}]"),  # IntArrayRef s{2, 3};   (IntArrayRef s{} is an empty view)
    re.compile(VIEW + r"\s*\(\s*\{"),  # IntArrayRef s({2, 3});
    re.compile(VIEW + r"\s*=[^;]*" + BRACED_VIEW),  # IntArrayRef s = c ? IntArrayRef({1}) : t.sizes();
    re.compile(r"\bauto\s*&{0,2}\s*\w+\s*=[^;]*" + BRACED_VIEW),  # auto s = IntArrayRef({2, 3});
]
DIRS = ["csrc", "tests/cpp", "examples/cpp"]


def strip_comment(line):
    i = line.find("//")
    return line if i < 0 else line[:i]


def check(root):
    bad = []
    for d in DIRS:
        for path in sorted((root / d).rglob("*")):
            if path.suffix not in (".h", ".cpp") or path.name == "array_ref.h":
                continue
            for no, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
                code = strip_comment(line)
                if any(p.search(code) for p in PATTERNS):
                    bad.append(f"{path.relative_to(root)}:{no}: {line.strip()}")
    return bad


if __name__ == "__main__":
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).resolve().parents[2])
    bad = check(root)
    for b in bad:
        print(b)
    if bad:
        print(f"{len(bad)} IntArrayRef view(s) of a temporary list: hold the values in a DimVector or "
              "std::vector and view that", file=sys.stderr)
    sys.exit(1 if bad else 0)
