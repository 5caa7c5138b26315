"""ember.fx: symbolic tracing, a graph IR and Python code generation for nn.Modules (torch.fx).

`symbolic_trace(module)` runs forward on Proxy values and records every operation into a Graph of Nodes;
a GraphModule runs the Python code generated from that graph. Interpreter/Transformer walk a graph node
by node, and replace_pattern rewrites subgraphs.
"""
from . import immutable_collections  # noqa: F401
from ._symbolic_trace import PH, Tracer, symbolic_trace, wrap  # noqa: F401
from .graph import CodeGen, Graph  # noqa: F401
from .graph_module import GraphModule  # noqa: F401
from .interpreter import Interpreter, Transformer  # noqa: F401
from .node import Node, has_side_effect, map_arg  # noqa: F401
from .proxy import Proxy  # noqa: F401
from .subgraph_rewriter import replace_pattern  # noqa: F401
from . import passes  # noqa: F401

__all__ = ["symbolic_trace", "Tracer", "wrap", "Graph", "GraphModule", "Interpreter", "Transformer", "Node",
           "Proxy", "replace_pattern", "has_side_effect", "map_arg"]
