"""Default timeouts (torch.distributed.constants)."""
from datetime import timedelta

default_pg_timeout = timedelta(minutes=30)
default_pg_nccl_timeout = default_pg_timeout
