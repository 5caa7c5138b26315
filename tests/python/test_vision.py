"""ember.vision: IDX reading, MNIST/FashionMNIST, transforms (torch as the oracle for resampling)."""
import gzip
import math
import os
import struct

import numpy as np
import pytest

import ember
from ember.vision import datasets, transforms as T
from ember.vision.transforms import functional as VF

FASHION_ROOT = "/usr/share/datasets/fashion-mnist"
HAVE_FASHION = all(os.path.exists(os.path.join(FASHION_ROOT, f"{p}-{k}-idx{d}-ubyte.gz"))
                   for p in ("train", "t10k") for k, d in (("images", 3), ("labels", 1)))


@pytest.fixture
def torch():
    return pytest.importorskip("torch")


def write_idx(path, arr, gz=False):
    codes = {np.uint8: 0x08, np.int8: 0x09, np.int16: 0x0B, np.int32: 0x0C, np.float32: 0x0D, np.float64: 0x0E}
    code = codes[arr.dtype.type]
    header = struct.pack(">HBB", 0, code, arr.ndim) + struct.pack(f">{arr.ndim}I", *arr.shape)
    data = header + arr.astype(arr.dtype.newbyteorder(">")).tobytes()
    with (gzip.open if gz else open)(path, "wb") as f:
        f.write(data)


def make_mnist(root, n_train=6, n_test=4, gz=False, layout="flat"):
    d = root if layout == "flat" else os.path.join(root, "MNIST", "raw")
    os.makedirs(d, exist_ok=True)
    rs = np.random.RandomState(0)
    arrays = {}
    for prefix, n in (("train", n_train), ("t10k", n_test)):
        imgs = rs.randint(0, 256, size=(n, 28, 28)).astype(np.uint8)
        labels = rs.randint(0, 10, size=n).astype(np.uint8)
        sfx = ".gz" if gz else ""
        write_idx(os.path.join(d, f"{prefix}-images-idx3-ubyte{sfx}"), imgs, gz)
        write_idx(os.path.join(d, f"{prefix}-labels-idx1-ubyte{sfx}"), labels, gz)
        arrays[prefix] = (imgs, labels)
    return arrays


# ---------------------------------------------------------------- IDX and datasets
def test_read_idx(tmp_path):
    for arr in (np.arange(24, dtype=np.uint8).reshape(2, 3, 4), np.array([1.5, -2.0], dtype=np.float32),
                np.array([[1, -70000]], dtype=np.int32), np.array([-3], dtype=np.int16)):
        for gz in (False, True):
            p = str(tmp_path / (f"a{arr.dtype}{gz}.idx" + (".gz" if gz else "")))
            write_idx(p, arr, gz)
            out = datasets.read_idx(p)
            assert out.dtype == arr.dtype and np.array_equal(out, arr)
    bad = tmp_path / "bad"
    bad.write_bytes(b"\x01\x02\x08\x01\x00\x00\x00\x01\x05")
    with pytest.raises(RuntimeError, match="not an IDX file"):
        datasets.read_idx(str(bad))
    short = tmp_path / "short"
    short.write_bytes(struct.pack(">HBB", 0, 8, 1) + struct.pack(">I", 5) + b"\x00\x01")
    with pytest.raises(RuntimeError, match="expected 5 bytes of data"):
        datasets.read_idx(str(short))


@pytest.mark.parametrize("gz,layout", [(False, "flat"), (True, "flat"), (True, "torchvision")])
def test_mnist_from_files(tmp_path, gz, layout):
    arrays = make_mnist(str(tmp_path), gz=gz, layout=layout)
    train = datasets.MNIST(str(tmp_path))
    test = datasets.MNIST(tmp_path, train=False)
    assert len(train) == 6 and len(test) == 4
    assert train.data.dtype is ember.uint8 and train.data.shape == (6, 28, 28)
    assert train.targets.dtype is ember.int64 and train.targets.tolist() == arrays["train"][1].tolist()
    img, target = test[1]
    assert isinstance(img, np.ndarray) and img.dtype == np.uint8 and img.shape == (28, 28)
    assert np.array_equal(img, arrays["t10k"][0][1]) and target == int(arrays["t10k"][1][1])
    assert train.classes[3] == "3 - three" and train.class_to_idx["9 - nine"] == 9
    ds = datasets.MNIST(tmp_path, transform=T.ToTensor(), target_transform=lambda t: t + 100)
    x, y = ds[0]
    assert x.shape == (1, 28, 28) and x.dtype is ember.float32 and y == int(arrays["train"][1][0]) + 100
    assert np.allclose(x.numpy()[0], arrays["train"][0][0] / 255.0)
    assert repr(ds).startswith(f"Dataset MNIST\n    Number of datapoints: 6\n    Root location: {tmp_path}\n"
                               "    Split: Train\n    StandardTransform\n    Transform: ToTensor()\n"
                               "    Target transform: <function")


def test_missing_files_error(tmp_path):
    with pytest.raises(RuntimeError, match="Install the Debian package dataset-fashion-mnist"):
        datasets.FashionMNIST(str(tmp_path))
    with pytest.raises(RuntimeError, match="Ember never downloads datasets"):
        datasets.MNIST(str(tmp_path), download=True)
    with pytest.raises(TypeError, match="missing required argument: 'root'"):
        datasets.MNIST()


@pytest.mark.skipif(not HAVE_FASHION, reason="Debian package dataset-fashion-mnist is not installed")
def test_fashion_mnist_loads():
    train = datasets.FashionMNIST()
    test = datasets.FashionMNIST(train=False)
    assert len(train) == 60000 and len(test) == 10000 and train.root == FASHION_ROOT
    assert train.data.shape == (60000, 28, 28) and train.targets.dtype is ember.int64
    counts = np.bincount(train.targets.numpy(), minlength=10)
    assert counts.tolist() == [6000] * 10
    assert test.targets[:5].tolist() == [9, 2, 1, 1, 6]  # the published test-set order
    assert train.classes[9] == "Ankle boot"
    loader = ember.utils.data.DataLoader(
        datasets.FashionMNIST(train=False, transform=T.Compose([T.ToTensor(), T.Normalize((0.2860,), (0.3530,))])),
        batch_size=256)
    x, y = next(iter(loader))
    assert x.shape == (256, 1, 28, 28) and y.shape == (256,) and -1 < x.mean().item() < 1


# ---------------------------------------------------------------- transforms
def test_to_tensor_and_normalize():
    hw = np.arange(12, dtype=np.uint8).reshape(3, 4)
    t = T.ToTensor()(hw)
    assert t.shape == (1, 3, 4) and t.dtype is ember.float32 and np.allclose(t.numpy()[0], hw / 255)
    hwc = np.random.RandomState(0).randint(0, 256, (5, 6, 3)).astype(np.uint8)
    t = T.ToTensor()(hwc)
    assert t.shape == (3, 5, 6) and np.allclose(t.numpy(), hwc.transpose(2, 0, 1) / 255)
    f = T.ToTensor()(np.ones((2, 2, 1), dtype=np.float64))
    assert f.dtype is ember.float64  # non-uint8 data is not rescaled
    tt = T.ToTensor()(ember.from_numpy(hwc))
    assert np.allclose(tt.numpy(), hwc.transpose(2, 0, 1) / 255)
    with pytest.raises(TypeError, match="pic should be an ndarray or an ember Tensor"):
        T.ToTensor()([1, 2])
    x = ember.from_numpy(np.random.RandomState(1).rand(2, 3, 3).astype(np.float32))
    n = T.Normalize((0.5, 0.25), (2.0, 0.5))(x)
    expect = (x.numpy() - np.array([0.5, 0.25])[:, None, None]) / np.array([2.0, 0.5])[:, None, None]
    assert np.allclose(n.numpy(), expect) and n.data_ptr() != x.data_ptr()
    assert T.Normalize((0.5,), (0.5,), inplace=True)(x) is x
    with pytest.raises(TypeError, match="Input tensor should be a float tensor"):
        T.Normalize(0, 1)(ember.ones(1, 2, 2, dtype=ember.uint8))
    with pytest.raises(ValueError, match="std evaluated to zero"):
        T.Normalize((0.0,), (0.0,))(ember.ones(1, 2, 2))
    assert repr(T.Normalize((0.5,), (0.5,))) == "Normalize(mean=(0.5,), std=(0.5,))"


def test_crops_flips_pad():
    img = np.arange(30, dtype=np.uint8).reshape(5, 6)
    ten = ember.from_numpy(img.copy()).unsqueeze(0)
    assert np.array_equal(T.CenterCrop(3)(img), img[1:4, 2:5])  # offsets round((5-3)/2), round((6-3)/2)
    assert np.array_equal(T.CenterCrop((2, 4))(ten).numpy()[0], img[2:4, 1:5])
    big = T.CenterCrop(8)(img)  # padded with zeros when the crop is larger
    assert big.shape == (8, 8) and big[0].sum() == 0 and np.array_equal(big[1:6, 1:7], img)
    assert np.array_equal(VF.hflip(img), img[:, ::-1]) and np.array_equal(VF.hflip(ten).numpy()[0], img[:, ::-1])
    assert np.array_equal(VF.vflip(ten).numpy()[0], img[::-1])
    assert np.array_equal(T.RandomHorizontalFlip(p=1.0)(img), img[:, ::-1])
    assert np.array_equal(T.RandomHorizontalFlip(p=0.0)(img), img)
    p = VF.pad(ten, (1, 2), fill=7)
    assert p.shape == (1, 9, 8) and p.numpy()[0, 0, 0] == 7 and np.array_equal(p.numpy()[0, 2:7, 1:7], img)
    r = VF.pad(img, [1, 0, 2, 3], padding_mode="reflect")
    assert r.shape == (8, 9) and np.array_equal(r, np.pad(img, ((0, 3), (1, 2)), mode="reflect"))
    ember.manual_seed(0)
    c1 = T.RandomCrop(4, padding=2)(ten)
    ember.manual_seed(0)
    c2 = T.RandomCrop(4, padding=2)(ten)
    assert c1.shape == (1, 4, 4) and c1.tolist() == c2.tolist()
    padded = np.pad(img, 2)
    ember.manual_seed(0)
    crop = T.RandomCrop(4, padding=2)(img)
    assert any(np.array_equal(crop, padded[i:i + 4, j:j + 4]) for i in range(6) for j in range(7))
    assert T.RandomCrop((7, 8), pad_if_needed=True)(img).shape == (7, 8)
    with pytest.raises(ValueError, match=r"Required crop size \(6, 6\) is larger than input image size \(5, 6\)"):
        T.RandomCrop(6)(img)
    assert repr(T.RandomCrop(28, padding=4)) == "RandomCrop(size=(28, 28), padding=4)"
    assert repr(T.CenterCrop(3)) == "CenterCrop(size=(3, 3))"
    flips = sum(np.array_equal(T.RandomHorizontalFlip()(img), img[:, ::-1]) for _ in range(200))
    assert 60 < flips < 140


def _torch_rotate_nearest(torch, img, angle):
    """torchvision's tensor rotation (inverse affine grid, grid_sample nearest, zero fill)."""
    c, h, w = img.shape
    rot = math.radians(-angle)
    m = [math.cos(rot), -math.sin(rot), 0.0, math.sin(rot), math.cos(rot), 0.0]
    m = [m[4], -m[1], 0.0, -m[3], m[0], 0.0]
    theta = torch.tensor(m, dtype=torch.float32).reshape(1, 2, 3)
    base = torch.empty(1, h, w, 3)
    base[..., 0].copy_(torch.linspace(-w * 0.5 + 0.5, w * 0.5 - 0.5, steps=w))
    base[..., 1].copy_(torch.linspace(-h * 0.5 + 0.5, h * 0.5 - 0.5, steps=h).unsqueeze(-1))
    base[..., 2].fill_(1)
    grid = base.view(1, h * w, 3).bmm(theta.transpose(1, 2) / torch.tensor([0.5 * w, 0.5 * h])).view(1, h, w, 2)
    x = torch.from_numpy(img.astype(np.float32))[None]
    return torch.nn.functional.grid_sample(x, grid, mode="nearest", padding_mode="zeros", align_corners=False)[0]


def test_rotation_matches_torch_grid_sample(torch):
    rs = np.random.RandomState(0)
    img = rs.randint(0, 256, (2, 11, 9)).astype(np.uint8)
    for angle in (0.0, 17.0, -33.5, 90.0, 180.0, 270.0, 7.25):
        ours = VF.rotate(ember.from_numpy(img), angle).numpy().astype(np.float32)
        ref = _torch_rotate_nearest(torch, img, angle).numpy()
        assert (ours != ref).mean() < 0.01, angle  # rounding ties may fall either way
    hwc = img.transpose(1, 2, 0).copy()
    assert np.array_equal(VF.rotate(hwc, 90.0), VF.rotate(ember.from_numpy(img), 90.0).numpy().transpose(1, 2, 0))
    ember.manual_seed(0)
    r = T.RandomRotation(10)
    assert r.degrees == [-10.0, 10.0] and r(img).shape == img.shape
    assert repr(r) == "RandomRotation(degrees=[-10.0, 10.0], interpolation=nearest, expand=False, fill=0)"
    assert VF.rotate(ember.from_numpy(img), 45.0, expand=True).shape[1:] == (15, 15)
    with pytest.raises(ValueError, match="If degrees is a single number, it must be positive"):
        T.RandomRotation(-1)


def test_resize_matches_torch_interpolate(torch):
    rs = np.random.RandomState(0)
    img = rs.rand(3, 17, 23).astype(np.float32)
    for size, tsize in (((8, 11), (8, 11)), ((40, 50), (40, 50)), (9, (9, 12)), ((17, 40), (17, 40))):
        ours = T.Resize(size)(ember.from_numpy(img)).numpy()
        ref = torch.nn.functional.interpolate(torch.from_numpy(img)[None], size=tsize, mode="bilinear",
                                              align_corners=False, antialias=True)[0].numpy()
        np.testing.assert_allclose(ours, ref, atol=2e-6)
        noaa = VF.resize(ember.from_numpy(img), size, antialias=False).numpy()
        ref = torch.nn.functional.interpolate(torch.from_numpy(img)[None], size=tsize, mode="bilinear",
                                              align_corners=False)[0].numpy()
        np.testing.assert_allclose(noaa, ref, atol=2e-6)
    near = VF.resize(ember.from_numpy(img), (7, 30), interpolation=T.InterpolationMode.NEAREST).numpy()
    ref = torch.nn.functional.interpolate(torch.from_numpy(img)[None], size=(7, 30), mode="nearest")[0].numpy()
    assert np.array_equal(near, ref)
    u8 = (img[0] * 255).astype(np.uint8)
    out = T.Resize((8, 10))(u8)
    assert out.dtype == np.uint8 and out.shape == (8, 10)
    assert repr(T.Resize(32)) == "Resize(size=32, interpolation=bilinear, max_size=None, antialias=True)"


def test_compose_and_lambda():
    t = T.Compose([T.ToTensor(), T.Lambda(lambda x: x * 2)])
    assert t(np.full((2, 2), 255, dtype=np.uint8)).tolist() == [[[2.0, 2.0], [2.0, 2.0]]]
    assert repr(t) == "Compose(\n    ToTensor()\n    Lambda()\n)"
    with pytest.raises(TypeError, match="Argument lambd should be callable, got 'int'"):
        T.Lambda(3)


@pytest.mark.parametrize("mode", ["bilinear", "bicubic", "nearest", "nearest-exact"])
@pytest.mark.parametrize("antialias", [True, False])
def test_resize_tensor_path_is_torchvisions(torch, mode, antialias):
    # torchvision's tensor resize: float32 interpolate (align_corners=False for bilinear/bicubic), bicubic uint8
    # clamped, integer images rounded back; leading dims are a batch
    rs = np.random.RandomState(1)
    img = rs.randint(0, 256, (2, 3, 17, 23)).astype(np.uint8)
    ours = VF.resize(ember.from_numpy(img), [9, 40], interpolation=T.InterpolationMode(mode), antialias=antialias)
    x = torch.from_numpy(img).float()
    ac = False if mode in ("bilinear", "bicubic") else None
    ref = torch.nn.functional.interpolate(x, size=[9, 40], mode=mode, align_corners=ac,
                                          antialias=antialias and mode in ("bilinear", "bicubic"))
    if mode == "bicubic":
        ref = ref.clamp(0, 255)
    ref = ref.round().to(torch.uint8)
    assert ours.dtype == ember.uint8
    np.testing.assert_array_equal(ours.numpy(), ref.numpy())
    hwc = img[0].transpose(1, 2, 0).copy()  # a NumPy HWC image: the same through CHW
    np.testing.assert_array_equal(VF.resize(hwc, [9, 40], interpolation=T.InterpolationMode(mode), antialias=antialias),
                                  ref[0].numpy().transpose(1, 2, 0))
