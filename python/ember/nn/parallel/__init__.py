"""ember.nn.parallel: DataParallel as it behaves without GPUs (PyTorch's CPU build): it wraps the
module and calls it directly."""
from .data_parallel import DataParallel, data_parallel

__all__ = ["DataParallel", "data_parallel"]
