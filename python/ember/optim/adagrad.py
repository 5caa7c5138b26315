"""Adagrad."""
from .. import _C
from ..autograd import no_grad
from .optimizer import (Optimizer, _check_lr, _check_nonnegative, _float, _params_with_grad, _scalar_step,
                        _setdefault_groups, _sparse_rows, _split_sparse)

__all__ = ["Adagrad"]


class Adagrad(Optimizer):
    """s += g^2;  p -= lr / (1 + (t - 1) lr_decay) * g / (sqrt(s) + eps). State is created at
    construction (sum = initial_accumulator_value)."""

    def __init__(self, params, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0, eps=1e-10,
                 foreach=None, *, maximize=False, differentiable=False, fused=None):
        _check_lr(lr)
        _check_nonnegative(lr_decay, "lr_decay")
        _check_nonnegative(weight_decay, "weight_decay")
        _check_nonnegative(initial_accumulator_value, "initial_accumulator_value")
        _check_nonnegative(eps, "epsilon")
        defaults = dict(lr=lr, lr_decay=lr_decay, eps=eps, weight_decay=weight_decay,
                        initial_accumulator_value=initial_accumulator_value, foreach=foreach, maximize=maximize,
                        differentiable=differentiable, fused=fused)
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                st = self.state[p]
                st["step"] = _scalar_step()
                st["sum"] = _C._ops.full_like(p, self.defaults["initial_accumulator_value"])

    def __setstate__(self, state):
        super().__setstate__(state)
        _setdefault_groups(self, foreach=None, maximize=False, differentiable=False, fused=None)

    def step(self, closure=None):
        loss = self._eval_closure(closure)
        for group in self.param_groups:
            params, grads = _params_with_grad(group, "Adagrad")
            for p in params:
                st = self.state[p]
                if len(st) == 0:
                    st["step"] = _scalar_step()
                    st["sum"] = _C._ops.full_like(p, self.defaults["initial_accumulator_value"])
            (params, grads), sparse = _split_sparse(params, grads)
            for p, g in sparse:
                self._sparse_step(p, g, group)
            if not params:
                continue
            states = [self.state[p] for p in params]
            _C._ops._fused_adagrad_(params, grads, [s["sum"] for s in states], [s["step"] for s in states],
                                    _float(group["lr"]), float(group["weight_decay"]), float(group["lr_decay"]),
                                    float(group["eps"]), bool(group["maximize"]))
        return loss

    def _sparse_step(self, p, grad, group):
        """Adagrad on a sparse gradient, as torch's: only the rows the gradient names change."""
        if group["weight_decay"] != 0:
            raise RuntimeError("weight_decay option is not compatible with sparse gradients")
        st = self.state[p]
        with no_grad():
            st["step"].add_(1)
            clr = _float(group["lr"]) / (1 + (st["step"].item() - 1) * float(group["lr_decay"]))
            index, values = _sparse_rows(-grad if group["maximize"] else grad)
            if values.numel() == 0:
                return
            st["sum"].index_put_(index, values.pow(2), accumulate=True)
            std = st["sum"][index].sqrt().add_(float(group["eps"]))
            p.index_put_(index, values / std * -clr, accumulate=True)
