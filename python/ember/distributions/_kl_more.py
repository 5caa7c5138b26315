"""KL divergences involving Pareto, ContinuousBernoulli and the (low-rank) multivariate normals."""
import math

import ember

from ._special import lgamma
from .beta import Beta
from .continuous_bernoulli import ContinuousBernoulli
from .exponential import Exponential
from .gamma import Gamma
from .gumbel import Gumbel
from .laplace import Laplace
from .lowrank_multivariate_normal import (LowRankMultivariateNormal, _batch_lowrank_logdet,
                                          _batch_lowrank_mahalanobis)
from .multivariate_normal import MultivariateNormal, _batch_mahalanobis, _solve_lower
from .normal import Normal
from .pareto import Pareto
from .uniform import Uniform


def _batch_trace_XXT(bmat):
    """trace(X X^T) over the last two dims."""
    return bmat.pow(2).sum((-2, -1))


def register_more_pairs(register_kl, _register_infinite, _inf_where, _x_log_x):
    @register_kl(Pareto, Pareto)
    def _kl_pareto_pareto(p, q):
        scale_ratio = p.scale / q.scale
        alpha_ratio = q.alpha / p.alpha
        result = q.alpha * scale_ratio.log() - alpha_ratio.log() + alpha_ratio - 1
        return _inf_where(p.scale < q.scale, result)

    @register_kl(ContinuousBernoulli, ContinuousBernoulli)
    def _kl_cb_cb(p, q):
        t1 = p.mean * (p.logits - q.logits)
        t2 = p._cont_bern_log_norm() + ember.log1p(-p.probs)
        t3 = -q._cont_bern_log_norm() - ember.log1p(-q.probs)
        return t1 + t2 + t3

    @register_kl(Beta, ContinuousBernoulli)
    def _kl_beta_cb(p, q):
        return -p.entropy() - p.mean * q.logits - ember.log1p(-q.probs) - q._cont_bern_log_norm()

    _register_infinite(Beta, "concentration1", Pareto)

    _register_infinite(ContinuousBernoulli, "probs", Pareto)

    @register_kl(ContinuousBernoulli, Exponential)
    def _kl_cb_exponential(p, q):
        return -p.entropy() - ember.log(q.rate) + q.rate * p.mean

    @register_kl(ContinuousBernoulli, Normal)
    def _kl_cb_normal(p, q):
        t1 = -p.entropy()
        t2 = 0.5 * (math.log(2.0 * math.pi) + ember.square(q.loc / q.scale)) + ember.log(q.scale)
        t3 = (p.variance + ember.square(p.mean) - 2.0 * q.loc * p.mean) / (2.0 * ember.square(q.scale))
        return t1 + t2 + t3

    @register_kl(ContinuousBernoulli, Uniform)
    def _kl_cb_uniform(p, q):
        result = -p.entropy() + (q.high - q.low).log()
        # same condition as torch.distributions (support bounds 0 and 1)
        return _inf_where((q.low >= 0.0) | (q.high <= 1.0), result)

    for cls, attr in ((Exponential, "rate"), (Gamma, "concentration"), (Gumbel, "loc"),
                      (Laplace, "loc"), (Normal, "loc")):
        _register_infinite(cls, attr, ContinuousBernoulli, Pareto)

    _register_infinite(Pareto, "scale", Uniform, ContinuousBernoulli, Beta)

    @register_kl(Pareto, Exponential)
    def _kl_pareto_exponential(p, q):
        scale_rate_prod = p.scale * q.rate
        t1 = (p.alpha / scale_rate_prod).log()
        t2 = p.alpha.reciprocal()
        t3 = p.alpha * scale_rate_prod / (p.alpha - 1)
        return _inf_where(p.alpha <= 1, t1 - t2 + t3 - 1)

    @register_kl(Pareto, Gamma)
    def _kl_pareto_gamma(p, q):
        common_term = p.scale.log() + p.alpha.reciprocal()
        t1 = p.alpha.log() - common_term
        t2 = lgamma(q.concentration) - q.concentration * q.rate.log()
        t3 = (1 - q.concentration) * common_term
        t4 = q.rate * p.alpha * p.scale / (p.alpha - 1)
        return _inf_where(p.alpha <= 1, t1 + t2 + t3 + t4 - 1)

    @register_kl(Pareto, Normal)
    def _kl_pareto_normal(p, q):
        var_normal = 2 * q.scale.pow(2)
        common_term = p.scale / (p.alpha - 1)
        t1 = (math.sqrt(2 * math.pi) * q.scale * p.alpha / p.scale).log()
        t2 = p.alpha.reciprocal()
        t3 = p.alpha * common_term.pow(2) / (p.alpha - 2)
        t4 = (p.alpha * common_term - q.loc).pow(2)
        return _inf_where(p.alpha <= 2, t1 - t2 + (t3 + t4) / var_normal - 1)

    @register_kl(Uniform, ContinuousBernoulli)
    def _kl_uniform_cb(p, q):
        result = -p.entropy() - p.mean * q.logits - ember.log1p(-q.probs) - q._cont_bern_log_norm()
        return _inf_where((p.high >= 1.0) | (p.low <= 0.0), result)

    @register_kl(Uniform, Pareto)
    def _kl_uniform_pareto(p, q):
        support_uniform = p.high - p.low
        t1 = (q.alpha * q.scale.pow(q.alpha) * support_uniform).log()
        t2 = (_x_log_x(p.high) - _x_log_x(p.low) - support_uniform) / support_uniform
        return _inf_where(p.low < q.scale, t2 * (q.alpha + 1) - t1)

    def _woodbury_A(q):
        qWt_qDinv = q._unbroadcasted_cov_factor.mT / q._unbroadcasted_cov_diag.unsqueeze(-2)
        return _solve_lower(q._capacitance_tril, qWt_qDinv)

    def _check_events(p, q):
        if p.event_shape != q.event_shape:
            raise ValueError("KL-divergence between two (Low Rank) Multivariate Normals with different "
                             "event shapes cannot be computed")

    @register_kl(LowRankMultivariateNormal, LowRankMultivariateNormal)
    def _kl_lowrank_lowrank(p, q):
        _check_events(p, q)
        term1 = (_batch_lowrank_logdet(q._unbroadcasted_cov_factor, q._unbroadcasted_cov_diag, q._capacitance_tril)
                 - _batch_lowrank_logdet(p._unbroadcasted_cov_factor, p._unbroadcasted_cov_diag, p._capacitance_tril))
        term3 = _batch_lowrank_mahalanobis(q._unbroadcasted_cov_factor, q._unbroadcasted_cov_diag,
                                           q.loc - p.loc, q._capacitance_tril)
        # tr(Sq^-1 Sp) with Sq^-1 = qD^-1 - A^T A (Woodbury), Sp = pD + pW pW^T
        A = _woodbury_A(q)
        term21 = (p._unbroadcasted_cov_diag / q._unbroadcasted_cov_diag).sum(-1)
        term22 = _batch_trace_XXT(p._unbroadcasted_cov_factor * q._unbroadcasted_cov_diag.rsqrt().unsqueeze(-1))
        term23 = _batch_trace_XXT(A * p._unbroadcasted_cov_diag.sqrt().unsqueeze(-2))
        term24 = _batch_trace_XXT(A.matmul(p._unbroadcasted_cov_factor))
        term2 = term21 + term22 - term23 - term24
        return 0.5 * (term1 + term2 + term3 - p.event_shape[0])

    @register_kl(MultivariateNormal, LowRankMultivariateNormal)
    def _kl_mvn_lowrank(p, q):
        _check_events(p, q)
        term1 = (_batch_lowrank_logdet(q._unbroadcasted_cov_factor, q._unbroadcasted_cov_diag, q._capacitance_tril)
                 - 2 * p._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1))
        term3 = _batch_lowrank_mahalanobis(q._unbroadcasted_cov_factor, q._unbroadcasted_cov_diag,
                                           q.loc - p.loc, q._capacitance_tril)
        A = _woodbury_A(q)
        term21 = _batch_trace_XXT(p._unbroadcasted_scale_tril * q._unbroadcasted_cov_diag.rsqrt().unsqueeze(-1))
        term22 = _batch_trace_XXT(A.matmul(p._unbroadcasted_scale_tril))
        return 0.5 * (term1 + term21 - term22 + term3 - p.event_shape[0])

    @register_kl(LowRankMultivariateNormal, MultivariateNormal)
    def _kl_lowrank_mvn(p, q):
        _check_events(p, q)
        term1 = (2 * q._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
                 - _batch_lowrank_logdet(p._unbroadcasted_cov_factor, p._unbroadcasted_cov_diag, p._capacitance_tril))
        term3 = _batch_mahalanobis(q._unbroadcasted_scale_tril, q.loc - p.loc)
        p_cov_diag = ember.diag_embed(p._unbroadcasted_cov_diag.sqrt())
        term21 = _batch_trace_XXT(_solve_lower(q._unbroadcasted_scale_tril, p._unbroadcasted_cov_factor))
        term22 = _batch_trace_XXT(_solve_lower(q._unbroadcasted_scale_tril, p_cov_diag))
        return 0.5 * (term1 + term21 + term22 + term3 - p.event_shape[0])
