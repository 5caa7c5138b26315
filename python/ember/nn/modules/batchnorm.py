"""BatchNorm1d/2d/3d (and the _NormBase shared with InstanceNorm), and SyncBatchNorm."""
from ... import _C
from .module import Module
from .utils import F, _register_affine, _reset_affine

__all__ = ["BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "SyncBatchNorm"]


class _NormBase(Module):
    """Affine weight/bias (ones/zeros) and running statistics buffers (running_mean = 0,
    running_var = 1, num_batches_tracked = 0 as int64)."""

    _version = 2
    __constants__ = ["track_running_stats", "momentum", "eps", "num_features", "affine"]

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True, device=None,
                 dtype=None, *, bias=True):
        super().__init__()
        self.num_features = num_features
        self.eps = eps
        self.momentum = momentum
        self.affine = affine
        self.track_running_stats = track_running_stats
        _register_affine(self, affine, bias, num_features, dtype, device)
        if self.track_running_stats:
            self.register_buffer("running_mean", _C._ops.zeros(num_features, dtype=dtype, device=device))
            self.register_buffer("running_var", _C._ops.ones(num_features, dtype=dtype, device=device))
            self.register_buffer("num_batches_tracked", _C._ops.tensor(0, dtype=_C.int64, device=device))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)
        self.reset_parameters()

    def reset_running_stats(self):
        if self.track_running_stats:
            self.running_mean.zero_()
            self.running_var.fill_(1)
            self.num_batches_tracked.zero_()

    def reset_parameters(self):
        self.reset_running_stats()
        _reset_affine(self)

    def _check_input_dim(self, input):
        raise NotImplementedError

    def extra_repr(self):
        return ("{num_features}, eps={eps}, momentum={momentum}, affine={affine}, bias={use_bias}, "
                "track_running_stats={track_running_stats}".format(**self.__dict__, use_bias=self.bias is not None))

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                              error_msgs):
        version = local_metadata.get("version", None)
        if (version is None or version < 2) and self.track_running_stats:
            # dicts from before num_batches_tracked existed: keep the current count
            key = prefix + "num_batches_tracked"
            if key not in state_dict:
                state_dict[key] = self.num_batches_tracked if self.num_batches_tracked is not None \
                    else _C._ops.tensor(0, dtype=_C.int64)
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                                      error_msgs)


class _BatchNorm(_NormBase):
    def _step_statistics(self):
        """Counts this batch and gives (momentum factor, whether batch statistics are used, running mean,
        running var) for batch_norm."""
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats and self.num_batches_tracked is not None:
            self.num_batches_tracked.add_(1)
            # momentum=None: cumulative moving average over the batches seen
            factor = 1.0 / float(self.num_batches_tracked) if self.momentum is None else self.momentum
        bn_training = True if self.training else (self.running_mean is None and self.running_var is None)
        use_stats = not self.training or self.track_running_stats
        return (factor, bn_training, self.running_mean if use_stats else None,
                self.running_var if use_stats else None)

    def forward(self, input):
        self._check_input_dim(input)
        factor, bn_training, running_mean, running_var = self._step_statistics()
        return F.batch_norm(input, running_mean, running_var, self.weight, self.bias, bn_training, factor, self.eps)


class BatchNorm1d(_BatchNorm):
    """Batch normalization over (N, C) or (N, C, L) inputs."""

    def _check_input_dim(self, input):
        if input.dim() != 2 and input.dim() != 3:
            raise ValueError(f"expected 2D or 3D input (got {input.dim()}D input)")


class BatchNorm2d(_BatchNorm):
    """Batch normalization over (N, C, H, W) inputs."""

    def _check_input_dim(self, input):
        if input.dim() != 4:
            raise ValueError(f"expected 4D input (got {input.dim()}D input)")


class BatchNorm3d(_BatchNorm):
    """Batch normalization over (N, C, D, H, W) inputs."""

    def _check_input_dim(self, input):
        if input.dim() != 5:
            raise ValueError(f"expected 5D input (got {input.dim()}D input)")


class SyncBatchNorm(_BatchNorm):
    """Batch normalization whose batch statistics are those of the whole process group: in training under
    an initialized ember.distributed with more than one rank, each rank's channel sums are all-reduced
    (Gloo on the CPU, where PyTorch's SyncBatchNorm needs a GPU); otherwise it is BatchNorm."""

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True,
                 process_group=None, device=None, dtype=None):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype)
        self.process_group = process_group

    def _check_input_dim(self, input):
        if input.dim() < 2:
            raise ValueError(f"expected at least 2D input (got {input.dim()}D input)")

    def _check_non_zero_input_channels(self, input):
        if input.size(1) == 0:
            raise ValueError("SyncBatchNorm number of input channels should be non-zero")

    def forward(self, input):
        self._check_input_dim(input)
        self._check_non_zero_input_channels(input)
        factor, bn_training, running_mean, running_var = self._step_statistics()
        group, world_size = None, 1
        if bn_training and self.training:
            from ... import distributed as dist
            if dist.is_available() and dist.is_initialized():
                group = self.process_group if self.process_group is not None else dist.group.WORLD
                world_size = dist.get_world_size(group)
        if world_size <= 1:
            return F.batch_norm(input, running_mean, running_var, self.weight, self.bias, bn_training, factor, self.eps)
        return _sync_batch_norm_function().apply(input, self.weight, self.bias, running_mean, running_var, self.eps,
                                                 factor, group)

    @classmethod
    def convert_sync_batchnorm(cls, module, process_group=None):
        """module with every BatchNorm*D replaced by a SyncBatchNorm sharing its parameters and buffers."""
        out = module
        if isinstance(module, _BatchNorm) and not isinstance(module, SyncBatchNorm):
            out = SyncBatchNorm(module.num_features, module.eps, module.momentum, module.affine,
                                module.track_running_stats, process_group)
            if module.affine:
                out.weight = module.weight
                out.bias = module.bias
            out.running_mean = module.running_mean
            out.running_var = module.running_var
            out.num_batches_tracked = module.num_batches_tracked
            out.training = module.training
            if hasattr(module, "qconfig"):
                out.qconfig = module.qconfig
        for name, child in module.named_children():
            out.add_module(name, cls.convert_sync_batchnorm(child, process_group))
        del module
        return out


_SYNC_BN = []


def _sync_batch_norm_function():
    """The autograd Function of SyncBatchNorm's synchronized path (made on first use: nn loads before
    ember.autograd can be imported)."""
    if _SYNC_BN:
        return _SYNC_BN[0]
    from ...autograd.function import Function
    from ... import distributed as dist

    class _SyncBatchNormFn(Function):
        @staticmethod
        def forward(ctx, input, weight, bias, running_mean, running_var, eps, momentum, group):
            C = input.shape[1]
            dims = [0] + list(range(2, input.dim()))
            x = input.double()  # the sums in double precision: the group's mean and variance from them
            count = input.numel() // C
            packed = _C._ops.cat([x.sum(dims), (x * x).sum(dims),
                                  _C._ops.full([1], float(count), dtype=_C.float64)])
            dist.all_reduce(packed, group=group)
            total = float(packed[2 * C])
            if total <= 1:
                raise ValueError(f"Expected more than 1 value per channel when training, got input size "
                                 f"{list(input.shape)}")
            mean = packed[:C] / total
            var = (packed[C:2 * C] / total - mean * mean).clamp_min(0.0)
            invstd = (var + eps).rsqrt()
            if running_mean is not None:
                running_mean.mul_(1 - momentum).add_((mean * momentum).to(running_mean.dtype))
            if running_var is not None:
                running_var.mul_(1 - momentum).add_((var * (momentum * total / (total - 1))).to(running_var.dtype))
            shape = [1, C] + [1] * (input.dim() - 2)
            mean_b, invstd_b = mean.reshape(shape), invstd.reshape(shape)
            xhat = ((x - mean_b) * invstd_b).to(input.dtype)
            out = xhat
            if weight is not None:
                out = out * weight.reshape(shape)
            if bias is not None:
                out = out + bias.reshape(shape)
            ctx.save_for_backward(xhat, weight, invstd.to(input.dtype))
            ctx.group, ctx.total, ctx.dims, ctx.shape = group, total, dims, shape
            ctx.has_bias = bias is not None
            return out

        @staticmethod
        def backward(ctx, grad_output):
            xhat, weight, invstd = ctx.saved_tensors
            dims, shape, C = ctx.dims, ctx.shape, xhat.shape[1]
            sum_dy = grad_output.sum(dims)
            sum_dy_xhat = (grad_output * xhat).sum(dims)
            # the weight and bias gradients stay local (DistributedDataParallel averages them across ranks);
            # the input's needs the group's sums
            grad_weight = sum_dy_xhat if weight is not None else None
            grad_bias = sum_dy if ctx.has_bias else None
            grad_input = None
            if ctx.needs_input_grad[0]:
                packed = _C._ops.cat([sum_dy, sum_dy_xhat]).double()
                dist.all_reduce(packed, group=ctx.group)
                g_dy = (packed[:C] / ctx.total).to(grad_output.dtype).reshape(shape)
                g_dyx = (packed[C:] / ctx.total).to(grad_output.dtype).reshape(shape)
                scale = invstd.reshape(shape)
                if weight is not None:
                    scale = scale * weight.reshape(shape)
                grad_input = (grad_output - g_dy - xhat * g_dyx) * scale
            return grad_input, grad_weight, grad_bias, None, None, None, None, None

    _SYNC_BN.append(_SyncBatchNormFn)
    return _SyncBatchNormFn

