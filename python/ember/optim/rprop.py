"""Rprop: resilient backpropagation (per-element step sizes adapted from the gradient's sign)."""
from .. import _C
from .optimizer import Optimizer, _check_lr, _float, _params_with_grad, _scalar_step, _setdefault_groups

__all__ = ["Rprop"]


class Rprop(Optimizer):
    """Each element's step size grows by etas[1] while its gradient keeps its sign and shrinks by
    etas[0] when it flips (that step is then skipped), clamped to step_sizes; p -= sign(g) * step."""

    def __init__(self, params, lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50), *, capturable=False, foreach=None,
                 maximize=False, differentiable=False):
        _check_lr(lr)
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        defaults = dict(lr=lr, etas=etas, step_sizes=step_sizes, foreach=foreach, maximize=maximize,
                        differentiable=differentiable, capturable=capturable)
        super().__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        _setdefault_groups(self, foreach=None, maximize=False, differentiable=False, capturable=False)

    def step(self, closure=None):
        loss = self._eval_closure(closure)
        for group in self.param_groups:
            params, grads = _params_with_grad(group, "Rprop")
            etaminus, etaplus = group["etas"]
            step_min, step_max = group["step_sizes"]
            for p, g in zip(params, grads):
                st = self.state[p]
                if len(st) == 0:
                    st["step"] = _scalar_step()
                    st["prev"] = _C._ops.zeros_like(p)
                    st["step_size"] = _C._ops.full_like(g, _float(group["lr"]))
                if group["maximize"]:
                    g = -g
                st["step"] += 1
                sign = (g * st["prev"]).sign()
                # +1 -> etaplus, -1 -> etaminus, 0 -> 1
                factor = _C._ops.where(sign > 0, _C._ops.full_like(sign, etaplus),
                                       _C._ops.where(sign < 0, _C._ops.full_like(sign, etaminus),
                                                     _C._ops.ones_like(sign)))
                st["step_size"].mul_(factor).clamp_(step_min, step_max)
                # after a sign flip the gradient counts as zero: no step now, no flip test next time
                g = _C._ops.where(sign < 0, _C._ops.zeros_like(g), g)
                p.sub_(g.sign() * st["step_size"])
                st["prev"].copy_(g)
        return loss
