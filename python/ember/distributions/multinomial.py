import math

import ember

from . import constraints
from ._special import lgamma
from .binomial import Binomial
from .categorical import Categorical, _CategoricalBacked
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["Multinomial"]


class Multinomial(_CategoricalBacked, Distribution):
    """Counts of `total_count` independent Categorical(`probs`) draws (event_shape (K,))."""
    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        if not isinstance(total_count, int):
            raise NotImplementedError("inhomogeneous total_count is not supported")
        self.total_count = total_count
        self._categorical = Categorical(probs=probs, logits=logits)
        self._binomial = Binomial(total_count=total_count, probs=self.probs)
        batch_shape = self._categorical.batch_shape
        event_shape = self._categorical.param_shape[-1:]
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Multinomial, _instance)
        batch_shape = ember.Size(batch_shape)
        new.total_count = self.total_count
        new._categorical = self._categorical.expand(batch_shape)
        new._binomial = Binomial(total_count=self.total_count, probs=new._categorical.probs)
        super(Multinomial, new).__init__(batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        return self.probs * self.total_count

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    @constraints.dependent_property(is_discrete=True, event_dim=1)
    def support(self):
        return constraints.multinomial(self.total_count)

    def sample(self, sample_shape=ember.Size()):
        sample_shape = ember.Size(sample_shape)
        shape = self._extended_shape(sample_shape)
        k = self._categorical._num_events
        if self.total_count == 0:
            return ember.zeros(shape, dtype=self.probs.dtype)
        # category indices of every draw, counted by a one-hot sum over the draw axis
        samples = self._categorical.sample(ember.Size((self.total_count,)) + tuple(sample_shape))
        counts = ember.zeros(tuple(samples.shape) + (k,), dtype=self.probs.dtype)
        counts = counts.scatter(-1, samples.unsqueeze(-1), ember.ones_like(counts[..., :1]))
        return counts.sum(0).reshape(shape)

    def entropy(self):
        n = ember.tensor(float(self.total_count), dtype=self.probs.dtype)
        cat_entropy = self._categorical.entropy()
        term1 = n * cat_entropy - lgamma(n + 1)
        support = self._binomial.enumerate_support(expand=False)[1:]
        binomial_probs = ember.exp(self._binomial.log_prob(support))
        weights = lgamma(support + 1)
        term2 = (binomial_probs * weights).sum(0).sum(-1)
        return term1 + term2

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        log_factorial_n = lgamma(value.sum(-1) + 1)
        log_factorial_xs = lgamma(value + 1).sum(-1)
        # 0 * log(0) = 0 for impossible categories never drawn
        logits = ember.where((value == 0) & (logits == -math.inf), ember.zeros_like(logits), logits)
        log_powers = (logits * value).sum(-1)
        return log_factorial_n - log_factorial_xs + log_powers
