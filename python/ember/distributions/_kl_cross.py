"""Closed-form KL divergences between different families (or +inf where p's support is not inside
q's), registered into kl.py's registry."""
import math

import ember

from ._special import digamma, lgamma
from .bernoulli import Bernoulli
from .beta import Beta
from .binomial import Binomial
from .exponential import Exponential
from .gamma import Gamma
from .gumbel import Gumbel
from .laplace import Laplace
from .normal import Normal
from .poisson import Poisson
from .uniform import Uniform
from .utils import euler_constant as _euler_gamma


def register_cross_pairs(register_kl, _register_infinite, _inf_where, _x_log_x):
    @register_kl(Bernoulli, Poisson)
    def _kl_bernoulli_poisson(p, q):
        return -p.entropy() - (p.probs * q.rate.log() - q.rate)

    @register_kl(Beta, Exponential)
    def _kl_beta_exponential(p, q):
        return -p.entropy() - q.rate.log() + q.rate * (p.concentration1 / (p.concentration1 + p.concentration0))

    @register_kl(Beta, Gamma)
    def _kl_beta_gamma(p, q):
        t1 = -p.entropy()
        t2 = lgamma(q.concentration) - q.concentration * q.rate.log()
        t3 = (q.concentration - 1) * (digamma(p.concentration1) - digamma(p.concentration1 + p.concentration0))
        t4 = q.rate * p.concentration1 / (p.concentration1 + p.concentration0)
        return t1 + t2 - t3 + t4

    @register_kl(Beta, Normal)
    def _kl_beta_normal(p, q):
        E_beta = p.concentration1 / (p.concentration1 + p.concentration0)
        var_normal = q.scale.pow(2)
        t1 = -p.entropy()
        t2 = 0.5 * (var_normal * 2 * math.pi).log()
        t3 = (E_beta * (1 - E_beta) / (p.concentration1 + p.concentration0 + 1) + E_beta.pow(2)) * 0.5
        t4 = q.loc * E_beta
        t5 = q.loc.pow(2) * 0.5
        return t1 + t2 + (t3 - t4 + t5) / var_normal

    @register_kl(Beta, Uniform)
    def _kl_beta_uniform(p, q):
        result = -p.entropy() + (q.high - q.low).log()
        return _inf_where((q.low > 0.0) | (q.high < 1.0), result)

    _register_infinite(Exponential, "rate", Uniform, Beta)

    @register_kl(Exponential, Gamma)
    def _kl_exponential_gamma(p, q):
        ratio = q.rate / p.rate
        t1 = -q.concentration * ember.log(ratio)
        return t1 + ratio + lgamma(q.concentration) + q.concentration * _euler_gamma - (1 + _euler_gamma)

    @register_kl(Exponential, Gumbel)
    def _kl_exponential_gumbel(p, q):
        scale_rate_prod = p.rate * q.scale
        loc_scale_ratio = q.loc / q.scale
        t1 = scale_rate_prod.log() - 1
        t2 = ember.exp(loc_scale_ratio) * scale_rate_prod / (scale_rate_prod + 1)
        t3 = scale_rate_prod.reciprocal()
        return t1 - loc_scale_ratio + t2 + t3

    @register_kl(Exponential, Normal)
    def _kl_exponential_normal(p, q):
        var_normal = q.scale.pow(2)
        rate_sqr = p.rate.pow(2)
        t1 = 0.5 * ember.log(rate_sqr * var_normal * 2 * math.pi)
        t2 = rate_sqr.reciprocal()
        t3 = q.loc / p.rate
        t4 = q.loc.pow(2) * 0.5
        return t1 - 1 + (t2 - t3 + t4) / var_normal

    _register_infinite(Gamma, "concentration", Uniform, Beta)

    @register_kl(Gamma, Exponential)
    def _kl_gamma_exponential(p, q):
        return -p.entropy() - q.rate.log() + q.rate * p.concentration / p.rate

    @register_kl(Gamma, Gumbel)
    def _kl_gamma_gumbel(p, q):
        beta_scale_prod = p.rate * q.scale
        loc_scale_ratio = q.loc / q.scale
        t1 = (p.concentration - 1) * digamma(p.concentration) - lgamma(p.concentration) - p.concentration
        t2 = beta_scale_prod.log() + p.concentration / beta_scale_prod
        t3 = ember.exp(loc_scale_ratio) * (1 + beta_scale_prod.reciprocal()).pow(-p.concentration) - loc_scale_ratio
        return t1 + t2 + t3

    @register_kl(Gamma, Normal)
    def _kl_gamma_normal(p, q):
        var_normal = q.scale.pow(2)
        beta_sqr = p.rate.pow(2)
        t1 = 0.5 * ember.log(beta_sqr * var_normal * 2 * math.pi) - p.concentration - lgamma(p.concentration)
        t2 = 0.5 * (p.concentration.pow(2) + p.concentration) / beta_sqr
        t3 = q.loc * p.concentration / p.rate
        t4 = 0.5 * q.loc.pow(2)
        return t1 + (p.concentration - 1) * digamma(p.concentration) + (t2 - t3 + t4) / var_normal

    _register_infinite(Gumbel, "loc", Uniform, Gamma, Exponential, Beta)

    @register_kl(Gumbel, Normal)
    def _kl_gumbel_normal(p, q):
        param_ratio = p.scale / q.scale
        t1 = (param_ratio / math.sqrt(2 * math.pi)).log()
        t2 = (math.pi * param_ratio * 0.5).pow(2) / 3
        t3 = ((p.loc + p.scale * _euler_gamma - q.loc) / q.scale).pow(2) * 0.5
        return -t1 + t2 + t3 - (_euler_gamma + 1)

    _register_infinite(Laplace, "loc", Uniform, Gamma, Exponential, Beta)

    @register_kl(Laplace, Normal)
    def _kl_laplace_normal(p, q):
        var_normal = q.scale.pow(2)
        scale_sqr_var_ratio = p.scale.pow(2) / var_normal
        t1 = 0.5 * ember.log(2 * scale_sqr_var_ratio / math.pi)
        t2 = 0.5 * p.loc.pow(2)
        t3 = p.loc * q.loc
        t4 = 0.5 * q.loc.pow(2)
        return -t1 + scale_sqr_var_ratio + (t2 - t3 + t4) / var_normal - 1

    _register_infinite(Normal, "loc", Uniform, Gamma, Exponential, Beta)

    @register_kl(Normal, Gumbel)
    def _kl_normal_gumbel(p, q):
        mean_scale_ratio = p.loc / q.scale
        var_scale_sqr_ratio = (p.scale / q.scale).pow(2)
        loc_scale_ratio = q.loc / q.scale
        t1 = var_scale_sqr_ratio.log() * 0.5
        t2 = mean_scale_ratio - loc_scale_ratio
        t3 = ember.exp(-mean_scale_ratio + 0.5 * var_scale_sqr_ratio + loc_scale_ratio)
        return -t1 + t2 + t3 - (0.5 * (1 + math.log(2 * math.pi)))

    @register_kl(Normal, Laplace)
    def _kl_normal_laplace(p, q):
        loc_diff = p.loc - q.loc
        scale_ratio = p.scale / q.scale
        loc_diff_scale_ratio = loc_diff / p.scale
        t1 = ember.log(scale_ratio)
        t2 = math.sqrt(2 / math.pi) * p.scale * ember.exp(-0.5 * loc_diff_scale_ratio.pow(2))
        t3 = loc_diff * ember.erf(math.sqrt(0.5) * loc_diff_scale_ratio)
        return -t1 + (t2 + t3) / q.scale - (0.5 * (1 + math.log(0.5 * math.pi)))

    _register_infinite(Poisson, "rate", Binomial, Bernoulli)

    @register_kl(Uniform, Beta)
    def _kl_uniform_beta(p, q):
        common_term = p.high - p.low
        t1 = ember.log(common_term)
        t2 = (q.concentration1 - 1) * (_x_log_x(p.high) - _x_log_x(p.low) - common_term) / common_term
        t3 = (q.concentration0 - 1) * (_x_log_x(1 - p.high) - _x_log_x(1 - p.low) + common_term) / common_term
        t4 = lgamma(q.concentration1) + lgamma(q.concentration0) - lgamma(q.concentration1 + q.concentration0)
        result = t3 + t4 - t1 - t2
        return _inf_where((p.high > 1.0) | (p.low < 0.0), result)

    @register_kl(Uniform, Exponential)
    def _kl_uniform_exponetial(p, q):
        result = q.rate * (p.high + p.low) / 2 - ((p.high - p.low) * q.rate).log()
        return _inf_where(p.low < 0.0, result)

    @register_kl(Uniform, Gamma)
    def _kl_uniform_gamma(p, q):
        common_term = p.high - p.low
        t1 = common_term.log()
        t2 = lgamma(q.concentration) - q.concentration * q.rate.log()
        t3 = (1 - q.concentration) * (_x_log_x(p.high) - _x_log_x(p.low) - common_term) / common_term
        t4 = q.rate * (p.high + p.low) / 2
        result = -t1 + t2 + t3 + t4
        return _inf_where(p.low < 0.0, result)

    @register_kl(Uniform, Gumbel)
    def _kl_uniform_gumbel(p, q):
        common_term = q.scale / (p.high - p.low)
        high_loc_diff = (p.high - q.loc) / q.scale
        low_loc_diff = (p.low - q.loc) / q.scale
        t1 = common_term.log() + 0.5 * (high_loc_diff + low_loc_diff)
        t2 = common_term * (ember.exp(-high_loc_diff) - ember.exp(-low_loc_diff))
        return t1 - t2

    @register_kl(Uniform, Normal)
    def _kl_uniform_normal(p, q):
        common_term = p.high - p.low
        t1 = (math.sqrt(math.pi * 2) * q.scale / common_term).log()
        t2 = common_term.pow(2) / 12
        t3 = ((p.high + p.low - 2 * q.loc) / 2).pow(2)
        return t1 + 0.5 * (t2 + t3) / q.scale.pow(2)
