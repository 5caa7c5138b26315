"""ember.autograd.graph: the classes of grad_fn objects live here (one per node name)."""
from .. import _C

Node = _C._Node


def _reached_leaves(nodes):
    """The leaf tensors (AccumulateGrad nodes' variables) the graph from `nodes` reaches, each node once,
    lazily (a caller looking for one can stop early)."""
    stack, seen = list(nodes), set()
    while stack:
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        var = getattr(node, "variable", None)
        if var is not None:
            yield var
            continue
        stack.extend(n for n, _ in node.next_functions)
