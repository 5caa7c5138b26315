"""ember.hub: torch.hub's API. Models published as a `hubconf.py` (in a local directory, or a GitHub
repository downloaded once into the hub cache) and checkpoints fetched from URLs into the cache.

The cache is torch's own (TORCH_HOME, else $XDG_CACHE_HOME/torch, else ~/.cache/torch; set_dir
overrides it), so checkpoints torch already downloaded are found without a network. Any URL urllib
opens works (https, http, file).
"""
import contextlib
import hashlib
import importlib.util
import os
import re
import shutil
import sys
import uuid
import warnings
import zipfile
from pathlib import Path
from urllib.error import HTTPError, URLError
from urllib.parse import urlparse
from urllib.request import Request, urlopen

__all__ = ["download_url_to_file", "get_dir", "help", "list", "load", "load_state_dict_from_url", "set_dir"]

HASH_REGEX = re.compile(r"-([a-f0-9]*)\.")  # a checkpoint's file name carries a prefix of its sha256
_TRUSTED_OWNERS = ("facebookresearch", "facebookincubator", "pytorch", "fairinternal")
_CHUNK = 128 * 1024
_hub_dir = None


def _torch_home():
    default = os.path.join(os.getenv("XDG_CACHE_HOME", "~/.cache"), "torch")
    return os.path.expanduser(os.getenv("TORCH_HOME", default))


def get_dir():
    """The hub cache: set_dir's directory, else $TORCH_HOME/hub."""
    if os.getenv("TORCH_HUB"):
        warnings.warn("TORCH_HUB is deprecated, please use env TORCH_HOME instead", stacklevel=2)
    return _hub_dir if _hub_dir is not None else os.path.join(_torch_home(), "hub")


def set_dir(d):
    """Use directory `d` as the hub cache from now on."""
    global _hub_dir
    _hub_dir = os.path.expanduser(os.fspath(d))


# ------------------------------------------------------------------ downloads
class _Progress:
    """Bytes so far / total on stderr, one line rewritten (torch shows tqdm's bar)."""

    def __init__(self, total, enabled):
        self.total, self.done, self.enabled, self.last = total, 0, enabled, -1

    def update(self, n):
        self.done += n
        if not self.enabled:
            return
        pct = int(100 * self.done / self.total) if self.total else None
        if pct != self.last or pct is None:
            self.last = pct
            shown = f"{pct:3d}% " if pct is not None else ""
            sys.stderr.write(f"\r{shown}{self.done / 1048576:.1f} MiB")
            sys.stderr.flush()

    def close(self):
        if self.enabled:
            sys.stderr.write("\n")


def download_url_to_file(url, dst, hash_prefix=None, progress=True):
    """Download `url` to the file `dst` (through a temporary file beside it, moved into place only when
    complete); with `hash_prefix`, the file's sha256 must start with it (RuntimeError otherwise)."""
    dst = os.path.expanduser(os.fspath(dst))
    tmp = f"{dst}.{uuid.uuid4().hex}.partial"
    f = open(tmp, "xb")  # noqa: SIM115 - closed in finally
    try:
        with urlopen(Request(url, headers={"User-Agent": "ember.hub"})) as response:
            length = response.info().get_all("Content-Length")
            bar = _Progress(int(length[0]) if length else None, progress)
            digest = hashlib.sha256() if hash_prefix is not None else None
            while True:
                chunk = response.read(_CHUNK)
                if not chunk:
                    break
                f.write(chunk)
                if digest is not None:
                    digest.update(chunk)
                bar.update(len(chunk))
            bar.close()
        f.close()
        if digest is not None and not digest.hexdigest().startswith(hash_prefix):
            raise RuntimeError(f'invalid hash value (expected "{hash_prefix}", got "{digest.hexdigest()}")')
        shutil.move(tmp, dst)
    finally:
        f.close()
        if os.path.exists(tmp):
            os.remove(tmp)


def _safe_extract(zf, target):
    """Extract every member of `zf` under `target`, refusing members that would land outside it."""
    root = Path(target).resolve()
    for member in zf.infolist():
        name = os.path.normpath(member.filename)
        if name.startswith(("/", "\\")) or (len(name) >= 2 and name[1] == ":" and name[0].isalpha()):
            raise ValueError(f"Archive entry has absolute path: {member.filename}")
        if ".." in re.split(r"[/\\]", name):
            raise ValueError(f"Archive entry contains directory traversal: {member.filename}")
        if not (root / name).resolve().is_relative_to(root):
            raise ValueError(f"Archive entry escapes target directory: {member.filename}")
        zf.extract(member, root)


def _is_legacy_zip(path):
    """A zip holding exactly one file: checkpoints published before torch 1.6's zip format."""
    if not zipfile.is_zipfile(path):
        return False
    with zipfile.ZipFile(path) as zf:
        members = zf.infolist()
    # a torch/ember checkpoint is itself a zip, of a folder: several members
    return len(members) == 1 and not members[0].is_dir()


def load_state_dict_from_url(url, model_dir=None, map_location=None, progress=True, check_hash=False, file_name=None,
                             weights_only=False):
    """The object saved at `url` (a state dict, usually), downloaded once into `model_dir`
    (default <hub dir>/checkpoints) and loaded with ember.load from there afterwards. With check_hash,
    the file name's "-<hex>." part must prefix the download's sha256."""
    from .serialization import load as _load
    if model_dir is None:
        model_dir = os.path.join(get_dir(), "checkpoints")
    os.makedirs(model_dir, exist_ok=True)
    filename = file_name if file_name is not None else os.path.basename(urlparse(url).path)
    cached = os.path.join(model_dir, filename)
    if not os.path.exists(cached):
        sys.stdout.write(f'Downloading: "{url}" to {cached}\n')
        match = HASH_REGEX.search(filename) if check_hash else None
        download_url_to_file(url, cached, match.group(1) if match else None, progress=progress)
    if _is_legacy_zip(cached):
        warnings.warn("Falling back to the old format < 1.6. This support will be deprecated in favor of default "
                      "zipfile format introduced in 1.6. Please redo ember.save() to save it in the new zipfile "
                      "format.", FutureWarning, stacklevel=2)
        with zipfile.ZipFile(cached) as zf:
            _safe_extract(zf, model_dir)
            cached = os.path.join(model_dir, zf.infolist()[0].filename)
    return _load(cached, map_location=map_location, weights_only=weights_only)


# ------------------------------------------------------------------ hubconf repositories
@contextlib.contextmanager
def _on_sys_path(path):
    sys.path.insert(0, path)
    try:
        yield
    finally:
        sys.path.remove(path)


def _import_hubconf(repo_dir):
    path = os.path.join(repo_dir, "hubconf.py")
    if not os.path.isfile(path):
        raise FileNotFoundError(f"No hubconf.py in {repo_dir}")
    spec = importlib.util.spec_from_file_location("hubconf", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _entry(module, model):
    if not isinstance(model, str):
        raise ValueError("Invalid input: model should be a string of function name")
    missing = [dep for dep in getattr(module, "dependencies", None) or [] if importlib.util.find_spec(dep) is None]
    if missing:
        raise RuntimeError(f"Missing dependencies: {', '.join(missing)}")
    fn = getattr(module, model, None) if model in dir(module) else None
    if fn is None or not callable(fn):
        raise RuntimeError(f"Cannot find callable {model} in hubconf")
    return fn


def _parse_repo(github):
    """'owner/name[:ref]' -> (owner, name, ref); without a ref, main if GitHub has it, else master (offline:
    whichever the cache holds)."""
    info, _, ref = github.partition(":")
    parts = info.split("/")
    if len(parts) != 2 or not all(parts):
        raise ValueError(f'Invalid GitHub repository "{github}": expected "repo_owner/repo_name[:ref]"')
    owner, name = parts
    if ref:
        return owner, name, ref
    try:
        with urlopen(f"https://github.com/{owner}/{name}/tree/main/"):
            return owner, name, "main"
    except HTTPError as e:
        if e.code == 404:
            return owner, name, "master"
        raise
    except URLError as e:
        for candidate in ("main", "master"):
            if os.path.exists(os.path.join(get_dir(), f"{owner}_{name}_{candidate}")):
                return owner, name, candidate
        raise RuntimeError("It looks like there is no internet connection and the repo could not be found in the "
                           f"cache ({get_dir()})") from e


def _check_trusted(owner, name, owner_name_ref, trust_repo):
    """torch's trust rules: an owner in torch's list, a repository in <hub dir>/trusted_list or already in
    the cache is trusted; trust_repo=False (always) or "check" (when untrusted) asks on stdin; True or None
    trust it. A repository trusted once is added to the list."""
    hub_dir = get_dir()
    path = os.path.join(hub_dir, "trusted_list")
    Path(path).touch()
    with open(path) as f:
        listed = {line.strip() for line in f}
    cached = set(next(os.walk(hub_dir))[1])
    owner_name = f"{owner}_{name}"
    trusted = owner_name in listed or owner_name_ref in cached or owner in _TRUSTED_OWNERS
    if trust_repo is False or (trust_repo == "check" and not trusted):
        answer = input(f"The repository {owner_name} does not belong to the list of trusted repositories and as such "
                       "cannot be downloaded. Do you trust this repository and wish to add it to the trusted list of "
                       "repositories (y/N)?")
        if answer.lower() in ("n", "no", ""):
            raise Exception("Untrusted repository.")  # noqa: TRY002 - torch's exact type
        if answer.lower() not in ("y", "yes"):
            raise ValueError(f"Unrecognized response {answer}.")
    if not trusted:
        with open(path, "a") as f:
            f.write(owner_name + "\n")


def _repo_dir(github, force_reload, trust_repo, verbose=True, skip_validation=False):
    """The directory of a GitHub repository in the hub cache, downloaded (as a zip archive) when absent
    or when force_reload."""
    hub_dir = get_dir()
    os.makedirs(hub_dir, exist_ok=True)
    owner, name, ref = _parse_repo(github)
    owner_name_ref = f"{owner}_{name}_{ref.replace('/', '_')}"
    repo_dir = os.path.join(hub_dir, owner_name_ref)
    _check_trusted(owner, name, owner_name_ref, trust_repo)
    if not force_reload and os.path.exists(repo_dir):
        if verbose:
            sys.stderr.write(f"Using cache found in {repo_dir}\n")
        return repo_dir
    archive = os.path.join(hub_dir, ref.replace("/", "_") + ".zip")
    if os.path.exists(archive):
        os.remove(archive)
    url = f"https://github.com/{owner}/{name}/zipball/{ref}"
    sys.stdout.write(f'Downloading: "{url}" to {archive}\n')
    download_url_to_file(url, archive, progress=False)
    try:
        with zipfile.ZipFile(archive) as zf:
            top = zf.infolist()[0].filename.split("/")[0]
            extracted = os.path.join(hub_dir, top)
            shutil.rmtree(extracted, ignore_errors=True)
            _safe_extract(zf, hub_dir)
    finally:
        os.remove(archive)
    shutil.rmtree(repo_dir, ignore_errors=True)
    shutil.move(extracted, repo_dir)
    return repo_dir


def list(github, force_reload=False, skip_validation=False, trust_repo="check", verbose=True):  # noqa: A001
    """The entrypoints (public callables) a GitHub repository's hubconf.py offers."""
    repo_dir = _repo_dir(github, force_reload, trust_repo, verbose, skip_validation)
    with _on_sys_path(repo_dir):
        module = _import_hubconf(repo_dir)
    return [n for n in dir(module) if callable(getattr(module, n)) and not n.startswith("_")]


def help(github, model, force_reload=False, skip_validation=False, trust_repo="check"):  # noqa: A001
    """The docstring of one entrypoint of a GitHub repository's hubconf.py."""
    repo_dir = _repo_dir(github, force_reload, trust_repo, True, skip_validation)
    with _on_sys_path(repo_dir):
        module = _import_hubconf(repo_dir)
    return _entry(module, model).__doc__


def load(repo_or_dir, model, *args, source="github", trust_repo="check", force_reload=False, verbose=True,
         skip_validation=False, **kwargs):
    """model(*args, **kwargs) from the hubconf.py of a GitHub repository ("owner/name[:ref]",
    source="github") or of a local directory (source="local")."""
    source = source.lower()
    if source not in ("github", "local"):
        raise ValueError(f'Unknown source: "{source}". Allowed values: "github" | "local".')
    if source == "github":
        repo_or_dir = _repo_dir(repo_or_dir, force_reload, trust_repo, verbose, skip_validation)
    with _on_sys_path(repo_or_dir):
        module = _import_hubconf(repo_or_dir)
        return _entry(module, model)(*args, **kwargs)

