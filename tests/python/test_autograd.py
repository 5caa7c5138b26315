"""Autograd semantics, name for name with PyTorch.

Most tests take `lib` and run twice: on ember and, where it is installed, on torch itself, so every
expectation written here is checked against PyTorch's real behaviour. Error messages are matched
with patterns that accept either library's name ("[torch.FloatTensor [3]]" / "[ember.FloatTensor [3]]").
"""
import gc
import sys
import threading
import warnings

import pytest

import ember


def _torch_or_skip():
    return pytest.importorskip("torch")


@pytest.fixture(params=["ember", "torch"])
def lib(request):
    if request.param == "torch":
        return _torch_or_skip()
    return ember


@pytest.fixture(autouse=True)
def _restore_modes():
    yield
    ember.set_grad_enabled(True)
    ember.autograd.set_detect_anomaly(False)


def T(lib, data, **kw):
    return lib.tensor(data, **kw)


LIB = r"(torch|ember)"
VERSION_ERR = "one of the variables needed for gradient computation has been modified by an inplace operation"
FREED_ERR = (r"Trying to backward through the graph a second time \(or directly access saved tensors after they "
             r"have already been freed\)")


def close(a, b, tol=1e-6):
    a = a.tolist() if hasattr(a, "tolist") else a
    b = b.tolist() if hasattr(b, "tolist") else b
    if isinstance(a, list):
        return len(a) == len(b) and all(close(x, y, tol) for x, y in zip(a, b))
    return abs(a - b) <= tol * (1 + abs(b))


# ---------------------------------------------------------------- requires_grad, leaves
def test_requires_grad_defaults(lib):
    x = lib.ones(3)
    assert not x.requires_grad and x.is_leaf and x.grad_fn is None
    y = lib.ones(3, requires_grad=True)
    assert y.requires_grad and y.is_leaf and y.grad_fn is None and y.grad is None
    assert x.requires_grad_() is x and x.requires_grad
    assert x.requires_grad_(False) is x and not x.requires_grad
    x.requires_grad = True
    assert x.requires_grad
    z = lib.zeros(2, dtype=lib.float64, requires_grad=True)
    assert z.requires_grad and z.dtype == lib.float64


@pytest.mark.parametrize("dtype", ["int64", "int32", "uint8", "bool"])
def test_integer_tensors_cannot_require_grad(lib, dtype):
    t = lib.zeros(3, dtype=getattr(lib, dtype))
    with pytest.raises(RuntimeError, match="only Tensors of floating point dtype can require gradients"):
        t.requires_grad_()
    with pytest.raises(RuntimeError, match="only Tensors of floating point and complex dtype can require gradients"):
        t.requires_grad = True
    t.requires_grad_(False)  # allowed
    assert not t.requires_grad
    with pytest.raises(RuntimeError, match="Only Tensors of floating point and complex dtype can require gradients"):
        lib.ones(2, dtype=getattr(lib, dtype), requires_grad=True)
    with pytest.raises(RuntimeError, match="Only Tensors of floating point and complex dtype can require gradients"):
        lib.arange(3, requires_grad=True)


def test_tensor_factory_integer_requires_grad_message(lib):
    if lib is ember:
        pytest.skip("bug in csrc/python/module.cpp (not autograd): ember.tensor([1, 2], requires_grad=True) raises "
                    "the setter's 'only Tensors ...' instead of the factory's 'Only Tensors of floating point and "
                    "complex dtype can require gradients'")
    with pytest.raises(RuntimeError, match="Only Tensors of floating point and complex dtype can require gradients"):
        lib.tensor([1, 2], requires_grad=True)


def test_leaves_and_non_leaves(lib):
    x = lib.ones(3, requires_grad=True)
    c = lib.ones(3)
    y = x * 2
    assert not y.is_leaf and y.requires_grad and y.grad_fn is not None
    assert (c * 2).is_leaf and not (c * 2).requires_grad
    assert (x * c).requires_grad
    assert y.requires_grad_(True) is y  # no-op on a non-leaf
    with pytest.raises(RuntimeError, match="you can only change requires_grad flags of leaf variables. If you want to "
                                           "use a computed variable in a subgraph that doesn't require "
                                           r"differentiation use var_no_grad = var.detach\(\)"):
        y.requires_grad_(False)
    with pytest.raises(RuntimeError, match="you can only change requires_grad flags of leaf variables"):
        y.requires_grad = False
    d = y.detach()
    assert d.is_leaf and not d.requires_grad


def test_grad_accumulates_over_backward_calls(lib):
    x = T(lib, [1.0, 2.0, 3.0], requires_grad=True)
    (x * x).sum().backward()
    assert x.grad.tolist() == [2.0, 4.0, 6.0]
    assert not x.grad.requires_grad and x.grad.grad_fn is None
    (x * 3).sum().backward()
    assert x.grad.tolist() == [5.0, 7.0, 9.0]
    g = x.grad
    (x * 1).sum().backward()
    assert x.grad.tolist() == [6.0, 8.0, 9.0 + 1.0]
    assert g is x.grad or g.tolist() == [6.0, 8.0, 10.0]  # accumulated in place (torch) or replaced
    x.grad = None
    (x * 2).sum().backward()
    assert x.grad.tolist() == [2.0, 2.0, 2.0]
    x.grad.zero_()
    (x * 2).sum().backward()
    assert x.grad.tolist() == [2.0, 2.0, 2.0]
    del x.grad
    assert x.grad is None


def test_grad_setter_checks(lib):
    x = lib.ones(3, requires_grad=True)
    x.grad = lib.full((3,), 2.0)
    assert x.grad.tolist() == [2.0] * 3
    with pytest.raises(RuntimeError, match=r"attempting to assign a gradient of size '\[4\]' to a tensor of size "
                                           r"'\[3\]'. Please ensure that the gradient and the tensor are the same size"):
        x.grad = lib.ones(4)
    with pytest.raises(RuntimeError, match="attempting to assign a gradient with dtype 'double' to a tensor with "
                                           "grad_dtype 'Float'. The gradient must match the tensor's grad_dtype"):
        x.grad = lib.ones(3, dtype=lib.float64)
    with pytest.raises(TypeError, match="assigned grad expected to be a Tensor or None"):
        x.grad = 3


def test_non_leaf_grad_warns(lib):
    x = lib.ones(3, requires_grad=True)
    y = x * 2
    y.sum().backward()
    with pytest.warns(UserWarning, match="The .grad attribute of a Tensor that is not a leaf Tensor is being accessed"):
        assert y.grad is None


# ---------------------------------------------------------------- grad_fn, next_functions
NAMES = [  # (expression, torch's grad_fn name)
    (lambda lib, x, y: x * y, "MulBackward0"),
    (lambda lib, x, y: x + y, "AddBackward0"),
    (lambda lib, x, y: x - y, "SubBackward0"),
    (lambda lib, x, y: x / y, "DivBackward0"),
    (lambda lib, x, y: x.exp(), "ExpBackward0"),
    (lambda lib, x, y: -x, "NegBackward0"),
    (lambda lib, x, y: x.sum(), "SumBackward0"),
    (lambda lib, x, y: x.mean(), "MeanBackward0"),
    (lambda lib, x, y: x.relu(), "ReluBackward0"),
    (lambda lib, x, y: x.sigmoid(), "SigmoidBackward0"),
    (lambda lib, x, y: x.tanh(), "TanhBackward0"),
    (lambda lib, x, y: x.sqrt(), "SqrtBackward0"),
    (lambda lib, x, y: x ** 2, "PowBackward0"),
    (lambda lib, x, y: x.abs(), "AbsBackward0"),
    (lambda lib, x, y: x.clone(), "CloneBackward0"),
    (lambda lib, x, y: x.view(2, 2), "ViewBackward0"),
    (lambda lib, x, y: x.unsqueeze(0), "UnsqueezeBackward0"),
    (lambda lib, x, y: x.expand(2, 4), "ExpandBackward0"),
    (lambda lib, x, y: x[0], "SelectBackward0"),
    (lambda lib, x, y: x.t(), "TBackward0"),
    (lambda lib, x, y: x.reshape(2, 2).transpose(0, 1), "TransposeBackward0"),
    (lambda lib, x, y: x.reshape(2, 2).permute(1, 0), "PermuteBackward0"),
    (lambda lib, x, y: lib.cat([x, y]), "CatBackward0"),
    (lambda lib, x, y: lib.stack([x, y]), "StackBackward0"),
    (lambda lib, x, y: lib.where(x > 0, x, y), "WhereBackward0"),
    (lambda lib, x, y: x.amax(0), "AmaxBackward0"),
    (lambda lib, x, y: x.cumsum(0), "CumsumBackward0"),
    (lambda lib, x, y: x.clamp(0, 1), "ClampBackward1"),
    (lambda lib, x, y: x.clamp(y, None), "ClampBackward0"),
    (lambda lib, x, y: x.sum(0), "SumBackward1"),
    (lambda lib, x, y: x.mean(-1, keepdim=True), "MeanBackward1"),
    (lambda lib, x, y: x ** y, "PowBackward1"),
    (lambda lib, x, y: 2 ** x, "PowBackward2"),
    (lambda lib, x, y: 1 - x, "RsubBackward1"),
    (lambda lib, x, y: x.max(), "MaxBackward1"),
    (lambda lib, x, y: x.max(0)[0], "MaxBackward0"),
    (lambda lib, x, y: lib.max(x, y), "MaximumBackward0"),
    (lambda lib, x, y: x.reshape(2, 2), "ViewBackward0"),
    (lambda lib, x, y: x.reshape(2, 2).t().reshape(4), "UnsafeViewBackward0"),
    (lambda lib, x, y: x.norm(), "LinalgVectorNormBackward0"),
    (lambda lib, x, y: x @ y, "DotBackward0"),
    (lambda lib, x, y: x.reshape(2, 2) @ y.reshape(2, 2), "MmBackward0"),
    (lambda lib, x, y: x.to(lib.float64), "ToCopyBackward0"),
    (lambda lib, x, y: x.clone().copy_(y), "CopyBackwards"),
    (lambda lib, x, y: x.log1p(), "Log1PBackward0"),
    (lambda lib, x, y: x.split([1, 3])[0], "SplitWithSizesBackward0"),
    (lambda lib, x, y: x.reshape(2, 2).unsqueeze(1).squeeze(1), "SqueezeBackward1"),
    (lambda lib, x, y: x.flip(0), "FlipBackward0"),
]


@pytest.mark.parametrize("case", range(len(NAMES)))
def test_grad_fn_names(lib, case):
    f, name = NAMES[case]
    x = T(lib, [1.0, 2.0, 3.0, 4.0], requires_grad=True)
    y = T(lib, [0.5, 1.5, 2.5, 3.5], requires_grad=True)
    out = f(lib, x, y)
    assert type(out.grad_fn).__name__ == name
    # hand-written nodes: name() is the C++ name ("torch::autograd::CopyBackwards")
    assert out.grad_fn.name() in (name, f"{lib.__name__}::autograd::{name}")
    assert name in repr(out.grad_fn)


def test_next_functions(lib):
    x = lib.ones(3, requires_grad=True)
    c = lib.ones(3)
    y = x * 2
    z = y * c + x
    fn = z.grad_fn
    assert type(fn).__name__ == "AddBackward0"
    (mul, i0), (acc, i1) = fn.next_functions
    assert type(mul).__name__ == "MulBackward0" and i0 == 0
    assert type(acc).__name__ == "AccumulateGrad" and i1 == 0
    # the leaf itself (ember returns a new Python object for it: no PyObject preservation yet)
    assert acc.variable.data_ptr() == x.data_ptr() and acc.variable.requires_grad and acc.variable.is_leaf
    (inner, _), (none, n) = mul.next_functions
    assert none is None and n == 0  # the constant c
    assert type(inner).__name__ == "MulBackward0"
    assert inner.next_functions[0][0].variable.data_ptr() == x.data_ptr()
    # the same accumulator for every use of the leaf
    assert inner.next_functions[0][0] == acc
    assert y.grad_fn == inner and hash(y.grad_fn) == hash(inner)


def test_grad_fn_of_multiple_outputs(lib):
    x = T(lib, [[1.0, 5.0], [3.0, 2.0]], requires_grad=True)
    values, indices = x.max(1)
    assert values.grad_fn is not None and indices.grad_fn is None and not indices.requires_grad
    parts = x.unbind(0)
    assert parts[0].grad_fn == parts[1].grad_fn
    assert type(parts[0].grad_fn).__name__ == "UnbindBackward0"


# ---------------------------------------------------------------- backward()
def test_backward_requires_scalar_or_gradient(lib):
    x = lib.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar outputs"):
        (x * 2).backward()
    with pytest.raises(RuntimeError, match=r"Mismatch in shape: grad_output\[0\] has a shape of "
                                           + LIB + r".Size\(\[2\]\) and output\[0\] has a shape of "
                                           + LIB + r".Size\(\[3\]\)"):
        (x * 2).backward(lib.ones(2))
    (x * 2).backward(T(lib, [1.0, 2.0, 3.0]))
    assert x.grad.tolist() == [2.0, 4.0, 6.0]
    with pytest.raises(RuntimeError, match="element 0 of tensors does not require grad and does not have a grad_fn"):
        lib.ones(1).sum().backward()


def test_backward_retain_graph(lib):
    x = T(lib, [1.0, 2.0], requires_grad=True)
    y = (x * x.exp()).sum()
    y.backward(retain_graph=True)
    y.backward()
    assert close(x.grad, [2 * (1 + 1) * 2.718281828459045, 2 * 3 * 7.38905609893065])
    with pytest.raises(RuntimeError, match=FREED_ERR):
        y.backward()


def test_backward_create_graph(lib):
    x = T(lib, [1.0, 2.0], requires_grad=True)
    (x ** 3).sum().backward(create_graph=True)
    g = x.grad
    assert g.requires_grad and g.grad_fn is not None
    assert g.tolist() == [3.0, 12.0]
    x.grad = None
    g.sum().backward()
    assert x.grad.tolist() == [6.0, 12.0]


def test_backward_inputs(lib):
    x = T(lib, [1.0, 2.0], requires_grad=True)
    y = T(lib, [3.0, 4.0], requires_grad=True)
    z = (x * y).sum()
    z.backward(inputs=[x], retain_graph=True)
    assert x.grad.tolist() == [3.0, 4.0] and y.grad is None
    z.backward(inputs=y)
    assert y.grad.tolist() == [1.0, 2.0] and x.grad.tolist() == [3.0, 4.0]
    with pytest.raises(RuntimeError, match="`inputs` argument to `backward\\(\\)` cannot be empty."):
        (x * 2).sum().backward(inputs=[])
    with pytest.raises(RuntimeError, match="can't retain_grad on Tensor that has requires_grad=False"):
        (x * 2).sum().backward(inputs=[lib.ones(2)])
    # a non-leaf input receives its gradient in .grad
    x.grad = None
    h = x * 2
    (h * h).sum().backward(inputs=[h])
    assert h.grad.tolist() == [4.0, 8.0] and x.grad is None


def test_autograd_backward_function(lib):
    x = T(lib, [1.0, 2.0], requires_grad=True)
    a, b = x * 2, (x * x).sum()
    lib.autograd.backward([a, b], [T(lib, [1.0, 1.0]), None])
    assert x.grad.tolist() == [4.0, 6.0]
    lib.autograd.backward((x * 3).sum())
    assert x.grad.tolist() == [7.0, 9.0]
    with pytest.raises(RuntimeError, match=r"grad can be implicitly created only for scalar outputs"):
        lib.autograd.backward([x * 2])


# ---------------------------------------------------------------- autograd.grad
def test_autograd_grad_basic(lib):
    x = T(lib, [1.0, 2.0], requires_grad=True)
    y = T(lib, [3.0, 4.0], requires_grad=True)
    out = (x * y).sum()
    gx, gy = lib.autograd.grad(out, (x, y))
    assert gx.tolist() == [3.0, 4.0] and gy.tolist() == [1.0, 2.0]
    assert x.grad is None and y.grad is None  # .grad untouched
    assert not gx.requires_grad
    r = lib.autograd.grad((x * 2).sum(), x)
    assert isinstance(r, tuple) and len(r) == 1


def test_autograd_grad_outputs(lib):
    x = T(lib, [1.0, 2.0], requires_grad=True)
    a, b = x * 2, x * x
    (g,) = lib.autograd.grad([a, b], [x], grad_outputs=[T(lib, [1.0, 0.5]), T(lib, [2.0, 1.0])], retain_graph=True)
    assert g.tolist() == [2 + 4.0, 1 + 4.0]
    (g,) = lib.autograd.grad(a, x, T(lib, [3.0, 3.0]))
    assert g.tolist() == [6.0, 6.0]
    with pytest.raises(RuntimeError, match="Mismatch in shape"):
        lib.autograd.grad(x * 2, x, lib.ones(3))


def test_autograd_grad_retain_graph(lib):
    x = T(lib, [1.0, 2.0], requires_grad=True)
    y = (x.exp() * x).sum()
    g1 = lib.autograd.grad(y, x, retain_graph=True)[0]
    g2 = lib.autograd.grad(y, x)[0]
    assert g1.tolist() == g2.tolist()
    with pytest.raises(RuntimeError, match=FREED_ERR):
        lib.autograd.grad(y, x)


def test_autograd_grad_unused(lib):
    x = T(lib, [1.0, 2.0], requires_grad=True)
    u = T(lib, [3.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="The differentiated Tensor at index 1 appears to not have been used in the "
                                           "graph. Set allow_unused=True if this is the desired behavior."):
        lib.autograd.grad((x * 2).sum(), [x, u])
    gx, gu = lib.autograd.grad((x * 2).sum(), [x, u], allow_unused=True)
    assert gx.tolist() == [2.0, 2.0] and gu is None
    gx, gu = lib.autograd.grad((x * 2).sum(), [x, u], materialize_grads=True)
    assert gu.tolist() == [0.0]
    with pytest.raises(RuntimeError, match="One of the differentiated Tensors does not require grad"):
        lib.autograd.grad((x * 2).sum(), [x, lib.ones(2)])
    with pytest.raises(RuntimeError, match="element 0 of tensors does not require grad and does not have a grad_fn"):
        lib.autograd.grad(lib.ones(2).sum(), [x])
    with pytest.raises(RuntimeError, match="`inputs` argument to `grad\\(\\)` cannot be empty."):
        lib.autograd.grad((x * 2).sum(), [])


def test_autograd_grad_non_leaf_input(lib):
    x = T(lib, [1.0, 2.0], requires_grad=True)
    h = x * 3
    out = (h * h).sum()
    (gh,) = lib.autograd.grad(out, h)
    assert gh.tolist() == [6.0, 12.0]


def test_higher_order(lib):
    x = T(lib, [2.0], requires_grad=True)
    y = x ** 4
    (g1,) = lib.autograd.grad(y, x, create_graph=True)
    (g2,) = lib.autograd.grad(g1, x, create_graph=True)
    (g3,) = lib.autograd.grad(g2, x, create_graph=True)
    (g4,) = lib.autograd.grad(g3, x)
    assert [g1.item(), g2.item(), g3.item(), g4.item()] == [32.0, 48.0, 48.0, 24.0]
    # mixed second derivatives (a Hessian-vector product)
    a = T(lib, [1.0, 2.0], requires_grad=True)
    b = T(lib, [3.0, 0.5], requires_grad=True)
    f = (a * a * b + a.sin() * b.exp()).sum()
    ga, gb = lib.autograd.grad(f, (a, b), create_graph=True)
    hv = lib.autograd.grad((ga * T(lib, [1.0, -1.0])).sum() + gb.sum(), (a, b))
    ref = [[2 * 3 - 0.8414709848078965 * 20.085536923187668 + 2 * 1 + 0.5403023058681398 * 20.085536923187668,
            -(2 * 0.5 - 0.9092974268256817 * 1.6487212707001282) + 2 * 2 + -0.4161468365471424 * 1.6487212707001282],
           [2 * 1 + 0.5403023058681398 * 20.085536923187668 + 0.8414709848078965 * 20.085536923187668,
            -(2 * 2 + -0.4161468365471424 * 1.6487212707001282) + 0.9092974268256817 * 1.6487212707001282]]
    assert close(hv[0], ref[0], 1e-5) and close(hv[1], ref[1], 1e-5)


def test_double_backward_needs_create_graph(lib):
    x = T(lib, [2.0], requires_grad=True)
    (g,) = lib.autograd.grad(x ** 2, x)
    assert not g.requires_grad
    with pytest.raises(RuntimeError, match="element 0 of tensors does not require grad"):
        lib.autograd.grad(g, x)


# ---------------------------------------------------------------- grad modes
def _modes(lib):
    return {"no_grad": lib.no_grad, "enable_grad": lib.enable_grad, "inference_mode": lib.inference_mode}


def test_no_grad_context(lib):
    x = lib.ones(2, requires_grad=True)
    assert lib.is_grad_enabled()
    with lib.no_grad():
        assert not lib.is_grad_enabled()
        y = x * 2
        with lib.enable_grad():
            assert lib.is_grad_enabled()
            z = x * 2
        assert not lib.is_grad_enabled()
    assert lib.is_grad_enabled()
    assert not y.requires_grad and y.grad_fn is None and y.is_leaf
    assert z.requires_grad


def test_grad_mode_restored_after_exception(lib):
    with pytest.raises(ValueError):
        with lib.no_grad():
            raise ValueError
    assert lib.is_grad_enabled()


def test_set_grad_enabled(lib):
    x = lib.ones(2, requires_grad=True)
    with lib.set_grad_enabled(False):
        assert not lib.is_grad_enabled()
        assert not (x * 2).requires_grad
    assert lib.is_grad_enabled()
    lib.set_grad_enabled(False)  # as a function: takes effect at once
    try:
        assert not lib.is_grad_enabled()
        with lib.set_grad_enabled(True):
            assert (x * 2).requires_grad
        assert not lib.is_grad_enabled()
    finally:
        lib.set_grad_enabled(True)
    assert lib.is_grad_enabled() is True


def test_grad_modes_as_decorators(lib):
    x = lib.ones(2, requires_grad=True)

    @lib.no_grad()
    def f(t):
        return t * 2

    @lib.enable_grad()
    def g(t):
        return t * 2

    @lib.set_grad_enabled(False)
    def h(t):
        return t * 2

    @lib.inference_mode()
    def i(t):
        return t * 2

    @lib.inference_mode
    def j(t):
        return t * 2

    assert lib.is_grad_enabled()
    assert f.__name__ == "f"
    assert not f(x).requires_grad and not h(x).requires_grad and not i(x).requires_grad and not j(x).requires_grad
    with lib.no_grad():
        assert g(x).requires_grad
        assert not lib.is_grad_enabled()
    assert lib.is_grad_enabled()


def test_grad_mode_decorator_on_generator(lib):
    x = lib.ones(2, requires_grad=True)

    @lib.no_grad()
    def gen():
        for _ in range(3):
            got = yield (lib.is_grad_enabled(), (x * 2).requires_grad)
            assert got == "sent"

    seen = []
    it = gen()
    seen.append(next(it))
    assert lib.is_grad_enabled()  # restored between steps
    seen.append(it.send("sent"))
    assert lib.is_grad_enabled()
    seen.append(it.send("sent"))
    assert seen == [(False, False)] * 3
    with pytest.raises(StopIteration):
        it.send("sent")
    assert lib.is_grad_enabled()

    @lib.enable_grad()
    def gen2():
        yield lib.is_grad_enabled()

    with lib.no_grad():
        assert list(gen2()) == [True]
        assert not lib.is_grad_enabled()


def test_inference_mode(lib):
    x = lib.ones(2, requires_grad=True)
    with lib.inference_mode():
        assert lib.is_inference_mode_enabled() and not lib.is_grad_enabled()
        y = x * 2
        with lib.inference_mode(False):
            assert not lib.is_inference_mode_enabled()
    assert not lib.is_inference_mode_enabled() and lib.is_grad_enabled()
    assert not y.requires_grad
    with lib.inference_mode(mode=False):
        assert lib.is_grad_enabled()


def test_grad_mode_is_thread_local(lib):
    seen = []
    with lib.no_grad():
        t = threading.Thread(target=lambda: seen.append(lib.is_grad_enabled()))
        t.start()
        t.join()
    assert seen == [True]


# ---------------------------------------------------------------- detach, .data, retain_grad
def test_detach(lib):
    x = T(lib, [1.0, 2.0], requires_grad=True)
    y = x * 2
    d = y.detach()
    assert not d.requires_grad and d.is_leaf and d.grad_fn is None
    d[0] = 10.0  # shares storage and version counter with y
    assert y[0].item() == 10.0
    assert d._version == y._version
    z = x.exp()
    z.detach().zero_()
    with pytest.raises(RuntimeError, match=VERSION_ERR):
        z.sum().backward()


def test_detach_(lib):
    x = T(lib, [1.0, 2.0], requires_grad=True)
    y = x * 2
    assert y.detach_() is y
    assert not y.requires_grad and y.is_leaf and y.grad_fn is None
    v = (x * 2)[0:1]
    with pytest.raises(RuntimeError, match=r"Can't detach views in-place. Use detach\(\) instead"):
        v.detach_()


def test_retain_grad(lib):
    x = T(lib, [1.0, 2.0], requires_grad=True)
    y = x * 2
    assert not y.retains_grad
    y.retain_grad()
    assert y.retains_grad
    (y * y).sum().backward(retain_graph=True)
    assert y.grad.tolist() == [4.0, 8.0]
    (y * y).sum().backward()
    assert y.grad.tolist() == [8.0, 16.0]  # accumulates like a leaf's
    x.retain_grad()  # no-op on a leaf
    assert not x.retains_grad
    with pytest.raises(RuntimeError, match="can't retain_grad on Tensor that has requires_grad=False"):
        lib.ones(2).retain_grad()


def test_retain_grad_sees_hooked_gradient(lib):
    # retains_grad hooks always run last, after every hook registered on the tensor
    x = lib.ones(3, requires_grad=True)
    y = x * 2
    y.retain_grad()
    y.register_hook(lambda g: g * 10)
    y.sum().backward()
    assert y.grad.tolist() == [10.0] * 3 and x.grad.tolist() == [20.0] * 3


def test_retain_grad_follows_inplace_and_autograd_grad(lib):
    x = lib.ones(3, requires_grad=True)
    y = x * 2
    y.retain_grad()
    y.mul_(3)  # .grad is the gradient of y's new value
    (y * 5).sum().backward()
    assert y.grad.tolist() == [5.0] * 3 and x.grad.tolist() == [30.0] * 3
    y = x * 2
    y.retain_grad()
    (g,) = lib.autograd.grad((y * y).sum(), x)
    assert g.tolist() == [8.0] * 3 and y.grad.tolist() == [4.0] * 3  # populated by autograd.grad too
    b = x.clone()
    v = b[:2]
    v.retain_grad()
    b.mul_(2)  # v's history is regenerated from b's
    (v * 3).sum().backward()
    assert v.grad.tolist() == [3.0, 3.0]


def test_data(lib):
    x = T(lib, [1.0, 2.0], requires_grad=True)
    d = x.data
    assert not d.requires_grad and d.is_leaf
    y = x * x  # saves x
    v = x._version
    d.mul_(3)  # through .data: autograd does not see it
    assert x._version == v and x.tolist() == [3.0, 6.0]
    y.sum().backward()
    assert x.grad.tolist() == [6.0, 12.0]  # computed with the new value
    x.data = T(lib, [5.0, 5.0])
    assert x.tolist() == [5.0, 5.0] and x.requires_grad and x.is_leaf
    with pytest.raises(TypeError):
        x.data = [1.0, 2.0]


# ---------------------------------------------------------------- in-place ops
def test_version_counter_error(lib):
    x = lib.ones(3, requires_grad=True)
    y = x.exp()
    assert y._version == 0
    y.add_(1)
    assert y._version == 1
    with pytest.raises(RuntimeError) as info:
        y.sum().backward()
    msg = str(info.value)
    assert VERSION_ERR in msg
    assert f"[{lib.__name__}.FloatTensor [3]], which is output 0 of Exp, is at version 1; expected version 0 " \
           "instead. Hint: enable anomaly detection" in msg


def test_new_tensors_are_at_version_0(lib):
    for t in (lib.ones(2), lib.zeros(2), lib.tensor([1.0]), lib.arange(3), lib.randn(2), lib.full((2,), 1.0),
              lib.eye(2), lib.linspace(0, 1, 3), lib.ones(2) * 2, lib.rand(2), lib.randint(0, 5, (3,)),
              lib.logspace(0, 1, 3), lib.zeros_like(lib.ones(2)), lib.ones(2).new_full((2,), 3.0)):
        assert t._version == 0
    # the copies too: clone, contiguous and the dtype / device conversions make new tensors
    a = lib.arange(6.0).reshape(2, 3)
    for t in (a.clone(), a.t().clone(), a.t().contiguous(), a.to(lib.float64), a.double(), a.half(), a.to("meta"),
              a.clone(memory_format=lib.contiguous_format)):
        assert t._version == 0


def test_version_counter_error_saved_input(lib):
    a = lib.ones(2, 3, dtype=lib.float64)
    w = lib.ones(2, 3, dtype=lib.float64, requires_grad=True)
    z = a * w
    v = a._version  # 0 in torch
    a.add_(1)
    with pytest.raises(RuntimeError, match=VERSION_ERR + r": \[" + LIB + r"\.DoubleTensor \[2, 3\]\] is at version "
                                           + f"{v + 1}; expected version {v} instead"):
        z.sum().backward()
    # a saved non-leaf names its current grad_fn
    x = lib.ones(3, requires_grad=True)
    y = x * 2
    z = y * y
    y.add_(1)
    with pytest.raises(RuntimeError, match=r"which is output 0 of Add, is at version 1; expected version 0"):
        z.sum().backward()


def test_inplace_on_leaf_requiring_grad(lib):
    x = lib.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place operation."):
        x.add_(1)
    with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad is being used in an in-place "
                                           "operation."):
        x[0:2].mul_(2)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place operation."):
        x[0] = 5.0
    with lib.no_grad():
        x.add_(1)
        x[0] = 5.0
    assert x.tolist() == [5.0, 2.0, 2.0] and x.is_leaf and x.requires_grad


def test_inplace_rebases_history(lib):
    x = T(lib, [1.0, 2.0, 3.0], requires_grad=True)
    y = x * 2
    y.add_(x)  # y <- 3x
    assert type(y.grad_fn).__name__ == "AddBackward0"
    y.exp_()
    assert type(y.grad_fn).__name__ == "ExpBackward0" and not y.is_leaf
    y.sum().backward()
    assert close(x.grad, [3 * 20.085536923187668, 3 * 403.4287934927351, 3 * 8103.083927575384])


def test_inplace_on_view_of_clone(lib):
    a = T(lib, [1.0, 2.0, 3.0, 4.0], requires_grad=True)
    b = a.clone()
    b[1:3].mul_(5)
    assert type(b.grad_fn).__name__ == "CopySlices"
    (b * T(lib, [1.0, 2.0, 3.0, 4.0])).sum().backward()
    assert a.grad.tolist() == [1.0, 10.0, 15.0, 4.0]


def test_setitem_into_constant(lib):
    w = T(lib, [1.0, 2.0], requires_grad=True)
    x = lib.zeros(5)
    x[1:3] = w * 5
    assert x.requires_grad and type(x.grad_fn).__name__ == "CopySlices"
    (x * T(lib, [1.0, 2.0, 3.0, 4.0, 5.0])).sum().backward()
    assert w.grad.tolist() == [10.0, 15.0]


def test_other_views_see_inplace_through_base(lib):
    a = lib.ones(4, requires_grad=True)
    b = a.clone()
    v1, v2 = b[:2], b[1:3]
    v2.mul_(5)  # changes v1[1] too
    assert v1.tolist() == [1.0, 5.0]
    assert type(v1.grad_fn).__name__ == "AsStridedBackward0"
    v1.sum().backward()
    assert a.grad.tolist() == [1.0, 5.0, 0.0, 0.0]


def test_view_of_constant_becomes_differentiable(lib):
    x = lib.zeros(4)
    v = x[1:3]
    w = lib.ones(4, requires_grad=True)
    x.copy_(w * 3)
    assert v.requires_grad and not v.is_leaf
    v.sum().backward()
    assert w.grad.tolist() == [0.0, 3.0, 3.0, 0.0]


def test_inplace_on_view_changes_base_grad(lib):
    x = T(lib, [[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    y = x * 1
    y.t()[0].exp_()  # the first column of y
    y.sum().backward()
    e = [2.718281828459045, 20.085536923187668]
    assert close(x.grad, [[e[0], 1.0], [e[1], 1.0]])


MULTI_VIEW = ("This view is the output of a function that returns multiple views. Such functions do not allow the "
              "output views to be modified inplace. You should replace the inplace operation by an out-of-place one.")


def test_inplace_on_multi_output_views_raises(lib):
    b = lib.ones(3, requires_grad=True).clone()
    u = b.unbind(0)
    with pytest.raises(RuntimeError, match="Output 1 of Unbind is a view and is being modified inplace. " + MULTI_VIEW):
        u[1].add_(1)
    with pytest.raises(RuntimeError, match="Output 0 of Split is a view and is being modified inplace."):
        b.split(1)[0].mul_(2)
    with pytest.raises(RuntimeError, match="Output 0 of Split is a view and is being modified inplace."):
        b.chunk(3)[0].mul_(2)
    with lib.no_grad():
        u[0].mul_(2)  # not recorded: allowed
    lib.zeros(3).unbind(0)[0].mul_(2)  # nothing requires grad: allowed
    w = lib.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="A view was created in no_grad mode and is being modified inplace with "
                                           "grad mode enabled. " + MULTI_VIEW):
        lib.zeros(3).unbind(0)[0].mul_(w[0])


def test_split_outputs_are_views_not_the_input(lib):
    for x in (lib.zeros(0, 2, requires_grad=True), lib.ones(3, 2, requires_grad=True), lib.zeros(0, 2)):
        for parts in (x.split(4), x.chunk(1), x.split([x.shape[0]])):
            p = parts[0]
            assert p is not x and x.is_leaf and x.grad_fn is None
            assert p.requires_grad == x.requires_grad  # also: no infinite loop on a view of itself
            if x.requires_grad:
                assert type(p.grad_fn).__name__ in ("SplitBackward0", "SplitWithSizesBackward0")


def test_inplace_on_view_made_in_no_grad_raises(lib):
    b = lib.ones(3, requires_grad=True).clone()
    with lib.no_grad():
        v = b[0:2]
    assert v.requires_grad and v.grad_fn is None and v.is_leaf  # PyTorch's (odd) view of such views
    with pytest.raises(RuntimeError, match="A view was created in no_grad mode and is being modified inplace with grad "
                                           "mode enabled. Given that this use case is ambiguous and error-prone, it "
                                           "is forbidden."):
        v.mul_(2)
    w = lib.ones(2, requires_grad=True)
    a = lib.zeros(3)
    with lib.no_grad():
        va = a[0:2]
    with pytest.raises(RuntimeError, match="A view was created in no_grad mode"):
        va.mul_(w)
    va.mul_(2)  # not recorded: allowed
    with lib.no_grad():
        v.mul_(2)
    assert b.tolist() == [2.0, 2.0, 1.0]


def test_second_backward_through_freed_graph(lib):
    x = lib.ones(2, requires_grad=True)
    y = (x.exp() * x).sum()
    y.backward()
    with pytest.raises(RuntimeError, match=FREED_ERR + r"\. Saved intermediate values of the graph are freed when you "
                                           r"call \.backward\(\) or autograd\.grad\(\)\. Specify retain_graph=True if "
                                           "you need to backward through the graph a second time or if you need to "
                                           "access saved tensors after calling backward."):
        y.backward()


# ---------------------------------------------------------------- hooks
def test_hook_on_leaf(lib):
    x = T(lib, [1.0, 2.0], requires_grad=True)
    seen = []
    h = x.register_hook(lambda g: seen.append(g.tolist()))
    (x * 3).sum().backward()
    assert seen == [[3.0, 3.0]] and x.grad.tolist() == [3.0, 3.0]
    h.remove()
    (x * 3).sum().backward()
    assert len(seen) == 1 and x.grad.tolist() == [6.0, 6.0]


def test_hook_replaces_gradient(lib):
    x = T(lib, [1.0, 2.0], requires_grad=True)
    x.register_hook(lambda g: g * 10)
    x.register_hook(lambda g: g + 1)  # runs second, on the first one's result
    (x * 3).sum().backward()
    assert x.grad.tolist() == [31.0, 31.0]
    # autograd.grad also sees hooks of the leaves it differentiates
    (g,) = lib.autograd.grad((x * 3).sum(), x)
    assert g.tolist() == [31.0, 31.0]


def test_hook_on_non_leaf(lib):
    x = T(lib, [1.0, 2.0], requires_grad=True)
    y = x * 2
    seen = []
    y.register_hook(lambda g: seen.append(g.tolist()))
    h = y.register_hook(lambda g: g * 0.5)
    (y * y).sum().backward()
    assert seen == [[4.0, 8.0]] and x.grad.tolist() == [4.0, 8.0]
    h.remove()
    x.grad = None
    y2 = x * 2
    y2.register_hook(lambda g: g * 3)
    (y2 * 1).sum().backward()
    assert x.grad.tolist() == [6.0, 6.0]


def test_hook_errors(lib):
    with pytest.raises(RuntimeError, match="cannot register a hook on a tensor that doesn't require gradient"):
        lib.ones(2).register_hook(lambda g: g)


def test_post_accumulate_grad_hook(lib):
    x = T(lib, [1.0, 2.0], requires_grad=True)
    seen = []
    h = x.register_post_accumulate_grad_hook(lambda t: seen.append((t is x, t.grad.tolist())))
    (x * 2).sum().backward()
    (x * 3).sum().backward()
    assert seen == [(True, [2.0, 2.0]), (True, [5.0, 5.0])]
    lib.autograd.grad((x * 2).sum(), x)  # no accumulation, no call
    assert len(seen) == 2
    h.remove()
    (x * 2).sum().backward()
    assert len(seen) == 2
    with pytest.raises(RuntimeError, match="post accumulate grad hooks cannot be registered on non-leaf tensors"):
        (x * 2).register_post_accumulate_grad_hook(lambda t: None)


# ---------------------------------------------------------------- custom Function
def _fn_classes(lib):
    F = lib.autograd.Function

    class MulConst(F):
        @staticmethod
        def forward(ctx, a, k, b):
            ctx.save_for_backward(a, b)
            ctx.k = k
            ctx.needs = ctx.needs_input_grad
            return a * b * k

        @staticmethod
        def backward(ctx, g):
            a, b = ctx.saved_tensors
            return g * b * ctx.k, None, g * a * ctx.k

    return MulConst


def test_function_basic(lib):
    MulConst = _fn_classes(lib)
    a = T(lib, [1.0, 2.0], requires_grad=True)
    b = T(lib, [3.0, 4.0])
    out = MulConst.apply(a, 3.0, b)
    assert out.tolist() == [9.0, 24.0]
    assert type(out.grad_fn).__name__ == "MulConstBackward"
    assert out.grad_fn.next_functions[0][0].variable.data_ptr() == a.data_ptr()
    out.sum().backward()
    assert a.grad.tolist() == [9.0, 12.0] and b.grad is None
    with pytest.raises(RuntimeError, match=FREED_ERR):
        out.grad_fn.saved_tensors
    # no input requires grad: a plain result
    out2 = MulConst.apply(b, 2.0, b)
    assert not out2.requires_grad and out2.grad_fn is None


def test_function_needs_input_grad(lib):
    F = lib.autograd.Function
    seen = []

    class Probe(F):
        @staticmethod
        def forward(ctx, a, k, b):
            seen.append(ctx.needs_input_grad)
            assert not lib.is_grad_enabled()  # forward runs without recording
            return a * b

        @staticmethod
        def backward(ctx, g):
            seen.append(ctx.needs_input_grad)
            return g, None, g

    a = lib.ones(2, requires_grad=True)
    Probe.apply(a, 1, lib.ones(2)).sum().backward()
    assert seen == [(True, False, False), (True, False, False)]


def test_function_saved_input_modified(lib):
    MulConst = _fn_classes(lib)
    a = lib.ones(2, requires_grad=True)
    b = lib.ones(2)
    out = MulConst.apply(a, 1.0, b)
    b.add_(1)
    with pytest.raises(RuntimeError, match=VERSION_ERR):
        out.sum().backward()


def test_function_mark_dirty(lib):
    F = lib.autograd.Function

    class Double_(F):
        @staticmethod
        def forward(ctx, a):
            a.mul_(2)
            ctx.mark_dirty(a)
            return a

        @staticmethod
        def backward(ctx, g):
            return g * 2

    x = T(lib, [1.0, 2.0], requires_grad=True)
    c = x.clone()
    out = Double_.apply(c)
    assert out is c and type(c.grad_fn).__name__ == "Double_Backward"
    assert c.tolist() == [2.0, 4.0]
    (c * c).sum().backward()
    assert x.grad.tolist() == [8.0, 16.0]
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad has been used in an in-place operation."):
        Double_.apply(x)


def test_function_mark_non_differentiable(lib):
    F = lib.autograd.Function
    seen = []

    class SortIdx(F):
        @staticmethod
        def forward(ctx, a):
            idx = (a > 1).to(a.dtype)
            ctx.mark_non_differentiable(idx)
            return a * 2, idx

        @staticmethod
        def backward(ctx, g, g_idx):
            seen.append(g_idx.tolist())  # zeros: materialized
            return g * 2

    x = T(lib, [1.0, 2.0], requires_grad=True)
    out, idx = SortIdx.apply(x)
    assert out.requires_grad and not idx.requires_grad
    out.sum().backward()
    assert seen == [[0.0, 0.0]] and x.grad.tolist() == [2.0, 2.0]


def test_function_set_materialize_grads(lib):
    F = lib.autograd.Function
    seen = []

    class Two(F):
        @staticmethod
        def forward(ctx, a):
            ctx.set_materialize_grads(False)
            return a * 2, a * 3

        @staticmethod
        def backward(ctx, g1, g2):
            seen.append((g1 is None, g2 is None))
            r = 0
            if g1 is not None:
                r = r + g1 * 2
            if g2 is not None:
                r = r + g2 * 3
            return r

    x = T(lib, [1.0, 2.0], requires_grad=True)
    p, q = Two.apply(x)
    p.sum().backward()
    assert seen == [(False, True)] and x.grad.tolist() == [2.0, 2.0]


def test_function_multiple_outputs_and_non_tensor_args(lib):
    F = lib.autograd.Function

    class SplitScale(F):
        @staticmethod
        def forward(ctx, a, scale, name):
            ctx.scale = scale
            assert name == "tag"
            return a * scale, a + scale, scale

        @staticmethod
        def backward(ctx, g1, g2, g3):
            return g1 * ctx.scale + g2, None, None

    x = T(lib, [1.0, 2.0], requires_grad=True)
    p, q, s = SplitScale.apply(x, 4.0, "tag")
    assert s == 4.0 and p.grad_fn == q.grad_fn
    (p + q * 2).sum().backward()
    assert x.grad.tolist() == [6.0, 6.0]


def test_function_returning_input(lib):
    F = lib.autograd.Function

    class Ident(F):
        @staticmethod
        def forward(ctx, a):
            return a

        @staticmethod
        def backward(ctx, g):
            return g * 3

    x = T(lib, [1.0, 2.0], requires_grad=True)
    y = Ident.apply(x)
    assert y is not x and x.is_leaf and type(y.grad_fn).__name__ == "IdentBackward"
    y.sum().backward()
    assert x.grad.tolist() == [3.0, 3.0]


def test_function_setup_context(lib):
    F = lib.autograd.Function

    class Scale(F):
        @staticmethod
        def forward(a, k):
            return a * k

        @staticmethod
        def setup_context(ctx, inputs, output):
            a, k = inputs
            ctx.k = k
            ctx.save_for_backward(a, output)

        @staticmethod
        def backward(ctx, g):
            a, out = ctx.saved_tensors
            assert out.tolist() == (a * ctx.k).tolist()
            return g * ctx.k, None

    x = T(lib, [1.0, 2.0], requires_grad=True)
    Scale.apply(x, 5.0).sum().backward()
    assert x.grad.tolist() == [5.0, 5.0]


def test_function_once_differentiable(lib):
    F = lib.autograd.Function
    once_differentiable = sys.modules[lib.__name__ + ".autograd.function"].once_differentiable

    class Sq(F):
        @staticmethod
        def forward(ctx, a):
            ctx.save_for_backward(a)
            return a * a

        @staticmethod
        @once_differentiable
        def backward(ctx, g):
            assert not lib.is_grad_enabled()
            (a,) = ctx.saved_tensors
            return g * 2 * a

    x = T(lib, [1.0, 2.0], requires_grad=True)
    (g,) = lib.autograd.grad(Sq.apply(x).sum(), x, create_graph=True)
    assert g.tolist() == [2.0, 4.0] and not g.requires_grad


def test_function_double_backward(lib):
    F = lib.autograd.Function

    class Cube(F):
        @staticmethod
        def forward(ctx, a):
            ctx.save_for_backward(a)
            return a ** 3

        @staticmethod
        def backward(ctx, g):
            (a,) = ctx.saved_tensors
            return g * 3 * a ** 2

    x = T(lib, [2.0], requires_grad=True)
    (g,) = lib.autograd.grad(Cube.apply(x), x, create_graph=True)
    (gg,) = lib.autograd.grad(g, x)
    assert g.item() == 12.0 and gg.item() == 12.0


def test_function_wrong_number_of_gradients(lib):
    F = lib.autograd.Function

    class Bad(F):
        @staticmethod
        def forward(ctx, a, b):
            return a * b

        @staticmethod
        def backward(ctx, g):
            return g

    class BadShape(F):
        @staticmethod
        def forward(ctx, a):
            return a * 2

        @staticmethod
        def backward(ctx, g):
            return lib.ones(5)

    x = lib.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"function BadBackward returned an incorrect number of gradients \(expected 2, "
                                           r"got 1\)"):
        Bad.apply(x, x).sum().backward()
    with pytest.raises(RuntimeError, match=r"Function BadShapeBackward returned an invalid gradient at index 0 - got "
                                           r"\[5\] but expected shape compatible with \[2\]"):
        BadShape.apply(x).sum().backward()


def test_gradcheck_custom_function():
    MulConst = _fn_classes(ember)

    class Cube(ember.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            ctx.save_for_backward(a)
            return a ** 3

        @staticmethod
        def backward(ctx, g):
            (a,) = ctx.saved_tensors
            return g * 3 * a ** 2

    a = ember.tensor([0.5, -1.5, 2.0], dtype=ember.float64, requires_grad=True)
    b = ember.tensor([1.5, 0.25, -1.0], dtype=ember.float64, requires_grad=True)
    assert ember.autograd.gradcheck(lambda x, y: MulConst.apply(x, 2.0, y), (a, b))
    assert ember.autograd.gradgradcheck(lambda x, y: MulConst.apply(x, 2.0, y), (a, b))
    assert ember.autograd.gradcheck(Cube.apply, (a,))
    assert ember.autograd.gradgradcheck(Cube.apply, (a,))


# ---------------------------------------------------------------- anomaly detection
def test_detect_anomaly_nan_in_backward(lib):
    x = T(lib, [0.0, 1.0], requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the forward traceback is reported as a warning
        with lib.autograd.detect_anomaly():
            assert lib.is_anomaly_enabled()
            y = (x.sqrt() * 0).sum()
            with pytest.raises(RuntimeError, match="Function 'SqrtBackward0' returned nan values in its 0th output."):
                y.backward()
    assert not lib.is_anomaly_enabled()
    y = (x.sqrt() * 0).sum()
    y.backward()  # without anomaly mode: nan, no error
    assert x.grad[0].item() != x.grad[0].item()


def test_detect_anomaly_reports_forward_traceback(lib):
    x = T(lib, [0.0, 1.0], requires_grad=True)

    def forward_here(t):
        return (t.sqrt() * 0).sum()

    with pytest.warns(UserWarning, match="Anomaly Detection has been enabled"):
        mode = lib.autograd.detect_anomaly()
    with mode:
        y = forward_here(x)
        with pytest.warns(UserWarning, match="Error detected in SqrtBackward0") as rec:
            with pytest.raises(RuntimeError, match="returned nan values"):
                y.backward()
    text = "\n".join(str(w.message) for w in rec)
    assert "Traceback of forward call that caused the error" in text and "forward_here" in text


def test_set_detect_anomaly(lib):
    x = T(lib, [0.0, 1.0], requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lib.autograd.set_detect_anomaly(True)
        try:
            assert lib.is_anomaly_enabled()
            with pytest.raises(RuntimeError, match="Function 'SqrtBackward0' returned nan values in its 0th output."):
                (x.sqrt() * 0).sum().backward()
        finally:
            lib.autograd.set_detect_anomaly(False)
        assert not lib.is_anomaly_enabled()
        with lib.autograd.set_detect_anomaly(True):
            assert lib.is_anomaly_enabled() and lib.is_anomaly_check_nan_enabled()
        assert not lib.is_anomaly_enabled()
        with lib.autograd.set_detect_anomaly(True, check_nan=False):
            assert lib.is_anomaly_enabled() and not lib.is_anomaly_check_nan_enabled()
            (x.sqrt() * 0).sum().backward()  # nan allowed
        with lib.autograd.detect_anomaly(check_nan=False):
            (x.sqrt() * 0).sum().backward()  # nan allowed


def test_detect_anomaly_names_custom_function(lib):
    class NanBack(lib.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a * 2

        @staticmethod
        def backward(ctx, g):
            return g * float("nan")

    x = lib.ones(2, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with lib.autograd.detect_anomaly():
            with pytest.raises(RuntimeError, match="Function 'NanBackBackward' returned nan values in its 0th output."):
                NanBack.apply(x).sum().backward()


# ---------------------------------------------------------------- dtypes, broadcasting
def test_integer_and_bool_never_get_gradients(lib):
    x = T(lib, [1.0, 3.0, 2.0], requires_grad=True)
    i = T(lib, [1, 2, 3])
    assert not x.argmax().requires_grad
    assert not (x > 1).requires_grad
    assert not x.max(0)[1].requires_grad
    assert not x.to(lib.int64).requires_grad
    assert not (x > 1).logical_not().requires_grad
    y = x * i
    assert y.requires_grad and y.dtype == lib.float32
    y.sum().backward()
    assert x.grad.tolist() == [1.0, 2.0, 3.0] and i.grad is None
    assert not x.round().to(lib.int32).requires_grad


def test_broadcast_gradients_reduced(lib):
    a = lib.ones(3, 1, requires_grad=True)
    b = lib.ones(1, 4, requires_grad=True)
    s = lib.ones((), requires_grad=True)
    out = (a * b + s) * T(lib, [1.0, 2.0, 3.0, 4.0])
    out.sum().backward()
    assert tuple(a.grad.shape) == (3, 1) and a.grad.tolist() == [[10.0]] * 3
    assert tuple(b.grad.shape) == (1, 4) and b.grad.tolist() == [[3.0, 6.0, 9.0, 12.0]]
    assert tuple(s.grad.shape) == () and s.grad.item() == 30.0
    c = lib.ones(4, requires_grad=True)
    (c.expand(2, 3, 4) * 2).sum().backward()
    assert c.grad.tolist() == [12.0] * 4


def test_type_promotion_gradient_dtype(lib):
    x = T(lib, [1.0, 2.0], requires_grad=True)  # float32
    w = T(lib, [0.5, 0.25], dtype=lib.float64, requires_grad=True)
    y = x * w
    assert y.dtype == lib.float64
    y.sum().backward()
    assert x.grad.dtype == lib.float32 and w.grad.dtype == lib.float64
    assert x.grad.tolist() == [0.5, 0.25]
    x.grad = None
    x.double().sum().backward()
    assert x.grad.dtype == lib.float32
    h = T(lib, [1.0, 2.0], dtype=lib.float64, requires_grad=True)
    (h.float() * 3).sum().backward()
    assert h.grad.dtype == lib.float64 and h.grad.tolist() == [3.0, 3.0]


def test_scalar_tensor_operations(lib):
    x = lib.tensor(3.0, requires_grad=True)
    y = x * x + 2 * x
    y.backward()
    assert x.grad.item() == 8.0 and tuple(x.grad.shape) == ()


# ---------------------------------------------------------------- scale
def test_deep_chain_backward_without_recursion():
    x = ember.tensor([1.0], requires_grad=True)
    y = x
    for _ in range(100_000):
        y = y * 1.0
    limit = sys.getrecursionlimit()
    y.sum().backward()
    assert x.grad.tolist() == [1.0]
    assert sys.getrecursionlimit() == limit
    del y  # freeing the chain is iterative too
    z = x
    for _ in range(100_000):
        z = z + 0.0
    (g,) = ember.autograd.grad(z.sum(), x)
    assert g.tolist() == [1.0]
    del z


def _rss_bytes():
    import os
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/statm")
def test_dropping_graphs_frees_memory():
    x = ember.ones(16, requires_grad=True)

    class Twice(ember.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            ctx.save_for_backward(a)
            return a * 2

        @staticmethod
        def backward(ctx, g):
            (a,) = ctx.saved_tensors
            return g * 2

    def build(n):
        for _ in range(n):
            y = (x * 2).exp().sum()
            del y
        for _ in range(n // 10):
            (x * 3).sin().sum().backward()
            h = x * 1
            h.retain_grad()
            h.register_hook(lambda g: g)
            Twice.apply(h).sum().backward()
        x.grad = None

    build(10_000)  # warm up allocator caches
    gc.collect()
    before = _rss_bytes()
    build(100_000)
    gc.collect()
    grown = _rss_bytes() - before
    # 100k graphs of ~4 nodes each would take hundreds of MB if leaked
    assert grown < 20 * 2 ** 20, f"RSS grew by {grown / 2 ** 20:.1f} MiB"
