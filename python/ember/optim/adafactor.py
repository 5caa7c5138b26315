"""Adafactor (Shazeer & Stern, 2018), as torch.optim.Adafactor: second moments factored into row
and column statistics over the last two dims, relative step sizes, update clipping."""
import math

from .. import _C
from .._dtype_info import finfo
from .optimizer import Optimizer, _float, _params_with_grad, _setdefault_groups

__all__ = ["Adafactor"]


class Adafactor(Optimizer):
    """beta2_t = 1 - t^beta2_decay;  rho_t = min(lr, 1/sqrt(t));  alpha = max(eps2, RMS(p)) rho_t;
    V ~ R C / mean(R) (factored) or the EMA of g^2 (vectors);  u = g / sqrt(max(V, eps1^2));
    p -= alpha / max(1, RMS(u) / d) * u, with decoupled weight decay p *= 1 - lr wd."""

    def __init__(self, params, lr=1e-2, beta2_decay=-0.8, eps=(None, 1e-3), d=1.0, weight_decay=0.0, *,
                 foreach=None, maximize=False):
        if isinstance(lr, _C.TensorBase) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 >= beta2_decay:
            raise ValueError(f"beta2_decay should be <= 0 but is: {beta2_decay}")
        if eps[0] is not None and not 0.0 <= eps[0]:
            raise ValueError(f"epsilon1 should be >= 0 but is: {eps[0]}")
        if not 0.0 <= eps[1]:
            raise ValueError(f"epsilon2 should be >= 0 but is: {eps[1]}")
        if not 1.0 <= d:
            raise ValueError(f"Clipping threshold d should be >= 1 but is: {d}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight_decay should be >= 0 but is: {weight_decay}")
        defaults = dict(lr=lr, beta2_decay=beta2_decay, eps=eps, d=d, weight_decay=weight_decay, foreach=foreach,
                        maximize=maximize)
        super().__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        _setdefault_groups(self, foreach=None)

    def step(self, closure=None):
        loss = self._eval_closure(closure)
        for group in self.param_groups:
            params, grads = _params_with_grad(group, "Adafactor")
            lr = _float(group["lr"])
            eps1, eps2 = group["eps"]
            d, wd = group["d"], group["weight_decay"]
            for p, g in zip(params, grads):
                st = self.state[p]
                if len(st) == 0:
                    st["step"] = _C._ops.tensor(0.0, dtype=_C.float64 if _C.get_default_dtype() is _C.float64
                                                else _C.float32, device="cpu")
                    if g.dim() > 1:
                        st["row_var"] = _C._ops.zeros(tuple(g.shape[:-1]) + (1,), dtype=g.dtype, device=g.device)
                        st["col_var"] = _C._ops.zeros(tuple(g.shape[:-2]) + (1, g.shape[-1]), dtype=g.dtype, device=g.device)
                    else:
                        st["variance"] = _C._ops.zeros_like(g)
                if group["maximize"]:
                    g = -g
                e1 = finfo(p.dtype).eps if eps1 is None else eps1
                st["step"] += 1
                t = st["step"].item()
                one_minus_beta2 = t ** group["beta2_decay"]
                rho = min(lr, 1 / math.sqrt(t))
                alpha = max(eps2, p.norm(2).item() / math.sqrt(p.numel())) * rho
                if wd != 0:
                    p.mul_(1 - lr * wd)
                if g.dim() > 1:
                    # mean of g^2 over a dim, as squared norm / n (torch's rounding)
                    row_mean = g.norm(2, -1, keepdim=True).square() / g.shape[-1]
                    col_mean = g.norm(2, -2, keepdim=True).square() / g.shape[-2]
                    st["row_var"].lerp_(row_mean, one_minus_beta2)
                    st["col_var"].lerp_(col_mean, one_minus_beta2)
                    var = st["row_var"] @ st["col_var"]
                    var = var / st["row_var"].mean(-2, keepdim=True).clamp(min=e1)
                else:
                    st["variance"].lerp_(g * g, one_minus_beta2)
                    var = st["variance"].clone()
                update = var.clamp(min=e1 * e1).rsqrt() * g
                denom = max(1.0, update.norm(2).item() / (math.sqrt(update.numel()) * d))
                p.sub_(update * (alpha / denom))
        return loss
