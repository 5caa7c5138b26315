"""ember.backends.cpu: the CPU's vector instruction set Ember's kernels dispatch to."""
from .. import _C


def get_cpu_capability():
    """'DEFAULT', 'AVX2' or 'AVX512', as PyTorch names them (EMBER_CPU_CAPABILITY can lower it)."""
    cap = _C._cpu_capability().upper()
    return cap if cap in ("AVX2", "AVX512") else "DEFAULT"
