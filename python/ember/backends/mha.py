"""ember.backends.mha: the switch of the fused inference path of MultiheadAttention and
TransformerEncoder. Ember's modules run one path, so the switch is only kept for code that sets it."""

_is_fastpath_enabled = True


def get_fastpath_enabled():
    """Whether the fused path may be taken (it is also subject to the inputs' conditions)."""
    return _is_fastpath_enabled


def set_fastpath_enabled(value):
    """Allow or forbid the fused path."""
    global _is_fastpath_enabled
    _is_fastpath_enabled = value
