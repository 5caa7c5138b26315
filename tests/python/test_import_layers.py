"""The layers of the ember package, checked from its source with `ast` (nothing is imported).

What counts as an edge A -> B (module A imports module B):
- every `import ember.x.y` / `from ember.x import y` / relative `from ..x import y` in A, at the top
  level *and* inside functions, methods, classes and `if`/`try` blocks. A lazy import inside a
  function still makes A depend on B; hiding it in a function only moves the circle to run time.
- `from pkg import name` is an edge to `pkg.name` when that is a module (a submodule import binds
  the submodule, not the package's other contents), otherwise to `pkg`.
- importing `ember.a.b` does not add edges to its parent packages `ember` and `ember.a`, though
  Python runs their `__init__` first: a package's `__init__` is a facade that imports its contents,
  so counting parents would make every module of a package a circle with its own `__init__`.
- `import ember` is an edge to `ember` (its `__init__`, the top, which imports every layer so that
  their hooks are installed). So no module that `ember/__init__` imports may name `ember` itself;
  the namespaces loaded on demand (ember.distributions, ember.vision) sit above the top and may.
- `importlib.import_module(...)` with a computed name is not seen; ember uses it only in
  `ember.__getattr__`, to load those on-demand namespaces.
- the C++ extension `ember._C` (and `ember._C._ops`, ...) is one leaf: it imports no Python module.

Held to:
- the graph has no cycle;
- the Tensor layer (ember._tensor, _tensor_str, _utils and everything they import, directly or not)
  reaches nothing of nn, serialization, multiprocessing or utils.data, nor `ember` itself: those
  layers install Tensor's pickling, deep-copy and shared-memory hooks instead (ember._tensor's
  _install_layer_hook).
"""
import ast
import pathlib

import pytest

PKG_ROOT = pathlib.Path(__file__).resolve().parents[2] / "python" / "ember"

# The Tensor layer: the Tensor class and what it is built from.
TENSOR_LAYER = ("ember._tensor", "ember._tensor_str", "ember._utils")
HIGHER_LAYERS = ("ember.nn", "ember.serialization", "ember.multiprocessing", "ember.utils.data")


def _module_name(path):
    rel = path.relative_to(PKG_ROOT.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules():
    mods = {_module_name(p): p for p in sorted(PKG_ROOT.rglob("*.py"))}
    # the C++ extension (built, maybe absent from a fresh checkout) is the bottom layer: a leaf
    mods["ember._C"] = None
    return mods


def _resolve_from(module, is_package, node):
    """The absolute module a `from ... import` statement names (None: not inside ember)."""
    if node.level == 0:
        return node.module
    base = module.split(".")
    if not is_package:
        base = base[:-1]  # a plain module's relative imports start at its package
    if node.level > 1:
        base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _imports_of(module, path, known):
    """[(target module, line)] for every import of an ember module in the file."""
    if path is None:
        return []
    tree = ast.parse(path.read_text(), filename=str(path))
    is_package = path.name == "__init__.py"
    found = []

    def add(target, line):
        # the longest known module prefix: `ember.nn.functional.relu` -> ember.nn.functional
        while target and target not in known:
            target = target.rpartition(".")[0]
        if target and target != module:
            found.append((target, line))

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == "ember" or alias.name.startswith("ember."):
                    add(alias.name, node.lineno)
        elif isinstance(node, ast.ImportFrom):
            base = _resolve_from(module, is_package, node)
            if not base or not (base == "ember" or base.startswith("ember.")):
                continue
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                add(sub if sub in known else base, node.lineno)
    return found


def _graph():
    mods = _modules()
    graph = {}
    for name, path in mods.items():
        graph[name] = {}
        for target, line in _imports_of(name, path, mods):
            graph[name].setdefault(target, line)
    return graph, mods


def _find_cycle(graph):
    """One cycle as a list of modules (first == last), or None. Iterative DFS, three colours."""
    WHITE, GREY, BLACK = 0, 1, 2
    colour = dict.fromkeys(graph, WHITE)
    for root in sorted(graph):
        if colour[root] != WHITE:
            continue
        stack = [(root, iter(sorted(graph[root])))]
        path = [root]
        colour[root] = GREY
        while stack:
            node, children = stack[-1]
            child = next(children, None)
            if child is None:
                colour[node] = BLACK
                stack.pop()
                path.pop()
            elif colour.get(child, BLACK) == GREY:
                return path[path.index(child):] + [child]
            elif colour.get(child) == WHITE:
                colour[child] = GREY
                path.append(child)
                stack.append((child, iter(sorted(graph[child]))))
    return None


def _describe(cycle, graph, mods):
    steps = []
    for a, b in zip(cycle, cycle[1:]):
        steps.append(f"  {a} -> {b}   ({mods[a].relative_to(PKG_ROOT.parent)}:{graph[a][b]})")
    return "import cycle:\n" + "\n".join(steps)


def test_graph_sees_the_package():
    # the parser must find the modules and their imports, or the tests below pass vacuously
    graph, mods = _graph()
    assert {"ember", "ember._tensor", "ember.nn", "ember.serialization", "ember.utils.data.dataloader"} <= set(mods)
    assert "ember._tensor" in graph["ember"]
    assert "ember.nn.modules.module" in graph["ember.nn.modules.linear"]  # from .module import Module
    assert "ember.multiprocessing" in graph["ember.utils.data._multiprocessing_iter"]  # from ... import multiprocessing
    assert "ember.autograd._engine" in graph["ember.autograd.gradcheck"]
    assert "ember._C" in graph["ember._tensor"]
    assert sum(len(v) for v in graph.values()) > 200


def test_cycle_finder_finds_a_cycle():
    g = {"a": {"b": 1}, "b": {"c": 1}, "c": {"a": 1}, "d": {"a": 1}}
    assert _find_cycle(g) == ["a", "b", "c", "a"]
    assert _find_cycle({"a": {"b": 1}, "b": {}, "c": {"a": 1, "b": 1}}) is None


def test_relative_imports_resolve():
    node = ast.parse("from ..modules import module").body[0]
    assert _resolve_from("ember.nn.modules.linear", False, node) == "ember.nn.modules"
    node = ast.parse("from . import _C").body[0]
    assert _resolve_from("ember", True, node) == "ember"
    node = ast.parse("from ... import multiprocessing as mp").body[0]
    assert _resolve_from("ember.utils.data.dataloader", False, node) == "ember"


def test_no_import_cycles():
    graph, mods = _graph()
    cycle = _find_cycle(graph)
    assert cycle is None, _describe(cycle, graph, mods)


def _is_higher(module):
    return module == "ember" or any(module == h or module.startswith(h + ".") for h in HIGHER_LAYERS)


def _higher_layers_reached(graph, roots):
    """[import chain] from a root to each higher-layer module it reaches (breadth first)."""
    parent = {r: None for r in roots}
    queue, found = list(roots), []
    while queue:
        node = queue.pop(0)
        if _is_higher(node):
            chain = [node]
            while parent[chain[-1]] is not None:
                chain.append(parent[chain[-1]])
            found.append(chain[::-1])
            continue
        for child in sorted(graph.get(node, ())):
            if child not in parent:
                parent[child] = node
                queue.append(child)
    return found


def test_higher_layer_search_finds_a_chain():
    g = {"ember._tensor": {"ember.x": 1}, "ember.x": {"ember.serialization": 2}, "ember.serialization": {}}
    assert _higher_layers_reached(g, ["ember._tensor"]) == [["ember._tensor", "ember.x", "ember.serialization"]]


def test_tensor_layer_imports_no_higher_layer():
    graph, mods = _graph()
    chains = _higher_layers_reached(graph, TENSOR_LAYER)
    lines = []
    for chain in chains:
        steps = [f"{a} -> {b} ({mods[a].relative_to(PKG_ROOT.parent)}:{graph[a][b]})"
                 for a, b in zip(chain, chain[1:])]
        lines.append("  " + ", ".join(steps))
    assert not chains, "the Tensor layer imports a higher layer:\n" + "\n".join(lines)


def test_higher_layers_install_the_tensor_hooks():
    # `import ember` imports serialization and multiprocessing, which fill in what Tensor delegates
    import copy
    import pickle

    import ember
    from ember import _tensor, serialization
    from ember.multiprocessing import _reductions
    assert _tensor._LAYER_HOOKS == {"reduce_ex": serialization._tensor_reduce,
                                    "deepcopy": serialization._deepcopy_tensor,
                                    "share_memory": _reductions.share_memory_}
    t = ember.arange(6.0).reshape(2, 3)[:, 1:]
    assert ember.equal(pickle.loads(pickle.dumps(t)), t)
    assert ember.equal(copy.deepcopy(t), t)
    with pytest.raises(KeyError, match="no_such_protocol"):
        _tensor._install_layer_hook("no_such_protocol", len)
