"""Process groups and collectives with torch.distributed's API (init_process_group, all_reduce, ...).

The byte moving is C++ (ember/distributed: Gloo groups, stores); this file keeps the bookkeeping
torch keeps in Python: the default group, group ranks vs global ranks, rendezvous URLs, argument
checks, object collectives.
"""
import contextlib
import datetime
import enum
import functools
import inspect
import io
import os
import socket
import sys
import threading
import urllib.parse
import warnings
from typing import NewType

from .. import _C
from .._tensor import Tensor as _Tensor

_D = _C._distributed
_new_tensor, _zeros, _int64, _uint8 = _C._ops.tensor, _C._ops.zeros, _C.int64, _C.uint8

Store, TCPStore, FileStore, HashStore, PrefixStore = _D.Store, _D.TCPStore, _D.FileStore, _D.HashStore, _D.PrefixStore
ProcessGroup, Work, ReduceOp, GradBucket = _D.ProcessGroup, _D.Work, _D.ReduceOp, _D.GradBucket
DistError, DistStoreError, DistNetworkError, DistBackendError = (
    _D.DistError, _D.DistStoreError, _D.DistNetworkError, _D.DistBackendError)

from .constants import default_pg_timeout  # noqa: E402
from ._process_group_gloo import (  # noqa: E402,F401
    AllgatherOptions, AllreduceCoalescedOptions, AllreduceOptions, AllToAllOptions, BarrierOptions, BroadcastOptions,
    GatherOptions, ProcessGroupGloo, ReduceOptions, ReduceScatterOptions, ScatterOptions,
    _start_allgather_coalesced)
from ._store_queue import QueueEmptyError  # noqa: E402,F401

GroupName = NewType("GroupName", str)
GroupName.__doc__ = "A process group's name (a str; typing.NewType as in torch)."


class BuiltinCommHookType(enum.Enum):
    """DDP's built-in communication hooks (DistributedDataParallel._register_builtin_comm_hook)."""
    ALLREDUCE = 0
    FP16_COMPRESS = 1


class Backend(str):
    """A backend name, normalized to lower case ("gloo", "nccl", ...)."""
    UNDEFINED, GLOO, NCCL, UCC, MPI = "undefined", "gloo", "nccl", "ucc", "mpi"
    backend_list = [UNDEFINED, GLOO, NCCL, UCC, MPI]
    # the backend a device type gets by default, and the device types each backend moves. Ember's Gloo
    # moves CPU tensors only (torch's also stages CUDA tensors through the host).
    default_device_backend_map = {"cpu": GLOO, "cuda": NCCL}
    backend_capability = {GLOO: ["cpu"], NCCL: ["cuda"], UCC: ["cpu", "cuda"], MPI: ["cpu", "cuda"]}

    def __new__(cls, name):
        if not isinstance(name, str):
            raise ValueError(f"Backend constructor parameter must be string-ish, but got {type(name)}")
        value = getattr(Backend, name.upper(), Backend.UNDEFINED)
        if value == Backend.UNDEFINED:
            value = name.lower()
        return super().__new__(cls, value)


class BackendConfig:
    """Which backend a process group uses for each device type; str() gives "cpu:gloo,cuda:nccl"."""

    def __init__(self, backend):
        self.device_backend_map = {}
        backend = str(backend)
        if backend == Backend.UNDEFINED:
            device_type = "cuda" if _C._cuda_is_available() else "cpu"  # the accelerator, else the CPU
            self.device_backend_map[device_type] = Backend(Backend.default_device_backend_map[device_type])
        elif backend.lower() in Backend.backend_list:
            self.device_backend_map = dict.fromkeys(Backend.backend_capability[backend.lower()], Backend(backend))
        elif ":" in backend:
            usage = (f"The custom backend string argument is invalid: {backend}. Custom backend string is an "
                     "experimental feature where the backend string must be in the format: "
                     '"<device_type1>:<backend1>,<device_type2>:<backend2>...". e.g. \'cpu:gloo,cuda:nccl\'')
            for pair in backend.lower().split(","):
                parts = pair.split(":")
                if len(parts) != 2:
                    raise ValueError(f"Invalid device:backend pairing: {pair}. {usage}")
                device, name = parts
                if device in self.device_backend_map:
                    raise ValueError(f"Duplicate device type {device} in backend string: {name}. {usage}")
                self.device_backend_map[device] = Backend(name)
        else:
            warnings.warn(f"Device capability of {backend} unknown, assuming `cpu` and `cuda`. You can specify it "
                          "in `device:backend` format in `init_process_group` call.", stacklevel=2)
            self.device_backend_map = dict.fromkeys(("cpu", "cuda", "xpu"), Backend(backend))

    def __repr__(self):
        return ",".join(f"{device}:{backend}" for device, backend in self.device_backend_map.items())

    def get_device_backend_map(self):
        """{device type: backend name}."""
        return self.device_backend_map


class GroupMember:
    """Markers for process-group membership (WORLD and NON_GROUP_MEMBER)."""
    WORLD = None  # the default group once initialized
    NON_GROUP_MEMBER = -100


class group:
    """Namespace holding the default group, group.WORLD."""
    WORLD = None


class _World:
    def __init__(self):
        self.default_pg = None
        self.store = None
        self.init_method = None
        self.group_ranks = {}  # pg -> list of global ranks (index = group rank)
        self.group_backend = {}
        self.group_config = {}  # pg -> str(BackendConfig): what get_backend_config reports
        self.group_tag = {}  # pg -> the prefix of its keys in the store (the same on every member)
        self.derived = {}  # pg -> how many groups split_group / shrink_group made from it (names their prefixes)
        self.group_count = 0


_world = _World()


def _register(pg, ranks, backend, tag):
    _world.group_ranks[pg] = list(ranks)
    _world.group_backend[pg] = backend
    _world.group_config[pg] = str(BackendConfig(backend))
    _world.group_tag[pg] = tag


def _unregister(pg):
    for table in (_world.group_ranks, _world.group_backend, _world.group_config, _world.group_tag, _world.derived):
        table.pop(pg, None)


# ------------------------------------------------------------------ queries
def is_available():
    """Whether the distributed package is usable: True."""
    return True


def is_gloo_available():
    """Whether the gloo backend is built in."""
    return bool(_D.gloo_available())


def is_nccl_available():
    """Whether the NCCL backend is built in (CUDA tensors; a GPU may still be absent)."""
    return bool(_D.nccl_available())


def is_mpi_available():
    """Whether the MPI backend is built in (no)."""
    return False


def is_ucc_available():
    """Whether the UCC backend is built in (no)."""
    return False


def is_xccl_available():
    """Whether the XCCL backend is built in (no)."""
    return False


def is_backend_available(backend):
    """Whether a named backend is available in this build."""
    name = str(backend).lower()
    return (name == Backend.GLOO and is_gloo_available()) or (name == Backend.NCCL and is_nccl_available())


def get_default_backend_for_device(device):
    """The backend used by default for a device type."""
    kind = str(getattr(device, "type", device)).split(":")[0]
    backends = {"cpu": "gloo", "cuda": "nccl"}
    if kind not in backends:
        raise ValueError(f"Default backend not registered for device : {kind}")
    return backends[kind]


def supports_complex(reduceOp):
    """Whether the op is defined on complex numbers (ordering and bitwise ops are not)."""
    return reduceOp not in (ReduceOp.MAX, ReduceOp.MIN, ReduceOp.PRODUCT, ReduceOp.BAND, ReduceOp.BOR, ReduceOp.BXOR)


def get_pg_count():
    """Process groups created since init_process_group (the default one included)."""
    return 0 if _world.default_pg is None else _world.group_count + 1


def is_torchelastic_launched():
    """Whether this process was started by torchrun / elastic launch."""
    return os.getenv("TORCHELASTIC_RUN_ID") is not None


def is_initialized():
    """Whether the default process group has been initialized."""
    return _world.default_pg is not None


def _get_default_group():
    if _world.default_pg is None:
        raise ValueError("Default process group has not been initialized, please make sure to call init_process_group.")
    return _world.default_pg


def _group(group):
    return _get_default_group() if group is None else group


def _non_member(group):
    return group is GroupMember.NON_GROUP_MEMBER or (isinstance(group, int) and group == GroupMember.NON_GROUP_MEMBER)


def get_rank(group=None):
    """This process's rank in a group."""
    if _non_member(group):
        return -1
    return _group(group).rank()


def get_world_size(group=None):
    """Number of processes in a group."""
    if _non_member(group):
        return -1
    return _group(group).size()


def get_backend(group=None):
    """Name of a process group's backend."""
    if _non_member(group):
        raise ValueError("Invalid process group specified")
    return _world.group_backend[_group(group)]


def get_backend_config(group=None):
    """The backend of each device type a group serves, as a lower-case "device:backend,..." string."""
    if _non_member(group):
        raise ValueError("Invalid process group specified")
    return _world.group_config[_group(group)]


def get_process_group_ranks(group):
    """Global ranks of a group's members."""
    return list(_world.group_ranks[_group(group)])


def get_global_rank(group, group_rank):
    """Global rank of a group rank."""
    g = _group(group)
    ranks = _world.group_ranks[g]
    if not 0 <= group_rank < len(ranks):
        raise ValueError(f"Group rank {group_rank} is not part of group {g}")
    return ranks[group_rank]


def get_group_rank(group, global_rank):
    """Group rank of a global rank."""
    g = _group(group)
    try:
        return _world.group_ranks[g].index(global_rank)
    except ValueError:
        raise ValueError(f"Global rank {global_rank} is not part of group {g}") from None


def get_node_local_rank(fallback_rank=None):
    """This process's rank on its node (from LOCAL_RANK)."""
    if "LOCAL_RANK" in os.environ:
        return int(os.environ["LOCAL_RANK"])
    if fallback_rank is not None:
        return int(fallback_rank)
    raise RuntimeError("LOCAL_RANK is not in the environment. Consider passing fallback_rank to allow "
                       "`get_node_local_rank` to work, assuming you are not running in a multi-device context "
                       "and want the code to run locally instead.")


# ------------------------------------------------------------------ rendezvous
def _env(name, what):
    v = os.environ.get(name)
    if v is None:
        raise ValueError(f"Error initializing ember.distributed using env:// rendezvous: environment variable "
                         f"{name} expected, but not set")
    return v


def _loopback(host):
    try:
        return socket.gethostbyname(host).startswith("127.")
    except OSError:
        return host in ("localhost", "::1")


def _rendezvous(init_method, rank, world_size, timeout):
    """(store, rank, world_size, host) from an env://, tcp:// or file:// URL."""
    url = urllib.parse.urlparse(init_method)
    query = dict(urllib.parse.parse_qsl(url.query))
    if "rank" in query:
        rank = int(query["rank"])
    if "world_size" in query:
        world_size = int(query["world_size"])
    if url.scheme == "env":
        if rank == -1:
            rank = int(_env("RANK", "rank"))
        if world_size == -1:
            world_size = int(_env("WORLD_SIZE", "world size"))
        host, port = _env("MASTER_ADDR", "address"), int(_env("MASTER_PORT", "port"))
    elif url.scheme == "tcp":
        if rank == -1 or world_size == -1:
            raise ValueError(f"tcp:// rendezvous needs rank and world_size (arguments or URL query), got {init_method}")
        host, port = url.hostname, url.port
        if not host or port is None:
            raise ValueError(f"tcp:// rendezvous URL must give a host and a port, got {init_method}")
    elif url.scheme == "file":
        if rank == -1 or world_size == -1:
            raise ValueError(f"file:// rendezvous needs rank and world_size (arguments or URL query), got {init_method}")
        path = url.path if not url.netloc else url.netloc + url.path
        return FileStore(path, world_size), rank, world_size, "127.0.0.1"
    elif url.scheme in _rendezvous_handlers:
        store, rank, world_size = next(_rendezvous_handlers[url.scheme](init_method, rank, world_size,
                                                                        timeout=timeout))
        return store, rank, world_size, "127.0.0.1" if store is None else getattr(store, "host", "")
    else:
        raise RuntimeError(f"No rendezvous handler for {url.scheme}://")
    _check_rank(rank, world_size)
    store = TCPStore(host, port, world_size, rank == 0, timeout)
    return store, rank, world_size, host


_rendezvous_handlers = {}


def register_rendezvous_handler(scheme, handler):
    """init_method URLs of `scheme` go to handler(url, rank, world_size, **kwargs), a generator
    yielding (store, rank, world_size)."""
    if scheme in _rendezvous_handlers or scheme in ("env", "tcp", "file"):
        raise RuntimeError(f"Rendezvous handler for {scheme}:// already registered")
    _rendezvous_handlers[scheme] = handler


def rendezvous(url, rank=-1, world_size=-1, **kwargs):
    """Yields (store, rank, world_size) for an env://, tcp://, file:// or registered URL."""
    timeout = kwargs.get("timeout", default_pg_timeout)
    store, rank, world_size, _ = _rendezvous(url, rank, world_size, timeout)
    yield store, rank, world_size


def _check_rank(rank, world_size):
    if world_size < 1:
        raise ValueError(f"world_size must be positive, got {world_size}")
    if not 0 <= rank < world_size:
        raise ValueError(f"rank must be in [0, world_size), got rank {rank} for world_size {world_size}")


def _make_group(backend, store, rank, world_size, timeout, host):
    backend = Backend(backend)
    if backend == Backend.NCCL:
        if not is_nccl_available():
            raise RuntimeError("Distributed package doesn't have NCCL built in")
        return _D.new_nccl_group(store, rank, world_size, timeout), backend
    if backend != Backend.GLOO:
        raise RuntimeError(f"Invalid backend: '{backend}' (this Ember has: gloo, nccl)")
    if not is_gloo_available():
        raise RuntimeError("Distributed package doesn't have Gloo built in")
    # on one machine Gloo listens on loopback; across machines on the address of this host's name
    return _D.new_gloo_group(store, rank, world_size, timeout, "127.0.0.1" if _loopback(host) else ""), backend


def init_process_group(backend=None, init_method=None, timeout=None, world_size=-1, rank=-1, store=None,
                       group_name="", pg_options=None, device_id=None):
    """Start the default group: this process is `rank` of `world_size` (from the arguments, the
    init_method URL or the environment that ember.distributed.run sets)."""
    if _world.default_pg is not None:
        raise ValueError("trying to initialize the default process group twice!")
    if timeout is None:
        timeout = default_pg_timeout
    if not isinstance(timeout, datetime.timedelta):
        raise TypeError(f"Expected timeout argument to be of type datetime.timedelta, got {type(timeout)}")
    if backend is None or str(backend).lower() in ("cpu:gloo", "cpu:gloo,cuda:nccl"):
        backend = "gloo"
    if store is not None:
        if init_method is not None:
            raise ValueError("Cannot specify both init_method and store.")
        if world_size <= 0:
            raise ValueError("world_size must be positive if using store")
        if rank < 0:
            raise ValueError("rank must be non-negative if using store")
        _check_rank(rank, world_size)
        host = "127.0.0.1"
        if isinstance(store, TCPStore):
            host = store.host
    else:
        store, rank, world_size, host = _rendezvous(init_method or "env://", rank, world_size, timeout)
    pg, backend = _make_group(backend, PrefixStore("default_pg", store), rank, world_size, timeout, host)
    _world.__init__()
    _world.default_pg, _world.store, _world.init_method = pg, store, init_method
    _register(pg, range(world_size), backend, "default_pg")
    _world.timeout, _world.host = timeout, host
    GroupMember.WORLD = group.WORLD = pg


def destroy_process_group(group=None):
    """Tear down `group` (default: every group, after which init_process_group may run again)."""
    if group is None or group is _world.default_pg:
        if _world.default_pg is None:
            raise ValueError("Default process group has not been initialized, please make sure to call "
                             "init_process_group.")
        _world.__init__()
        GroupMember.WORLD = globals()["group"].WORLD = None
        return
    if _non_member(group):
        return
    _unregister(group)


def new_group(ranks=None, timeout=None, backend=None, pg_options=None, use_local_synchronization=False,
              group_desc=None, device_id=None):
    """A group of some of the world's ranks. Every rank of the world calls it, in the same order
    (members get the group, others GroupMember.NON_GROUP_MEMBER)."""
    default = _get_default_group()
    world_size, me = default.size(), get_rank()
    ranks = sorted(range(world_size) if ranks is None else ranks)
    if len(ranks) > world_size:
        raise ValueError("the new group's world size should be less or equal to the world size set by "
                         "init_process_group")
    if len(set(ranks)) != len(ranks):
        raise ValueError(f"new_group: ranks must be unique, got {ranks}")
    for r in ranks:
        if not 0 <= r < world_size:
            raise ValueError("The new group's rank should be within the world_size set by init_process_group")
    _world.group_count += 1
    tag = f"group_{_world.group_count}"
    if me not in ranks:
        return GroupMember.NON_GROUP_MEMBER
    pg, b = _make_group(backend or _world.group_backend[default], PrefixStore(tag, _world.store), ranks.index(me),
                        len(ranks), timeout or _world.timeout, _world.host)
    _register(pg, ranks, b, tag)
    return pg


def _device_backends(backend):
    """{device type: backend} a backend string names: "cpu:gloo,cuda:nccl" as written, a plain name for the
    device types it is the default of (torch's _parse_backend_string)."""
    backend = str(backend).lower()
    if ":" in backend:
        out = {}
        for part in backend.split(","):
            pieces = part.split(":")
            if len(pieces) != 2:
                raise ValueError(f"Invalid device:backend pairing '{part}' in '{backend}'. Expected format: "
                                 "'<device_type1>:<backend1>,<device_type2>:<backend2>...'")
            device, name = pieces[0].strip(), pieces[1].strip()
            if device in out:
                raise ValueError(f"Duplicate device type '{device}' in backend string '{backend}'")
            out[device] = name
        return out
    devices = [d for d, b in Backend.default_device_backend_map.items() if b == backend]
    if not devices:
        raise ValueError(f"Unknown backend '{backend}'. Specify a 'device:backend' string or use one of: "
                         f"{sorted(set(Backend.default_device_backend_map.values()))}")
    return dict.fromkeys(devices, backend)


def _check_timeout(timeout):
    if timeout is not None and not isinstance(timeout, datetime.timedelta):
        raise TypeError(f"Expected timeout argument to be of type datetime.timedelta, got {type(timeout)}")


def _derived_tag(parent, kind, ranks):
    """A store prefix for a group made from `parent` that every rank making it agrees on."""
    n = _world.derived.get(parent, 0) + 1
    _world.derived[parent] = n
    return f"{_world.group_tag[parent]}/{kind}_{n}/" + "_".join(map(str, ranks))


def split_group(parent_pg=None, split_ranks=None, timeout=None, pg_options=None, group_desc=None, backend=None):
    """Split a group (default: the world) into disjoint subgroups, each a list of parent group ranks.
    Every member of the parent calls it with the same split_ranks; each gets its own subgroup, or None
    when it is in none of them."""
    if not split_ranks:
        raise ValueError("split_ranks cannot be None or empty")
    _check_timeout(timeout)
    default = _get_default_group()
    parent = parent_pg if parent_pg is not None else default
    if _non_member(parent) or parent not in _world.group_ranks:
        raise ValueError(f"Group {parent} is not registered")
    parent_ranks = _world.group_ranks[parent]
    me = get_rank()
    if me not in parent_ranks:
        raise ValueError(f"Global rank {me} is not part of the parent group {parent}")
    parent_rank = parent_ranks.index(me)
    seen, mine = set(), None
    for split in split_ranks:
        split = list(split)
        if len(split) == 0:
            raise ValueError("the split group cannot be empty")
        if len(split) > default.size():
            raise ValueError("the split group's size should be less or equal to the world_size set by "
                             "init_process_group")
        if len(split) != len(set(split)):
            raise ValueError("the split group cannot have duplicate ranks")
        for r in split:
            if not isinstance(r, int) or not 0 <= r < len(parent_ranks):
                raise ValueError(f"split_group: {r!r} is not a rank of the parent group (its ranks are 0 to "
                                 f"{len(parent_ranks) - 1})")
            if r in seen:
                raise ValueError(f"split_group: rank {r} is in more than one split")
            seen.add(r)
        if parent_rank in split:
            mine = sorted(split)
    parent_backend = _world.group_backend[parent]
    if backend is not None:  # keeps a subset of the parent's per-device backends: here the parent's only one
        have = _device_backends(_world.group_config[parent])
        for device, name in _device_backends(backend).items():
            if device not in have:
                raise ValueError(f"Requested backend for device '{device}' is not present in the parent process "
                                 f"group (parent backends: {have})")
            if have[device] != name:
                raise ValueError(f"Backend mismatch for device '{device}': parent has '{have[device]}', requested "
                                 f"'{name}'. Backend names must match exactly when filtering split_group backends.")
    ranks = [parent_ranks[r] for r in mine] if mine is not None else None
    tag = _derived_tag(parent, "split", ranks or [])
    if mine is None:
        return None
    pg, b = _make_group(parent_backend, PrefixStore(tag, _world.store), mine.index(parent_rank), len(mine),
                        timeout or _world.timeout, _world.host)
    _register(pg, ranks, b, tag)
    return pg


SHRINK_DEFAULT = 0x00
SHRINK_ABORT = 0x01


def shrink_group(ranks_to_exclude, group=None, shrink_flags=SHRINK_DEFAULT, pg_options=None):
    """A new group of `group`'s ranks (default: the world's) without ranks_to_exclude (group ranks), made by the
    remaining ranks only (the excluded ones must not call it). Shrinking the default group makes the result the
    new default, its ranks renumbered 0..n-1, and drops every other group."""
    if not isinstance(ranks_to_exclude, list):
        raise TypeError(f"ranks_to_exclude must be a list, but got {type(ranks_to_exclude).__name__}. Example: "
                        "[1, 3, 5] to exclude ranks 1, 3, and 5.")
    if not ranks_to_exclude:
        raise ValueError("ranks_to_exclude cannot be empty. To shrink a group, you must specify at least one rank to "
                         "exclude. Example: [failed_rank_id]")
    if not isinstance(shrink_flags, int) or shrink_flags not in (SHRINK_DEFAULT, SHRINK_ABORT):
        raise ValueError(f"Invalid shrink_flags value: {shrink_flags}. Must be one of: SHRINK_DEFAULT "
                         f"({SHRINK_DEFAULT}) or SHRINK_ABORT ({SHRINK_ABORT}). Use SHRINK_ABORT to abort ongoing "
                         "operations before shrinking.")
    target = group if group is not None else _get_default_group()
    if _non_member(target) or target not in _world.group_ranks:
        raise ValueError("Invalid process group specified")
    size, me = target.size(), target.rank()
    if size <= 1:
        raise ValueError(f"Cannot shrink a process group with size {size}. Group must have at least 2 ranks to support "
                         "shrinking.")
    excluded = set()
    for i, r in enumerate(ranks_to_exclude):
        if not isinstance(r, int):
            raise TypeError(f"All elements in ranks_to_exclude must be integers. Element at index {i} is "
                            f"{type(r).__name__}: {r}")
        if not 0 <= r < size:
            raise ValueError(f"Rank {r} at index {i} is out of bounds for group size {size}. Valid ranks are in range "
                             f"[0, {size - 1}].")
        if r in excluded:
            raise ValueError(f"Duplicate rank {r} found in ranks_to_exclude at index {i}. Each rank can only be "
                             "excluded once.")
        excluded.add(r)
    if len(excluded) >= size:
        raise ValueError(f"Cannot exclude all {size} ranks from process group. At least one rank must remain. "
                         f"Excluding {len(excluded)} ranks.")
    if me in excluded:
        raise RuntimeError(f"Current rank {me} is in the exclusion list and should not call shrink_group(). Only "
                           "non-excluded ranks should participate in the shrinking operation. Excluded ranks should "
                           "terminate their processes instead.")
    # Gloo groups have nothing to abort: the old group's pending operations end by their own error or timeout
    remaining = [r for r in range(size) if r not in excluded]
    global_ranks = [_world.group_ranks[target][r] for r in remaining]
    backend = _world.group_backend[target]
    tag = _derived_tag(target, "shrink", global_ranks)
    pg, b = _make_group(backend, PrefixStore(tag, _world.store), remaining.index(me), len(remaining),
                        _world.timeout, _world.host)
    if target is _world.default_pg:
        kept = (_world.store, _world.init_method, _world.timeout, _world.host, _world.group_count)
        _world.__init__()
        _world.store, _world.init_method, _world.timeout, _world.host, _world.group_count = kept
        _world.default_pg = pg
        _register(pg, range(len(remaining)), b, tag)
        GroupMember.WORLD = globals()["group"].WORLD = pg
    else:
        _unregister(target)
        _register(pg, global_ranks, b, tag)
    return pg


# ------------------------------------------------------------------ argument checks
def _check_tensor(t, name):
    if not isinstance(t, _Tensor):
        raise TypeError(f"Invalid function argument. Expected parameter `{name}` of type ember.Tensor\n"
                        f"             but got {type(t)} instead.")


def _check_tensor_list(ts, name, list_only=False):
    """A list (or tuple, unless list_only: torch takes only lists, but Ember's older collectives took both)
    of tensors."""
    if not isinstance(ts, list if list_only else (list, tuple)) or not all(isinstance(t, _Tensor) for t in ts):
        raise TypeError(f"Invalid function argument. Expected parameter `{name}` of type List[ember.Tensor]\n"
                        f"             but got {type(ts)} instead.")


def _peer(group, global_rank, group_rank, what):
    """The group rank of a src/dst given as a global rank or a group rank."""
    if global_rank is not None and group_rank is not None:
        raise ValueError(f"Can not specify both {what} and group_{what}")
    if group_rank is not None:
        return group_rank
    if global_rank is None:
        global_rank = 0
    g = _group(group)
    return global_rank if g is _world.default_pg else get_group_rank(g, global_rank)


def _finish(work, async_op):
    if async_op:
        return work
    work.wait()
    return None


def _member(group, op=None):
    """False (and the collective does nothing) on ranks outside the group, as in torch, which warns
    "Running <op> on global rank <r> which does not belong to the given group." (op: the caller's name)."""
    if not _non_member(group):
        return True
    if op is None:
        op = sys._getframe(1).f_code.co_name
    global_rank = -1 if GroupMember.WORLD is None else GroupMember.WORLD.rank()
    warnings.warn(f"Running {op} on global rank {global_rank} which does not belong to the given group.",
                  stacklevel=2)
    return False


def _check_op(op):
    """torch sets opts.reduceOp = op, which takes only a ReduceOp: an int, a str or None is a TypeError."""
    if not isinstance(op, ReduceOp):
        raise TypeError(f"Invalid reduce op: expected an ember.distributed.ReduceOp, got {type(op).__name__} {op!r}")


# ------------------------------------------------------------------ complex tensors
# A complex tensor travels as its real view (view_as_real shares its storage, so results land in place);
# sums and averages of complex numbers are those of their parts, other reductions are undefined (torch's
# error).
_COMPLEX_OPS = (ReduceOp.SUM, ReduceOp.AVG)


class _ComplexOpError(ValueError, RuntimeError):
    """An op complex numbers lack, from all_reduce / all_reduce_coalesced: torch raises ValueError there;
    Ember raised RuntimeError before, so it is both."""


def _real(t, op=None, fn=None, error=RuntimeError):
    """t itself, or a complex tensor's real view; an op other than SUM/AVG on a complex tensor raises
    `error` (torch: ValueError from all_reduce and all_reduce_coalesced, RuntimeError from the others)."""
    if not t.dtype.is_complex:
        return t
    if op is not None and op not in _COMPLEX_OPS:
        raise error(f"{fn} does not support {op} on complex tensors")
    return _C._ops.view_as_real(t)


# ------------------------------------------------------------------ profiling
_comm = threading.local()  # .name: record_comm's name on this thread


@contextlib.contextmanager
def record_comm(name):
    """Collectives issued inside the block also show in the profiler under `name` (besides their own
    "<backend>:<op>" range), on this thread."""
    if not isinstance(name, str):
        raise TypeError(f"record_comm: name must be a str, got {type(name).__name__}")
    prev = getattr(_comm, "name", None)
    _comm.name = name
    try:
        yield
    finally:
        _comm.name = prev


@contextlib.contextmanager
def _ranges(names):
    records = []
    try:
        for n in names:
            r = _C._RecordFunction()
            r.enter(n)
            records.append(r)
        yield
    finally:
        for r in reversed(records):
            r.exit()


def _recorded(op):
    """While a profiler runs, the collective shows as a "<backend>:<op>" range (torch's "gloo:all_reduce"),
    inside a range named by record_comm when one is active."""
    def wrap(fn):
        sig = inspect.signature(fn)

        @functools.wraps(fn)
        def collective(*args, **kwargs):
            if not _C._profiler_enabled():
                return fn(*args, **kwargs)
            g = sig.bind_partial(*args, **kwargs).arguments.get("group")
            if _non_member(g):
                return fn(*args, **kwargs)
            backend = _world.group_backend.get(_world.default_pg if g is None else g, "c10d")
            custom = getattr(_comm, "name", None)
            with _ranges(([custom] if custom else []) + [f"{backend}:{op}"]):
                return fn(*args, **kwargs)
        return collective
    return wrap


# ------------------------------------------------------------------ collectives
@_recorded("all_reduce")
def all_reduce(tensor, op=ReduceOp.SUM, group=None, async_op=False):
    """Reduce a tensor across all ranks in place, every rank receiving the result."""
    _check_tensor(tensor, "tensor")
    if not _member(group):
        return None
    tensor = _real(tensor, op, "all_reduce", _ComplexOpError)
    _check_op(op)
    return _finish(_group(group).allreduce(tensor, op), async_op)


@_recorded("all_reduce")
def all_reduce_coalesced(tensors, op=ReduceOp.SUM, group=None, async_op=False):
    """All-reduce a list of tensors in one collective."""
    _check_tensor_list(tensors, "tensor")
    if not _member(group):
        return None
    tensors = [_real(t, op, "all_reduce", _ComplexOpError) for t in tensors]
    _check_op(op)
    return _finish(_group(group).allreduce_coalesced(tensors, op), async_op)


@_recorded("broadcast")
def broadcast(tensor, src=None, group=None, async_op=False, group_src=None):
    """Copy a tensor from the source rank to every rank."""
    _check_tensor(tensor, "tensor")
    if not _member(group):
        return None
    return _finish(_group(group).broadcast(_real(tensor), _peer(group, src, group_src, "src")), async_op)


@_recorded("reduce")
def reduce(tensor, dst=None, op=ReduceOp.SUM, group=None, async_op=False, group_dst=None):
    """Reduce a tensor across all ranks onto the destination rank."""
    _check_tensor(tensor, "tensor")
    if not _member(group):
        return None
    tensor = _real(tensor, op, "reduce")
    _check_op(op)
    return _finish(_group(group).reduce(tensor, _peer(group, dst, group_dst, "dst"), op), async_op)


@_recorded("all_gather")
def all_gather(tensor_list, tensor, group=None, async_op=False):
    """Gather a tensor from every rank into a list on every rank."""
    _check_tensor_list(tensor_list, "tensor_list")
    _check_tensor(tensor, "tensor")
    if not _member(group):
        return None
    return _finish(_group(group).allgather([_real(t) for t in tensor_list], _real(tensor)), async_op)


@_recorded("all_gather")
def all_gather_single(output_tensor, input_tensor, group=None, async_op=False):
    """Gather every rank's tensor into one output tensor on every rank (concatenated or stacked along dim 0)."""
    _check_tensor(output_tensor, "output_tensor")
    _check_tensor(input_tensor, "input_tensor")
    if not _member(group):
        return None
    return _finish(_group(group).allgather_into_tensor(_real(output_tensor), _real(input_tensor)), async_op)


def all_gather_into_tensor(output_tensor, input_tensor, group=None, async_op=False):
    """Deprecated name of all_gather_single (a FutureWarning, as in torch 2.13)."""
    warnings.warn("`ember.distributed.all_gather_into_tensor` is deprecated. Please use "
                  "`ember.distributed.all_gather_single` instead.", FutureWarning, stacklevel=2)
    return all_gather_single(output_tensor, input_tensor, group, async_op)


@_recorded("reduce_scatter")
def reduce_scatter_single(output, input, op=ReduceOp.SUM, group=None, async_op=False):
    """Reduce one tensor across ranks, rank i receiving slice i of dim 0 (concatenated or stacked input)."""
    _check_tensor(output, "output")
    _check_tensor(input, "input")
    if not _member(group):
        return None
    _check_op(op)
    if output.dtype != input.dtype:  # torch's Gloo checks this after the complex views (a complex input and a
        # real output of twice the size would pass there, and then abort the process)
        raise RuntimeError(f"reduce_scatter_single: output and input must have the same dtype, got {output.dtype} "
                           f"and {input.dtype}")
    return _finish(_group(group).reduce_scatter_tensor(_real(output, op, "reduce_scatter_single"), _real(input), op),
                   async_op)


def reduce_scatter_tensor(output, input, op=ReduceOp.SUM, group=None, async_op=False):
    """Deprecated name of reduce_scatter_single (a FutureWarning, as in torch 2.13)."""
    warnings.warn("`ember.distributed.reduce_scatter_tensor` is deprecated. Please use "
                  "`ember.distributed.reduce_scatter_single` instead.", FutureWarning, stacklevel=2)
    return reduce_scatter_single(output, input, op, group, async_op)


def all_gather_coalesced(output_tensor_lists, input_tensor_list, group=None, async_op=False):
    """Gather a list of tensors from every rank in one exchange (deprecated in torch: a FutureWarning);
    with async_op, a Future of the outputs."""
    warnings.warn("`ember.distributed.all_gather_coalesced` will be deprecated. If you must use it, please revisit "
                  "our documentation later at https://pytorch.org/docs/main/distributed.html#collective-functions",
                  FutureWarning, stacklevel=2)
    return _all_gather_coalesced(output_tensor_lists, input_tensor_list, group, async_op)


@_recorded("all_gather")
def _all_gather_coalesced(output_tensor_lists, input_tensor_list, group=None, async_op=False):
    if not _member(group, "all_gather_coalesced"):
        return None
    _check_tensor_list(input_tensor_list, "input_tensor_list", list_only=True)
    _same_dtype(input_tensor_list)
    if not isinstance(output_tensor_lists, list):
        raise TypeError("Invalid function argument: output_tensor_lists should be a list")
    for outs in output_tensor_lists:
        _check_tensor_list(outs, "output_tensor_lists", list_only=True)
        _same_dtype(outs)
    work, finish = _start_allgather_coalesced(_group(group), [[_real(t) for t in outs] for outs in output_tensor_lists],
                                              [_real(t) for t in input_tensor_list])
    if async_op:  # a Future of the output lists (complex ones as their real views), as torch's
        return work.get_future().then(lambda fut: (fut.value(), finish())[1])
    work.wait()
    finish()
    return None


def _same_dtype(tensors):
    """torch's _ensure_all_tensors_same_dtype: one dtype, a complex one agreeing with its real counterpart
    (torch maps complex128 to itself there, so complex128 and float64 clash in torch; not here)."""
    last = None
    for t in tensors:
        kind = {_C.complex64: _C.float32, _C.complex128: _C.float64}.get(t.dtype, t.dtype)
        if last is not None and kind != last:
            raise ValueError(f"Invalid usage of tensors with different dtypesFound {last} and  {t.dtype}")
        last = kind


@_recorded("reduce_scatter")
def reduce_scatter(output, input_list, op=ReduceOp.SUM, group=None, async_op=False):
    """Reduce a list of tensors across ranks, each rank receiving one reduced piece."""
    _check_tensor(output, "output")
    _check_tensor_list(input_list, "input_list")
    if not _member(group):
        return None
    _check_op(op)
    # complex tensors travel as their real views (torch's Gloo sums complex tensors; MAX & co. raise)
    flat = _C._ops.cat([_real(t, op, "reduce_scatter").reshape(-1) for t in input_list])
    return _finish(_group(group).reduce_scatter_tensor(_real(output, op, "reduce_scatter"), flat, op), async_op)


@_recorded("gather")
def gather(tensor, gather_list=None, dst=None, group=None, async_op=False, group_dst=None):
    """Collect every rank's tensor on the destination rank."""
    _check_tensor(tensor, "tensor")
    if gather_list:
        _check_tensor_list(gather_list, "gather_list")
    if not _member(group):
        return None
    root = _peer(group, dst, group_dst, "dst")
    return _finish(_group(group).gather(list(gather_list or []), tensor, root), async_op)


@_recorded("scatter")
def scatter(tensor, scatter_list=None, src=None, group=None, async_op=False, group_src=None):
    """Send one tensor of a list from the source rank to each rank."""
    _check_tensor(tensor, "tensor")
    if scatter_list:
        _check_tensor_list(scatter_list, "scatter_list")
    if not _member(group):
        return None
    root = _peer(group, src, group_src, "src")
    return _finish(_group(group).scatter(tensor, list(scatter_list or []), root), async_op)


@_recorded("all_to_all")
def all_to_all_single(output, input, output_split_sizes=None, input_split_sizes=None, group=None, async_op=False):
    """All-to-all exchange of the splits of a single tensor."""
    _check_tensor(output, "output")
    _check_tensor(input, "input")
    if not _member(group):
        return None
    return _finish(_group(group).alltoall_single(output, input, list(output_split_sizes or []),
                                                 list(input_split_sizes or [])), async_op)


@_recorded("all_to_all")
def all_to_all(output_tensor_list, input_tensor_list, group=None, async_op=False):
    """Send one tensor of a list to each rank and receive one from each."""
    _check_tensor_list(output_tensor_list, "output_tensor_list")
    _check_tensor_list(input_tensor_list, "input_tensor_list")
    if not _member(group):
        return None
    flat_in = _C._ops.cat([t.reshape(-1) for t in input_tensor_list])
    flat_out = _C._ops.cat([t.reshape(-1) for t in output_tensor_list])
    work = _group(group).alltoall_single(flat_out, flat_in, [t.numel() for t in output_tensor_list],
                                         [t.numel() for t in input_tensor_list])
    work.wait()
    at = 0
    for t in output_tensor_list:
        t.copy_(flat_out[at:at + t.numel()].view(t.shape))
        at += t.numel()
    return work if async_op else None


@_recorded("barrier")
def barrier(group=None, async_op=False, device_ids=None):
    """Wait until every rank of the group reaches this call."""
    if not _member(group):
        return None
    return _finish(_group(group).barrier(), async_op)


def monitored_barrier(group=None, timeout=None, wait_all_ranks=False):
    """A barrier that raises (naming the wait) when it does not complete within `timeout`."""
    if not _member(group):
        return None
    work = _group(group).barrier()
    work.wait(timeout or _world.timeout)


# ------------------------------------------------------------------ point to point
def _p2p_peer(group, rank, group_rank, what, allow_any=False):
    if rank is None and group_rank is None and allow_any:
        return -1
    peer = _peer(group, rank, group_rank, what)
    if peer == _group(group).rank():
        name = "destination" if what == "dst" else "source"
        raise ValueError(f"Invalid {name} rank: {name} rank should not be the same as the rank of the current process.")
    return peer


@_recorded("send")
def isend(tensor, dst=None, group=None, tag=0, group_dst=None):
    """Start sending a tensor to a rank; returns a work to wait on."""
    _check_tensor(tensor, "tensor")
    if not _member(group):
        return None
    return _group(group).send(tensor, _p2p_peer(group, dst, group_dst, "dst"), tag)


@_recorded("recv")
def irecv(tensor, src=None, group=None, tag=0, group_src=None):
    """Start receiving a tensor from a rank; returns a work to wait on."""
    _check_tensor(tensor, "tensor")
    if not _member(group):
        return None
    return _group(group).recv(tensor, _p2p_peer(group, src, group_src, "src", allow_any=True), tag)


def send(tensor, dst=None, group=None, tag=0, group_dst=None):
    """Send a tensor to a rank, blocking until done."""
    work = isend(tensor, dst, group, tag, group_dst)
    if work is not None:
        work.wait()


def recv(tensor, src=None, group=None, tag=0, group_src=None):
    """Blocks until the tensor arrived; returns the sender's rank (global, like torch)."""
    work = irecv(tensor, src, group, tag, group_src)
    if work is None:
        return -1
    work.wait()
    g = _group(group)
    r = work.source_rank()
    return _world.group_ranks[g][r]


class P2POp:
    """One isend/irecv for batch_isend_irecv."""

    def __init__(self, op, tensor, peer=None, group=None, tag=0, group_peer=None):
        if op not in (isend, irecv):
            raise ValueError("Invalid ``op``. Expected ``op`` to be of type ``ember.distributed.isend`` or "
                             "``ember.distributed.irecv``.")
        _check_tensor(tensor, "tensor")
        self.op, self.tensor, self.peer, self.group, self.tag, self.group_peer = op, tensor, peer, group, tag, group_peer


def batch_isend_irecv(p2p_op_list):
    """Start a batch of point-to-point sends and receives; returns their works."""
    if not p2p_op_list or not all(isinstance(p, P2POp) for p in p2p_op_list):
        raise ValueError("Invalid ``p2p_op_list``. Each op is expected to to be of type ``ember.distributed.P2POp``.")
    return [p.op(p.tensor, p.peer, p.group, p.tag, p.group_peer) for p in p2p_op_list]


# ------------------------------------------------------------------ object collectives
# Objects travel as ember.save bytes and come back through the restricted unpickler
# (weights_only): a peer can send tensors, containers and allowlisted classes, never code.
def _to_bytes(obj):
    from ..serialization import save
    buf = io.BytesIO()
    save(obj, buf)
    return buf.getvalue()


def _from_bytes(data):
    from ..serialization import load
    return load(io.BytesIO(bytes(data)), weights_only=True)


def _byte_tensor(data):
    import numpy
    return _C.from_numpy(numpy.frombuffer(data, dtype=numpy.uint8).copy())


def _object_device(group):
    """Where an object collective's tensors travel: the current GPU for an NCCL group (as torch's), else
    the CPU."""
    if _world.group_backend.get(_group(group)) == Backend.NCCL:
        from .. import cuda
        return f"cuda:{cuda.current_device()}"
    return "cpu"


def _gather_bytes(payload, group):
    """Every rank's payload (lists of bytes), through two all_gathers (sizes, then padded bytes)."""
    g = _group(group)
    n, dev = g.size(), _object_device(group)
    size = _new_tensor([len(payload)], dtype=_int64).to(dev)
    sizes = [_zeros(1, dtype=_int64).to(dev) for _ in range(n)]
    all_gather(sizes, size, group=group)
    longest = max(int(s.item()) for s in sizes)
    mine = _zeros(longest, dtype=_uint8)
    mine[:len(payload)] = _byte_tensor(payload)
    mine = mine.to(dev)
    outs = [_zeros(longest, dtype=_uint8).to(dev) for _ in range(n)]
    all_gather(outs, mine, group=group)
    return [bytes(o[:int(s.item())].cpu().numpy().tobytes()) for o, s in zip(outs, sizes)]


def all_gather_object(object_list, obj, group=None):
    """Gather a picklable object from every rank into a list on every rank."""
    if not _member(group):
        return
    if len(object_list) != _group(group).size():
        raise ValueError(f"all_gather_object: object_list must have world_size ({_group(group).size()}) entries, "
                         f"got {len(object_list)}")
    for i, data in enumerate(_gather_bytes(_to_bytes(obj), group)):
        object_list[i] = _from_bytes(data)


def gather_object(obj, object_gather_list=None, dst=None, group=None, group_dst=None):
    """Collect a picklable object from every rank on the destination rank."""
    if not _member(group):
        return
    root = _peer(group, dst, group_dst, "dst")
    # gather's sizes differ per rank: all ranks learn the sizes, only root keeps the objects
    datas = _gather_bytes(_to_bytes(obj), group)
    if _group(group).rank() == root:
        if object_gather_list is None or len(object_gather_list) != _group(group).size():
            raise ValueError("gather_object: object_gather_list must have world_size entries on the destination rank")
        for i, data in enumerate(datas):
            object_gather_list[i] = _from_bytes(data)


def broadcast_object_list(object_list, src=None, group=None, device=None, group_src=None):
    """Copy picklable objects from the source rank to every rank."""
    if not _member(group):
        return
    g = _group(group)
    root = _peer(group, src, group_src, "src")
    dev = device if device is not None else _object_device(group)
    if g.rank() == root:
        payloads = [_to_bytes(o) for o in object_list]
        sizes = _new_tensor([len(p) for p in payloads], dtype=_int64).to(dev)
    else:
        sizes = _zeros(len(object_list), dtype=_int64).to(dev)
    g.broadcast(sizes, root).wait()
    total = int(sizes.sum().item())
    buf = (_byte_tensor(b"".join(payloads)) if g.rank() == root else _zeros(total, dtype=_uint8)).to(dev)
    g.broadcast(buf, root).wait()
    if g.rank() != root:
        raw, at = buf.cpu().numpy().tobytes(), 0
        for i, s in enumerate(sizes.tolist()):
            object_list[i] = _from_bytes(raw[at:at + s])
            at += s


def scatter_object_list(scatter_object_output_list, scatter_object_input_list=None, src=None, group=None,
                        group_src=None):
    """Send one picklable object of a list from the source rank to each rank."""
    if not _member(group):
        return
    if not isinstance(scatter_object_output_list, list) or len(scatter_object_output_list) < 1:
        raise ValueError("Expected argument scatter_object_output_list to be a list of size at least 1.")
    g = _group(group)
    root = _peer(group, src, group_src, "src")
    objs = list(scatter_object_input_list) if g.rank() == root else [None] * g.size()
    broadcast_object_list(objs, group_src=root, group=group)
    scatter_object_output_list[0] = objs[g.rank()]


def new_subgroups_by_enumeration(ranks_per_subgroup_list, timeout=None, backend=None, pg_options=None,
                                 group_desc=None):
    """One group per rank list (every rank calls it); returns (this rank's subgroup, all of them)."""
    if not ranks_per_subgroup_list:
        raise ValueError("The arg 'ranks_per_subgroup_list' cannot be empty")
    seen, mine, groups = set(), None, []
    for ranks in ranks_per_subgroup_list:
        for r in ranks:
            if r in seen:
                raise ValueError(f"Rank {r} has appeared in both subgroup {ranks} and another subgroup")
            seen.add(r)
        g = new_group(ranks, timeout=timeout, backend=backend)
        groups.append(g)
        if get_rank() in ranks:
            mine = g
    return mine, groups


def new_subgroups(group_size=None, group=None, timeout=None, backend=None, pg_options=None, group_desc=None):
    """The world cut into consecutive groups of group_size ranks; returns (this rank's, all)."""
    if group_size is None:
        raise ValueError("Default group size only takes effect when CUDA is available. If your subgroup using a "
                         "backend that does not depend on CUDA, please pass in 'group_size' correctly.")
    world = get_world_size(group)
    if group_size <= 0:
        raise ValueError(f"The arg 'group_size' ({group_size}) must be positive")
    if group_size > world:
        raise ValueError(f"The arg 'group_size' ({group_size}) must not exceed the world size ({world})")
    if world % group_size != 0:
        raise ValueError("The world size must be divisible by 'group_size'")
    ranks = get_process_group_ranks(_group(group))
    return new_subgroups_by_enumeration([ranks[i:i + group_size] for i in range(0, world, group_size)],
                                        timeout=timeout, backend=backend)


def send_object_list(object_list, dst=None, group=None, device=None, group_dst=None, use_batch=False):
    """Objects to one rank (recv_object_list there), as ember.save bytes."""
    if not _member(group):
        return
    payloads = [_to_bytes(o) for o in object_list]
    dev = device if device is not None else _object_device(group)
    send(_new_tensor([len(p) for p in payloads], dtype=_int64).to(dev), dst, group=group, group_dst=group_dst)
    send(_byte_tensor(b"".join(payloads)).to(dev), dst, group=group, group_dst=group_dst)


def recv_object_list(object_list, src=None, group=None, device=None, group_src=None, use_batch=False):
    """Fills object_list with what send_object_list sent; returns the sender's rank."""
    if not _member(group):
        return -1
    dev = device if device is not None else _object_device(group)
    sizes = _zeros(len(object_list), dtype=_int64).to(dev)
    sender = recv(sizes, src, group=group, group_src=group_src)
    buf = _zeros(int(sizes.sum().item()), dtype=_uint8).to(dev)
    recv(buf, sender, group=group)
    raw, at = buf.cpu().numpy().tobytes(), 0
    for i, n in enumerate(sizes.tolist()):
        object_list[i] = _from_bytes(raw[at:at + n])
        at += n
    return sender


class DebugLevel:
    """TORCH_DISTRIBUTED_DEBUG's levels. Ember checks every collective's agreement across ranks at
    all levels (the check DETAIL turns on in torch), so the level only records what was asked."""
    OFF, INFO, DETAIL = "OFF", "INFO", "DETAIL"


_debug_level = DebugLevel.OFF


def set_debug_level(level):
    """Set the distributed debug level."""
    global _debug_level
    if level not in (DebugLevel.OFF, DebugLevel.INFO, DebugLevel.DETAIL):
        raise ValueError(f"Invalid debug level: {level!r} (OFF, INFO or DETAIL)")
    _debug_level = level


def get_debug_level():
    """The distributed debug level (OFF, INFO or DETAIL)."""
    return _debug_level


def set_debug_level_from_env():
    """Set the distributed debug level from TORCH_DISTRIBUTED_DEBUG."""
    set_debug_level(os.environ.get("TORCH_DISTRIBUTED_DEBUG", "OFF").upper())
