"""The exporter's exceptions, under torch.onnx.errors' names so `except` clauses written for torch work."""

__all__ = ["OnnxExporterWarning", "OnnxExporterError", "SymbolicValueError", "UnsupportedOperatorError"]


class OnnxExporterWarning(UserWarning):
    """A warning from the ONNX exporter."""


class OnnxExporterError(RuntimeError):
    """Base class of every error the ONNX exporter raises."""


class UnsupportedOperatorError(OnnxExporterError):
    """The traced graph holds an op (or an op's arguments) that has no ONNX form at this opset."""

    def __init__(self, name, version, supported_version=None, reason=None):
        if supported_version is not None:
            msg = (f"Exporting the operator '{name}' to ONNX opset version {version} is not supported. "
                   f"Support for this operator was added in version {supported_version}, try exporting with "
                   "this version")
        else:
            msg = f"Exporting the operator '{name}' to ONNX opset version {version} is not supported"
        if reason:
            msg += f": {reason}"
        super().__init__(msg)
        self.name = name
        self.version = version
        self.supported_version = supported_version


class SymbolicValueError(OnnxExporterError):
    """A value of the traced graph cannot be expressed in ONNX (e.g. it depends on data read into Python)."""

    def __init__(self, msg, value=None):
        if value is not None:
            msg = f"{msg}  [Caused by the value {value!r} of the traced graph.]"
        super().__init__(msg)
