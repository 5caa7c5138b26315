import math
import numbers
import warnings

import ember

from . import constraints
from ._special import digamma, mvlgamma
from .chi2 import Chi2
from .exp_family import ExponentialFamily
from .multivariate_normal import _precision_to_scale_tril
from .utils import broadcast_shape, lazy_property

__all__ = ["Wishart"]

_LOG_2 = math.log(2)


def _mvdigamma(x, p):
    if not bool(x.gt((p - 1) / 2).all()):
        raise ValueError("Wrong domain for multivariate digamma function.")
    return digamma(x.unsqueeze(-1) - ember.arange(p, dtype=x.dtype).div(2)).sum(-1)


def _cholesky_solve(b, L):
    """(L L^T)^-1 b with broadcasting; the product uses all of L, as torch.cholesky_solve's
    gradient does."""
    A = L @ L.mT
    shape = broadcast_shape(A.shape[:-2], b.shape[:-2])
    return ember.linalg.solve(A.expand(tuple(shape) + tuple(A.shape[-2:])),
                              b.expand(tuple(shape) + tuple(b.shape[-2:])))


def _logabsdet(m):
    return ember.linalg.det(m).abs().log()


class Wishart(ExponentialFamily):
    """Wishart distribution over p x p positive-definite matrices with `df` degrees of freedom and
    scale given by exactly one of covariance_matrix, precision_matrix or scale_tril.  rsample uses
    the Bartlett decomposition (chi-squared diagonal, normal lower triangle)."""
    support = constraints.positive_definite
    has_rsample = True
    _mean_carrier_measure = 0

    @property
    def arg_constraints(self):
        return {"covariance_matrix": constraints.positive_definite,
                "precision_matrix": constraints.positive_definite,
                "scale_tril": constraints.lower_cholesky,
                "df": constraints.greater_than(self.event_shape[-1] - 1)}

    def __init__(self, df, covariance_matrix=None, precision_matrix=None, scale_tril=None, validate_args=None):
        if (covariance_matrix is not None) + (scale_tril is not None) + (precision_matrix is not None) != 1:
            raise AssertionError("Exactly one of covariance_matrix or precision_matrix or scale_tril may be specified.")
        param = next(p for p in (covariance_matrix, precision_matrix, scale_tril) if p is not None)
        if param.dim() < 2:
            raise ValueError("scale_tril must be at least two-dimensional, with optional leading batch dimensions")
        if isinstance(df, numbers.Number):
            batch_shape = ember.Size(param.shape[:-2])
            self.df = ember.tensor(float(df), dtype=param.dtype)
        else:
            batch_shape = broadcast_shape(param.shape[:-2], df.shape)
            self.df = df.expand(batch_shape)
        event_shape = param.shape[-2:]
        if bool(self.df.le(event_shape[-1] - 1).any()):
            raise ValueError(f"Value of df={df} expected to be greater than ndim - 1 = {event_shape[-1] - 1}.")
        full = tuple(batch_shape) + (-1, -1)
        if scale_tril is not None:
            self.scale_tril = param.expand(full)
        elif covariance_matrix is not None:
            self.covariance_matrix = param.expand(full)
        else:
            self.precision_matrix = param.expand(full)
        if bool(self.df.lt(event_shape[-1]).any()):
            warnings.warn("Low df values detected. Singular samples are highly likely to occur for "
                          "ndim - 1 < df < ndim.", stacklevel=2)
        super().__init__(batch_shape, event_shape, validate_args=validate_args)
        self._batch_dims = [-(x + 1) for x in range(len(self._batch_shape))]
        if scale_tril is not None:
            self._unbroadcasted_scale_tril = scale_tril
        elif covariance_matrix is not None:
            self._unbroadcasted_scale_tril = ember.linalg.cholesky(covariance_matrix)
        else:
            self._unbroadcasted_scale_tril = _precision_to_scale_tril(precision_matrix)
        self._dist_chi2 = self._make_chi2(self.df, batch_shape)

    def _make_chi2(self, df, batch_shape):
        # Bartlett: the i-th diagonal entry squared ~ Chi2(df - i)
        p = self._event_shape[-1]
        offsets = ember.arange(p, dtype=self._unbroadcasted_scale_tril.dtype).expand(tuple(batch_shape) + (p,))
        return Chi2(df=df.unsqueeze(-1) - offsets)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Wishart, _instance)
        batch_shape = ember.Size(batch_shape)
        cov_shape = tuple(batch_shape) + tuple(self.event_shape)
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril.expand(cov_shape)
        new.df = self.df.expand(batch_shape)
        new._batch_dims = [-(x + 1) for x in range(len(batch_shape))]
        for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
            if name in self.__dict__:
                setattr(new, name, self.__dict__[name].expand(cov_shape))
        super(Wishart, new).__init__(batch_shape, self.event_shape, validate_args=False)
        new._dist_chi2 = new._make_chi2(new.df, batch_shape)
        new._validate_args = self._validate_args
        return new

    def _full(self):
        return tuple(self._batch_shape) + tuple(self._event_shape)

    @lazy_property
    def scale_tril(self):
        return self._unbroadcasted_scale_tril.expand(self._full())

    @lazy_property
    def covariance_matrix(self):
        L = self._unbroadcasted_scale_tril
        return (L @ L.transpose(-2, -1)).expand(self._full())

    @lazy_property
    def precision_matrix(self):
        identity = ember.eye(self._event_shape[-1], dtype=self._unbroadcasted_scale_tril.dtype)
        return _cholesky_solve(identity, self._unbroadcasted_scale_tril).expand(self._full())

    @property
    def mean(self):
        return self.df.view(tuple(self._batch_shape) + (1, 1)) * self.covariance_matrix

    @property
    def mode(self):
        factor = self.df - self.covariance_matrix.shape[-1] - 1
        factor = ember.where(factor <= 0, ember.full_like(factor, math.nan), factor)
        return factor.view(tuple(self._batch_shape) + (1, 1)) * self.covariance_matrix

    @property
    def variance(self):
        V = self.covariance_matrix
        diag_V = V.diagonal(dim1=-2, dim2=-1)
        outer = diag_V.unsqueeze(-1) * diag_V.unsqueeze(-2)
        return self.df.view(tuple(self._batch_shape) + (1, 1)) * (V.pow(2) + outer)

    def _bartlett_sampling(self, sample_shape=ember.Size()):
        p = self._event_shape[-1]
        chi = self._dist_chi2.rsample(sample_shape).sqrt()
        chi = chi.clamp(min=ember.finfo(chi.dtype).eps)
        lower = ember.randn(tuple(sample_shape) + tuple(self._batch_shape) + (p, p), dtype=chi.dtype).tril(-1)
        noise = lower + chi.diag_embed()
        chol = self._unbroadcasted_scale_tril @ noise
        return chol @ chol.transpose(-2, -1)

    def rsample(self, sample_shape=ember.Size(), max_try_correction=None):
        """Bartlett-decomposition samples; draws that are numerically singular are redrawn up to
        `max_try_correction` (default 10) times."""
        if max_try_correction is None:
            max_try_correction = 10
        sample_shape = ember.Size(sample_shape)
        sample = self._bartlett_sampling(sample_shape)
        singular = self._singular(sample)
        if bool(singular.any()):
            warnings.warn("Singular sample detected.", stacklevel=2)
            for _ in range(max_try_correction):
                mask = singular.reshape(tuple(singular.shape) + (1,) * (len(self._batch_shape) + 2))
                sample = ember.where(mask, self._bartlett_sampling(sample_shape), sample)
                singular = self._singular(sample)
                if not bool(singular.any()):
                    break
        return sample

    def _singular(self, sample):
        bad = ~self.support.check(sample)
        if self._batch_shape:
            bad = bad.reshape(tuple(bad.shape[:bad.dim() - len(self._batch_shape)]) + (-1,)).any(-1)
        return bad

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        nu = self.df
        p = self._event_shape[-1]
        L = self._unbroadcasted_scale_tril
        trace = _cholesky_solve(value, L).diagonal(dim1=-2, dim2=-1).sum(-1)  # tr(Sigma^-1 V)
        return (-nu * (p * _LOG_2 / 2 + L.diagonal(dim1=-2, dim2=-1).log().sum(-1))
                - mvlgamma(nu / 2, p) + (nu - p - 1) / 2 * _logabsdet(value) - trace / 2)

    def entropy(self):
        nu = self.df
        p = self._event_shape[-1]
        L = self._unbroadcasted_scale_tril
        return ((p + 1) * (p * _LOG_2 / 2 + L.diagonal(dim1=-2, dim2=-1).log().sum(-1))
                + mvlgamma(nu / 2, p) - (nu - p - 1) / 2 * _mvdigamma(nu / 2, p) + nu * p / 2)

    @property
    def _natural_params(self):
        nu = self.df
        p = self._event_shape[-1]
        return -self.precision_matrix / 2, (nu - p - 1) / 2

    def _log_normalizer(self, x, y):
        p = self._event_shape[-1]
        return (y + (p + 1) / 2) * (-_logabsdet(-2 * x) + _LOG_2 * p) + mvlgamma(y + (p + 1) / 2, p)
