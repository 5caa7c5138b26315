"""ember.autograd.graph: the classes of grad_fn objects live here (one per node name)."""
from .. import _C

Node = _C._Node
