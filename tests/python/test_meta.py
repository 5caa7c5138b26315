"""The meta device: tensors with sizes, strides and a dtype but no data. Ops on them compute their
results' metadata only; building a model there and moving it with Module.to_empty is the use that
PyTorch programs make of it. Compared with torch's meta device where torch is installed; the
checks of Ember's own behaviour run without it."""
import io
import warnings

import pytest

import ember

try:
    import torch
except ImportError:  # the parity cases skip; the rest runs
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="PyTorch is not installed")


def _cases(lib):
    """name -> a thunk running one op on meta tensors of `lib` (ember or torch)."""
    F = lib.nn.functional
    d = "meta"
    x = lib.empty(4, 5, device=d)
    v = lib.empty(5, device=d)
    img = lib.empty(2, 3, 8, 8, device=d)
    idx = lib.empty(4, dtype=lib.int64, device=d)
    e = lambda *s, **k: lib.empty(*s, device=d, **k)  # noqa: E731
    return {
        # reductions
        "sum_dim": lambda: x.sum(0), "sum_all": lambda: x.sum(), "sum_int": lambda: e(3, dtype=lib.int32).sum(),
        "mean_keepdim": lambda: x.mean(1, keepdim=True), "amax": lambda: x.amax(1), "max_dim": lambda: x.max(1)[1],
        "argmax": lambda: x.argmax(1), "var": lambda: x.var(0), "std": lambda: x.std(), "prod": lambda: x.prod(1),
        "norm": lambda: x.norm(), "any": lambda: (x > 0).any(1), "all": lambda: (x > 0).all(),
        "cumsum": lambda: x.cumsum(1), "cumsum_half": lambda: e(3, 4, dtype=lib.float16).cumsum(0),
        "logsumexp": lambda: x.logsumexp(1),
        # linear algebra
        "mm": lambda: x @ e(5, 3), "mv": lambda: x @ v, "bmm": lambda: lib.bmm(e(2, 3, 4), e(2, 4, 5)),
        "matmul_broadcast": lambda: lib.matmul(e(7, 2, 3, 4), e(4, 5)), "addmm": lambda: lib.addmm(v, x.t(), x),
        "linear": lambda: F.linear(x, e(3, 5), e(3)), "einsum": lambda: lib.einsum("ij,jk->ik", x, e(5, 2)),
        # nn
        "relu": lambda: F.relu(x), "gelu": lambda: F.gelu(x), "softmax": lambda: F.softmax(x, 1),
        "log_softmax": lambda: F.log_softmax(x, 1), "conv2d": lambda: F.conv2d(img, e(6, 3, 3, 3), padding=1),
        "conv2d_stride_groups": lambda: F.conv2d(e(2, 4, 9, 7), e(6, 2, 3, 2), stride=2, groups=2),
        "conv1d_unbatched": lambda: F.conv1d(e(3, 10), e(5, 3, 4), e(5)),
        "conv_transpose2d": lambda: F.conv_transpose2d(img, e(3, 4, 3, 3), stride=2, output_padding=1),
        "max_pool": lambda: F.max_pool2d(img, 2), "avg_pool": lambda: F.avg_pool2d(img, 2),
        "adaptive_avg_pool": lambda: F.adaptive_avg_pool2d(img, 1),
        "batch_norm_eval": lambda: F.batch_norm(img, e(3), e(3), training=False),
        "batch_norm_train": lambda: F.batch_norm(img, e(3), e(3), training=True),
        "layer_norm": lambda: F.layer_norm(x, (5,)), "group_norm": lambda: F.group_norm(img, 3),
        "dropout": lambda: F.dropout(x, 0.5), "cross_entropy": lambda: F.cross_entropy(x, idx),
        "mse_loss": lambda: F.mse_loss(x, x), "nll_loss_none": lambda: F.nll_loss(x, idx, reduction="none"),
        "embedding": lambda: F.embedding(idx, x), "pad": lambda: F.pad(img, (1, 1)),
        "binary_cross_entropy": lambda: F.binary_cross_entropy(x, x),  # its value range check skips meta
        "quantile": lambda: lib.quantile(x, e(3), dim=1),
        "searchsorted_sorter": lambda: lib.searchsorted(e(5), e(3), sorter=e(5, dtype=lib.int64)),
        "interpolate": lambda: F.interpolate(img, scale_factor=2),
        "sdpa": lambda: F.scaled_dot_product_attention(e(2, 4, 3, 8), e(2, 4, 3, 8), e(2, 4, 3, 8)),
        # shapes, indexing, copies
        "cat": lambda: lib.cat([x, x], 0), "stack": lambda: lib.stack([x, x]), "index_select": lambda: x.index_select(0, idx),
        "gather": lambda: x.gather(1, e(4, 2, dtype=lib.int64)), "where": lambda: lib.where(x > 0, x, 0.0),
        "masked_fill": lambda: x.masked_fill(x > 0, 1.0), "sort": lambda: x.sort(1)[0], "topk": lambda: x.topk(2)[1],
        "t_contiguous": lambda: x.t().contiguous(), "t_reshape": lambda: x.t().reshape(20),
        "permute_contiguous": lambda: img.permute(0, 2, 3, 1).contiguous(), "expand_clone": lambda: v.expand(3, 5).clone(),
        "to_half": lambda: x.to(lib.float16), "getitem": lambda: x[1, 1:3], "getitem_tensor": lambda: x[idx],
        "scatter_add": lambda: lib.zeros(4, 5, device=d).scatter_add(1, e(4, 2, dtype=lib.int64), e(4, 2)),
        "index_put": lambda: x.clone().index_put_((idx,), e(5)), "flip": lambda: x.flip(0), "roll": lambda: x.roll(1, 0),
        "repeat": lambda: x.repeat(2, 1), "tril": lambda: x.tril(), "chunk": lambda: x.chunk(2, 1)[1].clone(),
        "cpu_to_meta": lambda: lib.ones(3, 2).t().to("meta"), "cpu_scalar_operand": lambda: x + lib.tensor(2.0),
        # elementwise, with promotion
        "add_int_float": lambda: e(3, dtype=lib.int32) + 1.5, "mul_broadcast": lambda: x * v, "pow": lambda: x ** 2,
        "compare": lambda: x == x, "clamp": lambda: x.clamp(0, 1), "addcmul": lambda: lib.addcmul(x, x, x),
        "lerp": lambda: lib.lerp(x, x, 0.5), "div_int": lambda: e(3, dtype=lib.int64) / 2,
        # factories and in-place initialisation
        "full": lambda: lib.full((2, 3), 1.5, device=d), "arange": lambda: lib.arange(10, device=d),
        "linspace": lambda: lib.linspace(0, 1, 7, device=d), "eye": lambda: lib.eye(3, device=d),
        "rand": lambda: lib.rand(3, 4, device=d), "randint": lambda: lib.randint(0, 5, (3,), device=d),
        "randperm": lambda: lib.randperm(5, device=d), "ones_int32": lambda: lib.ones(2, dtype=lib.int32, device=d),
        "zeros_like": lambda: lib.zeros_like(x), "uniform_": lambda: x.clone().uniform_(),
        "normal_": lambda: x.clone().normal_(), "fill_": lambda: x.clone().fill_(2),
        "tensor": lambda: lib.tensor([[1, 2], [3, 4]], device=d), "new_tensor": lambda: x.new_tensor([1.0]),
        # what needs the values: errors of the same type as PyTorch's
        "nonzero": lambda: x.nonzero(), "masked_select": lambda: x.masked_select(x > 0), "unique": lambda: x.unique(),
        "item": lambda: x[0, 0].item(), "bool": lambda: bool(x[0, 0]), "tolist": lambda: x.tolist(),
        "to_cpu": lambda: x.cpu(), "equal": lambda: lib.equal(x, x), "allclose": lambda: lib.allclose(x, x),
        "mixed_devices": lambda: x + lib.ones(4, 5), "module_to_cpu": lambda: lib.nn.Linear(2, 2, device=d).to("cpu"),
        # host-only ops with a meta path (ops.yaml's meta: yes, or an is_meta() branch)
        "median": lambda: x.median(), "median_dim": lambda: x.median(1), "mode": lambda: x.mode(0),
        "histc": lambda: v.histc(bins=7), "one_hot": lambda: F.one_hot(idx, 6), "one_hot_infer": lambda: F.one_hot(idx),
        "embedding_bag_sum": lambda: lib.embedding_bag(x, e(6, dtype=lib.int64), e(2, dtype=lib.int64), False, 0),
        "embedding_bag_max": lambda: lib.embedding_bag(x, e(6, dtype=lib.int64), e(3, dtype=lib.int64), False, 2,
                                                       False, None, True),
        "F.embedding_bag": lambda: F.embedding_bag(e(2, 3, dtype=lib.int64), x, mode="mean"),
        "multi_margin_loss": lambda: F.multi_margin_loss(x, idx),
        "ctc_loss": lambda: F.ctc_loss(e(6, 2, 5), e(2, 3, dtype=lib.int64), [6, 6], [3, 2]),
        "ctc_loss_none": lambda: F.ctc_loss(e(6, 2, 5), e(2, 3, dtype=lib.int64), [6, 6], [3, 2], reduction="none"),
    }


def _describe(thunk):
    try:
        r = thunk()
    except Exception as e:  # noqa: BLE001 - the type is compared
        return ("error", type(e).__name__)
    return _meta_of(r)


def _meta_of(r):
    if isinstance(r, (ember.Tensor,) + ((torch.Tensor,) if torch else ())):
        return (tuple(r.shape), str(r.dtype).split(".")[-1], tuple(r.stride()), r.device.type)
    if isinstance(r, tuple):  # (values, indices) and the like
        return tuple(_meta_of(t) for t in r)
    return ("value", type(r).__name__)


@needs_torch
@pytest.mark.parametrize("name", sorted(_cases(ember)))
def test_op_on_meta_matches_torch(name):
    """Result shape, dtype, strides and device (or the error type) as torch's meta device gives."""
    assert _describe(_cases(ember)[name]) == _describe(_cases(torch)[name])


def test_meta_tensor_basics():
    x = ember.empty(2, 3, device="meta")
    assert x.is_meta and not x.is_cpu and x.device == ember.device("meta") and x.device.index is None
    assert x.data_ptr() == 0 and x.nbytes == 24
    assert not ember.ones(2).is_meta
    y = (x * 2).sum(1)
    assert y.is_meta and y.shape == (2,)
    with pytest.raises(TypeError, match="meta"):
        x.numpy()
    with pytest.raises(RuntimeError, match="cannot be called on meta tensors"):
        x[0, 0].item()
    with pytest.raises(NotImplementedError, match="Cannot copy out of meta tensor"):
        x.to("cpu")
    with pytest.raises(RuntimeError, match="must match|does not broadcast|expand"):
        x.copy_(ember.ones(4))
    assert x.copy_(ember.ones(3)) is x  # a copy into a meta tensor writes nothing


def test_repr_as_torch():
    assert repr(ember.empty(2, 3, device="meta")) == "tensor(..., device='meta', size=(2, 3))"
    assert repr(ember.empty(0, device="meta")) == "tensor(..., device='meta', size=(0,))"
    assert (repr(ember.empty((), dtype=ember.float64, device="meta", requires_grad=True))
            == "tensor(..., device='meta', size=(), dtype=ember.float64, requires_grad=True)")
    assert repr(ember.empty(2, dtype=ember.int64, device="meta")) == \
        "tensor(..., device='meta', size=(2,), dtype=ember.int64)"
    assert repr(ember.empty(2, device="meta", requires_grad=True) * 2).endswith("grad_fn=<MulBackward0>)")


def test_build_on_meta_then_to_empty_and_load():
    """The recipe for big models: no memory until the weights arrive."""
    nn = ember.nn
    with ember.device("meta"):
        model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
    assert all(p.is_meta for p in model.parameters())
    assert ember.empty(1).device.type == "cpu"  # the block restored the default
    reference = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
    model.to_empty(device="cpu")
    assert all(p.device.type == "cpu" and isinstance(p, nn.Parameter) for p in model.parameters())
    model.load_state_dict(reference.state_dict())
    x = ember.randn(3, 4)
    assert ember.equal(model(x), reference(x))

    lazy = nn.Linear(4, 8, device="meta")
    lazy.load_state_dict(reference[0].state_dict(), assign=True)
    assert lazy.weight.device.type == "cpu" and isinstance(lazy.weight, nn.Parameter)
    assert ember.equal(lazy.weight, reference[0].weight)

    with pytest.warns(UserWarning, match="meta parameter in the current model, which is a no-op"):
        nn.Linear(4, 8, device="meta").load_state_dict(reference[0].state_dict())


def test_set_default_device():
    try:
        ember.set_default_device("meta")
        assert ember.zeros(3).is_meta and ember.tensor([1.0]).is_meta and ember.nn.Linear(2, 2).weight.is_meta
        assert ember.get_default_device() == ember.device("meta")
        assert ember.zeros(3, device="cpu").device.type == "cpu"  # an explicit device wins
        host = ember.ones(2, device="cpu")
        for like in (ember.empty_like(host), ember.zeros_like(host), host.new_zeros(3), ember.rand_like(host)):
            assert like.device.type == "cpu"  # the *_like and new_* ones follow their tensor, as in PyTorch
    finally:
        ember.set_default_device(None)
    assert ember.zeros(3).device.type == "cpu" and ember.get_default_device() == ember.device("cpu")
    with ember.device("meta"):
        with ember.device("cpu"):
            assert ember.ones(1).device.type == "cpu"
        assert ember.ones(1).is_meta
    assert not ember.ones(1).is_meta


def test_training_step_on_meta():
    """Forward, backward and optimizer steps run on meta: shapes flow through autograd."""
    nn = ember.nn
    with ember.device("meta"):
        net = nn.Sequential(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4), nn.ReLU(), nn.Flatten(), nn.LazyLinear(10))
    out = net(ember.empty(2, 3, 8, 8, device="meta"))
    assert out.shape == (2, 10) and out.is_meta
    loss = nn.functional.cross_entropy(out, ember.empty(2, dtype=ember.int64, device="meta"))
    loss.backward()
    for p in net.parameters():
        assert p.grad is not None and p.grad.is_meta and p.grad.shape == p.shape
    for opt in (ember.optim.SGD(net.parameters(), lr=0.1, momentum=0.9), ember.optim.AdamW(net.parameters())):
        opt.step()
    assert all(p.is_meta for p in net.parameters())


def test_init_functions_on_meta():
    init = ember.nn.init
    w = ember.empty(4, 6, device="meta")
    for fn in (init.kaiming_uniform_, init.kaiming_normal_, init.xavier_uniform_, init.xavier_normal_,
               init.trunc_normal_, init.zeros_, init.ones_, init.eye_):
        assert fn(w) is w
    assert init.constant_(w, 0.5) is w


def test_ops_that_need_values_refuse_meta():
    x = ember.empty(3, device="meta")
    for fn in (lambda: x.nonzero(), lambda: x.unique(), lambda: ember.equal(x, x), lambda: x.tolist()):
        with pytest.raises(NotImplementedError):
            fn()
    buf = io.BytesIO()
    with pytest.raises(NotImplementedError):
        ember.save(x, buf)  # not written: Ember's files hold data (torch writes meta tensors without any)


def test_cpu_kernels_unaffected_by_meta_code():
    """The meta paths sit beside the CPU ones: the same ops on the CPU still compute."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        a = ember.arange(6.0).reshape(2, 3)
        assert a.sum(0).tolist() == [3.0, 5.0, 7.0]
        assert ember.nn.functional.conv1d(ember.ones(1, 1, 4), ember.ones(1, 1, 2)).tolist() == [[[2.0, 2.0, 2.0]]]
        assert a.t().contiguous().tolist() == [[0.0, 3.0], [1.0, 4.0], [2.0, 5.0]]


def test_default_device_is_per_thread():
    import threading
    seen = []
    with ember.device("meta"):
        t = threading.Thread(target=lambda: seen.append(ember.zeros(1).device.type))
        t.start()
        t.join()
        assert ember.zeros(1).is_meta
    assert seen == ["cpu"]  # as PyTorch's: another thread keeps its own default


def test_library_code_under_a_meta_default_keeps_its_inputs_devices():
    """Helpers inside the library make their scratch tensors where their inputs are, not on the
    default device: CPU work inside `with ember.device("meta")` still computes."""
    nn, F = ember.nn, ember.nn.functional
    x = ember.randn(2, 3, 4, 8, device="cpu")
    want = F.scaled_dot_product_attention(x, x, x, is_causal=True)
    packed_want = nn.utils.rnn.pack_padded_sequence(ember.randn(3, 2, 4), [3, 2], enforce_sorted=False)
    out_cpu = ember.empty(3)
    with ember.device("meta"):
        got = F.scaled_dot_product_attention(x, x, x, is_causal=True)
        packed = nn.utils.rnn.pack_padded_sequence(ember.randn(3, 2, 4, device="cpu"), [3, 2], enforce_sorted=False)
        ember.rand(3, out=out_cpu)  # out= allocates on out's device
        w = ember.empty(4, 6)
        assert nn.init.orthogonal_(w) is w and w.is_meta
        nn.init.orthogonal_(ember.empty(4, 6, device="cpu"))
    assert ember.allclose(got, want)
    assert packed.batch_sizes.device.type == "cpu" and packed.sorted_indices.device.type == "cpu"
    assert ember.equal(packed.batch_sizes, packed_want.batch_sizes)
    assert out_cpu.device.type == "cpu"



def test_deepcopy_of_a_meta_model_keeps_buffers_apart():
    import copy
    with ember.device("meta"):
        bn = ember.nn.BatchNorm1d(4)
        shared = ember.nn.Linear(3, 3)
    twin = copy.deepcopy(bn)
    assert twin.running_mean.is_meta and twin.running_var.is_meta
    before = twin.running_var._version
    twin.running_mean.add_(1)  # bumps only its own version counter: the two buffers are not one storage
    assert twin.running_var._version == before
    base = shared.weight.detach()
    w, view = copy.deepcopy((base, base[0]))  # copied together: still one storage
    assert ember._C._shm_storage_key(w) == ember._C._shm_storage_key(view)
