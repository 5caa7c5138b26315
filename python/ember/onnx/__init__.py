"""ember.onnx: the torch.onnx entry points. Exporting needs a traced graph of the model, which Ember
does not build yet; export raises NotImplementedError until the graph/trace work lands."""

__all__ = ["export", "is_in_onnx_export"]


def is_in_onnx_export():
    """Whether an export is running: never, since export is not available."""
    return False


def export(model, args=(), f=None, *posargs, **kwargs):
    raise NotImplementedError("ember.onnx.export is not available yet: ONNX export arrives with the graph/trace "
                              "work (Ember cannot yet record a model as a graph)")
