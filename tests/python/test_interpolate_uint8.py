"""interpolate on uint8 images (bilinear/bicubic, antialiased or not): PyTorch's fixed-point kernel, bit for bit.
Without torch the properties still hold: constants stay constant, bilinear results are within 1 of the float path."""
import numpy as np
import pytest

import ember
import ember.nn.functional as F

try:
    import torch
    import torch.nn.functional as TF
except ImportError:
    torch = None

CASES = [((10, 12), (7, 9)), ((10, 12), (20, 25)), ((32, 32), (1, 1)), ((5, 64), (64, 3)), ((17, 3), (17, 6)),
         ((1, 7), (3, 7)), ((8, 8), (8, 8))]


def image(shape, seed=0):
    return np.random.default_rng(seed).integers(0, 256, shape, dtype=np.uint8)


@pytest.mark.skipif(torch is None, reason="torch not installed")
@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
@pytest.mark.parametrize("antialias", [False, True])
@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize("sizes", CASES)
@pytest.mark.parametrize("channels", [1, 5])
def test_bit_exact_with_torch(mode, antialias, align_corners, sizes, channels):
    (h, w), out = sizes
    a = image((2, channels, h, w))
    t = TF.interpolate(torch.from_numpy(a), size=out, mode=mode, antialias=antialias, align_corners=align_corners)
    e = F.interpolate(ember.tensor(a), size=out, mode=mode, antialias=antialias, align_corners=align_corners)
    assert e.dtype == ember.uint8
    np.testing.assert_array_equal(e.numpy(), t.numpy())


@pytest.mark.skipif(torch is None, reason="torch not installed")
@pytest.mark.parametrize("scale", [0.3, 0.5, 1.7, 2.0])
@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
@pytest.mark.parametrize("antialias", [False, True])
def test_scale_factors_and_channels_last(scale, mode, antialias):
    a = image((1, 3, 23, 31), seed=1)
    t = TF.interpolate(torch.from_numpy(a).contiguous(memory_format=torch.channels_last), scale_factor=scale,
                       mode=mode, antialias=antialias)
    x = ember.tensor(a).contiguous(memory_format=ember.channels_last)
    e = F.interpolate(x, scale_factor=scale, mode=mode, antialias=antialias)
    np.testing.assert_array_equal(e.numpy(), t.numpy())
    assert e.is_contiguous(memory_format=ember.channels_last)


@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
@pytest.mark.parametrize("antialias", [False, True])
def test_properties_without_torch(mode, antialias):
    const = ember.full((1, 2, 9, 13), 200, dtype=ember.uint8)
    r = F.interpolate(const, size=(5, 20), mode=mode, antialias=antialias)
    assert r.dtype == ember.uint8 and (r == 200).all()
    if mode == "bicubic":
        return  # (the bicubic byte passes clamp in between, where the float path overshoots)
    a = image((1, 3, 16, 16), seed=2)
    u8 = F.interpolate(ember.tensor(a), size=(9, 7), mode=mode, antialias=antialias).numpy().astype(int)
    f = F.interpolate(ember.tensor(a).double(), size=(9, 7), mode=mode, antialias=antialias)
    want = f.clamp(0, 255).round().numpy()
    assert np.abs(u8 - want).max() <= 1


def test_refusals_as_torch():
    x = ember.zeros((1, 1, 8), dtype=ember.uint8)
    with pytest.raises(NotImplementedError):
        F.interpolate(x, size=4, mode="linear")
    y = ember.zeros((1, 1, 4, 4, 4), dtype=ember.uint8)
    with pytest.raises(NotImplementedError):
        F.interpolate(y, size=(2, 2, 2), mode="trilinear")
