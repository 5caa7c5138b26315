"""ember.backends.mkl: Ember's BLAS is OpenBLAS, not MKL."""


def is_available():
    return False
