"""The nested containers ember.func's transforms accept (tuples, lists, dicts, namedtuples): flattened
into leaves plus a TreeSpec that rebuilds them. Anything else is a leaf."""
import collections


class TreeSpec:
    """The shape of a container tree: node type, context (dict keys / namedtuple type) and children."""

    __slots__ = ("type", "context", "children", "num_leaves")

    def __init__(self, type_, context, children):
        self.type, self.context, self.children = type_, context, children
        self.num_leaves = 1 if type_ is None else sum(c.num_leaves for c in children)

    def is_leaf(self):
        return self.type is None

    def __eq__(self, other):
        return (isinstance(other, TreeSpec) and self.type is other.type and self.context == other.context
                and self.children == other.children)

    def __hash__(self):
        return hash((self.type, len(self.children)))

    def __repr__(self, indent=0):
        if self.type is None:
            return "*"
        context = list(self.context) if isinstance(self.context, (list, tuple)) else self.context
        if context is not None and not isinstance(context, list):
            context = context.__name__
        pad = " " * (indent + 2)
        kids = f",\n{pad}".join(c.__repr__(indent + 2) for c in self.children)
        return f"TreeSpec({self.type.__name__}, {context}, [{kids}])"


    def pprint(self):
        """The structure written as the containers would be, leaves as '*': "(*, {'k': *})"."""
        if self.type is None:
            return "*"
        kids = [c.pprint() for c in self.children]
        if self.type is collections.namedtuple:
            return f"{self.context.__name__}(" + ", ".join(f"{f}={k}" for f, k in zip(self.context._fields, kids)) + ")"
        if issubclass(self.type, dict):
            return "{" + ", ".join(f"{key!r}: {k}" for key, k in zip(self.context, kids)) + "}"
        if issubclass(self.type, list):
            return "[" + ", ".join(kids) + "]"
        return "(" + ", ".join(kids) + ("," if len(kids) == 1 else "") + ")"


LEAF = TreeSpec(None, None, [])


def _is_namedtuple(x):
    return isinstance(x, tuple) and hasattr(type(x), "_fields")


def _children(x):
    """(node type, context, children) of a container, or None for a leaf."""
    if isinstance(x, (list, dict)) or (isinstance(x, tuple) and not _is_namedtuple(x)):
        if isinstance(x, dict):
            keys = list(x.keys())
            return type(x), keys, [x[k] for k in keys]
        return type(x), None, list(x)
    if _is_namedtuple(x):
        return collections.namedtuple, type(x), list(x)
    return None


def tree_flatten(tree):
    leaves = []

    def walk(x):
        node = _children(x)
        if node is None:
            leaves.append(x)
            return LEAF
        type_, context, kids = node
        return TreeSpec(type_, context, [walk(k) for k in kids])

    spec = walk(tree)
    return leaves, spec


def tree_unflatten(leaves, spec):
    it = iter(leaves)

    def build(s):
        if s.type is None:
            return next(it)
        kids = [build(c) for c in s.children]
        if s.type is collections.namedtuple:
            return s.context(*kids)
        if issubclass(s.type, dict):
            return s.type(zip(s.context, kids))
        return s.type(kids)

    return build(spec)


def tree_map(fn, tree):
    leaves, spec = tree_flatten(tree)
    return tree_unflatten([fn(x) for x in leaves], spec)


def broadcast_prefix(prefix, spec):
    """One value per leaf of `spec`: each leaf of `prefix` (a tree whose structure is a prefix of
    `spec`'s) applies to every leaf under its position. None when `prefix` does not fit `spec`."""
    out = []

    def walk(p, s):
        node = _children(p)
        if node is None:
            out.extend([p] * s.num_leaves)
            return True
        type_, context, kids = node
        if s.type is None or type_ is not s.type or len(kids) != len(s.children):
            return False
        if type_ is collections.namedtuple and context is not s.context:
            return False
        if issubclass(type_, dict) and set(context) != set(s.context):
            return False
        if issubclass(type_, dict):  # match by key, not by insertion order
            kids = [p[k] for k in s.context]
        return all(walk(k, c) for k, c in zip(kids, s.children))

    return out if walk(prefix, spec) else None
