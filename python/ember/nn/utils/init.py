"""nn.utils.skip_init: a module whose parameters are left uninitialised."""
import inspect


def skip_init(module_cls, *args, **kwargs):
    """module_cls(*args, **kwargs) without its parameter initialisation being part of the contract: the
    values are unspecified. (PyTorch builds it on the meta device and allocates afterwards; Ember has no meta
    device, so the module is built directly on the target device and its initial values are simply not
    meant to be used.)"""
    from ..modules.module import Module
    if not (isinstance(module_cls, type) and issubclass(module_cls, Module)):
        raise RuntimeError(f"Expected a Module; got {module_cls}")
    if "device" not in inspect.signature(module_cls).parameters:
        raise RuntimeError("Module must support a 'device' arg to skip initialization")
    return module_cls(*args, **kwargs)
