"""The loss functions' reduction argument (torch.nn._reduction): "none" / "mean" / "sum", and the
legacy size_average / reduce pair that maps onto it."""
import warnings


def _get_enum(reduction):
    if reduction == "none":
        return 0
    if reduction == "mean":
        return 1
    if reduction == "elementwise_mean":
        warnings.warn("reduction='elementwise_mean' is deprecated. Please use reduction='mean' instead.",
                      stacklevel=3)
        return 1
    if reduction == "sum":
        return 2
    raise ValueError(f"{reduction} is not a valid value for reduction")


def _legacy_get_string(size_average, reduce, emit_warning=True):
    if size_average is None:
        size_average = True
    if reduce is None:
        reduce = True
    if size_average and reduce:
        ret = "mean"
    elif reduce:
        ret = "sum"
    else:
        ret = "none"
    if emit_warning:
        warnings.warn(f"size_average and reduce args will be deprecated, please use reduction='{ret}' instead.",
                      stacklevel=3)
    return ret


def _reduction_enum(size_average, reduce, reduction):
    if size_average is not None or reduce is not None:
        return _get_enum(_legacy_get_string(size_average, reduce))
    return _get_enum(reduction)


def _reduction_str(size_average, reduce, reduction):
    if size_average is not None or reduce is not None:
        return _legacy_get_string(size_average, reduce)
    return reduction
