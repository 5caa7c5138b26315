"""Insert or update the `doc:` one-line descriptions of ops.yaml from a mapping file.

Usage: python tools/codegen/add_docs.py MAPPING.tsv [ops.yaml]

MAPPING.tsv holds one `op_name<TAB>description` per line (the name before the overload dot: every
overload of `add` shares `add`'s line; blank lines and lines starting with '#' are skipped). Each
ops.yaml entry gets `doc: "..."` right after its `func:`; an entry that already has one is updated.
Nothing else in the file changes, so running it twice is the same as running it once, and it can be
re-run on a merged ops.yaml. Entries left without a description are listed (gen.py refuses them).
"""
import re
import sys

ENTRY = re.compile(r"""^- \{func: (?P<q>["'])(?P<name>[\w]+)""")
# the func: scalar in either quoting, then an optional existing doc: key
FUNC = re.compile(r"""^(- \{func: (?:"(?:[^"\\]|\\.)*"|'(?:[^']|'')*'))(, doc: "(?:[^"\\]|\\.)*")?""")


def read_mapping(path):
    docs = {}
    for n, line in enumerate(open(path, encoding="utf-8"), 1):
        line = line.rstrip("\n")
        if not line.strip() or line.startswith("#"):
            continue
        name, tab, text = line.partition("\t")
        if not tab or not text.strip():
            raise SystemExit(f"{path}:{n}: expected 'op_name<TAB>description', got {line!r}")
        if "\n" in text or len(text) > 120:
            raise SystemExit(f"{path}:{n}: a description is one short line (at most 120 characters)")
        docs[name.strip()] = text.strip()
    return docs


def yaml_quote(text):
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def apply(lines, docs):
    """The lines with their doc: keys set from `docs`, and the entry names `docs` has nothing for."""
    out, missing = [], []
    for line in lines:
        m = ENTRY.match(line)
        if not m:
            out.append(line)
            continue
        name = m.group("name")
        f = FUNC.match(line)
        if f is None:
            raise SystemExit(f"cannot parse the func: of ops.yaml line {line.strip()!r}")
        if name not in docs:
            if not f.group(2):
                missing.append(name)
            out.append(line)
            continue
        out.append(f.group(1) + ", doc: " + yaml_quote(docs[name]) + line[f.end():])
    return out, missing


def main(argv):
    if len(argv) not in (2, 3):
        raise SystemExit(__doc__)
    mapping, target = argv[1], argv[2] if len(argv) == 3 else "ops.yaml"
    docs = read_mapping(mapping)
    with open(target, encoding="utf-8", newline="") as f:
        lines = f.read().splitlines(keepends=True)
    out, missing = apply(lines, docs)
    if out != lines:
        with open(target, "w", encoding="utf-8", newline="") as f:
            f.writelines(out)
    if missing:
        print(f"add_docs: {len(set(missing))} ops.yaml entries have no description: {', '.join(sorted(set(missing)))}",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
