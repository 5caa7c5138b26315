"""ember.nn.parallel: DataParallel as it behaves without GPUs (PyTorch's CPU build: it wraps the
module and calls it directly), DistributedDataParallel over ember.distributed, and the functional
pieces (scatter, gather, replicate, parallel_apply) with the CPU build's behaviour."""
from .data_parallel import DataParallel, data_parallel
from .distributed import DistributedDataParallel
from .replicate import parallel_apply, replicate
from .scatter_gather import gather, scatter

__all__ = ["replicate", "scatter", "parallel_apply", "gather", "data_parallel", "DataParallel",
           "DistributedDataParallel"]
