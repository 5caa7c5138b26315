"""ember.hub (torch.hub) without a network: hubconf.py entrypoints from a local directory and from a
repository already in the hub cache, checkpoints from file:// URLs with hash checks, the trust list."""
import hashlib
import os
import zipfile

import pytest

import ember
import ember.hub as hub

HUBCONF = '''
"""a test hub"""
dependencies = ["os"]


def tiny(out_features=2, scale=1.0):
    """A Linear(3, out_features) with weights set to `scale`."""
    import ember
    m = ember.nn.Linear(3, out_features)
    with ember.no_grad():
        m.weight.fill_(scale)
    return m


def _private():
    pass
'''


@pytest.fixture()
def hub_dir(tmp_path):
    old = hub._hub_dir
    hub.set_dir(tmp_path / "hub")
    os.makedirs(hub.get_dir())
    yield tmp_path / "hub"
    hub._hub_dir = old


def _write(d, text=HUBCONF):
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "hubconf.py"), "w") as f:
        f.write(text)


def test_dirs_follow_torch_home(monkeypatch, tmp_path):
    old = hub._hub_dir
    hub._hub_dir = None
    try:
        monkeypatch.setenv("TORCH_HOME", str(tmp_path / "th"))
        assert hub.get_dir() == str(tmp_path / "th" / "hub")
        monkeypatch.delenv("TORCH_HOME")
        monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
        assert hub.get_dir() == str(tmp_path / "xdg" / "torch" / "hub")
    finally:
        hub._hub_dir = old


def test_local_hubconf(tmp_path, hub_dir):
    repo = str(tmp_path / "repo")
    _write(repo)
    m = ember.hub.load(repo, "tiny", 4, source="local", scale=0.5)
    assert m.weight.shape == (4, 3) and (m.weight == 0.5).all()
    with pytest.raises(RuntimeError, match="Cannot find callable nope in hubconf"):
        hub.load(repo, "nope", source="local")
    with pytest.raises(ValueError, match="Unknown source"):
        hub.load(repo, "tiny", source="gitlab")
    _write(repo, HUBCONF.replace('["os"]', '["os", "no_such_package_xyz"]'))
    with pytest.raises(RuntimeError, match="Missing dependencies: no_such_package_xyz"):
        hub.load(repo, "tiny", source="local")


def test_cached_github_repository(hub_dir, monkeypatch, capsys):
    _write(str(hub_dir / "pytorch_vision_main"))
    assert hub.list("pytorch/vision:main") == ["tiny"]
    assert "Linear(3, out_features)" in hub.help("pytorch/vision:main", "tiny")
    m = hub.load("pytorch/vision:main", "tiny", out_features=1, verbose=False)
    assert m.weight.shape == (1, 3)
    assert "Using cache found in" in capsys.readouterr().err
    # an owner outside torch's trusted list: "check" asks, and "no" refuses
    _write(str(hub_dir / "someone_models_v1"))
    os.remove(hub_dir / "trusted_list")
    monkeypatch.setattr("builtins.input", lambda prompt: "n")
    with pytest.raises(Exception, match="Untrusted repository"):
        hub.load("someone/models:v1", "tiny", trust_repo=False)
    monkeypatch.setattr("builtins.input", lambda prompt: "y")
    assert hub.load("someone/models:v1", "tiny", trust_repo=False, verbose=False).weight.shape == (2, 3)

    def no_prompt(prompt):
        raise AssertionError("a repository already in the cache counts as trusted: no prompt")
    monkeypatch.setattr("builtins.input", no_prompt)
    assert hub.load("someone/models:v1", "tiny", trust_repo="check", verbose=False).weight.shape == (2, 3)
    with pytest.raises(ValueError, match="Invalid GitHub repository"):
        hub.load("not-a-repo", "tiny")


def test_checkpoints_from_urls(tmp_path, hub_dir, capsys):
    state = {"w": ember.arange(6.0).reshape(2, 3), "step": 7}
    src = tmp_path / "weights.pt"
    ember.save(state, src)
    digest = hashlib.sha256(src.read_bytes()).hexdigest()
    named = tmp_path / f"resnet-{digest[:8]}.pth"
    named.write_bytes(src.read_bytes())
    got = hub.load_state_dict_from_url(named.as_uri(), check_hash=True, progress=False)
    assert got["step"] == 7 and ember.equal(got["w"], state["w"])
    assert (hub_dir / "checkpoints" / named.name).exists()
    assert "Downloading" in capsys.readouterr().out
    named.unlink()  # cached: no download the second time
    assert hub.load_state_dict_from_url(named.as_uri(), progress=False)["step"] == 7
    # a wrong hash prefix: RuntimeError, nothing left in the cache
    bad = tmp_path / "model-deadbeef.pth"
    bad.write_bytes(src.read_bytes())
    with pytest.raises(RuntimeError, match="invalid hash value"):
        hub.load_state_dict_from_url(bad.as_uri(), check_hash=True, progress=False)
    assert sorted(os.listdir(hub_dir / "checkpoints")) == [named.name]
    # file_name and model_dir
    got = hub.load_state_dict_from_url(src.as_uri(), model_dir=str(tmp_path / "md"), file_name="x.pt", progress=False)
    assert got["step"] == 7 and (tmp_path / "md" / "x.pt").exists()
    # the pre-1.6 layout: a zip holding one checkpoint file
    legacy = tmp_path / "old.zip"
    with zipfile.ZipFile(legacy, "w") as zf:
        zf.write(src, "old_weights.pt")
    with pytest.warns(FutureWarning):
        got = hub.load_state_dict_from_url(legacy.as_uri(), progress=False)
    assert got["step"] == 7


def test_download_and_unsafe_archives(tmp_path):
    src = tmp_path / "a.bin"
    src.write_bytes(b"x" * 300_000)
    dst = tmp_path / "b.bin"
    hub.download_url_to_file(src.as_uri(), str(dst), hash_prefix=hashlib.sha256(src.read_bytes()).hexdigest()[:6],
                             progress=True)
    assert dst.read_bytes() == src.read_bytes()
    evil = tmp_path / "evil.zip"
    with zipfile.ZipFile(evil, "w") as zf:
        zf.writestr("../outside.txt", "no")
    with zipfile.ZipFile(evil) as zf, pytest.raises(ValueError, match="traversal"):
        hub._safe_extract(zf, tmp_path / "x")
    assert not (tmp_path / "outside.txt").exists()
