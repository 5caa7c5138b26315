"""OpInfos for the shape, indexing, scan, search and resampling ops and the extra random ops
(ops.yaml's "Operators for neural networks" section; imported at the end of opdb.py)."""
import numpy as np

from opdb import OpInfo, add
from parity import ALL_DTYPES, FLOATS, INTS, REDUCED, DType, Sample, T, is_torch

F2 = ("float32", "float64")
NOT_BOOL = tuple(d for d in ALL_DTYPES if d != "bool")
INT_IDX = ("int8", "int16", "int32", "int64", "uint8")


def _x(dt, shape=(3, 4), layout=None, key=0, **kw):
    return T(shape, dt, layout=layout, key=key, **kw)


def _ix(data, dtype="int64"):
    a = np.asarray(data)
    return T(a.shape, dtype, data=a)


# ================================================================ stacking
def _stack_family(dt):
    a, b = _x(dt, (2, 3), key=1), _x(dt, (2, 3), key=2)
    return [Sample([a, b]), Sample((a, b, a)), Sample([_x(dt, (3,), key=3), _x(dt, (2,), key=4)]),
            Sample([T((), dt, key=5), T((), dt, key=6)]), Sample([_x(dt, (2, 3, 2), key=7), _x(dt, (2, 3, 2), key=8)]),
            Sample([a, T((2, 3), "float64", key=9)]), Sample([_x(dt, (3, 2), layout="T"), b]), Sample(tensors=[a]),
            Sample([_x(dt, (2, 0)), _x(dt, (2, 3))])]


def _stack_errors():
    return [Sample([]), Sample([T((2, 3), "float32"), T((3, 3, 1), "float32")])]


def _column_stack_samples(dt):
    return _stack_family(dt) + [Sample([_x(dt, (3,), key=1), _x(dt, (3, 2), key=2), T((3,), dt, key=3)])]


for _n in ("hstack", "vstack", "dstack"):
    add(OpInfo(_n, _stack_family, errors=_stack_errors))
add(OpInfo("column_stack", _column_stack_samples, errors=_stack_errors))


# ================================================================ hsplit / vsplit / dsplit, ravel, broadcast_to, sum_to_size
def _dir_split(sections):
    def samples(dt):
        a, b, c = _x(dt, (4, 6, 2), key=1), _x(dt, (6,), key=2), _x(dt, (2, 4), layout="T", key=3)
        out = [Sample(a, 2 if sections else [1, 3]), Sample(b, 3 if sections else [4]), Sample(c, 2 if sections else []),
               Sample(_x(dt, (2, 0, 2)), 1 if sections else [0])]
        return out
    return samples


def _dir_split_errors(name, sections):
    arg = 2 if sections else [1]
    too_few = {"hsplit": [()], "vsplit": [(), (4,)], "dsplit": [(), (4,), (4, 4)]}[name]
    errs = [Sample(T(shape, "float32"), arg) for shape in too_few]
    if sections:
        errs += [Sample(T((4, 6, 4), "float32"), 5), Sample(T((4, 6, 4), "float32"), 0)]
    return errs


for _n in ("hsplit", "vsplit", "dsplit"):
    add(OpInfo(f"{_n}.int", _dir_split(True), errors=lambda n=_n: _dir_split_errors(n, True)))
    add(OpInfo(f"{_n}.array", _dir_split(False), errors=lambda n=_n: _dir_split_errors(n, False)))


def _ravel_samples(dt):
    return [Sample(_x(dt, (3, 4))), Sample(_x(dt, (4, 3), layout="T")), Sample(T((), dt)), Sample(_x(dt, (2, 0))),
            Sample(_x(dt, (3, 4), layout="step"))]


def _broadcast_to_samples(dt):
    return [Sample(_x(dt, (3, 1)), (2, 3, 4)), Sample(_x(dt, (3, 4)), [3, 4]), Sample(T((), dt), (2,)),
            Sample(_x(dt, (1, 4), layout="T"), (3, -1)), Sample(_x(dt, (3,)), size=(0, 3))]


def _sum_to_size_samples(dt):
    x = _x(dt, (2, 3, 4))
    return [Sample(x, 3, 1), Sample(x, [4]), Sample(x, (1, 1, 1)), Sample(x, 2, 3, 4), Sample(x, ()),
            Sample(_x(dt, (4, 3), layout="T"), 1, 3)]


add(OpInfo("ravel", _ravel_samples))
add(OpInfo("broadcast_to", _broadcast_to_samples,
           errors=lambda: [Sample(T((2, 3), "float32"), (3,)), Sample(T((2, 3), "float32"), (2, 4))]))
add(OpInfo("sum_to_size", _sum_to_size_samples, dtypes=NOT_BOOL,
           errors=lambda: [Sample(T((2, 3), "float32"), 4), Sample(T((2, 3), "float32"), 1, 4),
                           Sample(T((2, 3), "float32"), 1, 2, 3)]))


# ================================================================ tensor_split
def _ts_indices(dt):
    x = _x(dt, (5, 4))
    return [Sample(x, [1, 3]), Sample(x, (1, 3), 1), Sample(x, [0, 10]), Sample(x, [-1]), Sample(x, [3, 1]),
            Sample(x, []), Sample(_x(dt, (4, 5), layout="T"), [2], 1), Sample(x, indices=[2], dim=-1)]


def _ts_tensor(dt):
    x = _x(dt, (5, 4))
    return [Sample(x, _ix(2)), Sample(x, _ix([1, 3]), 1), Sample(x, _ix([4, 1])),
            Sample(x, tensor_indices_or_sections=_ix(3), dim=1)]


def _ts_sections(dt):
    x = _x(dt, (5, 4))
    return [Sample(x, 3), Sample(x, 2, 1), Sample(x, 7), Sample(x, 1), Sample(T((0, 3), dt), 2),
            Sample(x, sections=4, dim=-1)]


add(OpInfo("tensor_split.indices", _ts_indices, errors=lambda: [Sample(T((), "float32"), [1])]))
add(OpInfo("tensor_split.tensor_indices_or_sections", _ts_tensor,
           errors=lambda: [Sample(T((4,), "float32"), _ix([1.0], "float32")),
                           Sample(T((4,), "float32"), _ix([[1]]))]))
add(OpInfo("tensor_split.sections", _ts_sections,
           errors=lambda: [Sample(T((4,), "float32"), 0), Sample(T((), "float32"), 2), Sample(T((4,), "float32"), 2, 1)]))


# ================================================================ flips, rotations, repeats
add(OpInfo("fliplr", lambda dt: [Sample(_x(dt)), Sample(_x(dt, (2, 3, 4))), Sample(_x(dt, (3, 4), layout="T"))],
           errors=lambda: [Sample(T((3,), "float32"))]))
add(OpInfo("flipud", lambda dt: [Sample(_x(dt)), Sample(_x(dt, (4,))), Sample(_x(dt, (3, 4), layout="T"))],
           errors=lambda: [Sample(T((), "float32"))]))


def _rot90_samples(dt):
    x = _x(dt)
    return [Sample(x), Sample(x, 1), Sample(x, 2), Sample(x, 3), Sample(x, -1), Sample(x, 6), Sample(x, 0),
            Sample(_x(dt, (2, 3, 4)), 1, [1, 2]), Sample(_x(dt, (2, 3, 4)), 3, [2, 0]), Sample(x, k=1, dims=[1, 0]),
            Sample(x, 1, [-1, 0]), Sample(_x(dt, (3, 4), layout="T"), 1)]


add(OpInfo("rot90", _rot90_samples,
           errors=lambda: [Sample(T((3, 4), "float32"), 1, [0]), Sample(T((3,), "float32"), 1),
                           Sample(T((3, 4), "float32"), 1, [0, 0]), Sample(T((3, 4), "float32"), 1, [0, 2]),
                           Sample(T((3, 4), "float32"), 1, [0, -2])]))


def _repeat_samples(dt):
    x = _x(dt, (2, 3))
    return [Sample(x, 2, 3), Sample(x, (1, 2, 2)), Sample(x, [0, 2]), Sample(T((), dt), 3), Sample(T((), dt), (2, 2)),
            Sample(_x(dt, (3, 2), layout="T"), 2, 1), Sample(_x(dt, (2, 3), layout="expand"), 1, 2, 1), Sample(x, 1, 1)]


add(OpInfo("repeat", _repeat_samples, errors=lambda: [Sample(T((2, 3), "float32"), 2),
                                                       Sample(T((2, 3), "float32"), 2, -1)]))


def _tile_samples(dt):
    x = _x(dt, (2, 3))
    return [Sample(x, (2,)), Sample(x, (2, 2, 2)), Sample(x, [0, 1]), Sample(T((), dt), (3,)), Sample(x, ()),
            Sample(_x(dt, (3, 2), layout="T"), (2, 1)), Sample(x, dims=(1, 2))]


add(OpInfo("tile", _tile_samples, errors=lambda: [Sample(T((2, 3), "float32"), (-1,))]))


def _ri_tensor(dt):
    return [Sample(_ix([1, 0, 2], dt)), Sample(_ix([], dt)), Sample(_ix([3], dt)), Sample(_ix([1, 2], dt), output_size=3)]


add(OpInfo("repeat_interleave.Tensor", _ri_tensor, dtypes=("int64", "int32"),
           errors=lambda: [Sample(_ix([1.0, 2.0], "float32")), Sample(_ix([[1, 2]])), Sample(_ix([1, -1])),
                           Sample(_ix([1, 2]), output_size=4)]))


def _ri_self_tensor(dt):
    x = _x(dt, (3, 4))
    return [Sample(x, _ix(2)), Sample(x, _ix([1, 2, 0]), 0), Sample(x, _ix([0, 1, 2, 1]), 1), Sample(x, _ix([2]), dim=1),
            Sample(x, _ix([1, 2, 0]), 0, output_size=3), Sample(_x(dt, (4, 3), layout="T"), _ix([1, 1, 2]), -1),
            Sample(T((), dt), _ix(2))]


add(OpInfo("repeat_interleave.self_Tensor", _ri_self_tensor,
           errors=lambda: [Sample(T((3, 4), "float32"), _ix([1, 2]), 0), Sample(T((3, 4), "float32"), _ix([[1]]), 0)]))


def _ri_self_int(dt):
    x = _x(dt, (3, 4))
    return [Sample(x, 2), Sample(x, 2, 0), Sample(x, 3, -1), Sample(x, 0, 1), Sample(T((), dt), 3),
            Sample(x, repeats=2, dim=1, output_size=8), Sample(_x(dt, (4, 3), layout="T"), 2, 0)]


add(OpInfo("repeat_interleave.self_int", _ri_self_int, errors=lambda: [Sample(T((3,), "float32"), -1)]))


# ================================================================ index_copy, index_fill, masked_scatter
def _index_copy_samples(dt):
    x = _x(dt, (4, 5))
    return [Sample(x, 0, _ix([3, 0, 1]), _x(dt, (3, 5), key=1)), Sample(x, 1, _ix([4, 2]), _x(dt, (4, 2), key=2)),
            Sample(x, -1, _ix([0]), _x(dt, (4, 1), key=3)), Sample(T((), dt), 0, _ix([0]), T((), dt, key=4)),
            Sample(_x(dt, (5, 4), layout="T"), 0, _ix(2), _x(dt, (1, 4), key=5)),
            Sample(x, dim=1, index=_ix([1, 3]), source=_x(dt, (4, 2), layout="T", key=6)),
            Sample(x, 0, _ix([], "int64"), _x(dt, (0, 5)))]


def _index_copy_errors():
    x = T((4, 5), "float32")
    return [Sample(x, 1, _ix([5]), T((4, 1), "float32")), Sample(x, 1, _ix([1], "int32"), T((4, 1), "float32")),
            Sample(x, 1, _ix([1]), T((4, 1), "float64")), Sample(x, 1, _ix([1, 2]), T((4, 1), "float32")),
            Sample(x, 1, _ix([1]), T((3, 1), "float32")), Sample(x, 1, _ix([-1]), T((4, 1), "float32")),
            Sample(x, 1, _ix([[1]]), T((4, 1), "float32"))]


add(OpInfo("index_copy", _index_copy_samples, errors=_index_copy_errors))


def _fill_value(dt):
    return True if dt == "bool" else 2


def _index_fill_tensor(dt):
    x = _x(dt, (4, 5))
    v = T((), dt, data=_fill_value(dt))
    return [Sample(x, 0, _ix([3, 0]), v), Sample(x, 1, _ix([-1, 1, 1]), v), Sample(x, -1, _ix(2), v),
            Sample(T((), dt), 0, _ix([0]), v), Sample(_x(dt, (5, 4), layout="T"), 0, _ix([1]), v),
            Sample(x, 1, _ix([0]), T((), "float64", data=3.0)), Sample(x, dim=0, index=_ix([2]), value=v)]


def _index_fill_scalar(dt):
    x = _x(dt, (4, 5))
    v = _fill_value(dt)
    s = [Sample(x, 0, _ix([3, 0]), v), Sample(x, 1, _ix([-1, 1, 1]), v), Sample(x, -1, _ix(2), v),
         Sample(T((), dt), 0, _ix([0]), v), Sample(T((), dt), -1, _ix(0), v),
         Sample(_x(dt, (5, 4), layout="T"), 0, _ix([1]), v), Sample(x, dim=0, index=_ix([2]), value=v), Sample(x, 1, _ix([]), v)]
    if dt in FLOATS:
        s.append(Sample(x, 1, _ix([0]), -1.5))
    return s


def _index_fill_errors():
    x = T((4, 5), "float32")
    return [Sample(x, 1, _ix([5]), 1.0), Sample(x, 1, _ix([1], "int32"), 1.0), Sample(x, 2, _ix([1]), 1.0),
            Sample(x, 1, _ix([[1]]), 1.0), Sample(x, 1, _ix([-6]), 1.0)]


add(OpInfo("index_fill.int_Tensor", _index_fill_tensor,
           errors=lambda: [Sample(T((4, 5), "float32"), 1, _ix([1]), T((1,), "float32")),
                           Sample(T((4, 5), "float32"), 1, _ix([7]), T((), "float32"))]))
add(OpInfo("index_fill.int_Scalar", _index_fill_scalar, errors=_index_fill_errors))


def _masked_scatter_samples(dt):
    x = _x(dt, (3, 4))
    m = T((3, 4), "bool", key="m")
    return [Sample(x, m, _x(dt, (12,), key=1)), Sample(x, m, _x(dt, (4, 5), key=2)), Sample(x, T((4,), "bool", key=3),
                                                                                          _x(dt, (12,), key=4)),
            Sample(_x(dt, (3, 4), layout="T"), m, _x(dt, (20,), key=5)), Sample(T((), dt), T((), "bool", data=True),
                                                                               _x(dt, (2,), key=6)),
            Sample(x, T((3, 4), "bool", data=np.zeros((3, 4), bool)), _x(dt, (0,))),
            Sample(x, mask=m, source=_x(dt, (3, 4), key=7, layout="T"))]


def _masked_scatter_outplace(dt):
    # the out-of-place form broadcasts self against the mask too
    return _masked_scatter_samples(dt) + [Sample(_x(dt, (4,)), T((3, 4), "bool", key=8), _x(dt, (12,), key=9))]


add(OpInfo("masked_scatter", _masked_scatter_outplace,
           errors=lambda: [Sample(T((3,), "float32"), T((3,), "bool", data=[True, True, True]), T((2,), "float32")),
                           Sample(T((3,), "float32"), T((3,), "bool"), T((3,), "float64")),
                           Sample(T((3,), "float32"), T((3,), "uint8"), T((3,), "float32"))]))


# ================================================================ nonzero forms, take
def _nonzero_like(dt):
    return [Sample(_x(dt, (3, 4), low=-1, high=1)), Sample(_x(dt, (5,), low=-1, high=1)), Sample(T((), dt)),
            Sample(T((0, 3), dt)), Sample(_x(dt, (3, 4), layout="T", low=-1, high=1)),
            Sample(_x(dt, (2, 3, 4), low=-1, high=1))]


add(OpInfo("argwhere", _nonzero_like))
add(OpInfo("nonzero_numpy", _nonzero_like, function=lambda lib, x: lib.nonzero(x, as_tuple=True),
           method=lambda lib, x: x.nonzero(as_tuple=True)))


def _take_samples(dt):
    x = _x(dt, (3, 4))
    return [Sample(x, _ix([[0, -1], [5, 11]])), Sample(x, _ix(3)), Sample(x, _ix([], "int64")), Sample(T((), dt), _ix([0, 0])),
            Sample(_x(dt, (4, 3), layout="T"), _ix([1, 2, 3])), Sample(x, index=_ix([-12]))]


add(OpInfo("take", _take_samples,
           errors=lambda: [Sample(T((3,), "float32"), _ix([3])), Sample(T((3,), "float32"), _ix([-4])),
                           Sample(T((3,), "float32"), _ix([1], "int32")), Sample(T((0,), "float32"), _ix([0]))]))


def _tad_samples(dt):
    x = _x(dt, (3, 4))
    return [Sample(x, _ix([[0, 3], [1, 1], [2, 0]]), 1), Sample(x, _ix([[2, 0, 1, 1]]), 0), Sample(x, _ix([[1], [0], [3]]), -1),
            Sample(x, _ix([[1, 2]]), 1), Sample(x, _ix([5, 0, 11])), Sample(_x(dt, (4, 3), layout="T"), _ix([1, 2])),
            Sample(_x(dt, (4, 3), layout="T"), _ix([[0, 1, 2]]), 0), Sample(x, indices=_ix([[0]]), dim=1),
            Sample(_x(dt, (2, 1, 4)), _ix([[[0], [1], [2]]]), 2)]


add(OpInfo("take_along_dim", _tad_samples,
           errors=lambda: [Sample(T((3, 4), "float32"), _ix([0]), 1), Sample(T((3, 4), "float32"), _ix([[0]], "int32"), 1)]))


# ================================================================ scatter_reduce
def _sr_samples(dt):
    x = _x(dt, (3, 4), low=-3, high=3)
    idx = _ix([[0, 1, 0, 2], [2, 2, 0, 1]])
    src = _x(dt, (2, 4), low=-3, high=3, key=1)
    reds = ["sum", "amax", "amin", "prod"] if dt == "bool" else ["sum", "prod", "mean", "amax", "amin"]
    s = []
    for r in reds:
        s += [Sample(x, 0, idx, src, r), Sample(x, 0, idx, src, r, include_self=False),
              Sample(x, 1, _ix([[3, 3], [0, 3], [1, 1]]), _x(dt, (3, 3), low=-3, high=3, key=2), r)]
    s += [Sample(x, 0, _ix([[0, 1]]), _x(dt, (2, 3), key=3), "sum"),  # src larger than index
          Sample(T((5,), dt, low=-3, high=3), 0, _ix([4, 0, 4, 4]), T((4,), dt, low=-3, high=3, key=4), "mean", include_self=False),
          Sample(_x(dt, (4, 3), layout="T"), -1, idx, src, "amax"), Sample(T((), dt), 0, _ix(0), T((), dt, key=5), "sum"),
          Sample(x, dim=0, index=idx, src=src, reduce="amin", include_self=True), Sample(x, 0, T((0, 4), "int64"), _x(dt, (0, 4)), "prod")]
    if dt in FLOATS:
        s.append(Sample(T((4,), dt, data=[1.0, float("nan"), 2.0, 0.5]), 0, _ix([0, 0, 1, 3]),
                        T((4,), dt, data=[float("nan"), 3.0, -1.0, float("inf")]), "amax"))
    if dt in ("int64", "int32", "int16", "int8"):
        s.append(Sample(T((3,), dt, data=[-7, 5, 1]), 0, _ix([0, 0, 1]), T((3,), dt, data=[2, 0, -4]), "mean"))
    return s


def _sr_errors():
    x = T((3, 4), "float32")
    return [Sample(x, 0, _ix([[0]]), T((1, 1), "float32"), "add"), Sample(x, 0, _ix([[0]]), T((1, 1), "float64"), "sum"),
            Sample(x, 0, _ix([[3]]), T((1, 1), "float32"), "sum"), Sample(x, 0, _ix([[0.0]], "float32"), x, "sum"),
            Sample(x, 0, _ix([[0, 0]]), T((1, 1), "float32"), "sum")]


add(OpInfo("scatter_reduce.two", _sr_samples, errors=_sr_errors,
           tol={"float16": (2e-3, 1e-3), "bfloat16": (2e-2, 1e-2)}))


# ================================================================ scans
def _scan_samples(dt):
    x = _x(dt, (3, 4), low=0 if dt not in FLOATS else None, high=3 if dt not in FLOATS else None)
    s = [Sample(x, 0), Sample(x, 1), Sample(x, -1), Sample(T((), dt), 0), Sample(T((0, 3), dt), 0), Sample(T((0, 3), dt), 1),
         Sample(_x(dt, (4, 3), layout="T"), 1), Sample(_x(dt, (2, 3, 4)), 1), Sample(x, dim=0)]
    if dt in FLOATS:
        s.append(Sample(T((6,), dt, data=[1.0, float("nan"), 3.0, float("nan"), float("inf"), -float("inf")]), 0))
        s.append(Sample(T((5,), dt, data=[2.0, 2.0, -1.0, 2.0, -1.0]), 0))
    return s


add(OpInfo("cummax", _scan_samples, errors=lambda: [Sample(T((3,), "float32"), 1)]))
add(OpInfo("cummin", _scan_samples, errors=lambda: [Sample(T((3,), "float32"), 1)]))


def _lcse_samples(dt):
    s = [Sample(_x(dt, (3, 4)), 0), Sample(_x(dt, (3, 4)), 1), Sample(T((), dt), 0), Sample(T((0, 2), dt), 0),
         Sample(_x(dt, (4, 3), layout="T"), -1), Sample(_x(dt, (2, 3, 4)), dim=2)]
    if dt in FLOATS:
        big = 60000.0 if dt == "float16" else 1000.0
        s.append(Sample(T((8,), dt, data=[-big, 0.0, 1.0, -float("inf"), float("inf"), 2.0, float("nan"), 1.0]), 0))
        s.append(Sample(T((3,), dt, data=[-float("inf"), -float("inf"), 0.0]), 0))
    return s


add(OpInfo("logcumsumexp", _lcse_samples, dtypes=FLOATS, errors=lambda: [Sample(T((3,), "int64"), 0)],
           tol={"float16": (2e-3, 1e-3), "bfloat16": (2e-2, 1e-2), "float32": (1e-5, 1e-5)}))


# ================================================================ diff, diagonals, trace
def _diff_samples(dt):
    x = _x(dt, (3, 4))
    return [Sample(x), Sample(x, 2), Sample(x, 1, 0), Sample(x, 0), Sample(x, 5), Sample(x, 4, -1),
            Sample(x, 1, 1, _x(dt, (3, 2), key=1)), Sample(x, 1, 0, None, _x(dt, (1, 4), key=2)),
            Sample(x, 2, prepend=_x(dt, (3, 1), key=3), append=_x(dt, (3, 2), key=4)),
            Sample(x, 0, prepend=_x(dt, (3, 1), key=3)), Sample(_x(dt, (4, 3), layout="T"), 1, 0),
            Sample(x, 1, 1, T((3, 1), "float64", key=5)), Sample(T((0,), dt))]


add(OpInfo("diff", _diff_samples,
           errors=lambda: [Sample(T((), "float32")), Sample(T((3,), "float32"), -1),
                           Sample(T((3, 4), "float32"), 1, -1, T((4,), "float32")),
                           Sample(T((3, 4), "float32"), 1, -1, T((2, 4), "float32"))]))


def _diag_embed_samples(dt):
    x = _x(dt, (2, 3))
    return [Sample(x), Sample(x, 1), Sample(x, -2), Sample(x, 0, 0, 2), Sample(x, 1, 2, 0), Sample(_x(dt, (4,))),
            Sample(_x(dt, (3, 2), layout="T"), -1, -1, -3), Sample(x, offset=1, dim1=1, dim2=2)]


add(OpInfo("diag_embed", _diag_embed_samples,
           errors=lambda: [Sample(T((2, 3), "float32"), 0, 1, 1), Sample(T((2, 3), "float32"), 0, 0, 3),
                           Sample(T((), "float32"))]))


def _diag_samples(dt):
    return [Sample(_x(dt, (4,))), Sample(_x(dt, (4,)), 1), Sample(_x(dt, (4,)), -2), Sample(_x(dt, (3, 4))),
            Sample(_x(dt, (3, 4)), 1), Sample(_x(dt, (3, 4)), -2), Sample(_x(dt, (3, 4)), 5),
            Sample(_x(dt, (4, 3), layout="T"), diagonal=1), Sample(T((0,), dt))]


add(OpInfo("diag", _diag_samples, errors=lambda: [Sample(T((2, 2, 2), "float32")), Sample(T((), "float32"))]))
add(OpInfo("diagflat", lambda dt: [Sample(_x(dt, (3,))), Sample(_x(dt, (2, 2)), 1), Sample(T((), dt)),
                                   Sample(_x(dt, (3, 2), layout="T"), -1), Sample(_x(dt, (3,)), offset=2)]))
add(OpInfo("trace", lambda dt: [Sample(_x(dt, (3, 3))), Sample(_x(dt, (3, 4))), Sample(_x(dt, (4, 2), layout="T")),
                                Sample(T((0, 3), dt))],
           errors=lambda: [Sample(T((3,), "float32")), Sample(T((2, 2, 2), "float32"))]))


def _tri_idx_samples(dt):
    return [Sample(3, 3, dtype=DType(dt)), Sample(4, 3, 1, dtype=DType(dt)), Sample(3, 5, -1, dtype=DType(dt)),
            Sample(0, 3, dtype=DType(dt)), Sample(3, 3, 7, dtype=DType(dt)), Sample(3, 3, -9, dtype=DType(dt))] + \
        ([Sample(5, 4), Sample(row=2, col=6, offset=2)] if dt == "int64" else [])


_TRI_ERRORS = lambda: [Sample(-1, 3), Sample(3, -1), Sample(3, 3, dtype=DType("float32")),  # noqa: E731
                       Sample(3, 3, dtype=DType("bool"))]
add(OpInfo("tril_indices", _tri_idx_samples, dtypes=("int64", "int32"), errors=_TRI_ERRORS))
add(OpInfo("triu_indices", _tri_idx_samples, dtypes=("int64", "int32"), errors=_TRI_ERRORS))


# ================================================================ grids and combinations
def _mg(lib, *a, **k):
    return lib.meshgrid(*a, **k)


def _meshgrid_samples(dt):
    a, b, c = _x(dt, (3,), key=1), _x(dt, (4,), key=2), _x(dt, (2,), key=3)
    return [Sample(a, b, indexing="ij"), Sample(a, b, c, indexing="xy"), Sample(a, indexing="xy"), Sample(a, b, c),
            Sample([a, b], indexing="xy"), Sample(T((), dt), b, indexing="ij"), Sample(T((0,), dt), a, indexing="xy"),
            Sample(_x(dt, (6,), layout="step"), a, indexing="ij")]


add(OpInfo("meshgrid", _meshgrid_samples, function=_mg,
           errors=lambda: [Sample(T((2,), "float32"), T((2,), "int64"), indexing="ij"),
                           Sample(T((2, 2), "float32"), indexing="ij"), Sample(T((2,), "float32"), indexing="ji"),
                           Sample(indexing="ij")]))
add(OpInfo("cartesian_prod", lambda dt: [Sample(_x(dt, (3,), key=1), _x(dt, (2,), key=2)), Sample(_x(dt, (3,))),
                                         Sample(_x(dt, (2,), key=1), _x(dt, (3,), key=2), _x(dt, (2,), key=3)),
                                         Sample(_x(dt, (0,)), _x(dt, (2,)))],
           function=lambda lib, *a: lib.cartesian_prod(*a),
           errors=lambda: [Sample(T((2, 2), "float32")), Sample(T((2,), "float32"), T((2, 1), "float32"))]))


def _comb_samples(dt):
    x = _x(dt, (4,))
    return [Sample(x), Sample(x, 3), Sample(x, 2, True), Sample(x, 3, with_replacement=True), Sample(x, 0), Sample(x, 5),
            Sample(x, 1), Sample(T((0,), dt)), Sample(_x(dt, (8,), layout="step"), r=2)]


add(OpInfo("combinations", _comb_samples, errors=lambda: [Sample(T((2, 2), "float32")), Sample(T((3,), "float32"), -1)]))


# ================================================================ searching and counting
def _sorted(n, dt, key=0, shape=None):
    a = np.sort(np.random.default_rng(key).integers(-6, 7, size=shape or (n,)), axis=-1)
    if dt == "uint8":
        a = a + 6
    return T(a.shape, dt, data=a)


def _values(dt, shape, key=0):
    rng = np.random.default_rng(100 + key)
    a = rng.integers(-7, 8, size=shape).astype(np.float64)
    if dt in FLOATS:
        a = a + rng.choice([0.0, 0.5], size=shape)
    if dt == "uint8":
        a = a + 6
    return T(shape, dt, data=a)


def _bucketize_samples(dt):
    b = _sorted(6, dt)
    v = _values(dt, (3, 4))
    s = [Sample(v, b), Sample(v, b, right=True), Sample(v, b, out_int32=True), Sample(T((), dt), b),
         Sample(_values(dt, (4, 3), 1), _sorted(1, dt)), Sample(v, T((0,), dt)), Sample(v, boundaries=b, right=True)]
    if dt != "float64":
        s.append(Sample(v, _sorted(5, "float64", key=3)))
    return s


add(OpInfo("bucketize", _bucketize_samples, dtypes=NOT_BOOL,
           errors=lambda: [Sample(T((3,), "float32"), T((2, 2), "float32")),
                           Sample(T((3,), "bool"), T((2,), "bool"))]))
add(OpInfo("bucketize.Scalar", lambda dt: [Sample(2, _sorted(6, dt)), Sample(3, _sorted(6, dt), right=True),
                                           Sample(2.5, _sorted(6, dt), out_int32=True)], dtypes=NOT_BOOL,
           errors=lambda: [Sample(1, T((2, 2), "float32"))]))


def _searchsorted_samples(dt):
    seq = _sorted(6, dt)
    v = _values(dt, (3, 4))
    seq2 = _sorted(0, dt, key=1, shape=(3, 5))
    perm = np.array([3, 0, 5, 1, 4, 2])
    unsorted = T((6,), dt, data=np.asarray(seq.data)[np.argsort(perm)])
    sorter = _ix(np.argsort(np.asarray(unsorted.data), kind="stable"))
    s = [Sample(seq, v), Sample(seq, v, right=True), Sample(seq, v, side="right"), Sample(seq, v, side="left"),
         Sample(seq, v, out_int32=True), Sample(seq2, _values(dt, (3, 2), 2)), Sample(seq2, _values(dt, (3, 0), 3)),
         Sample(unsorted, v, sorter=sorter), Sample(seq, T((), dt, data=1)), Sample(T((0,), dt), v),
         Sample(sorted_sequence=seq, input=v, right=True, side="right")]
    if dt != "int64":
        s.append(Sample(seq, _values("int64", (2, 2), 4)))
    return s


def _searchsorted_errors():
    seq, v = T((4,), "float32", data=[1.0, 2.0, 3.0, 4.0]), T((3,), "float32")
    return [Sample(seq, v, side="mid"), Sample(seq, v, right=True, side="left"), Sample(T((), "float32"), v),
            Sample(T((2, 3), "float32"), T((3, 2), "float32")), Sample(T((2, 2), "float32"), T((), "float32")),
            Sample(seq, v, sorter=_ix([0, 1, 2])), Sample(seq, v, sorter=_ix([0, 1, 2, 4])),
            Sample(seq, v, sorter=_ix([0, 1, 2, 3], "int32")), Sample(T((2,), "bool"), T((2,), "bool"))]


add(OpInfo("searchsorted", _searchsorted_samples, dtypes=NOT_BOOL, errors=_searchsorted_errors))
add(OpInfo("searchsorted.Scalar", lambda dt: [Sample(_sorted(6, dt), 2), Sample(_sorted(6, dt), 2.5, right=True),
                                              Sample(_sorted(6, dt), 1, side="right", out_int32=True)], dtypes=NOT_BOOL,
           errors=lambda: [Sample(T((2, 2), "float32"), 1.0)]))


def _histc_samples(dt):
    x = _x(dt, (4, 5))
    s = [Sample(x), Sample(x, 5), Sample(x, 4, -2, 2), Sample(x, bins=3, min=0, max=0), Sample(T((0,), dt), 4),
         Sample(T((3,), dt, data=[1.0, 1.0, 1.0]), 2), Sample(_x(dt, (5, 4), layout="T"), 7, -5, 5),
         Sample(T((5,), dt, data=[0.0, 1.0, 2.0, 3.0, float("nan")]), 3, 0, 3),
         Sample(T((6,), dt, data=[-1.0, 0.0, 0.999, 1.0, 2.0, 5.0]), 4, 0, 2), Sample(_x(dt, (200,)), 13)]
    return s


add(OpInfo("histc", _histc_samples, dtypes=FLOATS,
           errors=lambda: [Sample(T((3,), "int64"), 3), Sample(T((3,), "float32"), 0), Sample(T((3,), "float32"), 3, 3, 1),
                           Sample(T((2,), "float32", data=[1.0, float("nan")]), 3),
                           Sample(T((2,), "float32", data=[1.0, float("inf")]), 3)]))


def _bincount_samples(dt):
    x = T((10,), dt, low=0, high=6)
    w = _x("float32", (10,), key=1)
    return [Sample(x), Sample(x, w), Sample(x, _x("float64", (10,), key=2)), Sample(x, _x("int64", (10,), key=3)),
            Sample(x, None, 9), Sample(x, minlength=2), Sample(T((0,), dt)), Sample(T((0,), dt), minlength=3),
            Sample(x, weights=_x("float16", (10,), key=4), minlength=1)]


add(OpInfo("bincount", _bincount_samples, dtypes=INTS,
           errors=lambda: [Sample(_ix([-1, 2])), Sample(_ix([[1, 2]])), Sample(_ix([1, 2]), T((3,), "float32")),
                           Sample(_ix([1, 2]), None, -1), Sample(T((2,), "float32")), Sample(T((2,), "bool"))]))


# ================================================================ distances and products
def _cdist_samples(dt):
    a, b = _x(dt, (3, 4), key=1), _x(dt, (5, 4), key=2)
    return [Sample(a, b), Sample(a, b, 1.0), Sample(a, b, 0.0), Sample(a, b, float("inf")), Sample(a, b, 0.5),
            Sample(a, b, 3.0), Sample(_x(dt, (2, 3, 4), key=3), _x(dt, (1, 5, 4), key=4)),
            Sample(_x(dt, (30, 3), key=5), _x(dt, (4, 3), key=6)),
            Sample(a, b, compute_mode="use_mm_for_euclid_dist"), Sample(a, b, 2.0, "donot_use_mm_for_euclid_dist"),
            Sample(_x(dt, (30, 3), key=5), _x(dt, (4, 3), key=6), compute_mode="donot_use_mm_for_euclid_dist"),
            Sample(a, a), Sample(_x(dt, (0, 4)), b), Sample(_x(dt, (3, 0)), _x(dt, (2, 0))),
            Sample(_x(dt, (4, 3), layout="T"), b)]


def _cdist_fn(lib, *a, **k):
    return lib.cdist(*a, **k)


add(OpInfo("cdist", _cdist_samples, dtypes=F2, tol={"float32": (1e-5, 1e-5), "float64": (1e-10, 1e-10)},
           errors=lambda: [Sample(T((3,), "float32"), T((3, 3), "float32")), Sample(T((3, 2), "float32"), T((3, 3), "float32")),
                           Sample(T((3, 2), "int64"), T((3, 2), "int64")), Sample(T((3, 2), "float32"), T((3, 2), "float32"), -1.0),
                           Sample(T((3, 2), "float32"), T((3, 2), "float64")), Sample(T((3, 2), "float16"), T((3, 2), "float16")),
                           Sample(T((3, 2), "float32"), T((3, 2), "float32"), compute_mode="foo")]))


def _cross_samples(dt):
    a, b = _x(dt, (4, 3), key=1, low=-3, high=3), _x(dt, (4, 3), key=2, low=-3, high=3)
    return [Sample(a, b, dim=1), Sample(a, b, dim=-1), Sample(_x(dt, (1, 3), low=-3, high=3), b, dim=1),
            Sample(_x(dt, (3, 4), key=3, low=-3, high=3), _x(dt, (3, 4), key=4, low=-3, high=3)),
            Sample(_x(dt, (3, 4), layout="T", low=-3, high=3), b, 1), Sample(a, b, 1)]


add(OpInfo("cross", _cross_samples, dtypes=NOT_BOOL,
           errors=lambda: [Sample(T((2, 2), "float32"), T((2, 2), "float32")),
                           Sample(T((4, 3), "float32"), T((4, 3), "float64"), dim=1),
                           Sample(T((4, 3), "bool"), T((4, 3), "bool"), dim=1),
                           Sample(T((3,), "float32"), T((2, 3), "float32"), dim=-1)]))


def _lcross_samples(dt):
    a, b = _x(dt, (4, 3), key=1, low=-3, high=3), _x(dt, (4, 3), key=2, low=-3, high=3)
    return [Sample(a, b), Sample(_x(dt, (3, 4), key=3, low=-3, high=3), _x(dt, (3, 4), key=4, low=-3, high=3), dim=0),
            Sample(_x(dt, (1, 3), low=-3, high=3), b), Sample(_x(dt, (2, 3, 2), low=-3, high=3), _x(dt, (1, 3, 2), key=5, low=-3, high=3), dim=1)]


add(OpInfo("linalg_cross", _lcross_samples, dtypes=NOT_BOOL, function=lambda lib, *a, **k: lib.linalg.cross(*a, **k),
           errors=lambda: [Sample(T((3,), "float32"), T((2, 3), "float32")), Sample(T((4, 2), "float32"), T((4, 2), "float32")),
                           Sample(T((4, 3), "float32"), T((4, 3), "float32"), dim=2)]))


# ================================================================ resampling (ember.nn.functional)
def _nnf(lib):
    if is_torch(lib):
        return lib.nn.functional
    import ember.nn._functional_shape as m
    return m


def _interp(lib, x, *a, **k):
    return _nnf(lib).interpolate(x, *a, **k)


def _interp_samples(dt):
    x1, x2, x3 = _x(dt, (2, 3, 5)), _x(dt, (2, 3, 4, 5)), _x(dt, (1, 2, 3, 4, 3))
    s = []
    for x, modes in ((x1, ("nearest", "nearest-exact", "linear", "area")),
                     (x2, ("nearest", "nearest-exact", "bilinear", "bicubic", "area")),
                     (x3, ("nearest", "nearest-exact", "trilinear", "area"))):
        k = x.dim() - 2 if hasattr(x, "dim") else len(x.shape) - 2
        for mode in modes:
            interp = mode not in ("nearest", "nearest-exact", "area")
            aligns = (False, True) if interp else (None,)
            for ac in aligns:
                kw = {} if ac is None else {"align_corners": ac}
                s += [Sample(x, size=tuple(7 - i for i in range(k)), mode=mode, **kw),
                      Sample(x, size=3, mode=mode, **kw), Sample(x, scale_factor=1.7, mode=mode, **kw),
                      Sample(x, scale_factor=0.6, mode=mode, **kw), Sample(x, scale_factor=2, mode=mode, **kw),
                      Sample(x, scale_factor=[2.3] * k, mode=mode, recompute_scale_factor=True, **kw)]
    s += [Sample(x2, (6, 2)), Sample(_x(dt, (2, 3, 5, 4), layout="T"), size=(3, 7), mode="bilinear"),
          Sample(x2, scale_factor=(1.5, 0.75), mode="bicubic", align_corners=False),
          Sample(_x(dt, (1, 2, 4, 3)), scale_factor=(1.0, 2.3), mode="nearest"),
          Sample(x1, size=5, mode="linear"), Sample(x2, size=(4, 5), mode="bicubic", align_corners=True)]
    # antialias (an output width of 1 is left out: torch's CPU kernel then repeats the first row)
    x2b = _x(dt, (2, 3, 9, 11), key=7)
    for mode in ("bilinear", "bicubic"):
        for ac in (False, True):
            s += [Sample(x2b, size=(4, 5), mode=mode, align_corners=ac, antialias=True),
                  Sample(x2b, scale_factor=(0.45, 1.7), mode=mode, align_corners=ac, antialias=True),
                  Sample(x2b, scale_factor=2.5, mode=mode, align_corners=ac, antialias=True),
                  Sample(x2b, size=(3, 2), mode=mode, align_corners=ac, antialias=True, recompute_scale_factor=None)]
    return s


def _interp_errors():
    x = T((1, 2, 4, 4), "float32")
    return [Sample(x, size=3, scale_factor=2.0), Sample(x), Sample(x, size=(3,)), Sample(x, scale_factor=(2.0,)),
            Sample(x, size=3, mode="nearest", align_corners=True), Sample(x, size=3, mode="linear"),
            Sample(x, size=3, mode="trilinear"), Sample(x, size=3, mode="foo"), Sample(T((2, 4), "float32"), size=3),
            Sample(x, size=3, recompute_scale_factor=True), Sample(x, size=(0, 3)), Sample(x, size=(3.5, 3)),
            Sample(T((1, 2, 4), "float32"), size=3, mode="bicubic", antialias=True),
            Sample(T((1, 2, 4), "float32"), size=3, mode="linear", antialias=True),
            Sample(x, size=3, mode="nearest", antialias=True),
            Sample(T((1, 2, 4, 4), "int64"), size=3, mode="bilinear")]


add(OpInfo("upsample", _interp_samples, dtypes=F2, function=_interp, errors=_interp_errors,
           tol={"float32": (1e-5, 1e-5), "float64": (1e-10, 1e-10)}))


def _grid_sample(lib, x, g, *a, **k):
    return _nnf(lib).grid_sample(x, g, *a, **k)


def _grid_samples(dt):
    s = []
    for k in (2, 3):
        x = _x(dt, (2, 3) + (4, 5, 3)[3 - k:], key=k)
        g = T((2,) + (3, 2, 4)[3 - k:] + (k,), dt, low=-1.4, high=1.4, key=10 + k)
        for mode in ("bilinear", "nearest"):
            for pad in ("zeros", "border", "reflection"):
                for ac in (False, True):
                    s.append(Sample(x, g, mode=mode, padding_mode=pad, align_corners=ac))
    x, g = _x(dt, (2, 3, 4, 5), key=5), T((2, 3, 2, 2), dt, low=-1.4, high=1.4, key=15)
    for pad in ("zeros", "border", "reflection"):
        for ac in (False, True):
            s.append(Sample(x, g, mode="bicubic", padding_mode=pad, align_corners=ac))
    s += [Sample(_x(dt, (1, 2, 1, 1)), T((1, 2, 2, 2), dt, low=-2, high=2), "bilinear", "reflection", True),
          Sample(_x(dt, (1, 2, 1, 2)), T((1, 2, 2, 2), dt, low=-2, high=2), "bicubic", "reflection", True),
          Sample(_x(dt, (1, 2, 5, 4), layout="T"), T((1, 3, 3, 2), dt, low=-1, high=1), align_corners=False),
          Sample(_x(dt, (1, 1, 3, 3)), T((1, 1, 3, 2), dt, data=[[[[0.0, 0.0], [1.0, -1.0], [-3.0, 2.5]]]]), align_corners=True)]
    return s


def _grid_errors():
    x = T((1, 2, 4, 4), "float32")
    g = T((1, 3, 3, 2), "float32")
    return [Sample(x, g, mode="foo"), Sample(x, g, padding_mode="foo"), Sample(x, T((1, 3, 3, 2), "float64")),
            Sample(x, T((2, 3, 3, 2), "float32")), Sample(x, T((1, 3, 3, 3), "float32")),
            Sample(T((1, 2, 0, 4), "float32"), g), Sample(T((1, 2, 4), "float32"), T((1, 3, 2), "float32")),
            Sample(T((1, 2, 2, 2, 2), "float32"), T((1, 1, 1, 1, 3), "float32"), mode="bicubic")]


add(OpInfo("grid_sampler", _grid_samples, dtypes=F2, function=_grid_sample, errors=_grid_errors,
           tol={"float32": (1e-5, 1e-5), "float64": (1e-10, 1e-10)}))


def _grid_fused(lib, x, g, mode, pad, ac):
    """the fused 2-D op: ember's internal entry, torch's aten.grid_sampler_2d (the same arguments)."""
    if not is_torch(lib):
        import ember
        return ember._C._ops._grid_sampler_2d_fused(x, g, mode, pad, ac)
    return lib.grid_sampler_2d(x, g, mode, pad, ac)


def _grid_fused_samples(dt):
    x, g = _x(dt, (2, 3, 4, 5), key=3), T((2, 3, 2, 2), dt, low=-1.4, high=1.4, key=13)
    s = [Sample(x, g, mode, pad, ac) for mode in (0, 1) for pad in (0, 1, 2) for ac in (False, True)]
    s += [Sample(_x(dt, (1, 2, 5, 4), layout="T"), T((1, 3, 3, 2), dt, low=-1, high=1), 0, 0, False),
          Sample(_x(dt, (0, 2, 3, 3)), T((0, 2, 2, 2), dt), 0, 1, False),
          Sample(_x(dt, (1, 2, 3, 3)), T((1, 1, 4, 2), dt, data=[[[[float("nan"), 0.0], [0.0, float("inf")],
                                                                    [1e20, 0.1], [-0.3, 0.2]]]]), 0, 0, True)]
    return s


add(OpInfo("grid_sampler_2d_fused", _grid_fused_samples, dtypes=F2, function=_grid_fused))


def _affine_grid(lib, theta, size, *a, **k):
    return _nnf(lib).affine_grid(theta, size, *a, **k)


def _affine_samples(dt):
    t2, t3 = _x(dt, (2, 2, 3)), _x(dt, (2, 3, 4))
    return [Sample(t2, [2, 3, 4, 5], False), Sample(t2, (2, 1, 3, 1), True), Sample(t2, [2, 3, 1, 4], False),
            Sample(t3, [2, 1, 3, 4, 2], True), Sample(t3, [2, 1, 3, 4, 2], align_corners=False), Sample(t2, [2, 3, 4, 5])]


add(OpInfo("affine_grid_generator", _affine_samples, dtypes=F2, function=_affine_grid,
           errors=lambda: [Sample(T((2, 2, 3), "int64"), [2, 3, 4, 5], False), Sample(T((2, 3, 3), "float32"), [2, 3, 4, 5], False),
                           Sample(T((2, 2, 3), "float32"), [2, 3, 4], False), Sample(T((2, 2, 3), "float32"), [2, 3, 0, 5], False)]))


# ================================================================ random
def _normal_tt(dt):
    return [Sample(_x(dt, (3, 4)), _x(dt, (3, 4), low=0.5, high=2, key=1)), Sample(_x(dt, (2, 1)), _x(dt, (3,), low=0.5, high=2)),
            Sample(T((), dt), T((), dt, low=0.5, high=2)), Sample(mean=_x(dt, (2,)), std=_x(dt, (2,), low=0, high=1))]


add(OpInfo("normal.Tensor_Tensor", _normal_tt, values=False, dtypes=FLOATS,
           errors=lambda: [Sample(T((3,), "float32"), T((3,), "float32", data=[1.0, -1.0, 1.0])),
                           Sample(T((3,), "int64"), T((3,), "int64", low=1, high=2))]))
add(OpInfo("normal.Tensor_float", lambda dt: [Sample(_x(dt, (3, 4))), Sample(_x(dt, (3, 4)), 2.0), Sample(T((), dt), 0.5),
                                              Sample(T((0,), dt)), Sample(mean=_x(dt, (2,)), std=3)],
           values=False, dtypes=FLOATS, errors=lambda: [Sample(T((3,), "float32"), -1.0), Sample(T((3,), "int64"), 1.0)]))
add(OpInfo("normal.float_Tensor", lambda dt: [Sample(1.5, _x(dt, (3, 4), low=0, high=2)), Sample(0, T((), dt, low=0, high=1)),
                                              Sample(mean=-1.0, std=_x(dt, (2,), low=0, high=1))],
           values=False, dtypes=FLOATS, errors=lambda: [Sample(0.0, T((2,), "float32", data=[-1.0, 1.0]))]))
add(OpInfo("normal.float_float", lambda dt: [Sample(0.0, 1.0, (3, 4), dtype=DType(dt)), Sample(2, 3, size=(2,), dtype=DType(dt)),
                                             Sample(1.0, 0.5, (0,), dtype=DType(dt))] + ([Sample(0.0, 1.0, (5,))] if dt == "float32" else []),
           values=False, dtypes=FLOATS, errors=lambda: [Sample(0.0, -1.0, (3,))]))
add(OpInfo("poisson", lambda dt: [Sample(_x(dt, (3, 4), low=0, high=5)), Sample(T((), dt, low=0, high=3)),
                                  Sample(_x(dt, (200,), low=20, high=40)), Sample(T((0,), dt))],
           values=False, dtypes=FLOATS, errors=lambda: [Sample(T((3,), "int64"))]))
add(OpInfo("bernoulli.p", lambda dt: [Sample(_x(dt, (3, 4)), 0.5), Sample(T((), dt), 0.2), Sample(_x(dt, (3, 4)), p=1.0),
                                      Sample(_x(dt, (4, 3), layout="T"), 0.0)],
           values=False, errors=lambda: [Sample(T((3,), "float32"), 1.5)]))
add(OpInfo("bernoulli_.float", lambda dt: [Sample(_x(dt, (3, 4))), Sample(_x(dt, (3, 4)), 0.3), Sample(T((), dt), p=0.7),
                                           Sample(_x(dt, (4, 3), layout="T"), 1.0), Sample(T((0,), dt))],
           values=False, errors=lambda: [Sample(T((3,), "float32"), -0.5)]))
add(OpInfo("random_.to", lambda dt: [Sample(_x(dt, (3, 4)), 2), Sample(T((), dt), 1), Sample(_x(dt, (4, 3), layout="T"), to=2),
                                     Sample(T((0,), dt), 2)],
           values=False, errors=lambda: [Sample(T((3,), "float32"), 0), Sample(T((3,), "uint8"), 300)]))


# ================================================================ overloads of the schema gaps
def _unbiased_samples(dt):
    x = _x(dt, (3, 4))
    return [Sample(x, False), Sample(x, True), Sample(T((), dt), True), Sample(T((1,), dt), False), Sample(T((0,), dt), True),
            Sample(_x(dt, (4, 3), layout="T"), unbiased=False)]


_VAR_TOL = {"float16": (2e-3, 1e-3), "bfloat16": (3e-2, 1e-2), "float32": (1e-5, 1e-5)}
for _n in ("var.unbiased", "std.unbiased", "var_mean.unbiased", "std_mean.unbiased"):
    add(OpInfo(_n, _unbiased_samples, tol=_VAR_TOL, errors=lambda: [Sample(T((3,), "int64"), True)]))


def _norm_str_samples(dt):
    x, x3 = _x(dt, (3, 4)), _x(dt, (2, 3, 4))
    return [Sample(x), Sample(x, "fro"), Sample(x, "fro", 1), Sample(x, "fro", (0, 1), True), Sample(x3, "fro", (0, 2)),
            Sample(x, "nuc"), Sample(x3, "nuc", (2, 0)), Sample(x3, "nuc", (0, 1), True), Sample(x, p="fro", dim=0),
            Sample(x, dim=1, keepdim=True), Sample(_x(dt, (4, 3), layout="T"), "nuc"), Sample(x, "fro", dtype=DType("float64")),
            Sample(x3, dim=(0, 1, 2)), Sample(x3, "nuc"), Sample(x, "abc"), Sample(T((3,), dt), "nuc")]


add(OpInfo("norm.str", _norm_str_samples, dtypes=FLOATS,
           tol={"float16": (2e-3, 1e-3), "bfloat16": (3e-2, 1e-2), "float32": (1e-5, 1e-5), "float64": (1e-10, 1e-10)},
           out_filter=lambda s, dt: "dtype" not in s.kwargs))


def _arange_end_samples(dt):
    s = [Sample(end=5, dtype=DType(dt)), Sample(end=0, dtype=DType(dt)), Sample(end=True, dtype=DType(dt))]
    if dt in FLOATS:
        s.append(Sample(end=2.5, dtype=DType(dt)))
    if dt == "float32":
        s += [Sample(end=4), Sample(end=3.5), Sample(end=-1.0)]
    return s


add(OpInfo("arange.end", _arange_end_samples, errors=lambda: [Sample(end=-1), Sample(end=float("inf"))],
           out_filter=lambda s, dt: "dtype" not in s.kwargs))


def _where_scalar_samples(dt, which):
    c = T((3, 4), "bool", key="c")
    x = _x(dt, (3, 4), key="w")
    nums = [2, 1.5, True, -3] if dt != "bool" else [True, 0]
    s = []
    for v in nums:
        if which == "self":
            s += [Sample(c, v, x), Sample(T((4,), "bool"), v, x)]
        elif which == "other":
            s += [Sample(c, x, v), Sample(c, T((), dt), v)]
        else:
            s += [Sample(c, v, 2.5), Sample(c, v, -1), Sample(T((), "bool", data=True), v, False)]
    return s


add(OpInfo("where.ScalarSelf", lambda dt: _where_scalar_samples(dt, "self"),
           errors=lambda: [Sample(T((3,), "float32"), 1.0, T((3,), "float32"))]))
add(OpInfo("where.ScalarOther", lambda dt: _where_scalar_samples(dt, "other"),
           errors=lambda: [Sample(T((3,), "bool"), T((2,), "float32"), 1.0)]))
add(OpInfo("where.Scalar", lambda dt: _where_scalar_samples(dt, "both") if dt == "float32" else [],
           errors=lambda: [Sample(T((3,), "int64"), 1.0, 2.0)]))
add(OpInfo("where.cond", lambda dt: _nonzero_like(dt)))


def _upsample_backward(lib, g, input_size, output_size, mode, align_corners=False, scale=None):
    """interpolate's input gradient for grad_output g: ember's op, torch's through autograd."""
    if not is_torch(lib):
        import ember
        scales = [scale] * len(output_size) if scale else []
        scales += [None] * (3 - len(scales))
        return ember._C._ops._upsample_backward(g, input_size, output_size, mode, align_corners, *scales)
    x = lib.zeros(input_size, dtype=g.dtype, requires_grad=True)
    kw = {} if mode in ("nearest", "nearest-exact", "area") else {"align_corners": align_corners}
    if scale:
        y = lib.nn.functional.interpolate(x, scale_factor=scale, mode=mode, **kw)
    else:
        y = lib.nn.functional.interpolate(x, size=output_size, mode=mode, **kw)
    return lib.autograd.grad(y, x, g)[0]


def _upsample_backward_samples(dt):
    s = []
    for shape_in, shape_out, mode in (((2, 3, 5), (2, 3, 8), "linear"), ((2, 3, 4, 5), (2, 3, 7, 3), "bilinear"),
                                      ((2, 3, 4, 5), (2, 3, 3, 9), "bicubic"), ((1, 2, 3, 4, 3), (1, 2, 5, 2, 4), "trilinear"),
                                      ((2, 3, 4, 5), (2, 3, 7, 3), "nearest"), ((2, 3, 5), (2, 3, 8), "nearest-exact"),
                                      ((2, 3, 4, 5), (2, 3, 3, 7), "area"), ((1, 2, 3, 4, 3), (1, 2, 2, 5, 3), "nearest")):
        g = _x(dt, shape_out, key=len(s))
        s.append(Sample(g, list(shape_in), list(shape_out[2:]), mode))
        if mode not in ("nearest", "nearest-exact", "area"):
            s.append(Sample(g, list(shape_in), list(shape_out[2:]), mode, True))
    s.append(Sample(_x(dt, (1, 2, 6, 9)), [1, 2, 3, 4], [6, 9], "bilinear", False, 2.3))
    s.append(Sample(_x(dt, (1, 2, 6, 9)), [1, 2, 3, 4], [6, 9], "nearest", False, 2.3))
    return s


add(OpInfo("upsample_backward", _upsample_backward_samples, dtypes=F2, function=_upsample_backward,
           tol={"float32": (1e-5, 1e-5), "float64": (1e-10, 1e-10)}))
