"""RAdam (rectified Adam)."""
from .. import _C
from .optimizer import Optimizer, _check_betas, _check_lr, _check_nonnegative, _float, _init_state, _params_with_grad

__all__ = ["RAdam"]


class RAdam(Optimizer):
    """Adam whose adaptive term is switched on, with the variance rectification of Liu et al.,
    once the length of the approximated SMA exceeds 5 (plain momentum SGD before)."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, decoupled_weight_decay=False,
                 *, foreach=None, maximize=False, capturable=False, differentiable=False):
        _check_lr(lr)
        _check_nonnegative(eps, "epsilon")
        _check_betas(betas)
        _check_nonnegative(weight_decay, "weight_decay")
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, maximize=maximize, foreach=foreach,
                        capturable=capturable, decoupled_weight_decay=decoupled_weight_decay,
                        differentiable=differentiable)
        super().__init__(params, defaults)

    def step(self, closure=None):
        loss = self._eval_closure(closure)
        for group in self.param_groups:
            params, grads = _params_with_grad(group, "RAdam")
            if not params:
                continue
            states = _init_state(self.state, params, "exp_avg", "exp_avg_sq")
            beta1, beta2 = group["betas"]
            _C._ops._fused_radam_(params, grads, [s["exp_avg"] for s in states], [s["exp_avg_sq"] for s in states],
                                  [s["step"] for s in states], _float(group["lr"]), float(beta1), float(beta2),
                                  float(group["weight_decay"]), float(group["eps"]),
                                  bool(group["decoupled_weight_decay"]), bool(group["maximize"]))
        return loss
