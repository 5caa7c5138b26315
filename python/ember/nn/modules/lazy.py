"""Lazy modules: layers whose input size is inferred on the first forward (LazyLinear, LazyConv*,
LazyConvTranspose*, LazyBatchNorm*, LazyInstanceNorm*). Until then their parameters are
UninitializedParameter placeholders; the first forward materializes them, runs reset_parameters,
and turns the module into its regular class (LazyLinear -> Linear)."""
from ...autograd.grad_mode import no_grad
from ..parameter import UninitializedBuffer, UninitializedParameter, is_lazy
from .batchnorm import BatchNorm1d, BatchNorm2d, BatchNorm3d
from .conv import Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from .instancenorm import InstanceNorm1d, InstanceNorm2d, InstanceNorm3d
from .linear import Linear

__all__ = ["LazyModuleMixin", "LazyLinear", "LazyConv1d", "LazyConv2d", "LazyConv3d", "LazyConvTranspose1d",
           "LazyConvTranspose2d", "LazyConvTranspose3d", "LazyBatchNorm1d", "LazyBatchNorm2d", "LazyBatchNorm3d",
           "LazyInstanceNorm1d", "LazyInstanceNorm2d", "LazyInstanceNorm3d"]


def _infer_parameters(module, args, kwargs=None):
    # forward pre-hook: materialize from the first input, then become the regular module
    kwargs = kwargs if kwargs else {}
    module.initialize_parameters(*args, **kwargs)
    if module.has_uninitialized_params():
        raise RuntimeError(f"module {module._get_name()} has not been fully initialized")
    module._initialize_hook.remove()
    module._load_hook.remove()
    delattr(module, "_initialize_hook")
    delattr(module, "_load_hook")
    if module.cls_to_become is not None:
        module.__class__ = module.cls_to_become


class LazyModuleMixin:
    """Mixin of the lazy modules: ``initialize_parameters(*input)`` (per class) runs before the first
    forward; a state dict with real tensors materializes the placeholders on load."""

    cls_to_become = None

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._load_hook = self._register_load_state_dict_pre_hook(self._lazy_load_hook)
        self._initialize_hook = self.register_forward_pre_hook(_infer_parameters, with_kwargs=True)

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        # placeholders are saved as they are (detach would lose what they are)
        for name, param in self._parameters.items():
            if param is not None:
                destination[prefix + name] = param if keep_vars or is_lazy(param) else param.detach()
        for name, buf in self._buffers.items():
            if buf is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = buf if keep_vars or is_lazy(buf) else buf.detach()

    def _lazy_load_hook(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                        error_msgs):
        for name, param in list(self._parameters.items()) + list(self._buffers.items()):
            key = prefix + name
            if key in state_dict and param is not None and is_lazy(param) and not is_lazy(state_dict[key]):
                with no_grad():
                    param.materialize(state_dict[key].shape)

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                              error_msgs):
        # a placeholder loaded onto a placeholder: nothing to copy, and the key still matches
        both = [prefix + n for n, t in list(self._parameters.items()) + list(self._buffers.items())
                if t is not None and is_lazy(t) and prefix + n in state_dict and is_lazy(state_dict[prefix + n])]
        popped = {k: state_dict.pop(k) for k in both}
        try:
            super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                                          error_msgs)
        finally:
            state_dict.update(popped)
        for k in both:
            if k in missing_keys:
                missing_keys.remove(k)

    def _apply(self, fn, recurse=True):
        # keep uninitialized buffers uninitialized (with the converted dtype)
        lazy = {k: b for k, b in self._buffers.items() if b is not None and is_lazy(b)}
        out = super()._apply(fn, recurse)
        for k, b in lazy.items():
            b.data = fn(b.data)
            self._buffers[k] = b
        return out

    def initialize_parameters(self, *args, **kwargs):
        raise NotImplementedError(f"initialize_parameters is not implemented for {self.__class__.__name__}")

    def has_uninitialized_params(self):
        """Whether a parameter or buffer is still a placeholder."""
        return any(t is not None and is_lazy(t)
                   for t in list(self._parameters.values()) + list(self._buffers.values()))

    def _replicate_for_data_parallel(self):
        raise RuntimeError("Modules with uninitialized parameters can't be used with `DataParallel`. Run a dummy "
                           "forward pass to correctly initialize the modules")


class LazyLinear(LazyModuleMixin, Linear):
    """Linear whose in_features is the last dim of the first input."""

    cls_to_become = Linear

    def __init__(self, out_features, bias=True, device=None, dtype=None):
        super().__init__(0, 0, False)
        self.weight = UninitializedParameter(dtype=dtype)
        self.out_features = out_features
        if bias:
            self.bias = UninitializedParameter(dtype=dtype)

    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.in_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input):
        if self.has_uninitialized_params():
            with no_grad():
                self.in_features = input.shape[-1]
                self.weight.materialize((self.out_features, self.in_features))
                if self.bias is not None:
                    self.bias.materialize((self.out_features,))
                self.reset_parameters()
        if self.in_features == 0:
            # materialized by load_state_dict: take in_features from the input, checked against the weight
            if input.shape[-1] != self.weight.shape[-1]:
                raise AssertionError(f"The in_features inferred from input: {input.shape[-1]} is not equal to "
                                     f"in_features from self.weight: {self.weight.shape[-1]}")
            self.in_features = input.shape[-1]


class _LazyConvXdMixin(LazyModuleMixin):
    _n = 1

    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.in_channels != 0:
            super().reset_parameters()

    def _get_in_channels(self, input):
        no_batch = self._n + 1
        if input.dim() not in (no_batch, no_batch + 1):
            raise RuntimeError(f"Expected {no_batch}D (unbatched) or {no_batch + 1}D (batched) input to "
                               f"{self.__class__.__name__}, but got input of size: {input.shape}")
        return input.shape[1] if input.dim() == no_batch + 1 else input.shape[0]

    def initialize_parameters(self, input, *args, **kwargs):
        if self.has_uninitialized_params():
            self.in_channels = self._get_in_channels(input)
            if self.in_channels % self.groups != 0:
                raise ValueError("in_channels must be divisible by groups")
            with no_grad():
                if self.transposed:
                    self.weight.materialize((self.in_channels, self.out_channels // self.groups, *self.kernel_size))
                else:
                    self.weight.materialize((self.out_channels, self.in_channels // self.groups, *self.kernel_size))
                if self.bias is not None:
                    self.bias.materialize((self.out_channels,))
                self.reset_parameters()


def _lazy_conv(n, base):
    class LazyConv(_LazyConvXdMixin, base):
        cls_to_become = base
        _n = n

        def __init__(self, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True,
                     padding_mode="zeros", device=None, dtype=None):
            super().__init__(0, 0, kernel_size, stride, padding, dilation, groups, False, padding_mode)
            self.weight = UninitializedParameter(dtype=dtype)
            self.out_channels = out_channels
            if bias:
                self.bias = UninitializedParameter(dtype=dtype)

    LazyConv.__name__ = LazyConv.__qualname__ = f"Lazy{base.__name__}"
    LazyConv.__doc__ = f"{base.__name__} whose in_channels is inferred from the first input."
    return LazyConv


def _lazy_conv_transpose(n, base):
    class LazyConvTranspose(_LazyConvXdMixin, base):
        cls_to_become = base
        _n = n

        def __init__(self, out_channels, kernel_size, stride=1, padding=0, output_padding=0, groups=1, bias=True,
                     dilation=1, padding_mode="zeros", device=None, dtype=None):
            super().__init__(0, 0, kernel_size, stride, padding, output_padding, groups, False, dilation,
                             padding_mode)
            self.weight = UninitializedParameter(dtype=dtype)
            self.out_channels = out_channels
            if bias:
                self.bias = UninitializedParameter(dtype=dtype)

    LazyConvTranspose.__name__ = LazyConvTranspose.__qualname__ = f"Lazy{base.__name__}"
    LazyConvTranspose.__doc__ = f"{base.__name__} whose in_channels is inferred from the first input."
    return LazyConvTranspose


LazyConv1d = _lazy_conv(1, Conv1d)
LazyConv2d = _lazy_conv(2, Conv2d)
LazyConv3d = _lazy_conv(3, Conv3d)
LazyConvTranspose1d = _lazy_conv_transpose(1, ConvTranspose1d)
LazyConvTranspose2d = _lazy_conv_transpose(2, ConvTranspose2d)
LazyConvTranspose3d = _lazy_conv_transpose(3, ConvTranspose3d)


class _LazyNormBase(LazyModuleMixin):
    def __init__(self, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True, device=None, dtype=None, *,
                 bias=True):
        super().__init__(0, eps, momentum, False, False)
        # the options the placeholders stand for (the base was built without them)
        self.affine = affine
        self.track_running_stats = track_running_stats
        if affine:
            self.weight = UninitializedParameter(dtype=dtype)
            if bias:
                self.bias = UninitializedParameter(dtype=dtype)
        if track_running_stats:
            from ... import _C
            self.running_mean = UninitializedBuffer(dtype=dtype)
            self.running_var = UninitializedBuffer(dtype=dtype)
            self.num_batches_tracked = _C._ops.tensor(0, dtype=_C.int64, device=device)

    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.num_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input):
        if self.has_uninitialized_params():
            self.num_features = input.shape[1]
            if self.affine:
                self.weight.materialize((self.num_features,))
                if self.bias is not None:
                    self.bias.materialize((self.num_features,))
            if self.track_running_stats:
                self.running_mean.materialize((self.num_features,))
                self.running_var.materialize((self.num_features,))
            self.reset_parameters()


def _lazy_norm(base, instance):
    class LazyNorm(_LazyNormBase, base):
        cls_to_become = base

        if instance:
            def initialize_parameters(self, input):
                if self.has_uninitialized_params():
                    # the channel dim: 1 when batched, 0 when not
                    self._check_input_dim(input)
                    shifted = input if input.dim() != self._get_no_batch_dim() else input.unsqueeze(0)
                    _LazyNormBase.initialize_parameters(self, shifted)

    LazyNorm.__name__ = LazyNorm.__qualname__ = f"Lazy{base.__name__}"
    LazyNorm.__doc__ = f"{base.__name__} whose num_features is inferred from the first input."
    return LazyNorm


LazyBatchNorm1d = _lazy_norm(BatchNorm1d, False)
LazyBatchNorm2d = _lazy_norm(BatchNorm2d, False)
LazyBatchNorm3d = _lazy_norm(BatchNorm3d, False)
LazyInstanceNorm1d = _lazy_norm(InstanceNorm1d, True)
LazyInstanceNorm2d = _lazy_norm(InstanceNorm2d, True)
LazyInstanceNorm3d = _lazy_norm(InstanceNorm3d, True)
