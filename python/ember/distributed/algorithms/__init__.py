"""ember.distributed.algorithms: DDP's communication hooks (ddp_comm_hooks)."""
from . import ddp_comm_hooks  # noqa: F401
