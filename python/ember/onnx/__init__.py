"""ember.onnx: export a model to ONNX, as torch.onnx.export does.

The model is traced with ember.jit.trace; the traced graph (ops, parameters by state_dict name,
captured constants) is mapped node by node to ONNX with the `onnx` package's protobuf helpers
(ember/onnx/_builder.py and the _ops_* tables) and checked with onnx.checker. The `onnx` package
is needed only when exporting."""
import contextlib
import enum
import os

from . import errors
from .errors import OnnxExporterError

__all__ = ["errors", "export", "is_in_onnx_export", "OnnxExporterError", "ONNXProgram", "TrainingMode",
           "OperatorExportTypes", "select_model_mode_for_export"]

producer_name = "ember"
DEFAULT_OPSET = 18
MIN_OPSET, MAX_OPSET = 17, 21  # the range the op table is written and tested for

_exporting = False


def is_in_onnx_export():
    """Whether ember.onnx.export is running (e.g. tracing the model) on this process."""
    return _exporting


class TrainingMode(enum.IntEnum):
    """Which mode export puts the model in: EVAL (default), PRESERVE (as it is), TRAINING."""
    EVAL = 0
    PRESERVE = 1
    TRAINING = 2


class OperatorExportTypes(enum.IntEnum):
    """How ops without an ONNX form are exported; Ember exports only ONNX (the others embed ATen ops)."""
    ONNX = 0
    ONNX_ATEN = 1
    ONNX_ATEN_FALLBACK = 2
    ONNX_FALLTHROUGH = 3


@contextlib.contextmanager
def select_model_mode_for_export(model, mode):
    """Put `model` in `mode` (a TrainingMode) for the body of the with-block, then restore it."""
    if not isinstance(mode, TrainingMode):
        raise TypeError(f"'mode' should be a ember.onnx.TrainingMode, got {type(mode).__name__}")
    was_training = getattr(model, "training", None)
    if mode != TrainingMode.PRESERVE and was_training is not None:
        model.train(mode == TrainingMode.TRAINING)
    try:
        yield
    finally:
        if mode != TrainingMode.PRESERVE and was_training is not None:
            model.train(was_training)


class ONNXProgram:
    """An exported model: `model_proto` (an onnx.ModelProto), `save(path)`, and calling it runs the
    model with onnxruntime on ember tensors."""

    def __init__(self, model_proto):
        self.model_proto = model_proto
        self._session = None

    def __repr__(self):
        graph = self.model_proto.graph
        return (f"ONNXProgram(opset={self.model_proto.opset_import[0].version}, "
                f"inputs={[i.name for i in graph.input]}, outputs={[o.name for o in graph.output]}, "
                f"nodes={len(graph.node)})")

    def save(self, destination, *, include_initializers=True, keep_initializers_as_inputs=False,
             external_data=None):
        model = self.model_proto
        if not include_initializers or keep_initializers_as_inputs:
            model = _with_initializers(model, include_initializers, keep_initializers_as_inputs)
        _write(model, destination, external_data)

    def __call__(self, *args):
        import numpy as np
        import onnxruntime

        from .._C import from_numpy
        from .._tensor import Tensor
        if self._session is None:
            self._session = onnxruntime.InferenceSession(self.model_proto.SerializeToString(),
                                                         providers=["CPUExecutionProvider"])
        names = [i.name for i in self._session.get_inputs()]
        if len(args) != len(names):
            raise TypeError(f"the exported model takes {len(names)} inputs ({names}), got {len(args)}")
        feed = {name: (a.detach().numpy() if isinstance(a, Tensor) else np.asarray(a))
                for name, a in zip(names, args)}
        return [from_numpy(np.ascontiguousarray(out)) for out in self._session.run(None, feed)]


def _with_initializers(model, include, as_inputs):
    import onnx
    from onnx import helper
    model = onnx.ModelProto.FromString(model.SerializeToString())
    graph = model.graph
    names = {i.name for i in graph.input}
    if as_inputs or not include:
        for init in graph.initializer:
            if init.name not in names:
                graph.input.append(helper.make_tensor_value_info(init.name, init.data_type, list(init.dims)))
    if not include:
        del graph.initializer[:]
    return model


_PROTOBUF_LIMIT = 2 ** 31 - 1


def _write(model, f, external_data):
    import onnx
    size = sum(len(t.raw_data) for t in model.graph.initializer)
    if isinstance(f, (str, os.PathLike)):
        big = size > _PROTOBUF_LIMIT - (1 << 24)
        if big and external_data is False:
            raise OnnxExporterError("the model's weights exceed protobuf's 2 GiB limit: save with external_data=True")
        if big:
            location = os.path.basename(os.fspath(f)) + ".data"
            onnx.save_model(model, os.fspath(f), save_as_external_data=True, all_tensors_to_one_file=True,
                            location=location)
        else:
            onnx.save_model(model, os.fspath(f))
    elif hasattr(f, "write"):
        f.write(model.SerializeToString())
    else:
        raise TypeError(f"f must be a path or a binary file object, got {type(f).__name__}")


def _trace(model, args):
    """The traced graph's JSON form and its named tensors (params and constants)."""
    from .. import jit
    traced = jit.trace(model, args, check_trace=False)
    # graph_json()/named_tensors() as the tracer's brief names them, else the graph view and C++ graph
    graph = traced.graph_json() if hasattr(traced, "graph_json") else traced.graph.json()
    tensors = traced.named_tensors() if hasattr(traced, "named_tensors") else traced._c.named_tensors()
    state_dict = getattr(model, "state_dict", None)
    if callable(state_dict):  # initializers in state_dict order (the tracer lists parameters, then buffers)
        rank = {name: k for k, name in enumerate(state_dict())}
        graph["params"].sort(key=lambda entry: rank.get(entry["name"], len(rank)))
    return graph, tensors


def export(model, args=(), f=None, *, kwargs=None, verbose=None, input_names=None, output_names=None,
           opset_version=None, dynamo=True, external_data=True, dynamic_shapes=None,
           custom_translation_table=None, report=False, optimize=True, verify=False, profile=False,
           dump_exported_program=False, artifacts_dir=".", export_params=True,
           keep_initializers_as_inputs=False, dynamic_axes=None, training=TrainingMode.EVAL,
           operator_export_type=OperatorExportTypes.ONNX, do_constant_folding=True, custom_opsets=None,
           export_modules_as_functions=False, autograd_inlining=True):
    """Trace `model` on `args` and write it to `f` (a path or a binary file object) as ONNX.

    Inputs and outputs are named by `input_names` / `output_names`; `dynamic_axes` ({name: {axis:
    dim_name}} or {name: [axes]}) marks sizes that may differ at run time; parameters become
    initializers named by their state_dict keys (graph inputs too with keep_initializers_as_inputs,
    inputs only with export_params=False). Returns an ONNXProgram (None with dynamo=False, as torch).
    The report/optimize/profile/artifact options of torch's dynamo exporter have nothing to act on
    here and are accepted as no-ops; so is do_constant_folding (the trace already holds captured
    tensors as constants, exported as Constant nodes)."""
    global _exporting
    import onnx  # noqa: F401  (a clear ImportError up front)

    from .._tensor import Tensor
    from ..autograd.grad_mode import no_grad
    from ..version import __version__
    from ._convert import check, convert

    opset = DEFAULT_OPSET if opset_version is None else int(opset_version)
    if not MIN_OPSET <= opset <= MAX_OPSET:
        raise ValueError(f"opset_version {opset_version} is not supported: Ember exports opsets {MIN_OPSET} to "
                         f"{MAX_OPSET}")
    if kwargs:
        raise ValueError("ember.onnx.export traces positional inputs only; pass kwargs' tensors in args")
    if custom_translation_table:
        raise ValueError("custom_translation_table maps torch functions, which Ember's exporter does not see: "
                         "it maps ember.jit graph ops (ember/onnx/_ops_*.py)")
    if operator_export_type != OperatorExportTypes.ONNX:
        raise ValueError(f"operator_export_type={operator_export_type!r}: Ember exports standard ONNX ops only")
    if export_modules_as_functions:
        raise ValueError("export_modules_as_functions: Ember's traced graph is flat (no module boundaries)")
    if dynamic_shapes is not None:
        if dynamic_axes is not None:
            raise ValueError("give dynamic_shapes or dynamic_axes, not both")
        dynamic_axes = _axes_from_dynamic_shapes(dynamic_shapes, input_names, args)
    if not isinstance(training, TrainingMode):
        training = TrainingMode(int(training))  # also torch.onnx.TrainingMode members
    if isinstance(args, Tensor):
        args = (args,)
    args = tuple(args)
    if args and isinstance(args[-1], dict):  # torch's older form: trailing keyword inputs
        if args[-1]:
            raise ValueError("ember.onnx.export traces positional inputs only; pass kwargs' tensors in args")
        args = args[:-1]

    was_exporting, _exporting = _exporting, True
    try:
        with select_model_mode_for_export(model, training), no_grad():
            graph, tensors = _trace(model, args)
        proto = convert(graph, tensors, opset=opset, input_names=input_names, output_names=output_names,
                        dynamic_axes=dynamic_axes, export_params=export_params,
                        keep_initializers_as_inputs=keep_initializers_as_inputs,
                        producer_version=__version__)
    finally:
        _exporting = was_exporting
    check(proto)
    if verbose:
        import onnx.printer
        print(onnx.printer.to_text(proto.graph))
    program = ONNXProgram(proto)
    if verify:
        _verify(program, model, args, training)
    if f is not None:
        _write(proto, f, external_data)
    elif not dynamo:
        raise ValueError("f (a path or a file object) is required with dynamo=False")
    return program if dynamo else None


def _verify(program, model, args, training):
    from .._tensor import Tensor
    from ..autograd.grad_mode import no_grad
    from ..testing import assert_close
    with select_model_mode_for_export(model, training), no_grad():
        expected = model(*args)
    expected = [expected] if isinstance(expected, Tensor) else list(_flat(expected))
    got = program(*[a for a in args if isinstance(a, Tensor)])
    for k, (e, o) in enumerate(zip(expected, got)):
        try:
            assert_close(o, e.detach(), rtol=1e-4, atol=1e-5, check_dtype=False)
        except AssertionError as err:
            raise OnnxExporterError(f"verify: onnxruntime's output {k} differs from the model's: {err}") from None


def _flat(out):
    for item in out:
        if isinstance(item, (tuple, list)):
            yield from _flat(item)
        else:
            yield item


def _axes_from_dynamic_shapes(dynamic_shapes, input_names, args):
    """torch's dynamic_shapes ({arg: {axis: name}} or a tuple per input, Dims named by __name__)
    as dynamic_axes over the input names."""
    def axes(spec):
        if spec is None:
            return None
        if isinstance(spec, dict):
            return {int(a): (d if isinstance(d, str) else getattr(d, "__name__", None) or f"dim_{a}")
                    for a, d in spec.items() if d is not None}
        return {int(a): f"dim_{a}" for a in spec}

    if isinstance(dynamic_shapes, dict):
        return {k: v for k, v in ((k, axes(s)) for k, s in dynamic_shapes.items()) if v}
    specs = list(dynamic_shapes)
    names = list(input_names or [])
    if len(names) < len(specs):
        raise ValueError("a positional dynamic_shapes needs input_names for each entry it gives")
    return {names[k]: axes(s) for k, s in enumerate(specs) if axes(s)}
