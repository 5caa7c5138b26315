"""ember.backends.quantized: the engine of quantized kernels. Ember has no quantized kernels, so its
only engine is "none"; naming another is refused as torch refuses an engine its build lacks."""
import sys
import types

# torch's engine ids, and the names its C++ side uses in messages
_ENGINE_IDS = {"none": 0, "": 0, None: 0, "fbgemm": 1, "qnnpack": 2, "onednn": 3, "x86": 4}
_ENGINE_CPP_NAMES = {0: "NoQEngine", 1: "FBGEMM", 2: "QNNPACK", 3: "ONEDNN", 4: "X86"}
_ENGINE_NAMES = {0: "none", 1: "fbgemm", 2: "qnnpack", 3: "onednn", 4: "x86"}
_SUPPORTED = (0,)


def _engine_id(name):
    if name not in _ENGINE_IDS:
        raise RuntimeError(f"{name} is not a valid value for quantized engine")
    return _ENGINE_IDS[name]


class _QuantizedModule(types.ModuleType):
    """The module, with `engine` and `supported_engines` as validated properties."""

    _engine = 0

    @property
    def engine(self):
        return _ENGINE_NAMES[type(self)._engine]

    @engine.setter
    def engine(self, name):
        qengine = _engine_id(name)
        if qengine not in _SUPPORTED:
            raise RuntimeError(f"quantized engine {_ENGINE_CPP_NAMES[qengine]} is not supported")
        type(self)._engine = qengine

    @property
    def supported_engines(self):
        return [_ENGINE_NAMES[e] for e in _SUPPORTED]

    @supported_engines.setter
    def supported_engines(self, value):
        raise RuntimeError("Assignment not supported")


sys.modules[__name__].__class__ = _QuantizedModule
