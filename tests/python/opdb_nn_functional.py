"""OpInfos for the neural-network ops of ember.nn.functional: activations, normalization, dropout,
embeddings and losses (imported at the end of opdb.py). Ops in `python_module: nn` are called as
ember._C._nn.<name> / torch._C._nn.<name> by default; those PyTorch implements in Python only
(softsign, normalize, gaussian_nll_loss, ...) are compared with torch.nn.functional."""
import numpy as np

from opdb import OpInfo, add
from parity import SPECIAL_FLOATS, Sample, T, unary_samples

F2 = ("float32", "float64")
TOL = {"float32": (1e-4, 1e-5), "float64": (1e-7, 1e-9)}
RED = {0: "none", 1: "mean", 2: "sum"}


def _x(shape, dt, key=0, low=-2.0, high=2.0, **kw):
    return T(shape, dt, low=low, high=high, key=key, **kw)


def _F(name, reduction_arg=None):
    """ember._C._nn.<name> against torch.nn.functional.<name> (PyTorch's Python-only functions);
    reduction_arg: the keyword carrying PyTorch's int reduction, given to torch as its string."""
    def f(lib, *a, **k):
        import ember
        if lib is ember:
            return getattr(ember._C._nn, name)(*a, **k)
        if reduction_arg and reduction_arg in k:
            k = dict(k, **{reduction_arg: RED[k[reduction_arg]]})
        return getattr(lib.nn.functional, name)(*a, **k)
    return f


def _int_errors():
    return [Sample(T((3,), "int64"))]


# ---------------------------------------------------------------- activations
def act(name, extra=(), errors=_int_errors, tol=TOL, args=(), special=True, **kw):
    """An elementwise activation: the unary samples (special values, layouts, empty, large) with
    `args`, plus samples with extra arguments."""
    def samples(dt):
        s = [Sample(*(smp.args + tuple(args)), name=smp.name) for smp in unary_samples(dt, -6.0, 6.0, special=special)]
        x = _x((3, 4), dt, key="kinks", data=np.array([0.0, -3.0, 3.0, 6.0, 0.5, -0.5, 1.0, -1.0, 20.0, -20.0, 2.5,
                                                        -2.0]).reshape(3, 4))
        s.append(Sample(x, *args))
        for a in extra:
            s.append(Sample(x, *a[0], **a[1]) if isinstance(a, tuple) else Sample(x, **a))
        return s
    return add(OpInfo(name, samples, dtypes=F2, tol=tol, errors=errors, **kw))


act("hardtanh", [((-2.0, 0.5), {}), {"min_val": 0.5, "max_val": 0.5}, ((0, 6), {})], errors=None)
act("relu6", errors=None)
act("leaky_relu", [((0.2,), {}), ((-0.5,), {})])
act("elu", [((0.5,), {}), ((1.0, 2.0, 0.5), {})])
act("selu")
act("celu", [((2.0,), {})], errors=lambda: [Sample(T((3,), "int64")), Sample(T((3,), "float32"), 0.0)])
# torch's float32 gelu gives nan at +inf (its vectorized erf); Ember gives inf, as torch's float64 does
act("gelu", [{"approximate": "tanh"}], special=[v for v in SPECIAL_FLOATS if v != float("inf")], errors=lambda: [Sample(T((3,), "int64")),
                                                        Sample(T((3,), "float32"), approximate="foo")])
act("silu")
act("mish")
act("hardsigmoid")
act("hardswish")
act("softplus", [((2, 5), {}), ((0.5, 1), {})])
act("softshrink", [((1.0,), {}), ((0.0,), {})], errors=lambda: [Sample(T((3,), "int64")), Sample(T((3,), "float32"), -1.0)])
act("hardshrink", [((1.0,), {}), ((-1.0,), {})], errors=None)
act("threshold", [((0.5, -2.0), {}), ((0, 0), {})], args=(0.3, -2.0), errors=None)
act("log_sigmoid")
act("softsign", function=_F("softsign"), errors=None)
act("tanhshrink", function=_F("tanhshrink"), errors=None)


add(OpInfo("glu", lambda dt: [Sample(_x((3, 4), dt)), Sample(_x((4, 3), dt, 1), 0), Sample(_x((2, 6, 2), dt, 2), 1),
                              Sample(_x((4, 6), dt, 3, layout="T"), -1)],
           dtypes=F2, tol=TOL, errors=lambda: [Sample(T((3, 5), "float32")), Sample(T((4,), "float32"), 1)]))
add(OpInfo("prelu", lambda dt: [Sample(_x((2, 3, 4), dt), _x((3,), dt, 1)), Sample(_x((2, 3), dt), _x((1,), dt, 1)),
                                Sample(_x((5,), dt), _x((), dt, 1)), Sample(_x((), dt), _x((1,), dt, 1)),
                                Sample(_x((3, 4), dt, layout="T"), _x((4,), dt, 1))],
           dtypes=F2, tol=TOL, errors=lambda: [Sample(T((2, 4), "float32"), T((3,), "float32")),
                                                Sample(T((2, 4), "float32"), T((4, 1), "float32"))]))
add(OpInfo("rrelu", lambda dt: [Sample(_x((3, 4), dt)), Sample(_x((5,), dt, 1), 0.1, 0.5),
                                Sample(_x((4,), dt, 2), 0.2, 0.2, True)],
           dtypes=F2, tol=TOL, errors=lambda: [Sample(T((3,), "int64")), Sample(T((3,), "float32"), 0.5, 0.1, True)]))

# ---------------------------------------------------------------- normalization
add(OpInfo("group_norm", lambda dt: [
    Sample(_x((2, 6, 5), dt), 3), Sample(_x((2, 6, 5), dt), 2, _x((6,), dt, 1), _x((6,), dt, 2)),
    Sample(_x((3, 4, 2, 3), dt, 3), 4, eps=1e-3), Sample(_x((2, 4, 3), dt, 4, layout="permute"), 2),
    Sample(_x((0, 4, 3), dt), 2)],
    dtypes=F2, tol=TOL, errors=lambda: [Sample(T((2, 6, 3), "float32"), 4), Sample(T((6,), "float32"), 3),
                                        Sample(T((2, 6, 3), "float32"), 3, T((5,), "float32"))]))


def _instance_norm_samples(dt):
    x = _x((2, 3, 5), dt)
    return [Sample(x, None, None, None, None, True, 0.1, 1e-5, False),
            Sample(_x((2, 3, 4, 2), dt, 1), _x((3,), dt, 2), _x((3,), dt, 3), None, None, True, 0.1, 1e-5, False),
            Sample(x, None, None, _x((3,), dt, 4), T((3,), dt, low=0.5, high=2.0, key=5), True, 0.3, 1e-5, False),
            Sample(x, _x((3,), dt, 2), None, _x((3,), dt, 4), T((3,), dt, low=0.5, high=2.0, key=5), False, 0.1, 1e-5,
                   False)]


add(OpInfo("instance_norm", _instance_norm_samples, dtypes=F2, tol=TOL,
           errors=lambda: [Sample(T((2, 3, 4), "float32"), None, None, None, None, False, 0.1, 1e-5, False)]))
add(OpInfo("rms_norm", lambda dt: [Sample(_x((3, 4, 5), dt), [5]), Sample(_x((3, 4, 5), dt), [4, 5], _x((4, 5), dt, 1)),
                                   Sample(_x((3, 5), dt, 2), [5], _x((5,), dt, 1), 1e-3),
                                   Sample(_x((4, 3), dt, 3, layout="T"), [3])],
           dtypes=F2, tol=TOL, errors=lambda: [Sample(T((2, 3), "float32"), [4]),
                                               Sample(T((2, 3), "float32"), [3], T((4,), "float32"))]))
add(OpInfo("local_response_norm", lambda dt: [Sample(_x((2, 6, 5), dt), 3), Sample(_x((2, 6, 3, 3), dt, 1), 2, 0.1, 0.5, 2.0),
                                              Sample(_x((1, 4, 2, 2, 2), dt, 2), 5), Sample(_x((2, 3, 0), dt), 2)],
           dtypes=F2, tol=TOL, function=_F("local_response_norm"), errors=lambda: [Sample(T((2, 3), "float32"), 2)]))


def _normalize_samples(dt):
    x = _x((3, 4), dt, data=np.array([[1.0, -2.0, 0.5, 3.0], [0.0, 0.0, 0.0, 0.0], [-1.5, 2.0, 0.25, -0.75]]))
    return [Sample(x), Sample(x, 1.0), Sample(x, 3.0, 0), Sample(x, dim=-1, eps=0.5),
            Sample(_x((2, 3, 4), dt, 1, layout="permute"), 2.0, 2)]


add(OpInfo("normalize", _normalize_samples, dtypes=F2, tol=TOL, function=_F("normalize"),
           errors=lambda: [Sample(T((2, 3), "int64"))]))

# ---------------------------------------------------------------- dropout (random: dtypes and shapes only)
for _n in ("dropout", "feature_dropout", "alpha_dropout", "feature_alpha_dropout"):
    add(OpInfo(_n, lambda dt: [Sample(_x((4, 5, 3), dt), 0.5, True), Sample(_x((4, 5), dt), 0.3, False),
                               Sample(_x((3, 4), dt), 0.0, True), Sample(_x((3, 4), dt), 1.0, True),
                               Sample(_x((0, 2), dt), 0.5, True)],
               dtypes=F2, values=False, errors=lambda: [Sample(T((3, 4), "float32"), 1.5, True)]))

# ---------------------------------------------------------------- embeddings
_IDX = T((2, 4), "int64", data=[[1, 3, 3, 0], [9, 3, 2, 1]])


def _embedding_samples(dt):
    w = _x((10, 4), dt)
    return [Sample(w, _IDX), Sample(w, _IDX, 3), Sample(w, _IDX, -1, True), Sample(w, T((), "int64", data=4)),
            Sample(w, T((3,), "int32", data=[0, 9, 5])), Sample(_x((4, 10), dt, layout="T"), _IDX),
            Sample(w, T((0,), "int64"))]


add(OpInfo("embedding", _embedding_samples, dtypes=F2,
           errors=lambda: [Sample(T((5, 3), "float32"), T((1,), "int64", data=[5])),
                           Sample(T((5, 3), "float32"), T((1,), "int64", data=[-1])),
                           Sample(T((5, 3), "float32"), T((1,), "float32")),
                           Sample(T((5,), "float32"), T((1,), "int64", data=[1]))]))
add(OpInfo("embedding_renorm_", lambda dt: [Sample(_x((10, 4), dt, high=3.0), _IDX, 1.5, 2.0),
                                            Sample(_x((10, 4), dt, high=3.0), _IDX, 1.0, 1.0)],
           dtypes=F2, tol={"float32": (1e-5, 1e-6), "float64": (1e-6, 1e-7)},
           errors=lambda: [Sample(T((5, 3), "float32"), T((1,), "int64", data=[7]), 1.0, 2.0)]))

_BAG_IDX = T((10,), "int64", data=[1, 2, 4, 5, 4, 3, 2, 9, 2, 2])
_BAG_OFF = T((5,), "int64", data=[0, 2, 2, 5, 8])


def _embedding_bag_samples(dt):
    w = _x((10, 3), dt)
    return [Sample(w, _BAG_IDX, _BAG_OFF), Sample(w, _BAG_IDX, _BAG_OFF, False, 1),
            Sample(w, _BAG_IDX, _BAG_OFF, False, 2),
            Sample(w, _BAG_IDX, _BAG_OFF, False, 0, False, _x((10,), dt, 1)),
            Sample(w, _BAG_IDX, _BAG_OFF, False, 1, False, None, False, 2),
            Sample(w, _BAG_IDX, _BAG_OFF, False, 2, False, None, False, -1),
            Sample(w, _BAG_IDX, T((6,), "int64", data=[0, 2, 2, 5, 8, 10]), False, 1, False, None, True),
            Sample(w, T((4,), "int32", data=[0, 1, 2, 3]), T((2,), "int32", data=[0, 3]), False, 1)]


add(OpInfo("embedding_bag", _embedding_bag_samples, dtypes=F2, tol=TOL,
           # the first output; the auxiliary ones are compared in test_nn_functional.py
           function=lambda lib, *a, **k: lib.embedding_bag(*a, **k)[0],
           errors=lambda: [Sample(T((5, 3), "float32"), T((2,), "int64", data=[1, 7]), T((1,), "int64", data=[0])),
                           Sample(T((5, 3), "float32"), T((2,), "int64", data=[1, 2]), T((1,), "int64", data=[1]))]))
add(OpInfo("one_hot", lambda dt: [Sample(T((3,), dt, data=[0, 3, 1])), Sample(T((2, 2), dt, data=[[0, 3], [1, 1]]), 5),
                                  Sample(T((), dt, data=2)), Sample(T((0,), dt), 3)],
           dtypes=("int64",), errors=lambda: [Sample(T((1,), "float32")), Sample(T((1,), "int32", data=[1])),
                                             Sample(T((1,), "int64", data=[-1])), Sample(T((1,), "int64", data=[5]), 3),
                                             Sample(T((0,), "int64"))]))


# ---------------------------------------------------------------- losses
def _pair(dt, shape=(3, 5), **kw):
    return _x(shape, dt, 1, **kw), _x(shape, dt, 2, **kw)


def loss(name, samples, errors=None, **kw):
    add(OpInfo(name, samples, dtypes=F2, tol=TOL, errors=errors, **kw))


def _regression(extra=()):
    def samples(dt):
        x, y = _pair(dt)
        out = [Sample(x, y), Sample(x, y, 0), Sample(x, y, 2), Sample(_x((3, 5), dt, 3, layout="T"), y),
               Sample(_x((0, 2), dt), _x((0, 2), dt, 1)), Sample(_x((), dt), _x((), dt, 1), 2)]
        out += [Sample(x, y, r, *a) for a in extra for r in (0, 1, 2)]
        return out
    return samples


loss("mse_loss", _regression(), errors=lambda: [Sample(T((3,), "int64"), T((3,), "int64"))])
loss("l1_loss", _regression())
loss("smooth_l1_loss", _regression([(0.5,), (0.0,), (3.0,)]), errors=lambda: [Sample(T((3,), "float32"), T((3,), "float32"), 1, -1.0)])
loss("huber_loss", _regression([(0.5,), (3.0,)]), errors=lambda: [Sample(T((3,), "float32"), T((3,), "float32"), 1, 0.0)])
loss("soft_margin_loss", lambda dt: [Sample(_x((3, 5), dt), T((3, 5), dt, data=np.sign(np.arange(15) % 3 - 1.0).reshape(3, 5)), r)
                                     for r in (0, 1, 2)])


def _bce_samples(dt):
    x = T((4, 3), dt, low=0.02, high=0.98, key=1, data=np.array([[0.0, 1.0, 0.5], [0.2, 0.9, 0.05],
                                                                  [0.7, 0.3, 0.6], [0.01, 0.99, 0.4]]))
    t = T((4, 3), dt, low=0.0, high=1.0, key=2)
    w = T((4, 3), dt, low=0.5, high=2.0, key=3)
    return [Sample(x, t, None, r) for r in (0, 1, 2)] + [Sample(x, t, w, r) for r in (0, 1, 2)] + \
        [Sample(x, t, T((3,), dt, low=0.5, high=2.0, key=4), 1)]


loss("binary_cross_entropy", _bce_samples,
     errors=lambda: [Sample(T((1,), "float32", data=[1.5]), T((1,), "float32", data=[1.0])),
                     Sample(T((1,), "float32", data=[0.5]), T((1,), "float32", data=[1.5])),
                     Sample(T((3,), "float32", low=0, high=1), T((3,), "int64", low=0, high=1))])


def _bce_logits_samples(dt):
    x = _x((4, 3), dt, data=np.array([[0.0, 50.0, -50.0], [1.0, -2.0, 0.5], [3.0, -0.1, 2.0], [-4.0, 0.2, 1.5]]))
    t = T((4, 3), dt, low=0.0, high=1.0, key=2)
    w = T((4, 3), dt, low=0.5, high=2.0, key=3)
    return [Sample(x, t, None, None, r) for r in (0, 1, 2)] + \
        [Sample(x, t, w, T((3,), dt, low=0.5, high=3.0, key=4), r) for r in (0, 1, 2)]


loss("binary_cross_entropy_with_logits", _bce_logits_samples)


def _kl_samples(dt):
    x, t = _x((3, 4), dt), T((3, 4), dt, low=0.0, high=1.0, key=2, data=np.linspace(0, 1, 12).reshape(3, 4))
    return [Sample(x, t, r) for r in (0, 1, 2)] + [Sample(x, _x((3, 4), dt, 3), r, log_target=True) for r in (0, 1, 2)]


loss("kl_div", _kl_samples, errors=lambda: [Sample(T((3,), "int64"), T((3,), "int64"))])


def _poisson_samples(dt):
    x = _x((3, 4), dt)
    xp = T((3, 4), dt, low=0.1, high=3.0, key=3)
    c = T((3, 4), dt, data=np.array([[0, 1, 2, 3], [5, 0, 1, 7], [2, 2, 4, 1]], dtype=float))
    out = []
    for r in (0, 1, 2):
        out += [Sample(x, c, True, False, 1e-8, r), Sample(xp, c, False, False, 1e-8, r),
                Sample(x, c, True, True, 1e-8, r), Sample(xp, c, False, True, 1e-3, r)]
    return out


loss("poisson_nll_loss", _poisson_samples)


def _gaussian_samples(dt):
    x, t = _pair(dt, (3, 4))
    v = T((3, 4), dt, data=np.concatenate([[1e-9], np.linspace(0.1, 2.0, 11)]).reshape(3, 4))
    out = []
    for r in (0, 1, 2):
        out += [Sample(x, t, v, reduction=r), Sample(x, t, T((3, 1), dt, low=0.1, high=2.0, key=5), reduction=r),
                Sample(x, t, T((3,), dt, low=0.1, high=2.0, key=6), reduction=r),
                Sample(x, t, v, full=True, eps=1e-2, reduction=r)]
    return out


loss("gaussian_nll_loss", _gaussian_samples, function=_F("gaussian_nll_loss", "reduction"),
     errors=lambda: [Sample(T((3,), "float32"), T((3,), "float32"), T((3,), "float32", data=[-1.0, 1, 1])),
                     Sample(T((3, 2), "float32"), T((3, 2), "float32"), T((2,), "float32", low=0.1, high=1))])


def _margin_ranking_samples(dt):
    x1, x2 = _pair(dt, (6,))
    y = T((6,), dt, data=[1, -1, 1, 1, -1, -1])
    return [Sample(x1, x2, y, m, r) for m in (0.0, 0.5) for r in (0, 1, 2)]


loss("margin_ranking_loss", _margin_ranking_samples)


def _hinge_samples(dt):
    x = _x((6,), dt)
    return [Sample(x, T((6,), dt, data=[1, -1, 1, 1, -1, -1]), m, r) for m in (1.0, 0.3) for r in (0, 1, 2)] + \
        [Sample(x, T((6,), dt, data=[1, -1, 0, 1, -1, 2]), 1.0, 1)]


loss("hinge_embedding_loss", _hinge_samples)


def _mlsm_samples(dt):
    x = _x((4, 5), dt)
    t = T((4, 5), dt, data=(np.arange(20) % 3 == 0).astype(float).reshape(4, 5))
    return [Sample(x, t, None, reduction=r) for r in (0, 1, 2)] + [Sample(x, t, T((5,), dt, low=0.5, high=1.5, key=3), reduction=1),
                                                         Sample(_x((5,), dt, 2), T((5,), dt, data=[1, 0, 0, 1, 1]), reduction=2)]


loss("multilabel_soft_margin_loss", _mlsm_samples, function=_F("multilabel_soft_margin_loss", "reduction"))


def _multi_margin_samples(dt):
    x = _x((4, 5), dt)
    t = T((4,), "int64", data=[0, 4, 2, 2])
    w = T((5,), dt, low=0.5, high=1.5, key=3)
    out = [Sample(x, t, reduction=r) for r in (0, 1, 2)]
    out += [Sample(x, t, 2), Sample(x, t, 1, 0.5, w), Sample(x, t, 2, 2.0, w, 0),
            Sample(_x((5,), dt, 4), T((), "int64", data=3)), Sample(_x((5,), dt, 4), T((1,), "int64", data=[3]), reduction=0)]
    return out


loss("multi_margin_loss", _multi_margin_samples,
     errors=lambda: [Sample(T((3, 4), "float32"), T((3,), "int64", data=[0, 1, 4])),
                     Sample(T((3, 4), "float32"), T((2,), "int64", data=[0, 1])),
                     Sample(T((3, 4), "float32"), T((3,), "int64", data=[0, 1, 2]), 1, 1, T((3,), "float32")),
                     Sample(T((2, 3, 4), "float32"), T((2,), "int64", data=[0, 1]))])


def _cosine_embedding_samples(dt):
    a, b = _pair(dt, (4, 5))
    t = T((4,), dt, data=[1, -1, -1, 1])
    return [Sample(a, b, t, m, r) for m in (0.0, -0.2) for r in (0, 1, 2)] + \
        [Sample(_x((5,), dt, 5), _x((5,), dt, 6), T((), dt, data=-1.0), 0.1, 1)]


loss("cosine_embedding_loss", _cosine_embedding_samples,
     errors=lambda: [Sample(T((2, 3, 4), "float32"), T((2, 3, 4), "float32"), T((2,), "float32")),
                     Sample(T((2, 3), "float32"), T((2, 3), "float32"), T((2, 1), "float32"))])


def _distance_samples(dt):
    a, b = _pair(dt, (4, 5))
    return [Sample(a, b), Sample(a, b, 1.0), Sample(a, b, 3.0, 1e-3, True), Sample(a, b, float("inf"), 0.0),
            Sample(a, _x((5,), dt, 3)), Sample(_x((5,), dt, 4), _x((5,), dt, 5)), Sample(_x((), dt, 4), _x((), dt, 5)),
            Sample(_x((4, 5), dt, 6, layout="T"), b)]


add(OpInfo("pairwise_distance", _distance_samples, dtypes=F2, tol=TOL))


def _cosine_similarity_samples(dt):
    a, b = _pair(dt, (4, 5))
    return [Sample(a, b), Sample(a, b, 0), Sample(a, b, eps=0.5), Sample(a, _x((1, 5), dt, 3)),
            Sample(a, T((4, 5), dt, data=np.zeros((4, 5)))), Sample(_x((2, 3, 4), dt, 4, layout="permute"), _x((2, 3, 4), dt, 5), -1)]


add(OpInfo("cosine_similarity", _cosine_similarity_samples, dtypes=F2, tol=TOL,
           errors=lambda: [Sample(T((2, 3), "int64"), T((2, 3), "int64")), Sample(T((2, 3), "float32"), T((4, 3), "float32"))]))


def _triplet_samples(dt):
    a, p = _pair(dt, (4, 5))
    n = _x((4, 5), dt, 3)
    out = [Sample(a, p, n, reduction=r) for r in (0, 1, 2)]
    out += [Sample(a, p, n, 2.0, 1.0), Sample(a, p, n, swap=True), Sample(a, p, n, 1.0, 3.0, 1e-3),
            Sample(_x((5,), dt, 4), _x((5,), dt, 5), _x((5,), dt, 6))]
    return out


add(OpInfo("triplet_margin_loss", _triplet_samples, dtypes=F2, tol=TOL,
           errors=lambda: [Sample(T((2, 3), "float32"), T((3,), "float32"), T((2, 3), "float32"))]))


# ---------------------------------------------------------------- classification
def _nll_2d_samples(dt, probs=False):
    x = _x((5, 4), dt)
    y = T((5,), "int64", data=[0, 3, 1, 3, 2])
    w = T((4,), dt, low=0.5, high=2.0, key=2)
    out = []
    for r in (0, 1, 2):
        out += [Sample(x, y, None, r), Sample(x, y, w, r), Sample(x, y, w, r, 3),
                Sample(x, T((5,), "int64", data=[0, 7, 1, 7, 2]), None, r, 7),
                Sample(x, T((5,), "int64", data=[-100] * 5), None, r)]
    out += [Sample(_x((4,), dt, 3), T((), "int64", data=2)), Sample(_x((4,), dt, 3), T((1,), "int64", data=[2]), None, 0),
            Sample(x, T((5,), "uint8", data=[0, 3, 1, 3, 2])), Sample(_x((0, 4), dt), T((0,), "int64")),
            Sample(_x((4, 5), dt, 4, layout="T"), y)]
    return out


_NLL_ERRORS = lambda: [Sample(T((3, 4), "float32"), T((3,), "int64", data=[0, 1, 4])),  # noqa: E731
                       Sample(T((3, 4), "float32"), T((3,), "int64", data=[0, 1, -1])),
                       Sample(T((3, 4), "float32"), T((3,), "int32", data=[0, 1, 2])),
                       Sample(T((3, 4), "float32"), T((3,), "int64", data=[0, 1, 2]), T((3,), "float32"))]


def _nd_samples(dt):
    xn = _x((2, 4, 3, 2), dt, 5)
    yn = T((2, 3, 2), "int64", data=np.array([[[0, 1], [2, 3], [-100, 1]], [[3, 3], [0, 2], [1, 0]]]))
    w = T((4,), dt, low=0.5, high=2.0, key=2)
    return [Sample(xn, yn, w, r) for r in (0, 1, 2)] + [Sample(_x((2, 4, 3), dt, 6), T((2, 3), "int64", data=[[0, 1, 2], [3, 2, 1]]))]


loss("nll_loss", _nll_2d_samples, errors=_NLL_ERRORS)
loss("nll_loss_nd", lambda dt: _nll_2d_samples(dt) + _nd_samples(dt),
     errors=lambda: _NLL_ERRORS() + [Sample(T((2, 4, 5), "float32"), T((2, 6), "int64", low=0, high=3)),
                                     Sample(T((), "float32"), T((), "int64", data=0)),
                                     Sample(T((3, 4), "float32"), T((2,), "int64", data=[0, 1]))])


def _cross_entropy_samples(dt):
    out = _nll_2d_samples(dt) + _nd_samples(dt)
    x = _x((5, 4), dt)
    y = T((5,), "int64", data=[0, 3, 1, 3, 2])
    w = T((4,), dt, low=0.5, high=2.0, key=2)
    p = T((5, 4), dt, low=0.0, high=1.0, key=7)
    for r in (0, 1, 2):
        out += [Sample(x, y, None, r, -100, 0.1), Sample(x, y, w, r, 1, 0.3), Sample(x, y, None, r, -100, 1.0),
                Sample(x, p, None, r), Sample(x, p, w, r, -100, 0.2),
                Sample(_x((2, 4, 3, 2), dt, 5), T((2, 4, 3, 2), dt, low=0, high=1, key=8), w, r)]
    return out


loss("cross_entropy_loss", _cross_entropy_samples,
     errors=lambda: _NLL_ERRORS() + [Sample(T((3, 4), "float32"), T((3, 4), "float32"), None, 1, 1),
                                     Sample(T((3, 4), "float32"), T((3,), "int64", data=[0, 1, 2]), None, 1, -100, 1.5),
                                     Sample(T((4,), "float32"), T((4,), "int64", data=[0, 1, 2, 3]))])


# ---------------------------------------------------------------- CTC (log_probs from log_softmax)
def _ctc(lib, lp, *a, **k):
    return lib.ctc_loss(lib.log_softmax(lp, -1), *a, **k)


def _ctc_samples(dt, int_lists=False):
    lp = _x((12, 3, 5), dt, 1)
    tg = T((3, 4), "int64", data=[[1, 2, 2, 4], [3, 3, 1, 0], [2, 1, 1, 1]])

    def lens(v):
        return v if int_lists else T((len(v),), "int64", data=v)
    out = [Sample(lp, tg, lens([12, 10, 7]), lens([4, 3, 0]), 0, r) for r in (0, 1, 2)]
    out += [Sample(lp, tg, lens([12, 12, 12]), lens([4, 2, 3]), 0, 0, True),
            Sample(lp, T((7,), "int64", data=[1, 2, 2, 4, 3, 3, 1]), lens([12, 9, 5]), lens([4, 3, 0]), 0, 1),
            Sample(_x((3, 2, 4), dt, 2), T((2, 2), "int64", data=[[1, 1], [2, 3]]), lens([2, 3]), lens([2, 2]), 0, 0),
            Sample(_x((3, 2, 4), dt, 2), T((2, 2), "int64", data=[[1, 1], [2, 3]]), lens([2, 3]), lens([2, 2]), 0, 0, True),
            Sample(_x((5, 2, 4), dt, 3), T((2, 2), "int64", data=[[1, 2], [0, 1]]), lens([0, 5]), lens([0, 2]), 3, 0)]
    return out


_CTC_ERRORS = lambda: [Sample(T((5, 2, 4), "float32"), T((2, 2), "int64", data=[[1, 2], [1, 1]]),  # noqa: E731
                              T((2,), "int64", data=[5, 5]), T((2,), "int64", data=[2, 2]), 4),
                       Sample(T((5, 2, 4), "float32"), T((2, 2), "int64", data=[[1, 2], [1, 1]]),
                              T((2,), "int64", data=[6, 5]), T((2,), "int64", data=[2, 2])),
                       Sample(T((5, 2, 4), "float32"), T((2, 2), "int64", data=[[1, 2], [1, 1]]),
                              T((1,), "int64", data=[5]), T((2,), "int64", data=[2, 2]))]
add(OpInfo("ctc_loss", _ctc_samples, dtypes=F2, tol={"float32": (1e-4, 1e-5), "float64": (1e-7, 1e-7)},
           function=_ctc, errors=_CTC_ERRORS))
add(OpInfo("ctc_loss.IntList", lambda dt: _ctc_samples(dt, True), dtypes=F2,
           tol={"float32": (1e-4, 1e-5), "float64": (1e-7, 1e-7)}, function=_ctc))
