"""as_functional_optim: the functional counterpart of an ember.optim optimizer class (its step takes the
gradients as arguments), and the registry behind it."""
from ... import optim
from ._functional import (_FunctionalAdadelta, _FunctionalAdagrad, _FunctionalAdam, _FunctionalAdamax,
                          _FunctionalAdamW, _FunctionalRMSprop, _FunctionalRprop, _FunctionalSGD)

functional_optim_map = {
    optim.Adagrad: _FunctionalAdagrad,
    optim.Adam: _FunctionalAdam,
    optim.AdamW: _FunctionalAdamW,
    optim.SGD: _FunctionalSGD,
    optim.Adadelta: _FunctionalAdadelta,
    optim.RMSprop: _FunctionalRMSprop,
    optim.Rprop: _FunctionalRprop,
    optim.Adamax: _FunctionalAdamax,
}


def register_functional_optim(key, optim):
    """Add a functional optimizer to functional_optim_map under `key` (an existing key is kept)."""
    if key not in functional_optim_map:
        functional_optim_map[key] = optim


def as_functional_optim(optim_cls, *args, **kwargs):
    """A functional optimizer (no parameters of its own: step_param(param, grad)) for an optimizer class,
    built with the given hyperparameters."""
    try:
        functional_cls = functional_optim_map[optim_cls]
    except KeyError as e:
        raise ValueError(f"Optimizer {optim_cls} does not have a functional counterpart!") from e
    return functional_cls([], *args, **kwargs, _allow_empty_param_list=True)
