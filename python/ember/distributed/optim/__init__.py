"""ember.distributed.optim: ZeroRedundancyOptimizer (optimizer state sharded across ranks),
PostLocalSGDOptimizer (local steps plus periodic model averaging) and as_functional_optim.

torch's DistributedOptimizer is absent: it optimizes parameters held by other processes through
torch.distributed.rpc remote references, and Ember has no RPC framework."""
from .post_localSGD_optimizer import PostLocalSGDOptimizer  # noqa: F401
from .utils import as_functional_optim  # noqa: F401
from .zero_redundancy_optimizer import ZeroRedundancyOptimizer  # noqa: F401

__all__ = ["as_functional_optim", "PostLocalSGDOptimizer", "ZeroRedundancyOptimizer"]
