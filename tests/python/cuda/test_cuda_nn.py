"""Matrix products on cuBLAS and the first NN kernels on the GPU (softmax, log_softmax, layer_norm,
nll_loss / cross_entropy, linear) against Ember's CPU results and PyTorch's CUDA build where it is
installed, forward and gradient, and a small model trained on the GPU against the same model on the
CPU. Skips without a GPU (scripts/gpu_check.sh runs it on one)."""
import numpy as np
import pytest

import ember
import ember.nn.functional as F

pytestmark = pytest.mark.skipif(not ember.cuda.is_available(), reason="no CUDA GPU")

try:
    import torch
    HAVE_TORCH_CUDA = torch.cuda.is_available()
except Exception:
    torch, HAVE_TORCH_CUDA = None, False

FLOATS = {"float32": (ember.float32, 1e-5, 1e-5), "float64": (ember.float64, 1e-12, 1e-12),
          "float16": (ember.float16, 1e-2, 1e-2), "bfloat16": (ember.bfloat16, 2e-2, 2e-2)}


def close(gpu, cpu, rtol, atol):
    assert gpu.device.type == "cuda", gpu.device
    back, cpu = gpu.detach().cpu(), cpu.detach()
    assert back.dtype == cpu.dtype and back.shape == cpu.shape, (back.dtype, cpu.dtype, back.shape, cpu.shape)
    conv = (lambda t: t.double().numpy()) if not t_complex(back) else (lambda t: t.numpy())
    np.testing.assert_allclose(conv(back), conv(cpu), rtol=rtol, atol=atol, equal_nan=True)


def t_complex(t):
    return t.dtype in (ember.complex64, ember.complex128)


def rand(*shape, dtype=ember.float32, seed=0):
    g = ember.Generator().manual_seed(seed)
    return ember.randn(shape, generator=g, dtype=ember.float64).to(dtype)


# ---- matrix products (cuBLAS)

SHAPES = [((3, 4), (4, 5)), ((1, 7), (7, 1)), ((64, 33), (33, 17)), ((0, 4), (4, 3)), ((3, 0), (0, 2)),
          ((2, 3, 4), (2, 4, 5)), ((2, 1, 3, 4), (5, 4, 2)), ((4,), (4,)), ((3, 4), (4,)), ((4,), (4, 6)),
          ((2, 5, 4), (4, 3))]


@pytest.mark.parametrize("dtype", list(FLOATS))
@pytest.mark.parametrize("shapes", SHAPES, ids=str)
def test_matmul_matches_the_cpu(dtype, shapes):
    dt, rtol, atol = FLOATS[dtype]
    a, b = rand(*shapes[0], dtype=dt, seed=1), rand(*shapes[1], dtype=dt, seed=2)
    close(ember.matmul(a.cuda(), b.cuda()), ember.matmul(a, b), rtol, atol * max(1, a.shape[-1]))


@pytest.mark.parametrize("layout", ["t_a", "t_b", "t_both", "sliced", "expanded_batch"])
def test_matmul_of_any_strides(layout):
    a, b = rand(6, 5, dtype=ember.float64, seed=3), rand(5, 4, dtype=ember.float64, seed=4)
    if layout == "t_a":
        a = rand(5, 6, dtype=ember.float64).t()
    elif layout == "t_b":
        b = rand(4, 5, dtype=ember.float64).t()
    elif layout == "t_both":
        a, b = rand(5, 6, dtype=ember.float64).t(), rand(4, 5, dtype=ember.float64).t()
    elif layout == "sliced":
        a, b = rand(12, 10, dtype=ember.float64)[::2, ::2], rand(5, 8, dtype=ember.float64)[:, 1::2]
    else:
        a, b = rand(1, 6, 5, dtype=ember.float64).expand(3, 6, 5), rand(3, 5, 4, dtype=ember.float64)
    ga, gb = a.cuda() if layout != "sliced" else rand(12, 10, dtype=ember.float64).cuda()[::2, ::2], b.cuda()
    if layout == "sliced":
        gb = rand(5, 8, dtype=ember.float64).cuda()[:, 1::2]
    close(ember.matmul(ga, gb), ember.matmul(a, b), 1e-12, 1e-12)


@pytest.mark.parametrize("dtype", [ember.complex64, ember.complex128])
def test_complex_matmul(dtype):
    a = ember.complex(rand(4, 3, dtype=ember.float64), rand(4, 3, dtype=ember.float64, seed=5)).to(dtype)
    b = ember.complex(rand(3, 2, dtype=ember.float64, seed=6), rand(3, 2, dtype=ember.float64, seed=7)).to(dtype)
    close(a.cuda() @ b.cuda(), a @ b, 1e-5, 1e-5)


def test_addmm_baddbmm_and_friends():
    s, a, b = rand(5), rand(3, 4, seed=1), rand(4, 5, seed=2)
    for beta, alpha in [(1, 1), (0.5, 2.0), (0, 1)]:
        close(ember.addmm(s.cuda(), a.cuda(), b.cuda(), beta=beta, alpha=alpha),
              ember.addmm(s, a, b, beta=beta, alpha=alpha), 1e-5, 1e-5)
    nan_self = ember.full((3, 5), float("nan"))
    close(ember.addmm(nan_self.cuda(), a.cuda(), b.cuda(), beta=0), ember.addmm(nan_self, a, b, beta=0), 1e-5, 1e-5)
    x, y, z = rand(2, 3, 5), rand(2, 3, 4, seed=3), rand(2, 4, 5, seed=4)
    close(ember.baddbmm(x.cuda(), y.cuda(), z.cuda(), alpha=0.5), ember.baddbmm(x, y, z, alpha=0.5), 1e-5, 1e-5)
    close(ember.bmm(y.cuda(), z.cuda()), ember.bmm(y, z), 1e-5, 1e-5)
    close(ember.addbmm(s.cuda().expand(3, 5), y.cuda(), z.cuda()), ember.addbmm(s.expand(3, 5), y, z), 1e-5, 1e-5)
    v = rand(4, seed=8)
    close(ember.mv(a.cuda(), v.cuda()), ember.mv(a, v), 1e-5, 1e-5)
    close(ember.dot(v.cuda(), v.cuda()), ember.dot(v, v), 1e-5, 1e-5)
    close(ember.einsum("ij,jk->ik", a.cuda(), b.cuda()), ember.einsum("ij,jk->ik", a, b), 1e-5, 1e-5)
    close(ember.tensordot(y.cuda(), z.cuda(), dims=([0, 2], [0, 1])), ember.tensordot(y, z, dims=([0, 2], [0, 1])),
          1e-5, 1e-5)


def test_matmul_errors():
    a, b = ember.ones(2, 3, device="cuda"), ember.ones(4, 5, device="cuda")
    with pytest.raises(RuntimeError, match=r"mat1 and mat2 shapes cannot be multiplied \(2x3 and 4x5\)"):
        a @ b
    with pytest.raises(RuntimeError, match="same device"):
        a @ ember.ones(3, 2)
    with pytest.raises(RuntimeError, match="not implemented for 'Long'"):  # cuBLAS has no integer GEMM (torch: same)
        ember.ones(2, 2, dtype=ember.int64, device="cuda") @ ember.ones(2, 2, dtype=ember.int64, device="cuda")


def test_tf32_switch():
    a, b = rand(256, 256, seed=1).cuda(), rand(256, 256, seed=2).cuda()
    exact = (a.double() @ b.double()).float()
    try:
        ember.backends.cuda.matmul.allow_tf32 = False
        full = a @ b
        ember.backends.cuda.matmul.allow_tf32 = True
        tf32 = a @ b
    finally:
        ember.backends.cuda.matmul.allow_tf32 = False
    err_full = (full - exact).abs().max().item()
    err_tf32 = (tf32 - exact).abs().max().item()
    assert err_full < 1e-3 and err_tf32 < 0.5
    assert err_tf32 > err_full  # TF32 keeps 10 mantissa bits: visibly less exact on an H100/H200


def test_linear_and_its_gradients():
    x, w, b = rand(8, 5), rand(3, 5, seed=1), rand(3, seed=2)
    xs = [t.clone().requires_grad_() for t in (x, w, b)]
    gs = [t.detach().cuda().requires_grad_() for t in (x, w, b)]
    F.linear(*xs).pow(2).sum().backward()
    out = F.linear(*gs)
    out.pow(2).sum().backward()
    close(out, F.linear(*xs).detach(), 1e-5, 1e-5)
    for g, c in zip(gs, xs):
        assert g.grad.device.type == "cuda"
        close(g.grad, c.grad, 1e-4, 1e-4)


# ---- softmax, layer norm, losses

@pytest.mark.parametrize("dtype", list(FLOATS))
@pytest.mark.parametrize("shape,dim", [((4, 10), 1), ((4, 10), 0), ((2, 3, 5), 1), ((3, 1000), -1), ((0, 3), 1),
                                       ((), 0), ((2, 3000, 2), 1)], ids=str)
@pytest.mark.parametrize("log", [False, True])
def test_softmax_forward_and_backward(dtype, shape, dim, log):
    dt, rtol, atol = FLOATS[dtype]
    fn = F.log_softmax if log else F.softmax
    x = (rand(*shape, seed=3) * 4).to(dt)
    xc, xg = x.clone().requires_grad_(), x.detach().cuda().requires_grad_()
    yc, yg = fn(xc, dim), fn(xg, dim)
    close(yg.detach(), yc.detach(), rtol, atol)
    up = rand(*shape, seed=4).to(dt)
    (yc * up).sum().backward()
    (yg * up.cuda()).sum().backward()
    close(xg.grad, xc.grad, rtol * 10, atol * 10)


def test_softmax_special_values():
    x = ember.tensor([[0.0, float("-inf"), 1.0], [float("-inf")] * 3, [float("nan"), 0.0, 1.0], [1e30, 1e30, -1e30]])
    for fn in (F.softmax, F.log_softmax):
        close(fn(x.cuda(), 1), fn(x, 1), 1e-6, 1e-6)
        close(fn(x.cuda(), 0), fn(x, 0), 1e-6, 1e-6)


@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16"])
@pytest.mark.parametrize("shape,norm", [((4, 16), (16,)), ((2, 3, 8), (3, 8)), ((5, 1000), (1000,)),
                                        ((0, 4), (4,))], ids=str)
@pytest.mark.parametrize("affine", [True, False])
def test_layer_norm_forward_and_backward(dtype, shape, norm, affine):
    dt, rtol, atol = FLOATS[dtype]
    x = (rand(*shape, seed=5) * 3 + 1).to(dt)
    w, b = (rand(*norm, seed=6).to(dt), rand(*norm, seed=7).to(dt)) if affine else (None, None)
    cpu = [t.clone().requires_grad_() if t is not None else None for t in (x, w, b)]
    gpu = [t.detach().cuda().requires_grad_() if t is not None else None for t in (x, w, b)]
    yc, yg = F.layer_norm(cpu[0], norm, cpu[1], cpu[2]), F.layer_norm(gpu[0], norm, gpu[1], gpu[2])
    close(yg.detach(), yc.detach(), rtol, atol)
    up = rand(*shape, seed=8).to(dt)
    (yc * up).sum().backward()
    (yg * up.cuda()).sum().backward()
    for c, g in zip(cpu, gpu):
        if c is not None:
            close(g.grad, c.grad, rtol * 20, atol * 20 * max(1, shape[0]))


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("smoothing", [0.0, 0.1])
def test_cross_entropy_and_nll_loss(weighted, reduction, smoothing):
    x, t = rand(6, 5, seed=9), ember.tensor([0, 4, 2, -100, 1, 3])
    w = rand(5, seed=10).abs() + 0.1 if weighted else None
    for fn, kw in [(F.cross_entropy, {"label_smoothing": smoothing}), (F.nll_loss, {})]:
        inp = x if fn is F.cross_entropy else F.log_softmax(x, 1)
        xc, xg = inp.detach().clone().requires_grad_(), inp.detach().cuda().requires_grad_()
        lc = fn(xc, t, weight=w, reduction=reduction, **kw)
        lg = fn(xg, t.cuda(), weight=None if w is None else w.cuda(), reduction=reduction, **kw)
        close(lg.detach(), lc.detach(), 1e-5, 1e-6)
        lc.sum().backward()
        lg.sum().backward()
        close(xg.grad, xc.grad, 1e-5, 1e-6)


def test_nll_loss_bad_target_raises_the_cpus_error():
    x = F.log_softmax(rand(3, 4), 1).cuda()
    with pytest.raises(IndexError, match="Target 7 is out of bounds."):
        F.nll_loss(x, ember.tensor([0, 7, 1], device="cuda"))
    with pytest.raises(IndexError, match="Target -2 is out of bounds."):
        F.cross_entropy(x, ember.tensor([0, 1, -2], device="cuda"))
    assert F.nll_loss(x, ember.tensor([0, 3, 1], device="cuda")).isfinite().item()  # the device is still usable


def training_losses(device, build, x_shape, n_classes, opt, steps):
    """The losses of `steps` full-batch steps of build() on `device`, from seed 0 and fixed data."""
    ember.manual_seed(0)
    model = build().to(device)
    optimizer = opt(model.parameters())
    g = ember.Generator().manual_seed(1)
    x = ember.randn(x_shape, generator=g).to(device)
    y = ember.randint(0, n_classes, (x_shape[0],), generator=g).to(device)
    losses = []
    for _ in range(steps):
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    assert all(p.device.type == ember.device(device).type and p.grad.device == p.device for p in model.parameters())
    return losses


def test_an_mlp_trains_on_the_gpu_as_on_the_cpu():
    nn = ember.nn
    build = lambda: nn.Sequential(nn.Linear(20, 32), nn.ReLU(), nn.LayerNorm(32), nn.Linear(32, 4))
    sgd = lambda params: ember.optim.SGD(params, lr=0.1, momentum=0.9)
    gpu = training_losses("cuda", build, (64, 20), 4, sgd, 20)
    np.testing.assert_allclose(gpu, training_losses("cpu", build, (64, 20), 4, sgd, 20), rtol=1e-4, atol=1e-5)
    assert gpu[-1] < gpu[0] * 0.5


@pytest.mark.skipif(not HAVE_TORCH_CUDA, reason="PyTorch's CUDA build is not installed")
def test_against_torch_cuda():
    ember.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False
    a, b = rand(33, 65, seed=1), rand(65, 17, seed=2)
    ta, tb = torch.from_numpy(a.numpy()).cuda(), torch.from_numpy(b.numpy()).cuda()
    np.testing.assert_allclose((a.cuda() @ b.cuda()).cpu().numpy(), (ta @ tb).cpu().numpy(), rtol=1e-5, atol=1e-5)
    x = rand(7, 11, seed=3)
    tx = torch.from_numpy(x.numpy()).cuda()
    np.testing.assert_allclose(F.log_softmax(x.cuda(), 1).cpu().numpy(),
                               torch.nn.functional.log_softmax(tx, 1).cpu().numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(F.layer_norm(x.cuda(), (11,)).cpu().numpy(),
                               torch.nn.functional.layer_norm(tx, (11,)).cpu().numpy(), rtol=1e-4, atol=1e-5)
    t = ember.tensor([1, 0, 3, 10, 2, 5, 6])
    np.testing.assert_allclose(F.cross_entropy(x.cuda(), t.cuda()).item(),
                               torch.nn.functional.cross_entropy(tx, torch.tensor(t.numpy()).cuda()).item(),
                               rtol=1e-5)


# ---- convolution (im2col + cuBLAS), pooling, padding, dropout

@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", [
    dict(x=(2, 3, 9, 9), w=(4, 3, 3, 3), stride=1, padding=1),
    dict(x=(1, 4, 8, 7), w=(6, 2, 3, 2), stride=2, padding=(1, 0), groups=2),
    dict(x=(2, 2, 10, 10), w=(3, 2, 3, 3), dilation=2, padding="same"),
    dict(x=(2, 3, 11), w=(5, 3, 4), stride=3),
    dict(x=(1, 2, 5, 6, 4), w=(3, 2, 2, 3, 2), padding=1),
], ids=str)
@pytest.mark.parametrize("cudnn", [True, False], ids=["cudnn", "im2col"])
def test_convolution_forward_and_backward(dtype, case, cudnn):
    with ember.backends.cudnn.flags(enabled=cudnn, allow_tf32=False):  # exact float32 math on both paths
        _convolution_forward_and_backward(dtype, case)


def _convolution_forward_and_backward(dtype, case):
    dt, rtol, atol = FLOATS[dtype]
    case = dict(case)
    xs, ws = case.pop("x"), case.pop("w")
    fn = {3: F.conv1d, 4: F.conv2d, 5: F.conv3d}[len(xs)]
    x, w, b = rand(*xs, seed=1).to(dt), rand(*ws, seed=2).to(dt), rand(ws[0], seed=3).to(dt)
    cpu = [t.clone().requires_grad_() for t in (x, w, b)]
    gpu = [t.detach().cuda().requires_grad_() for t in (x, w, b)]
    yc, yg = fn(*cpu, **case), fn(*gpu, **case)
    close(yg, yc, rtol * 10, atol * 10)
    up = rand(*yc.shape, seed=4).to(dt)
    (yc * up).sum().backward()
    (yg * up.cuda()).sum().backward()
    for c, g in zip(cpu, gpu):
        close(g.grad, c.grad, rtol * 100, atol * 100)


@pytest.mark.parametrize("cudnn", [True, False], ids=["cudnn", "im2col"])
def test_transposed_convolution(cudnn):
    x, w = rand(2, 4, 5, 5, seed=1), rand(4, 6, 3, 3, seed=2)
    with ember.backends.cudnn.flags(enabled=cudnn, allow_tf32=False):
        for kw in ({}, {"stride": 2, "padding": 1, "output_padding": 1}, {"groups": 2, "dilation": 2}):
            close(F.conv_transpose2d(x.cuda(), w.cuda(), **kw), F.conv_transpose2d(x, w, **kw), 1e-4, 1e-4)
            xc, wc = x.detach().clone().requires_grad_(), w.detach().clone().requires_grad_()
            xg, wg = x.detach().cuda().requires_grad_(), w.detach().cuda().requires_grad_()
            F.conv_transpose2d(xc, wc, **kw).square().sum().backward()
            F.conv_transpose2d(xg, wg, **kw).square().sum().backward()
            close(xg.grad, xc.grad, 1e-4, 1e-4)
            close(wg.grad, wc.grad, 1e-4, 1e-4)


def test_cudnn_is_used_and_its_switches():
    assert ember.backends.cudnn.is_available(), "cuDNN did not load (scripts/gpu_check.sh puts torch's on the path)"
    assert ember.backends.cudnn.version() >= 90000
    assert ember.backends.cudnn.is_acceptable(ember.ones(1).cuda())
    x, w = rand(4, 8, 16, 16, seed=1).cuda(), rand(16, 8, 3, 3, seed=2).cuda()
    ref = F.conv2d(x.double(), w.double(), padding=1)
    with ember.backends.cudnn.flags(enabled=True, allow_tf32=False):
        exact = F.conv2d(x, w, padding=1)
    with ember.backends.cudnn.flags(enabled=True, allow_tf32=True):  # PyTorch's default: TF32 tensor cores
        fast = F.conv2d(x, w, padding=1)
    close(exact.double(), ref, 1e-5, 1e-5)
    close(fast.double(), ref, 5e-3, 5e-2)
    with ember.backends.cudnn.flags(enabled=True, benchmark=True, allow_tf32=False):
        close(F.conv2d(x, w, padding=1).double(), ref, 1e-5, 1e-5)  # measured choice, then the cached one
        close(F.conv2d(x, w, padding=1).double(), ref, 1e-5, 1e-5)
    with ember.backends.cudnn.flags(enabled=True, deterministic=True, allow_tf32=False):
        xg = x.clone().requires_grad_()
        wg = w.clone().requires_grad_()
        F.conv2d(xg, wg, padding=1).sum().backward()
        g1 = wg.grad.clone()
        wg.grad = None
        F.conv2d(xg, wg, padding=1).sum().backward()
        assert ember.equal(wg.grad, g1)  # deterministic algorithms: bitwise the same
    for dt, tol in ((ember.float16, 1e-2), (ember.bfloat16, 5e-2)):
        close(F.conv2d(x.to(dt), w.to(dt), padding=1).double(), ref, tol, tol * 10)


@pytest.mark.parametrize("case", [dict(kernel_size=2), dict(kernel_size=3, stride=2, padding=1),
                                  dict(kernel_size=3, stride=1, dilation=2), dict(kernel_size=2, ceil_mode=True)],
                         ids=str)
def test_max_pool2d_forward_and_backward(case):
    x = rand(2, 3, 9, 8, seed=5)
    x[0, 0, 1, 1] = float("nan")
    xc, xg = x.clone().requires_grad_(), x.detach().cuda().requires_grad_()
    (vc, ic), (vg, ig) = F.max_pool2d(xc, return_indices=True, **case), F.max_pool2d(xg, return_indices=True, **case)
    close(vg, vc, 0, 0)
    assert ember.equal(ig.cpu(), ic)
    vc.nan_to_num().sum().backward()
    vg.nan_to_num().sum().backward()
    close(xg.grad, xc.grad, 0, 0)


def test_avg_and_adaptive_avg_pool_and_padding():
    x = rand(2, 3, 7, 9, seed=6)
    close(F.avg_pool2d(x.cuda(), 3, 2, 1), F.avg_pool2d(x, 3, 2, 1), 1e-5, 1e-6)
    close(F.adaptive_avg_pool2d(x.cuda(), (3, 4)), F.adaptive_avg_pool2d(x, (3, 4)), 1e-5, 1e-6)
    for mode in ("constant", "reflect", "replicate", "circular"):
        close(F.pad(x.cuda(), (1, 2, 2, 1), mode=mode), F.pad(x, (1, 2, 2, 1), mode=mode), 0, 0)


def test_dropout_on_the_gpu():
    x = ember.ones(1000, 100, device="cuda")
    y = F.dropout(x, 0.3, training=True)
    assert y.device.type == "cuda"
    kept = (y != 0).float().mean().item()
    assert abs(kept - 0.7) < 0.01
    assert ember.allclose(y[y != 0], ember.full((), 1 / 0.7, device="cuda"))
    assert ember.equal(F.dropout(x, 0.3, training=False), x)


def test_view_and_index_gradients_stay_on_the_gpu():
    x = rand(5, 6).cuda().requires_grad_()
    idx = ember.tensor([4, 0, 4], device="cuda")
    (x[1] * 2).sum().backward()
    (x[:, 2:5].sum() + x[idx].sum() + x.unbind(0)[3].sum() + x.max(1).values.sum()).backward()
    c = rand(5, 6).requires_grad_()
    (c[1] * 2).sum().backward()
    (c[:, 2:5].sum() + c[idx.cpu()].sum() + c.unbind(0)[3].sum() + c.max(1).values.sum()).backward()
    assert x.grad.device.type == "cuda"
    close(x.grad, c.grad, 1e-6, 1e-6)


def test_the_main_jobs_cnn_trains_on_the_gpu_as_on_the_cpu():
    nn = ember.nn
    build = lambda: nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
                                  nn.Linear(8 * 14 * 14, 10))
    adam = lambda params: ember.optim.Adam(params, lr=1e-3)
    np.testing.assert_allclose(training_losses("cuda", build, (32, 1, 28, 28), 10, adam, 10),
                               training_losses("cpu", build, (32, 1, 28, 28), 10, adam, 10), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16"])
@pytest.mark.parametrize("shape", [(8, 3), (4, 3, 5), (2, 4, 3, 3), (0, 3, 4)], ids=str)
def test_batch_norm_training_and_eval(dtype, shape):
    dt, rtol, atol = FLOATS[dtype]
    x = (rand(*shape, seed=11) * 2 + 0.5).to(dt)
    c = shape[1]
    w, b = rand(c, seed=12).to(dt), rand(c, seed=13).to(dt)
    stats = {dev: (ember.zeros(c, device=dev), ember.ones(c, device=dev)) for dev in ("cpu", "cuda")}
    outs = {}
    for dev in ("cpu", "cuda"):
        xs = x.detach().to(dev).requires_grad_()
        ws, bs = w.detach().to(dev).requires_grad_(), b.detach().to(dev).requires_grad_()
        rm, rv = stats[dev]
        y = F.batch_norm(xs, rm, rv, ws, bs, training=True, momentum=0.3)
        (y * rand(*shape, seed=14).to(dt).to(dev)).sum().backward()
        ye = F.batch_norm(xs.detach(), rm, rv, ws.detach(), bs.detach(), training=False)
        outs[dev] = (y, ye, xs.grad, ws.grad, bs.grad, rm, rv)
    for g, c_ in zip(outs["cuda"], outs["cpu"]):
        close(g, c_, rtol * 10, atol * 10)


def test_embedding_forward_backward_and_bad_index():
    w = rand(10, 4, seed=15)
    idx = ember.tensor([[1, 3, 3], [9, 0, 1]])
    wc, wg = w.clone().requires_grad_(), w.detach().cuda().requires_grad_()
    yc, yg = F.embedding(idx, wc, padding_idx=0), F.embedding(idx.cuda(), wg, padding_idx=0)
    close(yg, yc, 0, 0)
    (yc * 2).sum().backward()
    (yg * 2).sum().backward()
    close(wg.grad, wc.grad, 0, 0)
    with pytest.raises(IndexError, match="index out of range in self"):
        F.embedding(ember.tensor([10], device="cuda"), wg)


def test_gradients_of_cross_device_copy_scatter_normal_and_bce():
    src = rand(4).requires_grad_()
    dst = ember.zeros(4, device="cuda")
    dst.copy_(src)
    (dst * 3).sum().backward()
    assert src.grad.device.type == "cpu" and ember.equal(src.grad, ember.full((4,), 3.0))
    x = rand(3, 4).cuda().requires_grad_()
    idx = ember.tensor([[0, 1, 2, 0]], device="cuda")
    x.scatter(0, idx, ember.ones(1, 4, device="cuda")).sum().backward()
    xc = rand(3, 4).requires_grad_()
    xc.scatter(0, idx.cpu(), ember.ones(1, 4)).sum().backward()
    close(x.grad, xc.grad, 0, 0)
    mean = ember.zeros(5, device="cuda", requires_grad=True)
    ember.normal(mean, 1.0).sum().backward()
    assert mean.grad.device.type == "cuda"
    logits, target = rand(6, 3), (rand(6, 3, seed=2) > 0).float()
    lc, lg = logits.clone().requires_grad_(), logits.detach().cuda().requires_grad_()
    F.binary_cross_entropy_with_logits(lc, target).backward()
    F.binary_cross_entropy_with_logits(lg, target.cuda()).backward()
    close(lg.grad, lc.grad, 1e-5, 1e-6)


# ---- autocast and GradScaler on the GPU (PyTorch's CUDA op lists)

@pytest.mark.parametrize("low", [ember.bfloat16, ember.float16])
def test_cuda_autocast_op_lists(low):
    a, b = rand(8, 8).cuda(), rand(8, 8, seed=1).cuda()
    w = rand(3, 2, 3, 3, seed=2).cuda()
    with ember.autocast("cuda", dtype=low):
        assert ember.is_autocast_enabled("cuda")
        assert (a @ b).dtype == low and ember.mm(a, b).dtype == low and F.linear(a, b).dtype == low
        assert ember.mv(a, b[0]).dtype == low  # on CUDA's list (not the CPU's)
        assert F.conv2d(rand(1, 2, 5, 5).cuda(), w).dtype == low
        h = (a @ b)
        assert ember.exp(h).dtype == ember.float32 and ember.softmax(h, 1).dtype == ember.float32
        assert h.sum().dtype == ember.float32 and F.layer_norm(h, (8,)).dtype == ember.float32
        assert ember.cat([h, a]).dtype == ember.float32  # promote: the widest input
        assert (h + h).dtype == low  # not on the lists: runs as called
        assert F.cross_entropy(h, ember.tensor([0, 1, 2, 3, 4, 5, 6, 7], device="cuda")).dtype == ember.float32
        with pytest.raises(RuntimeError, match="unsafe to autocast"):
            F.binary_cross_entropy(ember.sigmoid(h), ember.ones(8, 8, device="cuda"))
        c = rand(4, 4)  # CPU tensors follow the CPU's autocast, which is off here
        assert (c @ c).dtype == ember.float32
    assert not ember.is_autocast_enabled("cuda")
    if HAVE_TORCH_CUDA:
        ta, tb = torch.from_numpy(a.cpu().numpy()).cuda(), torch.from_numpy(b.cpu().numpy()).cuda()
        tlow = torch.bfloat16 if low is ember.bfloat16 else torch.float16
        with torch.autocast("cuda", dtype=tlow):
            th = ta @ tb
            assert str(torch.exp(th).dtype) == "torch.float32" and th.sum().dtype == torch.float32
            assert torch.mv(ta, tb[0]).dtype == tlow


def test_grad_scaler_on_the_gpu():
    ember.manual_seed(0)
    model = ember.nn.Sequential(ember.nn.Linear(16, 32), ember.nn.ReLU(), ember.nn.Linear(32, 4)).cuda()
    opt = ember.optim.SGD(model.parameters(), lr=0.05)
    scaler = ember.amp.GradScaler("cuda")
    assert scaler.is_enabled()
    x, y = rand(64, 16).cuda(), ember.randint(0, 4, (64,)).cuda()
    losses = []
    for _ in range(30):
        opt.zero_grad()
        with ember.autocast("cuda", dtype=ember.float16):
            loss = F.cross_entropy(model(x), y)
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        losses.append(loss.item())
    assert losses[-1] < losses[0]
    assert scaler.get_scale() == 2.0 ** 16  # no overflow in 30 steps of this model
    # an overflow skips the step and halves the scale
    before = [p.detach().clone() for p in model.parameters()]
    opt.zero_grad()
    with ember.autocast("cuda", dtype=ember.float16):
        loss = F.cross_entropy(model(x), y) * float("inf")
    scaler.scale(loss).backward()
    scaler.step(opt)
    scaler.update()
    assert scaler.get_scale() == 2.0 ** 15
    assert all(ember.equal(p, b) for p, b in zip(model.parameters(), before))


# ---- recurrent layers (cuBLAS step GEMMs + fused pointwise steps)

@pytest.mark.parametrize("kind", ["LSTM", "GRU", "RNN"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("bidirectional", [False, True])
def test_recurrent_layers_match_the_cpu(kind, dtype, bidirectional):
    dt, rtol, atol = FLOATS[dtype]
    ember.manual_seed(3)
    cpu = getattr(ember.nn, kind)(6, 5, num_layers=2, bidirectional=bidirectional).to(dt)
    gpu = getattr(ember.nn, kind)(6, 5, num_layers=2, bidirectional=bidirectional).to(dt)
    gpu.load_state_dict(cpu.state_dict())
    gpu = gpu.cuda()
    x = rand(7, 3, 6, seed=4).to(dt)
    xc, xg = x.clone().requires_grad_(), x.detach().cuda().requires_grad_()
    (yc, _), (yg, _) = cpu(xc), gpu(xg)
    close(yg, yc, rtol * 10, atol * 10)
    up = rand(*yc.shape, seed=5).to(dt)
    (yc * up).sum().backward()
    (yg * up.cuda()).sum().backward()
    close(xg.grad, xc.grad, rtol * 100, atol * 100)
    for (n, pc), pg in zip(cpu.named_parameters(), gpu.parameters()):
        close(pg.grad, pc.grad, rtol * 100, atol * 100)


def test_recurrent_cells_match_the_cpu():
    for cell in (ember.nn.LSTMCell, ember.nn.GRUCell):
        ember.manual_seed(6)
        c = cell(4, 3)
        g = cell(4, 3)
        g.load_state_dict(c.state_dict())
        g = g.cuda()
        x = rand(5, 4, seed=7)
        xc, xg = x.clone().requires_grad_(), x.detach().cuda().requires_grad_()
        oc, og = c(xc), g(xg)
        oc, og = (oc[0], og[0]) if isinstance(oc, tuple) else (oc, og)
        close(og, oc, 1e-5, 1e-6)
        oc.pow(2).sum().backward()
        og.pow(2).sum().backward()
        close(xg.grad, xc.grad, 1e-4, 1e-5)


@pytest.mark.parametrize("opt", ["SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta", "Adamax", "NAdam", "RAdam"])
def test_every_fused_optimizer_steps_as_on_the_cpu(opt):
    kwargs = {"SGD": dict(lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.01),
              "Adam": dict(lr=0.01, amsgrad=True), "AdamW": dict(lr=0.01, weight_decay=0.1),
              "RMSprop": dict(lr=0.01, momentum=0.5, centered=True, weight_decay=0.01),
              "Adagrad": dict(lr=0.1, lr_decay=0.01), "Adadelta": dict(lr=1.0, weight_decay=0.01),
              "Adamax": dict(lr=0.01), "NAdam": dict(lr=0.01, decoupled_weight_decay=True, weight_decay=0.01),
              "RAdam": dict(lr=0.01, weight_decay=0.01)}[opt]
    nn = ember.nn
    build = lambda: nn.Sequential(nn.Linear(12, 16), nn.Tanh(), nn.Linear(16, 3))
    make = lambda params: getattr(ember.optim, opt)(params, **kwargs)
    np.testing.assert_allclose(training_losses("cuda", build, (32, 12), 3, make, 12),
                               training_losses("cpu", build, (32, 12), 3, make, 12), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_embedding_bag(mode):
    w = rand(10, 3, seed=16)
    idx, off = ember.tensor([1, 2, 4, 5, 4, 3, 2, 9]), ember.tensor([0, 4, 4])
    psw = rand(8, seed=17) if mode == "sum" else None
    wc, wg = w.clone().requires_grad_(), w.detach().cuda().requires_grad_()
    yc = F.embedding_bag(idx, wc, off, mode=mode, per_sample_weights=psw)
    yg = F.embedding_bag(idx.cuda(), wg, off.cuda(), mode=mode, per_sample_weights=None if psw is None else psw.cuda())
    close(yg, yc, 1e-6, 1e-6)
    yc.sum().backward()
    yg.sum().backward()
    close(wg.grad, wc.grad, 1e-6, 1e-6)


@pytest.mark.parametrize("out", [(3, 4), (1, 1), (5, 9)], ids=str)
def test_adaptive_max_pool(out):
    x = rand(2, 3, 7, 9, seed=18)
    x[0, 1, 2, 2] = float("nan")
    (vc, ic), (vg, ig) = F.adaptive_max_pool2d(x, out, return_indices=True), \
        F.adaptive_max_pool2d(x.cuda(), out, return_indices=True)
    close(vg, vc, 0, 0)
    assert ember.equal(ig.cpu(), ic)
    x1 = rand(2, 3, 11, seed=19)
    close(F.adaptive_max_pool1d(x1.cuda(), 4), F.adaptive_max_pool1d(x1, 4), 0, 0)


ACTIVATIONS = {
    "gelu": lambda x: F.gelu(x), "gelu_tanh": lambda x: F.gelu(x, approximate="tanh"), "silu": F.silu,
    "mish": F.mish, "relu6": F.relu6, "hardtanh": lambda x: F.hardtanh(x, -0.5, 0.7), "leaky_relu": F.leaky_relu,
    "elu": F.elu, "selu": F.selu, "celu": F.celu, "softplus": F.softplus, "hardswish": F.hardswish,
    "hardsigmoid": F.hardsigmoid, "softshrink": F.softshrink, "hardshrink": F.hardshrink, "logsigmoid": F.logsigmoid,
    "softsign": F.softsign, "tanhshrink": F.tanhshrink, "glu": lambda x: F.glu(x, -1),
    "prelu": lambda x: F.prelu(x, ember.full((4,), 0.2, device=x.device)),
    "group_norm": lambda x: F.group_norm(x, 2), "instance_norm": lambda x: F.instance_norm(x),
    "rms_norm": lambda x: F.rms_norm(x, (6,)), "local_response_norm": lambda x: F.local_response_norm(x, 3),
    "normalize": lambda x: F.normalize(x, dim=1),
}


@pytest.mark.parametrize("name", list(ACTIVATIONS))
def test_activations_and_norms_match_the_cpu(name):
    fn = ACTIVATIONS[name]
    x = rand(3, 4, 6, seed=20) * 3
    xc, xg = x.clone().requires_grad_(), x.detach().cuda().requires_grad_()
    yc, yg = fn(xc), fn(xg)
    close(yg, yc, 1e-5, 1e-6)
    yc.pow(2).sum().backward()
    yg.pow(2).sum().backward()
    close(xg.grad, xc.grad, 1e-4, 1e-5)


# ---- interpolation, grid sampling, affine grids (separable resampling on the GPU)

INTERP = [("nearest", 1, None), ("nearest-exact", 2, None), ("linear", 1, False), ("linear", 1, True),
          ("bilinear", 2, False), ("bilinear", 2, True), ("bicubic", 2, False), ("trilinear", 3, True),
          ("area", 2, None), ("nearest", 3, None)]


@pytest.mark.parametrize("mode,k,align", INTERP, ids=str)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_interpolate_forward_and_backward(mode, k, align, dtype):
    dt, rtol, atol = FLOATS[dtype]
    x = rand(2, 3, *([5, 7, 4][:k]), dtype=dt)
    size = [9, 3, 6][:k]
    kw = {} if align is None else {"align_corners": align}
    outs, grads = {}, {}
    for dev in ("cpu", "cuda"):
        xd = x.to(dev).requires_grad_()
        y = F.interpolate(xd, size=size, mode=mode, **kw)
        y.backward(ember.arange(y.numel(), dtype=dt, device=dev).reshape(y.shape).sin())
        outs[dev], grads[dev] = y, xd.grad
    close(outs["cuda"], outs["cpu"], rtol, atol)
    close(grads["cuda"], grads["cpu"], rtol, atol)
    if mode in ("bilinear", "bicubic"):  # scale factors and antialiasing too
        y = F.interpolate(x.cuda(), scale_factor=0.5, mode=mode, antialias=True)
        close(y, F.interpolate(x, scale_factor=0.5, mode=mode, antialias=True), rtol, atol)


@pytest.mark.parametrize("mode", ["bilinear", "nearest"])
@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
def test_grid_sample_and_affine_grid(mode, padding_mode):
    x = rand(2, 3, 6, 5, dtype=ember.float64)
    theta = rand(2, 2, 3, dtype=ember.float64, seed=1) * 0.7
    outs, grads = {}, {}
    for dev in ("cpu", "cuda"):
        xd, td = x.to(dev).requires_grad_(), theta.to(dev).requires_grad_()
        grid = F.affine_grid(td, (2, 3, 4, 7), align_corners=False)
        y = F.grid_sample(xd, grid, mode=mode, padding_mode=padding_mode, align_corners=False)
        y.sum().backward()
        outs[dev], grads[dev] = y, (xd.grad, td.grad)
    close(outs["cuda"], outs["cpu"], 1e-10, 1e-10)
    close(grads["cuda"][0], grads["cpu"][0], 1e-10, 1e-10)
    close(grads["cuda"][1], grads["cpu"][1], 1e-10, 1e-10)
