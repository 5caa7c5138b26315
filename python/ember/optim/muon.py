"""Muon (Keller Jordan, 2024): momentum SGD whose update is orthogonalised by a Newton-Schulz
iteration, for 2-D parameters (the hidden layers' weight matrices)."""
import math

from .. import _C
from .optimizer import Optimizer, _float, _params_with_grad

__all__ = ["Muon"]

# the quintic iteration's coefficients and epsilon, as published with Muon (torch uses the same)
EPS = 1e-7
DEFAULT_A = 3.4445
DEFAULT_B = -4.7750
DEFAULT_C = 2.0315
DEFAULT_NS_STEPS = 5


def _orthogonalize(update, ns_coefficients, ns_steps, eps):
    """An approximately orthogonal matrix with update's singular vectors (X <- aX + (bA + cA^2)X with
    A = X X^T, from X = update / ||update||). It runs in bfloat16, like torch's: the iteration only
    needs the singular values pushed near 1, not exactly there."""
    if ns_steps >= 100:
        raise ValueError("Number of steps must be less than 100 for computational efficiency")
    if update.dim() != 2:
        raise ValueError("Input tensor gradient must be a 2D matrix")
    if len(ns_coefficients) != 3:
        raise ValueError("Coefficients must be a tuple of exactly 3 values")
    a, b, c = ns_coefficients
    # iterate on the wide orientation, so the Gram matrix is the small one
    tall = update.shape[0] > update.shape[1]
    x = update.to(_C.bfloat16)
    if tall:
        x = x.T
    # in place, as torch: a bfloat16 update is itself scaled (the momentum buffer, without nesterov)
    x.div_(x.norm().clamp(min=eps))
    # each product is formed in float32 and rounded to bfloat16 once, as torch's bfloat16 addmm does
    bf16 = _C.bfloat16
    for _ in range(ns_steps):
        xf = x.float()
        gram = (xf @ xf.T).to(bf16).float()
        poly = _C._ops.addmm(gram, gram, gram, beta=b, alpha=c).to(bf16).float()
        x = _C._ops.addmm(xf, poly, xf, beta=a).to(bf16)
    return x.T if tall else x


def _adjusted_lr(lr, adjust_lr_fn, shape):
    """The lr scaled for the matrix's shape: sqrt(max(1, A/B)) ("original", the default) keeps the
    update's RMS steady across aspect ratios; 0.2 sqrt(max(A, B)) ("match_rms_adamw") matches AdamW's."""
    rows, cols = shape[:2]
    if adjust_lr_fn is None or adjust_lr_fn == "original":
        ratio = math.sqrt(max(1, rows / cols))
    elif adjust_lr_fn == "match_rms_adamw":
        ratio = 0.2 * math.sqrt(max(rows, cols))
    else:
        ratio = 1.0
    return lr * ratio


class Muon(Optimizer):
    """B <- mu B + (1 - mu) g (an EMA);  u = lerp(g, B, mu) (nesterov) or B;  O = NS(u);
    p <- p (1 - lr wd) - adjusted_lr O. Parameters must be matrices."""

    def __init__(self, params, lr=1e-3, weight_decay=0.1, momentum=0.95, nesterov=True,
                 ns_coefficients=(DEFAULT_A, DEFAULT_B, DEFAULT_C), eps=EPS, ns_steps=DEFAULT_NS_STEPS,
                 adjust_lr_fn=None):
        if isinstance(lr, _C.TensorBase) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 <= momentum:
            raise ValueError(f"momentum should be >= 0 but is: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight decay should be >= 0 but is: {weight_decay}")
        if adjust_lr_fn is not None and adjust_lr_fn not in ["original", "match_rms_adamw"]:
            raise ValueError(f"Adjust learning rate function {adjust_lr_fn} is not supported")
        defaults = dict(lr=lr, weight_decay=weight_decay, momentum=momentum, nesterov=nesterov,
                        ns_coefficients=ns_coefficients, eps=eps, ns_steps=ns_steps, adjust_lr_fn=adjust_lr_fn)
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                if p.dim() != 2:
                    raise ValueError(f"Muon only supports 2D parameters whereas we found a parameter with size: "
                                     f"{p.size()}")

    def step(self, closure=None):
        loss = self._eval_closure(closure)
        for group in self.param_groups:
            params, grads = _params_with_grad(group, "Muon")
            lr = _float(group["lr"])
            momentum, wd = group["momentum"], group["weight_decay"]
            for p, g in zip(params, grads):
                if g.is_sparse:
                    raise RuntimeError("Muon does not support sparse gradients")
                st = self.state[p]
                if "momentum_buffer" not in st:
                    st["momentum_buffer"] = _C._ops.zeros_like(g)
            for p, g in zip(params, grads):
                if g.dim() != 2:
                    raise ValueError("Param gradient must be a 2D matrix")
                buf = self.state[p]["momentum_buffer"]
                buf.lerp_(g, 1 - momentum)
                update = g.lerp(buf, momentum) if group["nesterov"] else buf
                update = _orthogonalize(update, group["ns_coefficients"], group["ns_steps"], group["eps"])
                p.mul_(1 - lr * wd)
                p.add_(update, alpha=-_adjusted_lr(lr, group["adjust_lr_fn"], p.shape))
        return loss
