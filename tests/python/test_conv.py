"""float32 convolutions (oneDNN) against float64 ones (im2col + GEMM) and against torch: values and
all three gradients, over strides, paddings whose last window stops short (cropped input), dilation,
groups, depthwise, 1-D/3-D, transposed with output_padding, unbatched and non-contiguous inputs."""
import numpy as np
import pytest

import ember
import ember.nn.functional as F

# (spatial dims, N, Cin, Cout, size, kernel, stride, padding, dilation, groups, output_padding)
CASES = [
    (2, 2, 4, 6, 9, 3, 1, 1, 1, 1, 0),
    (2, 2, 4, 6, 9, 3, 2, 0, 1, 2, 1),
    (2, 1, 6, 6, 8, 1, 2, 0, 1, 3, 0),      # 1x1 stride 2: the last input row is never read
    (2, 3, 3, 3, 7, 2, 3, 1, 2, 3, 2),
    (2, 2, 8, 8, 6, 3, 1, 1, 1, 8, 0),      # depthwise
    (2, 2, 3, 5, 10, 4, 3, 2, 1, 1, 0),
    (1, 2, 3, 4, 11, 3, 2, 1, 2, 1, 1),
    (3, 1, 2, 4, 5, 3, 2, 1, 1, 2, 1),
]


def _run(lib, nd, transposed, x, w, b, s, p, d, g, op):
    fn = getattr(lib.nn.functional, f"conv_transpose{nd}d" if transposed else f"conv{nd}d")
    if transposed:
        return fn(x, w, b, s, p, op, g, d)
    return fn(x, w, b, s, p, d, g)


def _inputs(case, transposed, rng):
    nd, n, cin, cout, size, k, s, p, d, g, op = case
    x = rng.standard_normal((n, cin) + (size,) * nd)
    wshape = (cin, cout // g) if transposed else (cout, cin // g)
    w = rng.standard_normal(wshape + (k,) * nd)
    b = rng.standard_normal(cout)
    op = op if op < s or op < d else 0
    return (x, w, b), (s, p, d, g, op)


def _grads(lib, dtype, arrays, nd, transposed, params, layout=None):
    ts = [lib.tensor(a, dtype=dtype, requires_grad=True) for a in arrays]
    x = ts[0]
    if layout == "channels_last":  # a non-contiguous input with the same values
        perm = (0,) + tuple(range(2, 2 + nd)) + (1,)
        inv = tuple(np.argsort(perm))
        x = lib.tensor(np.ascontiguousarray(arrays[0].transpose(perm)), dtype=dtype, requires_grad=True)
        ts[0] = x
        x = x.permute(*inv)
    y = _run(lib, nd, transposed, x, ts[1], ts[2], *params)
    gy = lib.tensor(np.linspace(-1, 1, y.numel()).reshape(tuple(y.shape)), dtype=dtype)
    y.backward(gy)
    out = [y.detach().double().numpy()] + [t.grad.double().numpy() for t in ts]
    if layout == "channels_last":
        out[1] = out[1].transpose(inv)
    return out


@pytest.mark.parametrize("transposed", [False, True])
@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[0]}d_s{c[6]}_p{c[7]}_d{c[8]}_g{c[9]}")
def test_float32_matches_float64(case, transposed):
    rng = np.random.default_rng(0)
    arrays, params = _inputs(case, transposed, rng)
    nd = case[0]
    got = _grads(ember, ember.float32, arrays, nd, transposed, params)
    ref = _grads(ember, ember.float64, arrays, nd, transposed, params)
    for a, r in zip(got, ref):
        assert a.shape == r.shape
        np.testing.assert_allclose(a, r, rtol=1e-4, atol=1e-3 * max(1.0, np.abs(r).max() * 1e-2))


@pytest.mark.parametrize("transposed", [False, True])
@pytest.mark.parametrize("case", CASES[:4] + CASES[6:], ids=lambda c: f"{c[0]}d_s{c[6]}_g{c[9]}")
def test_float32_matches_torch(case, transposed):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(1)
    arrays, params = _inputs(case, transposed, rng)
    nd = case[0]
    got = _grads(ember, ember.float32, arrays, nd, transposed, params, layout="channels_last")
    ref = _grads(torch, torch.float32, arrays, nd, transposed, params)
    for a, r in zip(got, ref):
        np.testing.assert_allclose(a, r, rtol=1e-4, atol=1e-4 * max(1.0, np.abs(r).max()))


def test_unbatched_and_empty_batch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(2)
    x, w = rng.standard_normal((3, 7, 7)).astype(np.float32), rng.standard_normal((4, 3, 3, 3)).astype(np.float32)
    for lib_x in (x, np.zeros((0, 3, 7, 7), np.float32)):
        e = F.conv2d(ember.tensor(lib_x), ember.tensor(w), padding=1)
        t = torch.nn.functional.conv2d(torch.tensor(lib_x), torch.tensor(w), padding=1)
        assert tuple(e.shape) == tuple(t.shape)
        np.testing.assert_allclose(e.numpy(), t.numpy(), rtol=1e-5, atol=1e-5)


def test_double_backward_in_float32_goes_through_differentiable_ops():
    # create_graph=True: the backward must itself be differentiable (gradient penalty style)
    rng = np.random.default_rng(3)
    arrays = [rng.standard_normal((2, 3, 6, 6)), rng.standard_normal((4, 3, 3, 3))]
    res = {}
    for dtype in (ember.float32, ember.float64):
        x, w = [ember.tensor(a, dtype=dtype, requires_grad=True) for a in arrays]
        y = F.conv2d(x, w, stride=2, padding=1)
        (gx,) = ember.autograd.grad(y.pow(2).sum(), x, create_graph=True)
        gx.pow(2).sum().backward()
        res[dtype] = w.grad.double().numpy()
    np.testing.assert_allclose(res[ember.float32], res[ember.float64], rtol=1e-4, atol=1e-3)


def test_grad_fn_and_errors():
    x = ember.randn(1, 4, 5, 5, requires_grad=True)
    assert F.conv2d(x, ember.randn(2, 4, 3, 3)).grad_fn.name() == "ConvolutionBackward0"
    with pytest.raises(RuntimeError, match="expected weight to be divisible by 3"):
        F.conv_transpose2d(x, ember.randn(4, 2, 3, 3), groups=3)
    with pytest.raises(RuntimeError, match="Input type"):
        F.conv2d(x, ember.randn(2, 4, 3, 3, dtype=ember.float64))
