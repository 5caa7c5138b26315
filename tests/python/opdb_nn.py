"""OpInfos for the NN-core and linear-algebra ops (imported at the end of opdb.py)."""
from opdb import OpInfo, add
from parity import Sample, T
from rnn_ref import gru_cell as _gru_cell, lstm_cell as _lstm_cell, lstm_seq as _lstm_seq

F2 = ("float32", "float64")
TOL = {"float32": (1e-4, 1e-5), "float64": (1e-7, 1e-9)}


def _x(shape, dt, key=0, **kw):
    return T(shape, dt, low=-2, high=2, key=key, **kw)


def _fn(name):
    """Call ember._C._ops._<name> / torch.ops.aten.<name> for ops Python only reaches internally."""
    def f(lib, *a, **k):
        import ember
        if lib is ember:
            return getattr(ember._C._ops, "_" + name)(*a, **k)
        return getattr(lib.ops.aten, name)(*a, **k)
    return f


add(OpInfo("softmax", lambda dt: [Sample(_x((3, 5), dt), 1), Sample(_x((3, 5), dt), 0), Sample(_x((2, 3, 4), dt), 1),
                                   Sample(_x((4, 6), dt, layout="T"), -1), Sample(_x((), dt), 0),
                                   Sample(_x((2, 3), dt), 1, dtype=T((), "float64").dtype and None)],
           dtypes=F2, tol=TOL, errors=lambda: [Sample(T((3,), "int64"), 0), Sample(T((3,), "float32"), 2)]))
add(OpInfo("log_softmax", lambda dt: [Sample(_x((3, 5), dt), 1), Sample(_x((3, 5), dt), 0), Sample(_x((2, 3, 4), dt), 1),
                                       Sample(_x((4, 6), dt, layout="T"), -1), Sample(_x((), dt), 0)],
           dtypes=F2, tol=TOL, errors=lambda: [Sample(T((3,), "float32"), 2)]))
add(OpInfo("native_layer_norm", lambda dt: [Sample(_x((3, 4), dt), [4], _x((4,), dt, 1), _x((4,), dt, 2), 1e-5),
                                             Sample(_x((2, 3, 4), dt), [3, 4], None, None, 1e-5)],
           dtypes=F2, tol=TOL, function=lambda lib, *a: lib.native_layer_norm(*a)))
add(OpInfo("layer_norm", lambda dt: [Sample(_x((3, 4), dt), [4], _x((4,), dt, 1), _x((4,), dt, 2)),
                                      Sample(_x((2, 3, 4), dt), [3, 4]), Sample(_x((5, 4), dt, layout="T"), [5])],
           dtypes=F2, tol=TOL, errors=lambda: [Sample(T((3, 4), "float32"), [3]),
                                               Sample(T((3, 4), "float32"), [4], T((3,), "float32"))]))
add(OpInfo("native_batch_norm", lambda dt: [Sample(_x((4, 3, 2), dt), _x((3,), dt, 1), _x((3,), dt, 2), None, None,
                                                    True, 0.1, 1e-5)],
           dtypes=F2, tol=TOL, function=lambda lib, *a: lib.native_batch_norm(*a)))
add(OpInfo("batch_norm", lambda dt: [Sample(_x((4, 3, 2), dt), _x((3,), dt, 1), _x((3,), dt, 2), None, None,
                                             True, 0.1, 1e-5, False),
                                      Sample(_x((4, 3), dt), None, None, T((3,), dt, low=-1, high=1, key=3),
                                             T((3,), dt, low=0.5, high=2, key=4), False, 0.1, 1e-5, False)],
           dtypes=F2, tol=TOL))


# The backward ops the autograd formulas call (ember._C._ops only), against torch's aten ops.
def _softmax_bwd(log):
    def f(lib, g, y, dim):
        import ember
        name = "_log_softmax_backward_data" if log else "_softmax_backward_data"
        return getattr(ember._C._ops if lib is ember else lib.ops.aten, name)(g, y, dim, y.dtype)
    return f


def _layer_norm_bwd(lib, g, x, shape, w, b):
    import ember
    _, mean, rstd = lib.native_layer_norm(x, shape, w, b, 1e-5)
    if lib is ember:
        return ember._C._ops._native_layer_norm_backward(g, x, shape, mean, rstd, w, b, True, True, True)
    return lib.ops.aten.native_layer_norm_backward(g, x, shape, mean, rstd, w, b, [True, True, True])


def _batch_norm_bwd(lib, g, x, w, rm, rv, train):
    import ember
    _, save_mean, save_invstd = lib.native_batch_norm(x, w, None, rm, rv, train, 0.1, 1e-5)
    if not train:
        save_mean = save_invstd = None
    args = (g, x, w, rm, rv, save_mean, save_invstd, train, 1e-5)
    if lib is ember:
        return ember._C._ops._native_batch_norm_backward(*args, True, w is not None, True)
    return lib.ops.aten.native_batch_norm_backward(*args, [True, w is not None, True])


for _log in (False, True):
    add(OpInfo("_log_softmax_backward_data" if _log else "_softmax_backward_data", lambda dt: [
        Sample(_x((3, 5), dt, 1), _x((3, 5), dt), 1), Sample(_x((2, 3, 4), dt, 1), _x((2, 3, 4), dt), 0),
        Sample(_x((4, 6), dt, 1), _x((4, 6), dt, layout="T"), -1), Sample(_x((0, 3), dt, 1), _x((0, 3), dt), 1)],
        dtypes=F2, tol=TOL, function=_softmax_bwd(_log),
        errors=lambda: [Sample(T((3, 4), "float32"), T((3, 4), "float32"), 2)]))
add(OpInfo("native_layer_norm_backward", lambda dt: [
    Sample(_x((3, 4), dt, 1), _x((3, 4), dt), [4], _x((4,), dt, 2), _x((4,), dt, 3)),
    Sample(_x((2, 3, 4), dt, 1), _x((2, 3, 4), dt, layout="T"), [3, 4], _x((3, 4), dt, 2), _x((3, 4), dt, 3)),
    Sample(_x((0, 4), dt, 1), _x((0, 4), dt), [4], _x((4,), dt, 2), _x((4,), dt, 3))],
    dtypes=F2, tol=TOL, function=_layer_norm_bwd))
add(OpInfo("native_batch_norm_backward", lambda dt: [
    Sample(_x((4, 3, 2), dt, 1), _x((4, 3, 2), dt), _x((3,), dt, 2), None, None, True),
    Sample(_x((5, 3), dt, 1), _x((5, 3), dt), None, None, None, True),
    Sample(_x((4, 3, 2, 2), dt, 1), _x((4, 3, 2, 2), dt), _x((3,), dt, 2), T((3,), dt, low=-1, high=1, key=3),
           T((3,), dt, low=0.5, high=2, key=4), False)],
    dtypes=F2, tol=TOL, function=_batch_norm_bwd))
add(OpInfo("linear", lambda dt: [Sample(_x((3, 4), dt), _x((5, 4), dt, 1), _x((5,), dt, 2)),
                                  Sample(_x((2, 3, 4), dt), _x((5, 4), dt, 1)), Sample(_x((4,), dt), _x((5, 4), dt, 1))],
           dtypes=F2, tol=TOL, errors=lambda: [Sample(T((3, 4), "float32"), T((5, 3), "float32"))],
           function=lambda lib, *a: (lib._C._ops._linear if lib.__name__ == "ember" else lib.nn.functional.linear)(*a)))
_IDX = T((2, 3), "int64", data=[[0, 1, 2], [2, 0, 1]])
add(OpInfo("gather", lambda dt: [Sample(_x((3, 3), dt), 0, _IDX), Sample(_x((3, 3), dt), 1, _IDX),
                                  Sample(_x((3, 4), dt, layout="T"), 1, T((2, 2), "int64", data=[[0, 2], [1, 1]]))],
           dtypes=F2 + ("int64",), errors=lambda: [Sample(T((3, 3), "float32"), 0, T((2, 3), "int64", data=[[0, 1, 3], [0, 0, 0]])),
                                                   Sample(T((3, 3), "float32"), 0, T((3,), "int64", data=[0, 1, 2]))]))
add(OpInfo("scatter", lambda dt: [Sample(_x((3, 3), dt), 0, _IDX, _x((2, 3), dt, 1)),
                                   Sample(_x((3, 3), dt), 1, T((2, 2), "int64", data=[[0, 2], [1, 0]]), _x((2, 2), dt, 1))],
           dtypes=F2 + ("int64",)))
add(OpInfo("scatter.value", lambda dt: [Sample(_x((3, 3), dt), 0, _IDX, 2), Sample(_x((3, 4), dt), 1, _IDX, -1),
                                         Sample(_x((3, 3), dt), 0, T((2, 3), "int32", data=[[0, 1, 2], [2, 0, 1]]), 1)],
           dtypes=F2 + ("int64", "bool"),
           errors=lambda: [Sample(T((3, 3), "float32"), 0, T((2, 3), "int64", data=[[0, 1, 3], [0, 0, 0]]), 1.0),
                           Sample(T((3, 3), "float32"), 0, T((2, 3), "float32"), 1.0)]))
add(OpInfo("scatter.reduce", lambda dt: [Sample(_x((3, 3), dt), 0, _IDX, _x((2, 3), dt, 1), reduce="add"),
                                          Sample(_x((3, 3), dt), 1, _IDX, _x((2, 3), dt, 1), reduce="multiply")],
           dtypes=F2 + ("int64",),
           errors=lambda: [Sample(T((3, 3), "float32"), 0, _IDX, T((2, 3), "float32"), reduce="sum")]))
add(OpInfo("scatter.value_reduce", lambda dt: [Sample(_x((3, 3), dt), 0, _IDX, 2, reduce="add"),
                                                Sample(_x((3, 3), dt), 1, _IDX, 3, reduce="multiply")],
           dtypes=F2 + ("int64",),
           errors=lambda: [Sample(T((3, 3), "float32"), 0, _IDX, 1.0, reduce="mean")]))
add(OpInfo("scatter_add", lambda dt: [Sample(_x((3, 3), dt), 0, _IDX, _x((2, 3), dt, 1)),
                                       Sample(_x((3, 3), dt), 1, T((2, 3), "int64", data=[[0, 0, 2], [1, 1, 1]]),
                                              _x((2, 3), dt, 1))],
           dtypes=F2 + ("int64",)))
add(OpInfo("index_add", lambda dt: [Sample(_x((4, 3), dt), 0, T((2,), "int64", data=[0, 3]), _x((2, 3), dt, 1)),
                                     Sample(_x((4, 3), dt), 1, T((3,), "int64", data=[0, 0, 2]), _x((4, 3), dt, 1), alpha=2)],
           dtypes=F2 + ("int64",)))
_CONV_ERR = [Sample(T((1, 3, 5, 5), "float32"), T((4, 2, 3, 3), "float32")),
             Sample(T((1, 3, 2, 2), "float32"), T((4, 3, 3, 3), "float32"))]
add(OpInfo("im2col", lambda dt: [Sample(_x((2, 3, 5, 4), dt), [2, 2], [1, 1], [1, 0], [2, 1])], dtypes=F2,
           function=_fn("im2col")))
add(OpInfo("col2im", lambda dt: [Sample(_x((2, 12, 12), dt), [5, 4], [2, 2], [1, 1], [1, 0], [2, 1])], dtypes=F2,
           function=_fn("col2im")))
add(OpInfo("convolution", lambda dt: [Sample(_x((2, 4, 6, 5), dt), _x((6, 2, 3, 3), dt, 1), _x((6,), dt, 2), [2, 1],
                                              [1, 1], [1, 2], False, [0, 0], 2),
                                       Sample(_x((2, 4, 3, 3), dt), _x((4, 3, 2, 2), dt, 1), None, [2, 2], [0, 0], [1, 1],
                                              True, [1, 1], 1)],
           dtypes=F2, tol=TOL))
for n in (1, 2, 3):
    shp = (2, 4) + (5,) * n
    add(OpInfo(f"conv{n}d", lambda dt, shp=shp, n=n: [
        Sample(_x(shp, dt), _x((6, 4) + (3,) * n, dt, 1), _x((6,), dt, 2)),
        Sample(_x(shp, dt), _x((6, 2) + (2,) * n, dt, 1), None, 2, 1, 1, 2),
        Sample(_x(shp[1:], dt), _x((3, 4) + (3,) * n, dt, 1), padding=1, dilation=2)],
        dtypes=F2, tol=TOL, errors=(lambda: _CONV_ERR) if n == 2 else None))
    add(OpInfo(f"conv{n}d.padding", lambda dt, shp=shp, n=n: [
        Sample(_x(shp, dt), _x((3, 4) + (3,) * n, dt, 1), padding="same"),
        Sample(_x(shp, dt), _x((3, 4) + (2,) * n, dt, 1), padding="same", dilation=2),
        Sample(_x(shp, dt), _x((3, 4) + (2,) * n, dt, 1), padding="valid")], dtypes=F2, tol=TOL))
    add(OpInfo(f"conv_transpose{n}d", lambda dt, shp=shp, n=n: [
        Sample(_x(shp, dt), _x((4, 3) + (3,) * n, dt, 1), _x((3,), dt, 2)),
        Sample(_x(shp, dt), _x((4, 2) + (2,) * n, dt, 1), None, 2, 1, 1, 2)], dtypes=F2, tol=TOL))
    add(OpInfo(f"max_pool{n}d", lambda dt, shp=shp, n=n: [
        Sample(_x(shp, dt), 2), Sample(_x(shp, dt), 3, 2, 1), Sample(_x(shp, dt), 3, 2, 0, 1, True),
        Sample(_x(shp[1:], dt), 2, dilation=2)], dtypes=F2))
add(OpInfo("max_pool_with_indices", lambda dt: [Sample(_x((2, 3, 5, 6), dt), [2, 2], [2, 2], [0, 0], [1, 1], False),
                                                 Sample(_x((2, 3, 7), dt), [3], [2], [1], [1], True)],
           dtypes=F2, function=lambda lib, *a: _fn("max_pool_with_indices")(lib, *a) if lib.__name__ == "ember" else
           (lib.ops.aten.max_pool2d_with_indices(*a) if a[0].dim() == 4 else
            tuple(t.squeeze(-2) for t in lib.ops.aten.max_pool2d_with_indices(
                a[0].unsqueeze(-2), [1] + a[1], [1] + a[2], [0] + a[3], [1] + a[4], a[5])))))



def _pool_backward(lib, x, g, k, s, p, d, ceil):
    """max pooling's backward from the forward's indices: Ember's op, torch's max_pool2d_with_indices_backward."""
    import ember
    if lib is ember:
        idx = ember._C._ops._max_pool_with_indices(x, k, s, p, d, ceil)[1]
        return ember._C._ops._max_pool_with_indices_backward(g, x, idx)
    idx = lib.ops.aten.max_pool2d_with_indices(x, k, s, p, d, ceil)[1]
    return lib.ops.aten.max_pool2d_with_indices_backward(g, x, k, s, p, d, ceil, idx)


add(OpInfo("max_pool_with_indices_backward", lambda dt: [
    Sample(_x((2, 3, 5, 6), dt), _x((2, 3, 2, 3), dt, 1), [2, 2], [2, 2], [0, 0], [1, 1], False),
    Sample(_x((1, 2, 7, 7), dt), _x((1, 2, 4, 4), dt, 1), [3, 3], [2, 2], [1, 1], [1, 1], True)],
    dtypes=F2, function=_pool_backward))
add(OpInfo("relu_backward", lambda dt: [Sample(_x((3, 4), dt, 1), _x((3, 4), dt)),
                                        Sample(_x((3, 4), dt, 1), _x((4,), dt))],
           dtypes=F2, function=lambda lib, g, y: ember_or(lib, "_relu_backward", g, y)))


def ember_or(lib, name, g, y):
    import ember
    if lib is ember:
        return getattr(ember._C._ops, name)(g, y)
    return lib.ops.aten.threshold_backward(g, y, 0)

def _avg(lib, x, k, s, p, ceil, cip, div):
    import ember
    if lib is ember:
        return ember._C._ops._avg_pool_nd(x, k, s, p, ceil, cip, div)
    f = {1: lib.nn.functional.avg_pool1d, 2: lib.nn.functional.avg_pool2d, 3: lib.nn.functional.avg_pool3d}[len(k)]
    kw = {} if len(k) == 1 else {"divisor_override": div}
    return f(x, k, s, p, ceil, cip, **kw)


add(OpInfo("avg_pool_nd", lambda dt: [Sample(_x((2, 3, 5, 6), dt), [2, 2], [2, 2], [0, 0], False, True, None),
                                       Sample(_x((2, 3, 5, 6), dt), [3, 3], [2, 2], [1, 1], True, False, None),
                                       Sample(_x((2, 3, 7), dt), [3], [2], [1], True, True, None),
                                       Sample(_x((1, 2, 4, 5, 5), dt), [2, 2, 2], [1, 2, 2], [1, 0, 1], False, True, 3)],
           dtypes=F2, tol=TOL, function=_avg))


def _aavg(lib, x, size):
    import ember
    if lib is ember:
        return ember._C._ops._adaptive_avg_pool_nd(x, size)
    return {1: lib.nn.functional.adaptive_avg_pool1d, 2: lib.nn.functional.adaptive_avg_pool2d,
            3: lib.nn.functional.adaptive_avg_pool3d}[len(size)](x, size)


add(OpInfo("adaptive_avg_pool_nd", lambda dt: [Sample(_x((2, 3, 7, 5), dt), [3, 2]), Sample(_x((3, 7), dt), [4]),
                                                Sample(_x((1, 2, 5, 6, 4), dt), [2, 3, 1]), Sample(_x((2, 3, 6, 6), dt), [1, 1])],
           dtypes=F2, tol=TOL, function=_aavg))


def _avg_backward(lib, g, input_size, k, s, p, ceil, cip, div):
    """average pooling's input gradient for grad_output g: ember's op, torch's through autograd."""
    import ember
    if lib is ember:
        return ember._C._ops._avg_pool_nd_backward(g, input_size, k, s, p, ceil, cip, div)
    x = lib.zeros(input_size, dtype=g.dtype, requires_grad=True)
    return lib.autograd.grad(_avg(lib, x, k, s, p, ceil, cip, div), x, g)[0]


add(OpInfo("avg_pool_nd_backward", lambda dt: [
    Sample(_x((2, 3, 2, 3), dt), [2, 3, 5, 6], [2, 2], [2, 2], [0, 0], False, True, None),
    Sample(_x((2, 3, 3, 4), dt), [2, 3, 5, 6], [3, 3], [2, 2], [1, 1], True, False, None),
    Sample(_x((2, 3, 4), dt), [2, 3, 7], [3], [2], [1], True, True, None),
    Sample(_x((1, 2, 5, 2, 3), dt), [1, 2, 4, 5, 5], [2, 2, 2], [1, 2, 2], [1, 0, 1], False, True, 3)],
    dtypes=F2, tol=TOL, function=_avg_backward))


def _aavg_backward(lib, g, input_size, size):
    """adaptive average pooling's input gradient for grad_output g."""
    import ember
    if lib is ember:
        return ember._C._ops._adaptive_avg_pool_nd_backward(g, input_size, size)
    x = lib.zeros(input_size, dtype=g.dtype, requires_grad=True)
    return lib.autograd.grad(_aavg(lib, x, size), x, g)[0]


add(OpInfo("adaptive_avg_pool_nd_backward", lambda dt: [
    Sample(_x((2, 3, 3, 2), dt), [2, 3, 7, 5], [3, 2]), Sample(_x((3, 4), dt), [3, 7], [4]),
    Sample(_x((1, 2, 2, 3, 1), dt), [1, 2, 5, 6, 4], [2, 3, 1]), Sample(_x((2, 3, 1, 1), dt), [2, 3, 6, 6], [1, 1])],
    dtypes=F2, tol=TOL, function=_aavg_backward))


def _amax(lib, x, size):
    import ember
    if lib is ember:
        return ember._C._ops._adaptive_max_pool_with_indices(x, size)
    return {1: lib.nn.functional.adaptive_max_pool1d, 2: lib.nn.functional.adaptive_max_pool2d}[len(size)](
        x, size, return_indices=True)


add(OpInfo("adaptive_max_pool_with_indices", lambda dt: [Sample(_x((2, 3, 7, 5), dt), [3, 2]),
                                                          Sample(_x((2, 3, 7), dt), [4])], dtypes=F2, function=_amax))


def _pad(lib, x, p, mode="constant", value=None):
    import ember
    if lib is ember:
        return ember._C._ops._pad(x, p, mode, value)
    return lib.nn.functional.pad(x, p, mode, value)


add(OpInfo("pad", lambda dt: [Sample(_x((2, 3, 4), dt), [1, 2]), Sample(_x((2, 3, 4), dt), [1, 2, 0, 1], value=1.5),
                               Sample(_x((2, 3, 4), dt), [-1, 1]), Sample(_x((2, 3, 4), dt), [2, 1], "reflect"),
                               Sample(_x((1, 2, 3, 4), dt), [1, 2, 2, 1], "replicate"),
                               Sample(_x((1, 2, 3, 4), dt), [1, 2, 2, 1], "circular")],
           dtypes=F2, function=_pad,
           errors=lambda: [Sample(T((2, 3, 4), "float32"), [1, 2, 3]), Sample(T((2, 3, 4), "float32"), [4, 4], "reflect")]))
# ---- BLAS family
add(OpInfo("mm", lambda dt: [Sample(_x((2, 3), dt), _x((3, 4), dt, 1)), Sample(_x((3, 2), dt, layout="T"), _x((3, 4), dt, 1))],
           dtypes=F2 + ("int64",), tol=TOL, errors=lambda: [Sample(T((2, 3), "float32"), T((4, 3), "float32")),
                                                             Sample(T((2, 3, 1), "float32"), T((3, 4), "float32"))]))
add(OpInfo("bmm", lambda dt: [Sample(_x((2, 2, 3), dt), _x((2, 3, 4), dt, 1))], dtypes=F2, tol=TOL,
           errors=lambda: [Sample(T((2, 2, 3), "float32"), T((3, 3, 4), "float32"))]))
add(OpInfo("mv", lambda dt: [Sample(_x((2, 3), dt), _x((3,), dt, 1))], dtypes=F2, tol=TOL,
           errors=lambda: [Sample(T((2, 3), "float32"), T((4,), "float32"))]))
add(OpInfo("dot", lambda dt: [Sample(_x((5,), dt), _x((5,), dt, 1))], dtypes=F2 + ("int64",), tol=TOL,
           errors=lambda: [Sample(T((2,), "float32"), T((3,), "float32")), Sample(T((2,), "float32"), T((2,), "float64"))]))
add(OpInfo("vdot", lambda dt: [Sample(_x((5,), dt), _x((5,), dt, 1))], dtypes=F2, tol=TOL))
add(OpInfo("inner", lambda dt: [Sample(_x((2, 3), dt), _x((4, 3), dt, 1)), Sample(_x((3,), dt), _x((3,), dt, 1)),
                                 Sample(_x((), dt), _x((2, 3), dt, 1))], dtypes=F2, tol=TOL))
add(OpInfo("outer", lambda dt: [Sample(_x((3,), dt), _x((4,), dt, 1))], dtypes=F2 + ("int64",), tol=TOL))
for name, shapes in [("addmm", ((2, 4), (2, 3), (3, 4))), ("addmv", ((2,), (2, 3), (3,))),
                     ("addbmm", ((2, 4), (3, 2, 5), (3, 5, 4))), ("baddbmm", ((3, 2, 4), (3, 2, 5), (3, 5, 4))),
                     ("addr", ((3, 4), (3,), (4,)))]:
    add(OpInfo(name, lambda dt, shapes=shapes: [
        Sample(*[_x(s, dt, i) for i, s in enumerate(shapes)]),
        Sample(*[_x(s, dt, i) for i, s in enumerate(shapes)], beta=0.5, alpha=2),
        ] + ([] if len(shapes[0]) == 2 and len(shapes[1]) == 3 else  # addbmm_ with a broadcast self resizes it in torch
             [Sample(_x(shapes[0][-1:], dt), *[_x(s, dt, i + 1) for i, s in enumerate(shapes[1:])])]),
        dtypes=F2, tol=TOL,
        errors=(lambda: [Sample(T((2, 4), "float32"), T((2, 3), "float32"), T((4, 4), "float32")),  # K mismatch
                         Sample(T((2, 4), "int64"), T((2, 3), "float32"), T((3, 4), "float32")),  # self dtype
                         Sample(T((3,), "float32"), T((2, 3), "float32"), T((3, 4), "float32")),  # broadcast
                         Sample(T((2, 4), "float32"), T((2, 3, 1), "float32"), T((3, 4), "float32"))])  # rank
        if name == "addmm" else None))


def _tensordot(lib, a, b, da, db):
    import ember
    if lib is ember:
        return ember._C._ops._tensordot(a, b, da, db)
    return lib.tensordot(a, b, dims=(da, db))


add(OpInfo("tensordot", lambda dt: [Sample(_x((3, 4, 5), dt), _x((4, 5, 2), dt, 1), [1, 2], [0, 1]),
                                     Sample(_x((3, 4), dt), _x((2, 3), dt, 1), [0], [1])],
           dtypes=F2, tol=TOL, function=_tensordot))


def _einsum(lib, eq, *ops):
    return lib.einsum(eq, *ops)


add(OpInfo("einsum", lambda dt: [Sample("ij,jk->ik", _x((2, 3), dt), _x((3, 4), dt, 1)),
                                  Sample("bij,bjk", _x((2, 2, 3), dt), _x((2, 3, 4), dt, 1)),
                                  Sample("ii->i", _x((3, 3), dt)), Sample("i,j->ij", _x((3,), dt), _x((4,), dt, 1)),
                                  Sample("...ij,...jk", _x((2, 3, 4), dt), _x((4, 5), dt, 1)),
                                  Sample("abc,cd,de->abe", _x((2, 3, 4), dt), _x((4, 5), dt, 1), _x((5, 2), dt, 2))],
           dtypes=F2, tol=TOL, function=_einsum))
add(OpInfo("kron", lambda dt: [Sample(_x((2, 3), dt), _x((3, 2), dt, 1)), Sample(_x((2,), dt), _x((2, 3), dt, 1))],
           dtypes=F2 + ("int64",), tol=TOL))


def _slice(lib, x, dim=0, start=None, end=None, step=1):
    import ember
    if lib is ember:
        return ember._C._ops._slice(x, dim, start, end, step)
    return lib.ops.aten.slice(x, dim, start, end, step)


add(OpInfo("slice", lambda dt: [Sample(_x((5, 4), dt), 0, 1, 4, 2), Sample(_x((5, 4), dt), 1, -3, None, 1),
                                 Sample(_x((5, 4), dt), 0, None, 100, 3), Sample(_x((5, 4), dt, layout="T"), 1, 0, 2, 1)],
           dtypes=F2 + ("int64", "bool"), function=_slice))


# ---- sorting and selection
_SORTD = F2 + ("int64", "int32", "uint8")
add(OpInfo("sort", lambda dt: [Sample(T((3, 5), dt, low=-3, high=3)), Sample(T((3, 5), dt, low=-3, high=3), 0, True),
                                Sample(T((7,), dt, low=-3, high=3)), Sample(T((), dt)), Sample(T((0, 3), dt))],
           dtypes=_SORTD + ("bool",)))
add(OpInfo("sort.stable", lambda dt: [Sample(T((3, 5), dt, low=-2, high=2), stable=True),
                                       Sample(T((4, 6), dt, low=-2, high=2), stable=True, dim=0, descending=True)],
           dtypes=_SORTD))
add(OpInfo("argsort", lambda dt: [Sample(T((3, 5), dt, low=-2, high=2), stable=True),
                                   Sample(T((4, 6), dt, low=-2, high=2), dim=0, descending=True, stable=True),
                                   Sample(T((4, 6), dt, low=-50, high=50), 0, True)], dtypes=_SORTD,
           errors=lambda: [Sample(T((4, 6), "float32"), 0, True, stable=True)]))
# values without ties: torch does not define which of equal values topk/kthvalue pick
_NT = dict(low=0, high=250)
add(OpInfo("topk", lambda dt: [Sample(T((3, 6), dt, key=7, **_NT), 2), Sample(T((3, 6), dt, key=8, **_NT), 3, 0, False),
                                Sample(T((5,), dt, key=9, **_NT), 5)], dtypes=_SORTD,
           errors=lambda: [Sample(T((3,), "float32"), 4)]))
add(OpInfo("kthvalue", lambda dt: [Sample(T((3, 6), dt, key=7, **_NT), 2), Sample(T((3, 6), dt, key=8, **_NT), 3, 0, True)],
           dtypes=_SORTD, errors=lambda: [Sample(T((3,), "float32"), 4)]))
add(OpInfo("median", lambda dt: [Sample(T((3, 6), dt, low=-9, high=9)), Sample(T((5,), dt, low=-9, high=9))],
           dtypes=_SORTD))
add(OpInfo("median.dim", lambda dt: [Sample(T((3, 6), dt, low=-9, high=9), 1), Sample(T((4, 5), dt, low=-9, high=9), 0, True)],
           dtypes=_SORTD))
add(OpInfo("mode", lambda dt: [Sample(T((3, 8), dt, low=0, high=3)), Sample(T((6, 2), dt, low=0, high=3), 0, True)],
           dtypes=("float32", "int64")))


def _uniq(name):
    def f(lib, x, *a):
        import ember
        if lib is ember:
            return getattr(ember._C._ops, "_" + name)(x, *a)
        out = getattr(lib.ops.aten, {"unique2": "_unique2", "unique_dim": "unique_dim",
                                     "unique_consecutive": "unique_consecutive"}[name])(x, *a)
        return out
    return f


add(OpInfo("unique2", lambda dt: [Sample(T((10,), dt, low=0, high=4), True, True, True)], dtypes=("int64", "float32"),
           function=_uniq("unique2")))
add(OpInfo("unique_dim", lambda dt: [Sample(T((6, 2), dt, low=0, high=2), 0, True, True, True)], dtypes=("int64",),
           function=_uniq("unique_dim")))
add(OpInfo("unique_consecutive2", lambda dt: [Sample(T((10,), dt, low=0, high=2), True, True)], dtypes=("int64",),
           function=_uniq("unique_consecutive")))
add(OpInfo("argsort.stable", lambda dt: [Sample(T((3, 5), dt, low=-2, high=2), stable=True),
                                          Sample(T((4, 6), dt, low=-2, high=2), stable=True, dim=0, descending=True)],
           dtypes=_SORTD))


# ---- linalg (LAPACK)
def _la(name, torch_fn):
    def f(lib, *a, **k):
        import ember
        if lib is ember:
            return getattr(ember._C._ops, "_linalg_" + name)(*a, **k)
        return torch_fn(lib)(*a, **k)
    return f


_SQ = lambda dt: _x((3, 3), dt, 5)
add(OpInfo("linalg_det", lambda dt: [Sample(_SQ(dt)), Sample(_x((2, 4, 4), dt, 6))], dtypes=F2, tol=TOL,
           function=_la("det", lambda t: t.linalg.det)))
add(OpInfo("linalg_inv", lambda dt: [Sample(_SQ(dt)), Sample(_x((2, 4, 4), dt, 6))], dtypes=F2, tol=TOL,
           function=_la("inv", lambda t: t.linalg.inv)))
add(OpInfo("linalg_solve", lambda dt: [Sample(_SQ(dt), _x((3, 2), dt, 7)), Sample(_SQ(dt), _x((3,), dt, 7)),
                                        Sample(_x((2, 3, 3), dt, 6), _x((3, 2), dt, 8))], dtypes=F2, tol=TOL,
           function=_la("solve", lambda t: t.linalg.solve)))
_SPD = T((3, 3), "float64", data=[[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]])
add(OpInfo("linalg_cholesky", lambda dt: [Sample(T((3, 3), dt, data=[[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]])),
                                           Sample(T((3, 3), dt, data=[[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]]),
                                                  upper=True)],
           dtypes=F2, tol=TOL, function=_la("cholesky", lambda t: t.linalg.cholesky)))
add(OpInfo("linalg_qr", lambda dt: [Sample(_x((5, 3), dt, 9)), Sample(_x((5, 3), dt, 9), "complete"),
                                     Sample(_x((3, 5), dt, 9))], dtypes=F2, tol=TOL,
           function=_la("qr", lambda t: t.linalg.qr)))
add(OpInfo("linalg_eigh", lambda dt: [Sample(T((3, 3), dt, data=[[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]]))],
           dtypes=F2, tol=TOL, function=lambda lib, *a: tuple(x.abs() if i else x for i, x in enumerate(
               _la("eigh", lambda t: t.linalg.eigh)(lib, *a)))))
add(OpInfo("linalg_svd", lambda dt: [Sample(_x((5, 3), dt, 9), False), Sample(_x((3, 5), dt, 9), False)],
           dtypes=F2, tol=TOL, function=lambda lib, *a: tuple(x.abs() for x in _la("svd", lambda t: t.linalg.svd)(lib, *a))))

add(OpInfo("channel_shuffle", lambda dt: [Sample(_x((2, 6, 3), dt), 3), Sample(_x((1, 4, 2, 3), dt), 2),
                                         Sample(_x((0, 4, 2), dt), 4)],
           dtypes=F2 + ("int64",),
           errors=lambda: [Sample(T((2, 6, 3), "float32"), 4), Sample(T((2, 6), "float32"), 2),
                           Sample(T((2, 6, 3), "float32"), 0)]))

add(OpInfo("_lstm_cell", lambda dt: [Sample(_x((3, 20), dt), _x((3, 5), dt, 1)), Sample(_x((1, 4), dt), _x((1, 1), dt, 1)),
                                     Sample(_x((4, 12), dt, layout="T"), _x((4, 3), dt, 1))],
           dtypes=F2, tol=TOL, function=_lstm_cell, errors=lambda: [Sample(_x((2, 8), "float32"), _x((3, 2), "float32"))]))
add(OpInfo("_lstm_seq", lambda dt: [Sample(_x((3, 2, 12), dt), _x((2, 3), dt, 1), _x((2, 3), dt, 2), _x((12, 3), dt, 3)),
                                    Sample(_x((4, 1, 8), dt), _x((1, 2), dt, 1), _x((1, 2), dt, 2),
                                           _x((8, 2), dt, 3, layout="T"), True),
                                    Sample(_x((2, 0, 8), dt), _x((0, 2), dt, 1), _x((0, 2), dt, 2), _x((8, 2), dt, 3))],
           dtypes=F2, tol=TOL, function=_lstm_seq,
           errors=lambda: [Sample(_x((2, 3, 8), "float32"), _x((3, 2), "float32"), _x((3, 2), "float32"),
                                  _x((8, 3), "float32")),
                           Sample(_x((2, 3, 7), "float32"), _x((3, 2), "float32"), _x((3, 2), "float32"),
                                  _x((8, 2), "float32"))]))
add(OpInfo("_gru_cell", lambda dt: [Sample(_x((3, 15), dt), _x((3, 15), dt, 1), _x((3, 5), dt, 2)),
                                    Sample(_x((2, 3), dt), _x((2, 3), dt, 1), _x((2, 1), dt, 2))],
           dtypes=F2, tol=TOL, function=_gru_cell,
           errors=lambda: [Sample(_x((2, 9), "float32"), _x((2, 9), "float32"), _x((3, 3), "float32"))]))


def _autograd_ref(lib, forward, inputs, grads):
    """torch: the gradients of the reference forward (rnn_ref.py) for the given output gradients."""
    inputs = [t.detach().requires_grad_() for t in inputs]
    outs = forward(lib, *inputs)
    outs = outs if isinstance(outs, tuple) else (outs,)
    pairs = [(o, g) for o, g in zip(outs, grads) if g is not None]
    return lib.autograd.grad([o for o, _ in pairs], inputs, [g for _, g in pairs])


def _lstm_cell_bwd(lib, dhy, dcy, gates, cx):
    import ember
    if lib is ember:
        cy = ember._C._ops._lstm_cell(gates, cx)[1]
        return ember._C._ops._lstm_cell_backward(dhy, dcy, gates, cx, cy, True)
    return _autograd_ref(lib, _lstm_cell, [gates, cx], [dhy, dcy])


def _gru_cell_bwd(lib, dhy, gi, gh, hx):
    import ember
    if lib is ember:
        return ember._C._ops._gru_cell_backward(dhy, gi, gh, hx, True)
    return _autograd_ref(lib, _gru_cell, [gi, gh, hx], [dhy])


def _lstm_seq_bwd(lib, dhs, dcs, xw, h0, c0, w_hh, reverse):
    import ember
    if lib is ember:
        hs, cs, acts = ember._C._ops._lstm_seq(xw, h0, c0, w_hh, reverse)
        return ember._C._ops._lstm_seq_backward(dhs, dcs, None, h0, c0, w_hh, hs, cs, acts, reverse, True)
    return _autograd_ref(lib, lambda lib, *a: _lstm_seq(lib, *a, reverse), [xw, h0, c0, w_hh], [dhs, dcs])


add(OpInfo("_lstm_cell_backward", lambda dt: [Sample(_x((3, 5), dt, 2), _x((3, 5), dt, 3), _x((3, 20), dt), _x((3, 5), dt, 1)),
                                              Sample(_x((2, 3), dt, 2), None, _x((2, 12), dt, layout="T"), _x((2, 3), dt, 1))],
           dtypes=F2, tol=TOL, function=_lstm_cell_bwd))
add(OpInfo("_gru_cell_backward", lambda dt: [Sample(_x((3, 5), dt, 3), _x((3, 15), dt), _x((3, 15), dt, 1), _x((3, 5), dt, 2))],
           dtypes=F2, tol=TOL, function=_gru_cell_bwd))
add(OpInfo("_lstm_seq_backward", lambda dt: [
    Sample(_x((3, 2, 3), dt, 4), _x((3, 2, 3), dt, 5), _x((3, 2, 12), dt), _x((2, 3), dt, 1), _x((2, 3), dt, 2),
           _x((12, 3), dt, 3), False),
    Sample(_x((4, 1, 2), dt, 4), None, _x((4, 1, 8), dt), _x((1, 2), dt, 1), _x((1, 2), dt, 2), _x((8, 2), dt, 3), True)],
    dtypes=F2, tol=TOL, function=_lstm_seq_bwd))


def _nll_pick(lib, x, t, w, ignore):
    """Ember's one-pass row pick (-w[t] * x[i, t], 0 where ignored) against torch's nll_loss(reduction='none')."""
    import ember
    if lib is ember:
        return ember._C._ops._nll_pick(x, t, w, ignore)
    return lib.nn.functional.nll_loss(x, t, w, reduction="none", ignore_index=ignore)


def _nll_pick_backward(lib, g, x, t, w, ignore):
    import ember
    if lib is ember:
        return ember._C._ops._nll_pick_backward(g, x, t, w, ignore)
    x = x.detach().requires_grad_()
    lib.nn.functional.nll_loss(x, t, w, reduction="none", ignore_index=ignore).backward(g)
    return x.grad


_TGT = T((4,), "int64", data=[2, 0, -100, 1])
add(OpInfo("nll_pick", lambda dt: [Sample(_x((4, 3), dt), _TGT, None, -100),
                                   Sample(_x((4, 3), dt, layout="T"), _TGT, _x((3,), dt, 1), -100),
                                   Sample(_x((4, 3), dt), T((4,), "int64", data=[2, 0, 1, 1]), None, 1)],
           dtypes=F2, function=_nll_pick,
           errors=lambda: [Sample(T((2, 3), "float32"), T((2,), "int64", data=[0, 3]), None, -100),
                           Sample(T((2, 3), "float32"), T((2,), "int64", data=[-1, 0]), None, -100)]))
add(OpInfo("nll_pick_backward", lambda dt: [Sample(_x((4,), dt, 2), _x((4, 3), dt), _TGT, _x((3,), dt, 1), -100),
                                            Sample(_x((4,), dt, 2), _x((4, 3), dt), _TGT, None, -100)],
           dtypes=F2, function=_nll_pick_backward))
