"""Shared part of HalfNormal and HalfCauchy: |X| for X symmetric about 0 with a `scale`."""
import math

import ember

from . import constraints
from .transformed_distribution import TransformedDistribution


class _FoldedAtZero(TransformedDistribution):
    """|X| for a base X symmetric about 0: on [0, inf) the density doubles, the cdf is 2F - 1 and the
    entropy drops by log 2."""
    arg_constraints = {"scale": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    @property
    def scale(self):
        return self.base_dist.scale

    @property
    def mode(self):
        return ember.zeros_like(self.scale)

    def _fold_log_prob(self, value):
        log_prob = self.base_dist.log_prob(value) + math.log(2)
        return ember.where(value >= 0, log_prob, ember.full_like(log_prob, -math.inf))

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 2 * self.base_dist.cdf(value) - 1

    def icdf(self, prob):
        return self.base_dist.icdf((prob + 1) / 2)

    def entropy(self):
        return self.base_dist.entropy() - math.log(2)
