"""ember.autograd.profiler: PyTorch's legacy profiler API (profile, record_function, EventList)
over the same recorder as ember.profiler."""
import warnings

from ..profiler._events import EventList, FunctionEvent, FunctionEventAvg  # noqa: F401
from ..profiler.profiler import _ProfileBase, record_function  # noqa: F401

__all__ = ["profile", "record_function", "EventList", "FunctionEvent", "FunctionEventAvg"]


class profile(_ProfileBase):
    """Records every op, autograd node and record_function range while inside the `with` block;
    then key_averages(), table(), export_chrome_trace() and function_events read the results."""

    def __init__(self, enabled=True, *, use_cuda=False, use_device=None, record_shapes=False, with_flops=False,
                 profile_memory=False, with_stack=False, with_modules=False, use_kineto=False, use_cpu=True,
                 experimental_config=None, acc_events=False, custom_trace_id_callback=None,
                 post_processing_timeout_s=None, activity_filters=None):
        if use_cuda:
            warnings.warn("The attribute `use_cuda` will be deprecated soon, please use ``use_device = 'cuda'`` "
                          "instead.", FutureWarning, stacklevel=2)
            use_device = "cuda"
        if use_device not in (None, "cpu", "cuda"):
            warnings.warn(f"Ember profiles the CPU and CUDA only; {use_device} activity is not recorded", stacklevel=2)
        super().__init__(record_shapes, profile_memory, with_stack, "cuda" if use_device == "cuda" else None,
                         keep_host=use_cpu)
        self.enabled = enabled
        self.use_cpu = use_cpu
        self.use_device = "cuda" if use_device == "cuda" else None
        self.entered = False

    def __enter__(self):
        if not self.enabled:
            return self
        if self.entered:
            raise RuntimeError("Profiler context manager is not reentrant")
        self.entered = True
        if self.use_cpu or self.use_device:
            self._start_trace()
        else:
            self.function_events = EventList()
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        if self.enabled:
            self._stop_trace()
        return False

    def __repr__(self):
        return repr(self.function_events) if self.function_events is not None else "<unfinished profiler>"
