"""Fold an eval-mode BatchNorm into the preceding convolution or linear layer."""
import copy

from ... import _C
from ..parameter import Parameter

__all__ = ["fuse_conv_bn_eval", "fuse_conv_bn_weights", "fuse_linear_bn_eval", "fuse_linear_bn_weights"]


def fuse_conv_bn_eval(conv, bn, transpose=False):
    """A copy of ``conv`` computing bn(conv(x)) with bn's running statistics (both must be in eval mode)."""
    if conv.training or bn.training:
        raise AssertionError("Fusion only for eval!")
    fused_conv = copy.deepcopy(conv)
    if bn.running_mean is None or bn.running_var is None:
        raise AssertionError("BatchNorm must track running statistics to be fused")
    fused_conv.weight, fused_conv.bias = fuse_conv_bn_weights(
        fused_conv.weight, fused_conv.bias, bn.running_mean, bn.running_var, bn.eps, bn.weight, bn.bias, transpose)
    return fused_conv


def fuse_conv_bn_weights(conv_w, conv_b, bn_rm, bn_rv, bn_eps, bn_w, bn_b, transpose=False):
    """(weight, bias) Parameters of the convolution fused with the batch norm (conv_b, bn_w, bn_b may
    be None). transpose: conv_w is a ConvTranspose weight (output channels on dim 1)."""
    w_dtype = conv_w.dtype
    b_dtype = conv_b.dtype if conv_b is not None else w_dtype
    if conv_b is None:
        conv_b = _C._ops.zeros_like(bn_rm)
    if bn_w is None:
        bn_w = _C._ops.ones_like(bn_rm)
    if bn_b is None:
        bn_b = _C._ops.zeros_like(bn_rm)
    bn_var_rsqrt = _C._ops.rsqrt(bn_rv + bn_eps)
    extra = [1] * (conv_w.dim() - 2)
    shape = [1, -1] + extra if transpose else [-1, 1] + extra
    fused_w = (conv_w * (bn_w * bn_var_rsqrt).reshape(shape)).to(dtype=w_dtype)
    fused_b = ((conv_b - bn_rm) * bn_var_rsqrt * bn_w + bn_b).to(dtype=b_dtype)
    return Parameter(fused_w, conv_w.requires_grad), Parameter(fused_b, conv_b.requires_grad)


def fuse_linear_bn_eval(linear, bn):
    """A copy of ``linear`` computing bn(linear(x)) with bn's running statistics (both in eval mode)."""
    if linear.training or bn.training:
        raise AssertionError("Fusion only for eval!")
    fused_linear = copy.deepcopy(linear)
    if not (linear.out_features == bn.num_features or bn.num_features == 1):
        raise AssertionError("To fuse, linear.out_features == bn.num_features or bn.num_features == 1")
    if bn.running_mean is None or bn.running_var is None:
        raise AssertionError("BatchNorm must track running statistics to be fused")
    fused_linear.weight, fused_linear.bias = fuse_linear_bn_weights(
        fused_linear.weight, fused_linear.bias, bn.running_mean, bn.running_var, bn.eps, bn.weight, bn.bias)
    return fused_linear


def fuse_linear_bn_weights(linear_w, linear_b, bn_rm, bn_rv, bn_eps, bn_w, bn_b):
    """(weight, bias) Parameters of the linear layer fused with the batch norm (linear_b may be None)."""
    if linear_b is None:
        linear_b = _C._ops.zeros_like(bn_rm)
    bn_scale = bn_w * _C._ops.rsqrt(bn_rv + bn_eps)
    fused_w = linear_w * bn_scale.unsqueeze(-1)
    fused_b = (linear_b - bn_rm) * bn_scale + bn_b
    return Parameter(fused_w, linear_w.requires_grad), Parameter(fused_b, linear_b.requires_grad)
