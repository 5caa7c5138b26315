"""Functional optimizers (torch.distributed.optim's _FunctionalSGD, _FunctionalAdam, ...): optimizers
whose step takes the gradients as arguments, step(gradients) for their own parameter list and, for SGD,
Adam and AdamW, step_param(param, grad) for any one parameter, instead of reading .grad.

Each runs the matching ember.optim optimizer on the parameters it is given (their .grad set to the
given gradients for the step and put back after), so the update rules are ember.optim's. `defaults`
has torch's keys (Adam's betas as beta1 and beta2) and may be changed between steps; `state` maps a
parameter to its optimizer state.
"""
from collections import defaultdict

from ... import optim as _optim
from ...autograd.grad_mode import no_grad

__all__ = []


class _FunctionalOptimizer:
    """A functional optimizer over one ember.optim optimizer class (see the module's docstring)."""
    _optim_cls = None

    def __init__(self, params, defaults, allow_empty, **flags):
        params = list(params)
        if not params and not allow_empty:
            raise ValueError("optimizer got an empty parameter list")
        self.defaults = defaults
        self.__dict__.update(flags)
        self.state = defaultdict(dict)
        self.param_group = {"params": params}
        self._optim = None

    def _options(self):
        """The ember.optim optimizer's keyword arguments, from defaults and the flags."""
        raise NotImplementedError

    def _run(self, params, grads):
        pairs = [(p, g) for p, g in zip(params, grads) if g is not None]
        if not pairs:
            return
        options = self._options()
        if self._optim is None:
            self._optim = self._optim_cls([p for p, _ in pairs], **options)
            self._optim.state = self.state
        group = self._optim.param_groups[0]
        group.update(options)
        group["params"] = [p for p, _ in pairs]
        saved = [p.grad for p, _ in pairs]
        try:
            for p, g in pairs:
                p.grad = g
            with no_grad():
                self._optim.step()
        finally:
            for (p, _), g in zip(pairs, saved):
                p.grad = g

    def step(self, gradients):
        """One step of the optimizer's own parameters with these gradients (None: the parameter is skipped)."""
        params = self.param_group["params"]
        if len(params) != len(gradients):
            raise ValueError("the gradients passed in does not equal to the size of the parameters!"
                             f"Params length: {len(params)}. Gradients length: {len(gradients)}")
        self._run(params, gradients)


class _StepParam:
    def step_param(self, param, grad):
        """One step of a single parameter with its gradient (None: nothing to do)."""
        self._run([param], [grad])


def _check_adam(lr, eps, betas, weight_decay):
    if not 0.0 <= lr:
        raise ValueError(f"Invalid learning rate: {lr}")
    if not 0.0 <= eps:
        raise ValueError(f"Invalid epsilon value: {eps}")
    if not 0.0 <= betas[0] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
    if not 0.0 <= betas[1] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
    if not 0.0 <= weight_decay:
        raise ValueError(f"Invalid weight_decay value: {weight_decay}")


class _FunctionalSGD(_StepParam, _FunctionalOptimizer):
    """SGD taking its gradients as arguments (step, step_param)."""
    _optim_cls = _optim.SGD

    def __init__(self, params, lr=1e-2, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False,
                 maximize=False, foreach=False, fused=False, _allow_empty_param_list=False):
        super().__init__(params, {"lr": lr, "momentum": momentum, "dampening": dampening,
                                  "weight_decay": weight_decay}, _allow_empty_param_list,
                         nesterov=nesterov, maximize=maximize, foreach=foreach, fused=fused)

    def _options(self):
        d = self.defaults
        return dict(lr=d["lr"], momentum=d["momentum"], dampening=d["dampening"], weight_decay=d["weight_decay"],
                    nesterov=self.nesterov, maximize=self.maximize)


class _FunctionalAdam(_StepParam, _FunctionalOptimizer):
    """Adam taking its gradients as arguments (step, step_param)."""
    _optim_cls = _optim.Adam

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0, amsgrad=False,
                 maximize=False, foreach=False, fused=False, _allow_empty_param_list=False):
        _check_adam(lr, eps, betas, weight_decay)
        super().__init__(params, {"lr": lr, "eps": eps, "beta1": betas[0], "beta2": betas[1],
                                  "weight_decay": weight_decay}, _allow_empty_param_list,
                         amsgrad=amsgrad, maximize=maximize, foreach=foreach, fused=fused)

    def _options(self):
        d = self.defaults
        return dict(lr=d["lr"], betas=(d["beta1"], d["beta2"]), eps=d["eps"], weight_decay=d["weight_decay"],
                    amsgrad=self.amsgrad, maximize=self.maximize)


class _FunctionalAdamW(_FunctionalAdam):
    """AdamW (decoupled weight decay) taking its gradients as arguments (step, step_param)."""
    _optim_cls = _optim.AdamW

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2, amsgrad=False,
                 maximize=False, foreach=False, fused=False, _allow_empty_param_list=False):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, maximize, foreach, fused,
                         _allow_empty_param_list)


class _FunctionalAdamax(_FunctionalOptimizer):
    """Adamax taking its gradients as arguments (step)."""
    _optim_cls = _optim.Adamax

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0, foreach=False,
                 maximize=False, _allow_empty_param_list=False):
        _check_adam(lr, eps, betas, weight_decay)
        super().__init__(params, {"lr": lr, "eps": eps, "beta1": betas[0], "beta2": betas[1],
                                  "weight_decay": weight_decay}, _allow_empty_param_list,
                         foreach=foreach, maximize=maximize)

    def _options(self):
        d = self.defaults
        return dict(lr=d["lr"], betas=(d["beta1"], d["beta2"]), eps=d["eps"], weight_decay=d["weight_decay"],
                    maximize=self.maximize)


class _FunctionalAdagrad(_FunctionalOptimizer):
    """Adagrad taking its gradients as arguments (step)."""
    _optim_cls = _optim.Adagrad

    def __init__(self, params, lr=1e-2, lr_decay=0.0, weight_decay=0.0, initial_accumulator_value=0.0,
                 warmup_lr_multiplier=1.0, warmup_num_iters=0.0, eps=1e-10, coalesce_grad=True, foreach=False,
                 fused=False, maximize=False, _allow_empty_param_list=False):
        super().__init__(params, {"lr": lr, "lr_decay": lr_decay, "eps": eps, "weight_decay": weight_decay,
                                  "initial_accumulator_value": initial_accumulator_value,
                                  "warmup_lr_multiplier": warmup_lr_multiplier,
                                  "warmup_num_iters": warmup_num_iters}, _allow_empty_param_list,
                         coalesce_grad=coalesce_grad, foreach=foreach, fused=fused, maximize=maximize)

    def _options(self):
        d = self.defaults
        return dict(lr=d["lr"], lr_decay=d["lr_decay"], weight_decay=d["weight_decay"],
                    initial_accumulator_value=d["initial_accumulator_value"], eps=d["eps"], maximize=self.maximize)


class _FunctionalAdadelta(_FunctionalOptimizer):
    """Adadelta taking its gradients as arguments (step)."""
    _optim_cls = _optim.Adadelta

    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0.0, foreach=False, maximize=False,
                 _allow_empty_param_list=False):
        super().__init__(params, {"lr": lr, "rho": rho, "eps": eps, "weight_decay": weight_decay},
                         _allow_empty_param_list, foreach=foreach, maximize=maximize)

    def _options(self):
        d = self.defaults
        return dict(lr=d["lr"], rho=d["rho"], eps=d["eps"], weight_decay=d["weight_decay"], maximize=self.maximize)


class _FunctionalRMSprop(_FunctionalOptimizer):
    """RMSprop taking its gradients as arguments (step)."""
    _optim_cls = _optim.RMSprop

    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0.0, momentum=0.0, centered=False,
                 foreach=False, maximize=False, _allow_empty_param_list=False):
        super().__init__(params, {"lr": lr, "alpha": alpha, "eps": eps, "weight_decay": weight_decay,
                                  "momentum": momentum}, _allow_empty_param_list,
                         centered=centered, foreach=foreach, maximize=maximize)

    def _options(self):
        d = self.defaults
        return dict(lr=d["lr"], alpha=d["alpha"], eps=d["eps"], weight_decay=d["weight_decay"],
                    momentum=d["momentum"], centered=self.centered, maximize=self.maximize)


class _FunctionalRprop(_FunctionalOptimizer):
    """Rprop taking its gradients as arguments (step)."""
    _optim_cls = _optim.Rprop

    def __init__(self, params, lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50), foreach=False, maximize=False,
                 _allow_empty_param_list=False):
        super().__init__(params, {"lr": lr}, _allow_empty_param_list, etas=etas, step_sizes=step_sizes,
                         foreach=foreach, maximize=maximize)

    def _options(self):
        return dict(lr=self.defaults["lr"], etas=self.etas, step_sizes=self.step_sizes, maximize=self.maximize)
