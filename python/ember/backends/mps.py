"""ember.backends.mps: Apple's Metal backend, absent from Ember."""


def is_available():
    return False


def is_built():
    return False
