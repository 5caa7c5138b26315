"""NAdam (Adam with Nesterov momentum)."""
from .. import _C
from .optimizer import Optimizer, _check_betas, _check_lr, _check_nonnegative, _float, _params_with_grad, _scalar_step

__all__ = ["NAdam"]


class NAdam(Optimizer):
    """Adam with Nesterov momentum and the momentum schedule mu_t = beta1 (1 - 0.5 * 0.96^(t psi))
    (Dozat), psi = momentum_decay."""

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, momentum_decay=4e-3,
                 decoupled_weight_decay=False, *, foreach=None, maximize=False, capturable=False,
                 differentiable=False):
        _check_lr(lr)
        _check_nonnegative(eps, "epsilon")
        _check_betas(betas)
        _check_nonnegative(weight_decay, "weight_decay")
        _check_nonnegative(momentum_decay, "momentum_decay")
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, momentum_decay=momentum_decay,
                        decoupled_weight_decay=decoupled_weight_decay, maximize=maximize, foreach=foreach,
                        capturable=capturable, differentiable=differentiable)
        super().__init__(params, defaults)

    def step(self, closure=None):
        loss = self._eval_closure(closure)
        for group in self.param_groups:
            params, grads = _params_with_grad(group, "NAdam")
            if not params:
                continue
            for p in params:
                st = self.state[p]
                if len(st) == 0:
                    st["step"] = _scalar_step()
                    st["mu_product"] = _scalar_step().fill_(1.0)
                    st["exp_avg"] = _C._ops.zeros_like(p)
                    st["exp_avg_sq"] = _C._ops.zeros_like(p)
            states = [self.state[p] for p in params]
            beta1, beta2 = group["betas"]
            _C._ops._fused_nadam_(params, grads, [s["exp_avg"] for s in states], [s["exp_avg_sq"] for s in states],
                                  [s["mu_product"] for s in states], [s["step"] for s in states],
                                  _float(group["lr"]), float(beta1), float(beta2), float(group["weight_decay"]),
                                  float(group["eps"]), float(group["momentum_decay"]),
                                  bool(group["decoupled_weight_decay"]), bool(group["maximize"]))
        return loss
