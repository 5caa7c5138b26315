"""ember.backends.kleidiai: Arm's KleidiAI micro-kernels, which Ember does not use."""


def is_available():
    """Whether this build has KleidiAI: Ember's never has."""
    return False
