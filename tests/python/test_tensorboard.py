"""ember.utils.tensorboard.SummaryWriter: event files written in pure Python.

Without extra packages: CRC32C vectors, TFRecord framing, the hand-made protobuf bytes decoded by
a small wire-format reader here, PNG decoded with zlib, queueing/flushing/closing and file names.
With `tensorboard` (and torch): files read back with TensorBoard's own EventAccumulator and
compared with what torch.utils.tensorboard writes for the same data.
"""
import glob
import os
import re
import socket
import struct
import time
import zlib

import numpy as np
import pytest

import ember
from ember.utils.tensorboard import SummaryWriter
from ember.utils.tensorboard import _proto, summary as ember_summary
from ember.utils.tensorboard._png import encode_png
from ember.utils.tensorboard._record import crc32c, encode_record, masked_crc32c, read_records


# ---- helpers -----------------------------------------------------------------------------------

def decode_message(data):
    """{field number: [values]} of one protobuf message (varints as int, fixed64/32 as raw bytes,
    length-delimited as bytes)."""
    fields, pos = {}, 0
    while pos < len(data):
        key, pos = _read_varint(data, pos)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, pos = _read_varint(data, pos)
        elif wire == 1:
            value, pos = data[pos:pos + 8], pos + 8
        elif wire == 5:
            value, pos = data[pos:pos + 4], pos + 4
        elif wire == 2:
            length, pos = _read_varint(data, pos)
            value, pos = data[pos:pos + length], pos + length
        else:
            raise AssertionError(f"unexpected wire type {wire}")
        fields.setdefault(number, []).append(value)
    return fields


def _read_varint(data, pos):
    shift = result = 0
    while True:
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return result, pos


def decode_png(blob):
    """Pixels of an 8-bit, non-interlaced PNG using only filter type 0 (what encode_png writes)."""
    assert blob[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, header = 8, b"", None
    while pos < len(blob):
        (length,) = struct.unpack(">I", blob[pos:pos + 4])
        kind, body = blob[pos + 4:pos + 8], blob[pos + 8:pos + 8 + length]
        (crc,) = struct.unpack(">I", blob[pos + 8 + length:pos + 12 + length])
        assert crc == zlib.crc32(kind + body) & 0xFFFFFFFF
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    width, height, depth, color, _, _, interlace = header
    assert depth == 8 and interlace == 0
    channels = {0: 1, 2: 3, 6: 4}[color]
    raw = np.frombuffer(zlib.decompress(idat), np.uint8).reshape(height, 1 + width * channels)
    assert (raw[:, 0] == 0).all()
    return raw[:, 1:].reshape(height, width, channels)


def event_files(path):
    return sorted(glob.glob(os.path.join(str(path), "events.out.tfevents.*")))


def events(path):
    """Decoded Event messages of the single event file in `path`."""
    (name,) = event_files(path)
    return [decode_message(r) for r in read_records(name)]


# ---- CRC32C, records, protobuf bytes -----------------------------------------------------------

def test_crc32c_known_vectors():
    # RFC 3720 (iSCSI) B.4 test vectors and the standard check value
    assert crc32c(b"") == 0
    assert crc32c(b"123456789") == 0xE3069283
    assert crc32c(bytes(32)) == 0x8A9136AA
    assert crc32c(b"\xff" * 32) == 0x62A8AB43
    assert crc32c(bytes(range(32))) == 0x46DD794E
    assert crc32c(bytes(range(31, -1, -1))) == 0x113FDB5C
    # continuing a running checksum equals checksumming the concatenation
    assert crc32c(b"56789", crc32c(b"1234")) == crc32c(b"123456789")
    # masking: rotate right 15 bits, add 0xa282ead8
    crc = 0xE3069283
    assert masked_crc32c(b"123456789") == (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF
    assert masked_crc32c(b"") == 0xA282EAD8


def test_crc32c_large_inputs():
    # inputs of 256 KiB and more take the vectorised path: it must equal the byte-wise one
    from ember.utils.tensorboard import _record
    rng = np.random.default_rng(9)
    for n in (_record._VECTOR_MIN - 1, _record._VECTOR_MIN, 2 * _record._VECTOR_MIN + 13):
        data = rng.integers(0, 256, n).astype(np.uint8).tobytes()
        expected = _record._crc_bytes(data, 0xFFFFFFFF) ^ 0xFFFFFFFF
        assert crc32c(data) == expected
        assert crc32c(data[1000:], crc32c(data[:1000])) == expected


def test_masked_crc32c_matches_tensorboard():
    pytest.importorskip("tensorboard")
    from tensorboard.compat.tensorflow_stub.pywrap_tensorflow import masked_crc32c as reference
    rng = np.random.default_rng(10)
    for n in (0, 1, 7, 100, 5000):
        data = rng.integers(0, 256, n).astype(np.uint8).tobytes()
        assert masked_crc32c(data) == reference(data)


def test_record_framing_round_trip_and_corruption(tmp_path):
    record = encode_record(b"abc")
    assert record[:8] == struct.pack("<Q", 3)
    assert record[8:12] == struct.pack("<I", masked_crc32c(struct.pack("<Q", 3)))
    assert record[12:15] == b"abc"
    assert record[15:] == struct.pack("<I", masked_crc32c(b"abc"))
    path = tmp_path / "records"
    payloads = [b"", b"x" * 1000, bytes(range(256))]
    path.write_bytes(b"".join(encode_record(p) for p in payloads))
    assert list(read_records(str(path))) == payloads
    corrupt = bytearray(path.read_bytes())
    corrupt[16 + 12 + 5] ^= 1  # inside the second record's data (the first one is 16 bytes)
    path.write_bytes(bytes(corrupt))
    with pytest.raises(ValueError, match="corrupt record data"):
        list(read_records(str(path)))
    path.write_bytes(encode_record(b"abc")[:-2])
    with pytest.raises(ValueError, match="truncated"):
        list(read_records(str(path)))


def test_protobuf_scalar_encoding():
    assert _proto.varint(0) == b"\x00"
    assert _proto.varint(300) == b"\xac\x02"
    assert _proto.varint(-1) == b"\xff" * 9 + b"\x01"
    # Summary{value{tag: "loss", simple_value: 0.0}}: a oneof member is written even when zero
    value = _proto.summary_value("loss", simple_value=0.0)
    assert value == b"\x0a\x04loss\x15" + struct.pack("<f", 0.0)
    event = decode_message(_proto.event(wall_time=1.5, step=7, summary=_proto.summary([value])))
    assert struct.unpack("<d", event[1][0])[0] == 1.5
    assert event[2] == [7]
    assert decode_message(decode_message(event[5][0])[1][0])[1] == [b"loss"]
    # proto3 defaults are left out
    assert _proto.event() == b""


def test_scalar_events_on_disk(tmp_path):
    with SummaryWriter(tmp_path) as writer:
        writer.add_scalar("loss", 2.5, 3, walltime=123.0)
        writer.add_scalar("loss", ember.tensor(0.25), 4)
        writer.add_scalar("acc", np.float32(0.5))
    first, *rest = events(tmp_path)
    assert first[3] == [b"brain.Event:2"]
    decoded = []
    for event in rest:
        (value,) = decode_message(event[5][0])[1]
        value = decode_message(value)
        decoded.append((value[1][0].decode(), struct.unpack("<f", value[2][0])[0],
                        event.get(2, [0])[0]))
    assert decoded == [("loss", 2.5, 3), ("loss", 0.25, 4), ("acc", 0.5, 0)]
    assert struct.unpack("<d", rest[0][1][0])[0] == 123.0


def test_png_encoder_pixels():
    rng = np.random.default_rng(0)
    for channels in (1, 3, 4):
        image = rng.integers(0, 256, (5, 7, channels), dtype=np.uint8)
        assert np.array_equal(decode_png(encode_png(image)), image)
    with pytest.raises(TypeError):
        encode_png(np.zeros((4, 4, 2), np.uint8))


def test_image_summary_formats():
    rng = np.random.default_rng(1)
    chw = rng.random((3, 4, 6)).astype(np.float32)
    expected = (chw.transpose(1, 2, 0) * 255).clip(0, 255).astype(np.uint8)
    for data, fmt in [(chw, "CHW"), (chw.transpose(1, 2, 0), "HWC"), (chw.transpose(2, 1, 0), "WHC")]:
        (value,) = decode_message(ember_summary.image("img", ember.tensor(data), fmt))[1]
        image = decode_message(decode_message(value)[4][0])
        assert (image[1], image[2], image[3]) == ([4], [6], [3])
        assert np.array_equal(decode_png(image[4][0]), expected)
    grey = rng.integers(0, 256, (4, 6), dtype=np.uint8)
    (value,) = decode_message(ember_summary.image("img", grey, "HW"))[1]
    pixels = decode_png(decode_message(decode_message(value)[4][0])[4][0])
    assert np.array_equal(pixels, np.stack([grey] * 3, 2))


# ---- writer behaviour --------------------------------------------------------------------------

def test_file_name_and_default_logdir(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    writer = SummaryWriter(comment="_lr0.1", filename_suffix=".v2")
    try:
        logdir = writer.get_logdir()
        assert re.fullmatch(r"runs/[A-Z][a-z]{2}\d{2}_\d{2}-\d{2}-\d{2}_" + re.escape(
            socket.gethostname()) + "_lr0.1", logdir)
        (name,) = event_files(logdir)
        pattern = (r"events\.out\.tfevents\.\d{10}\." + re.escape(socket.gethostname())
                   + r"\." + str(os.getpid()) + r"\.\d+\.v2")
        assert re.fullmatch(pattern, os.path.basename(name))
    finally:
        writer.close()


def test_queue_flush_close(tmp_path):
    writer = SummaryWriter(tmp_path, max_queue=3, flush_secs=1000)
    (name,) = event_files(tmp_path)
    assert len(list(read_records(name))) == 1  # the file_version event is written at once
    writer.add_scalar("a", 1.0, 0)
    writer.add_scalar("a", 2.0, 1)
    assert len(list(read_records(name))) == 1  # still queued
    writer.add_scalar("a", 3.0, 2)  # the queue is full: written
    assert len(list(read_records(name))) == 4
    writer.add_scalar("a", 4.0, 3)
    writer.flush()
    assert len(list(read_records(name))) == 5
    writer.add_scalar("a", 5.0, 4)
    writer.close()
    assert len(list(read_records(name))) == 6
    writer.close()  # twice is harmless
    # like torch, a closed writer reopens in a new file when used again
    writer.add_scalar("a", 6.0, 5)
    writer.close()
    assert len(event_files(tmp_path)) == 2


def test_periodic_flush(tmp_path):
    writer = SummaryWriter(tmp_path, max_queue=1000, flush_secs=0.05)
    try:
        writer.add_scalar("a", 1.0, 0)
        (name,) = event_files(tmp_path)
        deadline = time.time() + 10
        while len(list(read_records(name))) < 2 and time.time() < deadline:
            time.sleep(0.02)
        assert len(list(read_records(name))) == 2
    finally:
        writer.close()


def test_purge_step_events(tmp_path):
    with SummaryWriter(tmp_path, purge_step=5) as writer:
        writer.add_scalar("a", 1.0, 5)
    header, purge, session, scalar = events(tmp_path)
    assert purge[2] == [5] and purge[3] == [b"brain.Event:2"]
    assert session[2] == [5] and decode_message(session[7][0])[1] == [_proto.SESSION_LOG_START]


def test_bad_input_errors(tmp_path):
    with SummaryWriter(tmp_path) as writer:
        with pytest.raises(AssertionError):
            writer.add_scalar("a", ember.ones(3))
        with pytest.raises(NotImplementedError):
            writer.add_scalar("a", [1.0])
        with pytest.raises(ValueError):
            writer.add_histogram("h", np.zeros(0))
        with pytest.raises(AssertionError):
            writer.add_image("i", np.zeros((3, 4)), dataformats="CHW")
        with pytest.raises(AssertionError):
            writer.add_image("i", np.zeros((3, 4, 4)), dataformats="CCW")
        with pytest.raises(TypeError):
            writer.add_hparams([("lr", 0.1)], {})
        with pytest.raises(TypeError):
            writer.add_hparams({"lr": 0.1}, {}, hparam_domain_discrete={"lr": [1]})
        with pytest.raises(ValueError):
            writer.add_hparams({"lr": [0.1]}, {})
        with pytest.raises(ValueError):
            writer.add_histogram_raw("h", 0, 1, 2, 1, 1, [0.5, 1.0], [2])
        with pytest.raises(AssertionError):
            writer.add_custom_scalars_marginchart(["a", "b"])
        with pytest.raises(AssertionError):
            writer.add_embedding(np.zeros((3, 2)), metadata=["a", "b"])
        with pytest.raises(TypeError):
            writer.add_graph(lambda x: x, ember.ones(2))


def test_embedding_files_without_tensorboard(tmp_path):
    mat = np.arange(6, dtype=np.float32).reshape(3, 2) / 4
    labels = np.random.default_rng(0).random((3, 1, 2, 2)).astype(np.float32)
    with SummaryWriter(tmp_path) as writer:
        writer.add_embedding(ember.tensor(mat), metadata=["a", "b", "c"], tag="my/tag",
                             label_img=ember.tensor(labels), global_step=3)
    sub = tmp_path / "00003" / "my%2ftag"
    assert (sub / "tensors.tsv").read_text() == "0.0\t0.25\n0.5\t0.75\n1.0\t1.25\n"
    assert (sub / "metadata.tsv").read_text() == "a\nb\nc\n"
    sprite = decode_png((sub / "sprite.png").read_bytes())
    assert sprite.shape == (4, 4, 3)
    assert np.array_equal(sprite[:2, :2, 0], np.uint8((labels[0, 0] * 255).clip(0, 255)))
    config = (tmp_path / "projector_config.pbtxt").read_text()
    assert 'tensor_name: "my/tag:00003"' in config
    assert 'tensor_path: "00003/my%2ftag/tensors.tsv"' in config
    assert "single_image_dim: 2" in config


# ---- read back with TensorBoard, compared with torch's writer ----------------------------------

@pytest.fixture(scope="module")
def tb():
    pytest.importorskip("tensorboard")
    from tensorboard.backend.event_processing import event_accumulator
    return event_accumulator


@pytest.fixture(scope="module")
def torch_tb():
    torch = pytest.importorskip("torch")
    pytest.importorskip("tensorboard")
    from torch.utils.tensorboard import SummaryWriter as TorchWriter
    from torch.utils.tensorboard import summary as torch_summary
    return torch, TorchWriter, torch_summary


def load(tb, path, **size_guidance):
    guidance = {"scalars": 0, "histograms": 0, "images": 0, "tensors": 0, **size_guidance}
    acc = tb.EventAccumulator(str(path), size_guidance=guidance)
    acc.Reload()
    return acc


def test_scalar_records_match_torch_bytes(tmp_path, torch_tb):
    torch, TorchWriter, _ = torch_tb
    values = [0.0, -1.25, 3.5e10, float("nan"), float("inf"), 1e300, -1e-300]
    for cls, sub, convert in [(SummaryWriter, "ember", ember.tensor), (TorchWriter, "torch", torch.tensor)]:
        with cls(str(tmp_path / sub)) as writer:
            for step, v in enumerate(values):
                writer.add_scalar("loss", convert(v) if abs(v) < 1e38 else v, step,
                                  walltime=1000.0 + step)
                writer.add_scalar("plain", v, step * 10, walltime=2000.0)
            writer.add_scalar("new", 1.5, 1, walltime=5.0, new_style=True)
            writer.add_scalar("double", 1.5, 1, walltime=5.0, new_style=True, double_precision=True)
    (mine,), (theirs,) = event_files(tmp_path / "ember"), event_files(tmp_path / "torch")
    mine, theirs = list(read_records(mine)), list(read_records(theirs))
    assert len(mine) == len(theirs)
    # the first event carries the file's creation time; the rest must match byte for byte
    assert mine[1:] == theirs[1:]
    assert decode_message(mine[0])[3] == decode_message(theirs[0])[3]


def test_scalars_read_back(tmp_path, tb):
    with SummaryWriter(tmp_path) as writer:
        for step in range(5):
            writer.add_scalar("train/loss", ember.tensor(1.0 / (step + 1)), step)
        writer.add_scalars("run", {"a": 1.0, "b": ember.tensor(2.0)}, 7)
    acc = load(tb, tmp_path)
    loss = acc.Scalars("train/loss")
    assert [e.step for e in loss] == list(range(5))
    assert np.allclose([e.value for e in loss], [1.0 / (s + 1) for s in range(5)])
    for key, expected in [("a", 1.0), ("b", 2.0)]:
        (event,) = load(tb, tmp_path / f"run_{key}").Scalars("run")
        assert (event.step, event.value) == (7, expected)


def test_histograms_match_torch(tmp_path, tb, torch_tb):
    torch, TorchWriter, torch_summary = torch_tb
    rng = np.random.default_rng(0)
    values = rng.normal(size=2000).astype(np.float32) * 3
    cases = [("tensorflow", None), ("auto", None), (13, None), (64, 10), ("fd", None),
             (np.linspace(-5, 5, 11), None)]
    for i, (bins, max_bins) in enumerate(cases):
        with SummaryWriter(str(tmp_path / f"e{i}")) as writer:
            writer.add_histogram("h", ember.tensor(values), 3, bins=bins, max_bins=max_bins)
        with TorchWriter(str(tmp_path / f"t{i}")) as writer:
            writer.add_histogram("h", torch.tensor(values), 3, bins=bins, max_bins=max_bins)
        (mine,) = load(tb, tmp_path / f"e{i}").Histograms("h")
        (theirs,) = load(tb, tmp_path / f"t{i}").Histograms("h")
        assert mine.step == 3
        assert mine.histogram_value == theirs.histogram_value, bins
    # the summary bytes themselves agree with torch's (numpy and int inputs too)
    ints = rng.integers(-50, 50, 300)
    assert ember_summary.histogram("x", ints, "auto") == \
        torch_summary.histogram("x", ints, "auto").SerializeToString()
    assert ember_summary.histogram_raw("r", 0, 3, 4, 6, 14, [1, 2, 3], [1, 1, 2]) == \
        torch_summary.histogram_raw("r", 0, 3, 4, 6, 14, [1, 2, 3], [1, 1, 2]).SerializeToString()


def test_images_match_torch_pixels(tmp_path, tb, torch_tb):
    torch, TorchWriter, _ = torch_tb
    pil = pytest.importorskip("PIL.Image")
    import io
    rng = np.random.default_rng(2)
    cases = [
        ("chw_float", rng.random((3, 8, 5)).astype(np.float32) * 1.4 - 0.2, "CHW", False),
        ("hwc_uint8", rng.integers(0, 256, (6, 9, 3)).astype(np.uint8), "HWC", False),
        ("hw", rng.random((7, 4)), "HW", False),
        ("grey_chw", rng.random((1, 5, 5)).astype(np.float32), "CHW", False),
        ("rgba", rng.random((4, 5, 6)).astype(np.float32), "CHW", False),
        ("batch", rng.random((11, 3, 4, 3)).astype(np.float32), "NCHW", True),
        ("batch_nhwc", rng.random((3, 4, 2, 1)).astype(np.float32), "NHWC", True),
    ]
    with SummaryWriter(str(tmp_path / "e")) as ew, TorchWriter(str(tmp_path / "t")) as tw:
        for tag, data, fmt, batch in cases:
            if batch:
                ew.add_images(tag, ember.tensor(data), 1, dataformats=fmt)
                tw.add_images(tag, torch.tensor(data), 1, dataformats=fmt)
            else:
                ew.add_image(tag, ember.tensor(data), 1, dataformats=fmt)
                tw.add_image(tag, torch.tensor(data), 1, dataformats=fmt)
    mine, theirs = load(tb, tmp_path / "e"), load(tb, tmp_path / "t")
    for tag, *_ in cases:
        (a,), (b,) = mine.Images(tag), theirs.Images(tag)
        assert (a.step, a.width, a.height) == (b.step, b.width, b.height)
        pa = np.array(pil.open(io.BytesIO(a.encoded_image_string)))
        pb = np.array(pil.open(io.BytesIO(b.encoded_image_string)))
        assert pa.shape == pb.shape and np.array_equal(pa, pb), tag


def test_text_read_back(tmp_path, tb, torch_tb):
    _, _, torch_summary = torch_tb
    with SummaryWriter(tmp_path) as writer:
        writer.add_text("notes", "héllo **world**", 2)
    (event,) = load(tb, tmp_path).Tensors("notes/text_summary")
    assert event.step == 2
    assert event.tensor_proto.string_val == [b"h\xc3\xa9llo **world**"]
    assert ember_summary.text("t", "x y") == torch_summary.text("t", "x y").SerializeToString()


def test_hparams_match_torch(tmp_path, tb, torch_tb):
    torch, TorchWriter, _ = torch_tb
    from tensorboard.plugins.hparams.plugin_data_pb2 import HParamsPluginData
    hparams = {"lr": 0.01, "layers": 3, "optimizer": "adam", "nesterov": True, "skip": None}
    metrics = {"hparam/accuracy": 0.9, "hparam/loss": 0.1}
    domain = {"optimizer": ["adam", "sgd"], "layers": [2, 3, 4]}
    with SummaryWriter(str(tmp_path / "e")) as writer:
        writer.add_hparams(hparams, metrics, domain, run_name="run")
    with TorchWriter(str(tmp_path / "t")) as writer:
        writer.add_hparams(hparams, metrics, domain, run_name="run")
    mine, theirs = load(tb, tmp_path / "e" / "run"), load(tb, tmp_path / "t" / "run")
    plugin = mine.PluginTagToContent("hparams")
    assert plugin.keys() == theirs.PluginTagToContent("hparams").keys() == {
        "_hparams_/experiment", "_hparams_/session_start_info", "_hparams_/session_end_info"}
    for tag, content in plugin.items():
        a = HParamsPluginData.FromString(content)
        b = HParamsPluginData.FromString(theirs.PluginTagToContent("hparams")[tag])
        assert a == b, tag
    start = HParamsPluginData.FromString(plugin["_hparams_/session_start_info"])
    assert start.session_start_info.hparams["optimizer"].string_value == "adam"
    assert start.session_start_info.hparams["lr"].number_value == 0.01
    for key, value in metrics.items():
        (event,) = mine.Scalars(key)
        assert event.value == pytest.approx(value)


def test_pr_curve_and_custom_scalars_match_torch(tmp_path, tb, torch_tb):
    torch, _, torch_summary = torch_tb
    rng = np.random.default_rng(3)
    labels, predictions = rng.integers(0, 2, 200), rng.random(200)
    weights = rng.random(200)
    for thresholds, w in [(127, None), (10, None), (500, weights)]:
        assert ember_summary.pr_curve("pr", labels, predictions, thresholds, w) == \
            torch_summary.pr_curve("pr", labels, predictions, thresholds, w).SerializeToString()
    with SummaryWriter(tmp_path) as writer:
        writer.add_pr_curve("pr", ember.tensor(labels), ember.tensor(predictions), 4,
                            num_thresholds=20)
        writer.add_custom_scalars({"Losses": {"all": ["Multiline", ["loss/.*"]],
                                              "band": ["Margin", ["m", "lo", "hi"]]}})
    acc = load(tb, tmp_path)
    (event,) = acc.Tensors("pr")
    data = np.array(event.tensor_proto.float_val).reshape(6, 20)
    expected = ember_summary.compute_curve(labels, predictions, num_thresholds=20)
    assert event.step == 4 and np.allclose(data, expected.astype(np.float32))
    layout = {"Taiwan": {"twse": ["Multiline", ["twse/0050", "twse/2330"]]},
              "USA": {"dow": ["Margin", ["dow/aaa", "dow/bbb", "dow/ccc"]],
                      "nasdaq": ["Margin", ["nasdaq/aaa", "nasdaq/bbb", "nasdaq/ccc"]]}}
    assert ember_summary.custom_scalars(layout) == \
        torch_summary.custom_scalars(layout).SerializeToString()
    assert "custom_scalars__config__" in acc.PluginTagToContent("custom_scalars")


def test_audio_and_tensor(tmp_path, tb, torch_tb):
    torch, _, torch_summary = torch_tb
    from tensorboard.util import tensor_util
    sound = np.sin(np.linspace(0, 40, 800))
    assert ember_summary.audio("a", sound, 8000) == \
        torch_summary.audio("a", sound, 8000).SerializeToString()
    data = np.arange(-3, 3).reshape(2, 3)
    with SummaryWriter(tmp_path) as writer:
        for dtype in ("float32", "float64", "int32", "int64", "int8", "uint8", "int16", "bool",
                      "float16"):
            writer.add_tensor(dtype, ember.tensor(data.astype(dtype)), 1)
    acc = load(tb, tmp_path)
    for dtype in ("float32", "float64", "int32", "int64", "int8", "uint8", "int16", "bool",
                  "float16"):
        (event,) = acc.Tensors(dtype)
        array = tensor_util.make_ndarray(event.tensor_proto)
        assert array.dtype == np.dtype(dtype) and np.array_equal(array, data.astype(dtype))
    # torch's encoding for the dtypes TensorBoard decodes correctly
    for dtype in ("float32", "float64", "int32", "int64", "int8", "int16", "bool"):
        assert ember_summary.tensor_proto("t", ember.tensor(data.astype(dtype))) == \
            torch_summary.tensor_proto("t", torch.tensor(data.astype(dtype))).SerializeToString()


def test_graph_read_back(tmp_path, tb):
    class Net(ember.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = ember.nn.Linear(3, 4)
            self.seq = ember.nn.Sequential(ember.nn.Linear(4, 4), ember.nn.ReLU())
            self.fc2 = ember.nn.Linear(4, 2)

        def forward(self, x):
            return self.fc2(self.seq(ember.relu(self.fc1(x))) + 1)

    model = Net()
    model.train()
    with SummaryWriter(tmp_path) as writer:
        writer.add_graph(model, ember.randn(2, 3))
    assert model.training  # restored after recording in eval mode
    acc = load(tb, tmp_path)
    nodes = {n.name: n for n in acc.Graph().node}
    assert nodes["input/x"].op == "IO Node"
    assert nodes["Net/Linear[fc1]/weight"].op == "prim::GetAttr"
    ops = [(name.rsplit("/", 1)[0], n.op) for name, n in nodes.items() if n.op.startswith("aten::")]
    assert ops == [("Net/Linear[fc1]", "aten::linear"), ("Net", "aten::relu"),
                   ("Net/Sequential[seq]/Linear[0]", "aten::linear"),
                   ("Net/Sequential[seq]/ReLU[1]", "aten::relu"), ("Net", "aten::add"),
                   ("Net/Linear[fc2]", "aten::linear")]
    linear = next(n for name, n in nodes.items() if name.startswith("Net/Linear[fc1]/linear"))
    assert list(linear.input) == ["input/x", "Net/Linear[fc1]/weight", "Net/Linear[fc1]/bias"]
    assert [d.size for d in linear.attr["_output_shapes"].list.shape[0].dim] == [2, 4]
    (output,) = [n for name, n in nodes.items() if name.startswith("output/")]
    assert list(output.input) == [next(k for k in nodes if k.startswith("Net/Linear[fc2]/linear"))]
    assert acc.RunMetadata("step1").step_stats.dev_stats[0].device == "/device:CPU:0"


def test_graph_several_inputs_outputs_and_shared_module(tmp_path, tb):
    class Twice(ember.nn.Module):
        def __init__(self):
            super().__init__()
            self.shared = ember.nn.Linear(4, 4)
            self.conv = ember.nn.Conv2d(1, 2, 3)
            self.drop = ember.nn.Dropout(0.5)

        def forward(self, x, image):
            hidden = self.shared(self.shared(x))
            hidden.relu_()
            return hidden, self.drop(self.conv(image)).flatten(1).sum(1)

    with SummaryWriter(tmp_path) as writer:
        writer.add_graph(Twice(), (ember.randn(2, 4), ember.randn(2, 1, 5, 5)))
    nodes = list(load(tb, tmp_path).Graph().node)
    names = [n.name for n in nodes]
    assert names[:2] == ["input/x", "input/image"]
    assert [n for n in names if n.startswith("output/")] == ["output/output.1", "output/output.2"]
    ops = [(n.name.rsplit("/", 1)[0], n.op) for n in nodes if n.op.startswith("aten::")]
    # the shared layer appears once per call; dropout records nothing in eval mode
    assert ops[:3] == [("Twice/Linear[shared]", "aten::linear"),
                       ("Twice/Linear[shared]", "aten::linear"), ("Twice", "aten::relu_")]
    assert ("Twice/Conv2d[conv]", "aten::conv2d") in ops
    assert not any("Dropout" in scope for scope, _ in ops)
    by_name = {n.name: n for n in nodes}
    second = [n for n in nodes if n.op == "aten::linear"][1]
    assert list(second.input)[0] == [n.name for n in nodes if n.op == "aten::linear"][0]
    assert list(by_name["output/output.1"].input) == [next(n.name for n in nodes if n.op == "aten::relu_")]


def test_embedding_matches_torch(tmp_path, torch_tb):
    torch, TorchWriter, _ = torch_tb
    rng = np.random.default_rng(4)
    mat = rng.random((5, 3)).astype(np.float32)
    meta = [["a", 1], ["b", 2], ["c", 3], ["d", 4], ["e", 5]]
    images = rng.random((5, 3, 4, 4)).astype(np.float32)
    for cls, sub, convert in [(SummaryWriter, "e", ember.tensor), (TorchWriter, "t", torch.tensor)]:
        with cls(str(tmp_path / sub)) as writer:
            writer.add_embedding(convert(mat), metadata=meta, metadata_header=["name", "n"],
                                 label_img=convert(images), global_step=2, tag="emb")
            writer.add_embedding(convert(mat), global_step=3)
    for rel in ["projector_config.pbtxt", "00002/emb/tensors.tsv", "00002/emb/metadata.tsv",
                "00003/default/tensors.tsv"]:
        assert (tmp_path / "e" / rel).read_bytes() == (tmp_path / "t" / rel).read_bytes(), rel
    pil = pytest.importorskip("PIL.Image")
    mine = np.array(pil.open(str(tmp_path / "e" / "00002/emb/sprite.png")))
    theirs = np.array(pil.open(str(tmp_path / "t" / "00002/emb/sprite.png")))
    assert np.array_equal(mine, theirs)


def test_figure(tmp_path, tb):
    pytest.importorskip("matplotlib")
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    def make_figure():
        figure = plt.figure(figsize=(2, 1), dpi=50)
        plt.plot([0, 1], [1, 0])
        return figure

    with SummaryWriter(tmp_path) as writer:
        writer.add_figure("fig", make_figure(), 0)
        writer.add_figure("figs", [make_figure(), make_figure(), make_figure()], 0)
    acc = load(tb, tmp_path)
    (image,) = acc.Images("fig")
    assert (image.width, image.height) == (100, 50)
    (grid,) = acc.Images("figs")
    assert (grid.width, grid.height) == (300, 50)
    assert not plt.get_fignums()  # close=True closed them
    try:
        from torch.utils.tensorboard._utils import figure_to_image
    except ImportError:
        return
    mine = ember_summary.figure_to_image([make_figure(), make_figure()])
    theirs = figure_to_image([make_figure(), make_figure()])
    assert mine.shape == theirs.shape == (2, 3, 50, 100) and np.array_equal(mine, theirs)


def test_record_writer(tmp_path):
    from ember.utils.tensorboard import RecordWriter
    path = tmp_path / "r"
    with open(path, "wb") as f:
        writer = RecordWriter(f)
        writer.write(b"one")
        writer.write(b"two")
        writer.flush()
        assert not writer.closed
        writer.close()
        assert writer.closed
    assert list(read_records(str(path))) == [b"one", b"two"]


def test_mesh_matches_torch(tmp_path, tb, torch_tb):
    torch, _, torch_summary = torch_tb
    rng = np.random.default_rng(5)
    vertices = rng.random((1, 6, 3)).astype(np.float32)
    faces = rng.integers(0, 6, (1, 4, 3))
    colors = rng.integers(0, 256, (1, 6, 3)).astype(np.uint8)
    config = {"camera": {"cls": "PerspectiveCamera", "fov": 75}}
    assert ember_summary.mesh("m", ember.tensor(vertices), ember.tensor(colors), ember.tensor(faces),
                              config) == torch_summary.mesh(
        "m", torch.tensor(vertices), torch.tensor(colors), torch.tensor(faces), config).SerializeToString()
    with SummaryWriter(tmp_path) as writer:
        writer.add_mesh("cloud", ember.tensor(vertices), global_step=2)
        with pytest.raises(ValueError):
            writer.add_mesh("bad", ember.tensor(vertices[0]))
    (event,) = load(tb, tmp_path).Tensors("cloud_VERTEX")
    assert event.step == 2
    assert np.allclose(np.array(event.tensor_proto.float_val).reshape(1, 6, 3), vertices)


def test_onnx_graph(tmp_path, tb, torch_tb):
    pytest.importorskip("onnx")
    import ember.onnx
    from torch.utils.tensorboard._onnx_graph import load_onnx_graph
    model = ember.nn.Sequential(ember.nn.Linear(3, 4), ember.nn.Softmax(dim=1))
    path = str(tmp_path / "model.onnx")
    ember.onnx.export(model, (ember.randn(2, 3),), path)
    with SummaryWriter(str(tmp_path / "run")) as writer:
        writer.add_onnx_graph(path)
    mine = load(tb, tmp_path / "run").Graph().node
    theirs = load_onnx_graph(path).node
    assert [(n.name, n.op, list(n.input)) for n in mine] == \
        [(n.name, n.op, list(n.input)) for n in theirs]
    variables = [n for n in mine if n.op == "Variable"]
    assert variables and all(n.attr["dtype"] == t.attr["dtype"] and n.attr["shape"] == t.attr["shape"]
                             for n, t in zip(variables, theirs))
    softmax = next(n for n in mine if n.op == "Softmax")
    assert softmax.attr["parameters"].s == b"axis = 1"


def test_image_with_boxes_matches_torch(tmp_path, tb, torch_tb):
    torch, TorchWriter, torch_summary = torch_tb
    pil = pytest.importorskip("PIL.Image")
    import io
    from tensorboard.compat.proto.summary_pb2 import Summary
    rng = np.random.default_rng(6)
    for trial in range(40):
        image = rng.random((3, 20, 24)).astype(np.float32)
        # any corners: inverted, degenerate, fractional and off-image boxes included
        boxes = rng.random((int(rng.integers(1, 4)), 4)) * 30 - 3
        if trial % 2:
            boxes = np.round(boxes)
        a = Summary.FromString(ember_summary.image_boxes("i", ember.tensor(image),
                                                         ember.tensor(boxes))).value[0].image
        b = torch_summary.image_boxes("i", torch.tensor(image), torch.tensor(boxes)).value[0].image
        assert (a.height, a.width, a.colorspace) == (b.height, b.width, b.colorspace)
        assert np.array_equal(decode_png(a.encoded_image_string),
                              np.array(pil.open(io.BytesIO(b.encoded_image_string)))), boxes
    # labels and rescaling go through Pillow, as in torch
    image, boxes = rng.random((3, 16, 20)).astype(np.float32), np.array([[2, 3, 12, 14], [5, 1, 18, 9]])
    with SummaryWriter(str(tmp_path / "e")) as ew, TorchWriter(str(tmp_path / "t")) as tw:
        ew.add_image_with_boxes("b", ember.tensor(image), ember.tensor(boxes), 1, rescale=2,
                                labels=["cat", "dog"])
        tw.add_image_with_boxes("b", torch.tensor(image), torch.tensor(boxes), 1, rescale=2,
                                labels=["cat", "dog"])
    (a,), (b,) = load(tb, tmp_path / "e").Images("b"), load(tb, tmp_path / "t").Images("b")
    pa = np.array(pil.open(io.BytesIO(a.encoded_image_string)))
    pb = np.array(pil.open(io.BytesIO(b.encoded_image_string)))
    assert pa.shape == (32, 40, 3) and np.array_equal(pa, pb)


def test_gif_encoder_decodes_with_pillow():
    pil = pytest.importorskip("PIL.Image")
    import io
    from ember.utils.tensorboard._gif import encode_gif
    rng = np.random.default_rng(7)
    # lengths around the points where LZW codes widen (512, 1024, 2048) and the table is cleared
    for n in (1, 255, 256, 257, 511, 512, 513, 1023, 1025, 2047, 2049, 4095, 4096, 4097, 9000):
        for data in (rng.integers(0, 256, n), np.arange(n) % 7, rng.integers(0, 3, n)):
            data = data.astype(np.uint8)
            image = pil.open(io.BytesIO(encode_gif(data.reshape(1, 1, n, 1), fps=4)))
            assert np.array_equal(np.array(image.convert("L"))[0], data), n
    with pytest.raises(ValueError):
        encode_gif(np.zeros((1, 1, 70000, 1), np.uint8), 4)


def test_video(tmp_path, tb, torch_tb):
    torch, _, _ = torch_tb
    pil = pytest.importorskip("PIL.Image")
    import io
    from torch.utils.tensorboard._utils import _prepare_video
    from ember.utils.tensorboard._gif import _indices, _palette
    rng = np.random.default_rng(8)
    for batch in (1, 2, 3, 5):
        clip = rng.random((batch, 3, 3, 4, 5)).astype(np.float32)
        assert np.array_equal(ember_summary.prepare_video(clip), _prepare_video(clip))
        clip = (clip * 255).astype(np.uint8)
        assert np.array_equal(ember_summary.prepare_video(clip), _prepare_video(clip))
    grey = rng.random((3, 4, 1, 6, 5)).astype(np.float32)
    colour = rng.integers(0, 256, (2, 3, 3, 5, 4)).astype(np.uint8)
    with SummaryWriter(tmp_path) as writer:
        writer.add_video("grey", ember.tensor(grey), 1, fps=2)
        writer.add_video("colour", ember.tensor(colour), 1)
        with pytest.raises(ValueError):
            writer.add_video("bad", ember.tensor(grey[0]))
    acc = load(tb, tmp_path)
    for tag, clip, frames in (("grey", grey, 4), ("colour", colour, 3)):
        (event,) = acc.Images(tag)
        expected = ember_summary.prepare_video(clip)
        expected = (expected * 255).clip(0, 255).astype(np.uint8)
        assert (event.height, event.width) == expected.shape[1:3]
        gif = pil.open(io.BytesIO(event.encoded_image_string))
        assert gif.n_frames == frames
        for k in range(frames):
            gif.seek(k)
            pixels = np.array(gif.convert("RGB"))
            if expected.shape[3] == 1:  # grey: 256 levels, lossless
                assert np.array_equal(pixels, np.repeat(expected[k], 3, 2)), (tag, k)
            else:  # colour: the nearest of 6 x 7 x 6 levels
                assert np.array_equal(pixels, _palette(3)[_indices(expected[k])]), (tag, k)
                assert np.abs(pixels.astype(int) - expected[k]).max() <= 26
    gif = pil.open(io.BytesIO(acc.Images("grey")[0].encoded_image_string))
    assert gif.info["duration"] == 500 and gif.info["loop"] == 0


def test_error_types_match_torch(tmp_path, torch_tb):
    torch, TorchWriter, _ = torch_tb
    cases = [
        lambda w, T: w.add_scalar("a", T.ones(3)),
        lambda w, T: w.add_scalar("a", [1.0]),
        lambda w, T: w.add_scalar("a", "x"),
        lambda w, T: w.add_histogram("h", np.zeros(0)),
        lambda w, T: w.add_histogram("h", T.ones(4), bins="nonsense"),
        lambda w, T: w.add_image("i", T.zeros(3, 4), dataformats="CHW"),
        lambda w, T: w.add_image("i", T.zeros(3, 4, 4), dataformats="CCW"),
        lambda w, T: w.add_images("i", T.zeros(2, 4, 4, 4)),
        lambda w, T: w.add_hparams([("lr", 0.1)], {}),
        lambda w, T: w.add_hparams({"lr": 0.1}, {}, hparam_domain_discrete={"lr": [1]}),
        lambda w, T: w.add_hparams({"lr": [0.1]}, {}),
        lambda w, T: w.add_histogram_raw("h", 0, 1, 2, 1, 1, [0.5, 1.0], [2]),
        lambda w, T: w.add_custom_scalars_marginchart(["a", "b"]),
        lambda w, T: w.add_embedding(T.zeros(3, 2), metadata=["a", "b"]),
        lambda w, T: w.add_embedding(T.zeros(3, 2, 1)),
        lambda w, T: w.add_text("t", 3),
        lambda w, T: w.add_video("v", T.zeros(2, 3, 4, 4)),
        lambda w, T: w.add_mesh("m", T.zeros(4, 3)),
    ]
    with SummaryWriter(str(tmp_path / "e")) as ew, TorchWriter(str(tmp_path / "t")) as tw:
        for k, case in enumerate(cases):
            with pytest.raises(Exception) as theirs:
                case(tw, torch)
            with pytest.raises(theirs.type):
                case(ew, ember)
