"""ember.save / ember.load: PyTorch's zip checkpoint format (round trips both ways with torch when it
is installed), the restricted unpickler, corrupt-file handling (with a fuzz test), mmap and atomic save."""
import collections
import copy
import io
import os
import pickle
import random
import signal
import struct
import subprocess
import sys
import textwrap
import time
import zipfile

import numpy as np
import pytest

import ember
from ember import nn, serialization

DTYPES = [ember.float32, ember.float64, ember.float16, ember.bfloat16, ember.int64, ember.int32, ember.int16,
          ember.int8, ember.uint8, ember.bool]


def _sample(dtype, shape=(3, 4)):
    t = ember.arange(int(np.prod(shape))).reshape(*shape)
    return (t % 2 == 0) if dtype is ember.bool else t.to(dtype)


def _same(a, b):
    assert type(a) is type(b) or (isinstance(a, ember.Tensor) and isinstance(b, ember.Tensor)), (type(a), type(b))
    assert a.dtype == b.dtype and tuple(a.shape) == tuple(b.shape) and a.stride() == b.stride()
    assert a.tolist() == b.tolist()


def _nested():
    base = ember.arange(12.).reshape(3, 4)
    return {
        "tensors": {str(d): _sample(d) for d in DTYPES},
        "view": base, "transposed": base.t(), "row": base[1], "scalar": ember.tensor(2.5), "empty": ember.zeros(0, 3),
        "od": collections.OrderedDict([("b", 1), ("a", [1, 2.5, "s", None, True, (3, (4,))])]),
        "bytes": b"\x00\xff", "big": 2 ** 70, "neg": -5, "set": {1, 2}, "complex": 1 + 2j,
        "size": ember.Size([2, 3]), "dtype": ember.bfloat16, "device": ember.device("cpu"),
        "repeats": [ember.float32, ember.float32, ember.int8, ember.Size([1]), ember.device("cpu")] * 2,
        "param": nn.Parameter(ember.randn(2, 2)), "frozen": nn.Parameter(ember.ones(2), requires_grad=False),
    }


def _check_nested(orig, back):
    assert set(back) == set(orig)
    for k in orig["tensors"]:
        _same(orig["tensors"][k], back["tensors"][k])
    for k in ("view", "transposed", "row", "scalar", "empty"):
        _same(orig[k], back[k])
    assert back["od"] == orig["od"] and type(back["od"]) is collections.OrderedDict
    for k in ("bytes", "big", "neg", "set", "complex", "size", "dtype", "device", "repeats"):
        assert back[k] == orig[k] and type(back[k]) is type(orig[k]), k
    assert isinstance(back["param"], nn.Parameter) and back["param"].requires_grad
    assert isinstance(back["frozen"], nn.Parameter) and not back["frozen"].requires_grad
    # views keep sharing one storage
    back["view"][0, 1] = 100.0
    assert back["transposed"][1, 0].item() == 100.0 and not back["transposed"].is_contiguous()
    back["row"][0] = -1.0
    assert back["view"][1, 0].item() == -1.0


@pytest.mark.parametrize("protocol", [2, 4, 5])
def test_round_trip_nested(tmp_path, protocol):
    obj = _nested()
    path = tmp_path / "ckpt.pt"
    ember.save(obj, path, pickle_protocol=protocol)
    _check_nested(obj, ember.load(path))
    _check_nested(obj, ember.load(str(path), weights_only=False))
    _check_nested(obj, ember.load(path, mmap=True))


def test_file_objects_and_format(tmp_path):
    obj = {"w": ember.randn(5, 7), "i": ember.arange(3)}
    buf = io.BytesIO()
    ember.save(obj, buf)
    buf.seek(0)
    back = ember.load(buf)
    _same(obj["w"], back["w"])
    z = zipfile.ZipFile(io.BytesIO(buf.getvalue()))
    names = z.namelist()
    assert {"archive/data.pkl", "archive/version", "archive/byteorder", "archive/data/0",
            "archive/data/1"} <= set(names)
    assert z.testzip() is None  # CRCs are right
    raw = buf.getvalue()
    for info in z.infolist():  # every record's data starts on a 64-byte boundary
        nlen, elen = struct.unpack("<HH", raw[info.header_offset + 26:info.header_offset + 30])
        assert (info.header_offset + 30 + nlen + elen) % 64 == 0
    with open(tmp_path / "f.pt", "wb") as f:
        ember.save(obj, f)
    with open(tmp_path / "f.pt", "rb") as f:
        _same(obj["i"], ember.load(f)["i"])
    with open(tmp_path / "f.pt", "rb") as f:
        _same(obj["i"], ember.load(f, mmap=True)["i"])
    with pytest.raises(ValueError):
        ember.save(obj, tmp_path / "x.pt", pickle_protocol=1)


def test_zip64_records(tmp_path, monkeypatch):
    # force the zip64 fields that multi-GB checkpoints need, and check both readers accept them
    monkeypatch.setattr(serialization, "_ZIP64_LIMIT", 0)
    monkeypatch.setattr(serialization, "_ZIP64_COUNT", 0)
    obj = {"w": ember.randn(100), "b": ember.arange(4)}
    ember.save(obj, tmp_path / "z.pt")
    assert zipfile.ZipFile(tmp_path / "z.pt").testzip() is None
    _same(obj["w"], ember.load(tmp_path / "z.pt")["w"])
    _same(obj["b"], ember.load(tmp_path / "z.pt", mmap=True)["b"])
    try:
        import torch
    except ImportError:
        return
    assert torch.load(tmp_path / "z.pt", weights_only=True)["b"].tolist() == [0, 1, 2, 3]


def test_module_and_optimizer_state_dicts(tmp_path):
    ember.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 3), nn.BatchNorm1d(3), nn.Linear(3, 2))
    opt = ember.optim.Adam(model.parameters(), lr=1e-2)
    model(ember.randn(8, 4)).sum().backward()
    opt.step()
    ember.save({"model": model.state_dict(), "opt": opt.state_dict()}, tmp_path / "s.pt")
    back = ember.load(tmp_path / "s.pt")
    sd = back["model"]
    assert list(sd) == list(model.state_dict()) and hasattr(sd, "_metadata")
    model2 = nn.Sequential(nn.Linear(4, 3), nn.BatchNorm1d(3), nn.Linear(3, 2))
    model2.load_state_dict(sd)
    for (k, a), b in zip(model.state_dict().items(), model2.state_dict().values()):
        assert a.tolist() == b.tolist(), k
    opt2 = ember.optim.Adam(model2.parameters(), lr=1.0)
    opt2.load_state_dict(back["opt"])
    assert opt2.param_groups[0]["lr"] == 1e-2
    assert opt2.state_dict()["state"][0]["exp_avg"].tolist() == opt.state_dict()["state"][0]["exp_avg"].tolist()


def test_map_location(tmp_path):
    obj = {"w": ember.randn(3)}
    ember.save(obj, tmp_path / "m.pt")
    for loc in ("cpu", ember.device("cpu"), {"cpu": "cpu"}, lambda storage, loc: storage, lambda s, l: None):
        _same(obj["w"], ember.load(tmp_path / "m.pt", map_location=loc)["w"])
    with pytest.raises(RuntimeError):
        ember.load(tmp_path / "m.pt", map_location="cuda:0")


def test_plain_pickle_and_deepcopy():
    x = ember.randn(4, 3).t()
    x.requires_grad_()
    for y in (pickle.loads(pickle.dumps(x)), copy.deepcopy(x)):
        assert y.dtype == x.dtype and y.shape == x.shape and y.requires_grad
        assert y.detach().tolist() == x.detach().tolist()
    y = pickle.loads(pickle.dumps(x))
    assert y.stride() == x.stride()
    for d in DTYPES:
        t = _sample(d, (2, 3))[:, 1:]
        _same(t.contiguous(), pickle.loads(pickle.dumps(t)).contiguous())
        assert pickle.loads(pickle.dumps(t)).stride() == t.stride()
    p = nn.Parameter(ember.randn(2))
    q = pickle.loads(pickle.dumps(p))
    assert isinstance(q, nn.Parameter) and q.requires_grad and q.tolist() == p.tolist()
    assert pickle.loads(pickle.dumps(ember.zeros(0, 2))).shape == (0, 2)
    b = ember.ones(2)
    b.note = {"k": 1}
    assert pickle.loads(pickle.dumps(b)).note == {"k": 1}


def test_deepcopy_semantics():
    # as torch: a leaf stays a leaf (with its grad), views copied together keep sharing, non-leaves refuse
    x = ember.ones(3, requires_grad=True)
    (x * 2).sum().backward()
    y = copy.deepcopy(x)
    assert y.is_leaf and y.requires_grad and y.grad.tolist() == [2.0] * 3 and y.grad is not x.grad
    a = ember.arange(6.).reshape(2, 3)
    d = copy.deepcopy({"a": a, "t": a.t(), "row": a[1]})
    d["a"][1, 0] = 9.0
    assert d["t"][0, 1].item() == 9.0 and d["row"][0].item() == 9.0 and a[1, 0].item() == 3.0
    with pytest.raises(RuntimeError, match="graph leaves"):
        copy.deepcopy(x * 2)
    m = copy.deepcopy(nn.Linear(2, 3))
    assert isinstance(m.weight, nn.Parameter) and m.weight.requires_grad


def test_shared_storage_with_different_dtypes_is_rejected(tmp_path):
    a = ember.zeros(4)
    with pytest.raises(RuntimeError, match="different types"):
        ember.save([a, a.view(ember.int32)], tmp_path / "x.pt")
    assert not os.listdir(tmp_path)  # no temporary file left behind


# ---------------------------------------------------------------- safety
class _Evil:
    def __reduce__(self):
        return (os.system, ("touch PWNED",))


def _checkpoint_with_pickle(tmp_path, payload):
    path = tmp_path / "evil.pt"
    buf = io.BytesIO()
    ember.save({"w": ember.ones(2)}, buf)
    with zipfile.ZipFile(io.BytesIO(buf.getvalue())) as src, zipfile.ZipFile(path, "w") as dst:
        for info in src.infolist():
            dst.writestr(info.filename, payload if info.filename.endswith("data.pkl") else src.read(info))
    return path


def test_malicious_pickle_runs_nothing(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    payloads = [
        pickle.dumps(_Evil(), protocol=2),
        pickle.dumps(_Evil(), protocol=4),
        b"cos\nsystem\n(Vtouch PWNED\ntR.",  # GLOBAL/REDUCE by hand
        b"cbuiltins\neval\n(V__import__('os').system('touch PWNED')\ntR.",
        b"(cos\nsystem\nVtouch PWNED\no.",  # OBJ opcode
        b"\x80\x02cbuiltins\nbytearray\nJ\x00\x00\x00\x7f\x85R.",  # bytearray(2**31): absurd allocation
        b"\x80\x02r\xff\xff\xff\xff}.",  # LONG_BINPUT with a huge memo index
        b"\x80\x02ctorch\nTensor\nJ\x00\x00\x00\x7f\x85R.",  # torch.Tensor(2**31): absurd allocation
        b"\x80\x02c_codecs\nencode\nX\x01\x00\x00\x00xX\x04\x00\x00\x00zlib\x86R.",  # an arbitrary codec
    ]
    for payload in payloads:
        path = _checkpoint_with_pickle(tmp_path, payload)
        with pytest.raises(pickle.UnpicklingError, match="evil.pt"):
            ember.load(path)
        assert not (tmp_path / "PWNED").exists()


def test_safe_globals(tmp_path):
    path = tmp_path / "c.pt"
    ember.save({"f": _Point(1, 2)}, path)
    with pytest.raises(pickle.UnpicklingError, match="add_safe_globals"):
        ember.load(path)
    assert ember.load(path, weights_only=False)["f"] == _Point(1, 2)
    with serialization.safe_globals([_Point]):
        assert _Point in serialization.get_safe_globals()
        assert ember.load(path)["f"] == _Point(1, 2)
    assert _Point not in serialization.get_safe_globals()
    serialization.add_safe_globals([_Point])
    try:
        assert ember.load(path)["f"] == _Point(1, 2)
    finally:
        serialization.clear_safe_globals()
    assert serialization.get_safe_globals() == []


class _Point:
    def __init__(self, x, y):
        self.x, self.y = x, y

    def __eq__(self, other):
        return isinstance(other, _Point) and (self.x, self.y) == (other.x, other.y)


def test_storage_bounds_checked(tmp_path):
    good = _checkpoint_with_pickle(tmp_path, _rebuild_args(2, 0, (2,), (1,)))
    assert ember.load(good).tolist() == [1.0, 1.0]
    bad = [
        _rebuild_args(3, 0, (3,), (1,)),  # numel disagrees with the record's 8 bytes
        _rebuild_args(2, 1, (2,), (1,)),  # offset + extent past the storage
        _rebuild_args(2, 0, (2, 2), (1, 1)),  # extent past the storage
        _rebuild_args(2, 0, (3,), (1,)),
        _rebuild_args(2, -1, (1,), (1,)),
        _rebuild_args(2, 0, (1,), (-1,)),
        _rebuild_args(2, 0, (2 ** 31 - 1,) * 3, (0, 0, 0)),  # overflowing element count
    ]
    for body in bad:
        with pytest.raises(pickle.UnpicklingError, match="evil.pt"):
            ember.load(_checkpoint_with_pickle(tmp_path, body))


def _s(text):
    return b"X" + struct.pack("<I", len(text)) + text.encode()


def test_untyped_storage_form(tmp_path):
    # torch's _rebuild_tensor_v3 (untyped storage + dtype), used for dtypes without a storage class
    body = (b"\x80\x02ctorch._utils\n_rebuild_tensor_v3\n((" + _s("storage") + b"ctorch.storage\nUntypedStorage\n" +
            _s("0") + _s("cpu") + b"K\x08tQK\x01(K\x01t(K\x01t\x89ccollections\nOrderedDict\n)Rctorch\nfloat32\ntR.")
    assert ember.load(_checkpoint_with_pickle(tmp_path, body)).tolist() == [1.0]
    bad = body.replace(b"float32", b"float64").replace(b"K\x01(K\x01t", b"K\x01(K\x02t")
    with pytest.raises(pickle.UnpicklingError, match="out of bounds"):
        ember.load(_checkpoint_with_pickle(tmp_path, bad))


def _rebuild_args(numel, offset, size, stride, location="cpu"):
    ints = lambda xs: b"(" + b"".join(b"J" + struct.pack("<i", x) for x in xs) + b"t"
    return (b"\x80\x02ctorch._utils\n_rebuild_tensor_v2\n(" +
            b"(" + _s("storage") + b"ctorch\nFloatStorage\n" + _s("0") + _s(location) +
            b"J" + struct.pack("<i", numel) + b"tQ" +
            b"J" + struct.pack("<i", offset) + ints(size) + ints(stride) + b"\x89ccollections\nOrderedDict\n)RtR.")


def test_checkpoint_from_another_device(tmp_path):
    path = _checkpoint_with_pickle(tmp_path, _rebuild_args(2, 0, (2,), (1,), location="cuda:0"))
    with pytest.raises(RuntimeError, match="map_location"):
        ember.load(path)
    for loc in ("cpu", {"cuda:0": "cpu"}, lambda storage, loc: storage):
        assert ember.load(path, map_location=loc).tolist() == [1.0, 1.0]
    with pytest.raises(RuntimeError):
        ember.load(path, map_location={"cuda:0": "mps"})


def test_legacy_and_garbage_files(tmp_path):
    legacy = tmp_path / "legacy.pt"
    legacy.write_bytes(serialization._LEGACY_MAGIC + b"\x00" * 32)
    with pytest.raises(RuntimeError, match="legacy"):
        ember.load(legacy)
    junk = tmp_path / "junk.pt"
    junk.write_bytes(b"hello world" * 10)
    with pytest.raises(pickle.UnpicklingError, match="junk.pt"):
        ember.load(junk)
    empty = tmp_path / "empty.pt"
    empty.write_bytes(b"")
    with pytest.raises(pickle.UnpicklingError, match="empty.pt"):
        ember.load(empty)
    with pytest.raises(FileNotFoundError):
        ember.load(tmp_path / "missing.pt")
    buf = io.BytesIO()
    ember.save({"w": ember.ones(2)}, buf)
    with zipfile.ZipFile(io.BytesIO(buf.getvalue())) as src, zipfile.ZipFile(tmp_path / "big.pt", "w") as dst:
        for info in src.infolist():
            dst.writestr(info.filename, b"big" if info.filename.endswith("/byteorder") else src.read(info))
    with pytest.raises(RuntimeError, match="byte order"):
        ember.load(tmp_path / "big.pt")


class _Named(io.BytesIO):
    name = "fuzzed-checkpoint.pt"


def _expect_clean_failure(path):
    try:
        ember.load(path)
    except (RuntimeError, pickle.UnpicklingError, ValueError) as e:
        assert str(getattr(path, "name", path)) in str(e), e
        return False
    return True


def test_truncated_files(tmp_path):
    path = tmp_path / "t.pt"
    ember.save({"w": ember.randn(40), "m": {"b": ember.arange(5)}}, path)
    data = path.read_bytes()
    cut = tmp_path / "cut.pt"
    for n in list(range(0, len(data), 7)) + [len(data) - 1]:
        cut.write_bytes(data[:n])
        assert not _expect_clean_failure(cut), n


def _mutate(rng, data):
    data = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        kind, i = rng.randrange(5), rng.randrange(len(data))
        if kind == 0:
            data[i] ^= 1 << rng.randrange(8)
        elif kind == 1:
            data[i] = rng.choice([0, 0xFF, 0x7F, 0x80, rng.randrange(256)])
        elif kind == 2:
            j = rng.randrange(len(data))
            data[i:i + 4] = data[j:j + 4]
        elif kind == 3:
            j = rng.randrange(len(data))
            data[i:i] = data[j:j + rng.randint(1, 16)]
        else:
            del data[i:]
            if not data:
                break
    return bytes(data)


def _fuzz_sources():
    out = []
    for obj in [{"w": ember.randn(8, 4), "b": ember.zeros(4, dtype=ember.bfloat16), "od": collections.OrderedDict(a=1)},
                [nn.Parameter(ember.ones(3)), ember.arange(6).reshape(2, 3).t(), "x", 2.5, {1: (None, True)}]]:
        buf = io.BytesIO()
        ember.save(obj, buf)
        out.append(buf.getvalue())
    return out


def _fuzz(rng, make, seconds, max_runs=3000):
    start, runs, ok = time.time(), 0, 0
    while runs < max_runs and time.time() - start < seconds:
        ok += _expect_clean_failure(_Named(make(rng)))
        runs += 1
    return runs, ok


def test_fuzz_mutated_checkpoints():
    """Bit flips, overwrites, splices and truncations of whole checkpoints: each load either succeeds or
    raises a clean error naming the file (no crash, hang or huge allocation)."""
    sources = _fuzz_sources()
    runs, ok = _fuzz(random.Random(1234), lambda rng: _mutate(rng, rng.choice(sources)), 3.0)
    assert runs >= 1000 and ok < runs  # about 3000 on an idle machine


def test_fuzz_mutated_pickles():
    """The same on data.pkl alone, repackaged with a valid CRC so that the unpickler sees every mutation."""
    records = []
    for src in _fuzz_sources():
        with zipfile.ZipFile(io.BytesIO(src)) as z:
            records.append({i.filename: z.read(i) for i in z.infolist()})

    def make(rng):
        recs = rng.choice(records)
        out = io.BytesIO()
        with zipfile.ZipFile(out, "w") as z:
            for name, data in recs.items():
                z.writestr(name, _mutate(rng, data) if name.endswith("data.pkl") else data)
        return out.getvalue()

    runs, ok = _fuzz(random.Random(99), make, 3.0)
    assert runs >= 1000 and ok < runs


def test_mmap_maps_instead_of_reading(tmp_path):
    path = tmp_path / "big.pt"
    w = ember.arange(4 * 1024 * 1024, dtype=ember.float32)  # 16 MiB
    ember.save({"w": w}, path)
    t0 = time.perf_counter()
    mapped = ember.load(path, mmap=True)["w"]
    t_mmap = time.perf_counter() - t0
    assert mapped[123456].item() == 123456.0
    # the storage is the file's pages: an in-place write to the file (not through the tensor) shows
    z = zipfile.ZipFile(path)
    info = z.getinfo("big/data/0")
    with open(path, "r+b") as f:
        f.seek(info.header_offset + 26)
        nlen, elen = struct.unpack("<HH", f.read(4))
        f.seek(info.header_offset + 30 + nlen + elen)
        f.write(np.float32(-7.0).tobytes())
    if sys.platform.startswith("linux"):
        assert mapped[0].item() == -7.0
    mapped[1] = 5.0  # private mapping: writable, the file is unchanged
    assert ember.load(path, mmap=True)["w"][1].item() == 1.0
    with pytest.raises(RuntimeError, match="checksum"):  # a full read checks the CRC, which the edit broke
        ember.load(path)
    assert t_mmap < 1.0


# ---------------------------------------------------------------- atomic save
def test_failed_save_keeps_previous_checkpoint(tmp_path, monkeypatch):
    path = tmp_path / "a.pt"
    ember.save({"v": ember.ones(3)}, path)
    original = serialization._ZipWriter.write_record

    def failing(self, name, data):
        if name.startswith("data/"):
            raise OSError("disk full")
        return original(self, name, data)

    monkeypatch.setattr(serialization._ZipWriter, "write_record", failing)
    with pytest.raises(OSError, match="disk full"):
        ember.save({"v": ember.zeros(3)}, path)
    monkeypatch.undo()
    assert ember.load(path)["v"].tolist() == [1.0, 1.0, 1.0]
    assert os.listdir(tmp_path) == ["a.pt"]


def test_save_paths(tmp_path):
    path = tmp_path / "p.pt"
    ember.save(ember.ones(1), path)
    os.chmod(path, 0o600)
    ember.save(ember.zeros(1), str(path))
    assert os.stat(path).st_mode & 0o777 == 0o600  # overwriting keeps the permissions
    os.symlink(path, tmp_path / "link.pt")
    ember.save(ember.full((1,), 4.0), tmp_path / "link.pt")
    assert os.path.islink(tmp_path / "link.pt") and ember.load(path).tolist() == [4.0]
    with pytest.raises(RuntimeError, match="Parent directory"):
        ember.save(ember.ones(1), tmp_path / "missing" / "x.pt")
    assert sorted(os.listdir(tmp_path)) == ["link.pt", "p.pt"]


def test_killed_save_keeps_previous_checkpoint(tmp_path):
    path = tmp_path / "k.pt"
    ember.save({"v": ember.full((4,), 3.0)}, path)
    child = textwrap.dedent(f"""
        import sys, time
        sys.path.insert(0, {os.path.join(os.path.dirname(ember.__file__), os.pardir)!r})
        import ember
        from ember import serialization
        orig = serialization._ZipWriter.write_record
        def slow(self, name, data):
            orig(self, name, data)
            self.f.flush()
            if name.startswith("data/"):
                print("writing", flush=True)
                time.sleep(60)
        serialization._ZipWriter.write_record = slow
        ember.save({{"v": ember.zeros(1 << 20)}}, {str(path)!r})
    """)
    proc = subprocess.Popen([sys.executable, "-c", child], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "writing"
        assert len(os.listdir(tmp_path)) == 2  # the temporary file is being written next to the target
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert ember.load(path)["v"].tolist() == [3.0] * 4


# ---------------------------------------------------------------- torch interop
def _torch():
    return pytest.importorskip("torch")


def _to_torch(torch, t):
    if t.dtype is ember.bfloat16:
        return torch.from_numpy(t.view(ember.int16).numpy().copy()).view(torch.bfloat16)
    return torch.from_numpy(t.contiguous().numpy().copy())


def test_ember_file_loads_in_torch(tmp_path):
    torch = _torch()
    obj = _nested()
    path = tmp_path / "e.pt"
    ember.save(obj, path)
    back = torch.load(path, weights_only=True)
    for k, t in obj["tensors"].items():
        b = back["tensors"][k]
        assert str(b.dtype).split(".")[1] == str(t.dtype).split(".")[1]
        assert torch.equal(b, _to_torch(torch, t))
    assert back["transposed"].stride() == obj["transposed"].stride()
    assert back["transposed"].untyped_storage().data_ptr() == back["view"].untyped_storage().data_ptr()
    assert back["row"].storage_offset() == 4
    assert isinstance(back["param"], torch.nn.Parameter) and back["param"].requires_grad
    assert back["size"] == torch.Size([2, 3]) and back["dtype"] is torch.bfloat16
    assert back["od"] == obj["od"] and back["set"] == {1, 2} and back["bytes"] == b"\x00\xff"
    assert torch.equal(torch.load(path, weights_only=True, mmap=True)["view"], _to_torch(torch, obj["view"]))
    # protocol 4 files need torch's full unpickler
    ember.save(obj, path, pickle_protocol=4)
    assert torch.equal(torch.load(path, weights_only=False)["view"], _to_torch(torch, obj["view"]))


def test_torch_file_loads_in_ember(tmp_path):
    torch = _torch()
    torch.manual_seed(0)
    base = torch.arange(12.).reshape(3, 4)
    tdt = {d: getattr(torch, str(d).split(".")[1]) for d in DTYPES}
    obj = {
        "tensors": {str(d): (torch.arange(12).reshape(3, 4) % 2 == 0) if d is ember.bool
                    else torch.arange(12).reshape(3, 4).to(tdt[d]) for d in DTYPES},
        "view": base, "transposed": base.t(), "row": base[1], "expand": torch.ones(3, 1).expand(3, 4),
        "param": torch.nn.Parameter(torch.randn(2)), "od": collections.OrderedDict(a=1), "size": torch.Size([1, 2]),
        "dtype": torch.float16,
    }
    path = tmp_path / "t.pt"
    torch.save(obj, path)
    for kw in ({}, {"mmap": True}, {"weights_only": False}):
        back = ember.load(path, **kw)
        for d in DTYPES:
            _same(_sample(d), back["tensors"][str(d)])
        assert back["transposed"].stride() == (1, 4) and back["row"].storage_offset() == 4
        assert back["expand"].stride() == (1, 0) and back["expand"].tolist() == [[1.0] * 4] * 3
        back["view"][0, 1] = 50.0
        assert back["transposed"][1, 0].item() == 50.0
        assert isinstance(back["param"], nn.Parameter) and back["param"].tolist() == obj["param"].tolist()
        assert back["size"] == ember.Size([1, 2]) and back["dtype"] is ember.float16
    buf = io.BytesIO()
    torch.save({"x": torch.ones(2)}, buf)
    buf.seek(0)
    assert ember.load(buf)["x"].tolist() == [1.0, 1.0]
    for dt in (torch.complex32, torch.uint16):  # dtypes Ember lacks: a clear error either way
        torch.save({"x": torch.ones(2, dtype=dt)}, tmp_path / "c.pt")
        for wo in (True, False):
            with pytest.raises(pickle.UnpicklingError, match="dtype Ember does not have"):
                ember.load(tmp_path / "c.pt", weights_only=wo)
    torch.save({"x": torch.ones(2)}, tmp_path / "legacy.pt", _use_new_zipfile_serialization=False)
    with pytest.raises(RuntimeError, match="legacy"):
        ember.load(tmp_path / "legacy.pt")


def test_state_dicts_with_torch(tmp_path):
    torch = _torch()
    torch.manual_seed(0)
    tmodel = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.BatchNorm1d(3))
    topt = torch.optim.SGD(tmodel.parameters(), lr=0.1, momentum=0.9)
    tmodel(torch.randn(5, 4)).sum().backward()
    topt.step()
    torch.save({"model": tmodel.state_dict(), "opt": topt.state_dict()}, tmp_path / "t.pt")
    back = ember.load(tmp_path / "t.pt")
    emodel = nn.Sequential(nn.Linear(4, 3), nn.BatchNorm1d(3))
    emodel.load_state_dict(back["model"])
    eopt = ember.optim.SGD(emodel.parameters(), lr=0.5, momentum=0.9)
    eopt.load_state_dict(back["opt"])
    for k, v in tmodel.state_dict().items():
        assert emodel.state_dict()[k].tolist() == v.tolist(), k
    assert eopt.param_groups[0]["lr"] == 0.1
    # and back to torch
    ember.save({"model": emodel.state_dict(), "opt": eopt.state_dict()}, tmp_path / "e.pt")
    again = torch.load(tmp_path / "e.pt", weights_only=True)
    tmodel2 = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.BatchNorm1d(3))
    tmodel2.load_state_dict(again["model"])
    topt2 = torch.optim.SGD(tmodel2.parameters(), lr=0.5, momentum=0.9)
    topt2.load_state_dict(again["opt"])
    for k, v in tmodel.state_dict().items():
        assert torch.equal(tmodel2.state_dict()[k], v), k
    assert torch.equal(topt2.state_dict()["state"][0]["momentum_buffer"],
                       topt.state_dict()["state"][0]["momentum_buffer"])
