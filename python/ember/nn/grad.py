"""ember.nn.grad: the gradients of conv1d/2d/3d with respect to their input or weight, given the
gradient of the output (torch.nn.grad). Each runs the convolution through Ember's autograd and asks
for the one gradient, so stride, padding, dilation and groups mean exactly what they mean to conv, and
the result is itself differentiable when the weight / input / grad_output require grad."""
from .._C import _ops
from ..autograd._engine import grad as _autograd_grad
from ..autograd.grad_mode import enable_grad, is_grad_enabled
from ._functional_core import conv1d, conv2d, conv3d

__all__ = ["conv1d_input", "conv1d_weight", "conv2d_input", "conv2d_weight", "conv3d_input", "conv3d_weight"]


def _conv_grad(conv, input, weight, grad_output, wrt_input, stride, padding, dilation, groups):
    # build the graph only when someone will differentiate the answer (double backward)
    others = (weight, grad_output) if wrt_input else (input, grad_output)
    create_graph = is_grad_enabled() and any(t.requires_grad for t in others)
    leaf = (input if wrt_input else weight).detach().requires_grad_(True)
    with enable_grad():
        out = conv(leaf, weight, None, stride, padding, dilation, groups) if wrt_input else \
            conv(input, leaf, None, stride, padding, dilation, groups)
        if tuple(out.shape) != tuple(grad_output.shape):
            raise RuntimeError(f"grad_output of shape {tuple(grad_output.shape)} does not match the convolution's "
                               f"output shape {tuple(out.shape)}")
        return _autograd_grad(out, leaf, grad_output, create_graph=create_graph)[0]


def _input_grad(conv, input_size, weight, grad_output, stride, padding, dilation, groups):
    # the values of the input do not matter (conv is linear in it): zeros of the asked size stand in
    input = _ops.zeros(tuple(input_size), dtype=grad_output.dtype, device=grad_output.device)
    return _conv_grad(conv, input, weight, grad_output, True, stride, padding, dilation, groups)


def _weight_grad(conv, input, weight_size, grad_output, stride, padding, dilation, groups):
    weight = _ops.zeros(tuple(weight_size), dtype=grad_output.dtype, device=grad_output.device)
    return _conv_grad(conv, input, weight, grad_output, False, stride, padding, dilation, groups)


def conv1d_input(input_size, weight, grad_output, stride=1, padding=0, dilation=1, groups=1):
    """Gradient of conv1d with respect to its input, of shape input_size (N, C_in, L)."""
    return _input_grad(conv1d, input_size, weight, grad_output, stride, padding, dilation, groups)


def conv1d_weight(input, weight_size, grad_output, stride=1, padding=0, dilation=1, groups=1):
    """Gradient of conv1d with respect to its weight, of shape weight_size (C_out, C_in / groups, kL)."""
    return _weight_grad(conv1d, input, weight_size, grad_output, stride, padding, dilation, groups)


def conv2d_input(input_size, weight, grad_output, stride=1, padding=0, dilation=1, groups=1):
    """Gradient of conv2d with respect to its input, of shape input_size (N, C_in, H, W)."""
    return _input_grad(conv2d, input_size, weight, grad_output, stride, padding, dilation, groups)


def conv2d_weight(input, weight_size, grad_output, stride=1, padding=0, dilation=1, groups=1):
    """Gradient of conv2d with respect to its weight, of shape weight_size (C_out, C_in / groups, kH, kW)."""
    return _weight_grad(conv2d, input, weight_size, grad_output, stride, padding, dilation, groups)


def conv3d_input(input_size, weight, grad_output, stride=1, padding=0, dilation=1, groups=1):
    """Gradient of conv3d with respect to its input, of shape input_size (N, C_in, D, H, W)."""
    return _input_grad(conv3d, input_size, weight, grad_output, stride, padding, dilation, groups)


def conv3d_weight(input, weight_size, grad_output, stride=1, padding=0, dilation=1, groups=1):
    """Gradient of conv3d with respect to its weight, of shape weight_size (C_out, C_in / groups, kD, kH, kW)."""
    return _weight_grad(conv3d, input, weight_size, grad_output, stride, padding, dilation, groups)
