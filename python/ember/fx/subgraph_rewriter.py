"""Subgraph rewriting: find every non-overlapping occurrence of a pattern graph and replace it with a
replacement graph (torch.fx.subgraph_rewriter)."""
from dataclasses import dataclass, field
from typing import Dict, List, NamedTuple

from ._symbolic_trace import symbolic_trace
from .graph import Graph
from .graph_module import GraphModule
from .node import Node

__all__ = ["Match", "replace_pattern", "replace_pattern_with_filters", "ReplacedPatterns"]


class Match(NamedTuple):
    """One replaced occurrence: the anchor (the pattern's returned node) and pattern->graph nodes."""

    anchor: Node
    nodes_map: Dict[Node, Node]


@dataclass
class ReplacedPatterns:
    """One replaced occurrence with the nodes that replaced it."""

    anchor: Node
    nodes_map: Dict[Node, Node]
    replacements: List[Node] = field(default_factory=list)


def _as_graph(obj):
    if isinstance(obj, GraphModule):
        return obj.graph
    if isinstance(obj, Graph):
        return obj
    return symbolic_trace(obj).graph


def _match(pn, gn, nodes_map, ignore_literals):
    """Whether pattern node `pn` matches graph node `gn` (recursively through the inputs)."""
    if pn in nodes_map:
        return nodes_map[pn] is gn
    if pn.op == "placeholder":
        if gn in nodes_map.values() and not isinstance(gn, Node):
            return False
        nodes_map[pn] = gn
        return True
    if not isinstance(gn, Node) or pn.op != gn.op:
        return False
    if pn.op == "get_attr":
        if pn.target != gn.target:
            return False
    elif pn.target != gn.target:
        return False
    if len(pn.args) != len(gn.args) or set(pn.kwargs) != set(gn.kwargs):
        return False
    saved = dict(nodes_map)
    nodes_map[pn] = gn

    def match_arg(pa, ga):
        if isinstance(pa, Node):
            if pa.op == "placeholder" and pa not in nodes_map:
                nodes_map[pa] = ga
                return True
            if pa.op == "placeholder":
                return nodes_map[pa] is ga if isinstance(ga, Node) else nodes_map[pa] == ga
            return isinstance(ga, Node) and _match(pa, ga, nodes_map, ignore_literals)
        if isinstance(pa, (list, tuple)):
            return isinstance(ga, (list, tuple)) and len(pa) == len(ga) and all(
                match_arg(a, b) for a, b in zip(pa, ga))
        if isinstance(pa, dict):
            return isinstance(ga, dict) and set(pa) == set(ga) and all(match_arg(pa[k], ga[k]) for k in pa)
        if ignore_literals:
            return not isinstance(ga, Node)
        return type(pa) is type(ga) and pa == ga

    ok = all(match_arg(a, b) for a, b in zip(pn.args, gn.args)) and \
        all(match_arg(pn.kwargs[k], gn.kwargs[k]) for k in pn.kwargs)
    if not ok:
        nodes_map.clear()
        nodes_map.update(saved)
    return ok


def _find_matches(graph, pattern_graph, ignore_literals):
    output = next(n for n in reversed(pattern_graph.nodes) if n.op == "output")
    anchors = output.all_input_nodes
    if len(anchors) != 1:
        raise NotImplementedError("ember.fx.replace_pattern supports patterns with a single returned value")
    anchor = anchors[0]
    matches = []
    taken = set()
    for gn in graph.nodes:
        nodes_map = {}
        if not _match(anchor, gn, nodes_map, ignore_literals):
            continue
        internal = [g for p, g in nodes_map.items() if p.op != "placeholder"]
        # internal nodes other than the anchor must not be used outside the match
        internal_set = set(internal)
        if any(u not in internal_set for g in internal if g is not gn for u in g.users):
            continue
        if internal_set & taken:
            continue
        if any(nodes_map[p] in internal_set for p in nodes_map if p.op == "placeholder"):
            continue
        taken |= internal_set
        matches.append((gn, nodes_map))
    return matches


def _replace(gm, pattern, replacement, match_filters=None, ignore_literals=False):
    original_graph = gm.graph
    pattern_graph = _as_graph(pattern)
    replacement_graph = _as_graph(replacement)
    pattern_placeholders = [n for n in pattern_graph.nodes if n.op == "placeholder"]
    replacement_placeholders = [n for n in replacement_graph.nodes if n.op == "placeholder"]
    if len(pattern_placeholders) != len(replacement_placeholders):
        raise AssertionError("pattern and replacement must take the same number of inputs")
    found = _find_matches(original_graph, pattern_graph, ignore_literals)
    pattern_anchor = next(n for n in reversed(pattern_graph.nodes) if n.op == "output").all_input_nodes[0]
    # a match whose input is the output of an earlier (already replaced and erased) match reads the value
    # that replaced it instead, as torch's match_changed_node
    changed = {}
    if match_filters:
        # as torch's, every filter sees the matches before any replacement is made
        found = [(anchor, nodes_map) for anchor, nodes_map in found
                 if all(f(_FilterMatch([pattern_anchor], nodes_map,
                                       [nodes_map[p] for p in pattern_placeholders], [anchor]),
                          original_graph, pattern_graph) for f in match_filters)]
    results = []
    for anchor, nodes_map in found:
        for pp in pattern_placeholders:
            gn = nodes_map.get(pp)
            if isinstance(gn, Node):
                while gn in changed:
                    gn = changed[gn]
                nodes_map[pp] = gn
        val_map = {rp: nodes_map[pp] for pp, rp in zip(pattern_placeholders, replacement_placeholders)}
        before = set(original_graph.nodes)
        # the replacement goes just before the first user of the matched value, as torch's
        order = {n: i for i, n in enumerate(original_graph.nodes)}
        insert_at = min(anchor.users, key=order.__getitem__) if anchor.users else anchor
        with original_graph.inserting_before(insert_at):
            copied = original_graph.graph_copy(replacement_graph, val_map)
        replacements = [n for n in original_graph.nodes if n not in before]
        if not isinstance(copied, Node):
            raise NotImplementedError("the replacement must return a single value")
        anchor.replace_all_uses_with(copied)
        changed[anchor] = copied
        for pn in reversed(list(pattern_graph.nodes)):
            if pn.op in ("placeholder", "output") or pn not in nodes_map:
                continue
            gn = nodes_map[pn]
            if len(gn.users) == 0 and not gn._erased:
                original_graph.erase_node(gn)
        results.append(ReplacedPatterns(pattern_anchor, nodes_map, replacements))
    gm.recompile()
    return results


class _FilterMatch(NamedTuple):
    anchors: List[Node]
    nodes_map: Dict[Node, Node]
    placeholder_nodes: List[Node]
    returning_nodes: List[Node]


def replace_pattern(gm, pattern, replacement):
    """Replaces every non-overlapping occurrence of `pattern` in gm's graph with `replacement` (callables
    or graphs), recompiles gm and returns the list of Matches."""
    return [Match(anchor=m.anchor, nodes_map=m.nodes_map) for m in _replace(gm, pattern, replacement)]


def replace_pattern_with_filters(gm, pattern, replacement=None, match_filters=None, ignore_literals=False,
                                 replacement_callback=None, node_name_match=""):
    """replace_pattern, keeping only matches every filter(match, original_graph, pattern_graph) accepts;
    returns ReplacedPatterns."""
    if replacement_callback is not None:
        raise NotImplementedError("replacement_callback is not supported by Ember")
    return _replace(gm, pattern, replacement, match_filters, ignore_literals)
