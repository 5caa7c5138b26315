"""torchvision compatibility of ember.vision: utils.make_grid / save_image (PNG checked by a small
decoder written here), io.encode_png, models (torchvision's parameter names, shapes, counts and
forward, checked against a functional forward in torch on the same state_dict), FakeData,
ImageFolder / DatasetFolder, PIL inputs to transforms, and the torch / torchvision alias shim of
scripts/run_pytorch_examples.sh."""
import io
import math
import os
import struct
import subprocess
import sys
import warnings
import zlib

import numpy as np
import pytest

import ember
from ember.vision import datasets, models, transforms, utils
from ember.vision import io as vio

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


# ---------------------------------------------------------------- a PNG decoder for the checks

def _paeth(a, b, c):
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    if pa <= pb and pa <= pc:
        return a
    return b if pb <= pc else c


def decode_png(data):
    """(colour type, H x W x C uint8 array) of an 8-bit non-interlaced PNG; checks every CRC."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "bad signature"
    pos, chunks = 8, []
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos:pos + 4])
        kind, body = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + length]
        (crc,) = struct.unpack(">I", data[pos + 8 + length:pos + 12 + length])
        assert crc == zlib.crc32(kind + body) & 0xFFFFFFFF, f"bad CRC in {kind}"
        chunks.append((kind, body))
        pos += 12 + length
    assert chunks[0][0] == b"IHDR" and chunks[-1] == (b"IEND", b"")
    w, h, depth, ctype, comp, filt, interlace = struct.unpack(">IIBBBBB", chunks[0][1])
    assert (depth, comp, filt, interlace) == (8, 0, 0, 0)
    channels = {0: 1, 4: 2, 2: 3, 6: 4}[ctype]
    raw = zlib.decompress(b"".join(body for kind, body in chunks if kind == b"IDAT"))
    stride = w * channels
    assert len(raw) == h * (stride + 1)
    out = np.zeros((h, stride), dtype=np.int64)
    for y in range(h):
        ftype, line = raw[y * (stride + 1)], raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)]
        prev = out[y - 1] if y else np.zeros(stride, dtype=np.int64)
        for x in range(stride):
            a = out[y, x - channels] if x >= channels else 0
            c = prev[x - channels] if x >= channels else 0
            pred = [0, a, prev[x], (a + prev[x]) // 2, _paeth(a, prev[x], c)][ftype]
            out[y, x] = (line[x] + pred) & 0xFF
    return ctype, out.astype(np.uint8).reshape(h, w, channels)


# ---------------------------------------------------------------- make_grid

def _grid_ref(batch, nrow=8, padding=2, normalize=False, value_range=None, scale_each=False, pad_value=0.0):
    """make_grid's documented result, in NumPy, for a B x C x H x W array."""
    x = batch.astype(np.float64 if batch.dtype == np.float64 else np.float32).copy()
    if x.shape[1] == 1:
        x = np.repeat(x, 3, axis=1)
    if normalize:
        def norm(t):
            lo, hi = value_range if value_range is not None else (t.min(), t.max())
            return (np.clip(t, lo, hi) - lo) / max(hi - lo, 1e-5)
        x = np.stack([norm(t) for t in x]) if scale_each else norm(x)
    if x.shape[0] == 1:
        return x[0]
    b, c, h, w = x.shape
    cols = min(nrow, b)
    rows = math.ceil(b / cols)
    grid = np.full((c, rows * (h + padding) + padding, cols * (w + padding) + padding), pad_value, dtype=x.dtype)
    for k in range(b):
        y0, x0 = (k // cols) * (h + padding) + padding, (k % cols) * (w + padding) + padding
        grid[:, y0:y0 + h, x0:x0 + w] = x[k]
    return grid


@pytest.mark.parametrize("b,c,kwargs", [
    (5, 3, {}),
    (5, 3, {"nrow": 2, "padding": 1}),
    (7, 1, {"nrow": 3, "padding": 0, "pad_value": 0.5}),
    (4, 3, {"nrow": 10, "padding": 3, "pad_value": 1.0}),
    (6, 3, {"nrow": 4, "normalize": True}),
    (6, 3, {"normalize": True, "scale_each": True}),
    (3, 4, {"normalize": True, "value_range": (-1.0, 1.0)}),
    (3, 3, {"normalize": True, "value_range": (0.0, 0.5), "scale_each": True}),
    (1, 3, {"padding": 5}),
    (1, 1, {}),
])
def test_make_grid_matches_documented_layout(b, c, kwargs):
    x = np.random.default_rng(0).standard_normal((b, c, 5, 6)).astype(np.float32)
    src = ember.from_numpy(x.copy())
    g = utils.make_grid(src, **kwargs)
    ref = _grid_ref(x, **kwargs)
    assert tuple(g.shape) == ref.shape
    np.testing.assert_allclose(g.numpy(), ref, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(src.numpy(), x)  # normalize works on a copy


def test_make_grid_inputs():
    rng = np.random.default_rng(1)
    imgs = [rng.random((3, 4, 4)).astype(np.float32) for _ in range(3)]
    g = utils.make_grid([ember.from_numpy(i) for i in imgs], nrow=2)
    np.testing.assert_allclose(g.numpy(), _grid_ref(np.stack(imgs), nrow=2))
    hw = rng.random((4, 5)).astype(np.float32)  # one H x W image: 3 channels, no padding
    np.testing.assert_allclose(utils.make_grid(ember.from_numpy(hw)).numpy(), np.stack([hw] * 3))
    chw = rng.random((1, 4, 5)).astype(np.float32)
    assert tuple(utils.make_grid(ember.from_numpy(chw)).shape) == (3, 4, 5)
    d = utils.make_grid(ember.rand(3, 3, 4, 4, dtype=ember.float64))
    assert d.dtype is ember.float64
    with pytest.raises(TypeError, match="tensor or list of tensors expected"):
        utils.make_grid(np.zeros((2, 3, 4, 4)))
    with pytest.raises(TypeError, match="list containing"):
        utils.make_grid([ember.zeros(3, 4, 4), 1])
    with pytest.raises(TypeError, match="value_range has to be a tuple"):
        utils.make_grid(ember.rand(2, 3, 4, 4), normalize=True, value_range=[0, 1])
    with pytest.raises(ValueError):
        utils.make_grid(ember.rand(2, 2, 3, 4, 4))
    # the grid is built without autograd even for inputs that require grad
    assert not utils.make_grid(ember.rand(2, 3, 4, 4, requires_grad=True)).requires_grad


# ---------------------------------------------------------------- save_image / encode_png

def _expected_bytes(grid):
    return np.clip(np.floor(grid * 255 + 0.5), 0, 255).astype(np.uint8).transpose(1, 2, 0)


def test_save_image_png_path(tmp_path):
    x = ember.rand(5, 3, 7, 9)
    path = tmp_path / "grid.png"
    utils.save_image(x, str(path), nrow=3, padding=1)
    ctype, arr = decode_png(path.read_bytes())
    assert ctype == 2  # RGB
    np.testing.assert_array_equal(arr, _expected_bytes(_grid_ref(x.numpy(), nrow=3, padding=1)))
    # a pathlib path, out-of-range values clamped, one-channel images saved as RGB
    y = ember.randn(2, 1, 4, 4) * 2
    utils.save_image(y, path)
    ctype, arr = decode_png(path.read_bytes())
    assert ctype == 2 and arr.shape == (8, 14, 3)
    np.testing.assert_array_equal(arr, _expected_bytes(_grid_ref(y.numpy())))


def test_save_image_file_object_and_format(tmp_path):
    x = ember.rand(1, 4, 6, 5)  # RGBA
    buf = io.BytesIO()
    utils.save_image(x, buf, format="png")
    ctype, arr = decode_png(buf.getvalue())
    assert ctype == 6
    np.testing.assert_array_equal(arr, _expected_bytes(x[0].numpy()))
    with open(tmp_path / "named.png", "wb") as f:  # format taken from the file object's name
        utils.save_image(x, f)
    assert decode_png((tmp_path / "named.png").read_bytes())[0] == 6
    with pytest.raises(ValueError, match="format"):
        utils.save_image(x, io.BytesIO())
    with pytest.raises(ValueError, match="unknown file extension"):
        utils.save_image(x, str(tmp_path / "noext"))


def test_save_image_other_formats_use_pillow(tmp_path):
    pytest.importorskip("PIL")
    from PIL import Image
    x = ember.rand(2, 3, 8, 8)
    utils.save_image(x, str(tmp_path / "g.bmp"))
    with Image.open(tmp_path / "g.bmp") as im:
        np.testing.assert_array_equal(np.asarray(im), _expected_bytes(_grid_ref(x.numpy())))


@pytest.mark.parametrize("channels,ctype", [(1, 0), (2, 4), (3, 2), (4, 6)])
def test_encode_png_channels(channels, ctype, tmp_path):
    img = (np.arange(channels * 5 * 3) * 37 % 256).astype(np.uint8).reshape(channels, 5, 3)
    data = vio.encode_png(ember.from_numpy(img), compression_level=9)
    assert data.dtype is ember.uint8 and data.dim() == 1
    got_type, arr = decode_png(data.numpy().tobytes())
    assert got_type == ctype
    np.testing.assert_array_equal(arr, img.transpose(1, 2, 0))
    vio.write_png(ember.from_numpy(img), str(tmp_path / "a.png"), compression_level=0)
    np.testing.assert_array_equal(decode_png((tmp_path / "a.png").read_bytes())[1], img.transpose(1, 2, 0))
    try:
        from PIL import Image
    except ImportError:
        return
    with Image.open(tmp_path / "a.png") as im:
        pil = np.asarray(im)
    np.testing.assert_array_equal(pil.reshape(5, 3, channels), img.transpose(1, 2, 0))


def test_encode_png_errors():
    with pytest.raises(RuntimeError, match="uint8"):
        vio.encode_png(ember.zeros(3, 4, 4))
    with pytest.raises(RuntimeError, match="3-dimensional"):
        vio.encode_png(ember.zeros(4, 4, dtype=ember.uint8))
    with pytest.raises(RuntimeError, match="number of channels"):
        vio.encode_png(ember.zeros(5, 4, 4, dtype=ember.uint8))
    with pytest.raises(ValueError, match="Compression level"):
        vio.encode_png(ember.zeros(3, 4, 4, dtype=ember.uint8), compression_level=10)
    with pytest.raises(ValueError, match="number of channels"):
        utils.save_image(ember.rand(2, 5, 4, 4), io.BytesIO(), format="png")


# ---------------------------------------------------------------- models
# Reference forwards written with torch.nn.functional straight from a state_dict, following
# torchvision's documented structure; every key they read is recorded so a misnamed or extra
# parameter fails the test.

class _Keys(dict):
    def __init__(self, *args):
        super().__init__(*args)
        self.used = set()

    def __getitem__(self, k):
        self.used.add(k)
        return super().__getitem__(k)


def _bn(tf, x, sd, p):
    return tf.batch_norm(x, sd[p + ".running_mean"], sd[p + ".running_var"], sd[p + ".weight"], sd[p + ".bias"],
                         False, 0.0, 1e-5)


def _ref_resnet(torch, x, sd, layers, bottleneck):
    tf = torch.nn.functional
    x = tf.relu(_bn(tf, tf.conv2d(x, sd["conv1.weight"], stride=2, padding=3), sd, "bn1"))
    x = tf.max_pool2d(x, 3, 2, 1)
    for i, n in enumerate(layers):
        for j in range(n):
            p = f"layer{i + 1}.{j}"
            stride = 2 if (i > 0 and j == 0) else 1
            if bottleneck:
                out = tf.relu(_bn(tf, tf.conv2d(x, sd[p + ".conv1.weight"]), sd, p + ".bn1"))
                out = tf.relu(_bn(tf, tf.conv2d(out, sd[p + ".conv2.weight"], stride=stride, padding=1), sd, p + ".bn2"))
                out = _bn(tf, tf.conv2d(out, sd[p + ".conv3.weight"]), sd, p + ".bn3")
            else:
                out = tf.relu(_bn(tf, tf.conv2d(x, sd[p + ".conv1.weight"], stride=stride, padding=1), sd, p + ".bn1"))
                out = _bn(tf, tf.conv2d(out, sd[p + ".conv2.weight"], padding=1), sd, p + ".bn2")
            if p + ".downsample.0.weight" in sd:
                x = _bn(tf, tf.conv2d(x, sd[p + ".downsample.0.weight"], stride=stride), sd, p + ".downsample.1")
            x = tf.relu(out + x)
    x = torch.flatten(tf.adaptive_avg_pool2d(x, 1), 1)
    return tf.linear(x, sd["fc.weight"], sd["fc.bias"])


def _ref_vgg(torch, x, sd, cfg, bn):
    tf = torch.nn.functional
    i = 0
    for v in cfg:
        if v == "M":
            x = tf.max_pool2d(x, 2, 2)
            i += 1
            continue
        x = tf.conv2d(x, sd[f"features.{i}.weight"], sd[f"features.{i}.bias"], padding=1)
        if bn:
            x = _bn(tf, x, sd, f"features.{i + 1}")
        x = tf.relu(x)
        i += 3 if bn else 2
    x = torch.flatten(tf.adaptive_avg_pool2d(x, 7), 1)
    x = tf.relu(tf.linear(x, sd["classifier.0.weight"], sd["classifier.0.bias"]))
    x = tf.relu(tf.linear(x, sd["classifier.3.weight"], sd["classifier.3.bias"]))
    return tf.linear(x, sd["classifier.6.weight"], sd["classifier.6.bias"])


def _ref_alexnet(torch, x, sd):
    tf = torch.nn.functional
    for i, stride, pad, pool in [(0, 4, 2, True), (3, 1, 2, True), (6, 1, 1, False), (8, 1, 1, False),
                                 (10, 1, 1, True)]:
        x = tf.relu(tf.conv2d(x, sd[f"features.{i}.weight"], sd[f"features.{i}.bias"], stride=stride, padding=pad))
        if pool:
            x = tf.max_pool2d(x, 3, 2)
    x = torch.flatten(tf.adaptive_avg_pool2d(x, 6), 1)
    x = tf.relu(tf.linear(x, sd["classifier.1.weight"], sd["classifier.1.bias"]))
    x = tf.relu(tf.linear(x, sd["classifier.4.weight"], sd["classifier.4.bias"]))
    return tf.linear(x, sd["classifier.6.weight"], sd["classifier.6.bias"])


def _ref_mobilenet_v2(torch, x, sd):
    tf = torch.nn.functional

    def cna(x, p, stride=1, groups=1):  # conv, batch norm, ReLU6
        w = sd[p + ".0.weight"]
        return tf.relu6(_bn(tf, tf.conv2d(x, w, stride=stride, padding=(w.shape[-1] - 1) // 2, groups=groups), sd,
                            p + ".1"))

    x = cna(x, "features.0", stride=2)
    idx = 1
    inp = 32
    for t, c, n, s in [[1, 16, 1, 1], [6, 24, 2, 2], [6, 32, 3, 2], [6, 64, 4, 2], [6, 96, 3, 1], [6, 160, 3, 2],
                       [6, 320, 1, 1]]:
        for i in range(n):
            stride = s if i == 0 else 1
            p = f"features.{idx}.conv"
            hidden = inp * t
            out, k = x, 0
            if t != 1:
                out = cna(out, f"{p}.0")
                k = 1
            out = cna(out, f"{p}.{k}", stride=stride, groups=hidden)
            out = _bn(tf, tf.conv2d(out, sd[f"{p}.{k + 1}.weight"]), sd, f"{p}.{k + 2}")
            x = x + out if (stride == 1 and inp == c) else out
            inp = c
            idx += 1
    x = cna(x, f"features.{idx}")
    x = torch.flatten(tf.adaptive_avg_pool2d(x, 1), 1)
    return tf.linear(x, sd["classifier.1.weight"], sd["classifier.1.bias"])


_CFG = {"vgg11": "A", "vgg13": "B", "vgg16": "D", "vgg19": "E"}
_REFS = {
    "resnet18": lambda t, x, sd: _ref_resnet(t, x, sd, [2, 2, 2, 2], False),
    "resnet34": lambda t, x, sd: _ref_resnet(t, x, sd, [3, 4, 6, 3], False),
    "resnet50": lambda t, x, sd: _ref_resnet(t, x, sd, [3, 4, 6, 3], True),
    "vgg11_bn": lambda t, x, sd: _ref_vgg(t, x, sd, models.vgg.cfgs["A"], True),
    "alexnet": _ref_alexnet,
    "mobilenet_v2": _ref_mobilenet_v2,
}


@pytest.mark.parametrize("name", list(_REFS))
def test_model_matches_reference_forward(name):
    """A state_dict with random values loads strictly and gives the reference's output."""
    torch = pytest.importorskip("torch")
    ember.manual_seed(0)
    model = getattr(models, name)(num_classes=10).eval()
    gen = torch.Generator().manual_seed(0)
    ref_sd = _Keys()
    for k, v in model.state_dict().items():
        shape = tuple(v.shape)
        if k.endswith("num_batches_tracked"):
            t = torch.tensor(0)
        elif k.endswith("running_var"):
            t = torch.rand(shape, generator=gen) + 0.5
        elif k.endswith("running_mean") or k.endswith(".bias"):
            t = torch.randn(shape, generator=gen) * 0.1
        else:  # weights: keep activations O(1) through the depth
            fan_in = max(1, int(np.prod(shape[1:]))) if len(shape) > 1 else 1
            t = torch.randn(shape, generator=gen) / math.sqrt(fan_in) if len(shape) > 1 else \
                1 + 0.1 * torch.randn(shape, generator=gen)
        ref_sd[k] = t
    model.load_state_dict({k: ember.from_numpy(v.numpy().copy()) for k, v in ref_sd.items()}, strict=True)
    x = torch.randn(2, 3, 64, 64, generator=gen)
    with torch.no_grad():
        want = _REFS[name](torch, x, ref_sd)
    with ember.no_grad():
        got = model(ember.from_numpy(x.numpy().copy()))
    assert tuple(got.shape) == (2, 10)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=2e-3, atol=2e-4)
    unused = {k for k in ref_sd if not k.endswith("num_batches_tracked")} - ref_sd.used
    assert not unused, f"parameters the reference architecture does not have: {sorted(unused)[:5]}"


# torchvision's published parameter counts (1000 classes)
_PARAMS = {"resnet18": 11689512, "resnet34": 21797672, "resnet50": 25557032, "alexnet": 61100840,
           "mobilenet_v2": 3504872, "vgg16": 138357544}
_VGG_PARAMS = {("A", False): 132863336, ("A", True): 132868840, ("B", False): 133047848, ("B", True): 133053736,
               ("D", False): 138357544, ("D", True): 138365992, ("E", False): 143667240, ("E", True): 143678248}


def _count(m):
    return sum(p.numel() for p in m.parameters())


@pytest.mark.parametrize("name", list(_PARAMS))
def test_model_parameter_counts(name):
    kwargs = {"init_weights": False} if name.startswith("vgg") else {}  # skip initialising 138M weights
    m = getattr(models, name)(weights=None, **kwargs)
    assert _count(m) == _PARAMS[name]
    assert all(not k.startswith("_") for k in m.state_dict())


def test_vgg_variants_parameter_counts():
    # the classifier (25088 -> 4096 -> 4096 -> 1000) is the same for all; count the trunks
    classifier = 25088 * 4096 + 4096 + 4096 * 4096 + 4096 + 4096 * 1000 + 1000
    for (cfg, bn), total in _VGG_PARAMS.items():
        assert _count(models.vgg.make_layers(models.vgg.cfgs[cfg], batch_norm=bn)) + classifier == total
    m = models.vgg13_bn(num_classes=7, init_weights=False)
    assert _count(m) == _VGG_PARAMS[("B", True)] - 993 * 4097
    assert [k for k in m.state_dict() if k.startswith("features.1.")] == [
        "features.1.weight", "features.1.bias", "features.1.running_mean", "features.1.running_var",
        "features.1.num_batches_tracked"]
    for name in ["vgg11", "vgg11_bn", "vgg13", "vgg16_bn", "vgg19", "vgg19_bn"]:
        assert callable(getattr(models, name))


def test_model_key_names():
    sd = models.resnet50().state_dict()
    assert list(sd)[:7] == ["conv1.weight", "bn1.weight", "bn1.bias", "bn1.running_mean", "bn1.running_var",
                            "bn1.num_batches_tracked", "layer1.0.conv1.weight"]
    assert tuple(sd["layer1.0.downsample.0.weight"].shape) == (256, 64, 1, 1)
    assert tuple(sd["layer4.2.conv3.weight"].shape) == (2048, 512, 1, 1)
    assert tuple(sd["fc.weight"].shape) == (1000, 2048)
    assert len(sd) == 320
    assert len(models.resnet18().state_dict()) == 122
    mb = models.mobilenet_v2().state_dict()
    assert len(mb) == 314
    assert tuple(mb["features.1.conv.0.0.weight"].shape) == (32, 1, 3, 3)
    assert tuple(mb["features.2.conv.1.0.weight"].shape) == (96, 1, 3, 3)
    assert tuple(mb["features.18.0.weight"].shape) == (1280, 320, 1, 1)


def test_model_builder_arguments():
    with pytest.raises(ValueError, match="does not download"):
        models.resnet18(weights="DEFAULT")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(ValueError, match="does not download"):
            models.alexnet(pretrained=True)
        m = models.resnet18(pretrained=False, num_classes=3)
    assert tuple(m.fc.weight.shape) == (3, 512)
    with pytest.raises(TypeError):
        models.resnet18(True)  # keyword-only, as torchvision's builders
    m = models.resnet18(zero_init_residual=True)
    assert float(m.layer1[0].bn2.weight.abs().sum()) == 0 and float(m.layer1[0].bn1.weight.sum()) == 64
    with pytest.raises(ValueError, match="groups=1 and base_width=64"):
        models.resnet18(groups=2)
    with pytest.raises(ValueError, match="replace_stride_with_dilation"):
        models.resnet50(replace_stride_with_dilation=[False])
    with pytest.raises(ValueError, match="'groups' expected value 32"):
        models.resnext50_32x4d(groups=8)
    assert _count(models.resnext50_32x4d()) == 25028904
    assert _count(models.wide_resnet50_2()) == 68883240
    assert tuple(models.mobilenet_v2(width_mult=0.5).features[0][0].weight.shape) == (16, 3, 3, 3)
    assert "resnet50" in models.list_models() and "vgg19_bn" in models.list_models()
    assert tuple(models.get_model("AlexNet", num_classes=4).classifier[6].weight.shape) == (4, 4096)
    with pytest.raises(ValueError, match="Unknown model"):
        models.get_model("resnet9000")


def test_model_dilation_keeps_resolution():
    m = models.resnet50(replace_stride_with_dilation=[False, True, True], num_classes=5).eval()
    feats = {}
    m.layer4.register_forward_hook(lambda mod, inp, out: feats.setdefault("x", out))
    with ember.no_grad():
        y = m(ember.randn(1, 3, 64, 64))
    assert tuple(y.shape) == (1, 5) and tuple(feats["x"].shape) == (1, 2048, 8, 8)


def test_model_trains():
    m = models.resnet18(num_classes=4)
    opt = ember.optim.SGD(m.parameters(), lr=0.01)
    loss = ember.nn.functional.cross_entropy(m(ember.randn(2, 3, 32, 32)), ember.tensor([0, 3]))
    loss.backward()
    assert m.conv1.weight.grad is not None and m.fc.bias.grad is not None
    opt.step()


# ---------------------------------------------------------------- FakeData

def test_fakedata_deterministic_per_index():
    d = datasets.FakeData(size=6, image_size=(3, 5, 4), num_classes=3)
    assert len(d) == 6
    ember.manual_seed(123)
    before = ember.rand(3)
    ember.manual_seed(123)
    img, target = d[2]
    after = ember.rand(3)
    np.testing.assert_array_equal(before.numpy(), after.numpy())  # the caller's RNG stream is untouched
    assert img.shape == (5, 4, 3) and img.dtype == np.uint8
    assert isinstance(target, int) and 0 <= target < 3
    img2, target2 = d[2]
    np.testing.assert_array_equal(img, img2)
    assert target == target2
    assert not np.array_equal(d[3][0], img)
    shifted = datasets.FakeData(size=6, image_size=(3, 5, 4), num_classes=3, random_offset=1)
    np.testing.assert_array_equal(shifted[1][0], d[2][0])  # image i is seeded with i + random_offset
    # the image is a standard-normal draw seeded with the index, scaled by 255 and cast to 8 bits
    ember.manual_seed(2)
    noise = ember.randn(3, 5, 4)
    np.testing.assert_array_equal(img, noise.mul(255).to(ember.uint8).numpy().transpose(1, 2, 0))
    with pytest.raises(IndexError, match="FakeData index out of range"):
        d[6]
    gray = datasets.FakeData(size=2, image_size=(1, 3, 3))[0][0]
    assert gray.shape == (3, 3)


def test_fakedata_transforms_and_loader():
    d = datasets.FakeData(size=10, image_size=(3, 8, 8), num_classes=4, transform=transforms.ToTensor(),
                          target_transform=lambda t: t + 100)
    img, target = d[0]
    assert tuple(img.shape) == (3, 8, 8) and img.dtype is ember.float32 and 100 <= target < 104
    assert float(img.min()) >= 0 and float(img.max()) <= 1
    x, y = next(iter(ember.utils.data.DataLoader(d, batch_size=4)))
    assert tuple(x.shape) == (4, 3, 8, 8) and tuple(y.shape) == (4,)
    assert "Number of datapoints: 10" in repr(d)


# ---------------------------------------------------------------- DatasetFolder / ImageFolder

def _write_png(path, arr):
    path.write_bytes(vio.png_bytes(arr))


def _make_tree(root):
    rng = np.random.default_rng(0)
    images = {}
    for cls, names in {"dog": ["b.png", "a.PNG", "sub/c.jpg.png"], "cat": ["z.png"], "bird": ["x.png", "y.bmp"]}.items():
        for n in names:
            p = root / cls / n
            p.parent.mkdir(parents=True, exist_ok=True)
            if n.endswith("bmp"):
                p.write_bytes(b"not really a bmp")
                continue
            arr = rng.integers(0, 256, (4, 5, 3), dtype=np.uint8)
            _write_png(p, arr)
            images[str(p)] = arr
    (root / "cat" / "notes.txt").write_text("not an image")
    (root / "README").write_text("a file at the top level is not a class")
    return images


def test_image_folder_structure(tmp_path):
    _make_tree(tmp_path)
    d = datasets.ImageFolder(str(tmp_path), loader=lambda p: p)
    assert d.classes == ["bird", "cat", "dog"]
    assert d.class_to_idx == {"bird": 0, "cat": 1, "dog": 2}
    rel = [(os.path.relpath(p, tmp_path), t) for p, t in d.samples]
    assert rel == [("bird/x.png", 0), ("bird/y.bmp", 0), ("cat/z.png", 1), ("dog/a.PNG", 2), ("dog/b.png", 2),
                   ("dog/sub/c.jpg.png", 2)]
    assert d.targets == [0, 0, 1, 2, 2, 2] and d.imgs is d.samples and len(d) == 6
    path, target = d[3]
    assert path.endswith("a.PNG") and target == 2
    only_png = datasets.ImageFolder(tmp_path, loader=lambda p: p, is_valid_file=lambda p: p.endswith(".png"))
    assert [os.path.basename(p) for p, _ in only_png.samples] == ["x.png", "z.png", "b.png", "c.jpg.png"]
    assert only_png.extensions is None


def test_dataset_folder(tmp_path):
    for cls in ["b", "a"]:
        (tmp_path / cls).mkdir()
        for i in range(2):
            np.save(tmp_path / cls / f"{i}.npy", np.full((2,), i + (10 if cls == "b" else 0)))
    (tmp_path / "a" / "skip.txt").write_text("x")
    d = datasets.DatasetFolder(tmp_path, loader=np.load, extensions=(".npy",),
                               target_transform=lambda t: -t)
    assert d.classes == ["a", "b"] and d.extensions == (".npy",)
    sample, target = d[3]
    np.testing.assert_array_equal(sample, [11, 11])
    assert target == -1
    assert datasets.DatasetFolder(tmp_path, loader=np.load, extensions=".npy").targets == [0, 0, 1, 1]

    class Reversed(datasets.DatasetFolder):
        def find_classes(self, directory):
            return ["b", "a"], {"b": 0, "a": 1}

    r = Reversed(tmp_path, loader=np.load, extensions=".npy")
    assert r.classes == ["b", "a"] and r.targets == [1, 1, 0, 0]  # files still visited in sorted class order
    with pytest.raises(ValueError, match="Both extensions and is_valid_file"):
        datasets.DatasetFolder(tmp_path, loader=np.load)
    with pytest.raises(ValueError, match="Both extensions and is_valid_file"):
        datasets.DatasetFolder(tmp_path, loader=np.load, extensions=".npy", is_valid_file=lambda p: True)
    with pytest.raises(ValueError, match="cannot be None"):
        datasets.DatasetFolder.make_dataset(str(tmp_path), None, extensions=".npy")
    (tmp_path / "c").mkdir()
    with pytest.raises(FileNotFoundError, match="Found no valid file for the classes c"):
        datasets.DatasetFolder(tmp_path, loader=np.load, extensions=".npy")
    assert datasets.DatasetFolder(tmp_path, loader=np.load, extensions=".npy", allow_empty=True).classes == \
        ["a", "b", "c"]
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(FileNotFoundError, match="Couldn't find any class folder"):
        datasets.ImageFolder(empty)


def test_image_folder_default_loader(tmp_path):
    pytest.importorskip("PIL")
    from PIL import Image
    images = _make_tree(tmp_path)
    d = datasets.ImageFolder(tmp_path, is_valid_file=lambda p: p.lower().endswith(".png"))
    img, target = d[0]
    assert isinstance(img, Image.Image) and img.mode == "RGB" and img.size == (5, 4)
    np.testing.assert_array_equal(np.asarray(img), images[d.samples[0][0]])
    gray = tmp_path / "dog" / "gray.png"
    _write_png(gray, np.arange(20, dtype=np.uint8).reshape(4, 5))
    assert datasets.folder.default_loader(str(gray)).mode == "RGB"  # converted, as torchvision does
    t = datasets.ImageFolder(tmp_path, transform=transforms.Compose([transforms.Resize(8), transforms.CenterCrop(8),
                                                                     transforms.ToTensor()]),
                             is_valid_file=lambda p: p.endswith(".png"))
    x, _ = t[1]
    assert tuple(x.shape) == (3, 8, 8) and x.dtype is ember.float32


def test_image_folder_without_pillow(tmp_path, monkeypatch):
    _make_tree(tmp_path)
    monkeypatch.setitem(sys.modules, "PIL", None)  # import PIL now fails
    d = datasets.ImageFolder(tmp_path)
    with pytest.raises(ImportError, match="needs Pillow"):
        d[0]


# ---------------------------------------------------------------- transforms on PIL images

def test_transforms_on_pil_images():
    pytest.importorskip("PIL")
    from PIL import Image
    arr = np.random.default_rng(3).integers(0, 256, (6, 9, 3), dtype=np.uint8)
    im = Image.fromarray(arr)
    np.testing.assert_allclose(transforms.ToTensor()(im).numpy(), arr.transpose(2, 0, 1) / 255.0, atol=1e-7)
    pt = transforms.PILToTensor()(im)
    assert pt.dtype is ember.uint8 and np.array_equal(pt.numpy(), arr.transpose(2, 0, 1))
    assert tuple(transforms.ToTensor()(Image.fromarray(arr[:, :, 0])).shape) == (1, 6, 9)
    binary = Image.fromarray(arr[:, :, 0] > 128)  # mode "1": 0 / 255
    np.testing.assert_allclose(transforms.ToTensor()(binary).numpy()[0], (arr[:, :, 0] > 128).astype(np.float32))
    f32 = Image.fromarray(arr[:, :, 0].astype(np.float32))  # mode "F" keeps its values
    assert transforms.ToTensor()(f32).dtype is ember.float32 and float(transforms.ToTensor()(f32).max()) > 1

    r = transforms.Resize(3)(im)  # the smaller edge to 3, keeping the aspect ratio
    assert isinstance(r, Image.Image) and r.size == (4, 3)
    assert transforms.Resize((4, 5), interpolation=transforms.InterpolationMode.NEAREST)(im).size == (5, 4)
    # PIL's antialiased bilinear and the tensor path agree to a few levels
    tr = transforms.Resize((3, 4))(ember.from_numpy(arr.transpose(2, 0, 1).copy()))
    assert np.abs(np.asarray(transforms.Resize((3, 4))(im)).astype(int) - tr.numpy().transpose(1, 2, 0)).max() <= 3

    c = transforms.CenterCrop(4)(im)
    np.testing.assert_array_equal(np.asarray(c), arr[1:5, 2:6])
    np.testing.assert_array_equal(np.asarray(transforms.CenterCrop((8, 9))(im))[1:7], arr)
    np.testing.assert_array_equal(np.asarray(transforms.RandomHorizontalFlip(1.0)(im)), arr[:, ::-1])
    np.testing.assert_array_equal(np.asarray(transforms.RandomVerticalFlip(1.0)(im)), arr[::-1])
    p = np.asarray(transforms.Pad((1, 2), fill=7)(im))
    assert p.shape == (10, 11, 3) and (p[:2] == 7).all() and np.array_equal(p[2:8, 1:10], arr)
    e = np.asarray(transforms.Pad(2, padding_mode="reflect")(im))
    np.testing.assert_array_equal(e, np.pad(arr, [(2, 2), (2, 2), (0, 0)], mode="reflect"))
    ember.manual_seed(0)
    rc = transforms.RandomCrop(4, padding=1)(im)
    assert isinstance(rc, Image.Image) and rc.size == (4, 4)
    assert transforms.RandomRotation(20)(im).size == (9, 6)
    assert np.array_equal(np.asarray(transforms.functional.rotate(im, 90, expand=True)), np.rot90(arr))

    back = transforms.ToPILImage()(transforms.ToTensor()(im))
    assert back.mode == "RGB" and np.abs(np.asarray(back).astype(int) - arr).max() <= 1
    assert transforms.ToPILImage()(ember.rand(1, 3, 3)).mode == "L"
    assert transforms.ToPILImage()(arr[:, :, :2].copy()).mode == "LA"
    out = transforms.Compose([transforms.Resize(4), transforms.CenterCrop(4), transforms.ToTensor(),
                              transforms.Normalize((0.5,) * 3, (0.5,) * 3)])(im)
    assert tuple(out.shape) == (3, 4, 4) and float(out.min()) >= -1 and float(out.max()) <= 1


# ---------------------------------------------------------------- MNIST in torchvision's layout

def test_mnist_in_torchvision_layout(tmp_path):
    src = "/usr/share/datasets/fashion-mnist"
    if not os.path.exists(os.path.join(src, "t10k-labels-idx1-ubyte.gz")):
        pytest.skip("dataset-fashion-mnist is not installed")
    raw = tmp_path / "MNIST" / "raw"
    raw.mkdir(parents=True)
    for f in ["t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz"]:
        os.symlink(os.path.join(src, f), raw / f)
    d = datasets.MNIST(str(tmp_path), train=False, download=False, transform=transforms.ToTensor())
    x, y = d[0]
    assert len(d) == 10000 and tuple(x.shape) == (1, 28, 28) and 0 <= y < 10


# ---------------------------------------------------------------- the torch / torchvision shim

def test_alias_shim():
    shim = os.path.join(REPO, "scripts", "torch_shim")
    code = "\n".join([
        "import ember, ember.vision, ember.nn.functional as EF",
        "import torch, torch.nn as nn, torch.nn.functional as F, torch.utils.data, torch.optim as optim",
        "from torch.optim.lr_scheduler import StepLR",
        "from torch.utils.data.sampler import Sampler",
        "import torchvision, torchvision.transforms as T, torchvision.datasets as dset, torchvision.utils as vutils",
        "from torchvision import datasets, transforms, models",
        "assert torch is ember and nn is ember.nn and F is EF and optim is ember.optim",
        "assert torch.utils.data.DataLoader is ember.utils.data.DataLoader",
        "assert StepLR is ember.optim.lr_scheduler.StepLR",
        "assert torchvision is ember.vision and T is ember.vision.transforms and dset is ember.vision.datasets",
        "assert vutils.save_image is ember.vision.utils.save_image and models is ember.vision.models",
        "import sys; assert sys.modules['torch.nn.functional'] is EF",
        "try:\n    import torch.no_such_module\nexcept ModuleNotFoundError as e:\n    assert 'torch.no_such_module' in str(e)",
        "else:\n    raise AssertionError('imported a missing module')",
        "print('ok')",
    ])
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([shim, os.path.join(REPO, "python")]))
    res = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert res.returncode == 0 and res.stdout.strip() == "ok", res.stderr


def test_random_resized_crop():
    arr = np.random.default_rng(4).integers(0, 256, (20, 30, 3), dtype=np.uint8)
    t = transforms.RandomResizedCrop(8)
    ember.manual_seed(0)
    for _ in range(20):
        i, j, h, w = t.get_params(arr, t.scale, t.ratio)
        assert 0 <= i and 0 <= j and i + h <= 20 and j + w <= 30
        assert 0.08 * 600 * 0.9 <= h * w <= 600 and 3 / 4 * 0.8 <= w / h <= 4 / 3 * 1.25
    ember.manual_seed(5)
    out = t(ember.from_numpy(arr.transpose(2, 0, 1).copy()))
    ember.manual_seed(5)
    i, j, h, w = t.get_params(arr, t.scale, t.ratio)
    want = transforms.functional.resize(ember.from_numpy(arr[i:i + h, j:j + w].transpose(2, 0, 1).copy()), [8, 8])
    np.testing.assert_array_equal(out.numpy(), want.numpy())
    # no draw fits: the centre crop clipped to the ratio range
    assert transforms.RandomResizedCrop.get_params(arr[:4], (5.0, 6.0), (1.0, 1.0)) == (0, 13, 4, 4)
    assert tuple(transforms.RandomResizedCrop((5, 7), scale=(1.0, 1.0), ratio=(1.5, 1.5))(arr).shape) == (5, 7, 3)
    with pytest.raises(TypeError, match="Scale should be a sequence"):
        transforms.RandomResizedCrop(4, scale=0.5)
    with pytest.warns(UserWarning, match="Scale and ratio"):
        transforms.RandomResizedCrop(4, scale=(1.0, 0.5))
    try:
        from PIL import Image
    except ImportError:
        return
    assert transforms.RandomResizedCrop(6)(Image.fromarray(arr)).size == (6, 6)
