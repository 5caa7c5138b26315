"""What a DeviceMesh says and does on one rank, written once for ember and for torch (same API):
`python mesh_probe.py RANK WORLD_SIZE LIB PORT` prints a dict literal (test_device_mesh.py compares
the two libraries' answers, rank by rank, in 4 processes)."""
import datetime
import os
import sys


def _ranks(lib, group):
    return lib.distributed.get_process_group_ranks(group)


def _error(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 — the kind is what is compared
        return type(e).__name__
    return None


def probe(lib, rank, ws):
    dist = lib.distributed
    from importlib import import_module
    dm = import_module(lib.__name__ + ".distributed.device_mesh")
    out = {}
    m = dm.init_device_mesh("cpu", (2, 2), mesh_dim_names=("dp", "tp"))
    out["2d"] = (repr(m), m.mesh.tolist(), m.shape, m.ndim, m.size(), m.size(1), m.get_coordinate(),
                 m.get_local_rank("dp"), m.get_local_rank(1), _ranks(lib, m.get_group("dp")),
                 _ranks(lib, m.get_group(1)), [_ranks(lib, g) for g in m.get_all_groups()], m.mesh_dim_names,
                 m.device_type, m.get_rank(), str(m.mesh.dtype).split(".")[-1])
    for name in ("dp", "tp"):
        s = m[name]
        out[name] = (repr(s), s.mesh.tolist(), s.shape, s.get_coordinate(), s.get_local_rank(),
                     _ranks(lib, s.get_group()), s.mesh_dim_names, s == m, m[("dp", "tp")] is m)
    # a collective along each dimension: sums over the rows and over the columns
    t = lib.tensor([float(rank + 1)])
    dist.all_reduce(t, group=m.get_group("tp"))
    u = lib.tensor([float(rank + 1)])
    dist.all_reduce(u, group=m["dp"].get_group())
    out["sums"] = (t.item(), u.item())
    out["errors"] = (_error(lambda: m.get_group()), _error(lambda: m.get_local_rank()), _error(lambda: m["xx"]),
                     _error(lambda: m["tp", "dp"]), _error(lambda: m.get_group("xx")),
                     _error(lambda: dm.init_device_mesh("cpu", (2, 2), mesh_dim_names=("a", "a"))),
                     _error(lambda: dm.init_device_mesh("cpu", (2, 2), mesh_dim_names=("a",))),
                     _error(lambda: dm.init_device_mesh("cpu:0", (4,))),
                     _error(lambda: dm.init_device_mesh("cpu", (8,))))
    flat = m._flatten()
    v = lib.tensor([float(rank + 1)])
    dist.all_reduce(v, group=flat.get_group())
    out["flat"] = (repr(flat), flat.mesh.tolist(), flat.mesh_dim_names, flat.get_coordinate(), v.item(),
                   m["dp_tp"] == flat, m._flatten() == flat)
    # an explicit mesh over some of the ranks, in a custom order
    e = dm.DeviceMesh("cpu", [[3, 1]], mesh_dim_names=("a", "b"))
    out["explicit"] = (repr(e), e.mesh.tolist(), e.get_coordinate(), e.shape,
                       e.get_local_rank("b") if e.get_coordinate() is not None else None)
    one = dm.init_device_mesh("cpu", (4,))
    out["1d"] = (repr(one), one.mesh.tolist(), one.get_coordinate(), one.get_local_rank(),
                 _ranks(lib, one.get_group()), one.mesh_dim_names, _error(lambda: one["x"]))
    g = dist.new_group([0, 1])
    fg = dm.DeviceMesh.from_group(g, "cpu", mesh_dim_names=("x",)) if rank in (0, 1) else None
    out["from_group"] = None if fg is None else (repr(fg), fg.mesh.tolist(), fg.get_coordinate(),
                                                 _ranks(lib, fg.get_group()))
    three = dm.init_device_mesh("cpu", (2, 1, 2), mesh_dim_names=("a", "b", "c"))
    sub = three["a", "c"]
    out["3d"] = (repr(three), three.mesh.tolist(), three.get_coordinate(), repr(sub), sub.mesh.tolist(),
                 sub.get_coordinate(), [_ranks(lib, gr) for gr in sub.get_all_groups()],
                 [three.get_local_rank(i) for i in range(3)])
    return out


def main():
    rank, ws, libname, port = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
    lib = __import__(libname)
    lib.distributed.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=ws,
                                       timeout=datetime.timedelta(seconds=60))
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    result = probe(lib, rank, ws)
    lib.distributed.barrier()
    print(repr(result))
    sys.stdout.flush()
    lib.distributed.destroy_process_group()


if __name__ == "__main__":
    main()
