"""ember.profiler: PyTorch's torch.profiler for Ember's ops, and with CUDA the GPU's kernels (see profiler.py)."""
from .profiler import (  # noqa: F401
    ProfilerAction, ProfilerActivity, profile, record_function, schedule, supported_activities,
    tensorboard_trace_handler,
)
from ._events import DeviceType, EventList, FunctionEvent, FunctionEventAvg  # noqa: F401

__all__ = ["DeviceType", "profile", "record_function", "schedule", "ProfilerAction", "ProfilerActivity",
           "supported_activities", "tensorboard_trace_handler"]
