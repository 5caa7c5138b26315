"""ember.binomial(count, prob, generator=None): one Binomial(count, prob) draw per element.

Loaded on first use of ember.binomial (ember.__getattr__), because it samples with
ember.distributions' exact binomial sampler, and that namespace sits above the top package."""
from . import _C
from ._C import _ops
from ._functional_extra import broadcast_tensors
from .distributions.binomial import _sample_binomial

__all__ = ["binomial"]

_SAMPLED_DTYPES = (_C.float32, _C.float64)


def _type_name(dtype):
    # c10's ScalarType names (Float, Long, ...), as torch's messages print them
    return _ops.empty((), dtype=dtype).type().split(".")[-1][:-len("Tensor")]


def binomial(count, prob, generator=None):
    """Draws with count trials and success probability prob (float tensors, broadcast together).
    prob is clamped to [0, 1]; counts at or below 0 give 0; a NaN prob gives NaN. Not differentiable."""
    for position, (name, value) in enumerate((("count", count), ("prob", prob)), start=1):
        if not isinstance(value, _C.TensorBase):
            raise TypeError(f"binomial(): argument '{name}' (position {position}) must be Tensor, "
                            f"not {type(value).__name__}")
    if generator is not None and not isinstance(generator, _C.Generator):
        raise TypeError(f"binomial(): argument 'generator' must be ember.Generator, not {type(generator).__name__}")
    for name, value in (("count", count), ("prob", prob)):
        if not value.is_floating_point():
            raise ValueError(f"binomial only supports floating-point dtypes for {name}, got: "
                             f"{_type_name(value.dtype)}")
    if prob.dtype != count.dtype:
        raise RuntimeError(f"Found dtype {_type_name(prob.dtype)} but expected {_type_name(count.dtype)}")
    if count.dtype not in _SAMPLED_DTYPES:
        raise NotImplementedError(f"\"binomial_cpu\" not implemented for '{_type_name(count.dtype)}'")
    # detached inputs: the draw has no gradient (torch's has none either)
    count, prob = broadcast_tensors(count.detach(), prob.detach())
    p = prob.clamp(0, 1)
    # sample the rarer outcome (q <= 1/2) and reflect; counts are whole trials, negatives none
    flip = p > 0.5
    q = _ops.where(flip, 1 - p, p)
    q = _ops.where(q.isnan(), _ops.zeros_like(q), q)  # NaN prob: any draw, replaced by NaN below
    trials = count.floor().clamp(min=0)
    successes = _sample_binomial(trials.contiguous(), q.contiguous(), generator)
    out = _ops.where(flip, count - successes, successes)
    out = _ops.where(count <= 0, _ops.zeros_like(out), out)
    return _ops.where(prob.isnan(), prob, out)
