"""replicate and parallel_apply, the other two pieces of data parallelism, as PyTorch's CPU build
runs them: the arguments are checked the same way, a module without tensors replicates, and
anything that needs an accelerator (copying a tensor, running on a device) raises torch's error."""
from ... import _C
from .scatter_gather import _NO_ACCELERATOR, _device_index

__all__ = ["replicate", "parallel_apply"]


def _replica(module):
    """A shallow copy of one module for a replica: it shares the attributes, and gets its own
    registries, with no parameters (a replica's weights are plain tensors set on it)."""
    replica = module.__new__(type(module))
    replica.__dict__ = module.__dict__.copy()
    replica._parameters = {}
    replica._buffers = replica._buffers.copy()
    replica._modules = replica._modules.copy()
    replica._is_replica = True
    return replica


def replicate(network, devices, detach=False):
    """One copy of ``network`` per device, sharing its weights. Copying a parameter or buffer onto a
    device needs an accelerator, so on Ember only tensor-free networks replicate."""
    if not devices:
        return []
    devices = [_device_index(d) for d in devices]
    params = list(network.parameters())
    buffers = list(network.buffers())
    if not detach and (params or any(b.requires_grad for b in buffers)):
        # the autograd broadcast refuses CPU inputs
        raise AssertionError("Broadcast function not implemented for CPU tensors")
    if params or buffers:
        raise RuntimeError(_NO_ACCELERATOR)
    modules = list(network.modules())
    index = {id(m): i for i, m in enumerate(modules)}
    copies = [[_replica(m) for m in modules] for _ in devices]
    for i, module in enumerate(modules):
        for key, child in module._modules.items():
            for replicas in copies:
                if child is None:
                    replicas[i]._modules[key] = None
                else:
                    setattr(replicas[i], key, replicas[index[id(child)]])
    return [replicas[0] for replicas in copies]


def _cuda_device_index(device):
    """torch.cuda's variant of the device check that parallel_apply uses: only CUDA devices."""
    if isinstance(device, int) or device is None:
        return device
    if isinstance(device, str):
        device = _C.device(device)
    if isinstance(device, _C.device) and device.type != "cuda":
        raise ValueError(f"Expected a cuda device, but got: {device}")
    return _device_index(device)


def parallel_apply(modules, inputs, kwargs_tup=None, devices=None):
    """modules[i](*inputs[i], **kwargs_tup[i]), each in a thread on devices[i]. The argument lists must
    have equal lengths; running needs an accelerator, which a CPU-only build lacks."""
    if len(modules) != len(inputs):
        raise AssertionError(f"The number of modules {len(modules)} is not equal to the number of inputs "
                             f"{len(inputs)}")
    if kwargs_tup is not None and len(modules) != len(kwargs_tup):
        raise AssertionError(f"The number of modules {len(modules)} is not equal to the number of kwargs_tup "
                             f"{len(kwargs_tup)}")
    if devices is not None:
        if len(modules) != len(devices):
            raise AssertionError(f"The number of modules {len(modules)} is not equal to the number of devices "
                                 f"{len(devices)}")
    else:
        devices = [None] * len(modules)
    devices = [_cuda_device_index(d) for d in devices]
    if devices:
        # each replica's stream lives on an accelerator
        raise RuntimeError(_NO_ACCELERATOR)
    raise AssertionError("No available accelerator found.")
