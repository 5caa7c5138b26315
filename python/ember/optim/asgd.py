"""ASGD: averaged stochastic gradient descent (Polyak & Juditsky)."""
from .. import _C
from .optimizer import (Optimizer, _check_lr, _check_nonnegative, _float, _params_with_grad, _scalar_step,
                        _setdefault_groups)

__all__ = ["ASGD"]


class ASGD(Optimizer):
    """p <- p (1 - lambd eta) - eta g;  ax <- ax + mu (p - ax);  eta = lr / (1 + lambd lr t)^alpha,
    mu = 1 / max(1, t - t0). The average ``ax`` is in ``state[p]["ax"]``."""

    def __init__(self, params, lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0, foreach=None,
                 maximize=False, differentiable=False, capturable=False):
        _check_lr(lr)
        _check_nonnegative(weight_decay, "weight_decay")
        defaults = dict(lr=lr, lambd=lambd, alpha=alpha, t0=t0, weight_decay=weight_decay, foreach=foreach,
                        maximize=maximize, differentiable=differentiable, capturable=capturable)
        super().__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        _setdefault_groups(self, foreach=None, maximize=False, differentiable=False, capturable=False)

    def step(self, closure=None):
        loss = self._eval_closure(closure)
        for group in self.param_groups:
            params, grads = _params_with_grad(group, "ASGD")
            lr = _float(group["lr"])
            lambd, alpha, t0, wd = group["lambd"], group["alpha"], group["t0"], group["weight_decay"]
            for p, g in zip(params, grads):
                st = self.state[p]
                if len(st) == 0:
                    st["step"] = _scalar_step()
                    st["eta"] = _C._ops.full((), lr, dtype=st["step"].dtype, device="cpu")
                    st["mu"] = _C._ops.ones((), dtype=st["step"].dtype, device="cpu")
                    st["ax"] = _C._ops.zeros_like(p)
                if group["maximize"]:
                    g = -g
                st["step"] += 1
                if wd != 0:
                    g = g + p * wd
                eta = st["eta"].item()
                p.mul_(1 - lambd * eta)
                p.sub_(g * eta)
                if st["mu"].item() != 1:
                    st["ax"].add_((p - st["ax"]) * st["mu"].item())
                else:
                    st["ax"].copy_(p)
                t = st["step"].item()
                # through a default-dtype tensor, as torch (eta and mu get its rounding even when
                # the state holds them in float64 after a load_state_dict)
                st["eta"].copy_(_C._ops.tensor(lr / ((1 + lambd * lr * t) ** alpha), device="cpu"))  # rounded as torch's as_tensor
                st["mu"].copy_(_C._ops.tensor(1 / max(1, t - t0), device="cpu"))
        return loss
