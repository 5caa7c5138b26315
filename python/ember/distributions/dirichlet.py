import ember
import ember.nn.functional as F

from . import constraints
from ._special import digamma, lgamma, standard_gamma, xlogy
from .exp_family import ExponentialFamily

__all__ = ["Dirichlet"]


def _sample_dirichlet(concentration):
    # normalised independent gammas; gradients flow through each gamma's implicit gradient
    gammas = standard_gamma(concentration)
    x = gammas / gammas.sum(-1, keepdim=True)
    finfo = ember.finfo(x.dtype)
    return x + (x.clamp(min=finfo.tiny, max=1 - finfo.eps) - x).detach()


class Dirichlet(ExponentialFamily):
    """Dirichlet distribution over the simplex with parameter `concentration` (event dim 1)."""
    arg_constraints = {"concentration": constraints.independent(constraints.positive, 1)}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, concentration, validate_args=None):
        if concentration.dim() < 1:
            raise ValueError("`concentration` parameter must be at least one-dimensional.")
        self.concentration = concentration
        batch_shape, event_shape = concentration.shape[:-1], concentration.shape[-1:]
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Dirichlet, _instance)
        batch_shape = ember.Size(batch_shape)
        new.concentration = self.concentration.expand(tuple(batch_shape) + tuple(self.event_shape))
        super(Dirichlet, new).__init__(batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        return _sample_dirichlet(self.concentration.expand(shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return (xlogy(self.concentration - 1.0, value).sum(-1)
                + lgamma(self.concentration.sum(-1)) - lgamma(self.concentration).sum(-1))

    @property
    def mean(self):
        return self.concentration / self.concentration.sum(-1, True)

    @property
    def mode(self):
        concentrationm1 = (self.concentration - 1).clamp(min=0.0)
        mode = concentrationm1 / concentrationm1.sum(-1, True)
        # with every concentration < 1 the density peaks at a vertex: the largest one
        mask = (self.concentration < 1).all(dim=-1, keepdim=True)
        vertex = F.one_hot(concentrationm1.argmax(dim=-1), concentrationm1.shape[-1]).to(mode.dtype)
        return ember.where(mask, vertex, mode)

    @property
    def variance(self):
        con0 = self.concentration.sum(-1, True)
        return self.concentration * (con0 - self.concentration) / (con0.pow(2) * (con0 + 1))

    def entropy(self):
        k = self.concentration.size(-1)
        a0 = self.concentration.sum(-1)
        return (lgamma(self.concentration).sum(-1) - lgamma(a0) - (k - a0) * digamma(a0)
                - ((self.concentration - 1.0) * digamma(self.concentration)).sum(-1))

    @property
    def _natural_params(self):
        return (self.concentration,)

    def _log_normalizer(self, x):
        return lgamma(x).sum(-1) - lgamma(x.sum(-1))
