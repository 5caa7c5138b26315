"""Model averaging (torch.distributed.algorithms.model_averaging): parameters averaged across ranks every few
steps, for post-local SGD (DDP averages gradients in subgroups; the averager, globally, now and then)."""
from . import averagers, utils  # noqa: F401
