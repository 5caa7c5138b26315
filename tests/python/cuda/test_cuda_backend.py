"""The CUDA backend against Ember's own CPU results (and PyTorch's CUDA build where it is installed):
device tensors, copies of any strides and dtypes, elementwise ops, reductions, the caching
allocator, streams and events, autograd on the GPU, and PyTorch's errors for bad input. Skips
without a GPU (scripts/gpu_check.sh runs it on one)."""
import math

import numpy as np
import pytest

import ember

pytestmark = pytest.mark.skipif(not ember.cuda.is_available(), reason="no CUDA GPU")

try:
    import torch
    HAVE_TORCH_CUDA = torch.cuda.is_available()
except Exception:  # torch absent or broken: the Ember-vs-CPU checks still run
    torch, HAVE_TORCH_CUDA = None, False

DT = {"float32": ember.float32, "float64": ember.float64, "int64": ember.int64, "int32": ember.int32,
      "int16": ember.int16, "int8": ember.int8, "uint8": ember.uint8, "bool": ember.bool,
      "float16": ember.float16, "bfloat16": ember.bfloat16}


def same(gpu, cpu, rtol=1e-5, atol=1e-6):
    """gpu (a CUDA tensor) equals cpu (the CPU result): dtype, shape, values (NaN where NaN)."""
    assert gpu.device.type == "cuda", gpu.device
    back = gpu.cpu()
    assert back.dtype == cpu.dtype and back.shape == cpu.shape, (back.dtype, cpu.dtype, back.shape, cpu.shape)
    a, b = back.double().numpy() if back.dtype in (ember.float16, ember.bfloat16) else back.numpy(), \
        cpu.double().numpy() if cpu.dtype in (ember.float16, ember.bfloat16) else cpu.numpy()
    if a.dtype.kind in "fc":
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, equal_nan=True)
    else:
        np.testing.assert_array_equal(a, b)


def test_device_queries():
    assert ember.cuda.device_count() >= 1 and ember.cuda.is_initialized() in (True, False)
    p = ember.cuda.get_device_properties(0)
    assert p.total_memory > 0 and p.multi_processor_count > 0 and p.name == ember.cuda.get_device_name(0)
    assert ember.cuda.get_device_capability(0) == (p.major, p.minor)
    assert ember.cuda.current_device() == 0
    free, total = ember.cuda.mem_get_info()
    assert 0 < free <= total
    assert ember.accelerator.current_accelerator() == ember.device("cuda")
    assert ember.accelerator.device_count() == ember.cuda.device_count()
    if HAVE_TORCH_CUDA:
        assert ember.cuda.get_device_name(0) == torch.cuda.get_device_name(0)
        assert ember.cuda.get_device_capability(0) == torch.cuda.get_device_capability(0)


@pytest.mark.parametrize("dtype", list(DT))
def test_round_trip_every_dtype(dtype):
    x = (ember.randn(5, 7) * 50).to(DT[dtype])
    g = x.cuda()
    assert g.is_cuda and g.device == ember.device("cuda:0") and g.dtype == x.dtype
    same(g, x)
    assert ember.equal(g.cpu(), x)


def test_copies_of_any_strides_and_dtypes():
    x = ember.randn(6, 8, 5)
    g = x.cuda()
    same(g.transpose(0, 2).contiguous(), x.transpose(0, 2).contiguous())
    same(g[:, ::2, 1:4].contiguous(), x[:, ::2, 1:4].contiguous())
    same(g.permute(2, 0, 1).to(ember.float16), x.permute(2, 0, 1).to(ember.float16), rtol=1e-3, atol=1e-3)
    same(g.to(ember.float64), x.to(ember.float64))
    same((g * 10).to(ember.int32), (x * 10).to(ember.int32))
    same(g.gt(0).to(ember.float32), x.gt(0).to(ember.float32))
    cpu_dst = ember.zeros(5, 8, 6).transpose(0, 2)  # a strided CPU destination of a device source
    cpu_dst.copy_(g)
    assert ember.equal(cpu_dst, x)
    dev_dst = ember.zeros(5, 8, 6, device="cuda").transpose(0, 2)
    dev_dst.copy_(x)  # CPU -> strided device destination
    same(dev_dst, x)
    same(g.t() if g.dim() == 2 else g.mT.contiguous(), x.mT.contiguous())
    same(g.expand(2, 6, 8, 5).contiguous(), x.expand(2, 6, 8, 5).contiguous())
    y = ember.randn(6, 3, 5)
    same(ember.cat([g, y.cuda()], 1), ember.cat([x, y], 1))  # copies into narrowed views of the result
    same(ember.stack([g[:, :3], y.cuda()]), ember.stack([x[:, :3], y]))


def test_factories_on_device():
    same(ember.zeros(3, 4, device="cuda"), ember.zeros(3, 4))
    same(ember.ones(2, dtype=ember.int64, device="cuda"), ember.ones(2, dtype=ember.int64))
    same(ember.full((2, 3), 7.5, device="cuda"), ember.full((2, 3), 7.5))
    same(ember.full((4,), 3, dtype=ember.float16, device="cuda"), ember.full((4,), 3, dtype=ember.float16))
    same(ember.zeros_like(ember.ones(3).cuda()), ember.zeros(3))
    assert ember.empty(0, device="cuda").numel() == 0


UNARY = ["abs", "neg", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "rsqrt", "sin", "cos",
         "tan", "sinh", "cosh", "tanh", "asin", "acos", "atan", "asinh", "atanh", "sigmoid", "relu", "erf", "erfc",
         "erfinv", "ceil", "floor", "round", "trunc", "frac", "reciprocal", "sign", "square", "isnan", "isinf",
         "isfinite", "signbit", "logical_not", "lgamma", "i0"]


@pytest.mark.parametrize("op", UNARY)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_unary_against_cpu(op, dtype):
    x = ember.randn(33, 17, dtype=DT[dtype])
    if op in ("asin", "acos", "atanh", "erfinv"):
        x = x.clamp(-0.99, 0.99)
    x[0, 0], x[0, 1], x[0, 2] = float("nan"), float("inf"), -0.0
    f = getattr(ember, op)
    same(f(x.cuda()), f(x), rtol=1e-5 if dtype == "float32" else 1e-12, atol=1e-6)
    same(f(x.cuda().t()), f(x.t()), rtol=1e-5 if dtype == "float32" else 1e-12, atol=1e-6)  # non-contiguous


BINARY = ["add", "sub", "mul", "div", "maximum", "minimum", "fmax", "fmin", "pow", "atan2", "remainder", "fmod",
          "floor_divide", "eq", "ne", "lt", "le", "gt", "ge", "hypot", "copysign", "xlogy", "logical_and",
          "logical_xor"]


@pytest.mark.parametrize("op", BINARY)
def test_binary_against_cpu_with_broadcasting(op):
    a, b = ember.randn(4, 1, 6), ember.randn(5, 1) + 0.5
    f = getattr(ember, op)
    same(f(a.cuda(), b.cuda()), f(a, b), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("op", ["add", "sub", "mul", "remainder", "floor_divide", "bitwise_and", "bitwise_or",
                                "bitwise_xor", "maximum", "eq", "lt", "gcd"])
@pytest.mark.parametrize("dtype", ["int64", "int32", "int8", "uint8"])
def test_integer_binary_against_cpu(op, dtype):
    a = ember.randint(-100, 100, (50,)).to(DT[dtype])
    b = ember.randint(1, 20, (50,)).to(DT[dtype])
    f = getattr(ember, op)
    same(f(a.cuda(), b.cuda()), f(a, b))


def test_type_promotion_scalars_and_in_place():
    i, x = ember.randint(-5, 5, (3, 4)), ember.randn(4)
    same(i.cuda() + x.cuda(), i + x)  # int + float -> float
    same(x.cuda() * 2.5, x * 2.5)
    same(i.cuda() / 2, i / 2)
    same(x.cuda() + ember.tensor(3.0), x + ember.tensor(3.0))  # a CPU 0-d tensor joins a device op
    h = x.to(ember.float16)
    same(h.cuda() + h.cuda(), h + h, rtol=1e-3, atol=1e-3)
    acc = x.cuda().clone()
    acc.mul_(x.cuda()).add_(1, alpha=2)
    same(acc, x * x + 2)
    same(ember.where(x.cuda() > 0, x.cuda(), -x.cuda()), ember.where(x > 0, x, -x))
    same(x.cuda().clamp(-0.5, 0.5), x.clamp(-0.5, 0.5))
    same(ember.lerp(x.cuda(), ember.ones(4).cuda(), 0.3), ember.lerp(x, ember.ones(4), 0.3))
    assert x.cuda()[2].item() == x[2].item()


@pytest.mark.parametrize("shape,dim", [((1000,), None), ((3, 1000), 1), ((1000, 3), 0), ((7, 5, 9), 1),
                                       ((2, 300000), 1), ((0, 4), 0), ((4, 0), 1)])
def test_reductions_against_cpu(shape, dim):
    x = ember.randn(*shape, dtype=ember.float64)
    g = x.cuda()
    kw = {} if dim is None else {"dim": dim}
    same(g.sum(**kw), x.sum(**kw), rtol=1e-10)
    same(g.mean(**kw), x.mean(**kw), rtol=1e-10)
    if x.numel() and (dim is None or shape[dim]):
        same(g.amax(**kw), x.amax(**kw))
        same(g.amin(**kw), x.amin(**kw))
        same(g.argmax(**kw), x.argmax(**kw))
        same(g.argmin(**kw), x.argmin(**kw))
        same(g.prod(**kw) if dim is not None else (g[:50]).prod(), x.prod(**kw) if dim is not None else x[:50].prod(),
             rtol=1e-10)
    same((g > 0).any(**kw), (x > 0).any(**kw))
    same((g > -5).all(**kw), (x > -5).all(**kw))


def test_reduction_semantics():
    x = ember.tensor([1.0, float("nan"), 3.0, float("nan"), 3.0])
    same(x.cuda().amax(), x.amax())
    same(x.cuda().argmax(), x.argmax())  # the first NaN
    y = ember.tensor([[2, 7, 7, 1]])
    same(y.cuda().argmax(1), y.argmax(1))  # ties: the first index
    i = ember.full((10,), 2**62, dtype=ember.int64)
    same(i.cuda().sum(), i.sum())  # wraps as the CPU does
    big = ember.rand(10_000_000)
    assert math.isclose(big.cuda().sum().item(), big.double().sum().item(), rel_tol=1e-4)


def test_autograd_on_the_gpu():
    x = ember.randn(4, 5, requires_grad=True)
    g = x.cuda()
    y = (g * g + g.exp()).sum()
    y.backward()
    assert x.grad.device.type == "cpu"  # the gradient moves back to the leaf's device
    same(x.grad.cuda(), 2 * x.detach() + x.detach().exp(), rtol=1e-5)
    w = ember.randn(3).cuda().requires_grad_()  # a leaf on the GPU
    (w * 3).sum().backward()
    assert w.grad.is_cuda
    same(w.grad, ember.full((3,), 3.0))


def test_mixed_devices_raise_pytorchs_error():
    g, c = ember.ones(3).cuda(), ember.ones(3)
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device, but found at least two "
                                           "devices, cuda:0 and cpu!"):
        g + c
    with pytest.raises(RuntimeError, match="same device"):
        c.add_(g)
    with pytest.raises(RuntimeError, match="invalid device ordinal"):
        ember.zeros(2, device=f"cuda:{ember.cuda.device_count() + 3}")


def test_op_without_a_cuda_kernel_raises_not_implemented():
    with pytest.raises(NotImplementedError, match="cuda"):
        ember.cumsum(ember.ones(2, 3).cuda(), 1)


def test_allocator_statistics_and_steady_state():
    ember.cuda.synchronize()
    ember.cuda.empty_cache()
    base = ember.cuda.memory_allocated()
    x = ember.empty(1000, device="cuda")  # 4000 bytes, rounded to 4096 (a multiple of 512)
    assert ember.cuda.memory_allocated() - base == 4096
    assert ember.cuda.max_memory_allocated() >= ember.cuda.memory_allocated()
    assert ember.cuda.memory_reserved() >= ember.cuda.memory_allocated()
    del x
    assert ember.cuda.memory_allocated() == base
    # a training-like loop: no device allocation after the first iteration
    w = ember.randn(256, 256).cuda()
    counts = []
    for _ in range(100):
        h = (w * 2 + 1).relu().sum(0)
        s = h.sum()
        del h, s
        counts.append(ember.cuda.memory_stats()["num_device_alloc"])
    assert counts[1] == counts[-1], counts[:3]
    before = ember.cuda.memory_reserved()
    ember.cuda.empty_cache()
    assert ember.cuda.memory_reserved() <= before
    ember.cuda.reset_peak_memory_stats()
    assert ember.cuda.max_memory_allocated() == ember.cuda.memory_allocated()
    assert "allocated_bytes.all.current" in ember.cuda.memory_stats()


def test_out_of_memory_raises_and_leaves_the_allocator_consistent():
    before = ember.cuda.memory_allocated()
    with pytest.raises(ember.cuda.OutOfMemoryError, match="out of memory. Tried to allocate") as e:
        ember.empty(2**44, dtype=ember.uint8, device="cuda")  # 16 TiB
    assert isinstance(e.value, RuntimeError)
    assert ember.cuda.memory_allocated() == before
    assert ember.cuda.memory_stats()["num_ooms"] >= 1
    x = ember.ones(1000, device="cuda")  # still works
    assert x.sum().item() == 1000


def test_streams_and_events():
    assert ember.cuda.current_stream().cuda_stream == 0 == ember.cuda.default_stream().cuda_stream
    s = ember.cuda.Stream()
    assert s.cuda_stream != 0
    x = ember.randn(1000, 1000).cuda()
    start, end = ember.cuda.Event(enable_timing=True), ember.cuda.Event(enable_timing=True)
    s.wait_stream(ember.cuda.current_stream())  # x was written on the default stream
    with ember.cuda.stream(s):
        assert ember.cuda.current_stream() == s
        start.record()
        y = (x * 2).sum()
        end.record()
    assert ember.cuda.current_stream().cuda_stream == 0
    end.synchronize()
    assert end.query() and s.query()
    assert start.elapsed_time(end) >= 0
    ember.cuda.current_stream().wait_stream(s)
    assert math.isclose(y.item(), 2 * x.sum().item(), rel_tol=1e-4)
    x.record_stream(s) if hasattr(x, "record_stream") else None
    ember.cuda.synchronize()


@pytest.mark.skipif(not HAVE_TORCH_CUDA, reason="PyTorch's CUDA build is not installed")
def test_against_pytorch_cuda():
    a = np.random.default_rng(0).standard_normal((64, 33)).astype(np.float32)
    b = np.random.default_rng(1).standard_normal((33,)).astype(np.float32)
    ea, eb = ember.from_numpy(a).cuda(), ember.from_numpy(b).cuda()
    ta, tb = torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda()
    for f in ["add", "mul", "maximum", "atan2"]:
        np.testing.assert_allclose(getattr(ember, f)(ea, eb).cpu().numpy(), getattr(torch, f)(ta, tb).cpu().numpy(),
                                   rtol=1e-6, atol=1e-6)
    for f in ["exp", "tanh", "sigmoid", "erf", "lgamma"]:
        np.testing.assert_allclose(getattr(ember, f)(ea).cpu().numpy(), getattr(torch, f)(ta).cpu().numpy(),
                                   rtol=2e-6, atol=1e-6)
    np.testing.assert_allclose(ea.sum(0).cpu().numpy(), ta.sum(0).cpu().numpy(), rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(ea.argmax(1).cpu().numpy(), ta.argmax(1).cpu().numpy())


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_random_draws_the_cpus_philox_stream(dtype):
    # uniform_/normal_ on the GPU read the same Philox counters as the CPU: a seed, the same values
    for make in (lambda dev: ember.rand(1001, dtype=DT[dtype], device=dev),
                 lambda dev: ember.randn(7, 13, dtype=DT[dtype], device=dev),
                 lambda dev: ember.empty(5, 6, dtype=DT[dtype], device=dev).t().normal_(2.0, 3.0),
                 lambda dev: ember.empty(333, dtype=DT[dtype], device=dev).uniform_(-1, 4)):
        ember.manual_seed(123)  # seeds the CPU's generator and every GPU's
        cpu = make("cpu")
        cpu_state = ember.get_rng_state()
        ember.manual_seed(123)
        gpu = make("cuda")
        same(gpu, cpu, rtol=1e-6 if dtype != "float16" else 1e-3, atol=1e-7)
        # the GPU's generator advanced by the CPU's counters, and the CPU's did not move
        assert ember.equal(ember.cuda.get_rng_state(), cpu_state)
        assert ember.cuda.get_rng_state().device.type == "cpu"
        ember.manual_seed(123)



def test_multinomial_draws_the_cpus_samples():
    probs = ember.rand(6, 40, dtype=ember.float64)
    probs[2, 5:] = 0  # a row with few categories
    for replacement, n in ((True, 100), (False, 5), (False, 40 - 35)):
        ember.manual_seed(7)
        cpu = ember.multinomial(probs, n, replacement)
        cpu_state = ember.get_rng_state()
        ember.manual_seed(7)
        gpu = ember.multinomial(probs.cuda(), n, replacement)
        assert gpu.device.type == "cuda" and ember.equal(gpu.cpu(), cpu)
        assert ember.equal(ember.cuda.get_rng_state(), cpu_state)  # the same counters used
    ember.manual_seed(3)
    one = ember.multinomial(ember.tensor([0.1, 0.0, 0.9], device="cuda"), 4, True)
    assert one.shape == (4,) and set(one.tolist()) <= {0, 2}
    for bad, msg in ((ember.tensor([[1.0, 2.0], [1.0, float("nan")]]), "inf`, `nan` or element < 0"),
                     (ember.tensor([[1.0, 2.0], [0.0, 0.0]]), "sum of probabilities <= 0"),
                     (ember.tensor([[1.0, 2.0, 0.0]]), "not enough non-negative category")):
        with pytest.raises(RuntimeError, match=msg):
            ember.multinomial(bad.cuda(), 3 if "enough" in msg else 2, False)
        with pytest.raises(RuntimeError, match=msg):  # the CPU says the same
            ember.multinomial(bad, 3 if "enough" in msg else 2, False)
    if HAVE_TORCH_CUDA:  # the same distribution as PyTorch's (different streams): frequencies within 3 sigma
        p = ember.tensor([0.1, 0.2, 0.3, 0.4], device="cuda")
        counts = ember.bincount(ember.multinomial(p, 40000, True), minlength=4).cpu().double() / 40000
        theirs = torch.bincount(torch.multinomial(torch.tensor([0.1, 0.2, 0.3, 0.4], device="cuda"), 40000, True),
                                minlength=4).cpu().double() / 40000
        assert float((counts - ember.tensor(theirs.numpy())).abs().max()) < 0.015


def test_save_and_load_keep_the_device(tmp_path):
    x = ember.randn(4, 5).cuda()
    path = tmp_path / "t.pt"
    ember.save({"x": x, "view": x[1:, ::2]}, path)
    back = ember.load(path)
    assert back["x"].is_cuda and ember.equal(back["x"].cpu(), x.cpu())
    assert ember.equal(back["view"].cpu(), x[1:, ::2].cpu())
    assert not ember.load(path, map_location="cpu")["x"].is_cuda
    if HAVE_TORCH_CUDA:  # torch reads Ember's file onto its GPU, as if torch had written it
        t = torch.load(path)["x"]
        assert t.is_cuda and np.array_equal(t.cpu().numpy(), x.cpu().numpy())


# ---------------------------------------------------------------- generators, other samplers
def test_per_device_generators():
    ember.manual_seed(7)
    a = ember.rand(100)
    ember.manual_seed(7)
    ember.rand(50, device="cuda")  # draws from the GPU's generator: the CPU stream is untouched
    assert ember.equal(ember.rand(100), a)
    ember.cuda.manual_seed(11)
    s = ember.cuda.get_rng_state()
    x = ember.randn(64, device="cuda")
    ember.cuda.set_rng_state(s)
    same(ember.randn(64, device="cuda"), x.cpu())
    assert ember.cuda.initial_seed() == 11
    assert len(ember.cuda.default_generators) == ember.cuda.device_count()
    assert len(ember.cuda.get_rng_state_all()) == ember.cuda.device_count()
    g = ember.Generator(device="cuda")
    assert g.device == ember.device("cuda:0")
    g.manual_seed(5)
    y = ember.rand(10, generator=g, device="cuda")
    g.manual_seed(5)
    same(ember.rand(10, generator=g, device="cuda"), y.cpu())
    with pytest.raises(RuntimeError, match="Expected a 'cuda' device type for generator but found 'cpu'"):
        ember.rand(3, generator=ember.Generator(), device="cuda")
    with pytest.raises(RuntimeError, match="Expected a 'cpu' device type for generator but found 'cuda'"):
        ember.rand(3, generator=g)
    if HAVE_TORCH_CUDA:
        assert len(torch.cuda.default_generators) == len(ember.cuda.default_generators)


def test_integer_bernoulli_and_exponential_samplers_match_the_cpu():
    for make in (lambda dev: ember.randint(-5, 17, (301,), device=dev),
                 lambda dev: ember.randint(0, 2**62, (33, 3), device=dev),
                 lambda dev: ember.empty(40, dtype=ember.uint8, device=dev).random_(),
                 lambda dev: ember.empty(99, dtype=ember.float32, device=dev).random_(3, 9),
                 lambda dev: ember.bernoulli(ember.linspace(0, 1, 257, device=dev)),
                 lambda dev: ember.empty(5, 9, device=dev).bernoulli_(0.3),
                 lambda dev: ember.empty(500, dtype=ember.float64, device=dev).exponential_(2.5)):
        ember.manual_seed(99)
        cpu = make("cpu")
        ember.manual_seed(99)
        same(make("cuda"), cpu, rtol=1e-12, atol=0)
    with pytest.raises(RuntimeError, match=r"bernoulli_ expects all elements of p to be in \[0, 1\]"):
        ember.bernoulli(ember.tensor([0.5, 1.5], device="cuda"))
    with pytest.raises(RuntimeError, match=r"bernoulli_ expects all elements of p to be in \[0, 1\]"):
        ember.bernoulli(ember.tensor([0.5, float("nan")], device="cuda"))
    with pytest.raises(NotImplementedError, match="cuda"):  # no GPU sampler yet
        ember.multinomial(ember.ones(4, device="cuda"), 2)


# ---------------------------------------------------------------- indexing, gather / scatter
def _both(x):
    return x, x.cuda()


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int32", "int16", "int8", "uint8", "bool",
                                   "float16", "bfloat16"])
def test_advanced_indexing_against_cpu(dtype):
    x = (ember.randn(6, 7, 5) * 20).to(DT[dtype])
    c, g = _both(x)
    i = ember.tensor([0, 5, -1, 2, 2])
    j = ember.tensor([[1], [5]])
    for key in ((i,), (slice(None), i), (i, slice(1, 4), ember.tensor([0, 4, 1, 1, 3])), (j, i),
                (ember.tensor([True, False, True, True, False, True]),), (x.gt(0) if dtype != "bool" else x,),
                (slice(None, None, 2), ember.tensor([], dtype=ember.int64)), (Ellipsis, ember.tensor(3))):
        same(g[key], c[key])
        gkey = tuple(k.cuda() if isinstance(k, ember.Tensor) else k for k in key)
        same(g[gkey], c[key])  # index tensors on either device
    nc = x.transpose(0, 2)[::2]  # non-contiguous source
    same(nc.cuda()[ember.tensor([1, 0])], nc[ember.tensor([1, 0])])
    same(ember.index_select(g, 1, ember.tensor([6, 0, 0]).cuda()), ember.index_select(c, 1, ember.tensor([6, 0, 0])))
    same(ember.take(g, ember.tensor([[0, 209], [-1, 17]]).cuda()), ember.take(c, ember.tensor([[0, 209], [-1, 17]])))
    mask = ember.rand(6, 7, 5) > 0.5
    same(ember.masked_select(g, mask.cuda()), ember.masked_select(c, mask))
    same(ember.nonzero(g), ember.nonzero(c))
    same(ember.nonzero(g[0, 0, 0]), ember.nonzero(c[0, 0, 0]))  # 0-d: [n, 0]
    same(ember.nonzero(g[:0]), ember.nonzero(c[:0]))


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int32", "int8", "uint8", "bool", "float16",
                                   "bfloat16", "complex64"])
def test_index_put_and_accumulate_against_cpu(dtype):
    dt = getattr(ember, dtype)
    x = (ember.randn(8, 4) * 10).to(dt)
    v = (ember.randn(6, 4) * 10).to(dt)
    idx = ember.tensor([1, 3, 1, 7, 1, 0])  # duplicates accumulate (atomics on the GPU)
    for accumulate in (False, True):
        if not accumulate:
            idx_u = ember.tensor([1, 3, 5, 7, 2, 0])
            same(x.clone().cuda().index_put_((idx_u.cuda(),), v.cuda()), x.clone().index_put_((idx_u,), v))
            continue
        same(x.clone().cuda().index_put_((idx.cuda(),), v.cuda(), accumulate=True),
             x.clone().index_put_((idx,), v, accumulate=True), rtol=1e-2 if dtype in ("float16", "bfloat16") else 1e-5)
    g = x.clone().cuda()
    g[g.real > 0 if dtype == "complex64" else g != 0] = ember.tensor(1).to(dt)  # a 0-d CPU value
    c = x.clone()
    c[c.real > 0 if dtype == "complex64" else c != 0] = ember.tensor(1).to(dt)
    same(g, c)
    if dtype in ("float32", "float64"):
        same(ember.index_add(x.cuda(), 0, idx.cuda(), v.cuda(), alpha=2), ember.index_add(x, 0, idx, v, alpha=2))
        same(x.clone().cuda().index_fill_(1, ember.tensor([0, 3]).cuda(), -1.5), x.clone().index_fill_(1, ember.tensor([0, 3]), -1.5))
        same(ember.index_copy(x.cuda(), 0, ember.tensor([2, 0]).cuda(), v[:2].cuda()),
             ember.index_copy(x, 0, ember.tensor([2, 0]), v[:2]))
        m = x > 0
        same(ember.masked_scatter(x.cuda(), m.cuda(), v.reshape(-1).cuda().repeat(2)),
             ember.masked_scatter(x, m, v.reshape(-1).repeat(2)))


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int32", "int16", "uint8", "bool", "float16",
                                   "complex128"])
def test_gather_scatter_against_cpu(dtype):
    dt = getattr(ember, dtype)
    x = (ember.randn(5, 6, 4) * 10).to(dt)
    src = (ember.randn(5, 6, 4) * 10).to(dt)
    for dim in (0, 1, 2, -1):
        size = x.shape[dim]
        idx = ember.randint(0, size, (3, 4, 2))
        same(ember.gather(x.cuda(), dim, idx.cuda()), ember.gather(x, dim, idx))
        nc_idx = ember.randint(0, size, (2, 4, 3)).transpose(0, 2)  # non-contiguous index
        same(ember.gather(x.cuda(), dim, nc_idx.cuda()), ember.gather(x, dim, nc_idx))
        u = ember.rand(5, 6, 4).argsort(dim).narrow(dim, 0, 2)  # distinct targets within each slice
        same(ember.scatter(x.cuda(), dim, u.cuda(), src.cuda()), ember.scatter(x, dim, u, src))
        same(ember.scatter_add(x.cuda(), dim, idx.cuda(), src.cuda()), ember.scatter_add(x, dim, idx, src),
             rtol=1e-2 if dtype == "float16" else 1e-5, atol=1e-2 if dtype == "float16" else 1e-6)


@pytest.mark.parametrize("reduce", ["sum", "prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int32", "float16"])
def test_scatter_reduce_against_cpu(reduce, include_self, dtype):
    dt = DT[dtype]
    x = (ember.randn(7, 5) * 4).to(dt)
    src = (ember.randn(9, 5) * 4).to(dt)
    if dtype in ("float32", "float64"):
        src[2, 1] = float("nan")
    idx = ember.randint(0, 7, (9, 5))
    got = x.cuda().scatter_reduce(0, idx.cuda(), src.cuda(), reduce, include_self=include_self)
    want = x.scatter_reduce(0, idx, src, reduce, include_self=include_self)
    same(got, want, rtol=1e-2 if dtype == "float16" else 1e-5, atol=1e-2 if dtype == "float16" else 1e-6)
    if HAVE_TORCH_CUDA and dtype != "float16":
        t = torch.from_numpy(x.numpy()).cuda().scatter_reduce(0, torch.from_numpy(idx.numpy()).cuda(),
                                                               torch.from_numpy(src.numpy()).cuda(), reduce,
                                                               include_self=include_self)
        np.testing.assert_allclose(got.cpu().numpy(), t.cpu().numpy(), rtol=1e-5, atol=1e-6, equal_nan=True)


def test_indexing_errors_leave_the_device_usable():
    g = ember.arange(12.0, device="cuda").reshape(3, 4)
    with pytest.raises(IndexError, match="index 3 is out of bounds for dimension 0 with size 3"):
        g[ember.tensor([0, 3, 1], device="cuda")]
    with pytest.raises(IndexError, match="index -5 is out of bounds for dimension 1 with size 4"):
        g[:, ember.tensor([-5])]
    with pytest.raises(IndexError, match="index 7 is out of bounds"):
        g.index_put_((ember.tensor([7]).cuda(),), ember.ones(4, device="cuda"), accumulate=True)
    with pytest.raises(RuntimeError, match="index 9 is out of bounds for dimension 1 with size 4"):
        ember.gather(g, 1, ember.tensor([[0, 9]], device="cuda"))
    with pytest.raises(RuntimeError, match="index -1 is out of bounds for dimension 0 with size 3"):
        g.clone().scatter_add_(0, ember.tensor([[-1, 0]], device="cuda"), ember.ones(1, 2, device="cuda"))
    with pytest.raises(RuntimeError, match="index 3 is out of bounds"):
        g.scatter_reduce(0, ember.tensor([[3]], device="cuda"), ember.ones(1, 1, device="cuda"), "amax")
    same(g, ember.arange(12.0).reshape(3, 4))  # nothing was written through a bad index
    same(g[ember.tensor([2, 0], device="cuda")].sum(0), ember.arange(12.0).reshape(3, 4)[[2, 0]].sum(0))


def test_indexing_gradients_on_the_gpu():
    x = ember.randn(6, 5, dtype=ember.float64)
    idx = ember.tensor([0, 2, 2, 5])
    results = []
    for dev in ("cpu", "cuda"):
        a = x.to(dev).requires_grad_()
        (a[idx.to(dev)] * 3).sum().backward()
        b = x.to(dev).requires_grad_()
        ember.gather(b, 1, ember.tensor([[0, 4], [1, 1]], device=dev)).pow(2).sum().backward()
        results.append((a.grad, b.grad))
    for (ga, gb), (ca, cb) in zip(results[1:], results[:1]):
        same(ga, ca)
        same(gb, cb)


# ---------------------------------------------------------------- constructors, pinned memory
def test_python_constructors_build_on_the_device():
    made = [ember.tensor([1.0, 2.0], device="cuda"), ember.zeros(2, device="cuda"), ember.as_tensor([1, 2], device="cuda"),
            ember.as_tensor(ember.ones(2), device="cuda"), ember.scalar_tensor(3.0, device="cuda"),
            ember.empty_strided((2, 3), (1, 2), device="cuda"), ember.empty_permuted((2, 3), (1, 0), device="cuda"),
            ember.arange(3, device="cuda"), ember.hann_window(8, device="cuda"), ember.asarray([1.0], device="cuda"),
            ember.randint_like(ember.ones(3, device="cuda"), 5), ember.full((2,), 1.5, device="cuda")]
    for t in made:
        assert t.device == ember.device("cuda:0"), t
    assert ember.empty_strided((2, 3), (1, 2), device="cuda").stride() == (1, 2)
    same(ember.tensor([[1, 2], [3, 4]], device="cuda"), ember.tensor([[1, 2], [3, 4]]))
    same(ember.as_tensor(np.arange(4.0), device="cuda"), ember.arange(4.0, dtype=ember.float64))
    with pytest.raises(ValueError):
        ember.asarray(ember.ones(2), device="cuda", copy=False)


def test_pinned_memory_and_non_blocking_copies():
    x = ember.randn(1000, 257)
    assert not x.is_pinned()
    p = x.pin_memory()
    assert p.is_pinned() and p.pin_memory() is p and ember.equal(p, x) and p.device == ember.device("cpu")
    assert p[10:].is_pinned()  # a view into a pinned block
    assert ember.empty(3, pin_memory=True).is_pinned() and ember.tensor([1.0], pin_memory=True).is_pinned()
    assert ember.zeros(2, 3, pin_memory=True).is_pinned()
    with pytest.raises(RuntimeError, match="Only dense CPU tensors can be pinned"):
        ember.empty(3, device="cuda", pin_memory=True)
    s = ember.cuda.Stream()
    with ember.cuda.stream(s):
        g = p.to("cuda", non_blocking=True)
        h = (g * 2).sum(1)
    s.synchronize()
    same(h, (x * 2).sum(1), rtol=1e-4, atol=1e-4)
    # a pinned source freed while its copy is queued: its block is not handed out again before the copy ends
    dsts = []
    for i in range(20):
        src = ember.full((1 << 20,), float(i)).pin_memory()
        dsts.append(src.to("cuda", non_blocking=True))
        del src
    ember.cuda.synchronize()
    for i, d in enumerate(dsts):
        assert d.min().item() == i == d.max().item()
    dst = ember.empty(1000, 257).pin_memory()
    dst.copy_(g, non_blocking=True)  # a copy to the host has its values when it returns
    assert ember.equal(dst, x)
    assert ember.equal(g.to("cpu", non_blocking=True), x)
    y = ember.zeros(3, requires_grad=True)
    py = y.pin_memory()
    assert py.is_pinned() and py.requires_grad
    py.sum().backward()
    assert ember.equal(y.grad, ember.ones(3))
    with pytest.raises(RuntimeError, match="pinned"):
        g.pin_memory()
    if HAVE_TORCH_CUDA:
        assert torch.empty(3).pin_memory().is_pinned() == p.is_pinned()


@pytest.mark.parametrize("workers", [0, 1])
def test_dataloader_pins_batches(workers):
    import warnings
    from ember.utils.data import DataLoader, TensorDataset
    ds = TensorDataset(ember.arange(12.0).reshape(6, 2), ember.arange(6))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no "no accelerator" warning with a GPU
        loader = DataLoader(ds, batch_size=4, pin_memory=True, num_workers=workers)
    seen = 0
    for xb, yb in loader:
        assert xb.is_pinned() and yb.is_pinned()
        seen += len(yb)
        same(xb.to("cuda", non_blocking=True), xb)
    assert seen == 6


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16", "int64", "int32", "int16", "int8",
                                   "uint8", "bool"])
def test_sort_argsort_topk_against_cpu(dtype):
    x = (ember.randn(5, 37, 4) * 8).to(DT[dtype])
    if DT[dtype].is_floating_point:
        x[0, 3, 0], x[1, 5, 2], x[2, 0, 1] = float("nan"), float("inf"), -0.0
        x[0, 7, 0] = float("nan")
    x[3] = x[3, :1].clone()  # ties: the stable order keeps them in place
    g = x.cuda()
    for dim in (1, 0, -1):
        for descending in (False, True):
            v, i = ember.sort(g, dim=dim, descending=descending)
            cv, ci = ember.sort(x, dim=dim, descending=descending)
            same(v, cv)
            same(i, ci)
            same(ember.argsort(g, dim=dim, descending=descending, stable=True), ci)
        k = min(3, x.shape[dim])
        for largest in (True, False):
            v, i = ember.topk(g, k, dim=dim, largest=largest)
            cv, ci = ember.topk(x, k, dim=dim, largest=largest)
            same(v, cv)
            same(i, ci)
    same(ember.kthvalue(g, 2, 1)[0], ember.kthvalue(x, 2, 1)[0])
    same(ember.sort(g[:, :0])[0], ember.sort(x[:, :0])[0])  # empty rows
    same(ember.sort(g[0, 0, 0])[1], ember.sort(x[0, 0, 0])[1])  # 0-d
    if DT[dtype].is_floating_point:  # -0.0 keeps its sign (values are gathered, not rebuilt from keys)
        s = ember.sort(ember.tensor([0.0, -0.0, 0.0, -0.0], dtype=DT[dtype]).cuda())[0].cpu()
        assert [math.copysign(1, v) for v in s.tolist()] == [1, -1, 1, -1]


# ---------------------------------------------------------------- special functions (written once, both devices)
@pytest.mark.parametrize("op", ["digamma", "special.log_ndtr", "special.spherical_bessel_j0", "special.entr",
                                "special.sinc", "special.polygamma:2", "special.polygamma:1", "polygamma:3"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_special_functions_against_cpu(op, dtype):
    x = ember.randn(40, 9, dtype=DT[dtype]) * 4
    x[0, :6] = ember.tensor([float("nan"), float("inf"), -float("inf"), 0.0, -0.0, -2.0], dtype=DT[dtype])
    name, _, n = op.partition(":")
    f = ember
    for part in name.split("."):
        f = getattr(f, part)
    call = (lambda t: f(int(n), t)) if n else f
    # digamma/trigamma are series on the GPU (Boost.Math on the CPU): agreement to ~1e-12 relative
    same(call(x.cuda()), call(x), rtol=1e-5 if dtype == "float32" else 1e-10, atol=1e-6 if dtype == "float32" else 1e-10)


@pytest.mark.parametrize("op", ["chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
                                "chebyshev_polynomial_w", "shifted_chebyshev_polynomial_t", "hermite_polynomial_h",
                                "hermite_polynomial_he", "laguerre_polynomial_l", "legendre_polynomial_p", "zeta"])
def test_special_binary_against_cpu(op):
    x = ember.rand(7, 5, dtype=ember.float64) * 2.4 - 1.2
    n = ember.tensor([0.0, 1.0, 2.0, 5.0, 11.9, float("nan"), -3.0], dtype=ember.float64).reshape(7, 1)
    if op == "zeta":
        x, n = n.abs() + 1.5, x.abs() + 0.1
    f = getattr(ember.special, op)
    same(f(x.cuda(), n.cuda()), f(x, n), rtol=1e-12, atol=1e-12)


def test_lgamma_backward_on_the_gpu():
    x = ember.rand(20, dtype=ember.float64) * 5 + 0.1
    grads = []
    for dev in ("cpu", "cuda"):
        a = x.to(dev).requires_grad_()
        ember.lgamma(a).sum().backward()  # the gradient is digamma
        grads.append(a.grad)
    same(grads[1], grads[0], rtol=1e-10, atol=1e-12)


def test_randperm_on_the_gpu():
    for n in (0, 1, 2, 1000, 100003):
        ember.manual_seed(5)
        p = ember.randperm(n, device="cuda")
        assert p.device.type == "cuda" and p.dtype == ember.int64 and p.shape == (n,)
        same(ember.sort(p)[0], ember.arange(n))
        ember.manual_seed(5)
        same(ember.randperm(n, device="cuda"), p.cpu())  # seeded: reproducible
    assert ember.randperm(10, device="cuda", dtype=ember.int32).dtype == ember.int32
    assert not ember.equal(ember.randperm(1000, device="cuda").cpu(), ember.arange(1000))


def test_edge_semantics_match_the_cpu():
    # ties of maximum/minimum keep the first operand (0.0 vs -0.0), as the CPU
    a, b = ember.tensor([0.0, -0.0]), ember.tensor([-0.0, 0.0])
    for f in (ember.maximum, ember.minimum):
        got = f(a.cuda(), b.cuda()).cpu().tolist()
        assert [math.copysign(1, v) for v in got] == [math.copysign(1, v) for v in f(a, b).tolist()]
    # float -> integer casts go through int64 (the GPU's own conversion saturates)
    x = ember.tensor([-1.0, -3.7, 300.0, 255.9])
    for dt in (ember.uint8, ember.int8, ember.int16):
        same(x.cuda().to(dt), x.to(dt))
    # 8-bit lcm overflows as the CPU's (computed in int, then truncated)
    p, q = ember.tensor([127, 100], dtype=ember.int8), ember.tensor([2, 3], dtype=ember.int8)
    same(ember.lcm(p.cuda(), q.cuda()), ember.lcm(p, q))
    # scaled Bessel functions far out, where the unscaled ones overflow
    big = ember.tensor([100.0, -100.0, 800.0, 1e6, float("inf")])
    same(ember.special.i0e(big.cuda()), ember.special.i0e(big), rtol=1e-5)
    same(ember.special.i1e(big.cuda()), ember.special.i1e(big), rtol=1e-5)
    same(ember.special.i0e(big.double().cuda()), ember.special.i0e(big.double()), rtol=1e-12)
    same(ember.i0(big.cuda()), ember.i0(big))
    # a tall transpose (more than 65535 tiles along one side)
    t = ember.randn(8, 2_200_000)
    same(t.cuda().t().contiguous(), t.t().contiguous())
    # a long column sum in float32 stays close to the exact value (in blocks of 256 rows: a serial float32
    # sum drifts to ~100958; the CPU's blockwise sum gives 100003.75)
    col = ember.full((1_000_000, 2), 0.1)
    assert abs(col.cuda().sum(0)[0].item() - 100000.0) < 20.0


def test_backward_runs_on_the_devices_thread():
    import threading
    x = ember.randn(3, device="cuda", requires_grad=True)
    seen = []
    x.register_hook(lambda g: seen.append(threading.get_ident()) or g * 10)
    (x * 2).sum().backward()
    assert seen and seen[0] != threading.get_ident()  # as PyTorch's per-device engine threads
    same(x.grad, ember.full((3,), 20.0))
    with pytest.raises(ValueError, match="from the hook"):
        y = ember.randn(2, device="cuda", requires_grad=True)
        y.register_hook(lambda g: (_ for _ in ()).throw(ValueError("from the hook")))
        y.sum().backward()
    c = ember.randn(3, requires_grad=True)  # a CPU graph stays on the calling thread
    c.register_hook(lambda g: seen.append(threading.get_ident()))
    c.sum().backward()
    assert seen[-1] == threading.get_ident()
    if HAVE_TORCH_CUDA:
        t = torch.randn(3, device="cuda", requires_grad=True)
        tseen = []
        t.register_hook(lambda g: tseen.append(threading.get_ident()))
        t.sum().backward()
        assert tseen[0] != threading.get_ident()


def test_second_review_mends():
    import threading
    # a pinned factory result with requires_grad is a leaf
    x = ember.zeros(3, pin_memory=True, requires_grad=True)
    assert x.is_pinned() and x.is_leaf
    x.sum().backward()
    same_cpu = ember.equal(x.grad, ember.ones(3))
    assert same_cpu
    with pytest.raises(RuntimeError, match="dense CPU"):
        ember.sparse_coo_tensor(ember.tensor([[0]]), ember.ones(1), (2,)).pin_memory()
    assert ember.empty_strided((2, 3), (1, 2), pin_memory=True).is_pinned()
    # Tensor.to(int) is the accelerator's device
    assert ember.ones(2).to(0).device == ember.device("cuda:0")
    # set_multithreading_enabled(False) keeps backward on the calling thread
    seen = []
    y = ember.ones(2, device="cuda", requires_grad=True)
    y.register_hook(lambda g: seen.append(threading.get_ident()))
    with ember.autograd.set_multithreading_enabled(False):
        y.sum().backward()
    assert seen[-1] == threading.get_ident()
    # the worker keeps one Python thread state: a threading.local set in one hook is there in the next
    local = threading.local()
    values = []

    def hook(g):
        values.append(getattr(local, "n", 0))
        local.n = getattr(local, "n", 0) + 1
    z = ember.ones(2, device="cuda", requires_grad=True)
    z.register_hook(hook)
    z.sum().backward()
    z.sum().backward()
    assert values == [0, 1]
    # checkpoint replays the GPU's random numbers in the recompute: the gradient of t * rand_like(t)
    # is the forward's random tensor
    from ember.utils.checkpoint import checkpoint
    for reentrant in (False, True):
        w = (ember.rand(64) + 1).cuda().requires_grad_()
        drawn = []

        def f(t):
            r = ember.rand_like(t)
            drawn.append(r.detach())
            return t * r
        checkpoint(f, w, use_reentrant=reentrant).sum().backward()
        assert len(drawn) == 2
        same(drawn[1], drawn[0].cpu())
        same(w.grad, drawn[0].cpu())
    with pytest.raises(RuntimeError, match="invalid device ordinal"):
        ember.cuda.get_rng_state(ember.cuda.device_count() + 5)
    with pytest.raises(RuntimeError, match="CPU ByteTensor"):
        ember.cuda.set_rng_state(ember.cuda.get_rng_state().cuda())


def test_per_process_memory_fraction():
    ember.cuda.empty_cache()
    assert ember.cuda.get_per_process_memory_fraction() == 1.0
    with pytest.raises(TypeError):
        ember.cuda.set_per_process_memory_fraction(1)
    with pytest.raises(ValueError, match="Allowed range: 0~1"):
        ember.cuda.set_per_process_memory_fraction(1.5)
    try:
        ember.cuda.set_per_process_memory_fraction(0.01)
        total = ember.cuda.get_device_properties(0).total_memory
        with pytest.raises(ember.cuda.OutOfMemoryError, match="memory fraction"):
            ember.empty(int(total * 0.02) // 4, device="cuda")
        ember.ones(1000, device="cuda")  # small requests still fit
    finally:
        ember.cuda.set_per_process_memory_fraction(1.0)
    x = ember.empty(int(ember.cuda.get_device_properties(0).total_memory * 0.02) // 4, device="cuda")
    del x


def test_deterministic_mode_and_float_atomics():
    ember.manual_seed(0)
    idx = ember.randint(0, 50, (20000,))
    src = ember.randn(20000, 3, dtype=ember.float32)
    idx2 = ember.randint(0, 7, (40, 30))
    src2 = ember.randn(40, 30)
    try:
        ember.use_deterministic_algorithms(True)
        # the sorted accumulation: deterministic and the CPU's sums to the bit
        a = ember.zeros(50, 3).cuda().index_put_((idx.cuda(),), src.cuda(), accumulate=True)
        b = ember.zeros(50, 3).cuda().index_put_((idx.cuda(),), src.cuda(), accumulate=True)
        ref = ember.zeros(50, 3).index_put_((idx,), src, accumulate=True)
        assert ember.equal(a, b) and ember.equal(a.cpu(), ref)
        g = ember.zeros(50, 3).cuda().index_add_(0, idx.cuda(), src.cuda())
        assert ember.equal(g.cpu(), ember.zeros(50, 3).index_add_(0, idx, src))
        s = ember.zeros(7, 30).cuda().scatter_add_(0, idx2.cuda(), src2.cuda())
        assert ember.equal(s.cpu(), ember.zeros(7, 30).scatter_add_(0, idx2, src2))
        with pytest.raises(RuntimeError, match="out of bounds"):
            ember.zeros(3, 30).cuda().scatter_add_(0, idx2.cuda(), src2.cuda())
        emb = ember.nn.Embedding(50, 8).cuda()
        emb(idx[:1000].cuda()).sum().backward()  # embedding's backward accumulates deterministically
        # an op with no deterministic variant raises PyTorch's error, or warns with warn_only
        with pytest.raises(RuntimeError, match="does not have a deterministic implementation"):
            ember.zeros(7, 30).cuda().scatter_reduce_(0, idx2.cuda(), src2.cuda(), "sum")
        r = ember.zeros(7, 30, dtype=ember.int64).cuda().scatter_reduce_(0, idx2.cuda(), src2.long().cuda(), "sum")
        assert ember.equal(r.cpu(), ember.zeros(7, 30, dtype=ember.int64).scatter_reduce_(0, idx2, src2.long(), "sum"))
        # max-pool backward with overlapping windows (3 x 3, stride 1): the CPU's sums to the bit
        x, w = ember.randn(2, 3, 9, 9), ember.randn(2, 3, 7, 7)  # (random weights: sums of ones are exact anyway)
        xg = x.cuda().requires_grad_()
        (ember.nn.functional.max_pool2d(xg, 3, 1) * w.cuda()).sum().backward()
        xc = x.clone().requires_grad_()
        (ember.nn.functional.max_pool2d(xc, 3, 1) * w).sum().backward()
        assert ember.equal(xg.grad.cpu(), xc.grad)
        ember.use_deterministic_algorithms(True, warn_only=True)
        with pytest.warns(UserWarning, match="deterministic"):
            ember.zeros(7, 30).cuda().scatter_reduce_(0, idx2.cuda(), src2.cuda(), "sum")
    finally:
        ember.use_deterministic_algorithms(False)


# ---- the smaller torch.cuda names (tests/python/test_cuda_names.py has their no-GPU side)
def test_small_cuda_names_on_a_gpu():
    assert int(ember.version.cuda.split(".")[0]) >= 12
    assert ember.cuda.is_tf32_supported() == (ember.cuda.get_device_capability()[0] >= 8)
    assert ember.cuda.is_current_stream_capturing() is False
    assert isinstance(ember.cuda.can_device_access_peer(0, 0), bool)
    with pytest.raises(AssertionError, match="Invalid peer device id"):
        ember.cuda.can_device_access_peer(0, ember.cuda.device_count())
    t = ember.cuda.FloatTensor(2, 3)
    assert t.is_cuda and t.dtype is ember.float32 and isinstance(t, ember.cuda.FloatTensor)
    assert not isinstance(t, ember.FloatTensor)
    assert ember.cuda.LongTensor([1, 2]).tolist() == [1, 2]
    assert t.type() == "ember.cuda.FloatTensor"
    back = t.type("torch.DoubleTensor")
    assert back.device.type == "cpu" and back.dtype is ember.float64  # a CPU type name moves it to the CPU
    up = ember.arange(3).type("torch.cuda.FloatTensor")
    assert up.is_cuda and up.dtype is ember.float32 and up.type(ember.cuda.FloatTensor) is up
    assert t.new(4).is_cuda and t.new(4).dtype is ember.float32
    before = ember.cuda.memory_allocated()
    ptr = ember.cuda.caching_allocator_alloc(1 << 20)
    assert ember.cuda.memory_allocated() == before + (1 << 20)
    ember.cuda.caching_allocator_delete(ptr)
    assert ember.cuda.memory_allocated() == before
    with pytest.raises(RuntimeError, match="caching_allocator_alloc"):
        ember.cuda.caching_allocator_delete(ptr)


def test_sync_debug_mode_flags_implicit_waits():
    x = ember.ones(4, device="cuda")
    try:
        ember.cuda.set_sync_debug_mode("warn")
        assert ember.cuda.get_sync_debug_mode() == 1
        with pytest.warns(UserWarning, match="called a synchronizing CUDA operation"):
            x.sum().item()
        ember.cuda.set_sync_debug_mode(2)
        with pytest.raises(RuntimeError, match="called a synchronizing CUDA operation"):
            x.cpu()
        ember.cuda.synchronize()  # explicit waits are never flagged
        y = x * 2  # nor is queued work
        with pytest.raises(RuntimeError, match="invalid value of debug_mode"):
            ember.cuda.set_sync_debug_mode("loud")
    finally:
        ember.cuda.set_sync_debug_mode("default")
    assert y.sum().item() == 8.0


def test_nvtx_and_accelerator_names_on_a_gpu():
    depth = ember.cuda.nvtx.range_push("step")
    assert isinstance(depth, int)
    ember.cuda.nvtx.range_pop()
    with ember.cuda.nvtx.range("epoch {}", 1):
        ember.ones(2, device="cuda").add_(1)
    a = ember.accelerator
    s = ember.cuda.Stream()
    a.set_stream(s)
    assert a.current_stream() == s
    a.set_stream(ember.cuda.default_stream())
    with a.device_index(0):
        assert a.current_device_index() == 0
    assert ember.float32 in a.get_device_capability()["supported_dtypes"]
    a.empty_host_cache()
    a.reset_accumulated_memory_stats()


def test_host_memory_stats_follow_the_pinned_allocator():
    ember.cuda.synchronize()
    ember.cuda.memory.reset_accumulated_host_memory_stats()
    before = ember.cuda.host_memory_stats()
    p = ember.empty(1000, pin_memory=True)  # 4000 bytes: a 4096-byte block
    s = ember.cuda.host_memory_stats()
    assert s["active_requests.current"] == before.get("active_requests.current", 0) + 1
    assert s["active_bytes.current"] - before.get("active_bytes.current", 0) == 4096
    assert s["allocations.current"] >= 1 and s["allocated_bytes.current"] >= 4096
    nested = ember.cuda.host_memory_stats_as_nested_dict()
    assert nested["active_requests"]["current"] == s["active_requests.current"]
    assert set(nested["host_alloc_time"]) == {"total", "max", "min", "count", "avg"}
    del p
    after = ember.cuda.host_memory_stats()
    assert after["active_requests.current"] == s["active_requests.current"] - 1
    q = ember.empty(900, pin_memory=True)  # same rounded size: the cached block, no new cudaHostAlloc
    assert ember.cuda.host_memory_stats()["num_host_alloc"] == after["num_host_alloc"]
    del q
    ember.cuda.synchronize()
    ember._C._cuda_host_empty_cache()
    emptied = ember.cuda.host_memory_stats()  # (blocks other tests still hold stay)
    assert emptied["allocations.current"] <= s["allocations.current"] - 1 and emptied["num_host_free"] >= 1
    ember.cuda.reset_peak_host_memory_stats()
    peaks = ember.cuda.host_memory_stats()
    assert peaks["allocations.peak"] == peaks["allocations.current"]
    if HAVE_TORCH_CUDA:  # the same keys as PyTorch's
        torch.empty(10, pin_memory=True)
        theirs = torch.cuda.host_memory_stats()
        for key in ("allocations.current", "allocated_bytes.freed", "active_requests.peak", "active_bytes.allocated",
                    "num_host_alloc", "num_host_free", "host_alloc_time.avg", "host_free_time.count"):
            assert key in theirs and key in peaks, key


def test_cudart_and_profiler_switches():
    rt = ember.cuda.cudart()
    assert rt.cudaError.success == 0 and ember.cuda.cudaStatus.SUCCESS == 0
    assert rt.cudaGetErrorString(0) == "no error"
    ember.cuda.check_error(rt.cudaProfilerStart())
    ember.cuda.check_error(rt.cudaProfilerStop())
    with ember.cuda.profiler.profile():
        (ember.ones(4, device="cuda") * 2).sum().item()
    with pytest.raises(ember.cuda.CudaError, match=r"\(2\)$"):
        ember.cuda.check_error(2)
    x = np.zeros(1 << 16, dtype=np.float32)  # page-locking memory allocated elsewhere
    ptr = x.ctypes.data
    ember.cuda.check_error(rt.cudaHostRegister(ptr, x.nbytes, 0))
    ember.cuda.check_error(rt.cudaHostUnregister(ptr))
    assert rt.cudaHostUnregister(ptr) != 0  # not registered any more: a code, not an exception


def test_nvml_queries_on_a_gpu():
    assert 0 <= ember.cuda.utilization() <= 100 and 0 <= ember.cuda.memory_usage() <= 100
    assert 0 < ember.cuda.temperature() < 150 and ember.cuda.power_draw() > 0 and ember.cuda.clock_rate() > 0
    x = ember.empty(64 << 20, dtype=ember.uint8, device="cuda")
    assert ember.cuda.device_memory_used() >= x.numel()
    listing = ember.cuda.list_gpu_processes()
    assert listing.startswith("GPU:")  # this process may be hidden from NVML in a container
    if HAVE_TORCH_CUDA:
        try:
            import pynvml  # noqa: F401  (torch's NVML functions need it)
        except ImportError:
            return
        assert abs(torch.cuda.clock_rate() - ember.cuda.clock_rate()) < 500
        assert torch.cuda.list_gpu_processes().splitlines()[0] == listing.splitlines()[0]


def test_cuda_legacy_storages():
    s = ember.cuda.FloatStorage(4)
    assert s.device.type == "cuda" and s.dtype == ember.float32 and len(s) == 4
    assert isinstance(s, ember.cuda.FloatStorage) and not isinstance(s, ember.FloatStorage)
    assert isinstance(ember.zeros(3, device="cuda").storage(), ember.cuda.FloatStorage)
    assert not isinstance(ember.zeros(3).storage(), ember.cuda.FloatStorage)
    with pytest.raises(RuntimeError, match="expected device type cuda"):
        ember.cuda.LongStorage(2, device="cpu")
    if HAVE_TORCH_CUDA:
        assert torch.cuda.FloatStorage(4).device.type == s.device.type
