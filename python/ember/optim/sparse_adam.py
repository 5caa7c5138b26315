"""SparseAdam: Adam for sparse gradients (embedding(sparse=True))."""
import math

from .. import _C
from ..autograd import no_grad
from .optimizer import Optimizer, _check_betas, _check_lr, _check_nonnegative, _float, _setdefault_groups, _sparse_rows

__all__ = ["SparseAdam"]


class SparseAdam(Optimizer):
    """Adam whose moments and parameters change only in the rows a sparse gradient names ("lazy
    Adam"): for those rows m += (1 - beta1)(g - m), v += (1 - beta2)(g^2 - v),
    p -= lr sqrt(1 - beta2^t) / (1 - beta1^t) * m / (sqrt(v) + eps). Dense gradients are refused."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, maximize=False):
        _check_lr(lr)
        _check_nonnegative(eps, "epsilon")
        _check_betas(betas)
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, maximize=maximize))
        sparse, complex_ = [], []
        for gi, group in enumerate(self.param_groups):
            for pi, p in enumerate(group["params"]):
                if p.is_sparse:
                    sparse.append([gi, pi])
                if p.is_complex():
                    complex_.append([gi, pi])
        if sparse:
            raise ValueError(f"Sparse params at indices {sparse}: SparseAdam requires dense parameter tensors")
        if complex_:
            raise ValueError(f"Complex params at indices {complex_}: SparseAdam does not support complex parameters")

    def __setstate__(self, state):
        super().__setstate__(state)
        _setdefault_groups(self, maximize=False)

    def step(self, closure=None):
        """One update of every parameter with a (sparse) gradient; closure re-evaluates the loss."""
        loss = self._eval_closure(closure)
        for group in self.param_groups:
            beta1, beta2 = group["betas"]
            lr, eps = _float(group["lr"]), float(group["eps"])
            for p in group["params"]:
                grad = p.grad
                if grad is None:
                    continue
                if not grad.is_sparse:
                    raise RuntimeError("SparseAdam does not support dense gradients, please consider Adam instead")
                st = self.state[p]
                if len(st) == 0:
                    st["step"] = 0
                    st["exp_avg"] = _C._ops.zeros_like(p)
                    st["exp_avg_sq"] = _C._ops.zeros_like(p)
                st["step"] += 1
                with no_grad():
                    self._update(p, -grad if group["maximize"] else grad, st, lr, beta1, beta2, eps)
        return loss

    @staticmethod
    def _update(p, grad, st, lr, beta1, beta2, eps):
        index, values = _sparse_rows(grad)  # the update is not linear: one entry per row
        if values.numel() == 0:
            return
        m, v = st["exp_avg"], st["exp_avg_sq"]
        old_m, old_v = m[index], v[index]
        m_step = (values - old_m).mul_(1 - beta1)
        m.index_put_(index, m_step, accumulate=True)
        v_step = (values.pow(2) - old_v).mul_(1 - beta2)
        v.index_put_(index, v_step, accumulate=True)
        numer = m_step.add_(old_m)
        denom = v_step.add_(old_v).sqrt_().add_(eps)
        step = st["step"]
        step_size = lr * math.sqrt(1 - beta2 ** step) / (1 - beta1 ** step)
        p.index_put_(index, -step_size * numer.div_(denom), accumulate=True)
