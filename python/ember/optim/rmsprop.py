"""RMSprop (centered, momentum)."""
from .. import _C
from .optimizer import (Optimizer, _check_lr, _check_nonnegative, _float, _params_with_grad, _scalar_step,
                        _setdefault_groups)

__all__ = ["RMSprop"]


class RMSprop(Optimizer):
    """v = alpha v + (1 - alpha) g^2;  avg = sqrt(v - gbar^2) (centered, gbar = lerp(gbar, g, 1 - alpha))
    or sqrt(v), plus eps;  with momentum: b = momentum b + g / avg, p -= lr b;  else p -= lr g / avg."""

    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0, centered=False,
                 capturable=False, foreach=None, maximize=False, differentiable=False):
        _check_lr(lr)
        _check_nonnegative(eps, "epsilon")
        _check_nonnegative(momentum, "momentum")
        _check_nonnegative(weight_decay, "weight_decay")
        _check_nonnegative(alpha, "alpha")
        defaults = dict(lr=lr, momentum=momentum, alpha=alpha, eps=eps, centered=centered, weight_decay=weight_decay,
                        capturable=capturable, foreach=foreach, maximize=maximize, differentiable=differentiable)
        super().__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        _setdefault_groups(self, momentum=0, centered=False, foreach=None, maximize=False, differentiable=False,
                           capturable=False)

    def step(self, closure=None):
        loss = self._eval_closure(closure)
        for group in self.param_groups:
            params, grads = _params_with_grad(group, "RMSprop")
            if not params:
                continue
            momentum, centered = float(group["momentum"]), bool(group["centered"])
            for p in params:
                st = self.state[p]
                if len(st) == 0:
                    st["step"] = _scalar_step()
                    st["square_avg"] = _C._ops.zeros_like(p)
                    if momentum > 0:
                        st["momentum_buffer"] = _C._ops.zeros_like(p)
                    if centered:
                        st["grad_avg"] = _C._ops.zeros_like(p)
            states = [self.state[p] for p in params]
            _C._ops._fused_rmsprop_(params, grads, [s["square_avg"] for s in states],
                                    [s["grad_avg"] for s in states] if centered else [],
                                    [s["momentum_buffer"] for s in states] if momentum > 0 else [],
                                    [s["step"] for s in states], _float(group["lr"]), float(group["alpha"]),
                                    float(group["eps"]), float(group["weight_decay"]), momentum, centered,
                                    bool(group["maximize"]))
        return loss
