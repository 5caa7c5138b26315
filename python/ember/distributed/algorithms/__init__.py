"""ember.distributed.algorithms: DDP's communication hooks (ddp_comm_hooks) and Join for uneven inputs."""
from . import ddp_comm_hooks  # noqa: F401
from .join import Join, Joinable, JoinHook  # noqa: F401
