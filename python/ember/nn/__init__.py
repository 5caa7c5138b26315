"""ember.nn: Modules, Parameters, layers, losses, initialisation and utilities (PyTorch's torch.nn)."""
from .parameter import Buffer, Parameter, UninitializedBuffer, UninitializedParameter  # noqa: F401
from .modules import *  # noqa: F401,F403
from .modules import Module  # noqa: F401
from .modules.module import (  # noqa: F401
    register_module_backward_hook, register_module_buffer_registration_hook, register_module_forward_hook,
    register_module_forward_pre_hook, register_module_full_backward_hook, register_module_full_backward_pre_hook,
    register_module_module_registration_hook, register_module_parameter_registration_hook,
)
from . import init  # noqa: F401
from . import modules  # noqa: F401
from . import parameter  # noqa: F401
from . import utils  # noqa: F401
from . import functional  # noqa: F401
from . import parallel  # noqa: F401
from .parallel import DataParallel  # noqa: F401
from . import attention, common_types, grad  # noqa: F401


def factory_kwargs(kwargs):
    """The device / dtype / memory_format of a module's **kwargs as one dict for factory functions; a nested
    "factory_kwargs" dict gives them under a name that cannot clash with the caller's own arguments."""
    if kwargs is None:
        return {}
    simple_keys = {"device", "dtype", "memory_format"}
    expected_keys = simple_keys | {"factory_kwargs"}
    if not kwargs.keys() <= expected_keys:
        raise TypeError(f"unexpected kwargs {kwargs.keys() - expected_keys}")
    merged = dict(kwargs.get("factory_kwargs", {}))  # a copy: the caller's dict is left as it was
    for key in simple_keys:
        if key in kwargs:
            if key in merged:
                raise TypeError(f"{key} specified twice, in **kwargs and in factory_kwargs")
            merged[key] = kwargs[key]
    return merged
