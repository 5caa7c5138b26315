import ember

from . import constraints
from ._special import _sample_standard_gamma, lgamma
from .distribution import Distribution
from .utils import _ProbsLogitsMixin

__all__ = ["Binomial"]


_DIRECT_MAX = 64  # counts up to this are summed Bernoulli trials


def _sample_binomial(n, p, generator=None):
    """Exact Binomial(n, p) draws for float tensors n, p of one shape.  Large counts are split by
    an order statistic (Devroye, Non-Uniform Random Variate Generation, X.4): with i = ceil(n / 2)
    and Y ~ Beta(i, n + 1 - i) the i-th smallest of n uniforms, Y <= p means i successes plus
    Binomial(n - i, (p - Y) / (1 - Y)); otherwise Binomial(i - 1, p / Y).  Each level halves n."""
    result = ember.zeros_like(p)
    while bool((n > _DIRECT_MAX).any()):
        big = n > _DIRECT_MAX
        i = ember.where(big, ember.floor((n + 1) / 2), ember.ones_like(n))
        g1 = _sample_standard_gamma(i, generator)  # n carries no gradient: plain draws
        g2 = _sample_standard_gamma(ember.where(big, n + 1 - i, ember.ones_like(n)), generator)
        y = g1 / (g1 + g2)
        up = y <= p
        result = result + ember.where(big & up, i, ember.zeros_like(i))
        n = ember.where(big, ember.where(up, n - i, i - 1), n)
        p_up = (p - y) / (1 - y).clamp(min=ember.finfo(p.dtype).tiny)
        p_down = p / y.clamp(min=ember.finfo(p.dtype).tiny)
        p = ember.where(big, ember.where(up, p_up, p_down), p).clamp(0, 1)
    max_n = int(float(n.max())) if n.numel() else 0
    if max_n > 0:
        trials = ember.rand((max_n,) + tuple(n.shape), dtype=p.dtype, generator=generator) < p
        index = ember.arange(max_n, dtype=p.dtype).view((max_n,) + (1,) * n.dim())
        result = result + (trials & (index < n)).to(p.dtype).sum(0)
    return result


def _clamp_by_zero(x):
    # max(x, 0) with gradient 1/2 at 0, as the binomial normaliser needs
    return (x.clamp(min=0) + x - x.clamp(max=0)) / 2


class Binomial(_ProbsLogitsMixin, Distribution):
    """Number of successes in `total_count` independent Bernoulli(`probs`) trials."""
    arg_constraints = {"total_count": constraints.nonnegative_integer,
                       "probs": constraints.unit_interval, "logits": constraints.real}
    has_enumerate_support = True

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        batch_shape = self._init_probs_or_logits(probs, logits, total_count)
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Binomial, _instance)
        batch_shape = ember.Size(batch_shape)
        new.total_count = self.total_count.expand(batch_shape)
        self._expand_probs_logits(new, batch_shape)
        super(Binomial, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return constraints.integer_interval(0, self.total_count)

    @property
    def mean(self):
        return self.total_count * self.probs

    @property
    def mode(self):
        return ((self.total_count + 1) * self.probs).floor().clamp(max=self.total_count)

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape=ember.Size()):
        shape = self._extended_shape(sample_shape)
        with ember.no_grad():
            n = self.total_count.expand(shape).to(self.probs.dtype).contiguous()
            p = self.probs.expand(shape).contiguous()
            return _sample_binomial(n, p)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        log_factorial_n = lgamma(self.total_count + 1)
        log_factorial_k = lgamma(value + 1)
        log_factorial_nmk = lgamma(self.total_count - value + 1)
        # n * log(1 + e^logits) written stably
        normalize_term = (self.total_count * _clamp_by_zero(self.logits)
                          + self.total_count * ember.log1p(ember.exp(-ember.abs(self.logits)))
                          - log_factorial_n)
        return value * self.logits - log_factorial_k - log_factorial_nmk - normalize_term

    def entropy(self):
        total_count = int(float(self.total_count.max()))
        if not bool((self.total_count == total_count).all()):
            raise NotImplementedError("Inhomogeneous total count not supported by `entropy`.")
        log_prob = self.log_prob(self.enumerate_support(False))
        return -(ember.exp(log_prob) * log_prob).sum(0)

    def enumerate_support(self, expand=True):
        total_count = int(float(self.total_count.max()))
        if not bool((self.total_count == total_count).all()):
            raise NotImplementedError("Inhomogeneous total count not supported by `enumerate_support`.")
        values = ember.arange(1 + total_count, dtype=self._param.dtype)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        if expand:
            values = values.expand((-1,) + tuple(self._batch_shape))
        return values
