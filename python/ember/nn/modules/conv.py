"""Convolutions: Conv1d/2d/3d and ConvTranspose1d/2d/3d."""

from ... import _C
from ..parameter import Parameter
from .module import Module
from .utils import _reset_fan_in_uniform, F, _pair, _reverse_repeat_tuple, _single, _triple

__all__ = ["Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d"]

_PADDING_MODES = {"zeros", "reflect", "replicate", "circular"}


class _ConvNd(Module):
    __constants__ = ["stride", "padding", "dilation", "groups", "padding_mode", "output_padding", "in_channels",
                     "out_channels", "kernel_size"]

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, dilation, transposed,
                 output_padding, groups, bias, padding_mode, device=None, dtype=None):
        super().__init__()
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        if isinstance(padding, str):
            if padding not in ("same", "valid"):
                raise ValueError(f"Invalid padding string {padding!r}, should be one of {{'same', 'valid'}}")
            if padding == "same" and any(s != 1 for s in stride):
                raise ValueError("padding='same' is not supported for strided convolutions")
        if padding_mode not in _PADDING_MODES:
            raise ValueError(f"padding_mode must be one of {_PADDING_MODES}, but got padding_mode='{padding_mode}'")
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = kernel_size
        self.stride = stride
        self.padding = padding
        self.dilation = dilation
        self.transposed = transposed
        self.output_padding = output_padding
        self.groups = groups
        self.padding_mode = padding_mode
        # the per-side padding F.pad takes for non-zero padding modes (last spatial dim first)
        if isinstance(padding, str):
            rp = [0, 0] * len(kernel_size)
            if padding == "same":
                for d, k, i in zip(dilation, kernel_size, range(len(kernel_size) - 1, -1, -1)):
                    total = d * (k - 1)
                    rp[2 * i] = total // 2
                    rp[2 * i + 1] = total - total // 2
            self._reversed_padding_repeated_twice = rp
        else:
            self._reversed_padding_repeated_twice = _reverse_repeat_tuple(padding, 2)
        if transposed:
            shape = (in_channels, out_channels // groups, *kernel_size)
        else:
            shape = (out_channels, in_channels // groups, *kernel_size)
        self.weight = Parameter(_C._ops.empty(shape, dtype=dtype, device=device))
        if bias:
            self.bias = Parameter(_C._ops.empty(out_channels, dtype=dtype, device=device))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        _reset_fan_in_uniform(self)

    def extra_repr(self):
        s = "{in_channels}, {out_channels}, kernel_size={kernel_size}, stride={stride}"
        if self.padding != (0,) * len(self.padding):
            s += ", padding={padding}"
        if self.dilation != (1,) * len(self.dilation):
            s += ", dilation={dilation}"
        if self.output_padding != (0,) * len(self.output_padding):
            s += ", output_padding={output_padding}"
        if self.groups != 1:
            s += ", groups={groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += ", padding_mode={padding_mode}"
        return s.format(**self.__dict__)

    def __setstate__(self, state):
        super().__setstate__(state)
        if not hasattr(self, "padding_mode"):
            self.padding_mode = "zeros"


def _make_conv(n, tup, fname):
    class ConvNd(_ConvNd):
        def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
                     bias=True, padding_mode="zeros", device=None, dtype=None):
            super().__init__(in_channels, out_channels, tup(kernel_size), tup(stride),
                             padding if isinstance(padding, str) else tup(padding), tup(dilation), False, tup(0),
                             groups, bias, padding_mode, device, dtype)

        def _conv_forward(self, input, weight, bias):
            conv = getattr(F, fname)
            if self.padding_mode != "zeros":
                return conv(F.pad(input, self._reversed_padding_repeated_twice, mode=self.padding_mode), weight, bias,
                            self.stride, tup(0), self.dilation, self.groups)
            return conv(input, weight, bias, self.stride, self.padding, self.dilation, self.groups)

        def forward(self, input):
            return self._conv_forward(input, self.weight, self.bias)

    ConvNd.__name__ = ConvNd.__qualname__ = f"Conv{n}d"
    ConvNd.__doc__ = (f"{n}-D convolution over an input of shape (N, C_in, *spatial) or unbatched; weight "
                      f"(out_channels, in_channels / groups, *kernel_size).")
    return ConvNd


Conv1d = _make_conv(1, _single, "conv1d")
Conv2d = _make_conv(2, _pair, "conv2d")
Conv3d = _make_conv(3, _triple, "conv3d")


class _ConvTransposeNd(_ConvNd):
    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, dilation, transposed, output_padding,
                 groups, bias, padding_mode, device=None, dtype=None):
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for {self.__class__.__name__}')
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, transposed,
                         output_padding, groups, bias, padding_mode, device, dtype)

    def _output_padding(self, input, output_size, stride, padding, kernel_size, num_spatial_dims, dilation=None):
        """The output_padding that makes the output `output_size` (or self.output_padding if None)."""
        if output_size is None:
            return _single(self.output_padding)
        has_batch = input.dim() == num_spatial_dims + 2
        n_non_spatial = 2 if has_batch else 1
        output_size = list(output_size)
        if len(output_size) == n_non_spatial + num_spatial_dims:
            output_size = output_size[n_non_spatial:]
        if len(output_size) != num_spatial_dims:
            raise ValueError(f"ConvTranspose{num_spatial_dims}D: for {input.dim()}D input, output_size must have "
                             f"{num_spatial_dims} or {n_non_spatial + num_spatial_dims} elements "
                             f"(got {len(output_size)})")
        min_sizes, max_sizes = [], []
        for d in range(num_spatial_dims):
            dil = dilation[d] if dilation is not None else 1
            size = (input.size(d + n_non_spatial) - 1) * stride[d] - 2 * padding[d] + dil * (kernel_size[d] - 1) + 1
            min_sizes.append(size)
            max_sizes.append(size + stride[d] - 1)
        for i, size in enumerate(output_size):
            if size < min_sizes[i] or size > max_sizes[i]:
                raise ValueError(f"requested an output size of {output_size}, but valid sizes range from {min_sizes} "
                                 f"to {max_sizes} (for an input of {input.size()[2:]})")
        return [output_size[d] - min_sizes[d] for d in range(num_spatial_dims)]


def _make_conv_transpose(n, tup, fname):
    class ConvTransposeNd(_ConvTransposeNd):
        def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, output_padding=0, groups=1,
                     bias=True, dilation=1, padding_mode="zeros", device=None, dtype=None):
            super().__init__(in_channels, out_channels, tup(kernel_size), tup(stride), tup(padding), tup(dilation),
                             True, tup(output_padding), groups, bias, padding_mode, device, dtype)

        def forward(self, input, output_size=None):
            if self.padding_mode != "zeros":
                raise ValueError(f"Only `zeros` padding mode is supported for ConvTranspose{n}d")
            output_padding = self._output_padding(input, output_size, self.stride, self.padding, self.kernel_size,
                                                  n, self.dilation)
            return getattr(F, fname)(input, self.weight, self.bias, self.stride, self.padding, output_padding,
                                     self.groups, self.dilation)

    ConvTransposeNd.__name__ = ConvTransposeNd.__qualname__ = f"ConvTranspose{n}d"
    ConvTransposeNd.__doc__ = (f"{n}-D transposed convolution; weight (in_channels, out_channels / groups, "
                               f"*kernel_size).")
    return ConvTransposeNd


ConvTranspose1d = _make_conv_transpose(1, _single, "conv_transpose1d")
ConvTranspose2d = _make_conv_transpose(2, _pair, "conv_transpose2d")
ConvTranspose3d = _make_conv_transpose(3, _triple, "conv_transpose3d")
