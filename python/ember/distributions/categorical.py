import ember

from . import constraints
from .distribution import Distribution
from .utils import _ProbsLogitsMixin, broadcast_tensors

__all__ = ["Categorical"]


class _CategoricalBacked:
    """For distributions built on a Categorical kept in `_categorical`: its parameters, seen through."""

    @property
    def probs(self):
        return self._categorical.probs

    @property
    def logits(self):
        return self._categorical.logits

    @property
    def param_shape(self):
        return self._categorical.param_shape

    def _new(self, *args, **kwargs):
        return self._categorical._new(*args, **kwargs)


class Categorical(_ProbsLogitsMixin, Distribution):
    """Distribution over {0, ..., K-1} given `probs` (normalised along the last dim) or `logits`."""
    arg_constraints = {"probs": constraints.simplex, "logits": constraints.independent(constraints.real, 1)}
    has_enumerate_support = True
    _binary = False

    def __init__(self, probs=None, logits=None, validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            if probs.dim() < 1:
                raise ValueError("`probs` parameter must be at least one-dimensional.")
            self.probs = probs / probs.sum(-1, keepdim=True)
        else:
            if logits.dim() < 1:
                raise ValueError("`logits` parameter must be at least one-dimensional.")
            self.logits = logits - logits.logsumexp(dim=-1, keepdim=True)
        self._param = self.probs if probs is not None else self.logits
        self._num_events = self._param.size()[-1]
        batch_shape = self._param.size()[:-1] if self._param.dim() > 1 else ember.Size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Categorical, _instance)
        batch_shape = ember.Size(batch_shape)
        param_shape = tuple(batch_shape) + (self._num_events,)
        self._expand_probs_logits(new, param_shape)
        new._num_events = self._num_events
        super(Categorical, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return constraints.integer_interval(0, self._num_events - 1)

    @property
    def mean(self):
        return ember.full(self._extended_shape(), float("nan"), dtype=self.probs.dtype)

    @property
    def mode(self):
        return self.probs.argmax(dim=-1)

    @property
    def variance(self):
        return ember.full(self._extended_shape(), float("nan"), dtype=self.probs.dtype)

    def sample(self, sample_shape=ember.Size()):
        if not isinstance(sample_shape, ember.Size):
            sample_shape = ember.Size(sample_shape)
        probs_2d = self.probs.detach().reshape(-1, self._num_events)
        n = sample_shape.numel()
        if probs_2d.shape[0] == 0 or n == 0:
            return ember.zeros(self._extended_shape(sample_shape), dtype=ember.int64)
        samples_2d = ember.multinomial(probs_2d, n, True).T
        return samples_2d.reshape(self._extended_shape(sample_shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value = value.long().unsqueeze(-1)
        value, log_pmf = broadcast_tensors(value, self.logits)
        value = value[..., :1]
        return log_pmf.gather(-1, value).squeeze(-1)

    def entropy(self):
        min_real = ember.finfo(self.logits.dtype).min
        logits = ember.clamp(self.logits, min=min_real)
        p_log_p = logits * self.probs
        return -p_log_p.sum(-1)

    def enumerate_support(self, expand=True):
        values = ember.arange(self._num_events, dtype=ember.int64)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        if expand:
            values = values.expand((-1,) + tuple(self._batch_shape))
        return values
