"""ember.nn.parallel: DataParallel as it behaves without GPUs (PyTorch's CPU build: it wraps the
module and calls it directly) and DistributedDataParallel over ember.distributed."""
from .data_parallel import DataParallel, data_parallel
from .distributed import DistributedDataParallel

__all__ = ["DataParallel", "data_parallel", "DistributedDataParallel"]
