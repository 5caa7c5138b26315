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
