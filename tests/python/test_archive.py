"""ember.serialize: archives shared with the C++ API (torch::save / serialize::OutputArchive).

The interop test compiles tests/libtorch/serialize_roundtrip.cpp against the in-tree build
(build/libember.so), runs it on a folder holding an archive written here, and reads back what it
wrote; it is skipped when the build or a compiler is missing."""
import os
import shutil
import subprocess
from pathlib import Path

import pytest

import ember
from ember.serialize import load_archive, save_archive

ROOT = Path(__file__).resolve().parents[2]
BUILD = ROOT / "build"


def test_python_round_trip(tmp_path):
    entries = {"a.w": ember.arange(6.0).reshape(2, 3), "a.n": 3, "lr": 1 / 3, "on": True, "name": "x: y",
               "big": ember.ones(2, dtype=ember.int64)}
    save_archive(entries, tmp_path / "a.pt")
    back = load_archive(tmp_path / "a.pt")
    assert list(back) == sorted(entries)
    for k, v in entries.items():
        if isinstance(v, ember.Tensor):
            assert back[k].dtype == v.dtype and ember.equal(back[k], v)
        else:
            assert type(back[k]) is type(v) and back[k] == v


def test_plain_safetensors_loads_as_archive(tmp_path):
    ember.safetensors.save_file({"t": ember.zeros(2)}, tmp_path / "p.safetensors", {"note": "untagged"})
    assert list(load_archive(tmp_path / "p.safetensors")) == ["t"]


def test_bad_input(tmp_path):
    with pytest.raises(TypeError, match="must be a Tensor"):
        save_archive({"x": [1, 2]}, tmp_path / "x.pt")
    with pytest.raises(ValueError, match="invalid archive key"):
        save_archive({"__format__": 1}, tmp_path / "x.pt")
    save_archive({"t": ember.ones(4), "v": 2.5}, tmp_path / "good.pt")
    data = (tmp_path / "good.pt").read_bytes()
    (tmp_path / "cut.pt").write_bytes(data[: len(data) - 3])
    with pytest.raises(RuntimeError, match="not a readable archive"):
        load_archive(tmp_path / "cut.pt")
    (tmp_path / "tag.pt").write_bytes(data.replace(b'"f:2.5"', b'"q:2.5"'))
    with pytest.raises(RuntimeError, match="not a tagged scalar"):
        load_archive(tmp_path / "tag.pt")
    ember.safetensors.save_file({"t": ember.ones(1)}, tmp_path / "other.pt", {"__format__": "something"})
    with pytest.raises(RuntimeError, match="unknown archive format"):
        load_archive(tmp_path / "other.pt")


@pytest.fixture(scope="module")
def roundtrip_program(tmp_path_factory):
    lib = BUILD / "libember.so"
    cxx = shutil.which(os.environ.get("CXX", "g++"))
    if not lib.exists() or not (BUILD / "generated").exists() or cxx is None:
        pytest.skip("needs the in-tree build (build/libember.so) and a C++ compiler")
    exe = tmp_path_factory.mktemp("prog") / "serialize_roundtrip"
    cmd = [cxx, "-std=gnu++17", "-O1", f"-I{ROOT / 'csrc'}", f"-I{BUILD / 'generated'}",
           str(ROOT / "tests/libtorch/serialize_roundtrip.cpp"), "-o", str(exe), f"-L{BUILD}", "-lember",
           f"-Wl,-rpath,{BUILD}"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-4000:]
    return exe


def test_cpp_and_python_read_each_other(roundtrip_program, tmp_path):
    save_archive({"w": ember.arange(12, dtype=ember.float64).reshape(3, 4), "sub.v": ember.tensor([7, 8, 9]),
                  "momentum": 0.9, "steps": 42, "flag": True, "label": "from python"}, tmp_path / "py_written.pt")
    r = subprocess.run([str(roundtrip_program), str(tmp_path)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "read py_written.pt" in r.stdout  # the C++ side checked the Python-written values

    got = load_archive(tmp_path / "cpp_written.pt")
    assert set(got) == {"w", "nested.b", "nested.count", "lr", "name"}
    assert ember.equal(got["w"], ember.arange(6, dtype=ember.float32).reshape(2, 3))
    assert ember.equal(got["nested.b"], ember.tensor([1.0, 2.0]))
    assert got["nested.count"] == 3 and type(got["nested.count"]) is int
    assert got["lr"] == 0.25 and got["name"] == "from c++"

    # a module saved by torch::save loads into the same Python module through load_state_dict
    state = load_archive(tmp_path / "net.pt")
    assert set(state) == {"fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias", "scale"}
    model = ember.nn.Module()
    model.fc1, model.fc2 = ember.nn.Linear(4, 8), ember.nn.Linear(8, 2)
    model.register_buffer("scale", ember.zeros(2))
    model.load_state_dict(state)
    assert ember.equal(model.scale, ember.full((2,), 0.5))

    # the optimizer archive: its kind, options and Adam's per-parameter state
    opt = load_archive(tmp_path / "adam.pt")
    assert opt["optimizer"] == "Adam" and opt["param_groups.size"] == 1 and opt["param_groups.0.params"] == 4
    assert opt["param_groups.0.lr"] == 0.01 and opt["param_groups.0.betas.0"] == 0.8
    assert opt["state.0.exp_avg"].shape == (8, 4) and opt["state.3.exp_avg_sq"].shape == (2,)
    assert opt["state.0.step"].item() == 3
