"""torch.masked's reductions and normalizations on strided tensors: each op fills the masked-out
elements with its identity (0 for sum, 1 for prod, -inf for amax and logsumexp, ...) and runs the
ordinary op, so values, dtypes and gradients are those of the ops underneath. The mask broadcasts to
the input; fully masked-out slices give the identity (nan for mean, median, var and std, which have
none). MaskedTensor (a prototype in PyTorch) and sparse inputs are not provided."""
from ._ops import (amax, amin, argmax, argmin, cumprod, cumsum, log_softmax, logaddexp, logsumexp, mean, median,
                   norm, normalize, prod, softmax, softmin, std, sum, var)

__all__ = ["amax", "amin", "argmax", "argmin", "cumprod", "cumsum", "log_softmax", "logaddexp", "logsumexp", "mean",
           "median", "norm", "normalize", "prod", "softmax", "softmin", "std", "sum", "var"]
