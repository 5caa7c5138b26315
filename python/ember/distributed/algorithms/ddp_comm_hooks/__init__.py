"""DDP communication hooks and torch's registry of them by name (DDPCommHookType)."""
import enum
from functools import partial

from . import debugging_hooks, default_hooks  # noqa: F401


def _wrap(comm_hook, model, state):
    model.register_comm_hook(state, comm_hook)


class DDPCommHookType(enum.Enum):
    """The hooks register_ddp_comm_hook can install by name."""
    ALLREDUCE = partial(_wrap, comm_hook=default_hooks.allreduce_hook)
    FP16_COMPRESS = partial(_wrap, comm_hook=default_hooks.fp16_compress_hook)
    BF16_COMPRESS = partial(_wrap, comm_hook=default_hooks.bf16_compress_hook)
    NOOP = partial(_wrap, comm_hook=debugging_hooks.noop_hook)


def register_ddp_comm_hook(comm_hook_type, model, state=None):
    """Installs the hook named by `comm_hook_type` on the DistributedDataParallel `model`."""
    comm_hook_type.value(model=model, state=state)
