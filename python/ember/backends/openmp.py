"""ember.backends.openmp: Ember's parallel loops always run on OpenMP."""


def is_available():
    return True
