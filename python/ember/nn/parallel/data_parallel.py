"""DataParallel on a CPU-only build. With no GPU to replicate onto, PyTorch's DataParallel keeps
the module, records no devices and forwards straight to it; its state_dict keys carry the
`module.` prefix because the wrapped module is a submodule."""
from ..modules.module import Module


class DataParallel(Module):
    """DataParallel(module, device_ids=None, output_device=None, dim=0): without GPUs, forward is
    module(*inputs, **kwargs) and device_ids is []."""

    def __init__(self, module, device_ids=None, output_device=None, dim=0):
        super().__init__()
        self.module = module
        self.device_ids = []  # no accelerator: the requested ids are ignored, as in PyTorch

    def forward(self, *inputs, **kwargs):
        return self.module(*inputs, **kwargs)


def data_parallel(module, inputs, device_ids=None, output_device=None, dim=0, module_kwargs=None):
    """The functional form needs an accelerator to scatter onto; PyTorch's CPU build raises the same."""
    raise RuntimeError("device type could not be determined")
