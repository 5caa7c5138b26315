"""Graph passes over fx GraphModules (torch.fx.passes): shape propagation."""
from . import shape_prop  # noqa: F401
