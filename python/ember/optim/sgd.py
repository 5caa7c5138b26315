"""SGD with momentum, dampening, Nesterov momentum, weight decay and maximize."""
from .. import _C
from ..autograd import no_grad
from .optimizer import Optimizer, _check_lr, _float, _params_with_grad, _setdefault_groups, _split_sparse

__all__ = ["SGD"]


class SGD(Optimizer):
    """Stochastic gradient descent (optionally with momentum):
    g = grad + weight_decay * p;  b = momentum * b + (1 - dampening) * g  (b = g at the first step);
    g = g + momentum * b (nesterov) or b;  p = p - lr * g.
    The update of a whole param group is one fused C++ call."""

    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0, nesterov=False, *, maximize=False,
                 foreach=None, differentiable=False, fused=None):
        _check_lr(lr)
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay, nesterov=nesterov,
                        maximize=maximize, foreach=foreach, differentiable=differentiable, fused=fused)
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        _setdefault_groups(self, nesterov=False, maximize=False, foreach=None, differentiable=False, fused=False)

    def step(self, closure=None):
        """One update of every parameter with a gradient; closure re-evaluates the loss (optional)."""
        loss = self._eval_closure(closure)
        for group in self.param_groups:
            params, grads = _params_with_grad(group, "SGD")
            (params, grads), sparse = _split_sparse(params, grads)
            for p, g in sparse:
                self._sparse_step(p, g, group)
            if not params:
                continue
            args = (_float(group["lr"]), float(group["momentum"]), float(group["dampening"]),
                    _float(group["weight_decay"]), bool(group["nesterov"]), bool(group["maximize"]))
            if group["momentum"] == 0:
                _C._ops._fused_sgd_(params, grads, [], *args, False)
                continue
            # parameters seeing their first step start their buffer as a copy of the gradient
            old = [(p, g) for p, g in zip(params, grads) if self.state[p].get("momentum_buffer") is not None]
            new = [(p, g) for p, g in zip(params, grads) if self.state[p].get("momentum_buffer") is None]
            if old:
                _C._ops._fused_sgd_([p for p, _ in old], [g for _, g in old],
                                    [self.state[p]["momentum_buffer"] for p, _ in old], *args, False)
            if new:
                for p, _ in new:
                    self.state[p]["momentum_buffer"] = _C._ops.zeros_like(p)
                _C._ops._fused_sgd_([p for p, _ in new], [g for _, g in new],
                                    [self.state[p]["momentum_buffer"] for p, _ in new], *args, True)
        return loss

    def _sparse_step(self, p, grad, group):
        """SGD on a sparse gradient (embedding(sparse=True)), as torch's: the momentum buffer starts
        as a sparse copy of the gradient; weight decay is refused (sparse + dense)."""
        with no_grad():
            lr, momentum = _float(group["lr"]), float(group["momentum"])
            if group["maximize"]:
                grad = -grad
            if group["weight_decay"] != 0:
                grad = grad.add(p, alpha=_float(group["weight_decay"]))  # raises torch's error
            if momentum != 0:
                st = self.state[p]
                buf = st.get("momentum_buffer")
                if buf is None:
                    buf = st["momentum_buffer"] = grad.clone().detach()
                else:
                    buf.mul_(momentum).add_(grad, alpha=1 - float(group["dampening"]))
                grad = grad.add(buf, alpha=momentum) if group["nesterov"] else buf
            p.add_(grad, alpha=-lr)
