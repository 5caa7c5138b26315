"""ember.overrides: PyTorch's __torch_function__ protocol from Python. Ember's generated functions and
Tensor methods hand a call whose arguments match none of their signatures to an argument whose type has
__torch_function__ (csrc/python/arg_parser.cpp); these helpers let Python code (a library's own
functions) take part the same way: has_torch_function to test, handle_torch_function to dispatch,
wrap_torch_function to do both around a function, and the tables of which functions take part."""
import contextlib
import functools
import types

from ._tensor import Tensor

__all__ = ["get_ignored_functions", "get_overridable_functions", "handle_torch_function", "has_torch_function",
           "resolve_name", "is_tensor_like", "is_tensor_method_or_property", "wrap_torch_function",
           "enable_reentrant_dispatch"]


def _overloads(obj):
    """Whether obj's type takes calls: it has __torch_function__ and is not an ember Tensor."""
    return not isinstance(obj, Tensor) and hasattr(type(obj), "__torch_function__")


def has_torch_function(relevant_args):
    """Whether any of `relevant_args` (an iterable) is a tensor-like whose type defines __torch_function__
    (plain Tensors and Parameters are not)."""
    return any(_overloads(a) for a in relevant_args)


def has_torch_function_unary(obj):
    """has_torch_function((obj,)), for one argument."""
    return _overloads(obj)


def has_torch_function_variadic(*args):
    """has_torch_function(args), for arguments given one by one."""
    return any(_overloads(a) for a in args)


def _overloaded_types(relevant_args):
    """The overloading argument types in the order they are asked: first appearance, subclasses first."""
    found = []
    for a in relevant_args:
        if not _overloads(a) or type(a) in found:
            continue
        t = type(a)
        at = next((i for i, u in enumerate(found) if issubclass(t, u)), len(found))
        found.insert(at, t)
    return found


def handle_torch_function(public_api, relevant_args, *args, **kwargs):
    """Call the __torch_function__ of each overloading type among `relevant_args` in turn with
    (public_api, types, args, kwargs) and return the first answer that is not NotImplemented;
    TypeError when every one declines."""
    found = _overloaded_types(relevant_args)
    type_tuple = tuple(found)
    for t in found:
        result = t.__torch_function__(public_api, type_tuple, args, kwargs)
        if result is not NotImplemented:
            return result
    name = resolve_name(public_api) or f"{getattr(public_api, '__module__', '')}.{public_api.__name__}"
    raise TypeError(f"no implementation found for '{name}' on types that implement __torch_function__: "
                    f"{[type(a) for a in relevant_args if _overloads(a)]}")


def wrap_torch_function(dispatcher):
    """Decorator: the wrapped function hands its call to __torch_function__ when
    dispatcher(*args, **kwargs) (the relevant arguments) holds a tensor-like that overloads."""
    def inner(func):
        @functools.wraps(func)
        def wrapped(*args, **kwargs):
            relevant = dispatcher(*args, **kwargs)
            if has_torch_function(relevant):
                return handle_torch_function(wrapped, relevant, *args, **kwargs)
            return func(*args, **kwargs)
        return wrapped
    return inner


def is_tensor_like(inp):
    """Whether `inp` is a Tensor or a tensor-like (its type has __torch_function__)."""
    return isinstance(inp, Tensor) or hasattr(type(inp), "__torch_function__")


def _tensor_methods():
    return {v for k in dir(Tensor) if not k.startswith("__") for v in [getattr(Tensor, k, None)] if callable(v)}


def is_tensor_method_or_property(func):
    """Whether `func` (as passed to __torch_function__) is a Tensor method, or a property's __get__."""
    return func in _tensor_methods() or getattr(func, "__name__", None) == "__get__"


def _namespaces():
    import importlib
    return [(name, importlib.import_module(name)) for name in
            ("ember", "ember.nn.functional", "ember.linalg", "ember.fft", "ember.special")]


def _takes_calls(f):
    """A generated binding: it hands unmatched calls to __torch_function__."""
    return isinstance(f, types.BuiltinFunctionType) and (getattr(f, "__module__", "") or "").startswith("ember._C")


@functools.lru_cache(maxsize=1)
def _tables():
    overridable, ignored, names = {}, set(), {}
    for label, mod in _namespaces():
        fns = []
        for attr in sorted(dir(mod)):
            if attr.startswith("_"):
                continue
            f = getattr(mod, attr, None)
            if not callable(f) or isinstance(f, type) or isinstance(f, types.ModuleType):
                continue
            names.setdefault(f, f"{label}.{attr}")
            if _takes_calls(f):
                fns.append(f)
            elif isinstance(f, types.FunctionType):
                ignored.add(f)
        overridable[mod] = fns
    methods = []
    for attr in sorted(dir(Tensor)):
        f = getattr(Tensor, attr, None)
        if attr.startswith("__") or not callable(f):
            continue
        names.setdefault(f, f"ember.Tensor.{attr}")
        if type(f).__name__ == "method_descriptor":
            methods.append(f)
    overridable[Tensor] = methods
    return overridable, frozenset(ignored), names


def get_overridable_functions():
    """{namespace: [functions]} of the functions that hand unmatched calls to __torch_function__: the
    generated ones of ember, ember.nn.functional, ember.linalg, ember.fft and ember.special, and Tensor's
    generated methods."""
    return {k: list(v) for k, v in _tables()[0].items()}


def get_ignored_functions():
    """The public Python-level functions of those namespaces: they do not consult __torch_function__
    themselves (the generated functions they call do)."""
    return set(_tables()[1])


def resolve_name(f):
    """The name under which a function passed to __torch_function__ is reached ("ember.add",
    "ember.Tensor.add"); None for a function outside Ember's namespaces."""
    return _tables()[2].get(f)


@contextlib.contextmanager
def enable_reentrant_dispatch():
    """Context manager PyTorch uses to re-enter its dispatcher from Python; Ember's dispatch has no state
    to restore, so the block just runs."""
    yield
