"""OpInfos of the sparse COO ops (imported at the end of opdb.py). The samples are dense (indices and
values); each function builds the sparse tensor in the library under test and returns strided
results, so the parity harness compares them as usual. Sparse-specific behaviour (printing, sparse
gradients, optimizers, the refusals of other ops) is in test_sparse.py."""
from opdb import OpInfo, add
from parity import ALL_DTYPES, Sample, T

_IDX = T((2, 5), "int64", data=[[0, 1, 1, 0, 2], [2, 0, 2, 2, 1]])  # (0, 2) twice
_IDX1 = T((1, 4), "int64", data=[[3, 0, 3, 1]])
_SIZE = (3, 3)


def _samples(dt):
    return [Sample(_IDX, T((5,), dt), _SIZE), Sample(_IDX1, T((4, 2), dt, key=1), (4, 2)),
            Sample(T((2, 0), "int64", data=[[], []]), T((0,), dt, key=2), (2, 3))]


def _coo(lib, i, v, size):
    return lib.sparse_coo_tensor(i, v, size)


def _bad():
    # (an index past the size raises in Ember but not in torch, whose invariant checks are off by
    # default: test_sparse.py covers it)
    return [Sample(T((1, 2), "int64", data=[[0, 1]]), T((3,), "float32"), (3,)),
            Sample(T((2,), "int64", data=[0, 1]), T((2,), "float32"), (3,))]


add(OpInfo("_sparse_coo_tensor", _samples, dtypes=ALL_DTYPES, method=False, inplace=False, out=False,
           function=lambda lib, i, v, size: _coo(lib, i, v, size).to_dense(), errors=_bad))
add(OpInfo("_indices", _samples, dtypes=ALL_DTYPES, method=False, inplace=False, out=False,
           function=lambda lib, i, v, size: _coo(lib, i, v, size)._indices()))
add(OpInfo("_values", _samples, dtypes=ALL_DTYPES, method=False, inplace=False, out=False,
           function=lambda lib, i, v, size: _coo(lib, i, v, size)._values()))
add(OpInfo("_coalesced_indices", _samples, dtypes=ALL_DTYPES, method=False, inplace=False, out=False,
           function=lambda lib, i, v, size: _coo(lib, i, v, size).coalesce().indices()))
add(OpInfo("_coalesced_values", _samples, dtypes=ALL_DTYPES, method=False, inplace=False, out=False,
           function=lambda lib, i, v, size: _coo(lib, i, v, size).coalesce().values()))
add(OpInfo("coalesce", _samples, dtypes=ALL_DTYPES, method=False, inplace=False, out=False,
           function=lambda lib, i, v, size: _coo(lib, i, v, size).coalesce()._values()))
add(OpInfo("_to_dense", _samples, dtypes=ALL_DTYPES, method=False, inplace=False, out=False,
           function=lambda lib, i, v, size: _coo(lib, i, v, size).to_dense()))
add(OpInfo("_to_sparse_coo", lambda dt: [Sample(T((3, 4), dt, low=-1, high=1)), Sample(T((2, 3, 2), dt, key=1)),
                                         Sample(T((0, 2), dt))],
           dtypes=ALL_DTYPES, method=False, inplace=False, out=False,
           function=lambda lib, x: x.to_sparse()._values()))
add(OpInfo("sparse_mask", lambda dt: [Sample(T((3, 3), dt), _IDX, T((5,), dt, key=1))],
           dtypes=ALL_DTYPES, method=False, inplace=False, out=False,
           function=lambda lib, x, i, v: x.sparse_mask(lib.sparse_coo_tensor(i, v, (3, 3)).coalesce())._values()))
