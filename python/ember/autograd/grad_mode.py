"""no_grad, enable_grad, set_grad_enabled, inference_mode: thread-local switches of recording,
usable as context managers and as decorators."""
import functools
import inspect
import sys
import threading

from .. import _C


class _DecoratorContextManager:
    def __call__(self, fn):
        if inspect.isclass(fn):
            raise RuntimeError("grad-mode context managers cannot decorate classes")
        if inspect.isgeneratorfunction(fn):
            @functools.wraps(fn)
            def gen_wrapper(*args, **kwargs):
                # the mode holds while the generator body runs, not between its steps
                gen = fn(*args, **kwargs)
                try:
                    with self.clone():
                        response = gen.send(None)
                    while True:
                        try:
                            request = yield response
                        except GeneratorExit:
                            with self.clone():
                                gen.close()
                            raise
                        except BaseException:
                            with self.clone():
                                response = gen.throw(*sys.exc_info())
                        else:
                            with self.clone():
                                response = gen.send(request)
                except StopIteration as e:
                    return e.value
            return gen_wrapper

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self.clone():
                return fn(*args, **kwargs)
        return wrapper

    def clone(self):
        return self.__class__()


class no_grad(_DecoratorContextManager):
    """Disable gradient recording: results of ops do not require grad."""

    def __enter__(self):
        self.prev = _C.is_grad_enabled()
        _C._set_grad_enabled(False)

    def __exit__(self, *exc):
        _C._set_grad_enabled(self.prev)


class enable_grad(_DecoratorContextManager):
    """Context manager and decorator that turns gradient recording back on."""
    def __enter__(self):
        self.prev = _C.is_grad_enabled()
        _C._set_grad_enabled(True)

    def __exit__(self, *exc):
        _C._set_grad_enabled(self.prev)


class set_grad_enabled(_DecoratorContextManager):
    """set_grad_enabled(mode): takes effect at once (as a function) or within a `with` block."""

    def __init__(self, mode):
        self.prev = _C.is_grad_enabled()
        self.mode = bool(mode)
        _C._set_grad_enabled(self.mode)

    def __call__(self, fn):
        # used as a decorator: the mode applies inside calls only
        _C._set_grad_enabled(self.prev)
        return super().__call__(fn)

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        _C._set_grad_enabled(self.prev)

    def clone(self):
        return self.__class__(self.mode)


class inference_mode(_DecoratorContextManager):
    """Like no_grad, for code that will never need gradients of what it computes."""

    def __init__(self, mode=True):
        self.mode = mode

    def __new__(cls, mode=True):
        if isinstance(mode, bool):
            return super().__new__(cls)
        return cls()(mode)  # used as a bare decorator: @inference_mode

    def __enter__(self):
        self.prev_grad = _C.is_grad_enabled()
        self.prev_inf = _C.is_inference_mode_enabled()
        if self.mode:
            _C._set_grad_enabled(False)
        _C._set_inference_mode(self.mode)

    def __exit__(self, *exc):
        _C._set_grad_enabled(self.prev_grad)
        _C._set_inference_mode(self.prev_inf)

    def clone(self):
        return self.__class__(self.mode)


def is_grad_enabled():
    """True when autograd records operations (not inside no_grad)."""
    return _C.is_grad_enabled()


def is_inference_mode_enabled():
    """True inside an inference_mode block."""
    return _C.is_inference_mode_enabled()


class _EngineSwitches(threading.local):
    """Per-thread settings of the engine: whether a backward from device roots may run on the device's
    worker thread (the C++ engine holds the switch too), and grad layout enforcement, which Ember's
    engine already behaves as (an accumulated gradient is stored as the engine produced it)."""
    multithreading = True
    grad_layout_enforcement = True


_engine_switches = _EngineSwitches()


class set_multithreading_enabled(_DecoratorContextManager):
    """set_multithreading_enabled(mode): whether backward may run on per-device worker threads (with
    False, a backward from GPU tensors runs on the calling thread); set at once (as a function) or within
    a `with` block."""

    def __init__(self, mode):
        self.prev = _engine_switches.multithreading
        _engine_switches.multithreading = mode
        _C._set_multithreading_enabled(bool(mode))
        self.mode = mode

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        _engine_switches.multithreading = self.prev
        _C._set_multithreading_enabled(bool(self.prev))

    def clone(self):
        return self.__class__(self.mode)


class enforce_grad_layout_policy(_DecoratorContextManager):
    """enforce_grad_layout_policy(enable=True): whether accumulated gradients are forced to their
    parameter's strides; set at once or within a `with` block (as a decorator, within calls only)."""

    def __init__(self, enable=True):
        self.prev = _engine_switches.grad_layout_enforcement
        _engine_switches.grad_layout_enforcement = enable
        self.mode = enable

    def __call__(self, fn):
        _engine_switches.grad_layout_enforcement = self.prev
        return super().__call__(fn)

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        _engine_switches.grad_layout_enforcement = self.prev

    def clone(self):
        return self.__class__(self.mode)
