"""Transposing copies of 1-byte tensors (uint8, int8, bool) take 16x16 SIMD blocks inside 64x64
tiles, with scalar edges: every shape around the block and tile sizes equals NumPy's transpose."""
import numpy as np
import pytest

import ember


@pytest.mark.parametrize("dtype", [np.uint8, np.int8, np.bool_])
def test_byte_transposes_match_numpy(dtype):
    rs = np.random.RandomState(0)
    for rows in (1, 7, 15, 16, 17, 31, 32, 48, 63, 64, 65, 129, 640):
        for cols in (1, 3, 15, 16, 17, 64, 65, 100, 480):
            a = (rs.randint(0, 256, size=(rows, cols)) % (2 if dtype == np.bool_ else 256)).astype(dtype)
            t = ember.from_numpy(a)
            np.testing.assert_array_equal(t.t().contiguous().numpy(), a.T)
            b = np.stack([a, a[::-1]])  # a batch of two
            np.testing.assert_array_equal(ember.from_numpy(b).transpose(1, 2).contiguous().numpy(),
                                          b.transpose(0, 2, 1))


def test_image_resize_path_uses_them_and_stays_exact():
    # the last dim of a uint8 image resize runs through transposed row blocks
    x = ember.from_numpy(np.random.RandomState(1).randint(0, 256, size=(1, 3, 37, 83)).astype(np.uint8))
    y = ember.nn.functional.interpolate(x, size=(19, 41), mode="bilinear", antialias=True)
    z = ember.nn.functional.interpolate(x.float(), size=(19, 41), mode="bilinear", antialias=True)
    assert y.dtype == ember.uint8 and (y.int() - z.round().clamp(0, 255).int()).abs().max().item() <= 1
