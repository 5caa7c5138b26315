"""DeviceMesh: the world's ranks laid out as an n-d array, with one process group per dimension.

torch.distributed.device_mesh's API (init_device_mesh, DeviceMesh, slicing by dimension name,
get_group, get_local_rank, get_coordinate, from_group, _flatten). A mesh is a view on its root
mesh: the root's ranks in row-major order (rank_map), the root's shape, and for each of the
view's dimensions the root dimensions it stands for (one, or several collapsed by _flatten).
Every group is created once, by every rank in the same order (new_group is collective), when the
root mesh (or a flattened dimension) is made; slices only pick groups out of the root.
"""
import itertools
import math

from .. import _C
from . import distributed_c10d as c10d

__all__ = ["DeviceMesh", "init_device_mesh"]


def _nested_list(mesh):
    """A mesh given as tensor, array or nested lists -> (flat list of ints, shape)."""
    data = mesh.tolist() if hasattr(mesh, "tolist") else mesh
    if isinstance(data, int):
        return [data], ()
    shape, level = [], data
    while isinstance(level, (list, tuple)):
        shape.append(len(level))
        if not level:
            break
        level = level[0]
    flat = []

    def walk(x, depth):
        if depth == len(shape):
            if isinstance(x, (list, tuple)) or isinstance(x, bool) or not float(x).is_integer():
                raise ValueError(f"DeviceMesh: mesh must be an integer array of ranks, got {mesh!r}")
            flat.append(int(x))
            return
        if not isinstance(x, (list, tuple)) or len(x) != shape[depth]:
            raise ValueError(f"DeviceMesh: mesh must be a rectangular array of ranks, got {mesh!r}")
        for y in x:
            walk(y, depth + 1)
    walk(data, 0)
    return flat, tuple(shape)


def _row_major_strides(shape):
    strides, acc = [], 1
    for s in reversed(shape):
        strides.append(acc)
        acc *= s
    return tuple(reversed(strides))


class DeviceMesh:
    """An n-d array of global ranks on one device type, with a process group along each dimension.

    Every rank runs the same program (SPMD): constructing a mesh is collective, like new_group.
    """

    def __init__(self, device_type, mesh=None, *, mesh_dim_names=None, backend_override=None, _init_backend=True,
                 _root=None, _dims=None):
        if _root is None:
            if mesh is None:
                raise TypeError("DeviceMesh: the mesh argument is required")
            flat, shape = _nested_list(mesh)
            if len(set(flat)) != len(flat):
                raise RuntimeError(f"DeviceMesh: every rank may appear only once in the mesh, got {mesh!r}")
            if any(r < 0 for r in flat):
                raise RuntimeError(f"DeviceMesh: ranks must be non-negative, got {mesh!r}")
            self._rank_map, self._root_shape = tuple(flat), shape
            self._root_strides = _row_major_strides(shape)
            self._dims = tuple((d,) for d in range(len(shape)))
            self._root = None
        else:
            self._rank_map, self._root_shape, self._root_strides = _root._rank_map, _root._root_shape, _root._root_strides
            self._dims, self._root = tuple(_dims), _root
        self._device_type = device_type
        self._mesh_dim_names = tuple(mesh_dim_names) if mesh_dim_names else None
        if self._mesh_dim_names is not None and len(self._mesh_dim_names) != len(self._dims):
            raise RuntimeError(f"DeviceMesh: {len(self._mesh_dim_names)} mesh_dim_names for a mesh of "
                               f"{len(self._dims)} dimensions")
        self._flatten_mapping = {}
        self._dim_groups = []
        if backend_override is None:
            backend_override = ((None, None),) * len(self._dims)
        elif len(backend_override) != len(self._dims):
            raise ValueError("backend_override should have the same length as the number of mesh dimensions, but got "
                             f"{len(backend_override)} and {len(self._dims)}.")
        if _init_backend:
            self._setup_world()
            self._dim_groups = [self._make_groups(dims, override[0])
                                for dims, override in zip(self._dims, backend_override)]
        self._coordinate = self._compute_coordinate()

    # ---- layout arithmetic (root dims, row-major offsets into rank_map)
    def _sizes_of(self, dims):
        return tuple(self._root_shape[d] for d in dims)

    def _groups_along(self, dims):
        """Every 1-d run of ranks along the collapsed root dims `dims` (row-major over them), one per
        combination of the other root dims, in ascending offset order."""
        rest = [d for d in range(len(self._root_shape)) if d not in dims]
        runs = []
        for fixed in itertools.product(*(range(self._root_shape[d]) for d in rest)):
            base = sum(c * self._root_strides[d] for c, d in zip(fixed, rest))
            run = [self._rank_map[base + sum(c * self._root_strides[d] for c, d in zip(coords, dims))]
                   for coords in itertools.product(*(range(self._root_shape[d]) for d in dims))]
            runs.append(run)
        return runs

    def _full_mesh(self):
        """This view's own dims as an array per combination of the root dims it leaves out: (rows, flat ranks)."""
        flat_dims = [d for dims in self._dims for d in dims]
        return self._groups_along(flat_dims)

    def _my_run(self):
        runs = self._full_mesh()
        if len(runs) == 1:
            return runs[0]
        me = c10d.get_rank()
        for run in runs:
            if me in run:
                return run
        raise RuntimeError("In order to get the mesh Tensor of a DeviceMesh it needs to either have all its original "
                           "dimensions (e.g., no slicing) or it needs to contain the local rank")

    def _compute_coordinate(self):
        if not c10d.is_initialized():
            return None
        me = c10d.get_rank()
        runs = self._full_mesh()
        run = next((r for r in runs if me in r), None)
        if run is None:
            return None
        index, coord = run.index(me), []
        for size in reversed(self.shape):
            coord.append(index % size)
            index //= size
        return tuple(reversed(coord))

    # ---- process groups
    def _setup_world(self):
        if not c10d.is_initialized():
            c10d.init_process_group("nccl" if self._device_type == "cuda" else None)
        world = c10d.get_world_size()
        if len(self._rank_map) > world:
            raise RuntimeError(f"Mesh should not be bigger than default world size {world}, but found "
                               f"{len(self._rank_map)} ranks!")
        bad = [r for r in self._rank_map if r >= world]
        if bad:
            raise RuntimeError(f"DeviceMesh: ranks {bad} are outside the world of {world} processes")

    def _make_groups(self, dims, backend):
        """The group along collapsed root dims `dims` that holds this rank (NON_GROUP_MEMBER when none does).
        Every rank creates every group of the dimension, in the same order."""
        runs = self._groups_along(dims)
        world = c10d.get_world_size()
        if len(runs) == 1 and len(runs[0]) == world and backend is None:
            return c10d._get_default_group()
        me, mine = c10d.get_rank(), c10d.GroupMember.NON_GROUP_MEMBER
        for run in runs:
            g = c10d.new_group(run, backend=backend)
            if me in run:
                mine = g
        return mine

    def _group_of(self, index):
        if not self._dim_groups:
            raise RuntimeError("DeviceMesh process groups not initialized!")
        g = self._dim_groups[index]
        if c10d._non_member(g):
            raise RuntimeError(f"DeviceMesh: rank {c10d.get_rank()} is not part of this mesh ({self})")
        return g

    def _dim_index(self, mesh_dim):
        if isinstance(mesh_dim, str):
            if not self._mesh_dim_names:
                raise KeyError("No `mesh_dim_names` found.")
            if mesh_dim not in self._mesh_dim_names:
                raise KeyError(f"Mesh dimension '{mesh_dim}' does not exist. Available mesh dimensions are: "
                               f"mesh_dim_names={self._mesh_dim_names}")
            return self._mesh_dim_names.index(mesh_dim)
        if isinstance(mesh_dim, bool) or not isinstance(mesh_dim, int):
            raise TypeError(f"mesh_dim must be an int or a str, got {type(mesh_dim).__name__}")
        if not -self.ndim <= mesh_dim < self.ndim:
            raise IndexError(f"mesh_dim {mesh_dim} is out of range for a mesh of {self.ndim} dimensions")
        return mesh_dim % self.ndim

    def _need_dim(self, mesh_dim, what):
        if mesh_dim is None:
            if self.ndim > 1:
                raise RuntimeError(f"Found the DeviceMesh have {self.ndim} dimensions. Optional kwarg `mesh_dim` needs "
                                   f"to be specified when device_mesh.ndim > 1.{what}")
            return 0
        return None

    def get_group(self, mesh_dim=None):
        """The ProcessGroup along one dimension (by index or name); a 1-d mesh's only group by default."""
        index = self._need_dim(mesh_dim, " If you want to get the list of all the ProcessGroups in the DeviceMesh, "
                                         "please use `get_all_groups()` instead.")
        if index is None:
            root = self._get_root_mesh()
            if isinstance(mesh_dim, str) and mesh_dim in root._flatten_mapping and (
                    not self._mesh_dim_names or mesh_dim not in self._mesh_dim_names):
                return root._flatten_mapping[mesh_dim]._group_of(0)
            index = self._dim_index(mesh_dim)
        return self._group_of(index)

    def get_all_groups(self):
        """The ProcessGroup of every dimension, in order."""
        return [self.get_group(i) for i in range(self.ndim)]

    # ---- queries
    @property
    def device_type(self):
        return self._device_type

    @property
    def mesh_dim_names(self):
        return self._mesh_dim_names

    @property
    def mesh(self):
        """The ranks as an int32 tensor of this mesh's shape (for a slice: the slice holding this rank)."""
        return _C._ops.tensor(self._my_run(), dtype=_C.int32).reshape(self.shape)

    @property
    def ndim(self):
        return len(self._dims)

    @property
    def shape(self):
        return tuple(math.prod(self._sizes_of(dims)) for dims in self._dims)

    def size(self, mesh_dim=None):
        """Ranks in the mesh, or along one dimension."""
        if mesh_dim is None:
            return math.prod(self.shape)
        return self.shape[self._dim_index(mesh_dim)]

    def get_rank(self):
        """This process's global rank."""
        return c10d.get_rank()

    def get_local_rank(self, mesh_dim=None):
        """This process's rank in the group along a dimension."""
        self._need_dim(mesh_dim, "")
        return c10d.get_rank(self.get_group(mesh_dim))

    def get_coordinate(self):
        """This rank's index along every dimension of the mesh, or None when it is not in the mesh."""
        return self._coordinate

    def _get_root_mesh(self):
        return self._root if self._root is not None else self

    def _is_current_rank_part_of_mesh(self):
        return self._coordinate is not None

    # ---- slicing and flattening
    def __getitem__(self, mesh_dim_names):
        """The sub-mesh of the named dimensions (in the mesh's order), holding this rank."""
        if not self._mesh_dim_names:
            raise RuntimeError("Cannot slice a DeviceMesh without mesh_dim_names!")
        names = (mesh_dim_names,) if isinstance(mesh_dim_names, str) else tuple(mesh_dim_names)
        if names == self._mesh_dim_names:
            return self
        root = self._get_root_mesh()
        flattened = root._flatten_mapping if self is root else {}
        valid = [*self._mesh_dim_names, *flattened]
        if not names or not all(n in valid for n in names):
            raise KeyError(f"Invalid mesh_dim_names {names} specified. Valid mesh_dim_names are {valid}.")
        dims, groups = [], []
        for n in names:
            if n in self._mesh_dim_names:
                i = self._mesh_dim_names.index(n)
                dims.append(self._dims[i])
                groups.append(self._dim_groups[i] if self._dim_groups else None)
            else:
                dims.append(flattened[n]._dims[0])
                groups.append(flattened[n]._dim_groups[0] if flattened[n]._dim_groups else None)
        order = [d for ds in dims for d in ds]
        if len(set(order)) != len(order):
            raise RuntimeError(f"Slicing overlapping dim_names {names} is not allowed.")
        if order != sorted(order):
            raise KeyError(f"Invalid mesh_dim_names {names} specified. Mesh dim indices should be in ascending order.")
        sub = DeviceMesh(self._device_type, mesh_dim_names=names, _init_backend=False, _root=root, _dims=dims)
        sub._dim_groups = groups if all(g is not None for g in groups) else []
        return sub

    def _flatten(self, mesh_dim_name=None, backend_override=None):
        """A 1-d mesh over all of this mesh's ranks (row-major), with its own group; reachable from the
        root mesh by its name afterwards (root[name])."""
        if not self._mesh_dim_names:
            raise RuntimeError("Cannot flatten a DeviceMesh without mesh_dim_names!")
        name = mesh_dim_name or "_".join(self._mesh_dim_names)
        if self.ndim == 1 and name in self._mesh_dim_names:
            return self
        root = self._get_root_mesh()
        if name in (root._mesh_dim_names or ()):
            raise ValueError(f"{name} already exists for submesh of the {root}. The mesh_dim_names of submesh and "
                             f"flattened mesh are {root._mesh_dim_names}. Please specify another valid mesh_dim_name.")
        dims = tuple(d for ds in self._dims for d in ds)
        if name in root._flatten_mapping:
            existing = root._flatten_mapping[name]
            if existing._dims[0] == dims:
                return existing
            raise ValueError(f"Flatten mesh with mesh_dim_name {name} has been created before, Please specify "
                             "another valid mesh_dim_name.")
        backend = backend_override[0] if isinstance(backend_override, tuple) else backend_override
        flat = DeviceMesh(root._device_type, mesh_dim_names=(name,), _init_backend=False, _root=root, _dims=[dims])
        flat._dim_groups = [flat._make_groups(dims, backend)]
        root._flatten_mapping[name] = flat
        return flat

    @staticmethod
    def from_group(group, device_type, mesh=None, *, mesh_dim_names=None):
        """A mesh over existing groups: one group gives a 1-d mesh of its ranks; a list of groups needs
        `mesh` (one dimension per group) and `mesh_dim_names`."""
        if isinstance(group, c10d.ProcessGroup):
            ranks = c10d.get_process_group_ranks(group)
            if mesh is not None and _nested_list(mesh)[0] != ranks:
                raise ValueError(f"Invalid mesh {mesh} for ProcessGroup with ranks {ranks}")
            dm = DeviceMesh(device_type, ranks, mesh_dim_names=mesh_dim_names, _init_backend=False)
            dm._dim_groups = [group]
            return dm
        groups = list(group)
        if not groups:
            raise ValueError("Expects at least one ProcessGroup to be passed")
        if mesh is None:
            raise ValueError("Must pass mesh if passing multiple ProcessGroups")
        if mesh_dim_names is None:
            raise ValueError("Must pass mesh_dim_names if passing multiple ProcessGroups")
        flat, shape = _nested_list(mesh)
        if len(shape) != len(groups):
            raise ValueError(f"Expects mesh with ndim equal to number of ProcessGroups but got mesh {mesh} and "
                             f"{len(groups)} ProcessGroups")
        dm = DeviceMesh(device_type, mesh, mesh_dim_names=mesh_dim_names, _init_backend=False)
        dm._dim_groups = groups
        return dm

    # ---- protocol
    def _strides(self):
        out = []
        for dims in self._dims:
            # collapse runs that are contiguous in the root, as one stride
            pairs = [(self._root_shape[d], self._root_strides[d]) for d in dims if self._root_shape[d] != 1]
            merged = []
            for size, stride in pairs:
                if merged and merged[-1][1] == size * stride:
                    merged[-1] = (merged[-1][0] * size, stride)
                else:
                    merged.append((size, stride))
            strides = tuple(s for _, s in merged)  # a size-1 dim has none: torch prints ()
            out.append(strides[0] if len(strides) == 1 else strides)
        return tuple(out)

    def __repr__(self):
        if self._mesh_dim_names:
            sizes = "(" + ", ".join(f"{n}={s}" for n, s in zip(self._mesh_dim_names, self.shape)) + ")"
        else:
            sizes = str(self.shape)
        return f"DeviceMesh({sizes}, '{self._device_type}', stride={self._strides()})"

    def _key(self):
        return (self._rank_map, self._root_shape, self._dims, self._device_type, self._mesh_dim_names)

    def __eq__(self, other):
        return self is other or (isinstance(other, DeviceMesh) and self._key() == other._key())

    def __hash__(self):
        return hash(self._key())

    def __enter__(self):
        _mesh_stack.append(self)
        return self

    def __exit__(self, *exc):
        _mesh_stack.pop()


_mesh_stack = []  # meshes entered with `with mesh:` (torch's _mesh_resources.mesh_stack)


def _normalize_backend_override(override, ndim, names):
    override, names = dict(override), names or ()
    out = []
    for i in range(ndim):
        name = names[i] if i < len(names) else None
        if name is not None and name in override:
            if i in override:
                raise RuntimeError(f"Found redundant dim index {i} and name {name} in backend_override")
            value = override.pop(name)
        elif i in override:
            value = override.pop(i)
        else:
            out.append((None, None))
            continue
        out.append((value, None) if isinstance(value, str) else tuple(value))
    if override:
        raise RuntimeError(f"Found invalid keys in backend_override: got {list(override)}, expected integers in range "
                           f"[0, {ndim}) or one of {names}")
    return tuple(out)


def init_device_mesh(device_type, mesh_shape, *, mesh_dim_names=None, backend_override=None):
    """A mesh of shape `mesh_shape` over ranks 0..n-1 in row-major order; initializes the default
    process group from the environment when none exists. Every rank calls it with the same arguments."""
    mesh_shape = tuple(mesh_shape)
    if mesh_dim_names is not None:
        mesh_dim_names = tuple(mesh_dim_names)
        if len(set(mesh_dim_names)) != len(mesh_dim_names):
            raise RuntimeError("Each mesh_dim_name must be unique. Found repeated mesh_dim_name in mesh_dim_names "
                               f"{mesh_dim_names}")
        if len(mesh_shape) != len(mesh_dim_names):
            raise RuntimeError("mesh_shape and mesh_dim_names should have same length! Found len(mesh_dim_names): "
                               f"{len(mesh_dim_names)} and len(mesh_shape):{len(mesh_shape)}.")
    if device_type and not device_type.isalpha():
        raise RuntimeError(f"Device type with index is not supported but got {device_type}. If you maintained a "
                           "'ember.device' object, it's recommended to pass in 'device.type'.")
    if any(isinstance(s, bool) or not isinstance(s, int) or s <= 0 for s in mesh_shape):
        raise ValueError(f"init_device_mesh: mesh_shape must be positive integers, got {mesh_shape}")
    overrides = None
    if backend_override is not None:
        overrides = _normalize_backend_override(backend_override, len(mesh_shape), mesh_dim_names)
    ranks = _C._ops.arange(math.prod(mesh_shape), dtype=_C.int64).reshape(mesh_shape)
    return DeviceMesh(device_type, ranks, mesh_dim_names=mesh_dim_names, backend_override=overrides)
