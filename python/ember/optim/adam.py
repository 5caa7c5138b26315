"""Adam and AdamW."""
from .. import _C
from .optimizer import (Optimizer, _check_betas, _check_lr, _check_nonnegative, _float, _params_with_grad,
                        _scalar_step, _setdefault_groups)

__all__ = ["Adam", "AdamW"]


class Adam(Optimizer):
    """Adam (Kingma & Ba): m = lerp(m, g, 1 - beta1); v = beta2 v + (1 - beta2) g^2;
    p -= lr / (1 - beta1^t) * m / (sqrt(v) / sqrt(1 - beta2^t) + eps), with amsgrad keeping the
    running max of v; weight_decay is L2 (added to g), or decoupled (p *= 1 - lr wd, AdamW).
    One fused C++ call per param group."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, amsgrad=False, *,
                 foreach=None, maximize=False, capturable=False, differentiable=False, fused=None,
                 decoupled_weight_decay=False):
        _check_lr(lr)
        _check_nonnegative(eps, "epsilon")
        _check_betas(betas)
        _check_nonnegative(weight_decay, "weight_decay")
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, amsgrad=amsgrad, maximize=maximize,
                        foreach=foreach, capturable=capturable, differentiable=differentiable, fused=fused,
                        decoupled_weight_decay=decoupled_weight_decay)
        super().__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        _setdefault_groups(self, amsgrad=False, maximize=False, foreach=None, capturable=False, differentiable=False,
                           decoupled_weight_decay=False, fused=None)

    def step(self, closure=None):
        loss = self._eval_closure(closure)
        for group in self.param_groups:
            params, grads = _params_with_grad(group, type(self).__name__)
            if not params:
                continue
            amsgrad = bool(group["amsgrad"])
            for p in params:
                st = self.state[p]
                if len(st) == 0:
                    st["step"] = _scalar_step()
                    st["exp_avg"] = _C._ops.zeros_like(p)
                    st["exp_avg_sq"] = _C._ops.zeros_like(p)
                    if amsgrad:
                        st["max_exp_avg_sq"] = _C._ops.zeros_like(p)
            states = [self.state[p] for p in params]
            beta1, beta2 = group["betas"]
            _C._ops._fused_adam_(params, grads, [s["exp_avg"] for s in states], [s["exp_avg_sq"] for s in states],
                                 [s["max_exp_avg_sq"] for s in states] if amsgrad else [],
                                 [s["step"] for s in states], _float(group["lr"]), _float(beta1), _float(beta2),
                                 float(group["weight_decay"]), float(group["eps"]), amsgrad, bool(group["maximize"]),
                                 bool(group["decoupled_weight_decay"]))
        return loss


class AdamW(Adam):
    """Adam with decoupled weight decay (Loshchilov & Hutter): p *= 1 - lr * weight_decay."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2, amsgrad=False, *,
                 maximize=False, foreach=None, capturable=False, differentiable=False, fused=None):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach, maximize=maximize,
                         capturable=capturable, differentiable=differentiable, fused=fused,
                         decoupled_weight_decay=True)

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            group["decoupled_weight_decay"] = True
