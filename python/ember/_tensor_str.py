"""Tensor printing (temporary minimal form; PyTorch-identical formatting lands with its tests)."""


def _str(t, tensor_contents=None):
    return f"tensor({t.tolist()!r}, dtype={t.dtype!r})"
