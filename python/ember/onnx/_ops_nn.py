"""ONNX forms of the nn ops: linear, convolutions, pooling, normalizations, softmax, dropout,
embedding and the common losses."""
import numpy as np

from ._builder import norm_dim, symbolic

_REDUCTIONS = {0: "none", 1: "mean", 2: "sum"}


def _x(g, n, k=0):
    return g.t(n.args[k], n.out.dtype)


@symbolic("linear")
def _linear(g, n):
    x, w, b = n.args
    if x.rank == 2:  # Gemm: x @ w^T + b in one node
        return g.op("Gemm", _x(g, n), _x(g, n, 1), _x(g, n, 2), transB=1)
    y = g.op("MatMul", _x(g, n), g.op("Transpose", _x(g, n, 1), perm=[1, 0]) if w.rank == 2 else _x(g, n, 1))
    return y if b is None else g.op("Add", y, _x(g, n, 2))


def _spatial(values, count, default=None):
    """An int[N] argument as N ints (torch lets one int stand for all)."""
    if not values:
        return list(default) if default is not None else [0] * count
    values = list(values)
    return values * count if len(values) == 1 else values


def _batched(g, n, x, spatial, body):
    """Run body on x with a batch dim (torch also takes unbatched (C, *spatial) inputs)."""
    if x.rank == spatial + 1:
        y = body(g.op("Unsqueeze", g.t(x, n.out.dtype), g.ints([0])))
        return g.op("Squeeze", y, g.ints([0]))
    return body(g.t(x, n.out.dtype))


def _conv(g, n, x, w, b, stride, pads, dilation, groups, transposed=False, output_padding=None):
    spatial = w.rank - 2
    attrs = dict(strides=_spatial(stride, spatial, [1] * spatial), dilations=_spatial(dilation, spatial, [1] * spatial),
                 group=int(groups), kernel_shape=w.shape[2:], pads=pads)
    if transposed:
        attrs["output_padding"] = _spatial(output_padding, spatial)
    op_type = "ConvTranspose" if transposed else "Conv"
    weight, bias = g.t(w, n.out.dtype), g.t(b, n.out.dtype)
    return _batched(g, n, x, spatial, lambda xin: g.op(op_type, xin, weight, bias, **attrs))


def _symmetric(padding, spatial):
    p = _spatial(padding, spatial)
    return p + p


@symbolic("conv1d", "conv2d", "conv3d")
def _convnd(g, n):
    x, w, b, stride, padding, dilation, groups = n.args
    return _conv(g, n, x, w, b, stride, _symmetric(padding, w.rank - 2), dilation, groups)


@symbolic("conv1d.padding", "conv2d.padding", "conv3d.padding")
def _conv_padding_str(g, n):
    x, w, b, stride, padding, dilation, groups = n.args
    spatial = w.rank - 2
    if padding == "valid":
        pads = [0] * (2 * spatial)
    elif padding == "same":  # torch puts the odd extra padding at the end, as SAME_UPPER
        total = [d * (k - 1) for d, k in zip(_spatial(dilation, spatial, [1] * spatial), w.shape[2:])]
        pads = [t // 2 for t in total] + [t - t // 2 for t in total]
    else:
        raise g.unsupported(f"padding={padding!r}")
    return _conv(g, n, x, w, b, stride, pads, dilation, groups)


@symbolic("conv_transpose1d", "conv_transpose2d", "conv_transpose3d")
def _conv_transpose(g, n):
    x, w, b, stride, padding, output_padding, groups, dilation = n.args
    return _conv(g, n, x, w, b, stride, _symmetric(padding, w.rank - 2), dilation, groups, True, output_padding)


@symbolic("convolution")
def _convolution(g, n):
    x, w, b, stride, padding, dilation, transposed, output_padding, groups = n.args
    return _conv(g, n, x, w, b, stride, _symmetric(padding, w.rank - 2), dilation, groups, transposed,
                 output_padding)


# ---- pooling
def _max_pool(g, n, spatial):
    x, kernel, stride, padding, dilation, ceil_mode = n.args[:6]
    kernel = _spatial(kernel, spatial)
    attrs = dict(kernel_shape=kernel, strides=_spatial(stride, spatial, kernel),
                 pads=_symmetric(padding, spatial), dilations=_spatial(dilation, spatial, [1] * spatial),
                 ceil_mode=int(ceil_mode))
    return _batched(g, n, x, spatial, lambda xin: g.op("MaxPool", xin, **attrs))


@symbolic("max_pool1d", "max_pool2d", "max_pool3d")
def _max_poolnd(g, n):
    return _max_pool(g, n, int(n.op[-2]))


@symbolic("max_pool_with_indices")
def _max_pool_with_indices(g, n):
    values = _max_pool(g, n, len(n.args[1]))
    return [values, g.poison("max pooling's indices (ONNX numbers them over the whole tensor, torch per "
                             "plane); export return_indices=False")]


@symbolic("avg_pool_nd")
def _avg_pool(g, n):
    x, kernel, stride, padding, ceil_mode, count_include_pad, divisor_override = n.args
    if divisor_override is not None:
        raise g.unsupported("avg_pool with divisor_override")
    spatial = len(kernel)
    attrs = dict(kernel_shape=list(kernel), strides=_spatial(stride, spatial, kernel),
                 pads=_symmetric(padding, spatial), ceil_mode=int(ceil_mode),
                 count_include_pad=int(count_include_pad))
    return _batched(g, n, x, spatial, lambda xin: g.op("AveragePool", xin, **attrs))


def _adaptive(g, n, op_type, global_op):
    x, output_size = n.args[:2]
    spatial = len(output_size)
    in_sizes = x.shape[-spatial:]
    out_sizes = [i if o is None or o < 0 else o for i, o in zip(in_sizes, output_size)]
    if all(o == 1 for o in out_sizes):
        return _batched(g, n, x, spatial, lambda xin: g.op(global_op, xin))
    if any(o == 0 or i % o for i, o in zip(in_sizes, out_sizes)):
        raise g.unsupported(f"adaptive pooling from {in_sizes} to {out_sizes}: ONNX pools with one kernel "
                            "size, which only fits when each input size is a multiple of the output size")
    # the kernel is fixed from the traced sizes, as torch's exporter does
    kernel = [i // o for i, o in zip(in_sizes, out_sizes)]
    return _batched(g, n, x, spatial, lambda xin: g.op(op_type, xin, kernel_shape=kernel, strides=kernel))


@symbolic("adaptive_avg_pool_nd")
def _adaptive_avg_pool(g, n):
    return _adaptive(g, n, "AveragePool", "GlobalAveragePool")


@symbolic("adaptive_max_pool_with_indices")
def _adaptive_max_pool(g, n):
    values = _adaptive(g, n, "MaxPool", "GlobalMaxPool")
    return [values, g.poison("adaptive max pooling's indices; export return_indices=False")]


# ---- resampling
_RESIZE_MODES = {"nearest": "nearest", "nearest-exact": "nearest", "linear": "linear", "bilinear": "linear",
                 "trilinear": "linear", "bicubic": "cubic"}


@symbolic("upsample")
def _upsample(g, n):
    x, size, mode, align_corners = n.args[:4]
    spatial = len(size)
    scales = n.args[4:4 + spatial]
    if mode not in _RESIZE_MODES:
        raise g.unsupported(f"interpolate mode {mode!r}")
    attrs = {"mode": _RESIZE_MODES[mode]}
    if mode == "nearest":  # torch's legacy nearest: src = floor(dst / scale)
        attrs.update(coordinate_transformation_mode="asymmetric", nearest_mode="floor")
    elif mode == "nearest-exact":  # src = floor((dst + 0.5) / scale)
        attrs.update(coordinate_transformation_mode="half_pixel", nearest_mode="round_prefer_ceil")
    else:
        attrs["coordinate_transformation_mode"] = "align_corners" if align_corners else "pytorch_half_pixel"
        if mode == "bicubic":
            attrs["cubic_coeff_a"] = -0.75
    name = g.t(x, n.out.dtype)
    if all(sc is not None for sc in scales) and not (align_corners and mode not in ("nearest", "nearest-exact")):
        # the user's scale factors: ONNX, as torch, sizes the output floor(in * scale) and maps with them
        return g.op("Resize", name, None, g.const([1.0, 1.0] + [float(sc) for sc in scales], "float32"), **attrs)
    sizes = g.op("Concat", g.shape_of(name, end=2), g.ints(size), axis=0)
    return g.op("Resize", name, None, None, sizes, **attrs)


# ---- normalizations
def _param_or_fill(g, n, v, shape, fill):
    return g.const(np.full(shape, fill), n.out.dtype) if v is None else g.t(v, n.out.dtype)


def _batch_norm(g, n, x, weight, bias, mean, var, eps):
    c = [x.shape[1]]
    return g.op("BatchNormalization", _x(g, n), _param_or_fill(g, n, weight, c, 1.0),
                _param_or_fill(g, n, bias, c, 0.0), g.t(mean, n.out.dtype), g.t(var, n.out.dtype),
                epsilon=float(eps))


@symbolic("batch_norm", "native_batch_norm")
def _batch_norm_op(g, n):
    x, weight, bias, mean, var, training, _momentum, eps = n.args[:8]
    if training or mean is None:
        raise g.unsupported("batch_norm with batch statistics (training mode, or no running stats): export "
                            "the model in eval mode (training=TrainingMode.EVAL) with running stats tracked")
    y = _batch_norm(g, n, x, weight, bias, mean, var, eps)
    if n.op == "batch_norm":
        return y
    return [y] + [g.poison("native_batch_norm's saved statistics")] * 2


@symbolic("instance_norm")
def _instance_norm(g, n):
    x, weight, bias, mean, var, use_input_stats, _momentum, eps = n.args[:8]
    if not use_input_stats:
        return _batch_norm(g, n, x, weight, bias, mean, var, eps)
    c = [x.shape[1]]
    return g.op("InstanceNormalization", _x(g, n), _param_or_fill(g, n, weight, c, 1.0),
                _param_or_fill(g, n, bias, c, 0.0), epsilon=float(eps))


@symbolic("layer_norm", "native_layer_norm")
def _layer_norm(g, n):
    x, shape, weight, bias, eps = n.args[:5]
    y = g.op("LayerNormalization", _x(g, n), _param_or_fill(g, n, weight, shape, 1.0),
             None if bias is None else g.t(bias, n.out.dtype), axis=-len(shape), epsilon=float(eps))
    if n.op == "layer_norm":
        return y
    return [y] + [g.poison("native_layer_norm's saved statistics")] * 2


def _channel_affine(g, n, y, x, weight, bias):
    """y * weight + bias with (C,) weight and bias applied along dim 1."""
    shape = g.ints([x.shape[1]] + [1] * (x.rank - 2))
    if weight is not None:
        y = g.op("Mul", y, g.op("Reshape", g.t(weight, n.out.dtype), shape))
    if bias is not None:
        y = g.op("Add", y, g.op("Reshape", g.t(bias, n.out.dtype), shape))
    return y


@symbolic("group_norm")
def _group_norm(g, n):
    x, groups, weight, bias, eps = n.args[:5]
    name = _x(g, n)
    grouped = g.op("Reshape", name, g.ints([0, groups, -1]))  # 0 keeps the (possibly dynamic) batch
    mean = g.reduce("ReduceMean", grouped, [2], True)
    centred = g.op("Sub", grouped, mean)
    var = g.reduce("ReduceMean", g.op("Mul", centred, centred), [2], True)
    normed = g.op("Div", centred, g.op("Sqrt", g.op("Add", var, g.scalar(eps, n.out.dtype))))
    y = g.op("Reshape", normed, g.shape_of(name))
    return _channel_affine(g, n, y, x, weight, bias)


@symbolic("rms_norm")
def _rms_norm(g, n):
    x, shape, weight, eps = n.args
    if eps is None:
        eps = float(np.finfo(np.float16 if n.out.dtype == "float16" else
                             np.float64 if n.out.dtype == "float64" else np.float32).eps)
        if n.out.dtype == "bfloat16":
            eps = 2.0 ** -7
    name = _x(g, n)
    axes = list(range(x.rank - len(shape), x.rank))
    mean_sq = g.reduce("ReduceMean", g.op("Mul", name, name), axes, True)
    y = g.op("Mul", name, g.op("Reciprocal", g.op("Sqrt", g.op("Add", mean_sq, g.scalar(eps, n.out.dtype)))))
    return y if weight is None else g.op("Mul", y, g.t(weight, n.out.dtype))


@symbolic("local_response_norm")
def _lrn(g, n):
    x, size, alpha, beta, k = n.args
    return g.op("LRN", _x(g, n), size=int(size), alpha=float(alpha), beta=float(beta), bias=float(k))


@symbolic("normalize")
def _normalize(g, n):
    x, p, dim, eps = n.args
    if p not in (1.0, 2.0):
        raise g.unsupported(f"normalize with p={p} (1 and 2 have an ONNX form)")
    name = _x(g, n)
    norm = g.reduce("ReduceL2" if p == 2.0 else "ReduceL1", name, [norm_dim(dim, x.rank)], True)
    return g.op("Div", name, g.op("Max", norm, g.scalar(eps, n.out.dtype)))


# ---- recurrent
_ONNX_GATE_ORDER = [0, 3, 1, 2]  # ONNX's LSTM gates are i, o, f, c; Ember's (torch's) i, f, g, o


@symbolic("_lstm_seq")
def _lstm_seq(g, n):
    """One LSTM layer direction over a precomputed input projection xw [T, B, 4H]: ONNX LSTM with
    xw as its input and a gate-reordering permutation as W, the recurrent weight reordered alike."""
    xw, h0, c0, w_hh, reverse = n.args
    hidden = w_hh.shape[1]
    rows = np.concatenate([np.arange(k * hidden, (k + 1) * hidden) for k in _ONNX_GATE_ORDER])
    w = np.zeros((1, 4 * hidden, 4 * hidden))
    w[0, np.arange(4 * hidden), rows] = 1.0
    r = g.op("Unsqueeze", g.op("Gather", g.t(w_hh, n.out.dtype), g.ints(rows), axis=0), g.ints([0]))
    h_init, c_init = (g.op("Unsqueeze", g.t(s, n.out.dtype), g.ints([0])) for s in (h0, c0))
    y, _, c_last = g.op("LSTM", g.t(xw, n.out.dtype), g.const(w, n.out.dtype), r, None, None, h_init, c_init,
                        outputs=3, hidden_size=hidden, direction="reverse" if reverse else "forward")
    hs = g.op("Squeeze", y, g.ints([1]))
    # ONNX gives the cell state of the last step only: cs[last] is that, other steps have no form
    cs = g.poison("the cell states of an LSTM's inner steps (ONNX LSTM returns the last one only)")
    g.last_step[cs] = (0 if reverse else xw.shape[0] - 1, xw.shape[0], g.op("Squeeze", c_last, g.ints([0])))
    return [hs, cs, g.poison("_lstm_seq's gate activations (kept for its backward)")]


def _gates(g, n, name, count):
    hidden = n.out.shape[-1]
    return g.op("Split", name, g.ints([hidden] * count), axis=-1, outputs=count)


@symbolic("_lstm_cell")
def _lstm_cell(g, n):  # gates [B, 4H] in the order i, f, g, o
    gates, cx = n.args
    i, f, cand, o = _gates(g, n, g.t(gates, n.out.dtype), 4)
    cy = g.op("Add", g.op("Mul", g.op("Sigmoid", f), g.t(cx, n.out.dtype)),
              g.op("Mul", g.op("Sigmoid", i), g.op("Tanh", cand)))
    return [g.op("Mul", g.op("Sigmoid", o), g.op("Tanh", cy)), cy]


@symbolic("_gru_cell")
def _gru_cell(g, n):  # gi, gh [B, 3H] in the order r, z, n; gh holds b_hn (it goes inside r * (...))
    gi, gh, hx = n.args
    i_r, i_z, i_n = _gates(g, n, g.t(gi, n.out.dtype), 3)
    h_r, h_z, h_n = _gates(g, n, g.t(gh, n.out.dtype), 3)
    r = g.op("Sigmoid", g.op("Add", i_r, h_r))
    z = g.op("Sigmoid", g.op("Add", i_z, h_z))
    cand = g.op("Tanh", g.op("Add", i_n, g.op("Mul", r, h_n)))
    h = g.t(hx, n.out.dtype)
    return g.op("Add", cand, g.op("Mul", z, g.op("Sub", h, cand)))  # (1 - z) n + z h


# ---- distances
@symbolic("cosine_similarity")
def _cosine_similarity(g, n):
    x1, x2, dim, eps = n.args
    rank = max(x1.rank, x2.rank)
    d = norm_dim(dim, rank)
    eps_c = g.scalar(eps, n.out.dtype)

    def unit(v):
        name = g.t(v, n.out.dtype)
        axis = d - (rank - v.rank)  # the same dim counted from the end, before broadcasting
        return g.op("Div", name, g.op("Max", g.reduce("ReduceL2", name, [axis], True), eps_c))
    return g.reduce("ReduceSum", g.op("Mul", unit(x1), unit(x2)), [d], False)


@symbolic("pairwise_distance")
def _pairwise_distance(g, n):
    x1, x2, p, eps, keepdim = n.args
    diff = g.op("Add", g.op("Sub", _x(g, n), _x(g, n, 1)), g.scalar(eps, n.out.dtype))
    axis = max(x1.rank, x2.rank) - 1
    if p == 2.0:
        return g.reduce("ReduceL2", diff, [axis], keepdim)
    if p == 1.0:
        return g.reduce("ReduceL1", diff, [axis], keepdim)
    if p <= 0 or p == float("inf"):
        raise g.unsupported(f"pairwise_distance with p={p}")
    powered = g.op("Pow", g.op("Abs", diff), g.scalar(p, n.out.dtype))
    return g.op("Pow", g.reduce("ReduceSum", powered, [axis], keepdim), g.scalar(1.0 / p, n.out.dtype))


@symbolic("channel_shuffle")
def _channel_shuffle(g, n):
    x, groups = n.args
    name = g.t(x)
    grouped = g.op("Reshape", name, g.ints([0, groups, x.shape[1] // groups, -1]))
    swapped = g.op("Transpose", grouped, perm=[0, 2, 1, 3])
    return g.op("Reshape", swapped, g.shape_of(name))


# ---- softmax, dropout, embedding
@symbolic("softmax", "log_softmax")
def _softmax(g, n):
    x, dim = n.args[:2]
    return g.op("Softmax" if n.op == "softmax" else "LogSoftmax", _x(g, n), axis=norm_dim(dim, x.rank))


@symbolic("dropout", "feature_dropout", "alpha_dropout", "feature_alpha_dropout")
def _dropout(g, n):
    x, p, train = n.args
    if not train or p == 0:
        return g.op("Identity", _x(g, n))
    if n.op != "dropout":
        raise g.unsupported(f"{n.op} in training mode (export in eval mode)")
    return g.op("Dropout", _x(g, n), g.scalar(p, "float32"), g.scalar(True, "bool"))


@symbolic("embedding")
def _embedding(g, n):
    weight, indices = n.args[:2]
    return g.op("Gather", g.t(weight, n.out.dtype), g.t(indices, "int64"), axis=0)


@symbolic("one_hot")
def _one_hot(g, n):
    x, classes = n.args
    if classes < 0:
        raise g.unsupported("one_hot without num_classes (the class count comes from the data)")
    return g.op("OneHot", g.t(x, "int64"), g.const(classes, "int64"), g.ints([0, 1]), axis=-1)


# ---- losses
def _reduce_loss(g, n, loss, reduction):
    if reduction == 0:
        return loss
    return g.reduce("ReduceMean" if reduction == 1 else "ReduceSum", loss, None, False)


@symbolic("mse_loss", "l1_loss")
def _pointwise_loss(g, n):
    diff = g.op("Sub", _x(g, n), _x(g, n, 1))
    loss = g.op("Mul", diff, diff) if n.op == "mse_loss" else g.op("Abs", diff)
    return _reduce_loss(g, n, loss, n.args[2])


@symbolic("smooth_l1_loss", "huber_loss")
def _smooth_l1(g, n):
    beta = float(n.args[3])
    diff = g.op("Abs", g.op("Sub", _x(g, n), _x(g, n, 1)))
    s = lambda v: g.scalar(v, n.out.dtype)  # noqa: E731
    quad = g.op("Mul", g.op("Mul", diff, diff), s(0.5 / beta if n.op == "smooth_l1_loss" else 0.5))
    lin = g.op("Sub", diff, s(0.5 * beta)) if n.op == "smooth_l1_loss" else \
        g.op("Mul", g.op("Sub", diff, s(0.5 * beta)), s(beta))
    if n.op == "smooth_l1_loss" and beta == 0.0:
        return _reduce_loss(g, n, diff, n.args[2])
    return _reduce_loss(g, n, g.op("Where", g.op("Less", diff, s(beta)), quad, lin), n.args[2])


@symbolic("binary_cross_entropy_with_logits")
def _bce_logits(g, n):
    x, target, weight, pos_weight, reduction = n.args
    xn, t = _x(g, n), _x(g, n, 1)
    log_sig = g.op("Neg", g.op("Softplus", g.op("Neg", xn)))          # log sigmoid(x)
    log_one_minus = g.op("Neg", g.op("Softplus", xn))                  # log (1 - sigmoid(x))
    pos = g.op("Mul", t, log_sig)
    if pos_weight is not None:
        pos = g.op("Mul", pos, g.t(pos_weight, n.out.dtype))
    one_minus_t = g.op("Sub", g.scalar(1.0, n.out.dtype), t)
    loss = g.op("Neg", g.op("Add", pos, g.op("Mul", one_minus_t, log_one_minus)))
    if weight is not None:
        loss = g.op("Mul", loss, g.t(weight, n.out.dtype))
    return _reduce_loss(g, n, loss, reduction)


@symbolic("nll_loss", "nll_loss_nd")
def _nll_loss(g, n):
    x, target, weight, reduction, ignore_index = n.args
    return g.op("NegativeLogLikelihoodLoss", _x(g, n), g.t(target, "int64"), g.t(weight, n.out.dtype),
                reduction=_REDUCTIONS[reduction], ignore_index=int(ignore_index))


@symbolic("cross_entropy_loss")
def _cross_entropy(g, n):
    x, target, weight, reduction, ignore_index, label_smoothing = n.args
    if label_smoothing:
        raise g.unsupported("cross_entropy with label_smoothing")
    if target.dtype in ("float32", "float64", "float16", "bfloat16"):  # class probabilities
        if weight is not None:
            raise g.unsupported("cross_entropy with class-probability targets and a weight")
        logp = g.op("LogSoftmax", _x(g, n), axis=1 if x.rank > 1 else 0)
        loss = g.op("Neg", g.reduce("ReduceSum", g.op("Mul", logp, _x(g, n, 1)), [1 if x.rank > 1 else 0], False))
        return _reduce_loss(g, n, loss, reduction)
    if x.rank < 2:
        raise g.unsupported("cross_entropy of an unbatched input")
    return g.op("SoftmaxCrossEntropyLoss", _x(g, n), g.t(target, "int64"), g.t(weight, n.out.dtype),
                reduction=_REDUCTIONS[reduction], ignore_index=int(ignore_index))

