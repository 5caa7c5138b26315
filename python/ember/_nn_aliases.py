"""The neural-network functions PyTorch also exposes at its top level (torch.avg_pool1d, torch.lstm_cell,
torch.native_dropout, ...), with the top-level signatures: these follow the op schemas (stride=()
meaning "the kernel size", enum ints for grid_sampler, tuples of (output, indices)), which differ from
nn.functional's in places. Also the batch-norm statistics helpers that SyncBatchNorm is built from."""
from . import _C
from ._C import _ops
from .autograd.grad_mode import no_grad
from .nn import functional as F

# Same signature at both levels: the functional form is the top-level one.
adaptive_avg_pool1d = F.adaptive_avg_pool1d
bilinear = F.bilinear
pixel_shuffle = F.pixel_shuffle
pixel_unshuffle = F.pixel_unshuffle
native_channel_shuffle = F.native_channel_shuffle
pdist = F.pdist
conv_tbc = F.conv_tbc


def _stride(stride):
    return None if stride is None or (isinstance(stride, (list, tuple)) and len(stride) == 0) else stride


def avg_pool1d(input, kernel_size, stride=(), padding=0, ceil_mode=False, count_include_pad=True):
    """1-d average pooling; stride () means the kernel size."""
    return F.avg_pool1d(input, kernel_size, _stride(stride), padding, ceil_mode, count_include_pad)


def max_pool1d_with_indices(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    """1-d max pooling returning (output, indices); stride () means the kernel size."""
    return F.max_pool1d(input, kernel_size, _stride(stride), padding, dilation, ceil_mode, return_indices=True)


def adaptive_max_pool1d(input, output_size):
    """(output, indices), always both."""
    return F.adaptive_max_pool1d(input, output_size, return_indices=True)


def constant_pad_nd(input, pad, value=0):
    """Pads the last len(pad) // 2 dims (last dim first) with `value`; negative amounts crop."""
    pad = list(pad)
    if len(pad) % 2:
        raise RuntimeError(f"Length of pad must be even but instead it equals {len(pad)}")
    if len(pad) > 2 * input.dim():
        raise RuntimeError("Length of pad should be no more than twice the number of dimensions of the input. Pad "
                           f"length is {len(pad)}while the input has {input.dim()}dimensions.")
    if isinstance(value, complex) and input.is_complex():  # (pad's value is a float) each part with its own
        return _ops.complex(F.pad(input.real, pad, "constant", value.real),
                            F.pad(input.imag, pad, "constant", value.imag))
    return F.pad(input, pad, "constant", value)


def _grid_sampler(n, input, grid, interpolation_mode, padding_mode, align_corners):
    if input.dim() != n + 2 or grid.dim() != n + 2:
        raise RuntimeError(f"grid_sampler(): expected {n + 2}D input and grid with same number of dimensions, but got "
                           f"input with sizes {list(input.shape)} and grid with sizes {list(grid.shape)}")
    return grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners)


def grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners):
    """F.grid_sample with the enums as ints: mode 0 bilinear, 1 nearest, 2 bicubic; padding 0 zeros,
    1 border, 2 reflection."""
    if interpolation_mode not in (0, 1, 2):
        raise ValueError(f"grid_sampler(): interpolation_mode must be 0, 1 or 2, got {interpolation_mode}")
    if padding_mode not in (0, 1, 2):
        raise ValueError(f"grid_sampler(): padding_mode must be 0, 1 or 2, got {padding_mode}")
    if interpolation_mode == 2 and input.dim() != 4:
        raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")
    return _ops._grid_sampler(input, grid, interpolation_mode, padding_mode, bool(align_corners))


def grid_sampler_2d(input, grid, interpolation_mode, padding_mode, align_corners):
    """grid_sampler for 4-d input and grid."""
    return _grid_sampler(2, input, grid, interpolation_mode, padding_mode, align_corners)


def grid_sampler_3d(input, grid, interpolation_mode, padding_mode, align_corners):
    """grid_sampler for 5-d input and grid."""
    return _grid_sampler(3, input, grid, interpolation_mode, padding_mode, align_corners)


def affine_grid_generator(theta, size, align_corners):
    """The sampling grid of a batch of affine matrices theta: F.affine_grid's op, without its Python-level
    checks (empty sizes give empty grids, as the native op)."""
    return _ops._affine_grid_generator(theta, list(size), bool(align_corners))


def _check_cell(input, hx, w_ih, w_hh):
    if input.shape[-1] != w_ih.shape[1]:
        raise RuntimeError(f"input has inconsistent input_size: got {input.shape[-1]} expected {w_ih.shape[1]}")
    if hx.shape[-1] != w_hh.shape[1]:
        raise RuntimeError(f"hidden0 has inconsistent hidden_size: got {hx.shape[-1]} expected {w_hh.shape[1]}")


def _gates(input, hx, w_ih, w_hh, b_ih, b_hh):
    return F.linear(input, w_ih, b_ih) + F.linear(hx, w_hh, b_hh)


def rnn_tanh_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """One Elman RNN step: tanh(input W_ih^T + b_ih + hx W_hh^T + b_hh)."""
    _check_cell(input, hx, w_ih, w_hh)
    return _gates(input, hx, w_ih, w_hh, b_ih, b_hh).tanh()


def rnn_relu_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """One Elman RNN step with relu."""
    _check_cell(input, hx, w_ih, w_hh)
    return _gates(input, hx, w_ih, w_hh, b_ih, b_hh).relu()


def lstm_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """One LSTM step, hx = (h, c): returns (h', c'); gates in PyTorch's i, f, g, o order."""
    if len(hx) != 2:
        raise RuntimeError("lstm_cell expects two hidden states")
    h, c = hx
    _check_cell(input, h, w_ih, w_hh)
    return _ops._lstm_cell(_gates(input, h, w_ih, w_hh, b_ih, b_hh), c)


def gru_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """One GRU step (gates r, z, n in PyTorch's order)."""
    _check_cell(input, hx, w_ih, w_hh)
    return _ops._gru_cell(F.linear(input, w_ih, b_ih), F.linear(hx, w_hh, b_hh), hx)


def native_dropout(input, p, train):
    """(output, mask): in training (train True or None) each element is kept with probability 1 - p
    and scaled by 1 / (1 - p); otherwise input unchanged and an all-true mask."""
    if not train and train is not None:
        return input.clone(), _ops.ones(tuple(input.shape), dtype=_C.bool)
    if not 0 <= p <= 1:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={1 - p}")
    if not input.is_floating_point():
        raise RuntimeError(f"result type Float can't be cast to the desired output type "
                           f"{_C._ops.empty((), dtype=input.dtype).type().split('.')[-1][:-len('Tensor')]}")
    keep = _ops.bernoulli(_ops.full(tuple(input.shape), 1 - p, dtype=input.dtype)).to(_C.bool)
    scale = 0.0 if p == 1 else 1 / (1 - p)
    return input * keep.to(input.dtype) * scale, keep


def native_norm(input, p=2, dim=None, keepdim=False, dtype=None):
    """The p-norm (PyTorch has this kernel for sparse tensors only; here it is the dense norm)."""
    if dim is None:
        return _ops.norm(input, 2 if p is None else p)
    return _ops.norm(input if dtype is None else input.to(dtype), 2 if p is None else p, dim, keepdim)


def native_group_norm(input, weight, bias, N, C, HxW, group, eps):
    """(output, mean, rstd) with mean and rstd of shape (N, group): the statistics over each group
    of C // group channels."""
    if input.numel() != N * C * HxW:
        raise RuntimeError("Expected X.numel() == N * C * HxW to be true, but got false.")
    x = input.reshape(N, group, C // group * HxW)  # not -1: ambiguous when N == 0
    mean = x.mean(-1)
    rstd = (x.var(-1, correction=0) + eps).rsqrt()
    y = ((x - mean.unsqueeze(-1)) * rstd.unsqueeze(-1)).reshape(N, C, HxW)
    if weight is not None:
        y = y * weight.reshape(1, C, 1)
    if bias is not None:
        y = y + bias.reshape(1, C, 1)
    return y.reshape(tuple(input.shape)), mean, rstd


# ---- whole recurrences: torch.rnn_tanh / rnn_relu / lstm / gru ----
# Two forms each, told apart by their arguments: (input, hx, params, has_biases, num_layers, dropout,
# train, bidirectional, batch_first) or, for packed sequences, (data, batch_sizes, hx, params, has_biases,
# num_layers, dropout, train, bidirectional). params is the flat list of every layer and direction's
# w_ih, w_hh[, b_ih, b_hh][, w_hr] (nn.RNN's _flat_weights).

def _recurrence(mode, args):
    from .nn.modules.rnn import _run_direction
    packed = mode == "LSTM" and isinstance(args[1], _C.TensorBase) or \
        mode != "LSTM" and isinstance(args[2], _C.TensorBase)
    if packed:
        x, batch_sizes, hx, params, has_biases, num_layers, dropout, train, bidirectional = args
        sizes, batch_first = [int(b) for b in batch_sizes.tolist()], False
    else:
        x, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first = args
        if batch_first:
            x = x.transpose(0, 1)
        sizes = [x.shape[1]] * x.shape[0]
    h0, c0 = (hx[0], hx[1]) if mode == "LSTM" else (hx, None)
    projected = mode == "LSTM" and h0.shape[-1] != c0.shape[-1]
    dirs = 2 if bidirectional else 1
    per = 2 + (2 if has_biases else 0) + (1 if projected else 0)
    if len(params) != per * num_layers * dirs:
        raise RuntimeError(f"{mode.lower()}: expected {per * num_layers * dirs} parameters, got {len(params)}")
    hs, cs = [], []
    for layer in range(num_layers):
        if layer > 0 and dropout > 0 and train:
            x = F.dropout(x, dropout, True)
        outs_by_dir = []
        for d in range(dirs):
            k = layer * dirs + d
            w = params[k * per:(k + 1) * per]
            b_ih, b_hh = (w[2], w[3]) if has_biases else (None, None)
            # as nn.RNN: LSTM / RNN add b_hh to the input projection, GRU applies it inside the reset gate
            b_in = b_ih + b_hh if b_ih is not None and mode != "GRU" else b_ih
            xw = F.linear(x, w[0], b_in)
            steps = xw.split(sizes, 0) if packed else xw.unbind(0)
            outs, h, c = _run_direction(mode, steps, sizes, h0[k], c0[k] if c0 is not None else None, w[1],
                                        b_hh if mode == "GRU" else None, w[-1] if projected else None, d == 1)
            outs_by_dir.append(_ops.cat(outs) if packed else _ops.stack(outs))
            hs.append(h)
            cs.append(c)
        x = outs_by_dir[0] if dirs == 1 else _ops.cat(outs_by_dir, -1)
    if batch_first:
        x = x.transpose(0, 1)
    if mode == "LSTM":
        return x, _ops.stack(hs), _ops.stack(cs)
    return x, _ops.stack(hs)


def rnn_tanh(*args):
    """A multi-layer tanh RNN over a sequence: (output, h_n)."""
    return _recurrence("RNN_TANH", args)


def rnn_relu(*args):
    """A multi-layer relu RNN over a sequence: (output, h_n)."""
    return _recurrence("RNN_RELU", args)


def gru(*args):
    """A multi-layer GRU over a sequence: (output, h_n)."""
    return _recurrence("GRU", args)


def lstm(*args):
    """(output, h_n, c_n); hx = (h_0, c_0)."""
    return _recurrence("LSTM", args)


# ---- batch-norm statistics in pieces (SyncBatchNorm's building blocks) ----
# Channel dim 1; every other dim is reduced. PyTorch has these kernels on CUDA only.

def _channel_view(t, input):
    return t.reshape([1, -1] + [1] * (input.dim() - 2))


def _reduce_dims(input):
    return [0] + list(range(2, input.dim()))


def batch_norm_stats(input, eps):
    """(mean, invstd) per channel, invstd = 1 / sqrt(biased var + eps)."""
    dims = _reduce_dims(input)
    return input.mean(dims), (input.var(dims, correction=0) + eps).rsqrt()


def batch_norm_elemt(input, weight, bias, mean, invstd, eps):
    """(input - mean) * invstd * weight + bias per channel (dim 1)."""
    y = (input - _channel_view(mean, input)) * _channel_view(invstd, input)
    if weight is not None:
        y = y * _channel_view(weight, input)
    if bias is not None:
        y = y + _channel_view(bias, input)
    return y


def batch_norm_gather_stats_with_counts(input, mean, invstd, running_mean, running_var, momentum, eps, counts):
    """Combines per-group (mean, invstd) rows, each over counts[g] samples, into global (mean, invstd);
    updates the running statistics (unbiased variance) in place."""
    counts = counts.to(mean.dtype).reshape(-1, 1)
    n = counts.sum()
    global_mean = (counts * mean).sum(0) / n
    var_g = invstd.reciprocal().square() - eps
    var = (counts * (var_g + (mean - global_mean).square())).sum(0) / n
    if running_mean is not None or running_var is not None:
        with no_grad():
            if running_mean is not None:
                running_mean.mul_(1 - momentum).add_(global_mean.to(running_mean.dtype) * momentum)
            if running_var is not None:
                unbiased = var * n / (n - 1)
                running_var.mul_(1 - momentum).add_(unbiased.to(running_var.dtype) * momentum)
    return global_mean.to(input.dtype), (var + eps).rsqrt().to(input.dtype)


def batch_norm_gather_stats(input, mean, invstd, running_mean, running_var, momentum, eps, count):
    """batch_norm_gather_stats_with_counts with the same count for every group."""
    counts = _ops.full((mean.shape[0],), count, dtype=mean.dtype)
    return batch_norm_gather_stats_with_counts(input, mean, invstd, running_mean, running_var, momentum, eps, counts)


def batch_norm_update_stats(input, running_mean, running_var, momentum):
    """(mean, biased var) per channel; running_mean/var move toward mean / unbiased var by momentum."""
    dims = _reduce_dims(input)
    mean, var = input.mean(dims), input.var(dims, correction=0)
    n = input.numel() // max(input.shape[1], 1)
    with no_grad():
        if running_mean is not None:
            running_mean.mul_(1 - momentum).add_(mean * momentum)
        if running_var is not None:
            running_var.mul_(1 - momentum).add_(var * (n / max(n - 1, 1)) * momentum)
    return mean, var


def batch_norm_backward_reduce(grad_out, input, mean, invstd, weight, input_g, weight_g, bias_g):
    """(sum_dy, sum_dy_xmu, grad_weight, grad_bias) per channel; None where the flag is off."""
    dims = _reduce_dims(input)
    sum_dy = grad_out.sum(dims)
    sum_dy_xmu = (grad_out * (input - _channel_view(mean, input))).sum(dims)
    grad_weight = sum_dy_xmu * invstd if weight_g else None
    grad_bias = sum_dy if bias_g else None
    if not input_g:
        sum_dy = sum_dy_xmu = None
    return sum_dy, sum_dy_xmu, grad_weight, grad_bias


def batch_norm_backward_elemt(grad_out, input, mean, invstd, weight, sum_dy, sum_dy_xmu, count):
    """The input gradient of batch norm from the reduced sums over all count.sum() samples."""
    total = count.sum().to(input.dtype)
    mean_dy = _channel_view(sum_dy / total, input)
    mean_dy_xmu = _channel_view(sum_dy_xmu / total, input)
    inv = _channel_view(invstd, input)
    xmu = input - _channel_view(mean, input)
    scale = inv if weight is None else inv * _channel_view(weight, input)
    return (grad_out - mean_dy - xmu * inv.square() * mean_dy_xmu) * scale


__all__ = [
    "adaptive_avg_pool1d", "adaptive_max_pool1d", "avg_pool1d", "max_pool1d_with_indices", "bilinear",
    "constant_pad_nd", "pixel_shuffle", "pixel_unshuffle", "native_channel_shuffle", "pdist", "conv_tbc",
    "grid_sampler", "grid_sampler_2d", "grid_sampler_3d", "affine_grid_generator", "rnn_tanh_cell", "rnn_relu_cell",
    "lstm_cell", "gru_cell", "rnn_tanh", "rnn_relu", "gru", "lstm", "native_dropout", "native_norm",
    "native_group_norm", "batch_norm_stats", "batch_norm_elemt", "batch_norm_gather_stats",
    "batch_norm_gather_stats_with_counts", "batch_norm_update_stats", "batch_norm_backward_reduce",
    "batch_norm_backward_elemt"
]
