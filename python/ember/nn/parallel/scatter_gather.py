"""scatter / gather of nested inputs and outputs across accelerator devices, as PyTorch's CPU build
runs them: containers are walked the same way and objects that are not tensors are duplicated or
regrouped, but a tensor has no device to go to, so moving one raises."""
from ... import _C

__all__ = ["scatter", "scatter_kwargs", "gather"]

_NO_ACCELERATOR = "Cannot access accelerator device when none is available."


def _is_namedtuple(obj):
    return isinstance(obj, tuple) and hasattr(obj, "_asdict") and hasattr(obj, "_fields")


def _device_index(device):
    """The accelerator index a device names (None when it names none), as torch._utils's helper: a
    CPU device is refused, a malformed string raises the device parser's error."""
    if isinstance(device, str):
        device = _C.device(device)
    if isinstance(device, _C.device):
        if device.type == "cpu":
            raise ValueError(f"Expected a non cpu device, but got: {device}")
        return device.index
    return device if isinstance(device, int) else None


def _scatter_tensor(target_gpus):
    for d in target_gpus:
        _device_index(d)
    # a CPU-only build has nothing to copy chunks onto
    raise RuntimeError(_NO_ACCELERATOR)


def scatter(inputs, target_gpus, dim=0):
    """One copy of ``inputs`` per target device: tensors would be split into chunks along ``dim`` (on a
    CPU-only build they raise), tuples/lists/dicts/namedtuples are scattered element-wise and any
    other object is repeated once per device."""
    def scatter_map(obj):
        if isinstance(obj, _C.TensorBase):
            return _scatter_tensor(target_gpus)
        if _is_namedtuple(obj):
            return [type(obj)(*args) for args in zip(*map(scatter_map, obj))]
        if isinstance(obj, tuple) and len(obj) > 0:
            return list(zip(*map(scatter_map, obj)))
        if isinstance(obj, list) and len(obj) > 0:
            return [list(i) for i in zip(*map(scatter_map, obj))]
        if isinstance(obj, dict) and len(obj) > 0:
            return [type(obj)(i) for i in zip(*map(scatter_map, obj.items()))]
        return [obj for _ in target_gpus]

    return scatter_map(inputs)


def scatter_kwargs(inputs, kwargs, target_gpus, dim=0):
    """scatter of positional and keyword arguments, padded to the same number of devices."""
    scattered_inputs = scatter(inputs, target_gpus, dim) if inputs else []
    scattered_kwargs = scatter(kwargs, target_gpus, dim) if kwargs else []
    if len(scattered_inputs) < len(scattered_kwargs):
        scattered_inputs.extend(() for _ in range(len(scattered_kwargs) - len(scattered_inputs)))
    elif len(scattered_kwargs) < len(inputs):
        # torch compares with len(inputs) here; kept so that the padding agrees
        scattered_kwargs.extend({} for _ in range(len(scattered_inputs) - len(scattered_kwargs)))
    return tuple(scattered_inputs), tuple(scattered_kwargs)


def gather(outputs, target_device, dim=0):
    """Merge one output per device into one: tensors would be concatenated along ``dim`` on
    ``target_device`` (Ember's are all on the CPU, which torch's gather refuses), None stays None,
    dicts and sequences are gathered element-wise."""
    def gather_map(outputs):
        out = outputs[0]
        if isinstance(out, _C.TensorBase):
            raise AssertionError("Gather function not implemented for CPU tensors")
        if out is None:
            return None
        if isinstance(out, dict):
            if not all(len(out) == len(d) for d in outputs):
                raise ValueError("All dicts must have the same number of keys")
            return type(out)((k, gather_map([d[k] for d in outputs])) for k in out)
        if _is_namedtuple(out):
            return type(out)._make(map(gather_map, zip(*outputs, strict=True)))
        return type(out)(map(gather_map, zip(*outputs, strict=True)))

    return gather_map(outputs)
