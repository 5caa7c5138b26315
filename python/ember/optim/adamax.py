"""Adamax (Adam with the infinity norm)."""
from .. import _C
from .optimizer import Optimizer, _check_betas, _check_lr, _check_nonnegative, _float, _init_state, _params_with_grad

__all__ = ["Adamax"]


class Adamax(Optimizer):
    """m = lerp(m, g, 1 - beta1);  u = max(beta2 u, |g| + eps);  p -= lr / (1 - beta1^t) * m / u."""

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, foreach=None, *,
                 maximize=False, differentiable=False, capturable=False):
        _check_lr(lr)
        _check_nonnegative(eps, "epsilon")
        _check_betas(betas)
        _check_nonnegative(weight_decay, "weight_decay")
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, foreach=foreach, maximize=maximize,
                        differentiable=differentiable, capturable=capturable)
        super().__init__(params, defaults)

    def step(self, closure=None):
        loss = self._eval_closure(closure)
        for group in self.param_groups:
            params, grads = _params_with_grad(group, "Adamax")
            if not params:
                continue
            states = _init_state(self.state, params, "exp_avg", "exp_inf")
            beta1, beta2 = group["betas"]
            _C._ops._fused_adamax_(params, grads, [s["exp_avg"] for s in states], [s["exp_inf"] for s in states],
                                   [s["step"] for s in states], _float(group["lr"]), float(beta1), float(beta2),
                                   float(group["eps"]), float(group["weight_decay"]), bool(group["maximize"]))
        return loss
