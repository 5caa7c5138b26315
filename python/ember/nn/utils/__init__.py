"""ember.nn.utils: gradient clipping, parameter/vector conversion, packed sequences (utils.rnn)."""
from . import rnn  # noqa: F401
from .clip_grad import (  # noqa: F401
    clip_grad_norm, clip_grad_norm_, clip_grad_value_, clip_grads_with_norm_, get_total_norm,
)
from .convert_parameters import parameters_to_vector, vector_to_parameters  # noqa: F401
