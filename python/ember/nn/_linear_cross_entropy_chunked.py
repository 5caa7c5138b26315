"""linear_cross_entropy's chunked path (options=LinearCrossEntropyOptions(...)): the batch is walked in
chunks of batch_chunk_size rows, so only one (chunk, num_classes) block of logits exists at a time.

For row n with logits z = x W^T + b, target t and class weight c = weight[t] (0 when t == ignore_index),
the loss is c * (logsumexp(z) - z[t]) and its gradient with respect to z is c * (softmax(z) - onehot(t)).
The scalar reductions ("mean" / "sum") compute their gradients during the forward sweep (there is no
later chance without keeping the logits), and backward only scales them by the incoming gradient, as
torch's does; "none" needs each row's incoming gradient first, so its backward sweeps the chunks again."""
from .. import _C
from .._C import _ops
from ..autograd.function import Function, once_differentiable

__all__ = []


def _check_targets(target, ignore_index, num_classes):
    """RuntimeError naming the first target outside [0, num_classes) that is not ignore_index."""
    bad = ((target < 0) | (target >= num_classes)) & (target != ignore_index)
    if bool(bad.any()):
        first = int(target[bad][0])
        raise RuntimeError(f"index {first} is out of bounds for dimension 1 with size {num_classes}")


def _check_shapes(input, target, weight, num_classes):
    """The reference path's (cross_entropy's) errors for a class weight or target of the wrong shape."""
    if weight is not None and (weight.dim() != 1 or weight.size(0) != num_classes):
        raise RuntimeError(f"weight tensor should be defined either for all {num_classes} classes or no classes but "
                           f"got weight tensor of shape: {list(weight.shape)}")
    if target.dim() > 1:
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    if input.dim() == 2:
        target_batch = target.size(0) if target.dim() == 1 else 0
        if target_batch != input.size(0):
            raise ValueError(f"Expected input batch_size ({input.size(0)}) to match target batch_size "
                             f"({target_batch}).")
    elif target.dim() == 1 and target.size(0) != 1:
        raise ValueError(f"For 1D input, 1D target must have size 1, but got target size: {target.size(0)}")


def _row_weights(target, weight, ignore_index, acc_dtype):
    """(class weight of each row's target, 0 where ignored; the target with ignored rows pointed at class 0)."""
    kept = target != ignore_index
    safe_target = target.masked_fill(kept.logical_not(), 0)
    if weight is None:
        row_weight = kept.to(acc_dtype)
    else:
        row_weight = weight.to(acc_dtype).index_select(0, safe_target) * kept.to(acc_dtype)
    return row_weight, safe_target


def _sweep(input, linear_weight, linear_bias, safe_target, row_weight, chunk, acc_dtype, grad_scale, needs):
    """One pass over the batch chunks. Returns the per-row weighted losses (N,) and, when grad_scale is
    given (a scalar or an (N,) tensor multiplying each row's gradient), the gradients of input,
    linear_weight and linear_bias that `needs` asks for (None for the others)."""
    num_batches = input.size(0)
    w = linear_weight.to(acc_dtype)
    b = None if linear_bias is None else linear_bias.to(acc_dtype)
    losses, grad_rows = [], []
    grad_w = _ops.zeros(tuple(w.shape), dtype=acc_dtype, device=w.device) if grad_scale is not None and needs[1] else None
    grad_b = _ops.zeros(tuple(b.shape), dtype=acc_dtype, device=b.device) if grad_scale is not None and needs[3] else None
    for start in range(0, num_batches, chunk):
        stop = min(start + chunk, num_batches)
        x = input[start:stop].to(acc_dtype)
        logits = _ops.matmul(x, w.t())
        if b is not None:
            logits = logits + b
        target = safe_target[start:stop].unsqueeze(1)
        lse = logits.logsumexp(1, keepdim=True)
        c = row_weight[start:stop]
        losses.append(c * (lse - logits.gather(1, target)).squeeze(1))
        if grad_scale is None:
            continue
        coef = c * (grad_scale if isinstance(grad_scale, float) else grad_scale[start:stop].to(acc_dtype))
        coef = coef.unsqueeze(1)
        grad_logits = (logits - lse).exp() * coef  # c * softmax ...
        grad_logits = grad_logits.scatter_add(1, target, coef.neg())  # ... - c * onehot(target)
        if needs[0]:
            grad_rows.append(_ops.matmul(grad_logits, w))
        if grad_w is not None:
            grad_w = grad_w + _ops.matmul(grad_logits.t(), x)
        if grad_b is not None:
            grad_b = grad_b + grad_logits.sum(0)
    loss = _ops.cat(losses) if losses else _ops.zeros((0,), dtype=acc_dtype, device=input.device)
    grad_input = None
    if grad_scale is not None and needs[0]:
        grad_input = (_ops.cat(grad_rows) if grad_rows else _ops.zeros(tuple(input.shape), dtype=acc_dtype, device=input.device))
        grad_input = grad_input.to(input.dtype)
    grad_w = None if grad_w is None else grad_w.to(linear_weight.dtype)
    grad_b = None if grad_b is None else grad_b.to(linear_bias.dtype)
    return loss, grad_input, grad_w, grad_b


class _ChunkedLinearCrossEntropy(Function):
    """"mean" / "sum": the loss, with its gradients computed in the same sweep and kept for backward."""

    @staticmethod
    def forward(ctx, input, linear_weight, target, linear_bias, weight, reduction, ignore_index, chunk, acc_dtype,
                allow_retain_graph, grad_enabled):
        row_weight, safe_target = _row_weights(target, weight, ignore_index, acc_dtype)
        needs = ctx.needs_input_grad[:4] if grad_enabled else (False,) * 4  # forward itself runs under no_grad
        if reduction == "mean":
            total = float(row_weight.sum())
            scale = 1.0 / total if total != 0 else float("nan")  # no kept rows: nan, as cross_entropy's 0 / 0
        else:
            scale = 1.0
        losses, *grads = _sweep(input, linear_weight, linear_bias, safe_target, row_weight, chunk, acc_dtype,
                                scale if any(needs) else None, needs)
        ctx.grads = grads
        ctx.allow_retain_graph = allow_retain_graph
        return (losses.sum() * scale).to(input.dtype)

    @staticmethod
    @once_differentiable  # higher-order gradients are not supported (nor are they in torch's chunked path)
    def backward(ctx, grad_output):
        grads = ctx.grads
        if grads is None:
            raise RuntimeError("linear_cross_entropy chunked backward called twice; retain_graph=True / double "
                               "backward are not supported.")
        if not ctx.allow_retain_graph:
            ctx.grads = None  # consumed: a second backward must fail rather than reuse them
        gi, gw, gb = (None if g is None else g * grad_output for g in grads)
        return gi, gw, None, gb, None, None, None, None, None, None, None


class _ChunkedLinearCrossEntropyNoReduction(Function):
    """"none": the per-row losses; backward sweeps the chunks again with each row's incoming gradient."""

    @staticmethod
    def forward(ctx, input, linear_weight, target, linear_bias, weight, ignore_index, chunk, acc_dtype):
        row_weight, safe_target = _row_weights(target, weight, ignore_index, acc_dtype)
        losses = _sweep(input, linear_weight, linear_bias, safe_target, row_weight, chunk, acc_dtype, None,
                        (False,) * 4)[0]
        ctx.save_for_backward(input, linear_weight, linear_bias)
        ctx.row_weight, ctx.safe_target, ctx.chunk, ctx.acc_dtype = row_weight, safe_target, chunk, acc_dtype
        return losses.to(input.dtype)

    @staticmethod
    @once_differentiable  # higher-order gradients are not supported (nor are they in torch's chunked path)
    def backward(ctx, grad_output):
        input, linear_weight, linear_bias = ctx.saved_tensors
        _, gi, gw, gb = _sweep(input, linear_weight, linear_bias, ctx.safe_target, ctx.row_weight, ctx.chunk,
                               ctx.acc_dtype, grad_output, ctx.needs_input_grad[:4])
        return gi, gw, None, gb, None, None, None, None


def chunked_linear_cross_entropy(input, linear_weight, target, linear_bias, weight, reduction, ignore_index,
                                 options, num_classes, in_features):
    """The loss of a 2-D or 1-D input through the chunked path (options already validated against the call)."""
    _check_shapes(input, target, weight, num_classes)
    batched = input.dim() == 2
    if not batched:
        input, target = input.unsqueeze(0), target.reshape(1)
    options = options._adjust(num_batches=input.size(0), in_features=in_features, num_classes=num_classes,
                              dtype=input.dtype, device=input.device)
    dtype, acc_dtype = input.dtype, options.acc_dtype
    if dtype != acc_dtype and not (dtype in (_C.float16, _C.bfloat16) and acc_dtype == _C.float32):
        raise RuntimeError("linear_cross_entropy supports float32 acc_dtype with float16/bfloat16 inputs, but got "
                           f"{acc_dtype} acc_dtype and {dtype} inputs.")
    _check_targets(target, ignore_index, num_classes)
    if reduction == "none":
        loss = _ChunkedLinearCrossEntropyNoReduction.apply(input, linear_weight, target, linear_bias, weight,
                                                           ignore_index, options.batch_chunk_size, acc_dtype)
    else:
        loss = _ChunkedLinearCrossEntropy.apply(input, linear_weight, target, linear_bias, weight, reduction,
                                                ignore_index, options.batch_chunk_size, acc_dtype,
                                                options.allow_retain_graph, _C.is_grad_enabled())
    return loss if batched else loss.squeeze(0)
