"""Adadelta."""
from .. import _C
from .optimizer import Optimizer, _check_lr, _check_nonnegative, _float, _init_state, _params_with_grad

__all__ = ["Adadelta"]


class Adadelta(Optimizer):
    """v = rho v + (1 - rho) g^2;  d = sqrt(u + eps) / sqrt(v + eps) * g;  u = rho u + (1 - rho) d^2;
    p -= lr d."""

    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, foreach=None, *, capturable=False,
                 maximize=False, differentiable=False):
        _check_lr(lr)
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        _check_nonnegative(eps, "epsilon")
        _check_nonnegative(weight_decay, "weight_decay")
        defaults = dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay, maximize=maximize, capturable=capturable,
                        foreach=foreach, differentiable=differentiable)
        super().__init__(params, defaults)

    def step(self, closure=None):
        loss = self._eval_closure(closure)
        for group in self.param_groups:
            params, grads = _params_with_grad(group, "Adadelta")
            if not params:
                continue
            states = _init_state(self.state, params, "square_avg", "acc_delta")
            _C._ops._fused_adadelta_(params, grads, [s["square_avg"] for s in states],
                                     [s["acc_delta"] for s in states], [s["step"] for s in states],
                                     _float(group["lr"]), float(group["rho"]), float(group["eps"]),
                                     float(group["weight_decay"]), bool(group["maximize"]))
        return loss
