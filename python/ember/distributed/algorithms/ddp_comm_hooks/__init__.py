"""DDP communication hooks and torch's registry of them by name (DDPCommHookType)."""
import enum
from functools import partial

from . import debugging_hooks, default_hooks, powerSGD_hook as powerSGD  # noqa: F401


def _wrap(comm_hook, model, state):
    model.register_comm_hook(state, comm_hook)


def _powerSGD_wrap(comm_hook, model, state, matrix_approximation_rank, start_powerSGD_iter=1_000):
    """PowerSGD at a given rank; `state` here is the process group (None: the default one)."""
    powerSGD_state = powerSGD.PowerSGDState(process_group=state, matrix_approximation_rank=matrix_approximation_rank,
                                            start_powerSGD_iter=start_powerSGD_iter)
    model.register_comm_hook(powerSGD_state, comm_hook)


class DDPCommHookType(enum.Enum):
    """The hooks register_ddp_comm_hook can install by name."""
    ALLREDUCE = partial(_wrap, comm_hook=default_hooks.allreduce_hook)
    FP16_COMPRESS = partial(_wrap, comm_hook=default_hooks.fp16_compress_hook)
    BF16_COMPRESS = partial(_wrap, comm_hook=default_hooks.bf16_compress_hook)
    NOOP = partial(_wrap, comm_hook=debugging_hooks.noop_hook)
    POWER_SGD = partial(_powerSGD_wrap, comm_hook=powerSGD.powerSGD_hook, matrix_approximation_rank=1)
    POWER_SGD_RANK2 = partial(_powerSGD_wrap, comm_hook=powerSGD.powerSGD_hook, matrix_approximation_rank=2)
    BATCHED_POWER_SGD = partial(_powerSGD_wrap, comm_hook=powerSGD.batched_powerSGD_hook, matrix_approximation_rank=1)
    BATCHED_POWER_SGD_RANK2 = partial(_powerSGD_wrap, comm_hook=powerSGD.batched_powerSGD_hook,
                                      matrix_approximation_rank=2)


def register_ddp_comm_hook(comm_hook_type, model, state=None):
    """Installs the hook named by `comm_hook_type` on the DistributedDataParallel `model`."""
    comm_hook_type.value(model=model, state=state)
